"""gemmkit.dask.matmul against NumPy's float64/complex128 product, on the local schedulers and on a real
distributed.LocalCluster with worker processes (started and stopped here): chunkings that agree and that
do not, dtypes, K = 0, determinism, errors raised when the graph is built, threads per task."""
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

da = pytest.importorskip("dask.array")
gkd = pytest.importorskip("gemmkit.dask")

from _support import normal_values  # noqa: E402


_values = normal_values


def _close(got, want, k, dtype):
    eps = np.finfo(np.dtype(dtype)).eps
    scale = max(1.0, float(np.abs(want).max())) if want.size else 1.0
    assert got.shape == want.shape
    assert np.allclose(got, want, rtol=8 * eps * (k + 1), atol=8 * eps * (k + 1) * scale)


@st.composite
def dask_case(draw):
    m, n, k = draw(st.integers(1, 90)), draw(st.integers(1, 90)), draw(st.integers(0, 90))
    chunk = st.integers(1, 40)
    return dict(m=m, n=n, k=k, ca=(draw(chunk), draw(chunk)), cb=(draw(chunk), draw(chunk)),
                dtype=draw(st.sampled_from(["float32", "float64", "complex64", "complex128"])),
                scheduler=draw(st.sampled_from(["sync", "threads"])), seed=draw(st.integers(0, 2**31)))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=dask_case())
def test_matmul_matches_numpy_on_local_schedulers(case):
    rng = np.random.default_rng(case["seed"])
    A = _values(rng, (case["m"], case["k"]), case["dtype"])
    B = _values(rng, (case["k"], case["n"]), case["dtype"])
    a = da.from_array(A, chunks=tuple(max(1, c) for c in case["ca"]))
    b = da.from_array(B, chunks=tuple(max(1, c) for c in case["cb"]))
    c = gkd.matmul(a, b)
    assert c.dtype == np.dtype(case["dtype"]) and c.shape == (case["m"], case["n"])
    assert c.chunks[0] == a.chunks[0] and c.chunks[1] == b.chunks[1]
    got = c.compute(scheduler=case["scheduler"])
    wide = np.complex128 if np.dtype(case["dtype"]).kind == "c" else np.float64
    _close(got, A.astype(wide) @ B.astype(wide), case["k"], case["dtype"])


def test_mixed_dtypes_promote_as_numpy():
    rng = np.random.default_rng(2)
    A, B = _values(rng, (20, 30), np.float32), _values(rng, (30, 10), np.complex128)
    c = gkd.matmul(da.from_array(A, chunks=7), da.from_array(B, chunks=9))
    assert c.dtype == np.complex128
    _close(c.compute(scheduler="sync"), A.astype(np.complex128) @ B, 30, np.complex128)


def test_results_are_deterministic_across_schedulers():
    rng = np.random.default_rng(3)
    A, B = _values(rng, (64, 400), np.float32), _values(rng, (400, 48), np.float32)
    c = gkd.matmul(da.from_array(A, chunks=(32, 37)), da.from_array(B, chunks=(37, 24)))
    first = c.compute(scheduler="sync")
    for scheduler in ("threads", "sync", "processes"):
        assert np.array_equal(c.compute(scheduler=scheduler), first)


@pytest.mark.parametrize("task_macs,tasks_per_chain", [(1, 11), (32 * 24 * 37 * 3, 4), (1e12, 1)])
def test_k_runs_per_task_change_the_graph_not_the_bits(task_macs, tasks_per_chain):
    """Grouping a chain's K blocks into fewer tasks keeps the sums' order (k ascending, in place): the
    result is the same bits as one task per block and as the whole-array core call's chain."""
    rng = np.random.default_rng(4)
    A, B = _values(rng, (64, 400), np.float32), _values(rng, (400, 48), np.float32)
    a, b = da.from_array(A, chunks=(32, 37)), da.from_array(B, chunks=(37, 24))  # 11 K blocks
    c = gkd.matmul(a, b, task_macs=task_macs)
    one_per_block = gkd.matmul(a, b, task_macs=1).compute(scheduler="sync")
    partial_tasks = [k for k in dict(c.__dask_graph__()) if isinstance(k, tuple) and "partial" in k[0]]
    assert len(partial_tasks) == 2 * 2 * tasks_per_chain
    assert np.array_equal(c.compute(scheduler="threads"), one_per_block)
    np.testing.assert_allclose(one_per_block, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)
    assert gkd.matmul(a, b, task_macs=1).name != gkd.matmul(a, b, task_macs=1e12).name  # distinct graphs, keys
    with pytest.raises(ValueError, match="task_macs"):
        gkd.matmul(a, b, task_macs=0)


