#!/usr/bin/env python
"""gemmkit benchmark: sgemm and int8 GEMM against NumPy/OpenBLAS, oneDNN and SciPy, as a markdown table.

    python bench/run_bench.py --threads 1          # one core; re-executes itself under `taskset -c 0`
    python bench/run_bench.py --threads all        # every CPU this process may use
    python bench/run_bench.py --quick              # sizes 64..512 only (CI smoke, ~20 s)
    python bench/run_bench.py --threads 1 --markdown bench/RESULTS.md   # also append the output

Every library gets the same input arrays in the same run.  Each case is warmed up, then the libraries
are timed in interleaved rounds (so a burst of background load hits all of them alike) until each has
~--target seconds of samples (at least 3; calls over 0.25 s get 2, calls over 2 s only the warm-up
call); the table shows the MEDIAN time per call as GFLOP/s (sgemm) or GOP/s (int8, 2*M*N*K ops).
With --threads 1 the clock is the process's CPU time by default (--clock auto): on an idle core it is
the wall time, and on a shared machine it leaves out the time the core spent on other processes; with
more threads it is the wall clock.  The footer says how much of the CPU other processes took.
Every result is checked on a sample of rows against a float64 reference (✗ marks a mismatch); the exit
status is 2 when a gemmkit result mismatched.

Before importing NumPy the script re-executes itself once when needed: under `taskset -c CPU` for
`--threads 1` (unless already pinned to one CPU), with OPENBLAS_NUM_THREADS/OMP_NUM_THREADS set to the
thread count, and with LD_LIBRARY_PATH=<dir of libdnnl.so> (oneDNN's pip wheel keeps its TBB/SYCL
runtime there).  Peaks come from ../shared/tools/peak.c (compiled with gcc and run on the spot), or
--peak-fp32/--peak-int8.
"""
import argparse
import datetime
import glob
import json
import math
import os
import platform
import re
import shlex
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
if HERE not in sys.path:
    sys.path.insert(0, HERE)

import onednn  # noqa: E402  (ctypes only; imports NumPy lazily)

CHILD_ENV = "GEMMKIT_BENCH_CHILD"
ORIG_ENV = "GEMMKIT_BENCH_ORIG_CMD"
REEXEC_ENV = "GEMMKIT_BENCH_REEXEC_DESC"
THREAD_ENV_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

SQUARES = [64, 128, 256, 512, 1024, 2048, 4096]
SKINNY_M = [1, 16, 128]
SKINNY_NK = 4096
INT8_SQUARES = [256, 512, 1024, 2048]
QUICK_SQUARES = [64, 128, 256, 512]
QUICK_INT8 = [256, 512]
SCIPY_MAX_MNK = 1024 ** 3          # scipy.linalg.blas.sgemm only for "small" problems
NUMPY_INT32_MAX_MNK = 1024 ** 3    # NumPy's integer matmul is a plain loop (~1 GOP/s): cap it
SLOW_CALL_S = 0.25                 # calls slower than this get 2 timed reps
VERY_SLOW_CALL_S = 2.0             # ... and slower than this only the warm-up call
SETTLE_S = 0.3                     # several threads: pause before each library so others' spinning
                                   # worker threads (OpenBLAS ~0.1 s, TBB) have gone to sleep


# ----------------------------------------------------------------------------------------------------
# command line and re-exec
# ----------------------------------------------------------------------------------------------------
def parse_args(argv):
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                formatter_class=argparse.RawDescriptionHelpFormatter, epilog=__doc__)
    p.add_argument("--threads", default="1",
                   help="'1' (pinned to one CPU; default), 'all' (every CPU of the affinity mask) or a count")
    p.add_argument("--cpu", default=None,
                   help="CPU to pin to with --threads 1: a number, or 'auto' for the least busy one over "
                        "0.5 s (default: 0, or the one already pinned to)")
    p.add_argument("--layout", choices=["NN", "NT"], default="NN",
                   help="transa/transb for every case (NT: B stored N x K and transposed); default NN")
    p.add_argument("--quick", action="store_true", help="short table: sgemm 64..512, int8 256/512, no skinny")
    p.add_argument("--sizes", default=None, help="comma-separated square sizes (sgemm and int8) instead of the defaults")
    p.add_argument("--no-skinny", action="store_true", help="leave out the M in {1,16,128}, N=K=4096 shapes")
    p.add_argument("--only", default="sgemm,int8,arch,latency",
                   help="sections to run, comma-separated from sgemm,int8,arch,latency (default all)")
    p.add_argument("--arch-size", type=int, default=None, help="size of the per-kernel-path table (default 1024; 512 with --quick)")
    p.add_argument("--target", type=float, default=None,
                   help="seconds of timed samples per library per case (default 0.4; 0.15 with --quick)")
    p.add_argument("--peak-fp32", type=float, default=None, help="single-core fp32 peak GFLOP/s (the probe is skipped when both peaks are given)")
    p.add_argument("--peak-int8", type=float, default=None, help="single-core u8s8 VNNI peak GOP/s")
    p.add_argument("--no-probe", action="store_true", help="don't compile/run the peak probe")
    p.add_argument("--probe-src", default=os.path.join(REPO, "..", "shared", "tools", "peak.c"),
                   help="peak probe source (default ../shared/tools/peak.c from the repo root)")
    p.add_argument("--markdown", metavar="FILE", default=None, help="also append the output to FILE")
    p.add_argument("--json", metavar="FILE", default=None, help="write every sample (seconds per call) to FILE")
    p.add_argument("--clock", choices=["auto", "wall", "cpu"], default="auto",
                   help="'cpu': this process's CPU time, so time taken by other processes sharing the core is "
                        "not counted (only with --threads 1, where it equals the wall time on an idle core); "
                        "'wall': wall clock; 'auto' (default): cpu for --threads 1, wall otherwise")
    p.add_argument("--openblas-coretype", default=None, metavar="NAME",
                   help="set OPENBLAS_CORETYPE for NumPy/SciPy's OpenBLAS (e.g. SkylakeX), or 'auto' to unset "
                        "it and let OpenBLAS detect the CPU (default: leave the environment alone)")
    p.add_argument("--wait-idle", type=float, default=None, metavar="S",
                   help="first wait up to S seconds for other processes to leave our CPUs alone "
                        "(default 20 with the wall clock, 0 with --clock cpu)")
    p.add_argument("--retry-budget", type=float, default=60.0, metavar="S",
                   help="wall-clock mode: a case during which other processes took >15%% of our CPUs is "
                        "redone after waiting for them, within S extra seconds in all (default 60)")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--no-snapshot", action="store_true",
                   help="import gemmkit in place instead of from a copy taken at the start (the copy keeps a "
                        "concurrent rebuild of the extension from affecting or crashing the run)")
    p.add_argument("--no-reexec", action="store_true",
                   help="don't re-execute under taskset / with LD_LIBRARY_PATH (results may then be unpinned)")
    a = p.parse_args(argv)
    if a.threads != "all":
        try:
            n = int(a.threads)
        except ValueError:
            p.error("--threads must be 'all' or a positive integer")
        if n < 1:
            p.error("--threads must be 'all' or a positive integer")
    if a.clock == "cpu" and a.threads != "1":
        p.error("--clock cpu needs --threads 1 (spinning worker threads would be counted)")
    if a.clock == "auto":
        a.clock = "cpu" if a.threads == "1" else "wall"
    if a.cpu not in (None, "auto"):
        try:
            a.cpu = int(a.cpu)
        except ValueError:
            p.error("--cpu must be a CPU number or 'auto'")
    a.sections = [s.strip() for s in a.only.split(",") if s.strip()]
    bad = set(a.sections) - {"sgemm", "int8", "arch", "latency"}
    if bad:
        p.error(f"unknown section(s) in --only: {', '.join(sorted(bad))}")
    if a.target is None:
        a.target = 0.15 if a.quick else 0.4
    if a.arch_size is None:
        a.arch_size = 512 if a.quick else 1024
    return a


