"""GEMV cases (M <= 2 rows, or a matrix times N = 1 column): gemmkit's s/dgemm and matmul against NumPy's matmul
and a plain streaming read of the same bytes (bench/stream_read.c, same threads), in GB/s of the matrix read
once; gk/read is the fraction of the bandwidth the GEMV reaches."""
import ctypes

from .. import machine
from .common import Case, Op, aligned_empty, check_rows, random

ORDER = 25
SIZE, QUICK_SIZE = 4096, 1024
# (label, rows of op(A) or None for a matrix times a vector, layout): C = A op(B) with a few rows of A
# against B stored K x N (N) or N x K (T); "A·x" / "Aᵀ·x": the matrix A (stored M x K or K x M) times x
SHAPES = [("1×N×K", 1, "N"), ("1×N×K", 1, "T"), ("2×N×K", 2, "N"), ("2×N×K", 2, "T"),
          ("A·x", None, "N"), ("Aᵀ·x", None, "T")]
DTYPES = ["float32", "float64"]

_reader = {}


def stream_reader(ctx):
    """ctypes stream_read(ptr, bytes, threads) from bench/stream_read.c, or None (a note says why)."""
    if "fn" not in _reader:
        lib, why = machine.compile_library()
        fn = None
        if lib is not None:
            fn = ctypes.CDLL(lib).stream_read
            fn.restype, fn.argtypes = ctypes.c_uint64, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        else:
            ctx.notes.append(f"gemv: no streaming-read column ({why})")
        _reader["fn"] = fn
    return _reader["fn"]


class GemvOp(Op):
    name = group = "gemv"
    title = "GEMV: the matrix streamed once, against NumPy and a plain read of the same bytes"
    unit = "GB/s"
    columns = [("gemmkit", "gemmkit ?gemm"), ("gk_matmul", "gemmkit.matmul"), ("numpy", "NumPy matmul"),
               ("read", "stream read")]
    ours = ["gemmkit", "gk_matmul"]
    ratios = [("gemmkit", "numpy", "gk/NumPy"), ("gk_matmul", "numpy", "matmul/NumPy"),
              ("gemmkit", "read", "gk/read")]
    footnote = ("GB/s: bytes of the matrix (K×N for a few rows, M×K for A·x) per second; GFLOP/s = GB/s × 2m / "
                "element bytes (m = 1 or 2 rows). *stream read*: bench/stream_read.c summing the same array with "
                "4 concurrent streams per thread on the run's threads, timed in the same rounds, so gk/read is "
                "the fraction of the bandwidth this machine gave a plain read at that moment (memory shared with "
                "other tenants moves every column together).")

    def specs(self, ctx):
        n = QUICK_SIZE if ctx.args.quick else SIZE
        if ctx.args.sizes:
            n = max(int(s) for s in ctx.args.sizes.split(",") if s)
        return [(dt, label, m, lay, n) for dt in DTYPES for label, m, lay in SHAPES]

    def label(self, spec):
        dt, label, m, lay, n = spec
        shape = label.replace("N", str(n)).replace("K", str(n)) if m else f"{label} {n}×{n}"
        return f"{dt[5:]}-bit {shape}" + (f" ({lay})" if m else "")

    def build(self, ctx, spec):
        np, gk = ctx.np, ctx.gemmkit
        dt, _, m, lay, n = spec
        gemm = gk.sgemm if dt == "float32" else gk.dgemm
        big = random(ctx, (n, n), dt)
        fns, outs = {}, {}
        if m:   # m rows of A times op(B), B = big (K x N plain, N x K transposed)
            A = random(ctx, (m, n), dt)
            Bop = big if lay == "N" else big.T
            C1, C2, C3 = (aligned_empty(np, (m, n), dt) for _ in range(3))
            fns["gemmkit"] = lambda: gemm("N", lay, m, n, n, 1.0, A, n, big, n, 0.0, C1, n)
            fns["gk_matmul"] = lambda: gk.matmul(A, Bop, out=C2)
            fns["numpy"] = lambda: np.matmul(A, Bop, out=C3)
            outs = {"gemmkit": C1, "gk_matmul": C2, "numpy": C3}
            check = lambda key, C: check_rows(ctx, C, A, Bop, n)
            flops = 2 * m * n * n
        else:   # op(A) x with A = big (M x K plain, K x M transposed)
            x = random(ctx, (n,), dt)
            Aop = big if lay == "N" else big.T
            C1 = aligned_empty(np, (n, 1), dt)
            C2, C3 = aligned_empty(np, (n,), dt), aligned_empty(np, (n,), dt)
            fns["gemmkit"] = lambda: gemm(lay, "N", n, 1, n, 1.0, big, n, x, 1, 0.0, C1, 1)
            fns["gk_matmul"] = lambda: gk.matmul(Aop, x, out=C2)
            fns["numpy"] = lambda: np.matmul(Aop, x, out=C3)
            outs = {"gemmkit": C1, "gk_matmul": C2[:, None], "numpy": C3[:, None]}
            check = lambda key, C: check_rows(ctx, C.T, x[None, :], Aop.T, n)
            flops = 2 * n * n
        read = stream_reader(ctx)
        if read is not None:
            ptr, nbytes, threads = big.ctypes.data, big.nbytes, ctx.nthreads
            fns["read"] = lambda: read(ptr, nbytes, threads)
        case = Case(self.label(spec), big.nbytes, fns, outs, check=check, unchecked=("read",))
        case.flops = flops
        return case


OPS = [GemvOp()]
