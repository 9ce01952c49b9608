"""gemmkit.quant.matmul_per_token and pack_weight: the per-token quantized int8 matmul (x int8 per-token scaled,
weight int8 per-channel scaled) with float16/bfloat16/float32 output, checked here and run as one fused core call.

The contract (README, "Quantized matmul"): acc = the exact integer sum; y = float32(float32(acc) *
deq_scale[j]) * per_token_scale[i] (+ bias[j]) in float32, rounded to nearest even into the output type.
Shapes, dtypes and strides are checked and resolved here (gemmkit._resolve); all arithmetic on the data
happens in the C core (gemmkit_gemm_s8s8_per_token), whose epilogue applies scales, bias and conversion.
"""
import numpy as np

from . import _args, _core
from ._matmul import _check_out
from ._resolve import batch_stride, resolve_operand, resolve_output

OUT_DTYPES = ("float16", "bfloat16", "float32")
_WHO = "matmul_per_token"


class PackedWeight(_args.PackedOperand):
    """An int8 weight packed once by :func:`pack_weight`, for many :func:`matmul_per_token` calls.

    It holds the kernel path's panels and column sums, made for one kernel path, and a reference to the
    weight it was made from (``weight``, not a copy): on another kernel path (``gemmkit.use_arch``), and for
    few rows of x where the path reads a weight in place faster, ``matmul_per_token`` reads that weight
    instead, so it must not change while the PackedWeight is in use. Pickled, it holds only the weight and is
    packed again where it is loaded.

    Parameters
    ----------
    weight : ndarray of int8
        The weight it is made from, (k, n), or (n, k) with ``transpose_b``.
    transpose_b : bool
        Whether op(weight) is ``weight.T``.
    k, n : int
        op(weight)'s shape.
    arch : str
        The kernel path the panels are made for (``gemmkit.get_arch()`` then).
    data : ndarray or None
        The panels and column sums (the core's layout), or None where the weight is read in place.

    Construct it with :func:`pack_weight`, which checks the weight and makes ``data``; the constructor
    stores what it is given.

    Attributes
    ----------
    weight : ndarray
        The int8 weight it was made from.
    transpose_b : bool
    k, n : int
        op(weight)'s shape.
    arch : str
    data : ndarray or None

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import quant
    >>> wp = quant.pack_weight(np.int8([[1, 2, 3], [4, 5, 6]]))
    >>> isinstance(wp, quant.PackedWeight), (wp.k, wp.n)
    (True, (2, 3))
    >>> quant.matmul_per_token(np.int8([[1, -1]]), wp, [1, 1, 1], [1.0], out_dtype="float32")
    array([[-3., -3., -3.]], dtype=float32)
    """
    __slots__ = ("weight", "transpose_b", "k", "n", "arch", "data")

    def __init__(self, weight, transpose_b, k, n, arch, data):
        self.weight, self.transpose_b, self.k, self.n, self.arch, self.data = weight, transpose_b, k, n, arch, data

    def __repr__(self):
        size = "unpacked" if self.data is None else f"{self.data.nbytes} bytes"
        return f"PackedWeight(k={self.k}, n={self.n}, arch={self.arch!r}, {size})"

    def __reduce__(self):
        """Pickles as its int8 weight and transpose_b only: the panels hold what is valid in this process
        for this kernel path alone, so they are made again (pack_weight) where the pickle is loaded, for
        the process and CPU it lands on."""
        return (_repack, (np.asarray(self.weight), self.transpose_b))


def _repack(weight, transpose_b):
    """A PackedWeight made again from its pickled weight (PackedWeight.__reduce__)."""
    return pack_weight(weight, transpose_b)


