"""SciPy's f2py argument conversions, in Python, for gemmkit.blas's general path: the PyArg "i" format,
int/double/complex_double_from_pyobj and ndarray_from_pyobj with check_and_fix_dimensions of NumPy's
numpy/f2py (cfuncs.py, src/fortranobject.c), rule for rule, so that odd arguments get SciPy's results
and exception types. Only arguments are converted here (dtype casts by NumPy); no arithmetic on data.
"""
import operator

import numpy as np

_INT_MIN, _INT_MAX = -2**31, 2**31 - 1
_NOTHING = object()


def _is_sequence(x):
    """PySequence_Check: a type with item access by index, not a dict (nor a NumPy scalar, whose
    indexing is a mapping's)."""
    return not isinstance(x, (dict, np.generic)) and hasattr(type(x), "__getitem__")


def _first_item(x):
    """What f2py's scalar conversions fall back to: x.real for a complex, x[0] for a sequence (not a
    string or bytes). Returns _NOTHING, or raises what the item access raises."""
    if isinstance(x, complex):
        return x.real
    if isinstance(x, (bytes, str)) or not _is_sequence(x):
        return _NOTHING
    return x[0]


def parse_int(x, name):
    """The PyArg "i" format (overwrite_c): an integer by __index__ that fits a C int."""
    v = operator.index(x)
    if v > _INT_MAX:
        raise OverflowError(f"{name}: signed integer is greater than maximum")
    if v < _INT_MIN:
        raise OverflowError(f"{name}: signed integer is less than minimum")
    return v


def _from_pyobj(x, convert, errmess):
    """The shape common to int_ and double_from_pyobj: `convert` (int() or float()), else the same on
    x.real (complex) or x[0] (sequence); the last error's type with errmess. A C int overflow is final."""
    try:
        return convert(x)
    except _Overflow:
        raise
    except Exception as e:  # noqa: BLE001 (f2py goes on to the fallbacks whatever the conversion raised)
        err = type(e)
    try:
        item = _first_item(x)
        if item is not _NOTHING:
            return _from_pyobj(item, convert, errmess)
    except Exception as e:  # noqa: BLE001 (f2py keeps whatever the item access raised)
        err = type(e)
    raise err(errmess)


def _c_int(x):
    # an int's own value (PyLong_Check), else PyNumber_Long (int() also parses strings and bytes)
    v = int.__int__(x) if isinstance(x, int) else int(x)
    if not _INT_MIN <= v <= _INT_MAX:
        raise _Overflow("Python int too large to convert to C int")
    return v


class _Overflow(OverflowError):
    """An out-of-range C int: f2py returns at once, with no fallback to x.real or x[0]."""


def int_from_pyobj(x, errmess):
    try:
        return _from_pyobj(x, _c_int, errmess)
    except _Overflow as e:
        raise OverflowError(str(e)) from None


def double_from_pyobj(x, errmess):
    if isinstance(x, float):
        return float.__float__(x)  # PyFloat_AsDouble: the stored value, whatever __float__ a subclass has
    return _from_pyobj(x, float, errmess)  # float() is PyNumber_Float


def complex_from_pyobj(x, errmess):
    """complex_double_from_pyobj: complex (and NumPy complex) scalars, other NumPy scalars and 0-d arrays
    cast to complex128, float, int, else the first item of a sequence; TypeError for anything else
    (strings included)."""
    if isinstance(x, (complex, np.complexfloating)):
        return complex(x.real, x.imag)
    if isinstance(x, np.generic) or (isinstance(x, np.ndarray) and x.ndim == 0):
        return complex(np.asarray(x).astype(np.complex128)[()])
    if isinstance(x, float):
        return complex(float.__float__(x), 0.0)  # the stored values, as PyFloat_AsDouble / PyLong_AsDouble
    if isinstance(x, int):
        return complex(int.__float__(x), 0.0)  # OverflowError past the double range
    err = TypeError
    if _is_sequence(x) and not isinstance(x, (bytes, str)):
        try:
            return complex_from_pyobj(x[0], errmess)
        except Exception as e:  # noqa: BLE001 (f2py keeps whatever the item access raised)
            err = type(e)
    raise err(errmess)


