"""Quantized operations on uint8/int8 NumPy arrays: gemmkit.quant.quantized_add (elementwise add with
scales and zero points, DirectML's or ONNX Runtime's formula). Each operation lives in its own module."""
from ._quantized_add import quantized_add

__all__ = ["quantized_add"]
