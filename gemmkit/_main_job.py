"""The main job of the `gemmkit` command (and `python -m gemmkit`): show what runs here, self-check every
kernel path against NumPy, then print a short benchmark table beside NumPy and the int8 and bfloat16 peers."""
import contextlib
import time

import numpy as np

import gemmkit


def self_check():
    rng = np.random.default_rng(1234)
    failures = []
    for arch in gemmkit.available_archs():
        with gemmkit.use_arch(arch):
            for ta in "NT":
                for tb in "NT":
                    M, N, K = 37, 45, 129
                    A = rng.standard_normal((K, M) if ta == "T" else (M, K)).astype(np.float32)
                    B = rng.standard_normal((N, K) if tb == "T" else (K, N)).astype(np.float32)
                    C = rng.standard_normal((M, N)).astype(np.float32)
                    opA = A.T if ta == "T" else A
                    opB = B.T if tb == "T" else B
                    ref = 1.5 * opA.astype(np.float64) @ opB.astype(np.float64) - 0.5 * C
                    gemmkit.sgemm(ta, tb, M, N, K, 1.5, A, A.shape[1], B, B.shape[1], -0.5, C, N)
                    if not np.allclose(C, ref, rtol=1e-4, atol=1e-3):
                        failures.append(f"sgemm {arch} {ta}{tb}")
                    Ai = rng.integers(0, 256, A.shape, dtype=np.uint8)
                    Bi = rng.integers(-128, 128, B.shape, dtype=np.int8)
                    Ci = rng.integers(-1000, 1000, (M, N), dtype=np.int32)
                    co = rng.integers(-50, 50, M, dtype=np.int32)
                    opAi = (Ai.T if ta == "T" else Ai).astype(np.int64) - 128
                    opBi = (Bi.T if tb == "T" else Bi).astype(np.int64) + 3
                    want = opAi @ opBi + Ci + co[:, None]
                    gemmkit.gemm_u8s8s32(ta, tb, "C", M, N, K, 1.0, Ai, Ai.shape[1], 128, Bi, Bi.shape[1], -3,
                                         1.0, Ci, N, co)
                    if not np.array_equal(Ci, want):
                        failures.append(f"gemm_u8s8s32 {arch} {ta}{tb}")
            # gemmkit.matmul: a broadcast stack, a transposed operand and a Fortran-ordered out
            a = rng.standard_normal((3, 21, 33)).astype(np.float32)
            b = rng.standard_normal((19, 33)).astype(np.float32).T
            out = np.empty((3, 19, 21), np.float32).transpose(0, 2, 1)
            gemmkit.matmul(a, b, out=out)
            if not np.allclose(out, a.astype(np.float64) @ b.astype(np.float64), rtol=1e-4, atol=1e-3):
                failures.append(f"matmul {arch}")
    return failures


# Seconds to wait before timing one library right after the other, so that the other's worker threads
# (OpenBLAS and gemmkit both spin a while after a call before sleeping) are idle.
PEER_SETTLE_S = 0.1


