"""Tests of the benchmark package (cases modules, timing, report formatting, peak probe, plot on a tiny run)
and pytest-benchmark cases of gemmkit against NumPy and oneDNN (those need pytest-benchmark, else skipped).

    python -m pytest bench/test_bench.py -q                      # the tests, ~20 s; benchmark cases too
    python -m pytest bench --benchmark-only                       # only the pytest-benchmark cases
    taskset -c 0 env OPENBLAS_NUM_THREADS=1 python -m pytest bench --benchmark-only   # one core

The oneDNN cases need ``pip install onednn``; GFLOP/s (GOP/s for int8) of the mean time is added to
extra_info. bench/run_bench.py gives the fuller, median-based comparison.
"""
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
# bench/ is a package, so pytest puts the checkout first on sys.path when it imports this file; there
# gemmkit/ is the source folder without its compiled extension: test the installed gemmkit instead.
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != os.path.dirname(HERE)]

np = pytest.importorskip("numpy")
gemmkit = pytest.importorskip("gemmkit")


def _load_bench_package():
    """bench/ as the package gemmkit_bench, the way bench/run_bench.py loads it."""
    spec = importlib.util.spec_from_file_location("gemmkit_bench_entry", os.path.join(HERE, "run_bench.py"))
    entry = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(entry)
    return entry.load_package()


_load_bench_package()
from gemmkit_bench import cases, context, machine, onednn, peers, plot, report, timing  # noqa: E402
from gemmkit_bench.cases import common  # noqa: E402

# Installed but switched off (-p no:benchmark) or absent: skip the benchmark cases, run the tests.
needs_benchmark = pytest.mark.skipif("not config.pluginmanager.hasplugin('benchmark')",
                                     reason="pytest-benchmark plugin is missing or disabled")
# A quarter of a second of rounds per case keeps the file quick; run_bench.py is the careful measurement.
quick_benchmark = pytest.mark.benchmark(max_time=0.25, min_rounds=3)


# ------------------------------------------------------------------------------------------------------
# the package: cases modules, timing, report, peaks, plot
# ------------------------------------------------------------------------------------------------------
def _args(**kw):
    """Arguments as cli.parse_args gives them, for a tiny run."""
    from gemmkit_bench import cli
    a = cli.parse_args(["--quick", "--no-probe", "--no-reexec", "--sizes", "16,24", "--target", "0.01"])
    for k, v in kw.items():
        setattr(a, k, v)
    return a


@pytest.fixture
def ctx():
    """A Context on one thread with made-up peaks (no probe, no waiting)."""
    c = context.Context(_args(), np, gemmkit, sorted(os.sched_getaffinity(0))[:1], 1)
    c.peers, c.pools = peers.Peers(), peers.Pools(1)
    c.set_peaks({"fp32 ymm FMA": 100.0, "int16 ymm VPMADDWD": 120.0, "stream read": 10.0}, source="test")
    c.say = lambda msg: None
    return c


def test_every_op_has_its_cases_module():
    mods = cases.modules()
    assert {"sgemm", "dgemm", "cgemm", "zgemm", "int8", "bf16", "matmul", "onnx_gemm", "dask", "arch",
            "latency"} <= set(mods)
    for name, m in mods.items():
        assert m.__doc__ and len(m.__doc__.strip().splitlines()) >= 1, name
        for op in m.OPS:
            assert op.group == name, (name, op.group)
    assert list(mods)[:2] == ["sgemm", "dgemm"] and list(mods)[-1] == "latency"
    with pytest.raises(KeyError, match="frobnicate"):
        cases.selected_ops(["frobnicate"])


def test_a_new_op_is_one_new_module(tmp_path, monkeypatch, ctx):
    """A module dropped beside the others is found, run by the generic runner and reported."""
    (tmp_path / "fakeop.py").write_text(
        "from gemmkit_bench.cases.common import Case, Op\n"
        "class FakeOp(Op):\n"
        "    name = group = 'fakeop'\n"
        "    title = 'fake'\n"
        "    peak_kind = 'fp32'\n"
        "    columns = [('gemmkit', 'gemmkit'), ('numpy', 'NumPy')]\n"
        "    def specs(self, ctx):\n"
        "        return [(2, 2, 2)]\n"
        "    def build(self, ctx, spec):\n"
        "        return Case('2×2×2', 1e6, {'gemmkit': lambda: None, 'numpy': lambda: sum(range(200))})\n"
        "OPS = [FakeOp()]\n")
    monkeypatch.setattr(cases, "__path__", list(cases.__path__) + [str(tmp_path)])
    monkeypatch.delitem(sys.modules, "gemmkit_bench.cases.fakeop", raising=False)
    assert "fakeop" in cases.modules()
    (op,) = cases.selected_ops(["fakeop"])
    out = report.Out(echo=None)
    op.run(ctx, out, lambda label: None)
    text = "\n".join(out.lines)
    assert "| case | gemmkit | NumPy | gk/NumPy | gk % peak |" in text, text
    assert "| 2×2×2" in text and any(r["op"] == "fakeop" and r["lib"] == "numpy" for r in ctx.raw)


