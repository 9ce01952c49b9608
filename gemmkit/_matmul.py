"""gemmkit.matmul (np.matmul semantics) and gemmkit.gemm (C := alpha op(A) op(B) + beta C on whole arrays):
the NumPy-facing front ends. They check shapes and dtypes, resolve strides with gemmkit._resolve and call
the core's <prefix>gemm; all arithmetic on matrix data happens in the core."""
import numpy as np

from . import _args, _core, _fastpaths
from ._resolve import resolve_operand, resolve_output

# operand dtype name -> the core function (gemmkit._core.<name>) that multiplies matrices of it.
CORE_FUNCTION = {"float32": "sgemm", "float64": "dgemm", "complex64": "cgemm", "complex128": "zgemm",
                 "float16": "hgemm", "bfloat16": "gemm_bf16bf16f32",
                 **{t: "gemm_batch" for t in ("bool", "int8", "uint8", "int16", "uint16", "int32", "uint32",
                                              "int64", "uint64")}}
# dtypes with the core's float or complex kernels (gemmkit.dask's; matmul stacks of every dtype in
# CORE_FUNCTION are one gemmkit._core.gemm_batch call)
BATCH_DTYPES = ("float32", "float64", "complex64", "complex128")
# operand dtypes whose product NumPy gives in another dtype: ml_dtypes' bfloat16 matmul returns float32
RESULT_DTYPE = {"bfloat16": np.dtype(np.float32)}
# dtypes matmul/gemm are meant to take whose kernels are not written yet (none at present).
PLANNED_DTYPES = ()


def core_gemm_for(dtype, who):
    """The core GEMM function for operands of `dtype`; TypeError saying why when there is none."""
    name = dtype.name
    fn_name = CORE_FUNCTION.get(name)
    fn = getattr(_core, fn_name, None) if fn_name is not None else None
    if fn is not None:
        return fn
    supported = ", ".join(n for n, f in CORE_FUNCTION.items() if hasattr(_core, f))
    if fn_name is None:
        if name in PLANNED_DTYPES:
            raise TypeError(f"{who}: {name} kernels are not there yet (dtypes with kernels: {supported})")
        raise TypeError(f"{who}: no kernels for dtype {name} (dtypes with kernels: {supported})")
    raise TypeError(f"{who}: {name} kernels are not there yet in this build (gemmkit has no "
                    f"{fn_name}; dtypes with kernels: {supported})")


def _as_array(x, name, who):
    """x as an ndarray; what its __array__ or buffer raises reaches the caller as it was raised."""
    return x if isinstance(x, np.ndarray) else np.asarray(x)


# np.matmul's inexact loops in its order of preference: for operands with no common dtype (ml_dtypes'
# bfloat16 with float16 or 16/32/64-bit integers) NumPy runs the first loop both cast to safely.
_LOOP_DTYPES = tuple(np.dtype(c) for c in "efdFD")


def _result_dtype(a, b, who):
    """The dtype NumPy's matmul computes a and b in, in native byte order."""
    try:
        dtype = np.result_type(a.dtype, b.dtype)
    except TypeError as e:  # includes numpy.exceptions.DTypePromotionError
        dtype = next((t for t in _LOOP_DTYPES if np.can_cast(a.dtype, t) and np.can_cast(b.dtype, t)), None)
        if dtype is None:
            raise TypeError(f"{who}: a ({a.dtype}) and b ({b.dtype}) have no common dtype ({e})") from None
    if dtype.kind not in "biufc" and dtype.name not in CORE_FUNCTION:  # strings, objects, dates: no product
        raise TypeError(f"{who}: a ({a.dtype}) and b ({b.dtype}) are not numbers (their common dtype is "
                        f"{dtype})")
    return dtype.newbyteorder("=")


