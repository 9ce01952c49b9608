"""NumPy front end of gemmkit.quant.quantized_add: argument checks (naming the argument at fault),
output type and shape, broadcasting by stride-0 views; the arithmetic runs in C (csrc/qadd.c)."""
import math
import numbers
import struct

import numpy as np

from . import _args, _core, _fastpaths

_QTYPES = (np.dtype(np.uint8), np.dtype(np.int8))
_RANGE = {np.dtype(np.uint8): (0, 255), np.dtype(np.int8): (-128, 127)}
_F32 = struct.Struct("f")
FORMULAS = ("directml", "onnxruntime")


def _quantized_array(x, name):
    _args.refuse_masked(x, name, "quantized_add")
    if isinstance(x, np.generic) and x.dtype in _QTYPES:
        x = np.asarray(x)  # a NumPy scalar: as the 0-d array it is
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be a NumPy array of uint8 or int8, got {type(x).__name__}")
    if x.dtype not in _QTYPES:
        raise TypeError(f"{name} must have dtype uint8 or int8, got {x.dtype}")
    if x.ndim > _core.QADD_MAX_DIMS:
        raise ValueError(f"{name} has {x.ndim} dimensions; quantized_add takes at most {_core.QADD_MAX_DIMS}")
    return x


def _fits_under(param_shape, tensor_shape, name, tensor_name):
    """A scale or zero point broadcasts to its tensor's shape without enlarging it."""
    try:
        shape = np.broadcast_shapes(param_shape, tensor_shape)
    except ValueError:
        shape = None
    if shape != tuple(tensor_shape):
        raise ValueError(f"{name} of shape {param_shape} does not broadcast to {tensor_name}'s shape "
                         f"{tuple(tensor_shape)}")


def _scale(value, name, tensor_shape, tensor_name):
    """The scale(s) in float32, finite and non-zero (checked on the float32 values): one value as a
    Python float holding a float32, several as a float32 array."""
    if isinstance(value, (float, int, np.floating, np.integer)) and not isinstance(value, (bool, np.bool_)):
        try:  # rounded to float32 (struct refuses what would overflow to Inf)
            v = _F32.unpack(_F32.pack(float(value)))[0]
        except OverflowError:
            v = math.inf
        if v == 0.0 or not math.isfinite(v):
            raise ValueError(f"{name} must be finite and non-zero as float32, got {value!r}")
        return v
    if isinstance(value, (bool, np.bool_)) or value is None:
        raise TypeError(f"{name} must be a real number or an array of them, got {type(value).__name__}")
    arr = np.asarray(value)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be a real number or an array of them, got dtype {arr.dtype}")
    with np.errstate(over="ignore"):  # a value beyond float32 becomes Inf, rejected below
        scale = np.array(arr, dtype=np.float32)  # a copy: never aliases the output
    if scale.size == 0:
        raise ValueError(f"{name} is empty")
    _fits_under(scale.shape, tensor_shape, name, tensor_name)
    if not np.all(np.isfinite(scale)) or np.any(scale == 0):
        raise ValueError(f"{name} must be finite and non-zero as float32, got {value!r}")
    return scale


def _zero_point(value, name, dtype, tensor_shape, tensor_name):
    """The zero point(s) as an array of `dtype` (None stays None: 0), checked to lie in its range."""
    if value is None:
        return None
    # one value: a Python int, or a NumPy integer of the tensor's dtype or of a wider type (np.int64(3) is
    # a plain value); an int8 / uint8 scalar of the other 8-bit type contradicts the tensor's (TypeError)
    if type(value) is int or (isinstance(value, np.integer) and (value.dtype == dtype or value.dtype not in _QTYPES)):
        lo, hi = _RANGE[dtype]
        if not lo <= value <= hi:
            raise ValueError(f"{name} must lie in {lo}..{hi} ({dtype}), got {value!r}")
        return int(value)
    if isinstance(value, (np.ndarray, np.generic)):
        if value.dtype != dtype:
            raise TypeError(f"{name} must have {tensor_name}'s dtype {dtype}, got {value.dtype}")
        zp = np.array(value, dtype=dtype)
    else:
        if isinstance(value, bool) or not (isinstance(value, numbers.Integral) or isinstance(value, (list, tuple))):
            raise TypeError(f"{name} must be an integer, an array of them, or None; got {type(value).__name__}")
        arr = np.asarray(value)
        if arr.dtype.kind not in "iu" or arr.dtype == np.bool_:
            raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
        info = np.iinfo(dtype)
        if arr.size and (arr.min() < info.min or arr.max() > info.max):
            raise ValueError(f"{name} must lie in {info.min}..{info.max} ({dtype}), got {value!r}")
        zp = arr.astype(dtype)
    if zp.size == 0:
        raise ValueError(f"{name} is empty")
    _fits_under(zp.shape, tensor_shape, name, tensor_name)
    return zp


