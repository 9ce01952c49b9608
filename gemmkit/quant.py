"""gemmkit.quant: quantized operations on int8 data with float scales (per-token matmul, ...), each a thin
re-export of its own module so that operations can be added side by side."""
from ._matmul_per_token import matmul_per_token

__all__ = ["matmul_per_token"]