def _check_out(out, name, shape, dtype, who, dtype_error=TypeError):
    """out/c must be a writable ndarray of exactly the result's shape and dtype (byte order aside); a
    wrong dtype raises `dtype_error` (NumPy's matmul: TypeError; quant's contract: ValueError)."""
    if not isinstance(out, np.ndarray):
        raise TypeError(f"{who}: {name} must be a NumPy array, got {type(out).__name__}")
    if out.dtype.newbyteorder("=") != dtype:
        raise dtype_error(f"{who}: {name} has dtype {out.dtype} but the result is {dtype}")
    if out.shape != shape:
        raise ValueError(f"{who}: {name} has shape {out.shape} but the result has shape {shape}")
    if not out.flags.writeable:
        raise ValueError(f"{who}: {name} is read-only")


def _scalar(value, name, dtype, who):
    """alpha/beta as the core takes them for arrays of `dtype`: integers for integer and bool arrays (NumPy's
    modular arithmetic), else real numbers (complex for complex arrays), never bools or strings."""
    if dtype.kind in "biu":
        return _args.int_scalar(value, name, dtype, who)
    return _args.scalar(value, name, dtype, who)


def _zero_stride(x, axis):
    return x.shape[axis] > 1 and x.strides[axis] == 0


def _resolve_broadcast(x):
    """(view, flipped) as resolve_operand gives, except that a matrix with a stride-0 axis (a broadcast
    operand) is never copied whole: that axis becomes the rows, passed with leading dimension 0 (every
    row the same row), and the other axis is read in place when it has unit stride, else from a copy of
    one row (a vector)."""
    if not (_zero_stride(x, -2) or _zero_stride(x, -1)):
        return resolve_operand(x)[:2]
    flipped = not _zero_stride(x, -2)
    view = np.swapaxes(x, -1, -2) if flipped else x
    if view.shape[-1] > 1 and not (view.strides[-1] == view.itemsize and view.dtype.isnative
                                   and view.flags.aligned):
        row = np.ascontiguousarray(view[..., :1, :], dtype=view.dtype.newbyteorder("="))
        view = np.broadcast_to(row, view.shape)
    return view, flipped


def _product_into(a, trans_a, b, trans_b, c, alpha, beta):
    """c := alpha op(a) op(b) + beta c over the batch, with every operand's strides resolved once.

    Broadcast operands are not copied: where op(a)'s rows (op(b)'s columns) are one row repeated by a
    stride-0 axis and beta = 0, the product's rows (columns) are equal, so one is computed in place
    and copied to the others (data movement); a stride-0 contracted axis is read with ld 0."""
    if beta == 0 and c.size:
        m_axis, n_axis = (-1 if trans_a else -2), (-2 if trans_b else -1)
        if _zero_stride(a, m_axis) and c.shape[-2] > 1:
            one = a[..., :1, :] if m_axis == -2 else a[..., :1]
            _product_into(one, trans_a, b, trans_b, c[..., :1, :], alpha, beta)
            c[..., 1:, :] = c[..., :1, :]
            return
        if _zero_stride(b, n_axis) and c.shape[-1] > 1:
            one = b[..., :1] if n_axis == -1 else b[..., :1, :]
            _product_into(a, trans_a, one, trans_b, c[..., :1], alpha, beta)
            c[..., 1:] = c[..., :1]
            return
    a_view, a_flip = _resolve_broadcast(a)
    b_view, b_flip = _resolve_broadcast(b)
    trans_a, trans_b = trans_a != a_flip, trans_b != b_flip
    out = resolve_output(c, reads_c=beta != 0)
    if out.transposed:  # C^T = op(B)^T op(A)^T, written into the row-contiguous view c^T
        a_view, trans_a, b_view, trans_b = b_view, not trans_b, a_view, not trans_a
    if out.target.size:
        ta, tb = ("T" if trans_a else "N"), ("T" if trans_b else "N")
        _core.gemm_batch(ta, tb, alpha, a_view, b_view, beta, out.target)
    out.finish()


