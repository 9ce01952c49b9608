"""gemmkit.dask on a LocalCluster whose worker process is killed in the middle of a product: Dask recomputes
the lost blocks and the result is still bit-identical to the product on the synchronous scheduler."""
import os
import signal
import time

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")
gkd = pytest.importorskip("gemmkit.dask")


@pytest.mark.skipif(not hasattr(signal, "SIGKILL"), reason="needs SIGKILL")
@pytest.mark.parametrize("op", ["matmul", "matmul_per_token"])
def test_killed_worker_mid_product_gives_the_exact_result(op):
    rng = np.random.default_rng(30)
    if op == "matmul":
        A, B = rng.standard_normal((256, 1024)), rng.standard_normal((1024, 128))
    else:
        A = rng.integers(-128, 128, (256, 1024)).astype(np.int8)
        B = rng.integers(-128, 128, (1024, 128)).astype(np.int8)
        deq = rng.uniform(1e-3, 1e-2, 128).astype(np.float32)
        pts = rng.uniform(0.5, 2, 256).astype(np.float32)

    def slow(block):  # inputs that take a while, so that the kill lands mid-product (pickled by value)
        time.sleep(0.03)
        return block

    def product(a, b):
        if op == "matmul":
            return gkd.matmul(a, b, task_macs=1)
        return gkd.matmul_per_token(a, b, deq, pts, out_dtype="float32")

    a = da.from_array(A, chunks=64).map_blocks(slow, dtype=A.dtype)
    b = da.from_array(B, chunks=64).map_blocks(slow, dtype=B.dtype)
    want = product(da.from_array(A, chunks=64), da.from_array(B, chunks=64)).compute(scheduler="sync")
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        pids = client.run(os.getpid)
        future = client.compute(product(a, b))
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and not any(client.processing().values()):
            time.sleep(0.01)
        time.sleep(0.3)  # some blocks done, most still to do
        assert not future.done(), "the product ended before the kill: make the inputs slower"
        victim = sorted(pids)[0]
        os.kill(pids[victim], signal.SIGKILL)
        got = future.result(timeout=180)
        client.wait_for_workers(2, timeout=60)
        assert pids[victim] not in client.run(os.getpid).values(), "the worker was not killed"
    assert got.dtype == want.dtype
    np.testing.assert_array_equal(got, want)
