"""gemmkit.dask.matmul against dask.array.matmul on the same distributed.LocalCluster (2 worker processes
of 1 thread each by default), float32 n x n @ n x n in square chunks: wall time and the peak memory of
each worker (its process RSS sampled during the run), side by side in one run.

    python bench/bench_dask.py --n 8192 --chunk 1024
"""
import argparse
import threading
import time

import numpy as np
import dask.array as da
import distributed

import gemmkit.dask as gkd


def rss_of_workers(client):
    import psutil  # comes with distributed
    return client.run(lambda: psutil.Process().memory_info().rss)


def timed_with_peak_rss(client, collection):
    peaks = {}
    stop = threading.Event()

    def sample():
        while not stop.is_set():
            for addr, rss in rss_of_workers(client).items():
                peaks[addr] = max(peaks.get(addr, 0), rss)
            time.sleep(0.2)

    t = threading.Thread(target=sample, daemon=True)
    t.start()
    t0 = time.perf_counter()
    result = client.compute(collection).result()
    elapsed = time.perf_counter() - t0
    stop.set()
    t.join()
    return result, elapsed, peaks


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=8192)
    ap.add_argument("--chunk", type=int, default=1024)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    n, ch = args.n, args.chunk
    with distributed.LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, distributed.Client(cluster) as client:
        a = da.random.default_rng(0).standard_normal((n, n), chunks=ch, dtype=np.float32)
        b = da.random.default_rng(1).standard_normal((n, n), chunks=ch, dtype=np.float32)
        a, b = client.persist(a), client.persist(b)
        distributed.wait([a, b])
        base = rss_of_workers(client)
        flops = 2.0 * n ** 3
        print(f"# float32 {n}^2 @ {n}^2 in {ch}^2 chunks, LocalCluster of {args.workers} x 1-thread worker processes")
        print("| library | seconds | GFLOP/s | peak worker RSS over the persisted inputs (MiB) |")
        print("|:--|--:|--:|--:|")
        results = {}
        for label, build in (("dask.array.matmul", lambda: a @ b), ("gemmkit.dask.matmul", lambda: gkd.matmul(a, b))):
            c = build()
            results[label], sec, peaks = timed_with_peak_rss(client, c.sum())
            over = max((peaks[w] - base.get(w, 0)) for w in peaks) / 2**20
            print(f"| {label} | {sec:.2f} | {flops / sec / 1e9:.1f} | {over:.0f} |", flush=True)
        print(f"(sums agree to {abs(results['dask.array.matmul'] - results['gemmkit.dask.matmul']) / abs(results['dask.array.matmul']):.1e} relative)")


if __name__ == "__main__":
    main()
