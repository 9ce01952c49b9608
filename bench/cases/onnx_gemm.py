"""ONNX Gemm: gemmkit.onnx.gemm against ONNX Runtime (an InferenceSession on a one-node Gemm model) and
onnx.reference's ReferenceEvaluator, per type, square M = N = K, C a (1, N) bias, alpha = beta = 1."""
import functools

from .common import Case, Op, check_rows, keeping_result, random, square_sizes

ORDER = 65
TYPES = ["float32", "float16", "float64", "bfloat16", "int32", "int64"]
PEAK_KIND = {"float32": "fp32", "float16": "fp32", "bfloat16": "fp32", "float64": "fp64"}  # on the float kernels
SQUARES = [64, 256, 512, 1024]
QUICK_SQUARES = [64, 256]
REFERENCE_MAX_N = 256     # onnx.reference runs the 16-bit and integer types at 0.4-2 GFLOP/s
OPSET = 13
IR_VERSION = 8            # loads in older onnxruntime releases as well as new ones


@functools.lru_cache(maxsize=None)
def onnx_peers():
    """(onnx or None, onnxruntime or None, why each missing one is missing), imported once."""
    why = []
    try:
        import onnx
    except ImportError:
        onnx = None
        why.append("onnx is not installed (pip install onnx): no ONNX Runtime or onnx.reference columns")
    try:
        import onnxruntime
    except ImportError:
        onnxruntime = None
        why.append("onnxruntime is not installed (pip install onnxruntime): no ONNX Runtime column")
    return onnx, onnxruntime, tuple(why)


def numpy_dtype(np, type_name):
    """The NumPy dtype of an ONNX type name (bfloat16 from ml_dtypes), or None when ml_dtypes is missing."""
    if type_name != "bfloat16":
        return np.dtype(type_name)
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


def one_node_model(onnx, dtype):
    """Y = Gemm(A, B, C) with alpha = beta = 1 on `dtype`, opset OPSET, ir_version IR_VERSION."""
    helper = onnx.helper
    elem = helper.np_dtype_to_tensor_dtype(dtype)
    inputs = [helper.make_tensor_value_info(name, elem, None) for name in "ABC"]
    node = helper.make_node("Gemm", ["A", "B", "C"], ["Y"], alpha=1.0, beta=1.0)
    graph = helper.make_graph([node], "gemm", inputs, [helper.make_tensor_value_info("Y", elem, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = IR_VERSION
    return model


class OnnxGemmOp(Op):
    """The table of one type; the ONNX Runtime session and the reference evaluator are made once per run."""
    group = "onnx_gemm"
    columns = [("gemmkit", "gemmkit.onnx.gemm"), ("ort", "ONNX Runtime"), ("reference", "onnx.reference")]

    def __init__(self, type_name):
        self.type_name = type_name
        self.name = f"onnx_gemm {type_name}"
        self.title = f"ONNX Gemm, {type_name}, C a (1, N) bias, alpha = beta = 1, opset {OPSET}"
        integer = type_name.startswith("int")
        self.unit = "GOP/s" if integer else "GFLOP/s"
        self.peak_kind = PEAK_KIND.get(type_name)
        self.sessions = {}    # nthreads -> (ONNX Runtime session or None, why not, ReferenceEvaluator or None)

    @property
    def footnote(self):
        onnx, ort, _ = onnx_peers()
        parts = [f"ONNX Runtime {ort.__version__} (CPUExecutionProvider, intra_op_num_threads = threads)"
                 if ort else "ONNX Runtime: not installed",
                 f"onnx {onnx.__version__} ReferenceEvaluator up to {REFERENCE_MAX_N}" if onnx else
                 "onnx: not installed"]
        return "; ".join(parts) + ". Results are checked against a float64 reference on sampled rows."

    def specs(self, ctx):
        if numpy_dtype(ctx.np, self.type_name) is None:
            ctx.notes.append(f"{self.name}: left out, ml_dtypes is not installed (pip install ml_dtypes)")
            return []
        return [(n, n, n) for n in square_sizes(ctx, SQUARES, QUICK_SQUARES)]

    def peers(self, ctx, dtype):
        """(ONNX Runtime session or None, ReferenceEvaluator or None) for this run's thread count; why one is
        missing goes to the footnotes."""
        if ctx.nthreads not in self.sessions:
            onnx, ort, why = onnx_peers()
            ctx.notes.extend(f"onnx_gemm: {w}" for w in why)
            session = reference = None
            if onnx is not None:
                model = one_node_model(onnx, dtype)
                from onnx.reference import ReferenceEvaluator
                reference = ReferenceEvaluator(model)
                if ort is not None:
                    options = ort.SessionOptions()
                    options.intra_op_num_threads = ctx.nthreads
                    options.inter_op_num_threads = 1
                    # no spinning pool threads holding the cores the next library in the round needs
                    options.add_session_config_entry("session.intra_op.allow_spinning", "0")
                    try:
                        session = ort.InferenceSession(model.SerializeToString(), options,
                                                       providers=["CPUExecutionProvider"])
                    except Exception as e:   # no Gemm kernel for this type
                        ctx.notes.append(f"{self.name}: ONNX Runtime {ort.__version__} cannot run it "
                                         f"({type(e).__name__}: {str(e).splitlines()[0][:160]})")
            self.sessions[ctx.nthreads] = (session, reference)
        return self.sessions[ctx.nthreads]

    def build(self, ctx, spec):
        np = ctx.np
        from gemmkit import onnx as gk_onnx
        M, N, K = spec
        dtype = numpy_dtype(np, self.type_name)
        A, B, C = random(ctx, (M, K), dtype), random(ctx, (K, N), dtype), random(ctx, (1, N), dtype)
        feeds = {"A": A, "B": B, "C": C}
        session, reference = self.peers(ctx, dtype)
        outs = {}
        fns = {"gemmkit": keeping_result(outs, "gemmkit", lambda: gk_onnx.gemm(A, B, C))}
        if session is not None:
            fns["ort"] = keeping_result(outs, "ort", lambda: session.run(None, feeds)[0])
        if reference is not None and N <= REFERENCE_MAX_N:
            def run_reference():
                with np.errstate(all="ignore"):   # its integer types overflow as C's do, silently
                    return reference.run(None, feeds)[0]
            fns["reference"] = keeping_result(outs, "reference", run_reference)

        def check(key, Y):
            return check_rows(ctx, Y, A, B, K, exact=dtype.kind in "iu", bias=C)
        return Case(f"{M}×{N}×{K}", 2.0 * M * N * K, fns, outs, check, x=N)


OPS = [OnnxGemmOp(t) for t in TYPES]