def test_a_heavy_module_runs_only_when_named(tmp_path, monkeypatch):
    """DEFAULT = False: left out of a run that names no modules (and of --only's default), run when named."""
    from gemmkit_bench import cli
    (tmp_path / "heavyop.py").write_text(
        '"""A heavy op."""\n'
        "from gemmkit_bench.cases.common import Op\n"
        "DEFAULT = False\n"
        "class HeavyOp(Op):\n"
        "    name = group = 'heavyop'\n"
        "OPS = [HeavyOp()]\n")
    monkeypatch.setattr(cases, "__path__", list(cases.__path__) + [str(tmp_path)])
    monkeypatch.delitem(sys.modules, "gemmkit_bench.cases.heavyop", raising=False)
    default = cases.default_modules()
    assert "heavyop" in cases.modules() and "heavyop" not in default and {"sgemm", "matmul"} <= set(default)
    groups = {op.group for op in cases.selected_ops()}
    assert "heavyop" not in groups and "sgemm" in groups
    assert [op.group for op in cases.selected_ops(["heavyop"])] == ["heavyop"]
    assert cli.parse_args([]).sections == default
    assert cli.parse_args(["--only", "heavyop,sgemm"]).sections == ["heavyop", "sgemm"]


@pytest.mark.parametrize("group", ["sgemm", "dgemm", "cgemm", "zgemm", "int8", "bf16", "matmul", "gemv", "onnx_gemm"])
def test_cases_compute_the_right_product(ctx, group):
    """Every library of every case of an op gives the product its check accepts, on tiny sizes."""
    for op in cases.selected_ops([group]):
        specs = op.specs(ctx)
        if not specs and any(n.startswith(op.name + ": left out") for n in ctx.notes):
            continue    # an optional dependency of this table is missing (bfloat16 without ml_dtypes)
        assert specs, group
        for spec in specs[:3]:
            case = op.build(ctx, spec)
            assert "gemmkit" in case.fns or "gk_u8" in case.fns
            assert case.ops > 0
            for key, fn in case.fns.items():
                fn()
                if key in case.unchecked:
                    continue   # a reference without a product (gemv's plain read)
                wrong = case.check(key, case.outs[key])
                if key.startswith("dnnl") and "VNNI" not in str(ctx.probed):
                    continue   # oneDNN's non-VNNI u8s8s32 saturates pairs of products (vpmaddubsw)
                assert wrong is None, (group, spec, key, wrong)


def test_bf16_rows_and_the_best_peer_ratio(ctx):
    """Squares (4096 not with --quick), x @ W^T at M = 1, 16, 128 otherwise; gk against the faster bf16 peer;
    % of the fp32 FMA peak where the probe found no bf16 unit."""
    pytest.importorskip("ml_dtypes")
    from gemmkit_bench.cases import bf16
    (op,) = cases.selected_ops(["bf16"])
    assert op.specs(ctx) == [(16, 16, 16, "N"), (24, 24, 24, "N")]
    ctx.args.sizes = None
    assert ctx.args.quick and op.specs(ctx) == [(256, 256, 256, "N")]
    full = op.specs(context.Context(_args(quick=False, sizes=None), np, gemmkit, [0], 1))
    assert full == [(256, 256, 256, "N"), (1024, 1024, 1024, "N"), (4096, 4096, 4096, "N"),
                    (1, 4096, 4096, "T"), (16, 4096, 4096, "T"), (128, 4096, 4096, "T")]
    assert op.label(full[3]) == "1×4096×4096 Wᵀ" and op.label(full[0]) == "256×256×256"
    meas = {k: timing.Meas([t], 1) for k, t in (("gemmkit", 1e-3), ("onednn", 4e-3), ("mkl", 2e-3),
                                                ("gk_sgemm", 1e-3))}
    out = report.Out(echo=None)
    op.write(ctx, out, [(common.Case("10×10×10", 50e6, {}, x=10), meas, "")])
    text = "\n".join(out.lines)
    assert ("| case | gemmkit bf16bf16f32 | oneDNN bf16bf16f32 | MKL bf16bf16f32 | gemmkit sgemm | "
            "gk/best bf16 peer | gk % peak |") in text, text
    assert "| 10×10×10 | 50.0 | 12.5 | 25.0 | 50.0 | 2.00 | 50% |" in text, text
    assert "no bf16 unit: the fp32 FMA peak, fp32 ymm FMA" in text, text
    assert bf16.bfloat16(np).name == "bfloat16"


