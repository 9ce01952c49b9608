"""Timing: warm-up, samples until each library has --target seconds, the median per call, and the redo of
cases that other processes disturbed. One thread: libraries interleaved; several: one block each.
"""
import contextlib
import math
import statistics
import time

from .machine import LoadMeter, wait_idle

SLOW_CALL_S = 0.25        # calls slower than this get 2 timed samples
VERY_SLOW_CALL_S = 2.0    # ... and slower than this only the warm-up call
REWARM_BELOW_S = 0.05    # interleaved single-call samples shorter than this get an untimed call first
SETTLE_S = 0.3            # several threads: pause before each library so others' spinning workers sleep
CONTENDED_SHARE = 0.15    # other processes' share of our CPUs above which a case is redone / flagged


class Meas:
    """Samples (seconds per call) of one library in one case; `bad` is set when its result is wrong."""

    def __init__(self, samples, inner, note=""):
        self.samples = list(samples)
        self.inner = inner
        self.median = statistics.median(self.samples)
        self.note = note
        self.bad = None

    @property
    def reps(self):
        return len(self.samples)


class Failed:
    """A library that raised: the error text stands in its table cell's footnote."""

    def __init__(self, err):
        self.err = f"{type(err).__name__}: {err}"
        self.bad = None


class Clock:
    """The clock samples are taken with ('cpu': process CPU time, 'wall'), and how much of the timed wall
    time this process was on a CPU (for the footer)."""

    def __init__(self, kind="wall"):
        self.kind = kind
        self.wall_s = 0.0
        self.cpu_s = 0.0

    def now(self):
        return time.process_time() if self.kind == "cpu" else time.perf_counter()

    @contextlib.contextmanager
    def wall_for_other_processes(self):
        """The wall clock for work done in other processes (a Dask cluster's workers): this process's CPU
        time would not see it; that time is left out of the wall/CPU tally the footer reports."""
        saved = self.kind, self.wall_s, self.cpu_s
        self.kind = "wall"
        try:
            yield
        finally:
            self.kind, self.wall_s, self.cpu_s = saved


def run_group(fns, target, clock, min_reps=3, min_sample=1e-3, max_samples=2000, interleave=True, settle=0.0):
    """Time the callables of `fns` (key -> fn); returns key -> Meas or Failed.

    interleave=True (one thread): the libraries take turns sample by sample, so a burst of background load
    hits them alike; a sample of one call under REWARM_BELOW_S follows an untimed call of the same library,
    so that each is timed on the caches as it leaves them (oneDNN's int8 scratch pads evicted the operands
    the next library then read from memory: gemmkit u8s8s32 16 x 4096^2 after oneDNN 132 GOP/s, after itself
    161-178, Zen 4). interleave=False: each library in one block after `settle` s of sleep."""
    res, plan = {}, {}

    def prepare(key, fn):
        try:
            t0 = clock.now()
            fn()
            warm = clock.now() - t0
            est = warm
            if warm < 0.1:
                n, t0 = 0, clock.now()
                while True:
                    fn()
                    n += 1
                    el = clock.now() - t0
                    if el >= 0.03 or n >= 2000:
                        break
                est = el / n
        except Exception as e:  # a library failing must not sink the whole table
            res[key] = Failed(e)
            return
        if est >= VERY_SLOW_CALL_S:
            res[key] = Meas([warm], 1, note="warm-up call only")
            return
        inner = max(1, math.ceil(min_sample / max(est, 1e-9)))
        ns = 2 if est >= SLOW_CALL_S else max(min_reps, min(max_samples, round(target / (inner * est))))
        plan[key] = {"fn": fn, "inner": inner, "n": ns, "s": [], "rewarm": interleave and inner == 1 and
                     est < REWARM_BELOW_S}

    last = [None]

    def sample(key, p):
        fn, inner = p["fn"], p["inner"]
        try:
            if p["rewarm"] and last[0] != key:
                fn()  # untimed: the caches as this library leaves them, not as the previous one did
            last[0] = key
            w0, c0 = time.perf_counter(), time.process_time()
            for _ in range(inner):
                fn()
            w1, c1 = time.perf_counter(), time.process_time()
        except Exception as e:
            res[key] = Failed(e)
            p["n"] = len(p["s"])
            return
        clock.wall_s += w1 - w0
        clock.cpu_s += c1 - c0
        p["s"].append(((c1 - c0) if clock.kind == "cpu" else (w1 - w0)) / inner)

    if interleave:
        for key, fn in fns.items():
            prepare(key, fn)
        while any(len(p["s"]) < p["n"] for p in plan.values()):
            for key, p in plan.items():
                if len(p["s"]) < p["n"]:
                    sample(key, p)
    else:
        for key, fn in fns.items():
            if settle > 0:
                time.sleep(settle)
            prepare(key, fn)
            p = plan.get(key)
            while p is not None and len(p["s"]) < p["n"]:
                sample(key, p)
    for key, p in plan.items():
        if key not in res and p["s"]:
            res[key] = Meas(p["s"], p["inner"])
    return res


def contention(meter):
    """Share of our CPUs' time other processes took since meter.start(), counted only when they also pushed
    our threads off the CPU (involuntary context switches), else 0."""
    pre = meter.preemptions_per_s()
    ld = meter.stop()
    return ld[0] if ld and pre > 20 else 0.0


def timed(ctx, label, fns, **kw):
    """run_group for one case, each library with the other libraries' thread pools at one thread
    (ctx.pools), redone (while ctx.retry_left lasts, wall clock only) when other processes took more than
    CONTENDED_SHARE of our CPUs. Returns (results, flag): flag '‡' when it stayed contended."""
    worst = [0.0]

    def redo(share, what):
        if share < CONTENDED_SHARE or ctx.clock.kind == "cpu" or ctx.retry_left <= 0:
            worst[0] = max(worst[0], share)
            return False
        t0 = time.time()
        ctx.say(f"{what}: other processes took {100 * share:.0f}% of the CPU time; waiting and redoing it")
        wait_idle(ctx.cpus, min(10.0, ctx.retry_left))
        ctx.retry_left -= time.time() - t0
        ctx.retries += 1
        return True

    def attempt(group, what, **extra):
        for n in range(3):
            meter = LoadMeter(ctx.cpus).start()
            res = run_group(group, ctx.target, ctx.clock, **extra, **kw)
            share = contention(meter)
            if n == 2:
                worst[0] = max(worst[0], share)
            elif redo(share, what):
                continue
            return res

    if ctx.nthreads == 1:
        res = attempt(fns, label)
    else:
        res = {}
        for key, fn in fns.items():
            quiet = ctx.pools.only(key) if ctx.pools else contextlib.nullcontext()
            with quiet:
                res.update(attempt({key: fn}, f"{label} [{key}]", interleave=False, settle=SETTLE_S))
    if worst[0] >= CONTENDED_SHARE:
        ctx.contended[label] = worst[0]
        return res, "‡"
    return res, ""
