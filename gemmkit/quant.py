"""gemmkit.quant: quantized operations on int8/uint8 data with float scales (per-token matmul, quantized
elementwise add), each a thin re-export of its own module so that operations sit side by side."""
from ._matmul_per_token import PackedWeight, matmul_per_token, pack_weight
from ._quantized_add import quantized_add
from ._int8_linear import Int8Linear, quantization_error, quantize_per_token, quantize_weight  # W8A8 layers

__all__ = ["matmul_per_token", "pack_weight", "PackedWeight", "quantized_add",
           "quantize_per_token", "quantize_weight", "Int8Linear", "quantization_error"]
