"""gemmkit.onnx: the ONNX Gemm operator (every version: 1, 6, 7, 9, 11, 13) on gemmkit's core, as a
function `gemm` and as `Gemm`, an onnx.reference OpRun that runs a model's Gemm nodes on gemmkit.

Checks shapes, types and attributes per version here; every arithmetic operation on matrix data runs in
the C core (gemmkit._core), this module only moves data (C's broadcast into Y) and picks the function.
"""
import numpy as np

from . import _args, _core, _fastpaths
from ._resolve import resolve_operand
from ._onnx_quant import dynamic_quantize_matmul, matmul_integer_to_float  # noqa: F401 (com.microsoft ops)

# The versions of the Gemm operator; an opset import selects the latest one not above it.
GEMM_VERSIONS = (1, 6, 7, 9, 11, 13)

_FLOAT_TYPES = ("float16", "float32", "float64")
_INTEGER_TYPES = ("int32", "int64", "uint32", "uint64")
# type name -> the Gemm versions from which the operator takes it
TYPE_SINCE = {**{t: 1 for t in _FLOAT_TYPES}, **{t: 9 for t in _INTEGER_TYPES}, "bfloat16": 13}
# type name -> the core function (gemmkit._core.<name>) computing Y := alpha op(A) op(B) + beta Y for it
CORE_FUNCTION = {"float16": "hgemm", "bfloat16": "bf16gemm", "float32": "sgemm", "float64": "dgemm",
                 "int32": "gemm_i32", "int64": "gemm_i64", "uint32": "gemm_u32", "uint64": "gemm_u64"}


def gemm_version(opset):
    """The Gemm operator version in force under an opset import.

    Parameters
    ----------
    opset : int
        The model's opset import for the default domain (>= 1).

    Returns
    -------
    int
        The latest of 1, 6, 7, 9, 11, 13 not above ``opset``.

    Raises
    ------
    TypeError
        ``opset`` not an int.
    ValueError
        ``opset`` below 1.

    Examples
    --------
    >>> from gemmkit import onnx as gk_onnx
    >>> gk_onnx.gemm_version(10), gk_onnx.gemm_version(21)
    (9, 13)
    """
    if isinstance(opset, bool) or not isinstance(opset, (int, np.integer)):
        raise TypeError(f"gemmkit.onnx.gemm: opset must be an int, got {type(opset).__name__}")
    if opset < 1:
        raise ValueError(f"gemmkit.onnx.gemm: opset must be >= 1, got {opset}")
    return max(v for v in GEMM_VERSIONS if v <= opset)


_VERSION_OF_OPSET = {o: gemm_version(o) for o in range(1, GEMM_VERSIONS[-1] + 1)}
_TYPE_NAME_OF = {np.dtype(t): t for t in TYPE_SINCE if t != "bfloat16"}  # dtype.name is slow


def _type_name(dtype):
    """The type's name as TYPE_SINCE spells it ("bfloat16" for ml_dtypes.bfloat16, its NumPy name)."""
    name = _TYPE_NAME_OF.get(dtype)
    return name if name is not None else dtype.name


def _core_function(type_name, version, who):
    if type_name not in TYPE_SINCE:
        raise TypeError(f"{who}: Gemm has no type {type_name} (ONNX allows "
                        f"{', '.join(t for t, v in TYPE_SINCE.items() if v <= version)} in Gemm-{version})")
    if TYPE_SINCE[type_name] > version:
        raise TypeError(f"{who}: Gemm-{version} does not take {type_name}; it does from Gemm-"
                        f"{TYPE_SINCE[type_name]} (opset >= {TYPE_SINCE[type_name]})")
    fn = getattr(_core, CORE_FUNCTION[type_name], None)
    if fn is None:
        raise TypeError(f"{who}: {type_name} kernels are not in this build of gemmkit "
                        f"(no gemmkit._core.{CORE_FUNCTION[type_name]})")
    return fn


def _attribute_float(value, name, who):
    """alpha/beta as ONNX stores them: a float attribute (float32), returned as a Python float."""
    if type(value) is float:  # the common case, first
        return float(np.float32(value))
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise TypeError(f"{who}: {name} must be a real number, got {type(value).__name__}")
    return float(np.float32(value))


