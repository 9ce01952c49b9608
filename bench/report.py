"""The report: markdown tables (rates, ratios to each peer, fraction of peak), the header that says what
ran where and how it was timed, the footer with the load other processes put on our CPUs, and the JSON.
"""
import datetime
import json
import os
import platform

from . import machine
from .timing import SETTLE_S, SLOW_CALL_S, Failed, Meas


class Out:
    """Print a line and keep it (and append it to --markdown FILE when given)."""

    def __init__(self, path=None, echo=print):
        self.f = open(path, "a") if path else None
        self.lines = []
        self.echo = echo          # how to show a line (None: keep it quiet); the progress bar swaps it

    def __call__(self, line=""):
        if self.echo:
            self.echo(line)
        self.lines.append(line)
        if self.f:
            self.f.write(line + "\n")
            self.f.flush()

    def close(self):
        if self.f:
            self.f.close()


def table(out, header, rows):
    """A markdown table, first column left-aligned, the others right-aligned."""
    out("| " + " | ".join(header) + " |")
    out("|:---|" + "|".join("---:" for _ in header[1:]) + "|")
    for r in rows:
        out("| " + " | ".join(str(c) for c in r) + " |")


def fmt_rate(x):
    if x is None:
        return "–"
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}" if x >= 10 else f"{x:.2f}"


def ratio(a, b):
    """a/b with 2-3 significant figures, '–' when either is missing."""
    if a is None or b is None or b == 0:
        return "–"
    r = a / b
    return f"{r:.0f}" if r >= 100 else f"{r:.1f}" if r >= 10 else f"{r:.2f}"


def pct(a, peak):
    return "–" if a is None or not peak else f"{100 * a / peak:.0f}%"


def rate(m, ops):
    """GFLOP/s (GOP/s) of a Meas's median, None for anything else."""
    return ops / m.median / 1e9 if isinstance(m, Meas) else None


def cell(ctx, m, ops, label):
    """A table cell for one library's result, registering footnotes for failures and oddities."""
    if m is None:
        return "–"
    if isinstance(m, Failed):
        ctx.notes.append(f"{label}: {m.err}")
        return "err"
    s = fmt_rate(rate(m, ops))
    if m.bad:
        ctx.notes.append(f"{label}: RESULT MISMATCH, {m.bad}")
        s += " ✗"
    if m.note:
        ctx.notes.append(f"{label}: {m.note} ({m.median:.2f} s)")
        s += "¹"
    elif m.reps < 3:
        ctx.few_reps.add(label)
    return s