def _apart_from(x, out):
    """x, or a copy of it when it may share memory with the output (the core reads x while writing out)."""
    return x.copy() if np.may_share_memory(x, out) else x


_CASTINGS = ("no", "equiv", "safe", "same_kind", "unsafe")
# dtypes np.matmul has loops for and gemmkit no kernels (longdouble, clongdouble, object): NumPy computes them
_NUMPY_LOOPS = "gGO"
_ORDERS = ("C", "F", "A", "K")


def _out_array(out):
    """np.matmul's `out`: an ndarray, or a tuple holding one (a ufunc's outputs)."""
    if isinstance(out, tuple):
        if len(out) != 1:
            raise ValueError("The 'out' tuple must have exactly one entry per ufunc output")
        out = out[0]
    if out is not None and not isinstance(out, np.ndarray):
        raise TypeError(f"gemmkit.matmul: out must be a NumPy array, got {type(out).__name__} (return arrays must "
                        f"be of ArrayType)")
    return out


def _numpy_types(a_dtype, b_dtype, out_dtype, dtype, signature, casting):
    """The dtype np.matmul's own type resolution gives (its loop's output), with NumPy's exception where it
    refuses the dtypes, `dtype`, `signature`, `casting` or `out`'s dtype: asked of NumPy on empty operands."""
    x, y = np.empty((0, 0), a_dtype), np.empty((0, 0), b_dtype)
    kw = {"casting": casting}
    if dtype is not None:
        kw["dtype"] = dtype
    if signature is not None:
        kw["signature"] = signature
    loop = np.matmul(x, y, **kw).dtype
    if out_dtype is not None:
        np.matmul(x, y, out=np.empty((0, 0), out_dtype), **kw)
    return loop


def _numpy_only(a_dtype, b_dtype):
    """Whether the operands' common dtype is one of _NUMPY_LOOPS."""
    try:
        return np.result_type(a_dtype, b_dtype).char in _NUMPY_LOOPS
    except TypeError:  # no common dtype: _result_dtype says why
        return False


def _core_axes(axes, ndims, who):
    """np.matmul's `axes` as one tuple of normalized axes per operand and the result (ndims: their ranks and
    numbers of core axes), NumPy's exceptions for a malformed list."""
    from numpy.lib.array_utils import normalize_axis_tuple
    if not isinstance(axes, list):
        raise TypeError("axes should be a list.")
    if len(axes) != 3:
        raise ValueError("axes should be a list with an entry for all 3 inputs and outputs; entries for "
                         "outputs can only be omitted if none of them has core axes.")
    resolved = []
    for i, (entry, (nd, core)) in enumerate(zip(axes, ndims)):
        entry = (entry,) if isinstance(entry, (int, np.integer)) else tuple(entry)
        if len(entry) != core:
            raise np.exceptions.AxisError(f"matmul: {'operand' if i < 2 else 'output operand'} {i if i < 2 else 0}"
                                          f" has {core} core dimensions, but {len(entry)} dimensions are "
                                          f"specified by axes tuple.")
        resolved.append(normalize_axis_tuple(entry, nd) if core else ())
    return resolved


def _outer_broadcast(out_shape, shape, batch_shape, who):
    """out's shape when it holds the result with more stack axes (the operands broadcast to them, as NumPy's
    ufuncs broadcast inputs to a given output), else ValueError."""
    core = shape[len(batch_shape):]
    outer = out_shape[:len(out_shape) - len(core)]
    try:
        fits = (len(out_shape) >= len(shape) and tuple(out_shape[len(outer):]) == core
                and np.broadcast_shapes(batch_shape, outer) == outer)
    except ValueError:
        fits = False
    if not fits:
        raise ValueError(f"{who}: non-broadcastable output operand: out has shape {out_shape} but the result has "
                         f"shape {shape}")
    return tuple(out_shape)


