"""The machine the benchmark runs on: CPU model, git commit, the gemmkit snapshot, other processes' load on
our CPUs (/proc/stat, preemptions), and the per-core peaks measured by bench/peak_probe.c.
"""
import glob
import hashlib
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(HERE)
PROBE_SRC = os.path.join(HERE, "peak_probe.c")
STREAM_READ_SRC = os.path.join(HERE, "stream_read.c")


def run_quiet(cmd, timeout=60, **kw):
    """subprocess.run capturing text output; None when it could not run or timed out."""
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout, **kw)
    except Exception:
        return None


def cpu_info():
    """lscpu's fields ('Model name', 'CPU family', 'L2 cache', ...), the model from /proc/cpuinfo if needed."""
    info = {}
    r = run_quiet(["lscpu"], env=dict(os.environ, LC_ALL="C"))
    if r is not None and r.returncode == 0:
        for line in r.stdout.splitlines():
            k, _, v = line.partition(":")
            info[k.strip()] = v.strip()
    try:
        with open("/proc/cpuinfo") as f:
            text = f.read()
        m = re.search(r"^model name\s*:\s*(.*)$", text, re.M)
        if m:
            info["cpuinfo model name"] = m.group(1)
            info.setdefault("Model name", m.group(1))
    except OSError:
        pass
    return info


def git_info():
    """Short HEAD hash, with a note when csrc/ or gemmkit/ have uncommitted changes."""
    r = run_quiet(["git", "-C", REPO, "rev-parse", "--short", "HEAD"])
    if r is None or r.returncode != 0:
        return "no git"
    s = run_quiet(["git", "-C", REPO, "status", "--porcelain", "--", "csrc", "gemmkit", "setup.py"])
    dirty = s is not None and s.returncode == 0 and s.stdout.strip()
    return r.stdout.strip() + (" + uncommitted changes in csrc/ gemmkit/" if dirty else "")


def snapshot_gemmkit():
    """Copy the installed gemmkit package to a temporary folder first on sys.path, so a rebuild in place
    (others working on csrc/) can neither change nor crash a running benchmark. Returns the original
    package folder, or None when there is nothing to copy."""
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


def stale_extension_warning(so):
    """A note when a C/Cython source of the checkout is newer than the compiled extension `so`."""
    try:
        src = [p for pat in ("csrc/**/*.c", "csrc/**/*.h", "csrc/**/*.S", "gemmkit/*.pyx", "gemmkit/*.pxd")
               for p in glob.glob(os.path.join(REPO, pat), recursive=True)]
        if not src or not os.path.exists(so):
            return None
        newest = max(src, key=os.path.getmtime)
        if os.path.getmtime(newest) > os.path.getmtime(so) + 1:
            return (f"NOTE: {os.path.relpath(newest, REPO)} is newer than the built extension; these figures "
                    "are for the last build (`pip install . --no-build-isolation -q` to rebuild)")
    except Exception:
        return None
    return None


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
                    v = [int(x) for x in m.group(2).split()] + [0] * 8
                    idle, steal, total = v[3] + v[4], v[7], sum(v[:8])
                    out[int(m.group(1))] = (total - idle - steal, steal, total)
    except OSError:
        pass
    return out


def live_children_cpu_s():
    """{pid: user + system CPU seconds} of this process's live descendants (a Dask cluster's workers), or
    {} without psutil; os.times() counts a child only once it has exited and been waited for."""
    try:
        import psutil
        kids = psutil.Process().children(recursive=True)
    except Exception:
        return {}
    out = {}
    for k in kids:
        try:
            t = k.cpu_times()
            out[k.pid] = t.user + t.system
        except Exception:   # exited meanwhile
            pass
    return out