def wanted_cpus(args):
    aff = sorted(os.sched_getaffinity(0))
    if args.threads == "all":
        return aff
    n = int(args.threads)
    if n == 1:
        if args.cpu == "auto":
            busy = idle_check(aff)
            return [min(aff, key=lambda c: (busy.get(c, 1.0), c))]
        if args.cpu is not None:
            return [args.cpu]
        if len(aff) == 1:
            return aff
        return [0] if 0 in aff else [aff[0]]
    if n > len(aff):
        sys.exit(f"run_bench: --threads {n} but this process may only use CPUs {aff}")
    return aff[:n]


def maybe_reexec(args, argv):
    """Re-execute once (before NumPy is imported) with the pinning and environment the mode needs."""
    if os.environ.get(CHILD_ENV) == "1" or args.no_reexec:
        return
    env = dict(os.environ)
    cmd = [sys.executable, os.path.abspath(__file__)] + list(argv)
    desc = []
    aff = sorted(os.sched_getaffinity(0))
    cpus = wanted_cpus(args)
    nthreads = len(cpus)
    if cpus != aff:
        cpu_list = ",".join(map(str, cpus))
        if shutil.which("taskset"):
            cmd = ["taskset", "-c", cpu_list] + cmd
            desc.append(f"taskset -c {cpu_list}")
        else:
            os.sched_setaffinity(0, cpus)   # inherited through exec
            desc.append(f"sched_setaffinity({cpu_list}) (no taskset)")
    if args.openblas_coretype == "auto" and "OPENBLAS_CORETYPE" in env:
        del env["OPENBLAS_CORETYPE"]
        desc.append("OPENBLAS_CORETYPE unset")
    elif args.openblas_coretype not in (None, "auto") and env.get("OPENBLAS_CORETYPE") != args.openblas_coretype:
        env["OPENBLAS_CORETYPE"] = args.openblas_coretype
        desc.append(f"OPENBLAS_CORETYPE={args.openblas_coretype}")
    for var in THREAD_ENV_VARS:
        if env.get(var) != str(nthreads):
            env[var] = str(nthreads)
            desc.append(f"{var}={nthreads}")
    d = onednn.find_lib_dir()
    if d is not None:
        parts = [x for x in env.get("LD_LIBRARY_PATH", "").split(":") if x]
        if os.path.realpath(d) not in [os.path.realpath(x) for x in parts]:
            env["LD_LIBRARY_PATH"] = ":".join([d] + parts)
            desc.append(f"LD_LIBRARY_PATH={d}")
    if not desc:
        return
    env[CHILD_ENV] = "1"
    env[ORIG_ENV] = shlex.join(["python"] + sys.argv)
    env[REEXEC_ENV] = "; ".join(desc)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvpe(cmd[0], cmd, env)


# ----------------------------------------------------------------------------------------------------
# output
# ----------------------------------------------------------------------------------------------------
class Out:
    def __init__(self, path):
        self.f = open(path, "a") if path else None
        self.lines = []

    def __call__(self, line=""):
        print(line, flush=True)
        self.lines.append(line)
        if self.f:
            self.f.write(line + "\n")
            self.f.flush()

    def close(self):
        if self.f:
            self.f.close()


def progress(msg):
    print(f"  .. {msg}", file=sys.stderr, flush=True)


def table(out, header, rows, align=None):
    align = align or (["l"] + ["r"] * (len(header) - 1))
    out("| " + " | ".join(header) + " |")
    out("|" + "|".join(":---" if a == "l" else "---:" for a in align) + "|")
    for r in rows:
        out("| " + " | ".join(str(c) for c in r) + " |")


# ----------------------------------------------------------------------------------------------------
# machine information
# ----------------------------------------------------------------------------------------------------
def run_quiet(cmd, **kw):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60, **kw)
    except Exception:
        return None


def cpu_info():
    info = {}
    r = run_quiet(["lscpu"], env=dict(os.environ, LC_ALL="C"))
    if r is not None and r.returncode == 0:
        for line in r.stdout.splitlines():
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
    if "Model name" not in info:
        try:
            with open("/proc/cpuinfo") as f:
                m = re.search(r"^model name\s*:\s*(.*)$", f.read(), re.M)
                if m:
                    info["Model name"] = m.group(1)
        except OSError:
            pass
    return info


def git_info():
    r = run_quiet(["git", "-C", REPO, "rev-parse", "--short", "HEAD"])
    if r is None or r.returncode != 0:
        return "no git"
    head = r.stdout.strip()
    s = run_quiet(["git", "-C", REPO, "status", "--porcelain", "--", "csrc", "gemmkit", "setup.py"])
    dirty = s is not None and s.returncode == 0 and s.stdout.strip()
    return head + (" + uncommitted changes in csrc/ gemmkit/" if dirty else "")


def snapshot_gemmkit():
    """Copy the installed gemmkit package to a temporary directory and import it from there, so that
    a rebuild of the extension in place (others working on csrc/) can't change or crash a running
    benchmark.  Returns the original package directory, or None when there is nothing to copy."""
    import atexit
    import importlib.util
    spec = importlib.util.find_spec("gemmkit")
    if spec is None or not spec.submodule_search_locations:
        return None
    src = os.path.realpath(list(spec.submodule_search_locations)[0])
    tmp = tempfile.mkdtemp(prefix="gemmkit-bench-")
    atexit.register(shutil.rmtree, tmp, True)
    shutil.copytree(src, os.path.join(tmp, "gemmkit"),
                    ignore=shutil.ignore_patterns("__pycache__", "*.c", "*.html", "*.o"))
    sys.path.insert(0, tmp)
    return src


def stale_extension_warning(gemmkit, so=None):
    """The compiled extension older than the newest C/Cython source means a rebuild is pending."""
    try:
        so = so or gemmkit._core.__file__
        src = [p for pat in ("csrc/**/*.c", "csrc/**/*.h", "csrc/**/*.S", "gemmkit/*.pyx", "gemmkit/*.pxd")
               for p in glob.glob(os.path.join(REPO, pat), recursive=True)]
        if not src or not os.path.exists(so):
            return None
        newest = max(src, key=os.path.getmtime)
        if os.path.getmtime(newest) > os.path.getmtime(so) + 1:
            return (f"NOTE: {os.path.relpath(newest, REPO)} is newer than the built extension; these "
                    f"figures are for the last build (`pip install -e . --no-build-isolation -q` to rebuild)")
    except Exception:
        return None
    return None


