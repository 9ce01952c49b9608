"""Shape scan: gemmkit.matmul against np.matmul over every M x N x K drawn from a list of sides, per layout and type,
printing the shapes where gemmkit is furthest behind (the scan that found the few-rows / few-columns gaps; side 1, the
GEMV shapes, since a standard-table run found A^T x at 0.32x NumPy that the scan without it had missed).

    taskset -c 0 python bench/shape_scan.py                            # float32 and float64, NN / NT / TN, one thread
    GEMMKIT_ARCH=avx2 taskset -c 0 python bench/shape_scan.py --layouts NN --worst 20   # another kernel path

Each shape: 9 alternations of a batch of calls of each library (about 2e7 multiply-adds a batch), the ratio of the
medians (NumPy's time / gemmkit's: > 1, gemmkit faster). Products under --min-macs or over --max-macs are skipped.
"""
import argparse
import itertools
import statistics
import time

import numpy as np


def scan(dtype, layout, sides, min_macs=1e5, max_macs=4e9, rounds=9, seed=0):
    """[(ratio, M, N, K)] for every shape of the sides in this layout (op(A) = A^T where layout[0] is T, op(B) alike)."""
    import gemmkit
    rng = np.random.default_rng(seed)
    out = []
    for m, n, k in itertools.product(sides, sides, sides):
        if not min_macs <= m * n * k <= max_macs:
            continue
        A = rng.standard_normal((m, k) if layout[0] == "N" else (k, m)).astype(dtype)
        B = rng.standard_normal((k, n) if layout[1] == "N" else (n, k)).astype(dtype)
        A = A if layout[0] == "N" else A.T
        B = B if layout[1] == "N" else B.T
        C = np.empty((m, n), dtype)
        reps = max(1, int(2e7 / (m * n * k)))
        times = {"gemmkit": [], "numpy": []}
        for _ in range(rounds):
            for name, f in (("gemmkit", gemmkit.matmul), ("numpy", np.matmul)):
                t = time.perf_counter()
                for _ in range(reps):
                    f(A, B, out=C)
                times[name].append(time.perf_counter() - t)
        out.append((statistics.median(times["numpy"]) / statistics.median(times["gemmkit"]), m, n, k))
    return sorted(out)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--dtypes", default="float32,float64")
    ap.add_argument("--layouts", default="NN,NT,TN")
    ap.add_argument("--sides", default="1,3,16,64,256,1000,3000",
                    help="sides M, N, K are drawn from (1: GEMV shapes and outer products)")
    ap.add_argument("--worst", type=int, default=14, help="shapes printed per layout and type")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--min-macs", type=float, default=1e5)
    ap.add_argument("--max-macs", type=float, default=4e9)
    args = ap.parse_args(argv)
    import gemmkit
    from threadpoolctl import threadpool_limits
    gemmkit.set_num_threads(args.threads)
    sides = [int(s) for s in args.sides.split(",")]
    print(f"gemmkit {gemmkit.__version__}, path {gemmkit.get_arch()}, {args.threads} thread(s); "
          "gemmkit / NumPy, worst first")
    with threadpool_limits(args.threads):
        for dtype in args.dtypes.split(","):
            for layout in args.layouts.split(","):
                rows = scan(dtype, layout, sides, args.min_macs, args.max_macs)
                print(dtype, layout, " ".join(f"{m}x{n}x{k}:{r:.2f}" for r, m, n, k in rows[:args.worst]), flush=True)


if __name__ == "__main__":
    main()