def header(ctx, out):
    """What ran, where, against what, and how it was timed."""
    a, gk = ctx.args, ctx.gemmkit
    ci = machine.cpu_info()
    aff = ctx.cpus
    mode = (f"threads=1, pinned to CPU {aff[0]}" if ctx.nthreads == 1 and len(aff) == 1 else
            f"threads={ctx.nthreads}, CPUs {','.join(map(str, aff))}")
    out(f"## gemmkit benchmark: {mode}, layout {a.layout}{', quick' if a.quick else ''}")
    out()
    out(f"- command: `{ctx.command}`")
    if ctx.reexec:
        out(f"  (re-executed itself with: {ctx.reexec})")
    out(f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}, load average at start "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    model = ci.get("cpuinfo model name") or ci.get("Model name") or platform.processor() or "?"
    fam = f"family {ci.get('CPU family')} model {ci.get('Model')}, " if ci.get("CPU family") else ""
    out(f"- CPU: {model} ({fam}{ci.get('CPU(s)', os.cpu_count())} CPUs, L2 {ci.get('L2 cache', '?')}, "
        f"L3 {ci.get('L3 cache', '?')}"
        f"{', hypervisor ' + ci['Hypervisor vendor'] if ci.get('Hypervisor vendor') else ''}); "
        f"affinity {','.join(map(str, aff))}")
    kn = ctx.kernels
    out(f"- gemmkit {getattr(gk, '__version__', '?')} (git {machine.git_info()}): path `{kn.get('arch', '?')}`, "
        + ", ".join(f"{op} `{kn[op]}`" for op in ("sgemm", "dgemm", "int8") if kn.get(op))
        + f", threads {gk.get_num_threads()}"
        + (f"; imported from a snapshot of {ctx.snapshot} taken at the start" if ctx.snapshot else ""))
    # which blocking ran (tuning file, GEMMKIT_BLOCKING); a snapshot of an earlier gemmkit keeps it in _tune
    tune = getattr(gk, "_tuning_file", None) or getattr(gk, "_tune", None)
    if tune is not None:
        out(f"- gemmkit tuning: {tune.state['status']}; blocking "
            f"{os.environ.get('GEMMKIT_BLOCKING') or 'auto'}; sgemm MC/KC/NC "
            + "/".join(str(gk._core.params()[f'sgemm.{x}'][0]) for x in ('mc', 'kc', 'nc'))
            + f" ({gk._core.params()['sgemm.kc'][1]})")
    np = ctx.np
    out(f"- NumPy {np.__version__}, SciPy {ctx.peers.scipy_version or 'not installed'}; thread pools: "
        f"{ctx.pools.describe() or '? (threadpoolctl not installed)'}")
    ob = {k: v for k, v in os.environ.items() if k.startswith("OPENBLAS_") and k != "OPENBLAS_NUM_THREADS"}
    if ob:
        out(f"  (environment: {', '.join(f'{k}={v}' for k, v in sorted(ob.items()))}"
            + ("; OPENBLAS_CORETYPE forces that kernel set, `--openblas-coretype auto` lets OpenBLAS detect "
               "the CPU" if "OPENBLAS_CORETYPE" in ob else "") + ")")
    for line in ctx.peers.describe():
        out(f"- {line}")
    out(f"- peaks per core: {ctx.peak_text}")
    out("- timing: warm-up, then "
        + ("libraries interleaved round-robin, every thread pool at 1 thread" if ctx.nthreads == 1 else
           f"each library timed in its own block after a {SETTLE_S} s pause, with the other libraries' "
           "thread pools held at 1 thread (threadpoolctl) so their spinning workers leave the cores alone"
           + ("" if ctx.pools.available() else " [threadpoolctl missing: pools NOT limited]"))
        + f", ≥{ctx.target} s of samples each (≥3 reps; 2 for calls > {SLOW_CALL_S} s), MEDIAN per call, "
        + ("this process's CPU time (pinned, 1 thread: equals wall time on an idle core; time the core spent "
           "on other processes is not counted)" if ctx.clock.kind == "cpu" else "wall clock")
        + "; results row-checked against a float64 reference (exact for int8)")
    if ctx.idle:
        busy = ", ".join(f"CPU {c} {100 * v:.0f}%" for c, v in sorted(ctx.idle.items()))
        out(f"- other load on our CPUs just before the run (0.5 s while idle): {busy}"
            + (f" (after waiting {ctx.waited:.0f} s for them to quieten)" if ctx.waited >= 1 else ""))
        if max(ctx.idle.values()) > 0.1:
            ctx.warnings.append("WARNING: another process was using our CPU(s) at start; figures may be low")
    for w in ctx.warnings:
        out(f"- **{w}**")
    out()


