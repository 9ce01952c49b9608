"""gemmkit.dask.matmul against NumPy's float64/complex128 product, on the local schedulers and on a real
distributed.LocalCluster with worker processes (started and stopped here): chunkings that agree and that
do not, dtypes, K = 0, determinism, errors raised when the graph is built, threads per task."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

da = pytest.importorskip("dask.array")
gkd = pytest.importorskip("gemmkit.dask")


def _values(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


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
    # a task in a worker computes on one gemmkit thread: 2 workers x 1 thread = 2 busy cores
    threads = cluster_client.run(gkd._task_threads)
    assert len(threads) == 2 and all(t == 1 for t in threads.values())