def _bf16_operands(rng, M, N, K, ta, tb):
    import ml_dtypes
    A = (rng.random((K, M) if ta == "T" else (M, K)) * 2 - 1).astype(ml_dtypes.bfloat16)
    B = (rng.random((N, K) if tb == "T" else (K, N)) * 2 - 1).astype(ml_dtypes.bfloat16)
    C = rng.random((M, N)).astype(np.float32)
    opA = (A.T if ta == "T" else A).astype(np.float64)
    opB = (B.T if tb == "T" else B).astype(np.float64)
    return A, B, C, opA, opB


def _bf16_peer_matches_float64(gemm):
    """gemm(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) on small random bfloat16 operands in every
    transpose, alpha and beta not 0 / 1: within the float32 bound of a float64 product of the same values."""
    pytest.importorskip("ml_dtypes")
    rng = np.random.default_rng(7)
    eps = float(np.finfo(np.float32).eps)
    for ta in "NT":
        for tb in "NT":
            for M, N, K in ((1, 1, 1), (5, 7, 3), (37, 45, 129), (64, 33, 256)):
                A, B, C, opA, opB = _bf16_operands(rng, M, N, K, ta, tb)
                want = 1.5 * (opA @ opB) - 0.5 * C.astype(np.float64)
                got = gemm(ta, tb, M, N, K, 1.5, A, A.shape[1], B, B.shape[1], -0.5, C, N)
                assert got is None or got is C
                err = float(np.max(np.abs(C.astype(np.float64) - want)))
                assert err <= 8 * eps * (1.5 * K + 1) + 100 * eps, (ta, tb, M, N, K, err)


def test_onednn_gemm_bf16bf16f32_matches_float64():
    lib = onednn.load()
    if lib is None:
        pytest.skip(f"oneDNN: {onednn.why_unavailable()}")
    if not lib.has_bf16:
        pytest.skip(f"{lib.path} does not export dnnl_gemm_bf16bf16f32")
    _bf16_peer_matches_float64(lib.gemm_bf16bf16f32)
    A = np.zeros((2, 2), np.float32)
    with pytest.raises(TypeError, match="uint16"):
        lib.gemm_bf16bf16f32("N", "N", 2, 2, 2, 1.0, A, 2, A, 2, 0.0, A, 2)


def test_mkl_cblas_gemm_bf16bf16f32_matches_float64():
    from gemmkit_bench import mkl
    lib = mkl.load()
    if lib is None:
        pytest.skip(f"MKL: {mkl.why_unavailable()}")
    if not lib.has_bf16:
        pytest.skip(f"{lib.path} does not export cblas_gemm_bf16bf16f32")
    _bf16_peer_matches_float64(lib.gemm_bf16bf16f32)
    A = np.zeros((2, 2), np.float32)
    with pytest.raises(TypeError, match="bfloat16"):
        lib.gemm_bf16bf16f32("N", "N", 2, 2, 2, 1.0, A, 2, A, 2, 0.0, A, 2)


def test_matmul_covers_stacks_complex_and_float16(ctx):
    ops = {op.dtype: op for op in cases.selected_ops(["matmul"])}
    assert set(ops) == {"float32", "float64", "complex64", "complex128", "float16"}
    assert (100, 64) in ops["float64"].specs(ctx) and ops["complex64"].stacks == ()
    big = ops["float16"].build(ctx, (1, 512))
    assert set(big.fns) == {"gemmkit"}               # NumPy's float16 loop is left out above 256
    c = ops["complex128"].build(ctx, (1, 16))
    assert c.ops == 8 * 16 ** 3
    c.fns["gemmkit"]()
    assert c.check("gemmkit", c.outs["gemmkit"]) is None
    c.outs["gemmkit"][3, 5] += 1e-3j                # an error in the imaginary part alone is caught
    assert "max |err|" in c.check("gemmkit", c.outs["gemmkit"])


