"""gemmkit.quant.quantize_per_token, quantize_weight and Int8Linear: dynamic W8A8 linear layers (float
activations quantized per token in one C pass, then the exact int8 GEMM of matmul_per_token with the
per-token x per-channel dequantization and the bias in its epilogue).

The quantizer's formula, for each token (the values along `axis`), in IEEE float32 arithmetic with one
rounding per operation, on every kernel path bit for bit (include/gemmkit.h, gemmkit_quantize_per_token):

    x'    = float32(x)                  (float16 / bfloat16 widened exactly)
    x'    = x' / smooth                 (only with a SmoothQuant smoothing vector)
    scale = max |x'| / 127              (float32 division)
    q     = round_half_even(min(max(x' / scale, -127), 127))   (int8, symmetric: -128 never occurs)

A token of zeros (or whose max |x'| / 127 underflows to 0) gets scale 0 and q = 0: its layer output is the
bias. A token with a NaN or an infinity (in x, or made by the smoothing) gets scale NaN and q = 0: its layer
output row is NaN, as the float layer's would be NaN or infinite. Nothing is raised for either.

Per-token vs per-tensor activation scales (docs/w8a8.md has the measured table): LLM activations have a few
outlier channels (values 10-100x the rest, in the same channels for every token) and tokens of very
different magnitude. One scale per tensor is set by the largest value anywhere, so every token whose own
maximum is smaller loses resolution in proportion; one scale per token only pays for outliers inside the
token. Outlier channels hurt both (a token's other channels get few levels); SmoothQuant's vector `smooth`
moves that range into the weight (x / s, W * s), which per-token scales then quantize well.
"""
import numpy as np

from . import _core, _fastpaths
from ._matmul_per_token import OUT_DTYPES, PackedWeight, _numpy_dtype, matmul_per_token, pack_weight

_IN_DTYPES = ("float32", "float16", "bfloat16")


def _dtype_name(arr):
    name = arr.dtype.name
    return name if name in _IN_DTYPES else None


def _float_input(value, name, who):
    """value as a float32 / float16 / bfloat16 ndarray (a non-native byte order made native)."""
    arr = value if isinstance(value, np.ndarray) else None
    if arr is None:
        if isinstance(value, (list, tuple)) or np.isscalar(value):
            arr = np.asarray(value, dtype=np.float32)
        else:
            raise TypeError(f"{who}: {name} must be a NumPy array of float32, float16 or bfloat16, "
                            f"got {type(value).__name__}")
    if _dtype_name(arr) is None:
        raise TypeError(f"{who}: {name} must be float32, float16 or bfloat16 (ml_dtypes.bfloat16), got dtype "
                        f"{arr.dtype} (convert it, e.g. {name}.astype(np.float32))")
    if not arr.dtype.isnative:
        arr = arr.astype(arr.dtype.newbyteorder("="))
    return arr


def _smooth_vector(smooth, k, who):
    if smooth is None:
        return None
    if isinstance(smooth, np.ndarray):
        if smooth.dtype != np.float32:
            raise TypeError(f"{who}: smooth must be float32, got dtype {smooth.dtype}")
        s = smooth
    else:
        try:
            s = np.asarray(smooth, dtype=np.float32)
        except (TypeError, ValueError) as e:
            raise TypeError(f"{who}: smooth must be a float32 array or a sequence of numbers ({e})") from None
    if s.shape != (k,):
        raise ValueError(f"{who}: smooth has shape {s.shape}, expected ({k},) (one value per input feature)")
    if not (np.all(np.isfinite(s)) and np.all(s > 0)):
        raise ValueError(f"{who}: smooth must be finite and > 0 in every entry")
    if not (s.flags.c_contiguous and s.dtype.isnative):
        s = np.ascontiguousarray(s, dtype=np.float32)
    return s