def _attribute_flag(value, name, who):
    """transA / transB / broadcast: ONNX int attributes used as flags, 0 or 1 (bools too); see gemmkit._args."""
    if type(value) is int and (value == 0 or value == 1):
        return value
    return int(_args.flag(value, name, who))


def _as_array(x, name, who):
    _args.refuse_masked(x, name, who)
    if isinstance(x, np.ndarray):
        return x
    if isinstance(x, np.generic):
        return np.asarray(x)
    raise TypeError(f"{who}: {name} must be a NumPy array, got {type(x).__name__}")


def _broadcasts_to(shape, target):
    """Whether `shape` broadcasts unidirectionally to `target`: right-aligned, each axis equal or 1."""
    if shape == target:
        return True
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(shape[::-1], target[::-1]))


def _check_c(C, M, N, version, broadcast, who):
    """C's shape against (M, N) under the version's rules; ValueError naming the shapes."""
    if version < 7 and not broadcast:
        if C.shape != (M, N):
            raise ValueError(f"{who}: C has shape {C.shape} but Gemm-{version} with broadcast=0 needs exactly "
                             f"(M, N) = {(M, N)}")
        return
    if not _broadcasts_to(C.shape, (M, N)):
        raise ValueError(f"{who}: C has shape {C.shape}, which does not broadcast unidirectionally to "
                         f"(M, N) = {(M, N)}")


def gemm(A, B, C=None, alpha=1.0, beta=1.0, transA=0, transB=0, broadcast=0, opset=13):
    """ONNX Gemm: Y = alpha * A' @ B' + beta * C, A' = A.T if transA else A, B' likewise.

    ``opset`` selects the operator version (the latest of 1, 6, 7, 9, 11, 13 not above it), which decides
    whether C is required, how it broadcasts and which types are taken. Integer types follow
    ``onnx.reference`` bit for bit: the product wraps in the type, alpha and beta scale it in float64 (see the
    ONNX page of the user guide).

    Parameters
    ----------
    A, B : ndarray
        (M, K) or (K, M) with transA; (K, N) or (N, K) with transB. float16, float32, float64 in every
        version; int32, int64, uint32, uint64 from 9; bfloat16 (``ml_dtypes``) from 13. One type for A, B, C.
    C : ndarray, optional
        Required before version 11. Versions 1 and 6: exactly (M, N) unless ``broadcast=1``; from 7:
        unidirectionally broadcastable to (M, N) (a scalar, (N,), (M, 1), ...).
    alpha, beta : float
        ONNX float attributes: rounded to float32 first (real numbers; bools and strings raise TypeError).
        beta = 0 (or no C) leaves C unread.
    transA, transB : int
        0, 1 or a bool (other integers raise ValueError, strings TypeError).
    broadcast : int
        0, 1 or a bool; an attribute of versions 1 and 6 only (passing 1 elsewhere raises).
    opset : int, default 13
        The model's opset import.

    Returns
    -------
    ndarray
        Y, (M, N), of A's type.

    Raises
    ------
    ValueError
        Shapes that do not fit, a missing C, or ``broadcast`` where the version has no such attribute.
    TypeError
        A type the version does not take, inputs of different types, or a masked array.

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import onnx as gk_onnx
    >>> A = np.ones((2, 3), np.float32); B = np.ones((4, 3), np.float32)
    >>> gk_onnx.gemm(A, B, np.arange(4, dtype=np.float32), alpha=0.5, transB=1)
    array([[1.5, 2.5, 3.5, 4.5],
           [1.5, 2.5, 3.5, 4.5]], dtype=float32)
    >>> gk_onnx.gemm(np.int32([[2, 3]]), np.int32([[4], [5]]))
    array([[23]], dtype=int32)
    """
    if type(opset) is int and opset >= 11 and broadcast == 0:  # C optional, broadcast unidirectionally
        Y = _fastpaths.onnx_gemm_fast(A, B, C, alpha, beta, transA, transB, opset)  # 2-D, read in place
        if Y is not None:
            return Y
    who = "gemmkit.onnx.gemm"
    version = _VERSION_OF_OPSET.get(opset) if type(opset) is int else None
    if version is None:
        version = gemm_version(opset)
    A = _as_array(A, "A", who)
    B = _as_array(B, "B", who)
    if C is not None:
        C = _as_array(C, "C", who)
    alpha = _attribute_float(alpha, "alpha", who)
    beta = _attribute_float(beta, "beta", who)
    transA, transB = _attribute_flag(transA, "transA", who), _attribute_flag(transB, "transB", who)
    broadcast = _attribute_flag(broadcast, "broadcast", who)
    if broadcast and version >= 7:
        raise ValueError(f"{who}: broadcast is an attribute of Gemm-1 and Gemm-6 only (opset {opset} has "
                         f"Gemm-{version}, where C always broadcasts)")
    dtype = A.dtype
    if B.dtype != dtype or (C is not None and C.dtype != dtype):
        name, x = ("B", B) if B.dtype != dtype else ("C", C)
        raise TypeError(f"{who}: {name} is {x.dtype} but A is {dtype}: Gemm's inputs share one type")
    fn = _core_function(_type_name(dtype), version, who)
    if A.ndim != 2 or B.ndim != 2:
        name, x = ("A", A) if A.ndim != 2 else ("B", B)
        raise ValueError(f"{who}: {name} must be 2-D, got shape {x.shape}")
    M, K = A.shape[::-1] if transA else A.shape
    Kb, N = B.shape[::-1] if transB else B.shape
    if K != Kb:
        raise ValueError(f"{who}: A' is {M}x{K} (A.shape {A.shape}, transA={transA}) but B' is {Kb}x{N} "
                         f"(B.shape {B.shape}, transB={transB}): the contracted dimensions differ")
    if C is None and version < 11:
        raise ValueError(f"{who}: C is required in Gemm-{version} (optional from opset 11)")
    if C is not None:
        _check_c(C, M, N, version, broadcast, who)
    Y = np.empty((M, N), dtype if dtype.isnative else dtype.newbyteorder("="))
    if Y.size == 0:
        return Y
    if C is not None and beta != 0.0:
        np.copyto(Y, C)  # C broadcast into Y, data movement only: the core scales and adds it
    else:
        beta = 0.0
    a_view, a_flip, lda = resolve_operand(A)
    b_view, b_flip, ldb = resolve_operand(B)
    ta = "T" if bool(transA) != a_flip else "N"
    tb = "T" if bool(transB) != b_flip else "N"
    fn(ta, tb, M, N, K, alpha, a_view, lda, b_view, ldb, beta, Y, N)
    return Y