def probe_peaks(src, cpus, passes=3):
    """Compile and run the peak probe on each CPU in `cpus`, `passes` times; returns
    ({label: max GFLOP/s or GOP/s}, None) or (None, reason).  The max over CPUs and runs is the
    machine's per-core peak even when one core is busy with someone else's work."""
    if not os.path.exists(src):
        return None, f"probe source {src} not found"
    cc = shutil.which("gcc") or shutil.which("cc")
    if cc is None:
        return None, "no C compiler for the peak probe"
    exe = os.path.join(tempfile.gettempdir(), f"gemmkit-peak-probe-{os.getuid()}-{os.getpid()}")
    r = run_quiet([cc, "-O2", src, "-o", exe])
    if r is None or r.returncode != 0:
        return None, "peak probe failed to compile: " + (r.stderr.strip()[-200:] if r else "timeout")
    import resource
    # Contention can only make a run read low, so the maximum over every run is the best estimate;
    # the CPU share each run got is only used to say whether any of them ran undisturbed.
    best, utils = {}, []
    try:
        for _ in range(passes):
            for cpu in cpus:
                cmd = [exe]
                if cpu is not None and shutil.which("taskset"):
                    cmd = ["taskset", "-c", str(cpu), exe]
                ru0, w0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
                r = run_quiet(cmd)
                ru1, w1 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
                if r is None or r.returncode != 0:
                    continue
                utils.append(((ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)) / max(w1 - w0, 1e-9))
                for line in r.stdout.splitlines():
                    m = re.match(r"\s*(.+?):\s*([0-9.]+)\s*(GFLOP/s|GOP/s)", line)
                    if m:
                        best[m.group(1)] = max(best.get(m.group(1), 0.0), float(m.group(2)))
    finally:
        try:
            os.unlink(exe)
        except OSError:
            pass
    if not best:
        return None, "peak probe printed nothing usable"
    if max(utils) < 0.9:
        return best, (f"CONTENDED: the probe never had a CPU to itself (at most {100 * max(utils):.0f}% "
                      "of one), so these peaks may be low; pass --peak-fp32/--peak-int8")
    return best, None


def online_cpus():
    try:
        with open("/sys/devices/system/cpu/online") as f:
            cpus = []
            for part in f.read().strip().split(","):
                a, _, b = part.partition("-")
                cpus += list(range(int(a), int(b or a) + 1))
            return cpus
    except Exception:
        return list(range(os.cpu_count() or 1))


def cpu_jiffies():
    """{cpu: (busy, steal, total)} from /proc/stat, or {} where unavailable."""
    out = {}
    try:
        with open("/proc/stat") as f:
            for line in f:
                m = re.match(r"cpu(\d+)\s+(.*)", line)
                if m:
                    v = [int(x) for x in m.group(2).split()]
                    v += [0] * (8 - len(v))
                    idle = v[3] + v[4]
                    steal = v[7]
                    total = sum(v[:8])
                    out[int(m.group(1))] = (total - idle - steal, steal, total)
    except OSError:
        pass
    return out


class LoadMeter:
    """CPU time spent on our CPUs by OTHER processes between start() and stop(), as a fraction."""

    def __init__(self, cpus):
        self.cpus = cpus
        self.hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    @staticmethod
    def _preempted():
        try:
            import resource
            return resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw
        except Exception:
            return 0

    def start(self):
        self.j0, self.t0, self.w0, self.p0 = cpu_jiffies(), os.times(), time.time(), self._preempted()
        return self

    def preemptions_per_s(self):
        """Involuntary context switches of our threads per second since start(): other runnable
        work on our CPUs pushing us off (≈0 on an idle machine)."""
        wall = time.time() - self.w0
        return (self._preempted() - self.p0) / wall if wall > 0 else 0.0

    def stop(self):
        j1, t1, wall = cpu_jiffies(), os.times(), time.time() - self.w0
        if not j1 or not self.j0 or wall <= 0:
            return None
        busy = sum(j1[c][0] - self.j0[c][0] for c in self.cpus if c in j1 and c in self.j0) / self.hz
        steal = sum(j1[c][1] - self.j0[c][1] for c in self.cpus if c in j1 and c in self.j0) / self.hz
        mine = sum(t1[i] - self.t0[i] for i in range(4))
        cap = wall * len(self.cpus)
        return max(0.0, busy - mine) / cap, steal / cap


def idle_check(cpus, seconds=0.5):
    """Per-CPU busy fraction over `seconds` while we sleep (i.e. other processes' load)."""
    j0 = cpu_jiffies()
    time.sleep(seconds)
    j1 = cpu_jiffies()
    res = {}
    for c in cpus:
        if c in j0 and c in j1:
            tot = j1[c][2] - j0[c][2]
            if tot > 0:
                res[c] = (j1[c][0] - j0[c][0]) / tot
    return res


# ----------------------------------------------------------------------------------------------------
# timing
# ----------------------------------------------------------------------------------------------------
class Meas:
    def __init__(self, samples, inner, note=""):
        self.samples = samples
        self.inner = inner
        self.median = statistics.median(samples)
        self.note = note
        self.bad = None          # mismatch description, when the result check failed

    @property
    def reps(self):
        return len(self.samples)


class Failed:
    def __init__(self, err):
        self.err = f"{type(err).__name__}: {err}"
        self.bad = None


CLOCK = {"now": time.perf_counter}
UTIL = {"wall": 0.0, "cpu": 0.0}   # totals over every timed sample: how much of the time we were on a CPU


def run_group(fns, target, min_reps=3, min_sample=1e-3, max_samples=2000, interleave=True, settle=0.0):
    """Time the callables of `fns` (name -> fn); name -> Meas or Failed.

    interleave=True (one thread): the libraries take turns sample by sample, so a burst of background
    load hits them alike.  interleave=False (several threads): each library is timed in one block,
    after `settle` seconds of sleep, because the worker threads another library leaves spinning after
    its call (OpenBLAS spins for ~0.1 s, TBB briefly) would otherwise take the cores from the next."""
    now = CLOCK["now"]
    wall, cpu = time.perf_counter, time.process_time
    res, plan = {}, {}

    def prepare(name, fn):
        try:
            t0 = now()
            fn()
            warm = now() - t0
            if warm < 0.1:
                n, t0 = 0, now()
                while True:
                    fn()
                    n += 1
                    el = now() - t0
                    if el >= 0.03 or n >= 2000:
                        break
                est = el / n
            else:
                est = warm
        except Exception as e:  # a library failing must not sink the whole table
            res[name] = Failed(e)
            return
        inner = max(1, math.ceil(min_sample / max(est, 1e-9)))
        if est >= VERY_SLOW_CALL_S:
            res[name] = Meas([warm], 1, note="warm-up call only")
            return
        if est >= SLOW_CALL_S:
            ns = 2
        else:
            ns = max(min_reps, min(max_samples, round(target / (inner * est))))
        plan[name] = {"fn": fn, "inner": inner, "n": ns, "s": []}

    def sample(name, p):
        fn, inner = p["fn"], p["inner"]
        try:
            w0, c0 = wall(), cpu()
            for _ in range(inner):
                fn()
            w1, c1 = wall(), cpu()
            UTIL["wall"] += w1 - w0
            UTIL["cpu"] += c1 - c0
            p["s"].append(((c1 - c0) if now is cpu else (w1 - w0)) / inner)
        except Exception as e:
            res[name] = Failed(e)
            p["n"] = len(p["s"])

    if interleave:
        for name, fn in fns.items():
            prepare(name, fn)
        while any(len(p["s"]) < p["n"] for p in plan.values()):
            for name, p in plan.items():
                if len(p["s"]) < p["n"]:
                    sample(name, p)
    else:
        for name, fn in fns.items():
            if settle > 0:
                time.sleep(settle)
            prepare(name, fn)
            p = plan.get(name)
            while p is not None and len(p["s"]) < p["n"]:
                sample(name, p)
    for name, p in plan.items():
        if name not in res and p["s"]:
            res[name] = Meas(p["s"], p["inner"])
    return res