def pack_weight(weight, transpose_b=False):
    """Pack an int8 weight once for the kernel path in use (what ONNX Runtime does for constant weights).

    Parameters
    ----------
    weight : ndarray of int8
        (k, n), or (n, k) with ``transpose_b``.
    transpose_b : bool, default False

    Returns
    -------
    PackedWeight
        Goes in ``weight``'s place in :func:`matmul_per_token` (then with ``transpose_b=False``). Weights
        with k beyond one exact chunk (16384) are kept as they are.

    Raises
    ------
    TypeError
        A weight that is not int8, a masked array, or one that is already a PackedWeight.
    ValueError
        A weight that is not 2-D.

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import quant
    >>> w = np.int8([[1, 2, 3], [4, 5, 6]])
    >>> wp = quant.pack_weight(w)
    >>> quant.matmul_per_token(np.int8([[1, 1]]), wp, [1, 1, 1], [0.5])
    array([[2.5, 3.5, 4.5]], dtype=float16)
    """
    _args.refuse_masked(weight, "weight", "pack_weight")
    if isinstance(weight, PackedWeight):
        raise TypeError("pack_weight: weight is already a PackedWeight")
    weight = _int8_stack(weight, "weight", "pack_weight")
    if weight.ndim != 2:
        raise ValueError(f"pack_weight: weight must be 2-D (one weight shared by the batch), got shape {weight.shape}")
    transpose_b = _args.flag(transpose_b, "transpose_b", "pack_weight")
    k, n = (weight.shape[1], weight.shape[0]) if transpose_b else weight.shape
    view, flipped, ld = resolve_operand(weight)
    data = _core.s8s8_pack_weight("T" if bool(transpose_b) != flipped else "N", n, k, view, ld)
    # the path the panels were made for, from the panels: another thread may have switched it since
    arch = _core.s8s8_packed_weight_arch(data) if data is not None else _core.get_arch()
    return PackedWeight(weight, bool(transpose_b), k, n, arch, data)


def _bfloat16_type():
    try:
        import ml_dtypes
    except ImportError:
        raise TypeError(f"{_WHO}: out_dtype='bfloat16' needs the ml_dtypes package (pip install ml_dtypes)") from None
    return ml_dtypes.bfloat16


def _out_dtype_name(out_dtype, out):
    """The output type's name: out_dtype when given, else out's dtype, else float16."""
    if out_dtype is None:
        if out is None:
            return "float16"
        out_dtype = getattr(out, "dtype", None)
        if out_dtype is None:
            raise TypeError(f"{_WHO}: out must be a NumPy array, got {type(out).__name__}")
    if isinstance(out_dtype, str):
        name = out_dtype
    else:
        try:
            name = np.dtype(out_dtype).name
        except TypeError:
            name = None
    if name not in OUT_DTYPES:
        raise TypeError(f"{_WHO}: out_dtype must be one of {', '.join(OUT_DTYPES)}, got {out_dtype!r}")
    return name


def _numpy_dtype(name):
    return np.dtype(_bfloat16_type()) if name == "bfloat16" else np.dtype(name)


def _int8_stack(value, name, who=_WHO):
    """x / weight as an int8 ndarray of 2 or 3 dimensions."""
    _args.operand(value, name, who)
    arr = value if isinstance(value, np.ndarray) else np.asarray(value)
    if arr.dtype != np.int8:
        raise TypeError(f"{who}: {name} must be an int8 array, got dtype {arr.dtype}")
    if arr.ndim not in (2, 3):
        raise ValueError(f"{who}: {name} must be 2-D or 3-D (batch first), got shape {arr.shape}")
    return arr


def _float32_vector(value, name, shapes):
    """A float32 array of one of the allowed shapes; sequences and scalars are converted to float32, an
    ndarray must already be float32."""
    if isinstance(value, np.ndarray):
        arr = value
        if arr.dtype != np.float32:
            raise TypeError(f"{_WHO}: {name} must be float32, got dtype {arr.dtype}")
    else:
        try:
            arr = np.asarray(value, dtype=np.float32)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{_WHO}: {name} must be a float32 array or a sequence of numbers ({e})") from None
    if arr.shape not in shapes:
        want = " or ".join(str(s) for s in shapes)
        raise ValueError(f"{_WHO}: {name} has shape {arr.shape}, expected {want}")
    return arr


def _rows_for_core(arr):
    """A 1-D or 2-D float32 array as (array whose last axis has unit stride, elements between rows)."""
    if arr.ndim == 2 and arr.shape[0] > 1:
        ok = (arr.shape[1] <= 1 or arr.strides[1] == 4) and arr.strides[0] >= 0 and arr.strides[0] % 4 == 0
        if not (ok and arr.dtype.isnative and arr.flags.aligned):
            arr = np.ascontiguousarray(arr, dtype=np.float32)
        return arr, arr.strides[0] // 4
    if arr.size > 1 and (arr.strides[-1] != 4 or not (arr.dtype.isnative and arr.flags.aligned)):
        arr = np.ascontiguousarray(arr, dtype=np.float32)
    return arr, 0