def footer(ctx, out, load, total_s):
    """Contention marks, footnotes, and the CPU time other processes took during the run."""
    if load and load[0] > 0.1 and ctx.clock.kind == "wall":
        ctx.notes.append(f"other processes used {100 * load[0]:.0f}% of our CPUs' time during the run, so these "
                         "wall-clock figures are low; rerun on an idle machine")
    other = (f", CPU time taken on our CPUs by other processes during the run: {100 * load[0]:.0f}%"
             + (f" (+ {100 * load[1]:.0f}% hypervisor steal)" if load[1] > 0.01 else "")) if load else ""
    util = ""
    if ctx.clock.wall_s > 0:
        u = ctx.clock.cpu_s / (ctx.clock.wall_s * ctx.nthreads)
        util = f"; while timing, this process was on CPU {100 * u:.0f}% of the wall time ({ctx.nthreads} thread(s))"
        if ctx.nthreads == 1 and u < 0.9:
            ctx.notes.append(f"another process shared the CPU (this one ran {100 * u:.0f}% of the wall time): "
                             + ("CPU-time figures leave that out, but the caches were shared too, so they may "
                                "be a little low" if ctx.clock.kind == "cpu" else "wall-clock figures are low"))
    if ctx.contended:
        v = ctx.contended.values()
        shares = (", ".join(f"{100 * x:.0f}% ({k})" for k, x in ctx.contended.items()) if len(v) <= 4 else
                  f"{100 * min(v):.0f}-{100 * max(v):.0f}% (in {len(v)} cases)")
        out(f"‡ other processes took {shares} of our CPUs' time during the marked cases"
            + (f" even after {ctx.retries} redo(s)" if ctx.retries else "")
            + ("; the CPU-time figures leave that out, but the caches were shared, so they may be a few % low."
               if ctx.clock.kind == "cpu" else "; treat them as low."))
        out()
    elif ctx.retries:
        out(f"({ctx.retries} case(s) redone because other processes were using our CPUs.)")
        out()
    if ctx.few_reps:
        out(f"Fewer than 3 timed reps (calls > {SLOW_CALL_S} s): " + ", ".join(sorted(ctx.few_reps)) + ".")
        out()
    if ctx.notes:
        out("Notes:")
        for n in dict.fromkeys(ctx.notes):
            out(f"- {n}")
        out()
    out(f"_total {total_s:.0f} s, load average at end {' '.join(f'{x:.2f}' for x in os.getloadavg())}"
        f"{other}{util}_")
    out()


def write_json(ctx, path):
    """Every sample, the peaks and the kernels, for bench/plot.py and later comparison."""
    with open(path, "w") as f:
        json.dump(ctx.run_data(), f, indent=1)


def side_by_side(runs, out):
    """One table per op over several runs (thread counts): gemmkit's rate and its ratio to each peer, per run."""
    if not runs:
        return
    tags = [f"{r.get('threads', '?')}t" for r in runs]
    out(f"## Side by side: gemmkit's median rate and its ratio to each peer at {', '.join(tags)} "
        f"(git {runs[0].get('git', '?')})")
    out()
    ops = list(dict.fromkeys(r["op"] for run in runs for r in run["results"]))
    for op in ops:
        info = next((run["ops"][op] for run in runs if op in run.get("ops", {})), {})
        if not info.get("ours"):
            continue
        ours, heads = info["ours"][0], info.get("columns", {})
        rate = {(i, r["case"], r["lib"]): r.get("rate") for i, run in enumerate(runs) for r in run["results"]
                if r["op"] == op}
        libs = {lib for (_, _, lib) in rate}
        if ours not in libs:
            continue   # a table of its own kind (kernel paths)
        peers = [k for k in heads if k not in info["ours"] and k in libs]
        cases_ = list(dict.fromkeys(case for (_, case, _) in rate))
        hdr = ["case"]
        for tag in tags:
            hdr += [f"{heads.get(ours, ours)} {tag} ({info.get('unit', '')})"] + [f"/{heads[p]} {tag}" for p in peers]
        rows = []
        for case in cases_:
            row = [case]
            for i in range(len(runs)):
                g = rate.get((i, case, ours))
                row += [fmt_rate(g)] + [ratio(g, rate.get((i, case, p))) for p in peers]
            rows.append(row)
        out(f"### {op}")
        out()
        table(out, hdr, rows)
        out()