def wait_idle(cpus, max_wait, threshold=0.1):
    """Wait (up to max_wait s) until other processes use < threshold of each of our CPUs; returns
    the seconds waited."""
    t0 = time.time()
    while time.time() - t0 < max_wait:
        busy = idle_check(cpus, 0.5)
        if not busy or max(busy.values()) < threshold:
            break
    return time.time() - t0


def contention(meter):
    """Share of our CPUs' time other processes took since meter.start(), counted only when they also
    pushed our threads off the CPU (involuntary context switches), else 0."""
    pre = meter.preemptions_per_s()
    ld = meter.stop()
    return ld[0] if ld and pre > 20 else 0.0


def timed(ctx, label, fns, **kw):
    """run_group, with a unit of work redone (while --retry-budget lasts) when other processes took
    more than 15% of our CPUs during it and the clock is the wall clock: the whole interleaved group
    with one thread, each library's block with several.  Returns (results, flag); flag is '‡' when
    something stayed contended."""
    worst = [0.0]

    def retry(share, what):
        """Record share; wait for quiet and return True when `what` should be redone."""
        if share < 0.15 or ctx.args.clock == "cpu" or ctx.retry_left <= 0:
            worst[0] = max(worst[0], share)
            return False
        t0 = time.time()
        progress(f"{what}: other processes took {100 * share:.0f}% of the CPU time; waiting and redoing it")
        wait_idle(ctx.cpus, min(10.0, ctx.retry_left))
        ctx.retry_left -= time.time() - t0
        ctx.retries += 1
        return True

    if ctx.nthreads == 1:
        for attempt in range(3):
            meter = LoadMeter(ctx.cpus).start()
            res = run_group(fns, ctx.args.target, **kw)
            share = contention(meter)
            if attempt == 2:
                worst[0] = max(worst[0], share)
            elif not retry(share, label):
                break
    else:
        res = {}
        for name, fn in fns.items():
            for attempt in range(3):
                meter = LoadMeter(ctx.cpus).start()
                r = run_group({name: fn}, ctx.args.target, interleave=False, settle=SETTLE_S, **kw)
                share = contention(meter)
                if attempt == 2:
                    worst[0] = max(worst[0], share)
                    break
                if not retry(share, f"{label} [{name if isinstance(name, str) else '/'.join(name)}]"):
                    break
            res.update(r)
    if worst[0] >= 0.15:
        ctx.contended[label] = worst[0]
        return res, "‡"
    return res, ""


# ----------------------------------------------------------------------------------------------------
# benchmark sections
# ----------------------------------------------------------------------------------------------------
class Ctx:
    pass


def aligned_empty(np, shape, dtype, align=64):
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    buf = np.empty(nbytes + align, np.uint8)
    off = (-buf.ctypes.data) % align
    return buf[off:off + nbytes].view(dtype).reshape(shape)


def rand_f32(ctx, shape):
    np = ctx.np
    a = aligned_empty(np, shape, np.float32)
    a[...] = ctx.rng.random(shape, dtype=np.float32)
    a *= 2
    a -= 1
    return a


def rand_i8(ctx, shape, dtype):
    np = ctx.np
    a = aligned_empty(np, shape, dtype)
    lo, hi = (0, 256) if np.dtype(dtype) == np.uint8 else (-128, 128)
    a[...] = ctx.rng.integers(lo, hi, size=shape, dtype=np.int16).astype(dtype)
    return a


def check_rows(ctx, C, A, Bop, exact, K):
    """Compare C against a float64 reference on up to 48 sampled rows; None or a description."""
    np = ctx.np
    M = C.shape[0]
    rows = np.unique(np.concatenate([[0, M - 1], ctx.rng.integers(0, M, size=min(M, 46))]))
    ref = A[rows].astype(np.float64) @ Bop.astype(np.float64)
    got = C[rows].astype(np.float64)
    err = float(np.max(np.abs(got - ref))) if got.size else 0.0
    if exact:
        return None if err == 0 else f"max |err| {err:g} (expected exact)"
    tol = 1e-6 * K + 1e-5
    return None if err <= tol else f"max |err| {err:.3g} > {tol:.3g}"


def mark_checks(ctx, res, outputs, A, Bop, exact, K):
    for name, C in outputs.items():
        m = res.get(name)
        if isinstance(m, Meas):
            try:
                m.bad = check_rows(ctx, C, A, Bop, exact, K)
            except Exception as e:
                m.bad = f"check failed: {e}"


def rate(m, ops):
    return ops / m.median / 1e9 if isinstance(m, Meas) else None


def cell(ctx, m, ops, label):
    """Formatted GFLOP/s for a table cell, registering footnotes for failures and oddities."""
    if m is None:
        return "–"
    if isinstance(m, Failed):
        ctx.notes.append(f"{label}: {m.err}")
        return "err"
    s = fmt_rate(ops / m.median / 1e9)
    if m.bad:
        ctx.notes.append(f"{label}: RESULT MISMATCH, {m.bad}")
        s += " ✗"
    if m.note:
        ctx.notes.append(f"{label}: {m.note} ({m.median:.2f} s)")
        s += "¹"
    elif m.reps < 3:
        ctx.few_reps.add(label)
    return s


def fmt_rate(x):
    if x is None:
        return "–"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def ratio(a, b):
    if a is None or b is None or b == 0:
        return "–"
    r = a / b
    return f"{r:.0f}" if r >= 100 else f"{r:.1f}" if r >= 10 else f"{r:.2f}"


def pct(a, peak):
    if a is None or not peak:
        return "–"
    return f"{100 * a / peak:.0f}%"


def bench_shapes(args, squares, quick_squares):
    """(M, N, K) cases: --sizes, else the quick or full squares; then the skinny shapes unless left out."""
    if args.sizes:
        sq = [int(s) for s in args.sizes.split(",") if s]
    else:
        sq = quick_squares if args.quick else squares
    shapes = [(n, n, n) for n in sq]
    if not (args.quick or args.no_skinny):
        shapes += [(m, SKINNY_NK, SKINNY_NK) for m in SKINNY_M]
    return shapes


def checked_first(checked, raw):
    """A callable that makes the argument-checked (raising) call first, then the raw ctypes one whose
    status is not looked at, so a failing library shows up as 'err' and timing has no extra cost."""
    state = {"ok": False}

    def fn():
        if state["ok"]:
            return raw()
        checked()
        state["ok"] = True
    return fn


