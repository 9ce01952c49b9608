#!/usr/bin/env python
"""Benchmark of the dynamic W8A8 layer gemmkit.quant.Int8Linear (float32 in: per-token quantize + exact int8
GEMM + per-token x per-channel epilogue, float32 out) against ONNX Runtime's DynamicQuantizeMatMul on the
same float input and int8 weight (one activation scale PER TENSOR there, uint8 activations; PER TOKEN here)
and the NumPy quantize + quant.matmul_per_token pipeline; and quantize_per_token alone (into given outputs, and
allocating them) against a streaming read of the same input and a read that also writes its int8 bytes, the
quantizer's own traffic (bench/stream_read.c).

    taskset -c 0 python bench/w8a8_bench.py --threads 1
    python bench/w8a8_bench.py --threads 2 [--sizes 1,16,128] [--target 0.5] [--repeat 3] [--clock cpu]

Timed in interleaved rounds in a new random order each round (bench/per_token_bench.py's loop), medians per
call; --repeat runs the whole table that many times and prints each (the machine may be shared: take the
median of the repeats). --clock cpu times by process CPU time (time.process_time) instead of the wall clock:
on a loaded host the time slices other tenants take are left out (what a stall on a shared cache or memory
costs stays in). Ratios > 1: gemmkit is faster. The M = 1 rows also give the rate at which the int8 weight
(16 MiB) streams through the layer beside a plain read of the same bytes in the same run.
"""
import argparse
import ctypes
import os
import statistics
import sys
import time

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import gemmkit  # noqa: E402
from gemmkit import quant  # noqa: E402
from per_token_bench import bench  # noqa: E402

K = N = 4096


def ort_session(k, n, wq_kn, w_scale, threads):
    import onnxruntime as ort
    from onnx import TensorProto, helper, numpy_helper
    node = helper.make_node("DynamicQuantizeMatMul", ["x", "w", "w_scale"], ["y"], domain="com.microsoft")
    graph = helper.make_graph(
        [node], "w8a8", [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["m", k])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["m", n])],
        initializer=[numpy_helper.from_array(wq_kn, "w"), numpy_helper.from_array(w_scale, "w_scale")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    # its pool's threads would otherwise spin after each call, holding the cores the next library in the
    # interleaved rounds needs (gemmkit's 2-thread layer measured no faster than 1 thread beside them)
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.inter_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])


def numpy_quantize(x):
    """The documented per-token formula in NumPy (what a user writes today)."""
    scale = np.abs(x).max(-1, keepdims=True) / np.float32(127)
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.clip(np.rint(x / scale), -127, 127)
    q[~np.isfinite(q)] = 0
    return q.astype(np.int8), scale[:, 0]


def stream_reader(name="stream_read"):
    """bench/stream_read.c's `name`: stream_read(p, bytes, threads) or stream_read_narrow(p, bytes, out,
    threads); None (and a note) without a C compiler."""
    try:
        import machine
        lib, why = machine.compile_library()
    except Exception as e:  # noqa: BLE001
        lib, why = None, str(e)
    if lib is None:
        print(f"note: no streaming-read reference ({why})")
        return None
    fn = getattr(ctypes.CDLL(lib), name)
    fn.restype = ctypes.c_uint64
    fn.argtypes = [ctypes.c_void_p, ctypes.c_size_t] + ([ctypes.c_void_p] if name == "stream_read_narrow" else []) + [
        ctypes.c_int]
    return fn


def layer_table(sizes, threads, target, rng, read=None, clock=time.perf_counter):
    w = (rng.standard_normal((N, K)) * 0.02).astype(np.float32)
    bias = None
    layer = quant.Int8Linear.from_float(w, bias)
    wq_kn = np.ascontiguousarray(layer.weight_q.T)
    packed = quant.pack_weight(layer.weight_q, transpose_b=True)
    try:
        sess = ort_session(K, N, wq_kn, np.array(layer.weight_scale), threads)
    except ImportError:
        sess = None
    rows = []
    for m in sizes:
        x = rng.standard_normal((m, K)).astype(np.float32)
        x[:, :8] *= 20  # a few outlier channels
        out = np.empty((m, N), np.float32)

        def numpy_pipeline():
            q, s = numpy_quantize(x)
            return quant.matmul_per_token(q, packed, layer.weight_scale, s, out_dtype="float32")
        fns = {"gemmkit Int8Linear (per-token)": lambda: layer(x, out=out),
               "NumPy quantize + matmul_per_token (per-token)": numpy_pipeline}
        if sess is not None:
            fns["ORT DynamicQuantizeMatMul (per-tensor)"] = lambda: sess.run(None, {"x": x})[0]
        if read is not None and m == 1:
            fns["stream read of the weight"] = lambda: read(wq_kn.ctypes.data, wq_kn.nbytes, threads)
        y = layer(x).copy()
        assert np.array_equal(numpy_pipeline(), y), "the NumPy pipeline must give the layer's bytes"
        note = ""
        if sess is not None:
            ref = x.astype(np.float64) @ w.T.astype(np.float64)
            e_ort = np.abs(sess.run(None, {"x": x})[0] - ref).max() / np.abs(ref).max()
            e_gk = np.abs(y - ref).max() / np.abs(ref).max()
            note = f"max rel. error vs float: gemmkit {e_gk:.2e}, ORT {e_ort:.2e}"
        times = bench(fns, target, clock)
        rows.append((m, times, note))
    return rows