def _make_gemm_op():
    """Gemm as an onnx.reference OpRun (onnx is an optional dependency: imported here, on first use)."""
    from onnx.reference.op_run import OpRun

    class Gemm(OpRun):
        """The ONNX Gemm node on gemmkit, every version: ``ReferenceEvaluator(model, new_ops=[Gemm])``.

        The evaluator's opset import picks the version's rules (see :func:`gemm`); created on first access
        of ``gemmkit.onnx.Gemm``, so that onnx is needed only by those who use it.

        Parameters
        ----------
        onnx_node : onnx.NodeProto
            The Gemm node; the ReferenceEvaluator makes the op.
        run_params : dict
            The evaluator's run parameters (``opsets`` among them; onnx.reference.op_run.OpRun's).
        """
        op_domain = ""

        def _run(self, a, b, c=None, alpha=None, beta=None, transA=None, transB=None, broadcast=None):
            opset = self.run_params["opsets"].get("", 13)
            return (gemm(a, b, c, alpha=1.0 if alpha is None else alpha, beta=1.0 if beta is None else beta,
                         transA=transA or 0, transB=transB or 0, broadcast=broadcast or 0, opset=opset),)

    Gemm.__module__ = __name__
    Gemm.__qualname__ = "Gemm"
    return Gemm


def __getattr__(name):
    if name == "Gemm":
        cls = _make_gemm_op()
        globals()["Gemm"] = cls
        return cls
    if name in ("DynamicQuantizeMatMul", "MatMulIntegerToFloat"):  # com.microsoft ops (gemmkit/_onnx_quant.py)
        from ._onnx_quant import make_ops
        globals()["DynamicQuantizeMatMul"], globals()["MatMulIntegerToFloat"] = make_ops()
        return globals()[name]
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