def make_sgemm_case(ctx, M, N, K, layout, with_peers=True):
    """Arrays and closures for one sgemm shape; returns (fns, outputs, A, Bop)."""
    np, gk = ctx.np, ctx.gemmkit
    tb = layout[1]
    A = rand_f32(ctx, (M, K))
    B = rand_f32(ctx, (K, N) if tb == "N" else (N, K))
    ldb = N if tb == "N" else K
    Bop = B if tb == "N" else B.T
    fns, outs = {}, {}
    Cg = aligned_empty(np, (M, N), np.float32)
    outs["gemmkit"] = Cg
    fns["gemmkit"] = lambda: gk.sgemm("N", tb, M, N, K, 1.0, A, K, B, ldb, 0.0, Cg, N)
    if not with_peers:
        return fns, outs, A, Bop
    Cn = aligned_empty(np, (M, N), np.float32)
    outs["numpy"] = Cn
    fns["numpy"] = lambda: np.matmul(A, Bop, out=Cn)
    if ctx.dnnl is not None:
        Cd = aligned_empty(np, (M, N), np.float32)
        outs["onednn"] = Cd
        raw = ctx.dnnl.raw_sgemm
        bn = tb.encode()
        pa, pb, pc = A.ctypes.data, B.ctypes.data, Cd.ctypes.data
        fns["onednn"] = checked_first(lambda: ctx.dnnl.sgemm("N", tb, M, N, K, 1.0, A, K, B, ldb, 0.0, Cd, N),
                                      lambda: raw(b"N", bn, M, N, K, 1.0, pa, K, pb, ldb, 0.0, pc, N))
    if ctx.scipy_sgemm is not None and M * N * K <= SCIPY_MAX_MNK:
        Cs = aligned_empty(np, (M, N), np.float32)
        outs["scipy"] = Cs
        sg = ctx.scipy_sgemm
        # row-major C = op(A) op(B)  <=>  column-major C^T = op(B)^T op(A)^T, all views, no copies
        if tb == "N":
            fns["scipy"] = lambda: sg(1.0, B.T, A.T, beta=0.0, c=Cs.T, overwrite_c=1)
        else:
            fns["scipy"] = lambda: sg(1.0, B.T, A.T, trans_a=1, beta=0.0, c=Cs.T, overwrite_c=1)
        r = fns["scipy"]()
        if not np.shares_memory(r, Cs):
            ctx.notes.append("scipy sgemm did not write in place (a copy is included in its time)")
    return fns, outs, A, Bop


def section_sgemm(ctx, out):
    args = ctx.args
    peak = ctx.peak_fp32 * ctx.nthreads if ctx.peak_fp32 else None
    out(f"### sgemm ({args.layout}), GFLOP/s (median), threads={ctx.nthreads}")
    out()
    hdr = ["M×N×K", "gemmkit", "NumPy (OpenBLAS)", "oneDNN", "SciPy sgemm", "gk/NumPy", "gk/oneDNN"]
    if peak:
        hdr.append(f"gk % peak ({ctx.nthreads}×{ctx.peak_fp32:.0f})")
    rows = []
    for (M, N, K) in bench_shapes(args, SQUARES, QUICK_SQUARES):
        label = f"{M}×{N}×{K}"
        progress(f"sgemm {label}")
        fns, outs, A, Bop = make_sgemm_case(ctx, M, N, K, args.layout)
        res, flag = timed(ctx, f"sgemm {label}", fns)
        mark_checks(ctx, res, outs, A, Bop, exact=False, K=K)
        ops = 2.0 * M * N * K
        ctx.record("sgemm", label, res, ops)
        g, n, d = (rate(res.get(k), ops) for k in ("gemmkit", "numpy", "onednn"))
        row = [label + flag,
               cell(ctx, res.get("gemmkit"), ops, f"sgemm {label}: gemmkit"),
               cell(ctx, res.get("numpy"), ops, f"sgemm {label}: NumPy"),
               cell(ctx, res.get("onednn"), ops, f"sgemm {label}: oneDNN") if ctx.dnnl else "n/a",
               cell(ctx, res.get("scipy"), ops, f"sgemm {label}: SciPy"),
               ratio(g, n), ratio(g, d)]
        if peak:
            row.append(pct(g, peak))
        rows.append(row)
        ctx.summary[("sgemm", label)] = {"gemmkit": g, "numpy": n, "onednn": d,
                                         "scipy": rate(res.get("scipy"), ops)}
        del fns, outs, A, Bop
    table(out, hdr, rows)
    out()


def section_int8(ctx, out):
    args = ctx.args
    np, gk = ctx.np, ctx.gemmkit
    tb = args.layout[1]
    peak = ctx.peak_int8 * ctx.nthreads if ctx.peak_int8 else None
    out(f"### int8 GEMM ({args.layout}, offsetc F, ao=bo=0, alpha=1, beta=0), GOP/s (median), threads={ctx.nthreads}")
    out()
    hdr = ["M×N×K", "gk u8s8s32", "oneDNN u8s8s32", "gk s8s8s32", "oneDNN s8s8s32", "NumPy int32 @",
           "u8: gk/oneDNN", "s8: gk/oneDNN", "gk u8/NumPy"]
    if peak:
        hdr += [f"gk u8 % VNNI peak ({ctx.nthreads}×{ctx.peak_int8:.0f})", "gk s8 % VNNI peak"]
    rows = []
    for (M, N, K) in bench_shapes(args, INT8_SQUARES, QUICK_INT8):
        label = f"{M}×{N}×{K}"
        progress(f"int8 {label}")
        Au = rand_i8(ctx, (M, K), np.uint8)
        As = rand_i8(ctx, (M, K), np.int8)
        B = rand_i8(ctx, (K, N) if tb == "N" else (N, K), np.int8)
        ldb = N if tb == "N" else K
        Bop = B if tb == "N" else B.T
        co = np.zeros(1, np.int32)
        fns, outs = {}, {}
        C1 = aligned_empty(np, (M, N), np.int32)
        C2 = aligned_empty(np, (M, N), np.int32)
        outs["gk_u8"], outs["gk_s8"] = C1, C2
        fns["gk_u8"] = lambda: gk.gemm_u8s8s32("N", tb, "F", M, N, K, 1.0, Au, K, 0, B, ldb, 0, 0.0, C1, N, co)
        fns["gk_s8"] = lambda: gk.gemm_s8s8s32("N", tb, "F", M, N, K, 1.0, As, K, 0, B, ldb, 0, 0.0, C2, N, co)
        if ctx.dnnl is not None:
            D1 = aligned_empty(np, (M, N), np.int32)
            D2 = aligned_empty(np, (M, N), np.int32)
            outs["dnnl_u8"], outs["dnnl_s8"] = D1, D2
            d = ctx.dnnl
            ru, rs, bn = d.raw_u8s8s32, d.raw_s8s8s32, tb.encode()
            pau, pas, pb, pco = Au.ctypes.data, As.ctypes.data, B.ctypes.data, co.ctypes.data
            p1, p2 = D1.ctypes.data, D2.ctypes.data
            fns["dnnl_u8"] = checked_first(
                lambda: d.gemm_u8s8s32("N", tb, "F", M, N, K, 1.0, Au, K, 0, B, ldb, 0, 0.0, D1, N, co),
                lambda: ru(b"N", bn, b"F", M, N, K, 1.0, pau, K, 0, pb, ldb, 0, 0.0, p1, N, pco))
            fns["dnnl_s8"] = checked_first(
                lambda: d.gemm_s8s8s32("N", tb, "F", M, N, K, 1.0, As, K, 0, B, ldb, 0, 0.0, D2, N, co),
                lambda: rs(b"N", bn, b"F", M, N, K, 1.0, pas, K, 0, pb, ldb, 0, 0.0, p2, N, pco))
        if M * N * K <= NUMPY_INT32_MAX_MNK:
            A32 = Au.astype(np.int32)
            B32 = B.astype(np.int32)
            B32op = B32 if tb == "N" else B32.T
            C3 = aligned_empty(np, (M, N), np.int32)
            outs["numpy"] = C3
            fns["numpy"] = lambda: np.matmul(A32, B32op, out=C3)
        res, flag = timed(ctx, f"int8 {label}", fns)
        for name, C in outs.items():
            m = res.get(name)
            if isinstance(m, Meas):
                Aref = As if name.endswith("s8") else Au
                try:
                    m.bad = check_rows(ctx, C, Aref, Bop, exact=True, K=K)
                except Exception as e:
                    m.bad = f"check failed: {e}"
        ops = 2.0 * M * N * K
        ctx.record("int8", label, res, ops)
        r = {k: rate(res.get(k), ops) for k in ("gk_u8", "dnnl_u8", "gk_s8", "dnnl_s8", "numpy")}
        has = ctx.dnnl is not None
        row = [label + flag,
               cell(ctx, res.get("gk_u8"), ops, f"int8 {label}: gk u8s8s32"),
               cell(ctx, res.get("dnnl_u8"), ops, f"int8 {label}: oneDNN u8s8s32") if has else "n/a",
               cell(ctx, res.get("gk_s8"), ops, f"int8 {label}: gk s8s8s32"),
               cell(ctx, res.get("dnnl_s8"), ops, f"int8 {label}: oneDNN s8s8s32") if has else "n/a",
               cell(ctx, res.get("numpy"), ops, f"int8 {label}: NumPy int32"),
               ratio(r["gk_u8"], r["dnnl_u8"]), ratio(r["gk_s8"], r["dnnl_s8"]), ratio(r["gk_u8"], r["numpy"])]
        if peak:
            row += [pct(r["gk_u8"], peak), pct(r["gk_s8"], peak)]
        rows.append(row)
        ctx.summary[("int8", label)] = r
        del fns, outs
    table(out, hdr, rows)
    out()
    out("NumPy int32 @ is NumPy's non-BLAS integer matmul on A.astype(int32), B.astype(int32) (conversion "
        f"not timed); run only for M·N·K ≤ {NUMPY_INT32_MAX_MNK} (it runs at ~1 GOP/s).")
    out()