class LoadMeter:
    """CPU time spent on our CPUs by OTHER processes between start() and stop(), as a fraction (this
    process's live descendants count as ours)."""

    def __init__(self, cpus):
        self.cpus = cpus
        self.hz = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100

    @staticmethod
    def _preempted():
        return resource.getrusage(resource.RUSAGE_SELF).ru_nivcsw

    def start(self):
        self.j0, self.t0, self.w0, self.p0 = cpu_jiffies(), os.times(), time.time(), self._preempted()
        self.kids0 = live_children_cpu_s()
        return self

    def preemptions_per_s(self):
        """Involuntary context switches of our threads per second since start() (≈0 on an idle machine)."""
        wall = time.time() - self.w0
        return (self._preempted() - self.p0) / wall if wall > 0 else 0.0

    def stop(self):
        """(other processes' share, hypervisor steal share) of our CPUs' time since start(), or None."""
        j1, t1, wall = cpu_jiffies(), os.times(), time.time() - self.w0
        if not j1 or not self.j0 or wall <= 0:
            return None
        both = [c for c in self.cpus if c in j1 and c in self.j0]
        busy = sum(j1[c][0] - self.j0[c][0] for c in both) / self.hz
        steal = sum(j1[c][1] - self.j0[c][1] for c in both) / self.hz
        kids1 = live_children_cpu_s()
        mine = sum(t1[i] - self.t0[i] for i in range(4)) + sum(kids1.values()) - sum(self.kids0.values())
        cap = wall * len(self.cpus)
        return max(0.0, busy - mine) / cap, steal / cap


def idle_check(cpus, seconds=0.5):
    """Per-CPU busy fraction over `seconds` while we sleep (i.e. other processes' load)."""
    j0 = cpu_jiffies()
    time.sleep(seconds)
    j1 = cpu_jiffies()
    res = {}
    for c in cpus:
        if c in j0 and c in j1 and j1[c][2] > j0[c][2]:
            res[c] = (j1[c][0] - j0[c][0]) / (j1[c][2] - j0[c][2])
    return res


def wait_idle(cpus, max_wait, threshold=0.1):
    """Wait (up to max_wait s) until other processes use < threshold of each of our CPUs; seconds waited."""
    t0 = time.time()
    while time.time() - t0 < max_wait:
        busy = idle_check(cpus, 0.5)
        if not busy or max(busy.values()) < threshold:
            break
    return time.time() - t0