def test_k_rechunked_to_the_memory_budget():
    a = da.ones((1000, 5000), chunks=(250, 700))
    b = da.ones((5000, 800), chunks=(600, 400))
    c = gkd.matmul(a, b, block_bytes=8 << 20)
    # one A block (250 x kc), one B block (kc x 400) and one C block (250 x 400) in 8 MiB of float64
    assert c.shape == (1000, 800)
    got = c.compute(scheduler="sync")
    assert np.array_equal(got, np.full((1000, 800), 5000.0))
    k_chunks = gkd._k_chunks(a, b, np.float64, 8 << 20)
    assert sum(k_chunks) == 5000 and len(set(k_chunks[:-1])) == 1
    kc = k_chunks[0]
    assert (250 * kc + kc * 400 + 250 * 400) * 8 <= 8 << 20


def test_errors_when_the_graph_is_built():
    a = da.ones((10, 20), chunks=5)
    with pytest.raises(ValueError, match="a has 20 columns"):
        gkd.matmul(a, da.ones((21, 3), chunks=5))
    with pytest.raises(ValueError, match="must be 2-D"):
        gkd.matmul(a, da.ones((20,), chunks=5))
    with pytest.raises(TypeError, match="int64 has no kernels"):
        gkd.matmul(da.ones((4, 4), dtype=np.int64, chunks=2), da.ones((4, 4), dtype=np.int64, chunks=2))


def test_zero_k_gives_zeros():
    c = gkd.matmul(da.ones((5, 0), chunks=2), da.ones((0, 3), chunks=2))
    assert np.array_equal(c.compute(scheduler="sync"), np.zeros((5, 3)))


def test_task_threads_follow_the_scheduler(monkeypatch):
    import dask
    monkeypatch.delenv("GEMMKIT_NUM_THREADS", raising=False)
    with dask.config.set(scheduler="threads"):
        assert gkd._task_threads() == 1
    with dask.config.set(scheduler="sync"):
        assert gkd._task_threads() >= 1
    monkeypatch.setenv("GEMMKIT_NUM_THREADS", "3")
    with dask.config.set(scheduler="threads"):
        assert gkd._task_threads() == 3


@pytest.fixture(scope="module")
def cluster_client():
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None)
    client = distributed.Client(cluster)
    try:
        yield client
    finally:
        client.close()
        cluster.close()


def test_matmul_on_a_local_cluster_with_worker_processes(cluster_client):
    rng = np.random.default_rng(4)
    for dtype in ("float32", "float64", "complex128"):
        A, B = _values(rng, (130, 170), dtype), _values(rng, (170, 90), dtype)
        c = gkd.matmul(da.from_array(A, chunks=(40, 50)), da.from_array(B, chunks=(60, 45)))
        got = cluster_client.compute(c).result()
        wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
        _close(got, A.astype(wide) @ B.astype(wide), 170, dtype)
        assert np.array_equal(got, c.compute(scheduler="sync")), "not deterministic across schedulers"
    # a task in a worker computes on one gemmkit thread: 2 workers x 1 thread = 2 busy cores (unless
    # GEMMKIT_NUM_THREADS, which the workers inherit, says otherwise)
    expected = int(os.environ.get("GEMMKIT_NUM_THREADS") or 1)
    threads = cluster_client.run(gkd._task_threads)
    assert len(threads) == 2 and all(t == expected for t in threads.values())


