"""Per-call latency of a 64×64×64 sgemm through each library's Python entry point (the overhead that
dominates small products): median µs per call over batches of back-to-back calls."""
from .. import report
from ..timing import Failed, Meas, timed
from .common import blas3_case

ORDER = 90
N = 64
CALLS = {"gemmkit": "`gemmkit.sgemm(...)`", "scipy": "`scipy.linalg.blas.sgemm(1, B.T, A.T, c=C.T, overwrite_c=1)`",
         "numpy": "`np.matmul(A, B, out=C)`", "mkl": "`cblas_sgemm` via ctypes", "onednn": "`dnnl_sgemm` via ctypes"}


class LatencyOp:
    name = group = "latency"
    unit = "µs"
    peak_kind = None

    def specs(self, ctx):
        return [N]

    def run(self, ctx, out, tick):
        tick(f"latency {N}³")
        case = blas3_case(ctx, "s", N, N, N)
        res, flag = timed(ctx, "latency", case.fns, min_sample=2e-4, max_samples=5000)
        for key, C in case.outs.items():
            if isinstance(res.get(key), Meas):
                res[key].bad = case.check(key, C)
        ctx.record(self, case, res)
        out(f"### Per-call latency, sgemm {N}×{N}×{N} ({ctx.args.layout}), same arrays, threads={ctx.nthreads}{flag}")
        out()
        g = res.get("gemmkit")
        rows = []
        for key, call in CALLS.items():
            m = res.get(key)
            if isinstance(m, Failed):
                rows.append([call, "err", "–", "–", "–"])
                ctx.notes.append(f"latency {key}: {m.err}")
            elif m is not None:
                vs = f"{m.median / g.median:.2f}×" if isinstance(g, Meas) else "–"
                rows.append([call + (" ✗" if m.bad else ""), f"{m.median * 1e6:.2f}", f"{min(m.samples) * 1e6:.2f}",
                             report.fmt_rate(case.ops / m.median / 1e9), vs])
                if m.bad:
                    ctx.notes.append(f"latency {key}: RESULT MISMATCH, {m.bad}")
        report.table(out, ["call", "µs/call (median)", "µs (best batch)", "GFLOP/s", "time vs gemmkit"], rows)
        out()
        out(f"(medians over batches of {g.inner if isinstance(g, Meas) else '?'} back-to-back calls; a ctypes "
            "call adds ~1 µs of Python overhead)")
        out()


OPS = [LatencyOp()]
