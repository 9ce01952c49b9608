#!/usr/bin/env python
"""Benchmark of gemmkit.quant.matmul_per_token (int8 x int8 -> float16, per-token scales; weight as given and
prepacked by quant.pack_weight) beside gemmkit's own gemm_s8s8s32 (alone, and + NumPy scaling) and ONNX
Runtime's MatMulIntegerToFloat + Cast (int8 and uint8 x).

    taskset -c 0 python bench/per_token_bench.py --threads 1
    python bench/per_token_bench.py --threads 2 [--sizes 1x4096x4096,16x4096x4096] [--target 1.0]

Every library gets the same inputs; they are timed in interleaved rounds (in a new random order each round:
at M = 1 the weight is about the size of L3, so the order decides who finds it cached) until each has
~--target seconds of samples (at least 5) and the table shows the MEDIAN wall time per call as GOP/s (2*M*N*K ops) and
each one's time over matmul_per_token's, with the weight as given and prepacked (> 1: gemmkit is faster). ONNX Runtime gets the weight as a constant initializer (it prepacks it) and
intra_op_num_threads = --threads. Python-side peak allocation (tracemalloc, one extra call) is shown
against the output's size. Results of each library are checked against matmul_per_token's.
"""
import argparse
import statistics
import time
import tracemalloc

import numpy as np

import gemmkit
from gemmkit import quant

SIZES = [(1, 4096, 4096), (16, 4096, 4096), (128, 4096, 4096), (1024, 1024, 1024)]


def ort_session(m, k, n, w, threads, x_type):
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    a_inputs = ["x", "w", "a_scale", "b_scale"] + (["a_zero_point"] if x_type == "uint8" else [])
    nodes = [helper.make_node("MatMulIntegerToFloat", a_inputs, ["y32"], domain="com.microsoft"),
             helper.make_node("Cast", ["y32"], ["y"], to=TensorProto.FLOAT16)]
    inits = [numpy_helper.from_array(w, "w")]
    if x_type == "uint8":
        inits.append(numpy_helper.from_array(np.array([128], np.uint8), "a_zero_point"))
    graph = helper.make_graph(
        nodes, "per_token",
        [helper.make_tensor_value_info("x", TensorProto.INT8 if x_type == "int8" else TensorProto.UINT8, [m, k]),
         helper.make_tensor_value_info("a_scale", TensorProto.FLOAT, [1]),
         helper.make_tensor_value_info("b_scale", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT16, [m, n])], initializer=inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8  # readable by older onnxruntime releases too
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")  # no pool spinning between calls
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def cases(m, n, k, threads, rng):
    x = rng.integers(-128, 128, (m, k), dtype=np.int8)
    w = rng.integers(-128, 128, (k, n), dtype=np.int8)
    deq = (rng.random(n, dtype=np.float32) * 1e-3).astype(np.float32)
    pts = np.full(m, 0.5, np.float32)  # one token scale: ONNX Runtime's a_scale is per tensor
    out = np.empty((m, n), np.float16)
    c32 = np.empty((m, n), np.int32)
    fns = {}
    fns["matmul_per_token"] = lambda: quant.matmul_per_token(x, w, deq, pts, out=out)
    packed = quant.pack_weight(w)
    fns["matmul_per_token, pack_weight"] = lambda: quant.matmul_per_token(x, packed, deq, pts, out=out)
    fns["gemm_s8s8s32 (int32 only)"] = lambda: gemmkit.gemm_s8s8s32("N", "N", "F", m, n, k, 1.0, x, k, 0, w, n, 0,
                                                                     0.0, c32, n, [0])

    def s8s8_numpy():
        gemmkit.gemm_s8s8s32("N", "N", "F", m, n, k, 1.0, x, k, 0, w, n, 0, 0.0, c32, n, [0])
        return ((c32.astype(np.float32) * deq) * pts[:, None]).astype(np.float16)
    fns["gemm_s8s8s32 + NumPy scaling"] = s8s8_numpy
    try:
        s_i8 = ort_session(m, k, n, w, threads, "int8")
        s_u8 = ort_session(m, k, n, w, threads, "uint8")
        xu = (x.astype(np.int16) + 128).astype(np.uint8)
        feeds_i8 = {"x": x, "a_scale": np.array([0.5], np.float32), "b_scale": deq}
        feeds_u8 = {"x": xu, "a_scale": np.array([0.5], np.float32), "b_scale": deq}
        fns["ORT MatMulIntegerToFloat int8 x + Cast"] = lambda: s_i8.run(None, feeds_i8)[0]
        fns["ORT MatMulIntegerToFloat uint8 x + Cast"] = lambda: s_u8.run(None, feeds_u8)[0]
    except ImportError:
        pass
    return fns, out, c32


def bench(fns, target, clock=time.perf_counter):
    """Median seconds per call of each of fns, interleaved; `clock` times the calls (time.process_time on a
    loaded host: CPU time, the time slices given to other tenants left out)."""
    for fn in fns.values():  # warm up (and ORT's prepacking)
        fn(); fn()
    samples = {name: [] for name in fns}
    names = list(fns)
    order = np.random.default_rng(1)
    start = time.perf_counter()
    while time.perf_counter() - start < target * len(fns) or min(len(s) for s in samples.values()) < 5:
        # a new order every round: whoever runs first finds the last one's weight in the shared L3 cache
        for name in order.permutation(names):
            fn = fns[name]
            t0 = clock()
            fn()
            samples[name].append(clock() - t0)
    return {name: statistics.median(s) for name, s in samples.items()}


def python_peak(fn):
    tracemalloc.start()
    try:
        fn()
        return tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--target", type=float, default=0.6, help="seconds of samples per library and size")
    ap.add_argument("--sizes", default=",".join(f"{m}x{n}x{k}" for m, n, k in SIZES), help="MxNxK,...")
    args = ap.parse_args()
    gemmkit.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    cfg = gemmkit.show_config(print_out=False)
    print(f"gemmkit {cfg['version']} path {cfg['arch']} ({cfg['int8']['kernel']}), threads {args.threads}; "
          f"median wall time per call, GOP/s = 2MNK / time")
    print()
    print("| M x N x K | library | GOP/s | time / matmul_per_token's | time / packed matmul_per_token's | "
          "Python peak / output |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for size in args.sizes.split(","):
        m, n, k = (int(v) for v in size.split("x"))
        fns, out, _ = cases(m, n, k, args.threads, rng)
        fns["matmul_per_token"]()
        ref = out.copy()
        for name, fn in fns.items():
            if name.startswith("ORT") or name.endswith("scaling") or name.endswith("pack_weight"):
                got = fn()
                bad = int(np.sum(got.view(np.uint16) != ref.view(np.uint16)))
                if bad:
                    print(f"  note: {name} differs from matmul_per_token in {bad} of {ref.size} elements")
        times = bench(fns, args.target)
        ops = 2.0 * m * n * k
        base, base_packed = times["matmul_per_token"], times["matmul_per_token, pack_weight"]
        for name, t in times.items():
            peak = python_peak(fns[name])
            print(f"| {m}x{n}x{k} | {name} | {ops / t / 1e9:.1f} | {t / base:.2f} | {t / base_packed:.2f} | "
                  f"{peak / out.nbytes:.2f} |")


if __name__ == "__main__":
    main()