def check_and_fix_dimensions(shape, dims, errmess):
    """fortranobject.c's check_and_fix_dimensions: `dims` (-1 for a free extent) filled in from an array
    of `shape` read as len(dims)-D: fewer axes are padded (a 1-D array is a column), more are folded by
    skipping axes shorter than 2; a fixed 0 becomes 1. Returns the new dims; ValueError on a mismatch."""
    dims, rank, nd = list(dims), len(dims), len(shape)
    arr_size = int(np.prod(shape, dtype=np.int64)) if nd else 1
    if rank > nd:
        new_size, free_axis = 1, -1
        for i, d in enumerate(shape):
            if dims[i] >= 0:
                if d > 1 and dims[i] != d:
                    raise ValueError(f"{i}-th dimension must be fixed to {dims[i]} but got {d}")
                dims[i] = dims[i] or 1
            else:
                dims[i] = d or 1
            new_size *= dims[i]
        for i in range(nd, rank):
            if dims[i] > 1:
                raise ValueError(f"{i}-th dimension must be {dims[i]} but got 0 (not defined).")
            if free_axis < 0:
                free_axis = i
            else:
                dims[i] = 1
        if free_axis >= 0:
            dims[free_axis] = arr_size // new_size
            new_size *= dims[free_axis]
        if new_size != arr_size:
            raise ValueError(f"unexpected array size: new_size={new_size}, got array with arr_size={arr_size} "
                             f"(maybe too many free indices)")
    elif rank == nd:
        new_size = 1
        for i, d in enumerate(shape):
            if dims[i] >= 0:
                if d > 1 and d != dims[i]:
                    raise ValueError(f"{errmess} -- {i}-th dimension must be fixed to {dims[i]} but got {d}")
                dims[i] = dims[i] or 1
            else:
                dims[i] = d
            new_size *= dims[i]
        if new_size != arr_size:
            raise ValueError(f"unexpected array size: new_size={new_size}, got array with arr_size={arr_size}")
    else:
        long_axes = [d for d in shape if d > 1]
        if dims[-1] >= 0 and len(long_axes) > rank:
            raise ValueError(f"too many axes: {nd} (effrank={len(long_axes)}), expected rank={rank}")
        for i in range(rank):
            d = long_axes[i] if i < len(long_axes) else 1
            if dims[i] >= 0:
                if d > 1 and d != dims[i]:
                    raise ValueError(f"{errmess} -- {i}-th dimension must be fixed to {dims[i]} but got {d}")
                dims[i] = dims[i] or 1
            else:
                dims[i] = d
        for d in long_axes[rank:]:
            dims[-1] *= d
        size = int(np.prod(dims, dtype=np.int64))
        if size != arr_size:
            raise ValueError(f"unexpected array size: size={size}, arr_size={arr_size}, rank={rank}, "
                             f"effrank={len(long_axes)}, arr.nd={nd}, dims={dims}")
    return dims


def array_from_pyobj(obj, dtype, dims, errmess, reuse):
    """ndarray_from_pyobj for a, b (intent in) and c (intent in,out[,copy]): (array, dims).

    A NumPy array is checked against dims first, then used as it is when it has the dtype and
    reuse(array) holds, else converted into a new Fortran-ordered array of its own shape (NumPy's unsafe
    cast, with its warnings). Anything else goes through np.asarray(obj, dtype, order="F")
    (PyArray_FromAny with FORCECAST) and is checked afterwards. The array keeps its own number of axes;
    dims says how f2py reads its Fortran-ordered data."""
    if isinstance(obj, np.ndarray):
        dims = check_and_fix_dimensions(obj.shape, dims, errmess)
        if obj.dtype == dtype and reuse(obj):
            return obj, dims
        out = np.empty(obj.shape, dtype, order="F")
        np.copyto(out, obj, casting="unsafe")
        return out, dims
    arr = np.asarray(obj, dtype=dtype, order="F")
    return arr, check_and_fix_dimensions(arr.shape, dims, errmess)