def test_onnx_gemm_without_its_peers(ctx, monkeypatch):
    """No onnx/onnxruntime: gemmkit alone, the reason in the notes; no onnxruntime: onnx.reference stays."""
    from gemmkit_bench.cases import onnx_gemm
    monkeypatch.setattr(onnx_gemm, "onnx_peers", lambda: (None, None, ("onnx is not installed (test)",)))
    op = onnx_gemm.OnnxGemmOp("float32")
    case = op.build(ctx, (16, 16, 16))
    assert set(case.fns) == {"gemmkit"} and "onnx_gemm: onnx is not installed (test)" in ctx.notes
    case.fns["gemmkit"]()
    assert case.check("gemmkit", case.outs["gemmkit"]) is None
    case.outs["gemmkit"][0, 0] += 1                   # the bias counts in the check
    assert "max |err|" in case.check("gemmkit", case.outs["gemmkit"])
    assert "not installed" in op.footnote
    onnx = pytest.importorskip("onnx")
    monkeypatch.setattr(onnx_gemm, "onnx_peers", lambda: (onnx, None, ("onnxruntime is not installed (test)",)))
    op = onnx_gemm.OnnxGemmOp("int64")
    case = op.build(ctx, (16, 16, 16))
    assert set(case.fns) == {"gemmkit", "reference"}
    assert set(op.build(ctx, (300, 300, 300)).fns) == {"gemmkit"}    # the reference only up to 256
    for key, fn in case.fns.items():
        fn()
        assert case.check(key, case.outs[key]) is None, key


def test_onnx_gemm_model_loads_in_onnxruntime():
    """The one-node model: ir_version 8, opset 13, runs in ONNX Runtime and gives A @ B + C."""
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from gemmkit_bench.cases import onnx_gemm
    model = onnx_gemm.one_node_model(onnx, np.dtype(np.float32))
    assert model.ir_version == 8 and model.opset_import[0].version == 13
    A, B, C = (np.arange(n, dtype=np.float32).reshape(s) for n, s in ((6, (2, 3)), (12, (3, 4)), (4, (1, 4))))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    np.testing.assert_array_equal(sess.run(None, {"A": A, "B": B, "C": C})[0], A @ B + C)


def test_dask_case_on_a_tiny_cluster(ctx):
    """A LocalCluster of one single-threaded worker: both libraries' column sums pass the exact check, a
    wrong one does not, and the table says how much memory the workers took."""
    pytest.importorskip("distributed")
    pytest.importorskip("dask.array")
    from gemmkit_bench.cases import dask as dask_case
    assert "dask" not in cases.default_modules()      # heavy: only with --only dask
    (op,) = cases.selected_ops(["dask"])
    specs = op.specs(ctx)
    assert specs == [(16, 4), (24, 6)] and dask_case.chunk_of(8192) == 1024
    with op.cluster(ctx):
        case = op.build(ctx, specs[0])
        assert set(case.fns) == {"gemmkit", "dask"} and case.ops == 2 * 16 ** 3
        for key, fn in case.fns.items():
            fn()
            assert case.check(key, case.outs[key]) is None, key
        wrong = case.outs["gemmkit"].copy()
        wrong[7] += 1
        assert case.check("gemmkit", wrong) == "1 of 16 column sums differ (expected exact)"
    assert op.client is None
    assert "16×16×16 (4² chunks): gemmkit.dask.matmul" in op.footnote


def test_dask_without_dask_writes_nothing(ctx, monkeypatch):
    from gemmkit_bench.cases import dask as dask_case
    monkeypatch.setattr(dask_case, "why_unavailable", lambda: "dask is not installed (test)")
    out = report.Out(echo=None)
    dask_case.DaskMatmulOp().run(ctx, out, lambda label: None)
    assert out.lines == [] and "dask: left out, dask is not installed (test)" in ctx.notes


def test_work_in_child_processes_is_ours():
    """The wall clock for other processes' work, left out of the footer's tally; children count as ours."""
    clock = timing.Clock("cpu")
    with clock.wall_for_other_processes():
        assert clock.kind == "wall"
        clock.wall_s += 5
    assert clock.kind == "cpu" and clock.wall_s == 0
    pytest.importorskip("psutil")
    child = subprocess.Popen([sys.executable, "-c", "import time; t = time.time()\nwhile time.time() - t < 0.3: pass"])
    try:
        assert child.pid in machine.live_children_cpu_s()
    finally:
        child.wait()


def test_check_catches_a_wrong_result(ctx):
    A = common.random(ctx, (20, 30), np.float32)
    B = common.random(ctx, (30, 10), np.float32)
    C = A @ B
    assert common.check_rows(ctx, C, A, B, 30) is None
    C[0, 3] += 1e-2
    assert "max |err|" in common.check_rows(ctx, C, A, B, 30)
    Ai = common.random(ctx, (8, 8), np.uint8)
    Bi = common.random(ctx, (8, 8), np.int8)
    Ci = (Ai.astype(np.int32) @ Bi.astype(np.int32))
    assert common.check_rows(ctx, Ci, Ai, Bi, 8, exact=True) is None
    Ci[-1, -1] += 1
    assert "expected exact" in common.check_rows(ctx, Ci, Ai, Bi, 8, exact=True)
    assert common.aligned_empty(np, (3, 5), np.float64).ctypes.data % 64 == 0