def _wrapper(a, b):
    """The operand whose __array_wrap__ NumPy's ufunc machinery would give the result (an ndarray subclass
    with the highest __array_priority__, the first on a tie), or None for plain arrays."""
    best = None
    for x in (a, b):
        if isinstance(x, np.ndarray) and type(x) is not np.ndarray:
            if best is None or getattr(x, "__array_priority__", 0.0) > getattr(best, "__array_priority__", 0.0):
                best = x
    return best


def matmul(a, b, /, out=None, *, casting="same_kind", order="K", dtype=None, subok=True, signature=None,
           axes=None, axis=None):
    """Matrix product of two arrays with ``np.matmul``'s rules, on gemmkit's kernels.

    A 1-D ``a`` is a row and a 1-D ``b`` a column; that axis is removed from the result. Operands with more
    than two axes are stacks of matrices in their last two axes, broadcast against each other, and run as one
    batched call.

    Parameters
    ----------
    a, b : array_like
        float32, float64, complex64, complex128, float16, ``ml_dtypes.bfloat16``, every integer dtype or bool
        (mixed dtypes as NumPy promotes them). Integers are multiplied in NumPy's arithmetic, modulo 2^bits
        (int8 / uint8 on the exact int8 kernels, wider ones on wrap-around kernels; never through float),
        bit for bit what ``np.matmul`` gives; bool is "any" of "and", on bit sets (any nonzero byte is true).
        Any strides: a matrix with a unit
        stride along either axis is read in place, others are copied. longdouble, clongdouble and object
        arrays, which gemmkit has no kernels for, are handed to ``np.matmul`` whole.
    out : ndarray or tuple of one ndarray, optional
        Where to write the result: its shape, any dtype the result casts to under ``casting``, any strides (it
        may overlap the inputs, which are then copied first).
    casting : {'no', 'equiv', 'safe', 'same_kind', 'unsafe'}, optional
        As ``np.matmul``'s, for the operands' casts to ``dtype`` and the result's into ``out``.
    order : {'K', 'C', 'F', 'A'}, optional
        The memory layout of a new result ('F': Fortran order; others: C order).
    dtype : dtype, optional
        The dtype to compute in (operands cast to it under ``casting``).
    subok : bool, optional
        False: a plain ndarray even for ``np.matrix`` or other ndarray subclass operands.
    signature : optional
        As ``np.matmul``'s (a type tuple or string); not together with ``dtype``.
    axes : list of tuples, optional
        The core axes of ``a``, ``b`` and the result, as ``np.matmul``'s (three entries).
    axis : None
        ``np.matmul`` refuses it (matmul has more than one core dimension); so does this, with NumPy's
        TypeError.

    Returns
    -------
    ndarray
        The product, of NumPy's result dtype (``np.result_type(a, b)``, or ``dtype``), except that bfloat16
        operands give float32, and bfloat16 mixed with another type what ``np.matmul`` gives (float16 or an
        integer: float32). ``out`` when given; a NumPy scalar for two 1-D operands; for ndarray subclass
        operands (``np.matrix`` ...) what their ``__array_wrap__`` makes of it, as ``np.matmul`` gives.

    Raises
    ------
    TypeError
        A dtype neither gemmkit nor ``np.matmul`` multiplies (strings, dates, ...), a cast ``casting`` does not allow (NumPy's own
        ``UFuncTypeError``), ``axis``, or a masked array (masks are not honoured: use ``numpy.ma.dot``).
        What an operand's ``__array__`` raises propagates unchanged.
    ValueError
        Contracted dimensions that differ, stacks that do not broadcast, a 0-d operand, an ``out`` of the
        wrong shape, a bad ``casting`` or ``order``. ``out`` is left untouched when the arguments are rejected.

    See Also
    --------
    gemm : alpha, beta, transposes and an in-place C for 2-D arrays.
    numpy.matmul

    Examples
    --------
    >>> import numpy as np, gemmkit
    >>> a = np.arange(6, dtype=np.float32).reshape(2, 3)
    >>> gemmkit.matmul(a, np.ones((3, 2), np.float32))
    array([[ 3.,  3.],
           [12., 12.]], dtype=float32)
    >>> gemmkit.matmul(np.ones((10, 2, 3)), np.ones((3, 4))).shape   # one call
    (10, 2, 4)
    >>> gemmkit.matmul([1.0, 2.0], [3.0, 4.0])
    np.float64(11.0)
    >>> gemmkit.matmul(np.full((2, 2), 100, np.int8), np.full((2, 2), 2, np.int8))   # modulo 2^8
    array([[-112, -112],
           [-112, -112]], dtype=int8)
    """
    plain = (dtype is None and signature is None and axes is None and axis is None and subok is True
             and order == "K" and casting == "same_kind" and not isinstance(out, tuple))
    if plain:
        result = _fastpaths.matmul_fast(a, b, out)  # 1-D/2-D ndarrays of one s/d/c/z dtype, read in place
        if result is not None:
            return result
    who = "gemmkit.matmul"
    if axis is not None:
        raise TypeError("matmul: axis can only be used with a single shared core dimension, not with the 3 "
                        "distinct ones implied by signature (n?,k),(k,m?)->(n?,m?).")
    if casting not in _CASTINGS:
        raise ValueError(f"casting must be one of 'no', 'equiv', 'safe', 'same_kind', 'unsafe' (got {casting!r})")
    if order not in _ORDERS:
        raise ValueError(f"order must be one of 'C', 'F', 'A', or 'K' (got {order!r})")
    if not isinstance(subok, (bool, np.bool_)):
        raise TypeError("'subok' must be a boolean")
    out = _out_array(out)
    given = (a, b, out)
    wrap = _wrapper(a, b) if subok and out is None else None
    a = _as_array(_args.operand(a, "a", who), "a", who)
    b = _as_array(_args.operand(b, "b", who), "b", who)
    if out is not None:
        _args.refuse_masked(out, "out", who)
    if _numpy_only(a.dtype, b.dtype):
        ga, gb, gout = given  # no gemmkit kernels: NumPy's own loop, every keyword as given
        kw = {k: v for k, v in (("casting", casting), ("order", order), ("dtype", dtype), ("subok", subok),
                                ("signature", signature), ("axes", axes)) if v is not None}
        return np.matmul(ga, gb, **({"out": gout} if gout is not None else {}), **kw)
    if dtype is None and signature is None and casting == "same_kind":
        op_dtype = _result_dtype(a, b, who)  # the operands' common dtype (TypeError first, as NumPy's order)
        want = RESULT_DTYPE.get(op_dtype.name, op_dtype)  # the result's, as np.matmul gives it
    else:
        want = _numpy_types(a.dtype, b.dtype, None, dtype, signature, casting).newbyteorder("=")
        op_dtype = _result_dtype(a, b, who) if want.name == "float32" and a.dtype.name == b.dtype.name == \
            "bfloat16" else want
    for name, x in (("a", a), ("b", b)):
        if x.ndim == 0:
            raise ValueError(f"{who}: {name} is a scalar (0-d); matmul needs at least 1-D operands "
                             f"(multiply by a scalar with *)")
    if axes is not None:
        a_core, b_core = min(a.ndim, 2), min(b.ndim, 2)
        nd_out = max(a.ndim, b.ndim) - (a.ndim == 1) - (b.ndim == 1)
        out_core = (a.ndim > 1) + (b.ndim > 1)
        ax_a, ax_b, ax_c = _core_axes(list(axes) if isinstance(axes, list) else axes,
                                      ((a.ndim, a_core), (b.ndim, b_core), (nd_out, out_core)), who)
        a = np.moveaxis(a, ax_a, tuple(range(-a_core, 0)))
        b = np.moveaxis(b, ax_b, tuple(range(-b_core, 0)))
        if out is not None:
            out = np.moveaxis(out, ax_c, tuple(range(-out_core, 0)))
    dtype = RESULT_DTYPE.get(op_dtype.name, op_dtype)  # what the kernels write
    a_mat = a[np.newaxis, :] if a.ndim == 1 else a
    b_mat = b[:, np.newaxis] if b.ndim == 1 else b
    (M, K), (Kb, N) = a_mat.shape[-2:], b_mat.shape[-2:]
    if K != Kb:
        raise ValueError(f"{who}: a has {K} columns (shape {a.shape}) but b has {Kb} rows (shape {b.shape}): "
                         f"the contracted dimensions differ")
    try:
        batch_shape = (() if a_mat.ndim == 2 and b_mat.ndim == 2
                       else np.broadcast_shapes(a_mat.shape[:-2], b_mat.shape[:-2]))
    except ValueError:
        raise ValueError(f"{who}: the stack dimensions of a {a.shape[:-2]} and b {b.shape[:-2]} do not "
                         f"broadcast") from None
    core_gemm_for(op_dtype, who)  # TypeError for a dtype without kernels (after the shapes, as NumPy's order)
    shape = batch_shape + ((M,) if a.ndim > 1 else ()) + ((N,) if b.ndim > 1 else ())
    if out is not None:
        if out.shape != shape:
            shape = _outer_broadcast(out.shape, shape, batch_shape, who)
        if out.dtype.newbyteorder("=") != want and not np.can_cast(want, out.dtype, casting):
            _numpy_types(a.dtype, b.dtype, out.dtype, dtype if dtype is not None and signature is None else None,
                         signature, casting)  # NumPy's own exception
            raise TypeError(f"{who}: cannot cast the result ({want}) into out ({out.dtype}) with casting "
                            f"{casting!r}")
        if not out.flags.writeable:
            raise ValueError(f"{who}: out is read-only")
    # written in place where out has the kernels' dtype, or is bfloat16 for bfloat16 operands (bf16gemm: the float32
    # sums rounded once, as the cast of a float32 result would round them)
    direct = out is not None and (out.dtype.newbyteorder("=") == dtype or
                                  (op_dtype.name == "bfloat16" and out.dtype == op_dtype))
    if direct:
        result = out
        a_mat, b_mat = _apart_from(a_mat, out), _apart_from(b_mat, out)
    else:
        result = np.empty(shape, dtype, order="F" if order == "F" and want == dtype else "C")
    c = result
    if b.ndim == 1:
        c = c[..., np.newaxis]
    if a.ndim == 1:
        c = c[..., np.newaxis, :]
    a_mat = a_mat if a_mat.dtype == op_dtype else a_mat.astype(op_dtype, casting="unsafe")
    b_mat = b_mat if b_mat.dtype == op_dtype else b_mat.astype(op_dtype, casting="unsafe")
    one = _scalar(1, "alpha", dtype, who)
    zero = _scalar(0, "beta", dtype, who)
    _product_into(a_mat, False, b_mat, False, c, one, zero)
    if out is not None:
        if not direct:
            np.copyto(out, result, casting="unsafe")  # the cast checked above: data movement only
        result = given[2]  # the array given (not its view with the core axes last)
    elif result.dtype != want:
        result = result.astype(want, order="F" if order == "F" else "C")  # a cast `dtype` asked for
    if axes is not None and out is None and result.ndim:
        out_core = (a.ndim > 1) + (b.ndim > 1)
        result = np.moveaxis(result, tuple(range(-out_core, 0)), ax_c)
    if out is None and result.ndim == 0:
        return result[()]  # 1-D @ 1-D: a NumPy scalar, as np.matmul gives
    if wrap is not None:
        return wrap.__array_wrap__(result, None, False)
    return result