def quantize_table(sizes, threads, target, rng, read, read_narrow=None, clock=time.perf_counter):
    rows = []
    for m in sizes:
        x = rng.standard_normal((m, K)).astype(np.float32)
        q, scale = np.empty((m, K), np.int8), np.empty(m, np.float32)
        fns = {"quantize_per_token": lambda: quant.quantize_per_token(x, out=q, scale_out=scale),
               "quantize_per_token allocating": lambda: quant.quantize_per_token(x),
               "NumPy quantize": lambda: numpy_quantize(x)}
        if read is not None:
            fns["stream read of x"] = lambda: read(x.ctypes.data, x.nbytes, threads)
        if read_narrow is not None:
            fns["stream read of x, write of q"] = lambda: read_narrow(x.ctypes.data, x.nbytes, q.ctypes.data, threads)
        rows.append((m, x.nbytes, bench(fns, target, clock)))
    return rows


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--target", type=float, default=0.5, help="seconds of samples per entry")
    ap.add_argument("--sizes", default="1,16,128", help="token counts M of the layer (K = N = 4096)")
    ap.add_argument("--quant-sizes", default="16,128,1024,8192", help="token counts of quantize alone")
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--clock", choices=("wall", "cpu"), default="wall",
                    help="wall: time.perf_counter; cpu: time.process_time (a loaded host)")
    args = ap.parse_args()
    clock = time.process_time if args.clock == "cpu" else time.perf_counter
    gemmkit.set_num_threads(args.threads)
    rng = np.random.default_rng(0)
    cfg = gemmkit.show_config(print_out=False)
    read, read_narrow = stream_reader(), stream_reader("stream_read_narrow")
    print(f"gemmkit {cfg['version']} path {cfg['arch']} ({cfg['int8']['kernel']}, {_quant_kernel()}), "
          f"threads {args.threads}; median {args.clock} time per call")
    for rep in range(args.repeat):
        print(f"\nrepeat {rep + 1}: layer {K} -> {N}, float32 in and out")
        print("| M | gemmkit Int8Linear ms | ORT DynamicQuantizeMatMul ms | NumPy pipeline ms | ORT / gemmkit | "
              "NumPy / gemmkit |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: |")
        notes = []
        for m, t, note in layer_table([int(v) for v in args.sizes.split(",")], args.threads, args.target, rng,
                                      read, clock):
            g = t["gemmkit Int8Linear (per-token)"]
            o = t.get("ORT DynamicQuantizeMatMul (per-tensor)", float("nan"))
            p = t["NumPy quantize + matmul_per_token (per-token)"]
            print(f"| {m} | {g * 1e3:.3f} | {o * 1e3:.3f} | {p * 1e3:.3f} | {o / g:.2f} | {p / g:.2f} |")
            if note:
                notes.append(f"M={m}: {note}")
            if "stream read of the weight" in t:
                wbytes = K * N
                notes.append(f"M={m}: weight stream {wbytes / g / 1e9:.1f} GB/s through the layer, "
                             f"{wbytes / o / 1e9:.1f} through ORT, plain read "
                             f"{wbytes / t['stream read of the weight'] / 1e9:.1f} GB/s (16 MiB int8)")
        for n in notes:
            print(n)
        print(f"\nrepeat {rep + 1}: quantize alone, x float32 (M, {K}); GB/s of x; 'read + write': a read of x "
              "writing a byte per value, the quantizer's traffic; 'allocating': new q and scale arrays per call")
        print("| M | x MiB | quantize_per_token GB/s | allocating GB/s | stream read GB/s | read + write GB/s | "
              "quantize / read | quantize / (read + write) | NumPy quantize GB/s |")
        print("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
        for m, nbytes, t in quantize_table([int(v) for v in args.quant_sizes.split(",")], args.threads,
                                           args.target, rng, read, read_narrow, clock):
            def rate(name):
                return nbytes / t[name] / 1e9 if name in t else float("nan")
            gq, rd, rw = rate("quantize_per_token"), rate("stream read of x"), rate("stream read of x, write of q")
            print(f"| {m} | {nbytes / 2**20:.2f} | {gq:.1f} | {rate('quantize_per_token allocating'):.1f} | {rd:.1f} | "
                  f"{rw:.1f} | {gq / rd:.2f} | {gq / rw:.2f} | {rate('NumPy quantize'):.1f} |")


def _quant_kernel():
    from gemmkit import _core
    return _core.quantize_kernel_name()


if __name__ == "__main__":
    main()
