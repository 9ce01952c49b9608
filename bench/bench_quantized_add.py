"""Benchmark of gemmkit.quant.quantized_add beside ONNX Runtime's com.microsoft QLinearAdd and a plain
copy of the same bytes (np.copyto), one thread; run as `taskset -c 0 python bench/bench_quantized_add.py`."""
import argparse
import statistics
import time

import numpy as np

import gemmkit
from gemmkit import quant


def median_seconds(fn, min_time=0.3, repeats=7):
    fn()
    n = 1
    while True:  # calls per sample so that a sample lasts about min_time / repeats
        t = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t >= min_time / repeats:
            break
        n *= 2
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        for _ in range(n):
            fn()
        samples.append((time.perf_counter() - t) / n)
    return statistics.median(samples)


def ort_session():
    import onnxruntime as ort
    from onnx import TensorProto, helper
    T, F = TensorProto.UINT8, TensorProto.FLOAT
    names = ["A", "As", "Az", "B", "Bs", "Bz", "Cs", "Cz"]
    types = [T, F, T, T, F, T, F, T]
    shapes = [[None], [], [], [None], [], [], [], []]
    inputs = [helper.make_tensor_value_info(n, t, s) for n, t, s in zip(names, types, shapes)]
    node = helper.make_node("QLinearAdd", names, ["C"], domain="com.microsoft")
    graph = helper.make_graph([node], "qladd", inputs, [helper.make_tensor_value_info("C", T, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8  # readable by older onnxruntime releases too
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    so.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="4096,1048576,16777216", help="elements per tensor, comma-separated")
    args = ap.parse_args()
    gemmkit.set_num_threads(1)
    try:
        sess = ort_session()
    except ImportError:
        sess = None
    rng = np.random.default_rng(0)
    print(f"gemmkit {gemmkit.__version__} ({gemmkit.get_arch()}), 1 thread; uint8, scalar scales; GB/s counts "
          f"A + B + output bytes; median of 7 samples")
    print(f"{'elements':>10} {'copy':>8} {'gemmkit':>8} {'gk ort':>8} {'ORT':>8} {'gk/ORT':>7} {'gk ort/ORT':>10}")
    for n in (int(s) for s in args.sizes.split(",")):
        a = rng.integers(0, 256, n, dtype=np.uint8)
        b = rng.integers(0, 256, n, dtype=np.uint8)
        out = np.empty(n, np.uint8)
        src, dst = np.empty(3 * n // 2, np.uint8), np.empty(3 * n // 2, np.uint8)  # copy: 3n bytes of traffic
        src[:] = 1
        zc = np.uint8(125)
        gb = 3 * n / 1e9
        t_copy = median_seconds(lambda: np.copyto(dst, src))
        t_gk = median_seconds(lambda: quant.quantized_add(a, 0.02, 128, b, 0.03, 3, 0.05, zc, out=out))
        t_gko = median_seconds(lambda: quant.quantized_add(a, 0.02, 128, b, 0.03, 3, 0.05, zc, out=out,
                                                           formula="onnxruntime"))
        if sess is not None:
            feed = dict(A=a, As=np.array(0.02, np.float32), Az=np.array(128, np.uint8), B=b,
                        Bs=np.array(0.03, np.float32), Bz=np.array(3, np.uint8), Cs=np.array(0.05, np.float32),
                        Cz=np.array(125, np.uint8))
            t_ort = median_seconds(lambda: sess.run(None, feed))
            ort_cols = f"{gb / t_ort:8.2f} {t_ort / t_gk:7.2f} {t_ort / t_gko:10.2f}"
        else:
            ort_cols = f"{'-':>8} {'-':>7} {'-':>10}"
        print(f"{n:>10} {gb / t_copy:8.2f} {gb / t_gk:8.2f} {gb / t_gko:8.2f} {ort_cols}")


if __name__ == "__main__":
    main()
