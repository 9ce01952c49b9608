"""gemmkit.quant: quantized operations on int8 data with float scales (per-token matmul, ...), each a thin
re-export of its own module so that operations can be added side by side."""
from ._matmul_per_token import PackedWeight, matmul_per_token, pack_weight

__all__ = ["matmul_per_token", "pack_weight", "PackedWeight"]