def gemm(a, b, c=None, *, alpha=1.0, beta=0.0, trans_a=False, trans_b=False):
    """C := alpha * op(a) @ op(b) + beta * C for 2-D arrays, op(x) = x.T when trans_x.

    M, N and K come from the arrays' shapes.

    Parameters
    ----------
    a, b : array_like, 2-D
        Dtypes and strides as for :func:`matmul`.
    c : ndarray, optional
        Updated in place and returned: a writable array of shape (M, N) and the product's dtype
        (``np.result_type(a, b)``; float32 for bfloat16 operands), any strides. When None a new array is
        returned and ``beta`` is not used.
    alpha, beta : real number, keyword-only
        Scale factors (complex allowed for complex arrays), representable in the product's dtype; bools
        and strings raise TypeError.
    trans_a, trans_b : bool or 0/1, keyword-only
        Use ``a.T`` / ``b.T``. Strings such as BLAS's ``'N'`` / ``'T'`` raise TypeError (those belong to
        :func:`gemmkit.sgemm` and its siblings).

    Returns
    -------
    ndarray
        ``c``, or a new (M, N) array.

    Raises
    ------
    TypeError
        A dtype without kernels, a ``c`` of the wrong dtype, a masked array (use ``numpy.ma.dot``), a
        string flag or a non-numeric scalar. ``np.matrix`` operands give an ``np.matrix``.
    ValueError
        Operands that are not 2-D, contracted dimensions that differ, or a ``c`` of the wrong shape; ``c`` is
        left untouched.

    Examples
    --------
    >>> import numpy as np, gemmkit
    >>> a = np.arange(4.0).reshape(2, 2); c = np.ones((2, 2))
    >>> gemmkit.gemm(a, np.eye(2), c, alpha=2.0, beta=1.0)      # c := 2 a + c
    array([[1., 3.],
           [5., 7.]])
    >>> gemmkit.gemm(a, a, trans_a=True)                         # a.T @ a
    array([[ 4.,  6.],
           [ 6., 10.]])
    """
    who = "gemmkit.gemm"
    as_matrix = c is None and (_args.is_matrix(a) or _args.is_matrix(b))
    a = _as_array(_args.operand(a, "a", who), "a", who)
    b = _as_array(_args.operand(b, "b", who), "b", who)
    if c is not None:
        _args.refuse_masked(c, "c", who)
    trans_a, trans_b = _args.flag(trans_a, "trans_a", who), _args.flag(trans_b, "trans_b", who)
    for name, x in (("a", a), ("b", b)):
        if x.ndim != 2:
            raise ValueError(f"{who}: {name} must be 2-D, got shape {x.shape}")
    op_dtype = _result_dtype(a, b, who)
    core_gemm_for(op_dtype, who)  # TypeError for a dtype without kernels
    dtype = RESULT_DTYPE.get(op_dtype.name, op_dtype)  # C's: float32 for bfloat16 operands
    M, K = a.shape[::-1] if trans_a else a.shape
    Kb, N = b.shape[::-1] if trans_b else b.shape
    if K != Kb:
        raise ValueError(f"{who}: op(a) is {M}x{K} (a.shape {a.shape}, trans_a={trans_a}) but op(b) is "
                         f"{Kb}x{N} (b.shape {b.shape}, trans_b={trans_b}): the contracted dimensions differ")
    alpha = _scalar(alpha, "alpha", dtype, who)
    beta = _scalar(beta, "beta", dtype, who)
    if c is None:
        c = np.empty((M, N), dtype)
        beta = _scalar(0.0, "beta", dtype, who)
    else:
        _check_out(c, "c", (M, N), dtype, who)
        a, b = _apart_from(a, c), _apart_from(b, c)
    a = a if a.dtype == op_dtype else a.astype(op_dtype)
    b = b if b.dtype == op_dtype else b.astype(op_dtype)
    _product_into(a, trans_a, b, trans_b, c, alpha, beta)
    return np.asmatrix(c) if as_matrix else c