def test_timing_medians_and_failures():
    clock = timing.Clock("wall")

    def boom():
        raise RuntimeError("no")
    res = timing.run_group({"ok": lambda: sum(range(1000)), "bad": boom}, 0.01, clock)
    assert isinstance(res["ok"], timing.Meas) and res["ok"].reps >= 3 and res["ok"].median > 0
    assert isinstance(res["bad"], timing.Failed) and "RuntimeError: no" in res["bad"].err
    assert clock.wall_s > 0
    assert timing.Meas([3.0, 1.0, 2.0], 1).median == 2.0


def test_timing_rewarms_after_another_library():
    """A one-call sample of a library follows an untimed call of the same library, not another's."""
    log = []
    fns = {k: (lambda k=k: (log.append(k), time.sleep(2e-3))) for k in "ab"}
    timing.run_group(fns, 0.0, timing.Clock("wall"), min_reps=4)
    rounds = log[-8:]
    assert rounds == ["a", "a", "b", "b"] * 2, log


def test_report_formatting(ctx):
    assert report.fmt_rate(123.4) == "123" and report.fmt_rate(12.34) == "12.3" and report.fmt_rate(1.234) == "1.23"
    assert report.fmt_rate(None) == "–"
    assert report.ratio(3.0, 2.0) == "1.50" and report.ratio(1.0, None) == "–" and report.ratio(1.0, 0) == "–"
    assert report.pct(50.0, 200.0) == "25%" and report.pct(1.0, None) == "–"
    out = report.Out(echo=None)
    report.table(out, ["a", "b"], [[1, 2]])
    assert out.lines == ["| a | b |", "|:---|---:|", "| 1 | 2 |"]
    m = timing.Meas([0.5e-3] * 3, 1)
    m.bad = "max |err| 1"
    assert report.cell(ctx, m, 1e6, "x") == "2.00 ✗" and "x: RESULT MISMATCH, max |err| 1" in ctx.notes
    assert report.cell(ctx, timing.Failed(ValueError("v")), 1e6, "y") == "err"


def test_op_table_ratios_peak_and_memory_bound(ctx):
    """The generic table: a column per library present, gk/peer per peer, % of peak, ᵐ for GEMV rows."""
    op = cases.selected_ops(["sgemm"])[0]
    meas = {k: timing.Meas([t], 1) for k, t in (("gemmkit", 1e-3), ("numpy", 2e-3), ("mkl", 4e-3))}
    square = common.Case("10×10×10", 50e6, {}, x=10)          # 50 GFLOP/s for gemmkit
    gemv = common.Case("1×100×100", 2e6, {}, bound=("stream", 0.5))   # 2 GFLOP/s of a 5 GFLOP/s bound
    out = report.Out(echo=None)
    op.write(ctx, out, [(square, meas, ""), (gemv, meas, "‡")])
    text = "\n".join(out.lines)
    assert "| case | gemmkit | NumPy matmul | MKL sgemm | gk/NumPy matmul | gk/MKL sgemm | gk % peak |" in text, text
    assert "| 10×10×10 | 50.0 | 25.0 | 12.5 | 2.00 | 4.00 | 50% |" in text, text
    assert "| 1×100×100‡ | 2.00 | 1.00 | 0.50 | 2.00 | 4.00 | 40%ᵐ |" in text, text
    assert "of 1 × 100 GFLOP/s" in text and "streaming-read bound" in text


def test_peaks_from_the_probe_figures():
    probed = {"fp32 ymm FMA": 100.0, "fp64 ymm FMA": 50.0, "int16 ymm VPMADDWD": 110.0, "stream read": 12.0}
    assert machine.peak_per_core("fp32", probed) == (100.0, "fp32 ymm FMA")
    assert machine.peak_per_core("fp64", probed)[0] == 50.0
    assert machine.peak_per_core("int8", probed) == (110.0, "int16 ymm VPMADDWD (no VNNI)")
    wide = dict(probed, **{"fp32 zmm FMA": 240.0, "u8s8 zmm VNNI": 960.0})
    assert machine.peak_per_core("fp32", wide) == (240.0, "fp32 zmm FMA")
    assert machine.peak_per_core("fp64", wide)[0] == 120.0      # half the zmm FMA rate
    assert machine.peak_per_core("int8", wide) == (960.0, "u8s8 zmm VNNI")
    assert machine.peak_per_core("int8", dict(wide, **{"u8s8 AMX tdpbusd": 3900.0})) == (3900.0, "u8s8 AMX tdpbusd")
    assert machine.peak_per_core("fp32", probed, fp32=77.0) == (77.0, "command line")
    # bf16: AMX-BF16, else vdpbf16ps, else (no bf16 unit) the fp32 FMA peak, said so
    assert machine.peak_per_core("bf16", probed) == (100.0, "no bf16 unit: the fp32 FMA peak, fp32 ymm FMA")
    assert machine.peak_per_core("bf16", None, fp32=77.0) == (77.0, "no bf16 unit: the fp32 FMA peak, command line")
    bf16 = dict(wide, **{"bf16 zmm VDPBF16PS": 480.0})
    assert machine.peak_per_core("bf16", bf16) == (480.0, "bf16 zmm VDPBF16PS")
    assert machine.peak_per_core("bf16", dict(bf16, **{"bf16 AMX tdpbf16ps": 1900.0})) == (1900.0, "bf16 AMX tdpbf16ps")
    assert machine.parse_probe_output("bf16 unit: none\n") == {}
    assert machine.parse_probe_output("fp32 ymm FMA: 107.2 GFLOP/s\nstream read: 13.5 GB/s\njunk\n") == \
        {"fp32 ymm FMA": 107.2, "stream read": 13.5}