@contextlib.contextmanager
def _peer_quiet(peer_api):
    """Time one library with the other one's thread pool (threadpoolctl user_api `peer_api`: "blas"
    for NumPy's BLAS, "gemmkit" for gemmkit's) limited to 1 thread and given time to go idle.
    Without this, OpenBLAS's threads, still spinning after an interleaved NumPy call, steal a core
    from gemmkit's next call."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        limits = contextlib.nullcontext()
    else:
        limits = threadpool_limits(limits=1, user_api=peer_api)
    with limits:
        time.sleep(PEER_SETTLE_S)
        yield


def how_measured():
    """One line on how bench_table() times the two libraries."""
    try:
        import threadpoolctl  # noqa: F401
        quiet = ("each library timed with the other's thread pool limited to 1 (threadpoolctl) and "
                 f"idle for {PEER_SETTLE_S:g} s first")
    except ImportError:
        quiet = (f"each library timed {PEER_SETTLE_S:g} s after the other's last call; install "
                 "threadpoolctl to also limit the other's thread pool to 1 while timing")
    return f"median time per call, each library on all its threads; {quiet}"


def _median_time(fn, min_time=0.15, slow_call=1.0):
    """Median of at least 3 timed calls filling min_time, after a warm-up call; one timed call when
    the warm-up took more than slow_call seconds (NumPy's int32 matmul at 1024 takes seconds)."""
    t = time.perf_counter()
    fn()
    reps = 1 if time.perf_counter() - t > slow_call else 3
    times = []
    start = time.perf_counter()
    while len(times) < reps or time.perf_counter() - start < min_time:
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return float(np.median(times))


def _time_gemmkit(fn):
    with _peer_quiet("blas"):
        return _median_time(fn)


def _time_numpy(fn):
    with _peer_quiet("gemmkit"):
        return _median_time(fn)


def _ort_matmul_integer():
    """(name, fn) running ONNX Runtime's MatMulInteger (uint8 A, int8 B, int32 Y) on a one-node model,
    fn(A, B) -> Y; None when onnx or onnxruntime is not installed (or cannot build the session)."""
    try:
        import onnx
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:
        return None
    try:
        graph = helper.make_graph(
            [helper.make_node("MatMulInteger", ["A", "B"], ["Y"])], "main_job",
            [helper.make_tensor_value_info("A", TensorProto.UINT8, ["M", "K"]),
             helper.make_tensor_value_info("B", TensorProto.INT8, ["K", "N"])],
            [helper.make_tensor_value_info("Y", TensorProto.INT32, ["M", "N"])])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
        model.ir_version = 8
        options = ort.SessionOptions()
        # no spinning workers after a run: they would take cores from gemmkit's next timed call
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        session = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception:  # an onnxruntime build without MatMulInteger, a version mismatch: no peer
        return None
    return f"ONNX Runtime {ort.__version__} MatMulInteger", lambda A, B: session.run(None, {"A": A, "B": B})[0]


def int8_peer():
    """The int8 row's peer: (name, fn(A, B) -> an array comparable with A @ B, exact). ONNX Runtime's
    MatMulInteger when installed; else NumPy's float32 matmul of the same values (OpenBLAS sgemm: what one
    would run without an int8 GEMM; exact while K * 255 * 128 < 2^24, K <= 512)."""
    ort = _ort_matmul_integer()
    if ort is not None:
        return ort
    return ("NumPy float32 matmul of the int8 values (no int8 peer installed: pip install onnxruntime onnx)",
            None)


# NumPy's bfloat16 matmul (ml_dtypes) is a generic loop, far from a BLAS: as the fallback peer it runs only up
# to this size, to keep the main job short.
BF16_NUMPY_MAX_N = 256
# Runtime libraries of the `onednn` wheel that libdnnl.so.3 needs, loaded by absolute path (its folder is not
# on the loader's path unless LD_LIBRARY_PATH says so); the same list as bench/onednn.py's.
_DNNL_DEPS = ["libtbb.so.12", "libintlc.so.5", "libimf.so", "libsvml.so", "libirng.so", "libumf.so.1",
              "libur_loader.so.0", "libsycl.so.9"]


def _dist_file(dist, prefix):
    """Path of the first file of the pip distribution `dist` whose name starts with `prefix`, or None."""
    import os
    try:
        from importlib import metadata
        files = metadata.distribution(dist).files or ()
    except Exception:
        return None
    for f in files:
        if os.path.basename(str(f)).startswith(prefix):
            return os.path.realpath(metadata.distribution(dist).locate_file(f))
    return None


def _dist_version(dist):
    from importlib import metadata
    try:
        return metadata.version(dist)
    except Exception:
        return "(version unknown)"


def _mkl_bf16():
    """(name, fn(A, B, C) -> C) on MKL's cblas_gemm_bf16bf16f32 (row-major, LP64 ints, bfloat16 A and B as
    16-bit words, float32 C), or None when the `mkl` wheel is not installed or lacks it."""
    import ctypes
    path = _dist_file("mkl", "libmkl_rt.so")
    try:
        lib = ctypes.CDLL(path) if path else None
        f = lib.cblas_gemm_bf16bf16f32 if lib is not None else None
    except (OSError, AttributeError):
        return None
    if f is None:
        return None
    i, vp, f32 = ctypes.c_int, ctypes.c_void_p, ctypes.c_float
    f.argtypes = [i, i, i, i, i, i, f32, vp, i, vp, i, f32, vp, i]
    f.restype = None

    def gemm(A, B, C):
        (M, K), N = A.shape, B.shape[1]
        f(101, 111, 111, M, N, K, 1.0, A.ctypes.data, K, B.ctypes.data, N, 0.0, C.ctypes.data, N)
        return C
    return f"MKL {_dist_version('mkl')} cblas_gemm_bf16bf16f32", gemm


def _onednn_bf16():
    """(name, fn(A, B, C) -> C) on oneDNN's dnnl_gemm_bf16bf16f32 (exported, not in its header: row-major,
    bfloat16 A and B as 16-bit words, float32 C), or None when the `onednn` wheel is missing or lacks it."""
    import ctypes
    import os
    path = _dist_file("onednn", "libdnnl.so")
    if path is None:
        return None
    try:
        lib = ctypes.CDLL(path)
    except OSError:
        for dep in _DNNL_DEPS:   # in list order each one's own dependencies are already loaded
            try:
                ctypes.CDLL(os.path.join(os.path.dirname(path), dep), mode=ctypes.RTLD_GLOBAL)
            except OSError:
                pass
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            return None
    f = getattr(lib, "dnnl_gemm_bf16bf16f32", None)
    if f is None:
        return None
    dim, vp, f32, ch = ctypes.c_int64, ctypes.c_void_p, ctypes.c_float, ctypes.c_char
    f.argtypes = [ch, ch, dim, dim, dim, f32, vp, dim, vp, dim, f32, vp, dim]
    f.restype = ctypes.c_int

    def gemm(A, B, C):
        (M, K), N = A.shape, B.shape[1]
        if f(b"N", b"N", M, N, K, 1.0, A.ctypes.data, K, B.ctypes.data, N, 0.0, C.ctypes.data, N) != 0:
            raise RuntimeError("dnnl_gemm_bf16bf16f32 failed")
        return C
    return f"oneDNN {_dist_version('onednn')} dnnl_gemm_bf16bf16f32", gemm


def bf16_peer():
    """The bfloat16 row's peer: (name, fn(A, B, C) -> A @ B, the largest n it runs at or None for any). MKL's
    cblas_gemm_bf16bf16f32 when installed (it loads without a threading runtime of its own), else oneDNN's
    dnnl_gemm_bf16bf16f32, else NumPy's bfloat16 matmul (ml_dtypes: a generic loop, no BLAS) up to
    BF16_NUMPY_MAX_N."""
    for find in (_mkl_bf16, _onednn_bf16):
        peer = find()
        if peer is not None:
            return peer + (None,)
    return ("NumPy bfloat16 matmul (ml_dtypes; no bfloat16 BLAS installed: pip install mkl or onednn)",
            lambda A, B, C: np.matmul(A, B), BF16_NUMPY_MAX_N)


def _bf16_rows(sizes, rng):
    """The bfloat16 rows of bench_table(): gemm_bf16bf16f32 against bf16_peer(); notes for under the table."""
    try:
        import ml_dtypes
    except ImportError:
        return ["no bfloat16 rows: ml_dtypes is not installed (pip install ml_dtypes)"]
    peer_name, peer, max_n = bf16_peer()
    short = peer_name.split(" ")[0]
    notes = [f"bfloat16 peer: {peer_name}"]
    for n in sizes:
        A = rng.standard_normal((n, n)).astype(ml_dtypes.bfloat16)
        B = rng.standard_normal((n, n)).astype(ml_dtypes.bfloat16)
        C, Cp = np.zeros((n, n), np.float32), np.zeros((n, n), np.float32)
        tg = _time_gemmkit(lambda: gemmkit.gemm_bf16bf16f32("N", "N", n, n, n, 1.0, A, n, B, n, 0.0, C, n))
        gf = 2.0 * n**3 / 1e9
        if max_n is not None and n > max_n:
            print(f"{'bf16bf16f32':<14}{n:>6}{gf / tg:>9.1f} GF{'–':>12}{'–':>8}  {short} (only up to {max_n})")
            continue
        tn = _time_numpy(lambda: peer(A, B, Cp))
        got = peer(A, B, Cp)
        # both sum the same exactly widened products: they differ by the rounding of the sums (and of the
        # result, where an older ml_dtypes gives NumPy's matmul a bfloat16 one)
        eps = float(np.finfo(np.float32).eps if got.dtype == np.float32 else ml_dtypes.finfo(got.dtype).eps)
        got = got.astype(np.float64)
        scale = float(np.abs(A.astype(np.float32)).max() * np.abs(B.astype(np.float32)).max())
        if np.abs(got - C).max() > 8 * eps * n * scale:
            notes.append(f"{short}'s result at {n} differs from gemmkit's beyond the rounding bound")
        print(f"{'bf16bf16f32':<14}{n:>6}{gf / tg:>9.1f} GF{gf / tn:>9.1f} GF{tn / tg:>7.2f}x  {short}")
    return notes


def bench_table(sizes=(64, 256, 1024)):
    """Time sgemm against NumPy's matmul (its BLAS), gemm_u8s8s32 against the best int8 peer installed
    (int8_peer()) and gemm_bf16bf16f32 against the best bfloat16 peer installed (bf16_peer()); print one row
    per case with gemmkit's rate, the peer's and gemmkit's ratio (> 1: gemmkit faster), the peers named under
    the table."""
    rng = np.random.default_rng(0)
    print(f"\n{'op':<14}{'size':>6}{'gemmkit':>12}{'peer':>12}{'ratio':>8}  peer")
    for n in sizes:
        A = rng.standard_normal((n, n)).astype(np.float32)
        B = rng.standard_normal((n, n)).astype(np.float32)
        C = np.zeros((n, n), np.float32)
        tg = _time_gemmkit(lambda: gemmkit.sgemm("N", "N", n, n, n, 1.0, A, n, B, n, 0.0, C, n))
        tn = _time_numpy(lambda: np.matmul(A, B, out=C))
        gf = 2.0 * n**3 / 1e9
        print(f"{'sgemm':<14}{n:>6}{gf / tg:>9.1f} GF{gf / tn:>9.1f} GF{tn / tg:>7.2f}x  NumPy matmul (its BLAS)")
    peer_name, peer = int8_peer()
    short = "ONNX Runtime" if peer is not None else "NumPy float32"
    notes = []
    for n in sizes:
        A = rng.integers(0, 256, (n, n), dtype=np.uint8)
        B = rng.integers(-128, 128, (n, n), dtype=np.int8)
        C = np.zeros((n, n), np.int32)
        co = np.zeros(1, np.int32)
        tg = _time_gemmkit(lambda: gemmkit.gemm_u8s8s32("N", "N", "F", n, n, n, 1.0, A, n, 0, B, n, 0, 0.0, C, n, co))
        if peer is not None:
            tn = _time_numpy(lambda: peer(A, B))
            if not np.array_equal(peer(A, B), C):
                notes.append(f"{short}'s result at {n} differs from the exact one (gemmkit's)")
        else:
            Af, Bf = A.astype(np.float32), B.astype(np.float32)
            Cf = np.empty((n, n), np.float32)
            tn = _time_numpy(lambda: np.matmul(Af, Bf, out=Cf))
        gop = 2.0 * n**3 / 1e9
        print(f"{'gemm_u8s8s32':<14}{n:>6}{gop / tg:>9.1f} GO{gop / tn:>9.1f} GO{tn / tg:>7.2f}x  {short}")
    notes += _bf16_rows(sizes, rng)
    print(f"(GF: GFLOP/s, GO: GOP/s; ratio: gemmkit over the peer, > 1: gemmkit faster. int8 peer: {peer_name}"
          + "".join(f"; {note}" for note in notes) + ")")
    print(f"({how_measured()}; the full benchmark: gemmkit bench)")


def run(bench=True):
    """The main job; returns the process exit status (1 when a kernel path fails its self-check)."""
    gemmkit.show_config()
    failures = self_check()
    if failures:
        print("\nself-check FAILED: " + ", ".join(failures))
        return 1
    print(f"\nself-check passed on: {', '.join(gemmkit.available_archs())}")
    if bench:
        bench_table()
    return 0