def kernel_names(gk):
    try:
        cfg = gk.show_config(print_out=False)
    except Exception as e:
        return {"arch": f"? ({e})", "sgemm": "?", "int8": "?"}
    return {"arch": cfg.get("arch", "?"), "sgemm": (cfg.get("sgemm") or {}).get("kernel", "?"),
            "int8": (cfg.get("int8") or {}).get("kernel", "?")}


def section_arch(ctx, out):
    args = ctx.args
    np, gk = ctx.np, ctx.gemmkit
    S = args.arch_size
    tb = args.layout[1]
    try:
        archs = list(gk.available_archs())
    except Exception as e:
        out(f"(kernel-path table skipped: available_archs() failed: {e})")
        return
    best = archs[-1] if archs else None
    order = [best] + [a for a in reversed(archs) if a != best]
    peak8 = ctx.peak_int8 * ctx.nthreads if ctx.peak_int8 else None
    ymm8 = ctx.peaks.get("u8s8 ymm VNNI(evex)") if ctx.peaks else None
    out(f"### Every kernel path at {S}×{S}×{S} ({args.layout}), threads={ctx.nthreads}")
    out()
    hdr = ["path (use_arch)", "int8 kernel", "u8s8s32 GOP/s", "s8s8s32 GOP/s", f"u8 vs {best}",
           "u8 % zmm VNNI peak", "sgemm kernel", "sgemm GFLOP/s", f"sgemm vs {best}"]
    rows = []
    Au = rand_i8(ctx, (S, S), np.uint8)
    As = rand_i8(ctx, (S, S), np.int8)
    B8 = rand_i8(ctx, (S, S), np.int8)
    B8op = B8 if tb == "N" else B8.T
    co = np.zeros(1, np.int32)
    Af = rand_f32(ctx, (S, S))
    Bf = rand_f32(ctx, (S, S))
    Bfop = Bf if tb == "N" else Bf.T
    ops = 2.0 * S ** 3
    # One interleaved group for all paths (each call selects its path first), so background load
    # hits every path alike.  set_arch costs well under a microsecond next to a >=0.1 ms GEMM.
    progress(f"kernel paths {', '.join(order)} at {S}")
    names, fns, failed = {}, {}, {}
    previous = gk.get_arch()

    def bind(arch, kind):
        set_arch = gk.set_arch
        if kind == "u8":
            return lambda: (set_arch(arch), gk.gemm_u8s8s32("N", tb, "F", S, S, S, 1.0, Au, S, 0, B8, S, 0, 0.0,
                                                            C1[arch], S, co))
        if kind == "s8":
            return lambda: (set_arch(arch), gk.gemm_s8s8s32("N", tb, "F", S, S, S, 1.0, As, S, 0, B8, S, 0, 0.0,
                                                            C2[arch], S, co))
        return lambda: (set_arch(arch), gk.sgemm("N", tb, S, S, S, 1.0, Af, S, Bf, S, 0.0, Cf[arch], S))

    C1, C2, Cf = {}, {}, {}
    for arch in order:
        try:
            with gk.use_arch(arch):
                names[arch] = kernel_names(gk)
        except Exception as e:
            failed[arch] = f"{type(e).__name__}: {e}"
            continue
        C1[arch] = aligned_empty(np, (S, S), np.int32)
        C2[arch] = aligned_empty(np, (S, S), np.int32)
        Cf[arch] = aligned_empty(np, (S, S), np.float32)
        for kind in ("u8", "s8", "sgemm"):
            fns[(arch, kind)] = bind(arch, kind)
    try:
        allres, flag = timed(ctx, f"kernel paths at {S}", fns)
    finally:
        gk.set_arch(previous)
    base = {}
    for arch in order:
        if arch in failed:
            rows.append([arch, f"failed: {failed[arch]}"] + ["–"] * (len(hdr) - 2))
            continue
        res = {kind: allres.get((arch, kind)) for kind in ("u8", "s8", "sgemm")}
        for name, C, A, Bop, exact in (("u8", C1[arch], Au, B8op, True), ("s8", C2[arch], As, B8op, True),
                                       ("sgemm", Cf[arch], Af, Bfop, False)):
            m = res.get(name)
            if isinstance(m, Meas):
                m.bad = check_rows(ctx, C, A, Bop, exact=exact, K=S)
        ctx.record("arch", arch, {k: v for k, v in res.items() if v is not None}, ops)
        r = {k: rate(res.get(k), ops) for k in ("u8", "s8", "sgemm")}
        if arch == best:
            base = r
        p = pct(r["u8"], peak8)
        if arch == "avx_vnni" and ymm8 and r["u8"]:
            p += f" ({100 * r['u8'] / (ymm8 * ctx.nthreads):.0f}% of ymm VNNI)"
        rows.append([arch + flag, f"`{names[arch]['int8']}`",
                     cell(ctx, res.get("u8"), ops, f"path {arch}: u8s8s32"),
                     cell(ctx, res.get("s8"), ops, f"path {arch}: s8s8s32"),
                     ratio(r["u8"], base.get("u8")), p, f"`{names[arch]['sgemm']}`",
                     cell(ctx, res.get("sgemm"), ops, f"path {arch}: sgemm"),
                     ratio(r["sgemm"], base.get("sgemm"))])
        ctx.summary[("arch", arch)] = r
    table(out, hdr, rows)
    out()