@pytest.mark.skipif(not any(shutil.which(c) for c in ("cc", "gcc", "clang")), reason="no C compiler")
def test_peak_probe_compiles_and_measures():
    exe, why = machine.compile_probe()
    assert exe is not None, why
    r = subprocess.run([exe, "0.01"], capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stderr
    got = machine.parse_probe_output(r.stdout)
    if "avx2" in open("/proc/cpuinfo").read():
        assert got["fp32 ymm FMA"] > 1 and got["fp64 ymm FMA"] > 0.5 and got["stream read"] > 0.1, got
        assert got["fp32 ymm FMA"] > got["fp64 ymm FMA"]
    line = re.search(r"^flags\s*:(.*)$", open("/proc/cpuinfo").read(), re.M)
    flags = set(line.group(1).split()) if line else set()
    if line and not {"avx512_bf16", "amx_bf16"} & flags:   # the probe finds bf16 units by CPUID, as Linux does
        assert "bf16 unit: none" in r.stdout.splitlines() and not any(k.startswith("bf16") for k in got), r.stdout
    elif "avx512_bf16" in flags:
        assert got["bf16 zmm VDPBF16PS"] > 1, got


def test_thread_pools_of_the_other_libraries_are_quiet_while_one_is_timed():
    pytest.importorskip("threadpoolctl")
    pools = peers.Pools(2)
    if not pools.available():
        pytest.skip("threadpoolctl cannot list the pools")
    before = gemmkit.get_num_threads()
    pools.set_all(2)
    try:
        with pools.only("numpy"):
            assert gemmkit.get_num_threads() == 1
            numpy_pools = [i for i in pools.info() if peers.pool_owner(i) == "numpy"]
            assert all(i["num_threads"] == 2 for i in numpy_pools)
        with pools.only("gk_u8"):
            assert gemmkit.get_num_threads() == 2
            assert all(i["num_threads"] == 1 for i in pools.info() if peers.pool_owner(i) == "numpy")
        assert gemmkit.get_num_threads() == 2
    finally:
        gemmkit.set_num_threads(before)
    assert [peers.owner(k) for k in ("gemmkit", "gk_s8", ("avx2", "u8"), "dnnl_u8", "numpy", "mkl")] == \
        ["gemmkit", "gemmkit", "gemmkit", "onednn", "numpy", "mkl"]


def test_tiny_run_writes_report_json_and_plot(tmp_path):
    """The entry point end to end on tiny sizes: markdown, JSON with every library, and the PNG."""
    pytest.importorskip("matplotlib")
    md, js, png = tmp_path / "r.md", tmp_path / "r.json", tmp_path / "r.png"
    cmd = [sys.executable, os.path.join(HERE, "run_bench.py"), "--quick", "--sizes", "16,32", "--only",
           "dgemm,zgemm", "--target", "0.005", "--no-probe", "--peak-fp32", "100", "--peak-int8", "200",
           "--no-reexec", "--no-snapshot", "--no-progress", "--markdown", str(md), "--json", str(js),
           "--plot", str(png)]
    r = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    text = md.read_text()
    assert "### dgemm (float64)" in text and "### zgemm (complex128" in text and "gk % peak" in text
    assert "| 16×16×16 |" in text.replace("‡", "")
    data = json.loads(js.read_text())
    assert {r["op"] for r in data["results"]} == {"dgemm", "zgemm"}
    assert {"gemmkit", "numpy"} <= {r["lib"] for r in data["results"]}
    assert data["ops"]["dgemm"]["peak"] == 50.0
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and png.stat().st_size > 10000
    png2 = tmp_path / "again.png"
    assert plot.plot_runs([data, dict(data, threads=2)], str(png2)) == ["dgemm", "zgemm"] and png2.exists()


def test_side_by_side_table_of_several_thread_counts():
    from gemmkit_bench import cli
    assert cli.without_options(["--threads", "1,all", "--quick", "--json=x", "--plot", "p.png", "-x"],
                               {"--threads", "--json", "--plot"}) == ["--quick", "-x"]
    ops = {"dgemm": {"unit": "GFLOP/s", "ours": ["gemmkit"], "columns": {"gemmkit": "gemmkit", "mkl": "MKL dgemm"}}}

    def run(threads, gk, mkl):
        return {"threads": threads, "git": "abc", "ops": ops, "results": [
            {"op": "dgemm", "case": "8×8×8", "lib": "gemmkit", "rate": gk},
            {"op": "dgemm", "case": "8×8×8", "lib": "mkl", "rate": mkl}]}
    out = report.Out(echo=None)
    report.side_by_side([run(1, 40.0, 20.0), run(2, 80.0, 100.0)], out)
    text = "\n".join(out.lines)
    assert "| case | gemmkit 1t (GFLOP/s) | /MKL dgemm 1t | gemmkit 2t (GFLOP/s) | /MKL dgemm 2t |" in text, text
    assert "| 8×8×8 | 40.0 | 2.00 | 80.0 | 0.80 |" in text, text


# ------------------------------------------------------------------------------------------------------
# pytest-benchmark cases
# ------------------------------------------------------------------------------------------------------
@pytest.fixture(scope="module")
def dnnl():
    lib = onednn.load()
    if lib is None:
        pytest.skip(f"oneDNN: {onednn.why_unavailable()}")
    return lib


def _record(benchmark, ops, unit):
    stats = getattr(benchmark, "stats", None)
    try:
        mean = stats.stats.mean
    except AttributeError:
        return
    if mean:
        benchmark.extra_info[unit] = round(ops / mean / 1e9, 1)


def _sgemm_data(n, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.random((n, n), dtype=np.float32) * 2 - 1
    B = rng.random((n, n), dtype=np.float32) * 2 - 1
    return A, B, np.empty((n, n), np.float32)


def _int8_data(n, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 256, size=(n, n), dtype=np.int16).astype(np.uint8)
    B = rng.integers(-128, 128, size=(n, n), dtype=np.int16).astype(np.int8)
    return A, B, np.empty((n, n), np.int32), np.zeros(1, np.int32)


@needs_benchmark
@quick_benchmark
@pytest.mark.parametrize("n", [256, 1024])
def test_sgemm_gemmkit(benchmark, n):
    A, B, C = _sgemm_data(n)
    benchmark.group = f"sgemm {n}x{n}x{n} NN"
    benchmark(gemmkit.sgemm, "N", "N", n, n, n, 1.0, A, n, B, n, 0.0, C, n)
    _record(benchmark, 2.0 * n ** 3, "GFLOP/s")
    np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-3)


@needs_benchmark
@quick_benchmark
@pytest.mark.parametrize("n", [256, 1024])
def test_sgemm_numpy(benchmark, n):
    A, B, C = _sgemm_data(n)
    benchmark.group = f"sgemm {n}x{n}x{n} NN"
    benchmark(np.matmul, A, B, out=C)
    _record(benchmark, 2.0 * n ** 3, "GFLOP/s")


@needs_benchmark
@quick_benchmark
@pytest.mark.parametrize("n", [256, 1024])
def test_sgemm_onednn(benchmark, dnnl, n):
    A, B, C = _sgemm_data(n)
    benchmark.group = f"sgemm {n}x{n}x{n} NN"
    benchmark(dnnl.sgemm, "N", "N", n, n, n, 1.0, A, n, B, n, 0.0, C, n)
    _record(benchmark, 2.0 * n ** 3, "GFLOP/s")
    np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-3)


