"""The one strict conversion of the front ends' flags, scalars and array arguments (gemmkit.gemm, matmul,
onnx.gemm, quant): what the core's own entries accept, refused with an exception naming the argument.

Flags (trans_a, transA, transpose_b, ...): a bool, NumPy bool, or the integer 0 or 1. Strings are refused
(TypeError), BLAS letters included: 'N' and 'T' belong to the core functions (gemmkit.sgemm & co.), where
they are spelled out; a bool front end given 'N' would otherwise read it as True. Other integers (2, -1):
ValueError. Scalars (alpha, beta): real numbers (Python or NumPy ints and floats; complex ones for complex
arrays), never bools or strings (TypeError).

Arrays: numpy.ma.MaskedArray is refused (TypeError): gemmkit's products have no notion of a mask, and
computing on the hidden values would silently be wrong; use numpy.ma.dot, or a.filled(0). np.matrix
operands give an np.matrix result from matmul and gemm, as np.matmul does; other ndarray subclasses are
read as plain arrays and give plain arrays.
"""
import numbers

import numpy as np

_BOOLS = (bool, np.bool_)


def flag(value, name, who):
    """A 0/1 flag as a Python bool: bool, np.bool_ or an integer 0 or 1; anything else refused."""
    if isinstance(value, _BOOLS):
        return bool(value)
    if isinstance(value, (int, np.integer)):
        if value == 0 or value == 1:
            return bool(value)
        raise ValueError(f"{who}: {name} must be a bool or 0/1, got {value!r}")
    hint = (" (BLAS letters 'N'/'T' are for the core functions such as gemmkit.sgemm; here pass "
            "False/True)") if isinstance(value, (str, bytes)) else ""
    raise TypeError(f"{who}: {name} must be a bool or 0/1, got {type(value).__name__} {value!r}{hint}")


def real_scalar(value, name, who):
    """alpha/beta for real arrays: a real number (not a bool, not a string) as a Python float."""
    if type(value) is float:
        return value
    if isinstance(value, _BOOLS) or not isinstance(value, numbers.Real):
        raise TypeError(f"{who}: {name} must be a real number, got {type(value).__name__} {value!r}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{who}: {name}={value!r} is too large for a float") from None


def scalar(value, name, dtype, who):
    """alpha/beta as the core takes it for arrays of `dtype`: a float for real dtypes (complex refused,
    TypeError), a complex for complex ones; bools and strings refused."""
    if dtype.kind != "c":
        if isinstance(value, numbers.Complex) and not isinstance(value, (numbers.Real, _BOOLS)):
            raise TypeError(f"{who}: {name}={value!r} is complex but the arrays are {dtype}")
        return real_scalar(value, name, who)
    if isinstance(value, _BOOLS) or not isinstance(value, numbers.Complex):
        raise TypeError(f"{who}: {name} must be a number, got {type(value).__name__} {value!r}")
    try:
        return complex(value)
    except OverflowError:
        raise ValueError(f"{who}: {name}={value!r} is too large for a complex number") from None


def int_scalar(value, name, dtype, who):
    """alpha/beta for integer or bool arrays: an integer (bools too) that fits `dtype` as a Python int, as NumPy 2
    takes a Python int beside an array of that dtype (OverflowError when it does not fit); a float only when
    it is a whole number (gemm's default 1.0 and 0.0); bool arrays take truth values (0 / 1)."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if not isinstance(value, (int, np.integer, np.bool_)):
        raise TypeError(f"{who}: {name} must be an integer for {dtype} arrays, got {type(value).__name__} "
                        f"{value!r}")
    value = int(value)
    if dtype.kind == "b":
        if value not in (0, 1):
            raise ValueError(f"{who}: {name} must be 0 / 1 (or a bool) for bool arrays, got {value!r}")
        return value
    info = np.iinfo(dtype)
    if not info.min <= value <= info.max:
        raise OverflowError(f"{who}: {name}={value!r} is out of bounds for {dtype}")
    return value


def refuse_masked(x, name, who):
    """TypeError for a numpy.ma.MaskedArray (see the module docstring)."""
    if isinstance(x, np.ma.MaskedArray):
        raise TypeError(f"{who}: {name} is a numpy.ma.MaskedArray; gemmkit does not honour masks (it would "
                        f"compute on the hidden values): use numpy.ma.dot, or pass {name}.filled(0)")


class PackedOperand:
    """What a packed operand (gemmkit.quant.PackedWeight) derives from: the mark this lowest layer refuses as an
    array, without importing the front end that defines it."""
    __slots__ = ()


def refuse_packed(x, name, who):
    """TypeError for a gemmkit.quant.PackedWeight given where an array is expected."""
    if isinstance(x, PackedOperand):
        raise TypeError(f"{who}: {name} is a PackedWeight, which only gemmkit.quant.matmul_per_token takes "
                        f"(as its weight); pass the int8 array itself ({name}.weight)")


def operand(x, name, who):
    """Refuses what must not be read as a plain array (MaskedArray, PackedWeight); returns x."""
    refuse_masked(x, name, who)
    refuse_packed(x, name, who)
    return x


def is_matrix(x):
    return isinstance(x, np.matrix)
