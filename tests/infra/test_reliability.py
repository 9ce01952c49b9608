"""Reproducers of reliability bugs, one test each: strict flags and scalars in every front end, masked arrays and
np.matrix, process-wide state left alone (threads, scipy_patched, arch flips), PackedWeight across processes,
broadcast operands without copies, mixed 16-bit promotion, and errors that name the argument at fault."""
import os
import pickle
import subprocess
import sys
import threading
import tracemalloc

import numpy as np
import pytest

import gemmkit
from gemmkit import _core, quant

ml_dtypes = pytest.importorskip("ml_dtypes")


def _ints(rng, shape, dtype=np.float32, lo=-4, hi=5):
    """Small integer values: every sum exact, so any order of summation gives NumPy's bits."""
    return rng.integers(lo, hi, shape).astype(dtype)


# ---- 1. flags and scalars: one strict conversion --------------------------------------------------------

BAD_FLAGS = [("N", TypeError), ("T", TypeError), ("no", TypeError), (b"N", TypeError), (2, ValueError),
             (-1, ValueError), (0.0, TypeError), (None, TypeError), ([1], TypeError)]
BAD_SCALARS = ["2", True, np.True_, None, b"1", [1.0]]


@pytest.mark.parametrize("value,exc", BAD_FLAGS, ids=repr)
def test_gemm_flags_refuse_strings_and_other_ints(value, exc, rng):
    a, b = _ints(rng, (3, 3)), _ints(rng, (3, 3))
    c = np.full((3, 3), 7, np.float32)
    for kw in ("trans_a", "trans_b"):
        with pytest.raises(exc, match=kw):
            gemmkit.gemm(a, b, c, beta=1.0, **{kw: value})
        assert (c == 7).all(), "c written by a rejected call"


@pytest.mark.parametrize("value", [True, 1, np.True_, np.int64(1), np.uint8(1)], ids=repr)
def test_gemm_flags_take_bools_and_0_1(value, rng):
    a, b = _ints(rng, (4, 3)), _ints(rng, (4, 5))
    np.testing.assert_array_equal(gemmkit.gemm(a, b, trans_a=value), a.T @ b)
    np.testing.assert_array_equal(gemmkit.gemm(a.T.copy(), b, trans_a=0 * value), a.T @ b)


@pytest.mark.parametrize("value", BAD_SCALARS, ids=repr)
def test_gemm_scalars_refuse_bools_and_strings(value, rng):
    a, b = _ints(rng, (3, 3)), _ints(rng, (3, 3))
    c = np.full((3, 3), 7, np.float32)
    for kw in ("alpha", "beta"):
        with pytest.raises(TypeError, match=kw):
            gemmkit.gemm(a, b, c, **{kw: value})
        assert (c == 7).all()


def test_gemm_scalars_take_numpy_numbers(rng):
    a, b = _ints(rng, (3, 4)), _ints(rng, (4, 2))
    c = _ints(rng, (3, 2))
    want = 2 * (a @ b) + 3 * c
    got = gemmkit.gemm(a, b, c.copy(), alpha=np.float32(2), beta=np.int64(3))
    np.testing.assert_array_equal(got, want)
    with pytest.raises(TypeError, match="alpha"):
        gemmkit.gemm(a, b, alpha=1j)


@pytest.mark.parametrize("value,exc", BAD_FLAGS, ids=repr)
def test_onnx_gemm_flags(value, exc, rng):
    from gemmkit import onnx as gko
    a, b = _ints(rng, (3, 3)), _ints(rng, (3, 3))
    for kw in ("transA", "transB"):
        with pytest.raises(exc, match=kw):
            gko.gemm(a, b, **{kw: value})


@pytest.mark.parametrize("value", BAD_SCALARS, ids=repr)
def test_onnx_gemm_scalars(value, rng):
    from gemmkit import onnx as gko
    a, b = _ints(rng, (3, 3)), _ints(rng, (3, 3))
    for kw in ("alpha", "beta"):
        with pytest.raises(TypeError, match=kw):
            gko.gemm(a, b, a, **{kw: value})