def _int8_ref(A, B):
    return (A.astype(np.float64) @ B.astype(np.float64)).astype(np.int64)


@needs_benchmark
@quick_benchmark
@pytest.mark.parametrize("n", [1024])
def test_u8s8s32_gemmkit(benchmark, n):
    A, B, C, co = _int8_data(n)
    benchmark.group = f"u8s8s32 {n}x{n}x{n} NN"
    benchmark(gemmkit.gemm_u8s8s32, "N", "N", "F", n, n, n, 1.0, A, n, 0, B, n, 0, 0.0, C, n, co)
    _record(benchmark, 2.0 * n ** 3, "GOP/s")
    np.testing.assert_array_equal(C, _int8_ref(A, B))


@needs_benchmark
@quick_benchmark
@pytest.mark.parametrize("n", [1024])
def test_u8s8s32_onednn(benchmark, dnnl, n):
    A, B, C, co = _int8_data(n)
    if not {"avx512_vnni", "avx_vnni"} & set(gemmkit.available_archs()):
        A &= 0x7F   # without VNNI oneDNN clamps pairs of u8*s8 products to int16 (vpmaddubsw): keep them exact
    benchmark.group = f"u8s8s32 {n}x{n}x{n} NN"
    benchmark(dnnl.gemm_u8s8s32, "N", "N", "F", n, n, n, 1.0, A, n, 0, B, n, 0, 0.0, C, n, co)
    _record(benchmark, 2.0 * n ** 3, "GOP/s")
    np.testing.assert_array_equal(C, _int8_ref(A, B))


