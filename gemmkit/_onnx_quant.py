"""gemmkit.onnx's quantized matmuls of ONNX Runtime's com.microsoft domain, MatMulIntegerToFloat and
DynamicQuantizeMatMul, as functions and as onnx.reference OpRuns (ReferenceEvaluator(model, new_ops=[...])).

Semantics as ONNX Runtime's contrib ops (checked against onnxruntime itself in tests/frontends/test_onnx_w8a8.py):

    MatMulIntegerToFloat(A, B, a_scale, b_scale, a_zero_point?, b_zero_point?, bias?):
        Y[i, j] = float32(sum_k (A[i, k] - a_zp) * (B[k, j] - b_zp)) * (a_scale * b_scale[j]) (+ bias[j])
    DynamicQuantizeMatMul(A, B, b_scale, b_zero_point?, bias?): A (float32) quantized per tensor to uint8 as
        DynamicQuantizeLinear does (scale = (max(0, max A) - min(0, min A)) / 255, zero point = round(-min /
        scale), q = saturate(round(A / scale) + zero point), rounding half to even), then the above.

A int8 or uint8 (..., M, K), B int8 or uint8 (K, N) shared by A's leading axes; a_scale and the zero points
one value (a per-column b_zero_point only when all its values are equal), b_scale one value or (N,); Y float32.
The integer sum is exact (gemmkit's int8 GEMM, a uint8 B flipped to int8 with its zero point moved by 128),
its scaling is the per-token epilogue of the C core; DynamicQuantizeMatMul's per-tensor uint8 quantization
of A is the one step done with NumPy here (a min, a max and one division per element).
"""
import numpy as np

from . import _core

_WHO_MITF = "MatMulIntegerToFloat"
_WHO_DQMM = "DynamicQuantizeMatMul"


def _int_tensor(x, name, who):
    arr = np.asarray(x)
    if arr.dtype not in (np.int8, np.uint8):
        raise TypeError(f"{who}: {name} must be int8 or uint8, got dtype {arr.dtype}")
    return arr


def _one_value(x, name, who, dtype=None):
    if x is None:
        return None
    arr = np.asarray(x)
    if dtype is not None and arr.dtype != dtype:
        raise TypeError(f"{who}: {name} must be {np.dtype(dtype).name}, got dtype {arr.dtype}")
    if arr.size != 1:
        if arr.size > 1 and arr.ndim == 1 and (arr == arr.flat[0]).all():
            return arr.flat[0]
        raise ValueError(f"{who}: {name} must hold one value (per-tensor), got shape {arr.shape}")
    return arr.reshape(()).item() if dtype is None else arr.reshape(())[()]