@pytest.mark.parametrize("value,exc", BAD_FLAGS, ids=repr)
def test_quant_flags(value, exc, rng):
    x = rng.integers(-128, 128, (4, 6)).astype(np.int8)
    w = rng.integers(-128, 128, (6, 5)).astype(np.int8)
    deq, pts = np.ones(5, np.float32), np.ones(4, np.float32)
    out = np.full((4, 5), 7, np.float32)
    for kw in ("transpose_a", "transpose_b"):
        with pytest.raises(exc, match=kw):
            quant.matmul_per_token(x, w, deq, pts, out=out, **{kw: value})
        assert (out == 7).all()
    with pytest.raises(exc, match="transpose_b"):
        quant.pack_weight(w, transpose_b=value)


def test_quant_flags_take_0_1(rng):
    x = rng.integers(-128, 128, (6, 4)).astype(np.int8)
    w = rng.integers(-128, 128, (6, 5)).astype(np.int8)
    deq, pts = np.ones(5, np.float32), np.ones(4, np.float32)
    want = quant.matmul_per_token(x, w, deq, pts, transpose_a=True, out_dtype="float32")
    got = quant.matmul_per_token(x, w, deq, pts, transpose_a=1, out_dtype="float32")
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(got, x.T.astype(np.float32) @ w.astype(np.float32))


# ---- 2. masked arrays and np.matrix -----------------------------------------------------------------------

def test_masked_arrays_are_refused_everywhere(rng):
    from gemmkit import onnx as gko
    a, b = _ints(rng, (3, 3)), _ints(rng, (3, 3))
    ma = np.ma.array(a, mask=np.eye(3, dtype=bool))
    out = np.full((3, 3), 7, np.float32)
    for call in (lambda: gemmkit.matmul(ma, b), lambda: gemmkit.matmul(b, ma),
                 lambda: gemmkit.matmul(ma, b, out=out),
                 lambda: gemmkit.gemm(ma, b), lambda: gemmkit.gemm(b, ma, out, beta=1.0),
                 lambda: gemmkit.matmul(a, b, out=np.ma.array(out)), lambda: gko.gemm(ma, b),
                 lambda: gko.gemm(a, b, ma)):
        with pytest.raises(TypeError, match="MaskedArray"):
            call()
    assert (out == 7).all()
    xq = np.ma.array(rng.integers(-128, 128, (4, 6)).astype(np.int8), mask=False)
    with pytest.raises(TypeError, match="MaskedArray"):
        quant.matmul_per_token(xq, np.ones((6, 2), np.int8), np.ones(2, np.float32), np.ones(4, np.float32))
    with pytest.raises(TypeError, match="MaskedArray"):
        quant.quantized_add(np.ma.array(np.ones(3, np.uint8)), 1.0, 0, np.ones(3, np.uint8), 1.0, 0, 1.0)


@pytest.mark.filterwarnings("ignore::PendingDeprecationWarning")
def test_np_matrix_gives_np_matrix(rng):
    a, b = np.matrix(_ints(rng, (3, 4))), np.matrix(_ints(rng, (4, 2)))
    for x, y in ((a, b), (a, np.asarray(b)), (np.asarray(a), b)):
        want = np.matmul(x, y)
        got = gemmkit.matmul(x, y)
        assert type(got) is type(want) is np.matrix
        np.testing.assert_array_equal(got, want)
        got = gemmkit.gemm(x, y)
        assert type(got) is np.matrix
        np.testing.assert_array_equal(got, want)
    v = np.ones(4, np.float32)
    want = np.matmul(a, v)
    got = gemmkit.matmul(a, v)
    assert type(got) is type(want) and got.shape == want.shape


# ---- 3. thread counts inside gemmkit.dask tasks ------------------------------------------------------------

def test_threads_limit_is_per_thread_and_restored():
    gemmkit.set_num_threads(2)
    seen = {}

    def other():
        seen["other"] = _core.get_thread_limit()

    with gemmkit.threads_limit(1):
        assert _core.get_thread_limit() == 1
        with gemmkit.threads_limit(3):
            assert _core.get_thread_limit() == 3
        assert _core.get_thread_limit() == 1
        t = threading.Thread(target=other)
        t.start()
        t.join()
        assert gemmkit.get_num_threads() == 2
    assert seen["other"] == 0 and _core.get_thread_limit() == 0
    a = np.ones((300, 300), np.float32)
    with gemmkit.threads_limit(1):  # the cap changes where work runs, not the result
        np.testing.assert_array_equal(gemmkit.matmul(a, a), np.full((300, 300), 300, np.float32))


