"""Every kernel path gemmkit has on this CPU (use_arch), at one size: int8 u8s8/s8s8 and sgemm rates side by
side, each relative to the best path; all paths timed in one interleaved group."""
from .. import report
from ..timing import Meas, timed
from .common import Case, Op, aligned_empty, check_rows, random

ORDER = 80


def kernel_names(gk):
    """{'arch': path, 'sgemm': kernel, 'dgemm': ..., 'int8': ...} from show_config()."""
    try:
        cfg = gk.show_config(print_out=False)
    except Exception as e:
        return {"arch": f"? ({e})"}
    names = {"arch": cfg.get("arch", "?")}
    for op in ("sgemm", "dgemm", "cgemm", "zgemm", "int8"):
        if isinstance(cfg.get(op), dict):
            names[op] = cfg[op].get("kernel", "?")
    return names


class ArchOp(Op):
    name = group = "arch"
    unit = "GOP/s, GFLOP/s"
    peak_kind = "int8"
    kinds = ("u8", "s8", "sgemm")

    def specs(self, ctx):
        return [ctx.args.arch_size]

    def run(self, ctx, out, tick):
        np, gk = ctx.np, ctx.gemmkit
        S = self.specs(ctx)[0]
        tb = ctx.args.layout[1]
        tick(f"kernel paths at {S}")
        archs = list(gk.available_archs())
        best = archs[-1]
        order = [best] + [a for a in reversed(archs) if a != best]
        Au, As, B8 = random(ctx, (S, S), np.uint8), random(ctx, (S, S), np.int8), random(ctx, (S, S), np.int8)
        Af, Bf = random(ctx, (S, S), np.float32), random(ctx, (S, S), np.float32)
        B8op, Bfop = (B8, Bf) if tb == "N" else (B8.T, Bf.T)
        co = np.zeros(1, np.int32)
        names, fns, outs, failed = {}, {}, {}, {}

        def bind(arch, kind, C):
            set_arch = gk.set_arch
            if kind == "sgemm":
                return lambda: (set_arch(arch), gk.sgemm("N", tb, S, S, S, 1.0, Af, S, Bf, S, 0.0, C, S))
            A, f = (Au, gk.gemm_u8s8s32) if kind == "u8" else (As, gk.gemm_s8s8s32)
            return lambda: (set_arch(arch), f("N", tb, "F", S, S, S, 1.0, A, S, 0, B8, S, 0, 0.0, C, S, co))

        for arch in order:
            try:
                with gk.use_arch(arch):
                    names[arch] = kernel_names(gk)
            except Exception as e:
                failed[arch] = f"{type(e).__name__}: {e}"
                continue
            for kind in self.kinds:
                outs[(arch, kind)] = aligned_empty(np, (S, S), np.float32 if kind == "sgemm" else np.int32)
                fns[(arch, kind)] = bind(arch, kind, outs[(arch, kind)])
        previous = gk.get_arch()
        try:  # one interleaved group, so background load hits every path alike
            res, flag = timed(ctx, f"kernel paths at {S}", fns)
        finally:
            gk.set_arch(previous)
        ops = 2.0 * S ** 3
        operands = {"u8": (Au, B8op, True), "s8": (As, B8op, True), "sgemm": (Af, Bfop, False)}
        for (arch, kind), C in outs.items():
            m = res.get((arch, kind))
            if isinstance(m, Meas):
                A, Bop, exact = operands[kind]
                m.bad = check_rows(ctx, C, A, Bop, S, exact=exact)
        ctx.record(self, Case(f"{S}", ops, fns, x=S), {f"{a}/{k}": m for (a, k), m in res.items()})
        peak8 = ctx.peak("int8")
        out(f"### Every kernel path at {S}×{S}×{S} ({ctx.args.layout}), threads={ctx.nthreads}{flag}")
        out()
        hdr = ["path (use_arch)", "int8 kernel", "u8s8s32 GOP/s", "s8s8s32 GOP/s", f"u8 vs {best}",
               "u8 % int8 peak", "sgemm kernel", "sgemm GFLOP/s", f"sgemm vs {best}"]
        rows, base = [], {}
        for arch in order:
            if arch in failed:
                rows.append([arch, f"failed: {failed[arch]}"] + ["–"] * (len(hdr) - 2))
                continue
            r = {k: report.rate(res.get((arch, k)), ops) for k in self.kinds}
            base = base or r
            cells = {k: report.cell(ctx, res.get((arch, k)), ops, f"path {arch}: {k}") for k in self.kinds}
            rows.append([arch, f"`{names[arch].get('int8', '?')}`", cells["u8"], cells["s8"],
                         report.ratio(r["u8"], base["u8"]), report.pct(r["u8"], peak8),
                         f"`{names[arch].get('sgemm', '?')}`", cells["sgemm"], report.ratio(r["sgemm"], base["sgemm"])])
        report.table(out, hdr, rows)
        out()


OPS = [ArchOp()]