def _as_rows(arr):
    """arr (..., K) as (M, K) rows with unit stride along K and one row stride, without a copy when its
    layout allows, else a C-contiguous copy; returns (rows, ld)."""
    k = arr.shape[-1]
    m = int(np.prod(arr.shape[:-1], dtype=np.int64))
    isz = arr.itemsize
    lead = [(n, s) for n, s in zip(arr.shape[:-1], arr.strides[:-1]) if n != 1]
    ok = (k <= 1 or arr.strides[-1] == isz) and arr.flags.aligned
    for (n0, s0), (n1, s1) in zip(lead, lead[1:]):
        ok = ok and s0 == s1 * n1
    if ok and lead:
        s_row = lead[-1][1]
        ok = s_row > 0 and s_row % isz == 0 and (m <= 1 or s_row // isz >= k)
    if not ok:
        arr = np.ascontiguousarray(arr)
    rows = arr.reshape(m, k)
    ld = rows.strides[0] // isz if m > 1 else max(1, k)
    return rows, ld


_MODES = {"divide": 0, "multiply": 1}
_OUT_CODES = {"float32": 1, "float16": 2, "bfloat16": 3}


def _quantize(x, axis, smooth, mode, out, scale_out, who, smooth_checked=False):
    if isinstance(x, np.ndarray) and x.ndim >= 1 and type(axis) is int and (axis == -1 or axis == x.ndim - 1):
        s = smooth if smooth_checked else _smooth_vector(smooth, x.shape[-1], who)
        # a C-contiguous float x (and plain outputs): straight to the core
        done = _fastpaths.quantize_fast(x, s, _MODES[mode], out, scale_out)
        if done is not None:
            return done
    x = _float_input(x, "x", who)
    if x.ndim == 0:
        raise ValueError(f"{who}: x must have at least 1 dimension (the token axis), got a 0-d array")
    if isinstance(axis, (bool, np.bool_)) or not isinstance(axis, (int, np.integer)):
        raise TypeError(f"{who}: axis must be an int, got {type(axis).__name__}")
    if not -x.ndim <= axis < x.ndim:
        raise ValueError(f"{who}: axis {axis} is out of range for x with {x.ndim} dimensions")
    axis = int(axis) % x.ndim
    k = x.shape[axis]
    s = _smooth_vector(smooth, k, who)
    scale_shape = x.shape[:axis] + x.shape[axis + 1:]
    if out is not None:
        if not isinstance(out, np.ndarray):
            raise TypeError(f"{who}: out must be a NumPy array, got {type(out).__name__}")
        if out.dtype != np.int8:
            raise TypeError(f"{who}: out must be int8, got dtype {out.dtype}")
        if out.shape != x.shape:
            raise ValueError(f"{who}: out has shape {out.shape}, expected x's shape {x.shape}")
        if not out.flags.writeable:
            raise ValueError(f"{who}: out is read-only")
    if scale_out is not None:
        if not isinstance(scale_out, np.ndarray):
            raise TypeError(f"{who}: scale_out must be a NumPy array, got {type(scale_out).__name__}")
        if scale_out.dtype != np.float32:
            raise TypeError(f"{who}: scale_out must be float32, got dtype {scale_out.dtype}")
        if scale_out.shape != scale_shape:
            raise ValueError(f"{who}: scale_out has shape {scale_out.shape}, expected {scale_shape}")
        if not scale_out.flags.writeable:
            raise ValueError(f"{who}: scale_out is read-only")
        if out is not None and np.may_share_memory(out, scale_out):
            raise ValueError(f"{who}: out and scale_out overlap")
    for o in (out, scale_out):
        if o is not None and np.may_share_memory(o, x):
            x = x.copy()
    name = _dtype_name(x)
    rows, ldx = _as_rows(np.moveaxis(x, axis, -1))
    if name != "float32":
        rows = rows.view(np.uint16)
    m = rows.shape[0]
    q = None
    if out is not None:
        q_rows, ldq = _as_rows(np.moveaxis(out, axis, -1))
        if np.may_share_memory(q_rows, out):
            q = out
    if q is None:
        q_full = np.empty(x.shape[:axis] + x.shape[axis + 1:] + (k,), np.int8)
        q_rows, ldq = q_full.reshape(m, k), max(1, k)
    sc = scale_out if scale_out is not None and scale_out.flags.c_contiguous else np.empty(scale_shape, np.float32)
    _core.quantize_per_token_rows(name, m, k, rows, ldx, s, mode, q_rows, ldq, sc.reshape(m))
    if q is None:
        q = np.moveaxis(q_full, -1, axis)
        if out is not None:
            out[...] = q
            q = out
    if scale_out is not None and sc is not scale_out:
        scale_out[...] = sc
        sc = scale_out
    return q, sc


def quantize_per_token(x, *, axis=-1, smooth=None, out=None, scale_out=None):
    """Symmetric per-token int8 quantization of float activations, in one C pass per token.

    With IEEE float32 arithmetic and one rounding per operation::

        x' = float32(x) (/ smooth);  scale = max|x'| / 127;  q = round_half_even(clamp(x' / scale, -127, 127))

    The NumPy reference ``s = np.abs(x).max(axis, keepdims=True) / np.float32(127);
    np.clip(np.round(x / s), -127, 127)`` gives the same bytes, on every kernel path.

    Parameters
    ----------
    x : ndarray
        float32, float16 or bfloat16 (``ml_dtypes``), any shape; a token is the 1-D slice along ``axis``.
    axis : int, keyword-only
        The axis of a token's values (default the last).
    smooth : array_like or None, keyword-only
        float32 (K,) > 0, the SmoothQuant vector: x is divided by it before quantizing.
    out, scale_out : ndarray, optional, keyword-only
        Arrays to write: int8 of x's shape, float32 of the scale's shape.

    Returns
    -------
    q : ndarray of int8
        x's shape.
    scale : ndarray of float32
        x's shape without ``axis``. A token of zeros gets scale 0 and q = 0; a token with NaN or Inf gets
        scale NaN and q = 0 (no error).

    Raises
    ------
    TypeError, ValueError
        Naming the argument; ``out`` and ``scale_out`` are left untouched.

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import quant
    >>> q, s = quant.quantize_per_token(np.float32([[0.5, -1.0, 0.25], [0, 0, 0]]))
    >>> q
    array([[  64, -127,   32],
           [   0,    0,    0]], dtype=int8)
    >>> s
    array([0.00787402, 0.        ], dtype=float32)
    """
    return _quantize(x, axis, smooth, "divide", out, scale_out, "quantize_per_token")


def quantize_weight(weight, *, smooth=None, transpose=False):
    """Per-output-channel symmetric int8 quantization of a float weight.

    Each output channel (a row of ``weight_q``) with the quantizer's formula: w' = float32(w) * smooth (the
    SmoothQuant vector folded in), scale = max|w'| / 127, q = round_half_even(clamp(w' / scale, -127, 127)).

    Parameters
    ----------
    weight : ndarray
        (out_features, in_features), or (in_features, out_features) with ``transpose``; float32, float16,
        bfloat16, or float64 (rounded to float32 first).
    smooth : array_like or None, keyword-only
        float32 (in_features,) > 0, multiplied into the weight's columns.
    transpose : bool, keyword-only

    Returns
    -------
    weight_q : ndarray of int8
        (out_features, in_features).
    weight_scale : ndarray of float32
        (out_features,).

    Raises
    ------
    TypeError, ValueError
        A weight that is not a 2-D float array, a bad ``smooth`` or ``transpose``.

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import quant
    >>> wq, ws = quant.quantize_weight(np.float32([[1.0, -2.0], [0.5, 0.25]]))
    >>> wq
    array([[  64, -127],
           [ 127,   64]], dtype=int8)
    >>> ws
    array([0.01574803, 0.00393701], dtype=float32)
    """
    who = "quantize_weight"
    if isinstance(weight, np.ndarray) and weight.dtype == np.float64:
        weight = weight.astype(np.float32)
    w = _float_input(weight, "weight", who)
    if w.ndim != 2:
        raise ValueError(f"{who}: weight must be 2-D, got shape {w.shape}")
    if not isinstance(transpose, (bool, np.bool_)):
        raise TypeError(f"{who}: transpose must be a bool, got {type(transpose).__name__}")
    q, s = _quantize(w, 0 if transpose else 1, smooth, "multiply", None, None, who)
    return (np.ascontiguousarray(q.T) if transpose else q), s


_ACT_SCALES = ("per_token", "per_tensor")


class Int8Linear:
    """A dynamic W8A8 linear layer: y = x @ W^T + bias computed as

        q, s = quantize_per_token(x, smooth=smooth)          (per token, in C)
        y[i, j] = float32(float32(acc[i, j]) * weight_scale[j]) * s[i] (+ bias[j])

    rounded to nearest even into out_dtype, acc the exact int32 sum of q[i, :] * weight_q[j, :]
    (matmul_per_token's epilogue). The same input gives the same bytes on every kernel path and thread
    count. x: float32 / float16 / bfloat16 of shape (..., in_features), 2-D or batched 3-D (any leading
    shape); output (..., out_features) in out_dtype ("float32", "float16", "bfloat16").

    Build it with Int8Linear.from_float(weight, bias, smooth=...) or from an already quantized weight
    (quantize_weight). It holds the int8 weight and its packed form (pack_weight) for the kernel path in
    use; a pickle stores the int8 weight and scales, and the packed form is made again on load, for the
    CPU it lands on. act_scale "per_tensor" (one scale for the whole input, for comparison: see
    quantization_error) quantizes the input as one token.

    Parameters
    ----------
    weight_q : ndarray of int8
        (out_features, in_features), as :func:`quantize_weight` returns it.
    weight_scale : array_like
        float32 (out_features,).
    bias : array_like or None
        float32 (out_features,).
    smooth : array_like or None, keyword-only
        float32 (in_features,) > 0: the SmoothQuant vector the activations are divided by.
    out_dtype : {"float32", "float16", "bfloat16"}, keyword-only
    act_scale : {"per_token", "per_tensor"}, keyword-only

    Raises
    ------
    TypeError
        ``weight_q`` not int8, a scale, bias or smooth vector not float32, an unknown ``out_dtype``.
    ValueError
        ``weight_q`` not 2-D, a vector of the wrong length, ``smooth`` not > 0, an unknown ``act_scale``.

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import quant
    >>> lin = quant.Int8Linear.from_float(np.float32([[1, 2, 3], [4, 5, 6]]), np.float32([0.5, -0.5]))
    >>> lin
    Int8Linear(in_features=3, out_features=2, bias=True, smooth=False, out_dtype='float32', act_scale='per_token')
    >>> lin(np.float32([[1, 0, -1]]))                  # the float layer gives [-1.5, -2.5]
    array([[-1.507874, -2.484252]], dtype=float32)
    """

    def __init__(self, weight_q, weight_scale, bias=None, *, smooth=None, out_dtype="float32",
                 act_scale="per_token"):
        who = "Int8Linear"
        wq = weight_q if isinstance(weight_q, np.ndarray) else np.asarray(weight_q)
        if wq.dtype != np.int8:
            raise TypeError(f"{who}: weight_q must be int8, got dtype {wq.dtype}")
        if wq.ndim != 2:
            raise ValueError(f"{who}: weight_q must be 2-D (out_features, in_features), got shape {wq.shape}")
        n, k = wq.shape
        self.weight_q = np.ascontiguousarray(wq)
        self.weight_q.flags.writeable = False
        self.weight_scale = self._vector(weight_scale, n, "weight_scale")
        self.bias = None if bias is None else self._vector(bias, n, "bias")
        self.smooth = _smooth_vector(smooth, k, who)
        if self.smooth is not None:
            self.smooth = self.smooth.copy()
            self.smooth.flags.writeable = False
        if out_dtype not in OUT_DTYPES:
            name = getattr(np.dtype(out_dtype), "name", None) if not isinstance(out_dtype, str) else out_dtype
            if name not in OUT_DTYPES:
                raise TypeError(f"{who}: out_dtype must be one of {', '.join(OUT_DTYPES)}, got {out_dtype!r}")
            out_dtype = name
        self.out_dtype = out_dtype
        if act_scale not in _ACT_SCALES:
            raise ValueError(f"{who}: act_scale must be 'per_token' or 'per_tensor', got {act_scale!r}")
        self.act_scale = act_scale
        self._packed = pack_weight(self.weight_q, transpose_b=True)

    @staticmethod
    def _vector(v, n, name):
        try:
            arr = np.array(v, dtype=np.float32)  # a private copy
        except (TypeError, ValueError) as e:
            raise TypeError(f"Int8Linear: {name} must be a float32 array or a sequence of numbers ({e})") from None
        if isinstance(v, np.ndarray) and v.dtype != np.float32:
            raise TypeError(f"Int8Linear: {name} must be float32, got dtype {v.dtype}")
        if arr.shape != (n,):
            raise ValueError(f"Int8Linear: {name} has shape {arr.shape}, expected ({n},) (one per output feature)")
        arr.flags.writeable = False
        return arr

    @classmethod
    def from_float(cls, weight, bias=None, *, smooth=None, transpose=False, out_dtype="float32",
                   act_scale="per_token"):
        """The layer of a float weight, quantized per output channel (:func:`quantize_weight`).

        Parameters
        ----------
        weight : ndarray of float32, float16 or bfloat16
            (out_features, in_features), or its transpose with ``transpose=True``.
        bias : array_like of float32, optional
            (out_features,).
        smooth : array_like of float32, optional, keyword-only
            (in_features,) > 0: folded into the weight, and divided out of the activations inside the
            quantizer (SmoothQuant).
        transpose : bool, keyword-only
            ``weight`` is (in_features, out_features).
        out_dtype : {"float32", "float16", "bfloat16"}, keyword-only
            The output's dtype.
        act_scale : {"per_token", "per_tensor"}, keyword-only
            One activation scale per token (row of x), or one for the whole input.

        Returns
        -------
        Int8Linear

        Raises
        ------
        TypeError
            ``weight`` not a float array, an unknown ``out_dtype``.
        ValueError
            ``weight`` not 2-D, ``bias`` or ``smooth`` of the wrong length, ``smooth`` not > 0.

        Examples
        --------
        >>> import numpy as np
        >>> from gemmkit import quant
        >>> w = np.float32([[1, 2, 3], [4, 5, 6]])          # (out_features, in_features)
        >>> quant.Int8Linear.from_float(w, out_dtype="float16")
        Int8Linear(in_features=3, out_features=2, bias=False, smooth=False, out_dtype='float16', act_scale='per_token')
        """
        wq, ws = quantize_weight(weight, smooth=smooth, transpose=transpose)
        if bias is not None and isinstance(bias, np.ndarray) and bias.dtype != np.float32:
            bias = bias.astype(np.float32)
        return cls(wq, ws, bias, smooth=smooth, out_dtype=out_dtype, act_scale=act_scale)

    @property
    def in_features(self):
        return self.weight_q.shape[1]

    @property
    def out_features(self):
        return self.weight_q.shape[0]

    def __repr__(self):
        return (f"Int8Linear(in_features={self.in_features}, out_features={self.out_features}, "
                f"bias={self.bias is not None}, smooth={self.smooth is not None}, out_dtype={self.out_dtype!r}, "
                f"act_scale={self.act_scale!r})")

    def __getstate__(self):
        return {"weight_q": np.array(self.weight_q), "weight_scale": np.array(self.weight_scale),
                "bias": None if self.bias is None else np.array(self.bias),
                "smooth": None if self.smooth is None else np.array(self.smooth),
                "out_dtype": self.out_dtype, "act_scale": self.act_scale}

    def __setstate__(self, state):
        self.__init__(state["weight_q"], state["weight_scale"], state["bias"], smooth=state["smooth"],
                      out_dtype=state["out_dtype"], act_scale=state["act_scale"])

    def quantize_input(self, x):
        """The layer's int8 activations: x's tokens quantized as the layer quantizes them.

        Parameters
        ----------
        x : ndarray of float32, float16 or bfloat16
            (..., in_features).

        Returns
        -------
        q : ndarray of int8
            (m, in_features), m the product of x's leading axes.
        scale : ndarray of float32
            (m,): token i is about ``q[i] * scale[i]`` (times ``smooth``).

        Raises
        ------
        TypeError
            ``x`` not float32, float16 or bfloat16.
        ValueError
            ``x``'s last axis is not ``in_features``.

        Examples
        --------
        >>> import numpy as np
        >>> from gemmkit import quant
        >>> lin = quant.Int8Linear.from_float(np.float32([[1, 2, 3], [4, 5, 6]]))
        >>> q, scale = lin.quantize_input(np.float32([[1, 0, -1], [2, 4, 8]]))
        >>> q
        array([[ 127,    0, -127],
               [  32,   64,  127]], dtype=int8)
        """
        who = "Int8Linear"
        x = _float_input(x, "x", who)
        if x.ndim < 1 or x.shape[-1] != self.in_features:
            raise ValueError(f"{who}: x has shape {x.shape}, expected (..., {self.in_features})")
        m = int(np.prod(x.shape[:-1], dtype=np.int64))
        if self.act_scale == "per_token":
            q, s = _quantize(x, -1, self.smooth, "divide", None, None, who, smooth_checked=True)
            return q.reshape(m, self.in_features), s.reshape(m)
        flat = np.ascontiguousarray(x).reshape(1, -1)
        smooth = None if self.smooth is None else np.tile(self.smooth, m)
        q, s = _quantize(flat, -1, smooth, "divide", None, None, who)
        return q.reshape(m, self.in_features), np.full(m, s[0], np.float32)

    def __call__(self, x, *, out_dtype=None, out=None):
        """The layer on x: ``x @ W^T + bias`` through the per-token int8 path.

        Parameters
        ----------
        x : ndarray of float32, float16 or bfloat16
            (..., in_features).
        out_dtype : {"float32", "float16", "bfloat16"}, optional, keyword-only
            Default: the layer's, or ``out``'s dtype.
        out : ndarray, optional, keyword-only
            (..., out_features) of that dtype, written and returned.

        Returns
        -------
        ndarray
            (..., out_features) in ``out_dtype``; the same bytes on every kernel path and thread count.

        Raises
        ------
        TypeError
            ``x`` not float32, float16 or bfloat16, ``out`` not an array, an unknown ``out_dtype``.
        ValueError
            ``x``'s last axis is not ``in_features``, ``out`` of the wrong shape.

        Examples
        --------
        >>> import numpy as np
        >>> from gemmkit import quant
        >>> lin = quant.Int8Linear.from_float(np.float32([[1, 2, 3], [4, 5, 6]]), np.float32([0.5, -0.5]))
        >>> lin(np.float32([[1, 0, -1]]), out_dtype="float16")
        array([[-1.508, -2.484]], dtype=float16)
        """
        name = out_dtype if out_dtype is not None else (self.out_dtype if out is None else None)
        if (self.act_scale == "per_token" and type(x) is np.ndarray and x.ndim >= 1
                and x.shape[-1] == self.in_features):
            # a C-contiguous float x: quantize and GEMM in one core call (int8_linear_fast), else the general path
            fast_out = out
            if out is None and name in _OUT_CODES:
                fast_out = np.empty(x.shape[:-1] + (self.out_features,), _numpy_dtype(name))
            if (isinstance(fast_out, np.ndarray) and fast_out.dtype.name in _OUT_CODES
                    and (name is None or fast_out.dtype.name == name)
                    and fast_out.shape == x.shape[:-1] + (self.out_features,) and fast_out.flags.c_contiguous
                    and fast_out.flags.writeable and fast_out.dtype.isnative and not np.may_share_memory(fast_out, x)):
                packed = self._packed.data if self._packed.arch == _core.get_arch() else None
                done = _fastpaths.int8_linear_fast(x, self.smooth, self.out_features, self.weight_q, packed,
                                                   self.weight_scale, self.bias, fast_out,
                                                   _OUT_CODES[fast_out.dtype.name])
                if done is not None:
                    return done
        q, s = self.quantize_input(x)
        lead = np.shape(x)[:-1]
        shape = lead + (self.out_features,)
        if out is not None:
            if not isinstance(out, np.ndarray):
                raise TypeError(f"Int8Linear: out must be a NumPy array, got {type(out).__name__}")
            if out.shape != shape:
                raise ValueError(f"Int8Linear: out has shape {out.shape}, expected {shape}")
            o2 = out.reshape(q.shape[0], self.out_features)
            if np.may_share_memory(o2, out):
                matmul_per_token(q, self._packed, self.weight_scale, s, bias=self.bias, out_dtype=name, out=o2)
            else:
                out[...] = matmul_per_token(q, self._packed, self.weight_scale, s, bias=self.bias,
                                            out_dtype=name or out.dtype).reshape(shape)
            return out
        y = matmul_per_token(q, self._packed, self.weight_scale, s, bias=self.bias, out_dtype=name)
        return y.reshape(shape)


def quantization_error(layer, x, weight, bias=None, *, transpose=False):
    """How far an :class:`Int8Linear` layer's output is from the float layer x @ weight^T + bias.

    The errors are relative to the output's scale, not per element (which blows up where the reference is
    near 0); the reference is computed in float64.

    Parameters
    ----------
    layer : Int8Linear
    x : ndarray
        Activations, as the layer takes them.
    weight, bias : array_like
        The float weight and bias as given to :meth:`Int8Linear.from_float`.
    transpose : bool, keyword-only
        ``weight`` is (in_features, out_features).

    Returns
    -------
    dict
        ``{"max_rel_error": max|y - ref| / max|ref|, "mean_rel_error": mean|y - ref| / mean|ref|}``.

    Raises
    ------
    TypeError, ValueError
        As the layer's call on ``x``; ``ValueError`` where ``weight`` or ``bias`` does not fit the layer.

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import quant
    >>> w, b = np.float32([[1, 2, 3], [4, 5, 6]]), np.float32([0.5, -0.5])
    >>> err = quant.quantization_error(quant.Int8Linear.from_float(w, b), np.float32([[1, 0, -1]]), w, b)
    >>> err["max_rel_error"] < 0.01
    True
    """
    y = layer(x, out_dtype="float32").astype(np.float64)
    w = np.asarray(weight, dtype=np.float64)
    if transpose:
        w = w.T
    ref = np.asarray(x, dtype=np.float64) @ w.T
    if bias is not None:
        ref = ref + np.asarray(bias, dtype=np.float64)
    err = np.abs(y - ref)
    big, mean = np.abs(ref).max(initial=0.0), np.abs(ref).mean() if ref.size else 0.0
    return {"max_rel_error": float(err.max(initial=0.0) / big) if big else 0.0,
            "mean_rel_error": float(err.mean() / mean) if mean else 0.0}


__all__ = ["quantize_per_token", "quantize_weight", "Int8Linear", "quantization_error", "PackedWeight"]