def _output_dtype(out_zero_point, out_dtype, a):
    if isinstance(out_zero_point, np.ndarray) or (isinstance(out_zero_point, np.generic)
                                                  and out_zero_point.dtype in _QTYPES):
        dtype = out_zero_point.dtype
        if dtype not in _QTYPES:
            raise TypeError(f"out_zero_point must have dtype uint8 or int8, got {dtype}")
        if out_dtype is not None and np.dtype(out_dtype) != dtype:
            raise TypeError(f"out_dtype={np.dtype(out_dtype)} contradicts out_zero_point's dtype {dtype}")
        return dtype
    if out_dtype is not None:
        try:
            dtype = np.dtype(out_dtype)
        except TypeError:
            raise TypeError(f"out_dtype must be uint8 or int8, got {out_dtype!r}") from None
        if dtype not in _QTYPES:
            raise TypeError(f"out_dtype must be uint8 or int8, got {dtype}")
        return dtype
    return a.dtype


def _same_view(x, y):
    return (x.__array_interface__["data"][0] == y.__array_interface__["data"][0] and x.shape == y.shape
            and x.strides == y.strides)


def quantized_add(a, a_scale, a_zero_point, b, b_scale, b_zero_point, out_scale, out_zero_point=None, *,
                  out=None, out_dtype=None, formula="directml"):
    """Quantized elementwise add of two uint8/int8 tensors, with NumPy broadcasting.

    Two rounding conventions, per output element::

        formula="directml" (default; DirectML's ELEMENT_WISE_QUANTIZED_LINEAR_ADD), every step in float32:
            q   = ((a - a_zero_point) * a_scale + (b - b_zero_point) * b_scale) / out_scale
            out = clamp(round_half_even(q) + out_zero_point, type min, type max)
        formula="onnxruntime": ONNX Runtime's com.microsoft QLinearAdd on x86-64, bit for bit (fused
            multiply-adds; the zero point is inside the rounded value, so ties can differ by one).

    Parameters
    ----------
    a, b : ndarray or NumPy scalar of uint8 or int8
        Broadcast against each other (at most 32 axes), any strides; two scalars give a scalar, as NumPy's
        ufuncs do.
    a_scale, b_scale, out_scale : float or array_like
        Converted to float32, finite and non-zero; arrays broadcastable to their tensor (``out_scale``: to
        the result, e.g. a scale per channel). ``formula="onnxruntime"`` takes single values only.
    a_zero_point, b_zero_point : int, ndarray or None
        None (0), an integer (Python or NumPy) in the tensor's type range, or an array of the tensor's
        dtype.
    out_zero_point : int, NumPy integer, ndarray or None, optional
    out : ndarray, optional, keyword-only
        The result's shape and dtype, any strides; it may be ``a`` or ``b``.
    out_dtype : dtype, optional, keyword-only
        uint8 or int8. The output dtype is ``out_zero_point``'s when it is a uint8 / int8 NumPy integer or
        array, else ``out_dtype``, else a's (a NumPy integer of another dtype, such as ``np.int64(3)``, is a
        plain value).
    formula : {"directml", "onnxruntime"}, keyword-only

    Returns
    -------
    ndarray
        The quantized sum, C-contiguous, or ``out``.

    Raises
    ------
    ValueError
        Shapes that do not broadcast, a zero / NaN / infinite scale, a zero point out of range; nothing is
        written.
    TypeError
        Tensors or zero points of another dtype.

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import quant
    >>> a = np.uint8([5, 130]); b = np.uint8([0, 120])
    >>> quant.quantized_add(a, 0.5, 0, b, 0.5, 0, 1.0, np.uint8(3))
    array([ 5, 128], dtype=uint8)
    >>> quant.quantized_add(a, 0.5, 0, b, 0.5, 0, 1.0, np.uint8(3),
    ...                     formula="onnxruntime")
    array([  6, 128], dtype=uint8)
    """
    if out_dtype is None:  # same-shape contiguous arrays, single values: checked and run in one C step
        result = _fastpaths.quantized_add_common(formula, a, a_scale, a_zero_point, b, b_scale, b_zero_point, out,
                                                 out_scale, out_zero_point)
        if result is not None:
            return result
    scalars = out is None and all(isinstance(x, np.generic) for x in (a, b))
    if formula not in FORMULAS:
        raise ValueError(f"formula must be one of {', '.join(map(repr, FORMULAS))}, got {formula!r}")
    a = _quantized_array(a, "a")
    b = _quantized_array(b, "b")
    try:
        shape = a.shape if a.shape == b.shape else np.broadcast_shapes(a.shape, b.shape)
    except ValueError:
        raise ValueError(f"a of shape {a.shape} and b of shape {b.shape} do not broadcast together") from None
    dtype = _output_dtype(out_zero_point, out_dtype, a)
    sa = _scale(a_scale, "a_scale", a.shape, "a")
    sb = _scale(b_scale, "b_scale", b.shape, "b")
    so = _scale(out_scale, "out_scale", shape, "the result")
    za = _zero_point(a_zero_point, "a_zero_point", a.dtype, a.shape, "a")
    zb = _zero_point(b_zero_point, "b_zero_point", b.dtype, b.shape, "b")
    zo = _zero_point(out_zero_point, "out_zero_point", dtype, shape, "the output")
    if formula == "onnxruntime":
        for name, p in (("a_scale", sa), ("b_scale", sb), ("out_scale", so), ("a_zero_point", za),
                        ("b_zero_point", zb), ("out_zero_point", zo)):
            if p is not None and np.size(p) != 1:
                raise ValueError(f"formula='onnxruntime' takes single-value scales and zero points (as ONNX "
                                 f"Runtime's QLinearAdd); {name} has {p.size} values")
        # ONNX Runtime decides its arithmetic from how the inputs broadcast: an input that is itself a
        # stride-0 view would look broadcast to the kernel, so it is made an ordinary array first.
        a = a if all(s != 0 or n <= 1 for s, n in zip(a.strides, a.shape)) else np.ascontiguousarray(a)
        b = b if all(s != 0 or n <= 1 for s, n in zip(b.strides, b.shape)) else np.ascontiguousarray(b)
    if out is None:
        out = np.empty(shape, dtype)
    else:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"out must be a NumPy array, got {type(out).__name__}")
        if out.shape != shape:
            raise ValueError(f"out has shape {out.shape}, but the result has shape {shape}")
        if out.dtype != dtype:
            raise TypeError(f"out has dtype {out.dtype}, but the result has dtype {dtype}")
        if not out.flags.writeable:
            raise ValueError("out is read-only: it must be writable")
        # An input that overlaps out other than element for element is read from a copy.
        if np.may_share_memory(out, a) and not _same_view(out, np.broadcast_to(a, shape)):
            a = a.copy()
        if np.may_share_memory(out, b) and not _same_view(out, np.broadcast_to(b, shape)):
            b = b.copy()
    # one value stays a Python float / int; arrays and inputs go in as views of the result's shape
    views = [x if not isinstance(x, np.ndarray) or x.shape == shape else np.broadcast_to(x, shape)
             for x in (a, sa, za, b, sb, zb, so, zo)]
    _core.quantized_add_strided(formula, shape, *views[:6], out, *views[6:])
    return out[()] if scalars else out