def section_latency(ctx, out):
    args = ctx.args
    n = 64
    progress("latency 64x64x64")
    fns, outs, A, Bop = make_sgemm_case(ctx, n, n, n, args.layout)
    res, flag = timed(ctx, "latency", fns, min_sample=2e-4, max_samples=5000)
    mark_checks(ctx, res, outs, A, Bop, exact=False, K=n)
    ctx.record("latency", f"{n}", res, 2.0 * n ** 3)
    out(f"### Per-call latency, sgemm {n}×{n}×{n} ({args.layout}), same arrays, threads={ctx.nthreads}{flag}")
    out()
    calls = {"gemmkit": "`gemmkit.sgemm(...)`",
             "scipy": "`scipy.linalg.blas.sgemm(1, B.T, A.T, c=C.T, overwrite_c=1)`",
             "numpy": "`np.matmul(A, B, out=C)`",
             "onednn": "`dnnl_sgemm` via ctypes"}
    g = res.get("gemmkit")
    rows = []
    for k in ("gemmkit", "scipy", "numpy", "onednn"):
        m = res.get(k)
        if m is None:
            continue
        if isinstance(m, Failed):
            rows.append([calls[k], "err", "–", "–", "–"])
            ctx.notes.append(f"latency {k}: {m.err}")
            continue
        us = m.median * 1e6
        lo = min(m.samples) * 1e6
        vs = f"{m.median / g.median:.2f}×" if isinstance(g, Meas) else "–"
        rows.append([calls[k] + (" ✗" if m.bad else ""), f"{us:.2f}", f"{lo:.2f}",
                     fmt_rate(2.0 * n ** 3 / m.median / 1e9), vs])
        if m.bad:
            ctx.notes.append(f"latency {k}: RESULT MISMATCH, {m.bad}")
        ctx.summary[("latency", k)] = us
    table(out, ["call", "µs/call (median)", "µs (best batch)", "GFLOP/s", "time vs gemmkit"], rows)
    out()
    out(f"(medians over batches of {g.inner if isinstance(g, Meas) else '?'} back-to-back calls; the ctypes call "
        "into oneDNN adds ~1 µs of Python overhead)")
    out()