# ---- per-token int8 ------------------------------------------------------------------------------------

def _per_token_case(rng, m, k, n):
    X = rng.integers(-128, 128, (m, k)).astype(np.int8)
    W = rng.integers(-128, 128, (k, n)).astype(np.int8)
    deq = rng.uniform(1e-3, 1e-2, n).astype(np.float32)
    pt = rng.uniform(0.5, 2.0, m).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    return X, W, deq, pt, bias


def _bits(y):
    return y.view(np.uint16 if y.dtype.itemsize == 2 else np.uint32)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(m=st.integers(1, 70), k=st.integers(0, 300), n=st.integers(1, 70), cm=st.integers(1, 40),
       ck=st.integers(1, 120), cn=st.integers(1, 40), out_dtype=st.sampled_from(["float16", "bfloat16", "float32"]),
       with_bias=st.booleans(), seed=st.integers(0, 2**31))
def test_matmul_per_token_is_bit_identical_to_the_whole_array_product(m, k, n, cm, ck, cn, out_dtype, with_bias, seed):
    pytest.importorskip("ml_dtypes")
    from gemmkit import quant
    X, W, deq, pt, bias = _per_token_case(np.random.default_rng(seed), m, k, n)
    bias = bias if with_bias else None
    want = quant.matmul_per_token(X, W, deq, pt, out_dtype=out_dtype, bias=bias)
    y = gkd.matmul_per_token(da.from_array(X, chunks=(cm, max(1, ck))), da.from_array(W, chunks=(max(1, ck + 7), cn)),
                             deq, pt, out_dtype=out_dtype, bias=bias)
    got = y.compute(scheduler="threads")
    assert got.dtype == want.dtype and got.shape == want.shape
    assert np.array_equal(_bits(got), _bits(want))


def test_matmul_per_token_errors_when_the_graph_is_built():
    x, w = da.zeros((4, 6), dtype=np.int8, chunks=2), da.zeros((6, 5), dtype=np.int8, chunks=2)
    deq, pt = np.ones(5, np.float32), np.ones(4, np.float32)
    with pytest.raises(TypeError, match="must be int8"):
        gkd.matmul_per_token(x.astype(np.int16), w, deq, pt)
    with pytest.raises(ValueError, match="x has 6 columns but weight has 7 rows"):
        gkd.matmul_per_token(x, da.zeros((7, 5), dtype=np.int8, chunks=2), deq, pt)
    with pytest.raises(ValueError, match=r"deq_scale must have shape \(5,\)"):
        gkd.matmul_per_token(x, w, np.ones(4, np.float32), pt)
    with pytest.raises(TypeError, match="per_token_scale must be float32"):
        gkd.matmul_per_token(x, w, deq, np.ones(4))
    with pytest.raises(TypeError, match="out_dtype"):
        gkd.matmul_per_token(x, w, deq, pt, out_dtype="int32")
    with pytest.raises(ValueError, match="int32 accumulators"):
        gkd.matmul_per_token(da.zeros((2, 200000), dtype=np.int8, chunks=(2, 50000)),
                             da.zeros((200000, 2), dtype=np.int8, chunks=(50000, 2)), np.ones(2, np.float32),
                             np.ones(2, np.float32))


def test_matmul_per_token_on_a_local_cluster(cluster_client):
    pytest.importorskip("ml_dtypes")
    from gemmkit import quant
    X, W, deq, pt, bias = _per_token_case(np.random.default_rng(8), 160, 700, 90)
    want = quant.matmul_per_token(X, W, deq, pt, out_dtype="bfloat16", bias=bias)
    y = gkd.matmul_per_token(da.from_array(X, chunks=(50, 256)), da.from_array(W, chunks=(256, 40)), deq, pt,
                             out_dtype="bfloat16", bias=bias)
    got = cluster_client.compute(y).result()
    assert np.array_equal(_bits(got), _bits(want))