@pytest.mark.parametrize("threads", [1, 2, 3])
def test_stream_read_reads_every_byte(threads):
    """The GEMV cases' streaming-read reference sums every 64-bit word once, on any thread count."""
    from gemmkit_bench.cases import gemv
    lib, why = machine.compile_library()
    if lib is None:
        pytest.skip(why)
    fn = gemv.stream_reader(None)
    words = np.arange(1, 100_003, dtype=np.uint64) * np.uint64(2654435761)
    for n in (0, 1, 7, 8, 33, 1000, words.size):
        assert fn(words.ctypes.data, 8 * n, threads) == int(words[:n].sum(dtype=np.uint64)), n


# ---- the llvm-mca model of the kernels' k loops (bench/model.py) ----

def _model_module():
    from gemmkit_bench import model
    return model


@pytest.fixture(scope="module")
def kernel_asm(tmp_path_factory):
    """Functions of two kernel files compiled as setup.py compiles them (gcc -S)."""
    model = _model_module()
    cc = os.environ.get("CC") or "gcc"
    if shutil.which(cc) is None:
        pytest.skip(f"no C compiler {cc}")
    files = ["csrc/kernels/sgemm_avx2.c", "csrc/kernels/int8_avx512_vnni.c"]
    funcs = {}
    for _src, asm in model.compile_kernels(str(tmp_path_factory.mktemp("asm")), cc, only=files).items():
        funcs.update(model.parse_functions(open(asm).read()))
    return funcs


@pytest.mark.parametrize("kernel, op, compute, steps", [
    ("ukernel_sgemm_avx2_6x16", "sgemm", {("fma", 256): 48}, 4),          # inline asm loop, 4 k per pass
    ("ukernel_cgemm_avx2_3x8", "cgemm", {("fma", 256): 48}, 4),           # the same loop under the complex tile
    ("ukernel_i8_avx512_vnni_12x32", "int8", {("dpbusd", 512): 24}, 1),   # compiler-generated loop
])
def test_model_finds_each_kernels_k_loop(kernel_asm, kernel, op, compute, steps):
    model = _model_module()
    loop = model.find_k_loop(kernel_asm, kernel)
    assert loop is not None and loop.compute == compute
    assert loop.n_compute / model.per_k_step(op, kernel, loop) == steps
    assert model.BRANCH.match(loop.body[-1])   # one pass ends with the branch back


@pytest.mark.skipif(shutil.which("llvm-mca-19") is None, reason="llvm-mca-19 not installed (apt-get install llvm-19)")
def test_model_of_the_avx2_sgemm_loop_on_zen2():
    model = _model_module()
    rows = model.model(cpus=["znver2"], ops=("sgemm", "int8"),
                       files=["csrc/kernels/sgemm_avx2.c", "csrc/kernels/int8_avx2.c"])
    by_op = {r["op"]: r for r in rows}
    assert by_op["sgemm"]["kernel"] == "ukernel_sgemm_avx2_6x16" and by_op["sgemm"]["config"] == "avx2/zen2"
    for r in rows:   # Zen 2: 2 FMA / cycle, 1 vpmaddwd / cycle; both loops run at that bound in llvm-mca
        assert r["bound"] / r["cycles"] >= model.MIN_FRACTION, r
    assert "| znver2 | avx2/zen2 | sgemm |" in model.table(rows)


def test_shape_scan_ranks_every_shape_worst_first():
    """bench/shape_scan.py: every M x N x K of the sides within the limits, in the layout asked, worst ratio first."""
    from gemmkit_bench import shape_scan
    rows = shape_scan.scan("float32", "NT", [3, 16], min_macs=27, max_macs=16 * 16 * 3, rounds=1)
    assert sorted((m, n, k) for _, m, n, k in rows) == [(m, n, k) for m in (3, 16) for n in (3, 16) for k in (3, 16)
                                                         if 27 <= m * n * k <= 16 * 16 * 3]
    assert [r for r, *_ in rows] == sorted(r for r, *_ in rows) and all(r > 0 for r, *_ in rows)