@pytest.mark.skipif(not os.path.isdir("/proc/self/task"), reason="counts threads in /proc (Linux)")
def test_threads_limit_keeps_the_pool_idle():
    """The cap reaches the core: under threads_limit(1) a large product starts no pool worker (a fresh
    process, whose pool starts on first use), without it the same product does."""
    code = ("import os, numpy as np, gemmkit\n"
            "gemmkit.set_num_threads(2)\n"
            "a = np.ones((600, 600), np.float32)\n"
            "n0 = len(os.listdir('/proc/self/task'))\n"
            "with gemmkit.threads_limit(1):\n"
            "    gemmkit.matmul(a, a)\n"
            "n1 = len(os.listdir('/proc/self/task'))\n"
            "gemmkit.matmul(a, a)\n"
            "print(n0, n1, len(os.listdir('/proc/self/task')))\n")
    env = {k: v for k, v in os.environ.items() if k != "GEMMKIT_NUM_THREADS"}
    n0, n1, n2 = map(int, subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True,
                                         env=env, cwd=os.path.dirname(os.path.abspath(__file__))).stdout.split())
    assert n1 == n0, "threads_limit(1) started pool workers"
    assert n2 > n0, "the product without the cap started no worker: the test proves nothing"


@pytest.mark.parametrize("scheduler", ["threads", "sync"])
def test_dask_tasks_leave_the_process_thread_count_alone(scheduler):
    da = pytest.importorskip("dask.array")
    import gemmkit.dask as gkd
    gemmkit.set_num_threads(2)
    a = da.ones((64, 64), chunks=16, dtype=np.float32)
    x = da.ones((16, 32), chunks=8, dtype=np.int8)
    c = gkd.matmul(a, a).compute(scheduler=scheduler)
    np.testing.assert_array_equal(c, np.full((64, 64), 64, np.float32))
    gkd.matmul_per_token(x, x.T, da.ones(16, dtype=np.float32), da.ones(16, dtype=np.float32)).compute(
        scheduler=scheduler)
    assert gemmkit.get_num_threads() == 2
    assert _core.get_thread_limit() == 0