def _operand_for_core(arr, out):
    """(view, transposed, ld, batch stride) of x or weight, copied only when it has no unit-stride axis,
    an unusable batch stride, or shares memory with out."""
    if out is not None and np.may_share_memory(arr, out):
        arr = arr.copy()
    view, flipped, ld = resolve_operand(arr)
    stride = batch_stride(view)
    if stride is None:
        view = np.ascontiguousarray(view)
        stride = batch_stride(view)
    return view, flipped, ld, stride


def matmul_per_token(x, weight, deq_scale, per_token_scale, *, out_dtype=None, transpose_a=False,
                     transpose_b=False, bias=None, out=None):
    """Per-token quantized int8 matmul (W8A8) with float16, bfloat16 or float32 output, fused in one call.

    Computes, exactly so::

        acc = sum_k x[b, i, k] * weight[b, k, j]                  (the exact integer sum, any K)
        out[b, i, j] = float32(float32(acc) * deq_scale[j]) * per_token_scale[b, i] (+ bias[j])

    in float32 arithmetic with one rounding per operation (no fused multiply-add), then rounded to nearest
    even into ``out_dtype`` (ONNX Runtime's MatMulIntegerToFloat; Ascend ATB's PER_TOKEN linear). No M x N
    temporary is made: the scales, bias and conversion run in the int8 kernel's epilogue.

    Parameters
    ----------
    x : ndarray of int8
        (m, k), or (k, m) with ``transpose_a``; batched (batch, m, k).
    weight : ndarray of int8 or PackedWeight
        (k, n), or (n, k) with ``transpose_b``; batched like x or 2-D and shared by the batch; or a
        :func:`pack_weight` result (then ``transpose_b`` stays False).
    deq_scale : ndarray of float32 or list
        (n,): one scale per output column (channel).
    per_token_scale : ndarray of float32 or list
        (m,), or (batch, m) for a batched x: one scale per row (token).
    out_dtype : {"float16", "bfloat16", "float32"} or dtype, optional, keyword-only
        Default: ``out``'s dtype, else float16. bfloat16 is ``ml_dtypes.bfloat16``.
    transpose_a, transpose_b : bool, keyword-only
    bias : ndarray of float32, optional, keyword-only
        (n,), added after scaling.
    out : ndarray, optional, keyword-only
        (m, n) or (batch, m, n) of ``out_dtype``, any strides; written in place and returned.

    Returns
    -------
    ndarray
        (m, n) or (batch, m, n) of ``out_dtype``.

    Raises
    ------
    TypeError
        Operands that are not int8, scales that are arrays but not float32, an unknown ``out_dtype``.
    ValueError
        Shapes that do not fit (naming the argument), or an ``out`` of the wrong shape or dtype; nothing is
        written.

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import quant
    >>> x = np.int8([[1, 2], [3, 4]]); w = np.int8([[1, 2, 3], [4, 5, 6]])
    >>> quant.matmul_per_token(x, w, np.float32([1, 2, 3]), np.float32([1, 2]))
    array([[  9.,  24.,  45.],
           [ 38., 104., 198.]], dtype=float16)
    >>> bias = np.float32([0, 0, 0.5])
    >>> quant.matmul_per_token(x, w, [1, 2, 3], [1, 2], out_dtype="float32", bias=bias)
    array([[  9. ,  24. ,  45.5],
           [ 38. , 104. , 198.5]], dtype=float32)
    """
    name = _out_dtype_name(out_dtype, out)
    x = _int8_stack(x, "x")
    packed = None
    if isinstance(weight, PackedWeight):
        if _args.flag(transpose_b, "transpose_b", _WHO):
            raise ValueError(f"{_WHO}: transpose_b must be False with a packed weight (pack_weight took it)")
        packed = weight if weight.data is not None and weight.arch == _core.get_arch() else None
        weight, transpose_b = weight.weight, weight.transpose_b
    weight = _int8_stack(weight, "weight")
    transpose_a = _args.flag(transpose_a, "transpose_a", _WHO)
    transpose_b = _args.flag(transpose_b, "transpose_b", _WHO)
    m, k = (x.shape[-1], x.shape[-2]) if transpose_a else x.shape[-2:]
    kw, n = (weight.shape[-1], weight.shape[-2]) if transpose_b else weight.shape[-2:]
    if kw != k:
        raise ValueError(f"{_WHO}: weight has k={kw} (shape {weight.shape}, transpose_b={bool(transpose_b)}) "
                         f"but x has k={k} (shape {x.shape}, transpose_a={bool(transpose_a)})")
    if weight.ndim == 3 and x.ndim == 2:
        raise ValueError(f"{_WHO}: weight is batched (shape {weight.shape}) but x is 2-D (shape {x.shape})")
    batched = x.ndim == 3
    batch = x.shape[0] if batched else 1
    if weight.ndim == 3 and weight.shape[0] != batch:
        raise ValueError(f"{_WHO}: weight has batch {weight.shape[0]} but x has batch {batch}")
    deq_scale = _float32_vector(deq_scale, "deq_scale", [(n,)])
    per_token_scale = _float32_vector(per_token_scale, "per_token_scale",
                                      [(m,), (batch, m)] if batched else [(m,)])
    if bias is not None:
        bias = _float32_vector(bias, "bias", [(n,)])
    shape = (batch, m, n) if batched else (m, n)
    dtype = _numpy_dtype(name)
    if out is None:
        out = np.empty(shape, dtype)
    else:
        _check_out(out, "out", shape, dtype, _WHO, dtype_error=ValueError)
    if out.size == 0:
        return out

    if packed is not None and _core.s8s8_reads_weight_in_place(
            "T" if transpose_b != resolve_operand(weight)[1] else "N", m, k):
        packed = None  # few rows: this path reads the weight in place, faster than its packed panels
    x_view, x_flip, lda, stride_a = _operand_for_core(x, out)
    scales = []
    for arr in (deq_scale, per_token_scale, bias):
        if arr is not None and np.may_share_memory(arr, out):
            arr = arr.copy()
        scales.append(arr)
    deq_scale, per_token_scale, bias = scales
    deq_scale, _ = _rows_for_core(deq_scale)
    per_token_scale, stride_token_scale = _rows_for_core(per_token_scale)
    if bias is not None:
        bias, _ = _rows_for_core(bias)

    target = resolve_output(out, reads_c=False)
    c_view, stride_c = target.target, batch_stride(target.target)
    copy_back = target.copy_back
    # a batch axis the core cannot step along, or (packed weight) columns contiguous: a temporary
    if stride_c is None or (batch > 1 and stride_c == 0) or (packed is not None and target.transposed):
        c_view, copy_back = np.empty(shape, out.dtype.newbyteorder("=")), out
        target = resolve_output(c_view, reads_c=False)
        stride_c = batch_stride(c_view)
    c_buffer = c_view.view(np.uint16) if name == "bfloat16" else c_view
    if packed is not None:
        try:
            _core.gemm_s8s8_per_token_packed("T" if transpose_a != x_flip else "N", name, batch, m, n, k, x_view,
                                             lda, stride_a, packed.data, deq_scale, per_token_scale,
                                             stride_token_scale, bias, c_buffer, target.ld, stride_c)
        except ValueError:
            # The core refuses panels of another kernel path before it writes anything: another thread
            # changed the path (set_arch / use_arch) after the check above. Read the weight instead (an
            # argument error of any other kind is raised again by that call).
            packed = None
    if packed is None:
        w_view, w_flip, ldb, stride_b = _operand_for_core(weight, out)
        _core.gemm_s8s8_per_token("T" if transpose_a != x_flip else "N", "T" if transpose_b != w_flip else "N",
                                  "C" if target.transposed else "R", name, batch, m, n, k,
                                  x_view, lda, stride_a, w_view, ldb, stride_b, deq_scale, per_token_scale,
                                  stride_token_scale, bias, c_buffer, target.ld, stride_c)
    if copy_back is not None:
        copy_back[...] = c_view
    return out
