"""The state of one benchmark run that the cases share: the arguments, NumPy and gemmkit, the peers and thread
pools, the CPUs, clock and peaks, the contention record, the footnotes and every result."""
import os
import shlex
import sys
import time

from . import machine
from .peers import Peers, Pools
from .timing import Clock, Failed, Meas

ORIG_ENV = "GEMMKIT_BENCH_ORIG_CMD"
REEXEC_ENV = "GEMMKIT_BENCH_REEXEC_DESC"


class Context:
    """Built by setup(); the cases read it and add to notes, contended and raw (every result)."""

    def __init__(self, args, np, gemmkit, cpus, nthreads):
        self.args, self.np, self.gemmkit = args, np, gemmkit
        self.cpus, self.nthreads = cpus, nthreads
        self.target = args.target
        self.clock = Clock(args.clock)
        self.rng = np.random.default_rng(args.seed)
        self.peers, self.pools = None, None
        self.notes, self.warnings, self.few_reps, self.raw, self.contended = [], [], set(), [], {}
        self.retries, self.retry_left = 0, args.retry_budget
        self.ops_info = {}
        self.probed, self.peaks_per_core, self.peak_sources = None, {}, {}
        self.idle, self.waited, self.snapshot, self.kernels = {}, 0.0, None, {}
        self.command = os.environ.get(ORIG_ENV) or " ".join(["python", shlex.join(sys.argv)])
        self.reexec = os.environ.get(REEXEC_ENV)
        self.say = lambda msg: print(f"  .. {msg}", file=sys.stderr, flush=True)

    # peaks ---------------------------------------------------------------------------------------------
    def set_peaks(self, probed, fp32=None, int8=None, source=""):
        self.probed = probed
        for kind in ("fp32", "fp64", "int8", "bf16", "stream"):
            v, what = machine.peak_per_core(kind, probed, fp32, int8)
            if v:
                self.peaks_per_core[kind] = v
                self.peak_sources[kind] = what + (f", {source}" if source and what != "command line" else "")

    def peak_per_core(self, kind):
        return self.peaks_per_core.get(kind)

    def peak_source(self, kind):
        return self.peak_sources.get(kind, "?")

    def peak(self, kind):
        """The peak for `nthreads` threads (per-core peak × threads), None when unknown or kind is None."""
        v = self.peaks_per_core.get(kind) if kind else None
        return v * self.nthreads if v else None

    def bound(self, b):
        """Rate bound of a memory-bound case: ('stream', ops per byte) × one core's streaming-read GB/s
        (only with one thread: the probe measures one core)."""
        kind, ops_per_byte = b
        v = self.peaks_per_core.get(kind)
        return v * ops_per_byte if v and self.nthreads == 1 else None

    @property
    def peak_text(self):
        units = {"fp32": "GFLOP/s", "fp64": "GFLOP/s", "int8": "GOP/s", "bf16": "GFLOP/s", "stream": "GB/s"}
        parts = [f"{k} {v:.1f} {units[k]} ({self.peak_sources[k]})" for k, v in self.peaks_per_core.items()]
        return "; ".join(parts) or "unknown (no probe); % peak columns omitted"

    # results -------------------------------------------------------------------------------------------
    def record(self, op, case, res):
        """Keep every library's samples of one case (for --json and --plot)."""
        self.ops_info[op.name] = {"unit": op.unit.split(",")[0], "peak": self.peak(op.peak_kind),
                                  "group": op.group, "ours": list(getattr(op, "ours", [])),
                                  "columns": dict(getattr(op, "columns", []))}
        for key, m in res.items():
            item = {"op": op.name, "case": case.label, "x": case.x, "lib": str(key), "ops": case.ops}
            if isinstance(m, Meas):
                item.update(median_s=m.median, rate=case.ops / m.median / 1e9, samples_s=m.samples,
                            inner=m.inner, mismatch=m.bad)
            elif isinstance(m, Failed):
                item.update(error=m.err)
            self.raw.append(item)

    def gemmkit_mismatch(self):
        """Whether a gemmkit result failed its check (the exit status is then 2)."""
        from .peers import owner
        return any(r.get("mismatch") for r in self.raw if owner(r["lib"]) == "gemmkit" or r["op"] == "arch")

    def run_data(self):
        return {"command": self.command, "threads": self.nthreads, "layout": self.args.layout,
                "date": time.strftime("%Y-%m-%d %H:%M"), "git": machine.git_info(),
                "peaks_per_core": self.peaks_per_core, "probe": self.probed, "kernels": self.kernels,
                "ops": self.ops_info, "results": self.raw}


def setup(args, cpus, nthreads, np, gemmkit, snapshot=None):
    """The Context of a run: peers loaded, every pool at `nthreads`, clock chosen, quiet waited for, peaks
    probed (or taken from the command line)."""
    from .cases.arch import kernel_names
    ctx = Context(args, np, gemmkit, cpus, nthreads)
    ctx.snapshot = snapshot
    gemmkit.set_num_threads(nthreads)
    ctx.peers, ctx.pools = Peers(), Pools(nthreads)
    if ctx.peers.mkl is not None:
        ctx.peers.mkl.set_num_threads(nthreads)
    ctx.pools.set_all(nthreads)
    ctx.kernels = kernel_names(gemmkit)
    if len(os.sched_getaffinity(0)) != nthreads and args.threads != "all":
        ctx.warnings.append(f"WARNING: --threads {nthreads} but the process may run on CPUs "
                            f"{sorted(os.sched_getaffinity(0))} (not pinned)")
    wait = args.wait_idle if args.wait_idle is not None else (20.0 if args.clock == "wall" else 0.0)
    ctx.waited = machine.wait_idle(cpus, wait) if wait > 0 else 0.0
    ctx.idle = machine.idle_check(cpus)
    probed, why, source = None, None, ""
    if not args.no_probe and (args.peak_fp32 is None or args.peak_int8 is None):
        ctx.say("peak probe (bench/peak_probe.c)")
        pcpus = machine.online_cpus()[:4]
        passes = 1 if args.quick else 3
        probed, why = machine.probe_peaks(pcpus, passes=passes)
        source = f"bench/peak_probe.c, max over CPUs {','.join(map(str, pcpus))} × {passes} run(s)"
        if why:
            ctx.warnings.append("WARNING: peak probe: " + why)
    ctx.set_peaks(probed, args.peak_fp32, args.peak_int8, source)
    return ctx
