"""Benchmark of gemmkit.quant.quantized_add beside ONNX Runtime's com.microsoft QLinearAdd and a plain
copy of the same bytes (np.copyto); run as `taskset -c 0 python bench/bench_quantized_add.py` (1 thread)
or `python bench/bench_quantized_add.py --threads 2`."""
import argparse
import statistics
import time

import numpy as np

import gemmkit
from gemmkit import quant

# Scale sets (a_scale, b_scale, out_scale): "decimal" ones take the kernels' 16-bit fixed-point form (it
# gives the float form's bytes on every input pair of these parameters); "random" ones keep the float
# form (the fixed-point form would differ on some pairs).
SCALES = {"decimal": (0.02, 0.03, 0.05), "random": (0.0123, 0.0456, 0.0789)}
ZERO_POINTS = (128, 3, 125)


def calls_per_sample(fn, sample_s):
    """How many calls make a sample of about sample_s seconds."""
    fn()
    n = 1
    while True:
        t = time.perf_counter()
        for _ in range(n):
            fn()
        if time.perf_counter() - t >= sample_s:
            return n
        n *= 2


def median_seconds(fns, samples=201, sample_s=5e-5):
    """Median seconds per call of each function, their samples taken in turn (side by side, so that
    every function sees the same share of a busy machine); short samples (50 us, or one call), so that
    most of them fall between other processes' time slices on a shared machine."""
    counts = {k: calls_per_sample(fn, sample_s) for k, fn in fns.items()}
    times = {k: [] for k in fns}
    for _ in range(samples):
        for k, fn in fns.items():
            t = time.perf_counter()
            for _ in range(counts[k]):
                fn()
            times[k].append((time.perf_counter() - t) / counts[k])
    return {k: statistics.median(v) for k, v in times.items()}


def ort_session(threads=1):
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
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    # Its pool's threads spin after each run by default, taking the other cores from whatever runs next
    # (gemmkit's threads, the copy) in a side-by-side run: they sleep instead.
    so.add_session_config_entry("session.intra_op.allow_spinning", "0")
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="4096,1048576,16777216", help="elements per tensor, comma-separated")
    ap.add_argument("--threads", type=int, default=1, help="gemmkit and ONNX Runtime threads (default 1)")
    ap.add_argument("--scales", default="decimal,random", help=f"scale sets, of {', '.join(SCALES)}")
    ap.add_argument("--samples", type=int, default=201, help="samples per function (median reported)")
    args = ap.parse_args()
    gemmkit.set_num_threads(args.threads)
    try:
        sess = ort_session(args.threads)
    except ImportError:
        sess = None
    rng = np.random.default_rng(0)
    za, zb, zc = ZERO_POINTS
    print(f"gemmkit {gemmkit.__version__} ({gemmkit.get_arch()}), {args.threads} thread(s); uint8, scalar scales, "
          f"zero points {ZERO_POINTS}; GB/s counts A + B + output bytes; median of {args.samples} samples taken "
          f"in turn. gemmkit: default formula into out=; 'new out': the same allocating its result (as ORT "
          f"does); 'ort f.': formula='onnxruntime' into out=")
    print(f"{'scales':>8} {'elements':>10} {'copy':>7} {'gemmkit':>8} {'new out':>8} {'ort f.':>8} {'ORT':>7} "
          f"{'gk/ORT':>7} {'new/ORT':>8} {'ortf/ORT':>8}")
    for n in (int(s) for s in args.sizes.split(",")):
        a = rng.integers(0, 256, n, dtype=np.uint8)
        b = rng.integers(0, 256, n, dtype=np.uint8)
        out = np.empty(n, np.uint8)
        src, dst = np.empty(3 * n // 2, np.uint8), np.empty(3 * n // 2, np.uint8)  # copy: 3n bytes of traffic
        src[:] = 1
        for scales in args.scales.split(","):
            sa, sb, sc = SCALES[scales]
            fns = {
                "copy": lambda: np.copyto(dst, src),
                "gk": lambda: quant.quantized_add(a, sa, za, b, sb, zb, sc, np.uint8(zc), out=out),
                "gk_new": lambda: quant.quantized_add(a, sa, za, b, sb, zb, sc, np.uint8(zc)),
                "gk_ortf": lambda: quant.quantized_add(a, sa, za, b, sb, zb, sc, np.uint8(zc), out=out,
                                                       formula="onnxruntime"),
            }
            if sess is not None:
                feed = dict(A=a, As=np.array(sa, np.float32), Az=np.array(za, np.uint8), B=b,
                            Bs=np.array(sb, np.float32), Bz=np.array(zb, np.uint8), Cs=np.array(sc, np.float32),
                            Cz=np.array(zc, np.uint8))
                fns["ort"] = lambda: sess.run(None, feed)
            t = median_seconds(fns, samples=args.samples)
            gb = 3 * n / 1e9
            rate = {k: gb / v for k, v in t.items()}
            if sess is not None:
                ort_cols = (f"{rate['ort']:7.2f} {t['ort'] / t['gk']:7.2f} {t['ort'] / t['gk_new']:8.2f} "
                            f"{t['ort'] / t['gk_ortf']:8.2f}")
            else:
                ort_cols = f"{'-':>7} {'-':>7} {'-':>8} {'-':>8}"
            print(f"{scales:>8} {n:>10} {rate['copy']:7.2f} {rate['gk']:8.2f} {rate['gk_new']:8.2f} "
                  f"{rate['gk_ortf']:8.2f} {ort_cols}", flush=True)


if __name__ == "__main__":
    main()