def test_dask_tasks_on_an_in_process_cluster_leave_the_thread_count_alone():
    distributed = pytest.importorskip("distributed")
    import dask.array as da
    import gemmkit.dask as gkd
    gemmkit.set_num_threads(2)
    with distributed.LocalCluster(n_workers=1, threads_per_worker=2, processes=False,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        a = da.ones((64, 64), chunks=16, dtype=np.float64)
        got = client.compute(gkd.matmul(a, a)).result()
    np.testing.assert_array_equal(got, np.full((64, 64), 64.0))
    assert gemmkit.get_num_threads() == 2


# ---- 4. scipy_patched from several threads -----------------------------------------------------------------

def test_scipy_patched_is_reference_counted_across_threads():
    scipy_blas = pytest.importorskip("scipy.linalg.blas")
    from gemmkit import blas as gk_blas
    original = scipy_blas.dgemm
    step = [threading.Event() for _ in range(4)]
    errors = []

    def first():
        try:
            with gk_blas.scipy_patched():
                step[0].set()          # 1. first enters
                step[1].wait(10)       # 2. second enters
            step[2].set()              # 3. first leaves (the second is still inside)
        except Exception as e:  # pragma: no cover
            errors.append(e)

    def second():
        try:
            step[0].wait(10)
            with gk_blas.scipy_patched():
                step[1].set()
                step[2].wait(10)
                assert scipy_blas.dgemm is gk_blas.dgemm, "unpatched while a block is still open"
        except Exception as e:
            errors.append(e)

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(20)
    assert not errors, errors
    assert scipy_blas.dgemm is original, "scipy.linalg.blas.dgemm left patched"
    # many threads, random interleavings
    barrier = threading.Barrier(6)

    def worker():
        barrier.wait(10)
        for _ in range(50):
            with gk_blas.scipy_patched():
                assert scipy_blas.dgemm is gk_blas.dgemm

    threads = [threading.Thread(target=worker) for _ in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert scipy_blas.dgemm is original and scipy_blas.get_blas_funcs is not gk_blas.get_blas_funcs


# ---- 5/6. PackedWeight: pickles as its weight, arch flips -----------------------------------------------------

def _per_token_operands(rng, m=5, k=40, n=24):
    x = rng.integers(-128, 128, (m, k)).astype(np.int8)
    w = rng.integers(-128, 128, (k, n)).astype(np.int8)
    return x, w, rng.uniform(0.01, 0.1, n).astype(np.float32), rng.uniform(0.5, 2, m).astype(np.float32)


def test_packed_weight_pickles_as_its_weight(rng):
    x, w, deq, pts = _per_token_operands(rng, m=64)
    pw = quant.pack_weight(w)
    assert pw.data is not None
    blob = pickle.dumps(pw)
    assert pw.data[:64].tobytes() not in blob, "the packed panels (their header holds a process-local pointer) " \
        "were pickled"
    assert w.tobytes() in blob
    back = pickle.loads(blob)
    assert isinstance(back, quant.PackedWeight) and back.data is not pw.data
    np.testing.assert_array_equal(back.data, pw.data)  # packed again, here: the same bytes
    np.testing.assert_array_equal(back.weight, w)
    want = quant.matmul_per_token(x, w, deq, pts, out_dtype="float32")
    np.testing.assert_array_equal(quant.matmul_per_token(x, back, deq, pts, out_dtype="float32"), want)


def test_packed_weight_through_multiprocessing_spawn(rng):
    import multiprocessing
    x, w, deq, pts = _per_token_operands(rng, m=64)
    pw = quant.pack_weight(w)
    want = quant.matmul_per_token(x, w, deq, pts, out_dtype="float32")
    with multiprocessing.get_context("spawn").Pool(1) as pool:
        got = pool.apply(quant.matmul_per_token, (x, pw, deq, pts), dict(out_dtype="float32"))
        back = pool.apply(pickle.loads, (pickle.dumps(pw),))
    np.testing.assert_array_equal(got, want)
    np.testing.assert_array_equal(quant.matmul_per_token(x, back, deq, pts, out_dtype="float32"), want)


def test_packed_weight_on_a_local_cluster_with_worker_processes(rng):
    distributed = pytest.importorskip("distributed")
    x, w, deq, pts = _per_token_operands(rng, m=64)
    pw = quant.pack_weight(w)
    want = quant.matmul_per_token(x, w, deq, pts, out_dtype="float32")
    with distributed.LocalCluster(n_workers=1, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        got = client.submit(quant.matmul_per_token, x, pw, deq, pts, out_dtype="float32").result()
    np.testing.assert_array_equal(got, want)


@pytest.mark.skipif(len(gemmkit.available_archs()) < 2, reason="one kernel path only")
def test_arch_flip_between_check_and_call_is_not_an_error(rng, monkeypatch):
    """The window of the race, made certain: the front end sees the path the weight was packed for,
    the core another one (another thread's set_arch in between)."""
    x, w, deq, pts = _per_token_operands(rng, m=64)
    archs = gemmkit.available_archs()
    with gemmkit.use_arch(archs[-1]):
        pw = quant.pack_weight(w)
    want = quant.matmul_per_token(x, w, deq, pts, out_dtype="float32")
    with gemmkit.use_arch(archs[0]):
        monkeypatch.setattr(_core, "get_arch", lambda: pw.arch)
        got = quant.matmul_per_token(x, pw, deq, pts, out_dtype="float32")
    np.testing.assert_array_equal(got, want)


def _flipping(archs):
    """A thread switching the kernel path in a loop until the returned stop() (which restores the path)."""
    stop, previous = threading.Event(), gemmkit.get_arch()

    def flipper():
        i = 0
        while not stop.is_set():
            gemmkit.set_arch(archs[i % len(archs)])
            i += 1

    t = threading.Thread(target=flipper)
    t.start()

    def done():
        stop.set()
        t.join()
        gemmkit.set_arch(previous)
    return done


@pytest.mark.skipif(len(gemmkit.available_archs()) < 2, reason="one kernel path only")
def test_packed_weight_while_another_thread_flips_the_arch(rng):
    x, w, deq, pts = _per_token_operands(rng, m=64, k=200, n=40)
    pw = quant.pack_weight(w)
    want = quant.matmul_per_token(x, w, deq, pts, out_dtype="float32")
    errors = []
    stop = _flipping(gemmkit.available_archs())
    try:
        for _ in range(3000):
            try:
                got = quant.matmul_per_token(x, pw, deq, pts, out_dtype="float32")
            except Exception as e:
                errors.append(e)
                break
            if not np.array_equal(got, want):
                errors.append("wrong result")
                break
    finally:
        stop()
    assert not errors, errors[:1]


@pytest.mark.skipif(len(gemmkit.available_archs()) < 2, reason="one kernel path only")
def test_pack_weight_while_another_thread_flips_the_arch(rng):
    """pack_weight and Int8Linear size and pack the weight under one kernel path each, though another thread
    switches it meanwhile; each packed weight names the path it was made for and gives exact products there."""
    x, w, deq, pts = _per_token_operands(rng, m=64, k=200, n=40)
    archs = gemmkit.available_archs()
    want = quant.matmul_per_token(x, w, deq, pts, out_dtype="float32")
    lin_w = rng.standard_normal((40, 200)).astype(np.float32)
    lin_x = rng.standard_normal((8, 200)).astype(np.float32)
    lin_want = quant.Int8Linear.from_float(lin_w)(lin_x, out_dtype="float32")
    packs, errors = [], []
    stop = _flipping(archs)
    try:
        for i in range(1500):
            try:
                pw = quant.pack_weight(w)
                if i % 100 == 0:
                    packs.append(pw)
                if i % 10 == 0:
                    lin = quant.Int8Linear.from_float(lin_w)
                    got = lin(lin_x, out_dtype="float32")
                    if not np.array_equal(got, lin_want):
                        errors.append("Int8Linear: wrong result")
                        break
            except Exception as e:
                errors.append(e)
                break
    finally:
        stop()
    assert not errors, errors[:1]
    for pw in packs:
        assert pw.data is not None and pw.arch in archs
        with gemmkit.use_arch(pw.arch):  # the panels are the named path's: the core takes them as they are
            got = np.empty_like(want)
            _core.gemm_s8s8_per_token_packed("N", "float32", 1, 64, 40, 200, x, 200, 0, pw.data, deq, pts, 0, None,
                                             got, 40, 0)
        np.testing.assert_array_equal(got, want)


# ---- 7. broadcast operands, mixed 16-bit promotion, errors that name the problem ---------------------------------

BROADCASTS = {
    "scalar": lambda x: np.broadcast_to(x[0, 0], x.shape),
    "row": lambda x: np.broadcast_to(x[:1, :], x.shape),
    "column": lambda x: np.broadcast_to(x[:, :1], x.shape),
    "strided-row": lambda x: np.broadcast_to(np.repeat(x[:1, :], 2, axis=1)[:, ::2], x.shape),
    "strided-column": lambda x: np.broadcast_to(np.repeat(x[:, :1], 2, axis=0)[::2], x.shape),
    "plain": lambda x: x,
}


@pytest.mark.parametrize("kind_a", sorted(BROADCASTS))
@pytest.mark.parametrize("kind_b", sorted(BROADCASTS))
@pytest.mark.parametrize("dtype", ["float32", "complex128", "float16", "bfloat16"])
def test_broadcast_operands_match_numpy(kind_a, kind_b, dtype, arch, nthreads, rng):
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    for m, k, n in ((1, 37, 1), (9, 40, 13), (33, 70, 5)):
        a = BROADCASTS[kind_a](_ints(rng, (m, k), dt, -2, 3))
        b = BROADCASTS[kind_b](_ints(rng, (k, n), dt, -2, 3))
        wide = np.complex128 if dt.kind == "c" else np.float64
        want = np.matmul(a.astype(wide), b.astype(wide))
        got = gemmkit.matmul(a, b)
        np.testing.assert_array_equal(got.astype(wide), want)
        got = gemmkit.gemm(b, a, trans_a=True, trans_b=True)
        np.testing.assert_array_equal(got.astype(wide), want.T)
        c = _ints(rng, (m, n), got.dtype)
        got = gemmkit.gemm(a, b, c.copy(), alpha=2.0, beta=-1.0)
        np.testing.assert_array_equal(got.astype(wide), 2 * want - c.astype(wide))


@pytest.mark.parametrize("kind_a,kind_b", [("column", "row"), ("row", "column"), ("scalar", "plain"),
                                           ("plain", "strided-row"), ("strided-column", "scalar")])
@pytest.mark.parametrize("dtype", ["float32", "float64", "complex64"])
def test_broadcast_operands_on_the_packed_paths(kind_a, kind_b, dtype, arch, nthreads, rng):
    """Sizes that go through the blocked driver (packing, threads), with ld 0 read by its packers."""
    m, k, n = 257, 300, 203
    a = BROADCASTS[kind_a](_ints(rng, (m, k), dtype, -2, 3))
    b = BROADCASTS[kind_b](_ints(rng, (k, n), dtype, -2, 3))
    want = np.matmul(np.ascontiguousarray(a), np.ascontiguousarray(b))
    np.testing.assert_array_equal(gemmkit.matmul(a, b), want)
    c = _ints(rng, (m, n), dtype)
    np.testing.assert_array_equal(gemmkit.gemm(a, b, c.copy(), beta=2.0), want + 2 * c)


@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("b_layout", ["C", "F", "broadcast"])
def test_broadcast_rows_on_the_gemv_path(dtype, b_layout, arch, nthreads, rng):
    """Few rows of op(a), each one value repeated along a long K (ld 0): the GEMV path sums K in blocks
    of one gathered block of values (a copy of K values would be 2^33 of them for a broadcast row)."""
    k = 3 * 2**16 + 7
    a = np.broadcast_to(_ints(rng, (2, 1), dtype, -2, 3), (2, k))
    b = _ints(rng, (k, 3), dtype, -2, 3)
    b = {"C": b, "F": np.asfortranarray(b), "broadcast": np.broadcast_to(b[:1], b.shape)}[b_layout]
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    np.testing.assert_array_equal(gemmkit.matmul(a, b), want)
    np.testing.assert_array_equal(gemmkit.matmul(b.T, a.T), want.T)
    c = _ints(rng, (2, 3), dtype)
    np.testing.assert_array_equal(gemmkit.gemm(a, b, c.copy(), alpha=2.0, beta=-1.0), 2 * want - c)


def test_broadcast_stack_operands(rng):
    a = np.broadcast_to(_ints(rng, (1, 1, 5)), (4, 6, 5))
    b = np.broadcast_to(_ints(rng, (3, 5, 1)), (3, 5, 7))
    np.testing.assert_array_equal(gemmkit.matmul(a[:3], b), np.matmul(a[:3], b))


def test_broadcast_operand_is_not_copied():
    """np.broadcast_to(np.float32(1), (1, 2**33)) was copied whole (32 GiB): now nothing is copied."""
    k = 2**24  # 64 MiB if it were copied
    x = np.broadcast_to(np.float32(0.5), (1, k))
    tracemalloc.start()
    try:
        got = gemmkit.matmul(x, x.T)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, f"{peak} bytes allocated"
    assert got.shape == (1, 1) and abs(float(got[0, 0]) - k / 4) <= 1e-3 * k / 4
    tracemalloc.start()
    try:
        y = gemmkit.matmul(np.broadcast_to(np.float64(2.0), (3, k)), np.broadcast_to(np.float64(1.0), (k, 4)))
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20 and (y == 2.0 * k).all()


@pytest.mark.parametrize("other", ["float16", "int8", "uint8", "int16", "int32", "int64", "bool", "float32",
                                   "float64", "complex64"])
def test_bfloat16_mixed_dtypes_promote_as_np_matmul(other, rng):
    bf = ml_dtypes.bfloat16
    a = _ints(rng, (3, 4), bf, 0, 2)
    b = _ints(rng, (4, 5), np.dtype(other), 0, 2)
    for x, y in ((a, b), (b.T, a.T)):
        want = np.matmul(x, y)
        got = gemmkit.matmul(x, y)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_quantized_add_takes_numpy_scalars_and_integer_zero_points():
    a, b = np.uint8(5), np.uint8(9)
    want = quant.quantized_add(np.asarray(a), 0.5, 1, np.asarray(b), 0.25, 2, 0.125, 3)
    got = quant.quantized_add(a, 0.5, 1, b, 0.25, 2, 0.125, 3)
    assert got == want and got.dtype == np.uint8
    arr = np.arange(6, dtype=np.uint8).reshape(2, 3)
    want = quant.quantized_add(arr, 0.5, 1, arr, 0.25, 2, 0.125, 3)
    for zp in (np.int64(1), np.int32(1), np.uint16(1)):
        got = quant.quantized_add(arr, 0.5, zp, arr, 0.25, np.int64(2), 0.125, np.int16(3))
        np.testing.assert_array_equal(got, want)
        assert got.dtype == np.uint8
    with pytest.raises(ValueError, match="a_zero_point"):
        quant.quantized_add(arr, 0.5, np.int64(300), arr, 0.25, 2, 0.125, 3)
    with pytest.raises(TypeError, match="a_zero_point"):
        quant.quantized_add(arr, 0.5, np.int8(1), arr, 0.25, 2, 0.125, 3)


def test_quantized_add_too_many_dimensions_is_named():
    if np.lib.NumpyVersion(np.__version__) < "2.0.0":
        pytest.skip("NumPy < 2 makes no array of more than 32 dimensions")
    x = np.zeros((1,) * 33, np.uint8)
    for args in ((x, 1.0, 0, x, 1.0, 0, 1.0), (np.zeros(3, np.uint8), 1.0, 0, x, 1.0, 0, 1.0)):
        with pytest.raises(ValueError, match="dimensions"):
            quant.quantized_add(*args)


def test_packed_weight_in_the_wrong_function_is_named(rng):
    w = rng.integers(-128, 128, (6, 4)).astype(np.int8)
    pw = quant.pack_weight(w)
    for call in (lambda: gemmkit.matmul(np.ones((2, 6), np.float32), pw), lambda: gemmkit.gemm(pw, pw),
                 lambda: quant.pack_weight(pw)):
        with pytest.raises(TypeError, match="PackedWeight"):
            call()
    with pytest.raises(TypeError, match="pack_weight: weight must be an int8") as info:
        quant.pack_weight(w.astype(np.uint8))
    assert "matmul_per_token" not in str(info.value)


def test_dask_errors_name_the_problem(rng):
    da = pytest.importorskip("dask.array")
    import gemmkit.dask as gkd
    a = da.ones((8, 8), chunks=4)
    unknown = a[a[:, 0] > 0]  # unknown row chunks
    with pytest.raises(ValueError, match="unknown chunk sizes") as info:
        gkd.matmul(a, unknown)
    assert "nan rows" not in str(info.value) and "along axis 0" in str(info.value)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        gkd.matmul(unknown.T, a)
    for bad, exc in ((0, ValueError), (-5, ValueError), (1.5, TypeError), (True, TypeError)):
        with pytest.raises(exc, match="block_bytes"):
            gkd.matmul(a, a, block_bytes=bad)
        with pytest.raises(exc, match="block_bytes"):
            gkd.matmul_per_token(np.ones((4, 8), np.int8), np.ones((8, 4), np.int8), np.ones(4, np.float32),
                                 np.ones(4, np.float32), block_bytes=bad)
    x = np.ones((4, 8), np.int8)
    with pytest.raises(TypeError, match="PackedWeight"):
        gkd.matmul_per_token(x, quant.pack_weight(np.ones((8, 4), np.int8)), np.ones(4, np.float32),
                             np.ones(4, np.float32))
    xi = da.from_array(x, chunks=2)
    with pytest.raises(ValueError, match="unknown chunk sizes"):
        gkd.matmul_per_token(xi[xi[:, 0] > 0], np.ones((8, 4), np.int8), np.ones(4, np.float32),
                             np.ones(4, np.float32))


# ---- 8. leading dimensions named in overflow messages --------------------------------------------------------

@pytest.mark.parametrize("which", ["lda", "ldb", "ldc"])
def test_ld_overflow_names_the_argument(which):
    A, B, C = np.zeros(9, np.float32), np.zeros(9, np.float32), np.zeros(9, np.float32)
    lds = dict(lda=3, ldb=3, ldc=3)
    lds[which] = 2**62
    with pytest.raises(ValueError, match=which) as info:
        gemmkit.sgemm("N", "N", 3, 3, 3, 1.0, A, lds["lda"], B, lds["ldb"], 0.0, C, lds["ldc"])
    assert "ld=" not in str(info.value)
    x = np.zeros((3, 3), np.int8)
    lds = dict(lda=3, ldb=3, ldc=3)
    lds[which] = 2**62
    with pytest.raises(ValueError, match=which):
        _core.gemm_s8s8_per_token("N", "N", "R", "float32", 1, 3, 3, 3, x, lds["lda"], 0, x, lds["ldb"], 0,
                                  np.ones(3, np.float32), np.ones(3, np.float32), 0, None,
                                  np.zeros((3, 3), np.float32), lds["ldc"], 0)
