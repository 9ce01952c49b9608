"""gemmkit.blas against scipy.linalg.blas, side by side in one run: per-call time of ?gemm at small sizes
(letting the call allocate c, and with overwrite_c into a Fortran c) and the rate at large ones; medians
of 201 short blocks per library (7 at 512 and up), the blocks alternating.

    taskset -c 0 python bench/bench_blas.py            # 1 thread pinned (both libraries set to 1 thread)
    python bench/bench_blas.py --threads all
"""
import argparse
import os
import platform
import subprocess
import time

import numpy as np
from threadpoolctl import threadpool_limits

import gemmkit
from gemmkit import blas as gk_blas
from scipy.linalg import blas as scipy_blas

DTYPES = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}


def paired_median_seconds(fn_a, fn_b, calls, repeats):
    """Per-call seconds of fn_a and fn_b: medians over `repeats` blocks of `calls` calls, the two
    libraries' blocks alternating, each block far shorter than a scheduler time slice (so that load from
    other processes falls on both alike and spoils few blocks, not one library's every other one)."""
    times = ([], [])
    for _ in range(repeats):
        for fn, out in ((fn_a, times[0]), (fn_b, times[1])):
            t = time.perf_counter()
            for _ in range(calls):
                fn()
            out.append((time.perf_counter() - t) / calls)
    return tuple(sorted(t)[repeats // 2] for t in times)


def cpu_model():
    try:
        with open("/proc/cpuinfo") as f:
            return next(line.split(":", 1)[1].strip() for line in f if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor() or "unknown CPU"


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", default="1", help="1 or 'all'")
    ap.add_argument("--sizes", default="8,32,64,512,2048")
    args = ap.parse_args()
    threads = os.cpu_count() if args.threads == "all" else int(args.threads)
    gemmkit.set_num_threads(threads)
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], capture_output=True, text=True).stdout.strip()
    print(f"# gemmkit.blas vs scipy.linalg.blas: {cpu_model()}, {threads} thread(s), commit {commit or '?'}, "
          f"gemmkit path {gemmkit.get_arch()}")
    print("| call | n | SciPy | gemmkit | SciPy / gemmkit |")
    print("|:--|--:|--:|--:|--:|")
    rng = np.random.default_rng(0)
    with threadpool_limits(threads):
        for p, dt in DTYPES.items():
            for n in (int(s) for s in args.sizes.split(",")):
                a = np.asfortranarray(rng.standard_normal((n, n)).astype(dt))
                b = np.asfortranarray(rng.standard_normal((n, n)).astype(dt))
                c = np.zeros((n, n), dt, order="F")
                calls = max(1, int(1e4 / max(1, n) ** 2)) if n < 512 else 3
                fs, fg = getattr(scipy_blas, p + "gemm"), getattr(gk_blas, p + "gemm")
                for what, call_s, call_g in (
                        ("alloc", lambda: fs(1.0, a, b), lambda: fg(1.0, a, b)),
                        ("overwrite_c", lambda: fs(1.0, a, b, 1.0, c, overwrite_c=1),
                         lambda: fg(1.0, a, b, 1.0, c, overwrite_c=1))):
                    call_s(), call_g()
                    ts, tg = paired_median_seconds(call_s, call_g, calls, 201 if n < 512 else 7)
                    flops = 2.0 * n ** 3 * (4 if p in "cz" else 1)
                    unit = (f"{ts * 1e6:.2f} µs", f"{tg * 1e6:.2f} µs") if n < 512 else (
                        f"{flops / ts / 1e9:.1f} GFLOP/s", f"{flops / tg / 1e9:.1f} GFLOP/s")
                    print(f"| {p}gemm {what} | {n} | {unit[0]} | {unit[1]} | {ts / tg:.2f} |", flush=True)


if __name__ == "__main__":
    main()