# ----------------------------------------------------------------------------------------------------
# main
# ----------------------------------------------------------------------------------------------------
def main(argv=None):
    import faulthandler
    faulthandler.enable()   # a crash in a kernel prints where it happened
    argv = sys.argv[1:] if argv is None else argv
    args = parse_args(argv)
    maybe_reexec(args, argv)

    out = Out(args.markdown)
    t_start = time.time()
    try:
        import numpy as np
    except ImportError:
        sys.exit("run_bench: NumPy is required")
    snap_src = None
    if not args.no_snapshot:
        try:
            snap_src = snapshot_gemmkit()
        except Exception as e:
            progress(f"could not snapshot gemmkit ({e}); importing it in place")
    try:
        import gemmkit
    except Exception as e:
        sys.exit(f"run_bench: `import gemmkit` failed ({type(e).__name__}: {e}); rebuild with "
                 f"`cd {REPO} && pip install -e . --no-build-isolation -q`")
    so_orig = gemmkit._core.__file__
    if snap_src:
        so_orig = os.path.join(snap_src, os.path.basename(so_orig))
    try:
        st = os.stat(so_orig)
        so_stat = (st.st_mtime, st.st_size)
    except Exception:
        so_stat = None
    try:
        from scipy.linalg.blas import sgemm as scipy_sgemm
        import scipy
        scipy_version = scipy.__version__
    except Exception:
        scipy_sgemm, scipy_version = None, None
    try:
        from threadpoolctl import threadpool_info, threadpool_limits
    except Exception:
        threadpool_info = threadpool_limits = None

    aff = sorted(os.sched_getaffinity(0))
    nthreads = len(aff) if args.threads == "all" else int(args.threads)
    warnings = []
    if args.threads != "all" and len(aff) != nthreads:
        warnings.append(f"WARNING: --threads {nthreads} but the process may run on CPUs {aff} "
                        f"(not pinned; run without --no-reexec or under taskset)")
    gemmkit.set_num_threads(nthreads)
    if args.clock == "cpu":
        CLOCK["now"] = time.process_time
    limiter = None
    if threadpool_limits is not None:
        limiter = threadpool_limits(limits=nthreads, user_api="blas")
    dnnl = onednn.load()

    ctx = Ctx()
    ctx.args, ctx.np, ctx.gemmkit, ctx.dnnl, ctx.scipy_sgemm = args, np, gemmkit, dnnl, scipy_sgemm
    ctx.rng = np.random.default_rng(args.seed)
    ctx.nthreads = nthreads
    ctx.notes, ctx.few_reps, ctx.summary, ctx.raw = [], set(), {}, []
    ctx.cpus, ctx.contended, ctx.retries, ctx.retry_left = aff, {}, 0, args.retry_budget

    def record(section, label, res, ops):
        for name, m in res.items():
            item = {"section": section, "case": label, "lib": name, "ops": ops}
            if isinstance(m, Meas):
                item.update(median_s=m.median, samples_s=m.samples, inner=m.inner, mismatch=m.bad)
            else:
                item.update(error=m.err)
            ctx.raw.append(item)
    ctx.record = record

    wait = args.wait_idle if args.wait_idle is not None else (20.0 if args.clock == "wall" else 0.0)
    waited = wait_idle(aff, wait) if wait > 0 else 0.0
    idle = idle_check(aff)
    meter = LoadMeter(aff).start()

    # peaks
    ctx.peaks, peak_src = None, None
    if args.peak_fp32 is None or args.peak_int8 is None:
        if not args.no_probe:
            progress("peak probe")
            pcpus = online_cpus()[:4]
            ctx.peaks, why = probe_peaks(os.path.abspath(args.probe_src), pcpus)
            peak_src = (f"{os.path.relpath(os.path.abspath(args.probe_src), REPO)}, max over CPUs "
                        f"{','.join(map(str, pcpus))} x 3 runs x 3 repeats")
            if why:
                peak_src = why if ctx.peaks is None else peak_src + "; " + why
                if ctx.peaks is not None:
                    warnings.append("WARNING: peak probe " + why)
        else:
            peak_src = "probe disabled"
    pk = ctx.peaks or {}
    ctx.peak_fp32 = args.peak_fp32 if args.peak_fp32 is not None else pk.get("fp32 zmm FMA")
    ctx.peak_int8 = args.peak_int8 if args.peak_int8 is not None else pk.get("u8s8 zmm VNNI")

    # header
    cmd = os.environ.get(ORIG_ENV) or shlex.join(["python"] + sys.argv)
    ci = cpu_info()
    kn = kernel_names(gemmkit)
    mode = (f"threads=1, pinned to CPU {aff[0]}" if nthreads == 1 and len(aff) == 1 else
            f"threads={nthreads}, CPUs {','.join(map(str, aff))}")
    out(f"## gemmkit benchmark: {mode}, layout {args.layout}{', quick' if args.quick else ''}")
    out()
    out(f"- command: `{cmd}`")
    if os.environ.get(REEXEC_ENV):
        out(f"  (re-executed itself with: {os.environ[REEXEC_ENV]})")
    out(f"- date: {datetime.datetime.now().isoformat(timespec='seconds')}, load average at start "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}")
    model = ci.get("Model name", platform.processor() or "?")
    fam = f"family {ci.get('CPU family')} model {ci.get('Model')}" if ci.get("CPU family") else ""
    out(f"- CPU: {model} ({fam}{', ' if fam else ''}{ci.get('CPU(s)', os.cpu_count())} CPUs, "
        f"L2 {ci.get('L2 cache', '?')}, L3 {ci.get('L3 cache', '?')}"
        f"{', hypervisor ' + ci['Hypervisor vendor'] if ci.get('Hypervisor vendor') else ''}); "
        f"affinity {','.join(map(str, aff))}")
    out(f"- gemmkit {getattr(gemmkit, '__version__', '?')} (git {git_info()}): path `{kn['arch']}`, "
        f"sgemm `{kn['sgemm']}`, int8 `{kn['int8']}`, threads {gemmkit.get_num_threads()}"
        + (f"; imported from a snapshot of {snap_src} taken at the start" if snap_src else ""))
    blas = ""
    if threadpool_info is not None:
        try:
            infos = [i for i in threadpool_info() if i.get("user_api") == "blas"]
            def owner(p):
                return "NumPy" if "numpy" in p else "SciPy" if "scipy" in p else os.path.basename(p)
            blas = "; ".join(f"{owner(i['filepath'])}: {i.get('internal_api')} {i.get('version')} "
                             f"({i.get('architecture')} kernels, {i.get('num_threads')} "
                             f"thread{'' if i.get('num_threads') == 1 else 's'})" for i in infos)
        except Exception:
            blas = ""
    out(f"- NumPy {np.__version__}, SciPy {scipy_version or 'not installed'}; BLAS {blas or '?'}")
    ob = {k: v for k, v in os.environ.items() if k.startswith("OPENBLAS_") and k != "OPENBLAS_NUM_THREADS"}
    if ob:
        out(f"  (environment: {', '.join(f'{k}={v}' for k, v in sorted(ob.items()))}"
            + ("; OPENBLAS_CORETYPE forces that kernel set, `--openblas-coretype auto` lets OpenBLAS detect the CPU"
               if "OPENBLAS_CORETYPE" in ob else "") + ")")
    out(f"- oneDNN: {dnnl.describe() if dnnl else onednn.why_unavailable()}"
        + ("; dnnl_sgemm/dnnl_gemm_*s8s32 via ctypes, threads follow the affinity mask (TBB)" if dnnl else ""))
    if ctx.peak_fp32 or ctx.peak_int8:
        srcs = []
        if args.peak_fp32 is not None or args.peak_int8 is not None:
            srcs.append("command line")
        if ctx.peaks:
            srcs.append(peak_src)
        extra = ""
        if ctx.peaks:
            extra = "; probe: " + ", ".join(f"{k} {v:.0f}" for k, v in ctx.peaks.items())
        out(f"- single-core peak: fp32 {ctx.peak_fp32 or '?'} GFLOP/s, u8s8 VNNI {ctx.peak_int8 or '?'} GOP/s "
            f"({', '.join(srcs)}{extra})")
    else:
        out(f"- peak: unknown ({peak_src}); peak columns omitted")
    out("- timing: warm-up, then "
        + ("libraries interleaved round-robin" if nthreads == 1 else
           f"each library in its own block after a {SETTLE_S} s pause (others' spinning worker threads "
           "would steal its cores)")
        + f", ≥{args.target} s of samples each "
        f"(≥3 reps; 2 for calls > {SLOW_CALL_S} s), MEDIAN per call, "
        + ("this process's CPU time (pinned, 1 thread: equals wall time on an idle core; time the core spent "
           "on other processes is not counted)" if args.clock == "cpu" else "wall clock")
        + "; results row-checked against float64")
    if idle:
        busy = ", ".join(f"CPU {c} {100 * v:.0f}%" for c, v in sorted(idle.items()))
        out(f"- other load on our CPUs just before the run (0.5 s while idle): {busy}"
            + (f" (after waiting {waited:.0f} s for them to quieten)" if waited >= 1 else ""))
        if max(idle.values()) > 0.1:
            warnings.append("WARNING: another process was using our CPU(s) at start; figures may be low")
    w = stale_extension_warning(gemmkit, so_orig)
    if w:
        warnings.append(w)
    for w in warnings:
        out(f"- **{w}**")
    out()

    sections = {"sgemm": section_sgemm, "int8": section_int8, "arch": section_arch, "latency": section_latency}
    for name in ("sgemm", "int8", "arch", "latency"):
        if name in args.sections:
            try:
                sections[name](ctx, out)
            except Exception as e:
                import traceback
                traceback.print_exc()
                out(f"(section {name} aborted: {type(e).__name__}: {e})")
                out()

    if so_stat is not None:
        try:
            st = os.stat(so_orig)
            if (st.st_mtime, st.st_size) != so_stat:
                ctx.notes.append("the gemmkit extension was rebuilt while this ran: "
                                 + ("these figures are for the build at the start (run from a snapshot)"
                                    if snap_src else "the figures may mix builds and the process may crash at "
                                    "exit; rerun"))
        except OSError:
            pass
    ld = meter.stop()
    if ld and ld[0] > 0.1 and args.clock == "wall":
        ctx.notes.append(f"other processes used {100 * ld[0]:.0f}% of our CPUs' time during the run, so these "
                         "wall-clock figures are low; rerun on an idle machine")
    other = (f", CPU time taken on our CPUs by other processes during the run: {100 * ld[0]:.0f}%"
             + (f" (+ {100 * ld[1]:.0f}% hypervisor steal)" if ld[1] > 0.01 else "")) if ld else ""
    util = ""
    if UTIL["wall"] > 0:
        u = UTIL["cpu"] / (UTIL["wall"] * nthreads)
        util = f"; while timing, this process was on CPU {100 * u:.0f}% of the wall time ({nthreads} thread(s))"
        if args.clock == "cpu" and u < 0.9:
            ctx.notes.append(f"another process shared the CPU (this one ran {100 * u:.0f}% of the wall time): "
                             "CPU-time figures exclude that, but caches were shared too, so they may still be a "
                             "little low")
        if nthreads == 1 and u < 0.9 and args.clock == "wall":
            ctx.notes.append(f"the process got only {100 * u:.0f}% of its CPU while timing: another process "
                             "shared it, so the wall-clock figures are low; rerun when idle or with --clock cpu")
    if ctx.contended:
        shares = ", ".join(f"{100 * v:.0f}% ({k})" for k, v in ctx.contended.items())
        if args.clock == "cpu":
            out(f"‡ other processes took {shares} of the core's time during these cases; the CPU-time figures "
                "leave that out, but the core's caches were shared too, so they may be a few % low.")
        else:
            out(f"‡ other processes took {shares} of our CPUs' time during these cases"
                + (f" even after {ctx.retries} redo(s)" if ctx.retries else "") + "; treat them as low.")
        out()
    elif ctx.retries:
        out(f"({ctx.retries} case(s) redone because other processes were using our CPUs.)")
        out()
    if ctx.few_reps:
        out(f"Fewer than 3 timed reps (calls > {SLOW_CALL_S} s): " + ", ".join(sorted(ctx.few_reps)) + ".")
        out()
    if ctx.notes:
        out("Notes:")
        seen = set()
        for n in ctx.notes:
            if n not in seen:
                seen.add(n)
                out(f"- {n}")
        out()
    out(f"_total {time.time() - t_start:.0f} s, load average at end "
        f"{' '.join(f'{x:.2f}' for x in os.getloadavg())}{other}{util}_")
    out()
    out.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"command": cmd, "threads": nthreads, "layout": args.layout,
                       "peak_fp32": ctx.peak_fp32, "peak_int8": ctx.peak_int8, "kernels": kn,
                       "results": ctx.raw}, f, indent=1)
    if limiter is not None:
        limiter.restore_original_limits()
    bad = any(r.get("mismatch") for r in ctx.raw if r.get("lib", "").startswith("gk") or r.get("lib") == "gemmkit"
              or r.get("section") == "arch")
    return 2 if bad else 0


if __name__ == "__main__":
    rc = main()
    if onednn._state.get("lib") is not None:
        # oneDNN's TBB/SYCL runtime can crash in its C++ teardown at exit when TBB worker threads are
        # still winding down (seen with --threads all: SIGSEGV after all output, tbbmalloc in a worker).
        # Everything is written by now, so run the Python exit handlers and leave without that teardown.
        import atexit
        sys.stdout.flush()
        sys.stderr.flush()
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    sys.exit(rc)