# ------------------------------------------------------------------------------------------------------
# peaks
# ------------------------------------------------------------------------------------------------------
def compile_probe(src=PROBE_SRC):
    """Compile peak_probe.c with the system C compiler into a cache folder (keyed by the source's hash);
    (path, None) or (None, reason)."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        return None, "no C compiler (cc/gcc/clang) for the peak probe"
    with open(src, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    exe = os.path.join(tempfile.gettempdir(), f"gemmkit-peak-probe-{os.getuid()}-{digest}")
    if os.path.exists(exe):
        return exe, None
    tmp = f"{exe}.{os.getpid()}"
    r = run_quiet([cc, "-O2", src, "-o", tmp])
    if r is None or r.returncode != 0:
        return None, "peak probe failed to compile: " + (r.stderr.strip()[-300:] if r else "timeout")
    os.replace(tmp, exe)
    return exe, None


def compile_library(src=STREAM_READ_SRC):
    """Compile a C file of the bench (stream_read.c) with the system C compiler into a shared library in a
    cache folder (keyed by the source's hash); (path, None) or (None, reason)."""
    cc = os.environ.get("CC") or shutil.which("cc") or shutil.which("gcc") or shutil.which("clang")
    if cc is None:
        return None, f"no C compiler (cc/gcc/clang) for {os.path.basename(src)}"
    with open(src, "rb") as f:
        digest = hashlib.sha256(f.read()).hexdigest()[:16]
    name = os.path.splitext(os.path.basename(src))[0]
    lib = os.path.join(tempfile.gettempdir(), f"gemmkit-{name}-{os.getuid()}-{digest}.so")
    if os.path.exists(lib):
        return lib, None
    tmp = f"{lib}.{os.getpid()}"
    r = run_quiet([cc, "-O2", "-shared", "-fPIC", "-pthread", src, "-o", tmp])
    if r is None or r.returncode != 0:
        return None, f"{os.path.basename(src)} failed to compile: " + (r.stderr.strip()[-300:] if r else "timeout")
    os.replace(tmp, lib)
    return lib, None


def parse_probe_output(text):
    """{'fp32 ymm FMA': 107.2, ..., 'stream read': 13.5} from the probe's '<name>: <value> <unit>' lines (its
    'bf16 unit: none' line has no figure and gives no entry)."""
    out = {}
    for line in text.splitlines():
        m = re.match(r"\s*(.+?):\s*([0-9.]+)\s*(GFLOP/s|GOP/s|GB/s)\s*$", line)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def probe_peaks(cpus, passes=3, seconds=0.1):
    """Run the probe `passes` times on each CPU of `cpus`; ({name: max value}, warning or None), or
    (None, reason). Contention can only lower a run, so the maximum is the best estimate of the core."""
    exe, why = compile_probe()
    if exe is None:
        return None, why
    best, utils = {}, []
    for _ in range(passes):
        for cpu in cpus:
            cmd = [exe, str(seconds)]
            if cpu is not None and shutil.which("taskset"):
                cmd = ["taskset", "-c", str(cpu)] + cmd
            ru0, w0 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
            r = run_quiet(cmd)
            ru1, w1 = resource.getrusage(resource.RUSAGE_CHILDREN), time.perf_counter()
            if r is None or r.returncode != 0:
                continue
            used = (ru1.ru_utime - ru0.ru_utime) + (ru1.ru_stime - ru0.ru_stime)
            utils.append(used / max(w1 - w0, 1e-9))
            for k, v in parse_probe_output(r.stdout).items():
                best[k] = max(best.get(k, 0.0), v)
    if not best:
        return None, "the peak probe printed nothing usable"
    if max(utils) < 0.9:   # the probe times itself on its CPU clock, but shared caches still cost
        return best, (f"the probe never had a CPU to itself (at most {100 * max(utils):.0f}% of one): its CPU "
                      "clock leaves other processes' time slices out, but the bandwidth figure may be low")
    return best, None


def peak_per_core(kind, probed, fp32=None, int8=None):
    """One core's peak for an op kind ('fp32', 'fp64', 'int8', 'bf16', 'stream') from the probe's figures or the
    command line's; (value, what it is) or (None, None). fp64 is half the fp32 FMA rate where not probed on the
    widest vectors; int8 is the AMX tdpbusd rate where the probe could run AMX (gemmkit's avx512_amx path runs
    wherever it can), else VNNI's, else the AVX2 int16 vpmaddwd rate (gemmkit's non-VNNI int8 kernels); bf16 is
    the AMX tdpbf16ps rate, else the zmm vdpbf16ps rate, else (no bf16 unit) the fp32 FMA peak."""
    p = probed or {}
    fp32_best = max((v, k) for k, v in p.items() if k.startswith("fp32")) if any(
        k.startswith("fp32") for k in p) else (None, None)
    if kind == "fp32":
        return (fp32, "command line") if fp32 else fp32_best
    if kind == "fp64":
        if fp32:
            return fp32 / 2, "half the fp32 peak of the command line"
        wide = [(v, k) for k, v in p.items() if k.startswith("fp64")]
        if fp32_best[0] and (not wide or fp32_best[0] / 2 > max(wide)[0]):
            return fp32_best[0] / 2, f"half of {fp32_best[1]}"
        return max(wide) if wide else (None, None)
    if kind == "int8":
        if int8:
            return int8, "command line"
        amx = [(v, k) for k, v in p.items() if "AMX" in k]
        if amx:
            return max(amx)
        vnni = [(v, k) for k, v in p.items() if "VNNI" in k]
        if vnni:
            return max(vnni)
        return (p["int16 ymm VPMADDWD"], "int16 ymm VPMADDWD (no VNNI)") if "int16 ymm VPMADDWD" in p else (None, None)
    if kind == "bf16":
        # the widest bf16 unit the probe could run (AMX-BF16, then AVX512_BF16's vdpbf16ps); without one a
        # bfloat16 GEMM widens to float32, so the fp32 FMA peak is what it can reach
        units = [(v, k) for k, v in p.items() if k.startswith("bf16")]
        amx = [u for u in units if "AMX" in u[1]]
        if amx or units:
            return max(amx or units)
        base, what = (fp32, "command line") if fp32 else fp32_best
        return (base, f"no bf16 unit: the fp32 FMA peak, {what}") if base else (None, None)
    if kind == "stream":
        return (p["stream read"], "stream read") if "stream read" in p else (None, None)
    raise ValueError(f"unknown peak kind {kind!r}")