def matmul_integer_to_float(A, B, a_scale, b_scale, a_zero_point=None, b_zero_point=None, bias=None):
    """ONNX Runtime's com.microsoft MatMulIntegerToFloat: an exact int8 product scaled to float32.

    ``Y[i, j] = float32(sum_k (A[i, k] - a_zero_point) * (B[k, j] - b_zero_point)) * (a_scale *
    b_scale[j]) (+ bias[j])``, the integer sum exact, as ONNX Runtime computes it.

    Parameters
    ----------
    A : array_like of int8 or uint8
        (..., M, K): the activations; leading axes share ``B``.
    B : array_like of int8 or uint8
        (K, N): the weight.
    a_scale : float32 scalar
        ``A``'s scale (one value).
    b_scale : array_like of float32
        One value, or (N,): one per column of ``B``.
    a_zero_point, b_zero_point : scalar of A's / B's dtype, optional
        One value each (a per-column ``b_zero_point`` only when all its values are equal); default 0.
    bias : array_like of float32, optional
        (N,), added after the scaling.

    Returns
    -------
    ndarray of float32
        (..., M, N).

    Raises
    ------
    TypeError
        ``A`` or ``B`` not int8 / uint8, ``a_scale`` not one float32 value, a zero point not of its
        tensor's dtype.
    ValueError
        Shapes that do not chain, a ``b_scale`` or ``bias`` of the wrong shape or dtype, a zero point of
        several different values.

    See Also
    --------
    dynamic_quantize_matmul : the same with ``A`` float32, quantized per tensor first.

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import onnx as gk_onnx
    >>> A, B = np.uint8([[10, 20], [30, 40]]), np.int8([[1, -2], [3, 4]])
    >>> gk_onnx.matmul_integer_to_float(A, B, np.float32(0.5), np.float32([1, 2]), np.uint8(10))
    array([[15., 40.],
           [55., 80.]], dtype=float32)
    """
    who = _WHO_MITF
    A = _int_tensor(A, "A", who)
    B = _int_tensor(B, "B", who)
    if A.ndim < 2 or B.ndim != 2:
        raise ValueError(f"{who}: A must be (..., M, K) and B (K, N), got shapes {A.shape} and {B.shape}")
    m_lead, k = A.shape[:-1], A.shape[-1]
    if B.shape[0] != k:
        raise ValueError(f"{who}: A has K={k} but B has {B.shape[0]} rows")
    n = B.shape[1]
    a_s = np.asarray(a_scale)
    if a_s.dtype != np.float32 or a_s.size != 1:
        raise TypeError(f"{who}: a_scale must be one float32 value, got dtype {a_s.dtype}, shape {a_s.shape}")
    b_s = np.asarray(b_scale)
    if b_s.dtype != np.float32 or not (b_s.size == 1 or b_s.shape == (n,)):
        raise ValueError(f"{who}: b_scale must be float32 of one value or ({n},), got {b_s.dtype} {b_s.shape}")
    azp = _one_value(a_zero_point, "a_zero_point", who, A.dtype)
    bzp = _one_value(b_zero_point, "b_zero_point", who, B.dtype)
    azp = 0 if azp is None else int(azp)
    bzp = 0 if bzp is None else int(bzp)
    if bias is not None:
        bias = np.asarray(bias)
        if bias.dtype != np.float32 or bias.shape != (n,):
            raise ValueError(f"{who}: bias must be float32 of shape ({n},), got {bias.dtype} {bias.shape}")
    A2 = np.ascontiguousarray(A).reshape(-1, k)
    m = A2.shape[0]
    if B.dtype == np.uint8:  # B - b_zp = (B ^ 0x80 as int8) - (b_zp - 128)
        B8, bzp = np.ascontiguousarray(B ^ np.uint8(0x80)).view(np.int8), bzp - 128
    else:
        B8 = np.ascontiguousarray(B)
    acc = np.empty((m, n), np.int32)
    if m and n:
        fn = _core.gemm_u8s8s32 if A.dtype == np.uint8 else _core.gemm_s8s8s32
        fn("N", "N", "F", m, n, k, 1.0, A2, max(1, k), azp, B8, max(1, n), bzp, 0.0, acc, max(1, n),
           np.zeros(1, np.int32))
    multiplier = (np.float32(a_s.reshape(())) * b_s.reshape(-1)).astype(np.float32)
    if multiplier.size == 1:
        multiplier = np.full(n, multiplier[0], np.float32)
    Y = np.empty((m, n), np.float32)
    if m and n:
        _core.per_token_scale_int32("float32", acc, multiplier, np.ones(m, np.float32), bias, Y)
    return Y.reshape(m_lead + (n,))


def dynamic_quantize_linear(A):
    """ONNX DynamicQuantizeLinear of a float32 tensor: (uint8 q, float32 scale, uint8 zero point)."""
    A = np.asarray(A)
    if A.dtype != np.float32:
        raise TypeError(f"{_WHO_DQMM}: A must be float32, got dtype {A.dtype}")
    lo = np.float32(min(0.0, float(A.min()))) if A.size else np.float32(0)
    hi = np.float32(max(0.0, float(A.max()))) if A.size else np.float32(0)
    scale = np.float32((hi - lo) / np.float32(255))
    if not scale > 0:
        return np.zeros(A.shape, np.uint8), np.float32(0), np.uint8(0)
    zp = np.uint8(np.clip(np.rint(np.float32(0) - lo / scale), 0, 255))
    q = np.clip(np.rint(A / scale) + np.float32(zp), 0, 255).astype(np.uint8)
    return q, scale, zp


