#!/usr/bin/env python
"""ONNX Gemm benchmark: gemmkit.onnx.gemm beside ONNX Runtime (a one-node model) and onnx.reference, per
type and square size, GFLOP/s (2*M*N*K / median time per call; C a (1, N) bias, alpha 1, beta 1).

    taskset -c 0 python bench/bench_onnx_gemm.py --threads 1
    python bench/bench_onnx_gemm.py --threads 2 --types float32 --sizes 64 256 1024

Peers run one after the other over the same inputs; checking results is not done here (tests/test_onnx_gemm.py does); n/a: the peer does not implement that type (or the size is
over --reference-max). With one thread the clock is the process's CPU time (a shared machine's other
processes left out), with more the wall clock.
"""
import argparse
import time

import numpy as np


def one_node_model(dtype):
    from onnx import helper
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    inputs = [helper.make_tensor_value_info(n, elem, None) for n in "ABC"]
    node = helper.make_node("Gemm", ["A", "B", "C"], ["Y"], alpha=1.0, beta=1.0)
    graph = helper.make_graph([node], "gemm", inputs, [helper.make_tensor_value_info("Y", elem, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def median_seconds(fn, target, clock):
    fn()
    times = []
    start = time.perf_counter()
    while len(times) < 3 or (time.perf_counter() - start < target and len(times) < 200):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return float(np.median(times))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--types", nargs="+", default=["float32", "float16", "float64", "bfloat16", "int32",
                                                          "int64"])
    parser.add_argument("--sizes", nargs="+", type=int, default=[64, 256, 512, 1024])
    parser.add_argument("--target", type=float, default=0.5, help="seconds of samples per peer and case")
    parser.add_argument("--reference-max", type=int, default=256, help="largest size onnx.reference runs")
    args = parser.parse_args()

    import onnxruntime as ort
    from onnx.reference import ReferenceEvaluator

    import gemmkit
    from gemmkit import onnx as gk_onnx

    gemmkit.set_num_threads(args.threads)
    clock = time.process_time if args.threads == 1 else time.perf_counter
    options = ort.SessionOptions()
    options.intra_op_num_threads = args.threads
    options.inter_op_num_threads = 1
    rng = np.random.default_rng(0)
    print(f"threads {args.threads}, onnxruntime {ort.__version__}, gemmkit path {gemmkit.get_arch()}")
    print(f"{'type':9} {'size':>5} {'gemmkit':>9} {'onnxrt':>9} {'reference':>9} {'vs ort':>7} {'vs ref':>7}")
    for type_name in args.types:
        if type_name == "bfloat16":
            import ml_dtypes
            dtype = np.dtype(ml_dtypes.bfloat16)
        else:
            dtype = np.dtype(type_name)
        model = one_node_model(dtype)
        try:
            ort_sess = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        except Exception:
            ort_sess = None
        ref_sess = ReferenceEvaluator(model)
        for n in args.sizes:
            if dtype.kind in "iu":
                A, B, C = (rng.integers(-100, 100, size=s).astype(dtype) for s in ((n, n), (n, n), (1, n)))
            else:
                A, B, C = (rng.uniform(-1, 1, size=s).astype(np.float32).astype(dtype)
                           for s in ((n, n), (n, n), (1, n)))
            feeds = {"A": A, "B": B, "C": C}
            flops = 2.0 * n * n * n
            t_gk = median_seconds(lambda: gk_onnx.gemm(A, B, C), args.target, clock)
            t_ort = t_ref = None
            if ort_sess is not None:
                try:
                    t_ort = median_seconds(lambda: ort_sess.run(None, feeds), args.target, clock)
                except Exception:
                    ort_sess = None
            if n <= args.reference_max:
                with np.errstate(all="ignore"):
                    t_ref = median_seconds(lambda: ref_sess.run(None, feeds), args.target, clock)
            def rate(t):
                return f"{flops / t / 1e9:9.1f}" if t else f"{'n/a':>9}"
            def ratio(t):
                return f"{t / t_gk:6.2f}x" if t else f"{'':>7}"
            print(f"{type_name:9} {n:5d} {rate(t_gk)} {rate(t_ort)} {rate(t_ref)} {ratio(t_ort)} {ratio(t_ref)}")


if __name__ == "__main__":
    main()