def dynamic_quantize_matmul(A, B, b_scale, b_zero_point=None, bias=None):
    """ONNX Runtime's com.microsoft DynamicQuantizeMatMul: float32 activations times an int8 weight.

    ``A`` is quantized per tensor to uint8 as ONNX ``DynamicQuantizeLinear`` does (scale ``(max(0, max A) -
    min(0, min A)) / 255``, zero point ``round(-min / scale)``, rounding half to even), then multiplied as
    :func:`matmul_integer_to_float` does.

    Parameters
    ----------
    A : array_like of float32
        (..., M, K): the activations.
    B : array_like of int8 or uint8
        (K, N): the weight.
    b_scale : array_like of float32
        One value, or (N,): one per column of ``B``.
    b_zero_point : scalar of B's dtype, optional
        Default 0.
    bias : array_like of float32, optional
        (N,), added after the scaling.

    Returns
    -------
    ndarray of float32
        (..., M, N).

    Raises
    ------
    TypeError
        ``A`` not float32; ``B`` not int8 / uint8.
    ValueError
        As :func:`matmul_integer_to_float`.

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import onnx as gk_onnx
    >>> A, B = np.float32([[1, -1], [0.5, 2]]), np.int8([[1, -2], [3, 4]])
    >>> gk_onnx.dynamic_quantize_matmul(A, B, np.float32(0.25))
    array([[-0.5      , -1.5      ],
           [ 1.6235294,  1.7529413]], dtype=float32)
    """
    A = np.asarray(A)
    if A.dtype != np.float32:
        raise TypeError(f"{_WHO_DQMM}: A must be float32, got dtype {A.dtype}")
    q, scale, zp = dynamic_quantize_linear(A)
    return matmul_integer_to_float(q, B, np.array(scale, np.float32), b_scale, np.array(zp, np.uint8),
                                   b_zero_point, bias)


# the constructor arguments both ops take from onnx.reference, for their docstrings
_OPRUN_PARAMETERS = """

Parameters
----------
onnx_node : onnx.NodeProto
    The node; onnx.reference's ReferenceEvaluator makes the op (``new_ops=[...]``).
run_params : dict
    The evaluator's run parameters (onnx.reference.op_run.OpRun's).
"""


def make_ops():
    """(DynamicQuantizeMatMul, MatMulIntegerToFloat) as onnx.reference OpRuns of domain com.microsoft."""
    from onnx.reference.op_run import OpRun

    class MatMulIntegerToFloat(OpRun):
        __doc__ = ("com.microsoft MatMulIntegerToFloat on gemmkit's exact int8 GEMM (:func:`matmul_integer_to_float`)."
                   + _OPRUN_PARAMETERS)
        op_domain = "com.microsoft"

        def _run(self, a, b, a_scale, b_scale, a_zero_point=None, b_zero_point=None, bias=None):
            return (matmul_integer_to_float(a, b, a_scale, b_scale, a_zero_point, b_zero_point, bias),)

    class DynamicQuantizeMatMul(OpRun):
        __doc__ = ("com.microsoft DynamicQuantizeMatMul on gemmkit's exact int8 GEMM (:func:`dynamic_quantize_matmul`)."
                   + _OPRUN_PARAMETERS)
        op_domain = "com.microsoft"

        def _run(self, a, b, b_scale, b_zero_point=None, bias=None):
            return (dynamic_quantize_matmul(a, b, b_scale, b_zero_point, bias),)

    for cls in (MatMulIntegerToFloat, DynamicQuantizeMatMul):
        cls.__module__ = "gemmkit.onnx"
    return DynamicQuantizeMatMul, MatMulIntegerToFloat
