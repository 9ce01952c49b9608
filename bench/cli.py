"""The benchmark's command line: options, the re-execution under taskset with the thread variables set, and
main(), which runs the selected cases modules and writes the report (and --json, --plot)."""
import argparse
import faulthandler
import json
import os
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import traceback

from . import cases, context, machine, onednn, report
from .progress import Progress

HERE = os.path.dirname(os.path.abspath(__file__))
ENTRY = os.path.join(HERE, "run_bench.py")
CHILD_ENV = "GEMMKIT_BENCH_CHILD"
THREAD_ENV_VARS = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

DESCRIPTION = """\
gemmkit benchmark: gemmkit's GEMMs against NumPy/SciPy (OpenBLAS), MKL and oneDNN, as markdown tables.

    python bench/run_bench.py --threads 1          # one core; re-executes itself under `taskset -c 0`
    python bench/run_bench.py --threads all        # every CPU this process may use
    python bench/run_bench.py --quick              # small sizes only (CI smoke)
    python bench/run_bench.py --threads 1 --markdown run.md --plot run.png
    python bench/docs_page.py run.md --plot run.png --name mycpu --title "My CPU"   # a docs performance page

Every library gets the same operands in the same run; each case is warmed up, then timed until each
library has --target seconds of samples; the tables give the MEDIAN per call, ratios of gemmkit to each
peer and the fraction of the peak that bench/peak_probe.c measures. Every result is checked against a
float64 reference (✗ marks a mismatch; the exit status is 2 when a gemmkit result mismatched).
Cases modules (--only): """


def invoked_as():
    """How the user started the benchmark: 'gemmkit bench' or 'python bench/run_bench.py'."""
    return "gemmkit bench" if sys.argv[1:2] == ["bench"] else "python bench/run_bench.py"


def parse_args(argv):
    known = list(cases.modules())
    p = argparse.ArgumentParser(prog=invoked_as(), description=DESCRIPTION + ", ".join(known) + ".",
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--threads", default="1",
                   help="'1' (pinned to one CPU; default), 'all' (every CPU of the affinity mask), a count, or a "
                        "list such as 1,all: one run per count, then a side-by-side table (and one --plot)")
    p.add_argument("--cpu", default=None, help="CPU for --threads 1: a number or 'auto' (the least busy one)")
    p.add_argument("--layout", choices=["NN", "NT"], default="NN", help="NT: B stored N×K and transposed")
    p.add_argument("--quick", action="store_true", help="small sizes only, one probe pass, shorter samples")
    p.add_argument("--sizes", default=None, help="comma-separated square sizes instead of each op's defaults")
    p.add_argument("--no-skinny", action="store_true", help="leave out the M in {1,16,128}, N=K=4096 shapes")
    default = cases.default_modules()
    p.add_argument("--only", default=",".join(default),
                   help=f"cases modules to run (default: {','.join(default)}; only when named: "
                        f"{','.join(k for k in known if k not in default) or 'none'})")
    p.add_argument("--arch-size", type=int, default=None, help="size of the kernel-path table (1024; 512 --quick)")
    p.add_argument("--target", type=float, default=None, help="seconds of samples per library per case (0.4; 0.15 --quick)")
    p.add_argument("--peak-fp32", type=float, default=None, help="one core's fp32 peak GFLOP/s (skips the probe with --peak-int8)")
    p.add_argument("--peak-int8", type=float, default=None, help="one core's int8 peak GOP/s")
    p.add_argument("--no-probe", action="store_true", help="don't compile/run bench/peak_probe.c")
    p.add_argument("--markdown", metavar="FILE", help="also append the report to FILE")
    p.add_argument("--json", metavar="FILE", help="write every sample to FILE (bench/plot.py can draw it)")
    p.add_argument("--plot", metavar="FILE.png", help="draw rate against size per library for each op (matplotlib)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar, one line per case")
    p.add_argument("--clock", choices=["auto", "wall", "cpu"], default="auto",
                   help="'cpu': process CPU time (only --threads 1); 'wall'; 'auto': cpu for 1 thread, else wall")
    p.add_argument("--openblas-coretype", default=None, metavar="NAME",
                   help="set OPENBLAS_CORETYPE for NumPy/SciPy (e.g. SkylakeX), or 'auto' to unset it")
    p.add_argument("--wait-idle", type=float, default=None, metavar="S",
                   help="first wait up to S s for other processes to leave our CPUs (20 wall clock, 0 cpu)")
    p.add_argument("--retry-budget", type=float, default=60.0, metavar="S",
                   help="wall clock: redo cases other processes disturbed (>15%% of our CPUs) within S s in all")
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--model", action="store_true",
                   help="instead of timing: llvm-mca's cycles per k step of each kernel the dispatcher selects, per "
                        "target CPU, against its multiply-add bound (bench/model.py; --model --help for its options)")
    p.add_argument("--no-snapshot", action="store_true", help="import gemmkit in place, not from a copy")
    p.add_argument("--no-reexec", action="store_true", help="don't re-execute under taskset with thread variables")
    p.add_argument("--tuning", default="on", metavar="on|off|PATH",
                   help="gemmkit's tuning file (`gemmkit tune`): on (the user cache dir's, when it matches), off, "
                        "or a file (sets GEMMKIT_TUNING)")
    p.add_argument("--blocking", choices=["auto", "hand", "model"], default="auto",
                   help="gemmkit's blocking without a tuning: auto (the model where no hand config), hand (path "
                        "tables and hand configs), model (the analytical model everywhere; sets GEMMKIT_BLOCKING)")
    a = p.parse_args(argv)
    a.thread_list = [t.strip() for t in a.threads.split(",") if t.strip()]
    if not a.thread_list or any(t != "all" and not (t.isdigit() and int(t) >= 1) for t in a.thread_list):
        p.error("--threads must be 'all', a positive integer, or a comma-separated list of them (e.g. 1,all)")
    if a.clock == "cpu" and a.threads != "1":
        p.error("--clock cpu needs --threads 1 (spinning worker threads would be counted)")
    if a.clock == "auto" and len(a.thread_list) == 1:
        a.clock = "cpu" if a.threads == "1" else "wall"
    if a.cpu not in (None, "auto"):
        if not a.cpu.isdigit():
            p.error("--cpu must be a CPU number or 'auto'")
        a.cpu = int(a.cpu)
    a.sections = [s.strip() for s in a.only.split(",") if s.strip()]
    if set(a.sections) - set(known):
        p.error(f"unknown cases module(s) in --only: {', '.join(sorted(set(a.sections) - set(known)))}")
    a.target = a.target if a.target is not None else (0.15 if a.quick else 0.4)
    a.arch_size = a.arch_size or (512 if a.quick else 1024)
    return a


def wanted_cpus(args):
    aff = sorted(os.sched_getaffinity(0))
    if args.threads == "all":
        return aff
    n = int(args.threads)
    if n > len(aff):
        sys.exit(f"run_bench: --threads {n} but this process may only use CPUs {aff}")
    if n > 1:
        return aff[:n]
    if args.cpu == "auto":
        busy = machine.idle_check(aff)
        return [min(aff, key=lambda c: (busy.get(c, 1.0), c))]
    if args.cpu is not None:
        return [args.cpu]
    return aff if len(aff) == 1 else [0 if 0 in aff else aff[0]]


def maybe_reexec(args, argv):
    """Re-execute once, before NumPy is imported, pinned (taskset) with the BLAS thread variables set to
    the thread count and LD_LIBRARY_PATH naming oneDNN's runtime folder."""
    if os.environ.get(CHILD_ENV) == "1" or args.no_reexec:
        return
    env, desc = dict(os.environ), []
    cmd = [sys.executable, ENTRY] + list(argv)
    cpus = wanted_cpus(args)
    if cpus != sorted(os.sched_getaffinity(0)):
        cpu_list = ",".join(map(str, cpus))
        if shutil.which("taskset"):
            cmd = ["taskset", "-c", cpu_list] + cmd
            desc.append(f"taskset -c {cpu_list}")
        else:
            os.sched_setaffinity(0, cpus)   # inherited through exec
            desc.append(f"sched_setaffinity({cpu_list})")
    if args.openblas_coretype == "auto" and "OPENBLAS_CORETYPE" in env:
        del env["OPENBLAS_CORETYPE"]
        desc.append("OPENBLAS_CORETYPE unset")
    elif args.openblas_coretype not in (None, "auto") and env.get("OPENBLAS_CORETYPE") != args.openblas_coretype:
        env["OPENBLAS_CORETYPE"] = args.openblas_coretype
        desc.append(f"OPENBLAS_CORETYPE={args.openblas_coretype}")
    for var in THREAD_ENV_VARS:
        if env.get(var) != str(len(cpus)):
            env[var] = str(len(cpus))
            desc.append(f"{var}={len(cpus)}")
    d = onednn.find_lib_dir()
    if d is not None:
        parts = [x for x in env.get("LD_LIBRARY_PATH", "").split(":") if x]
        if os.path.realpath(d) not in [os.path.realpath(x) for x in parts]:
            env["LD_LIBRARY_PATH"] = ":".join([d] + parts)
            desc.append(f"LD_LIBRARY_PATH={d}")
    if not desc:
        return
    env.update({CHILD_ENV: "1", context.ORIG_ENV: " ".join([invoked_as(), shlex.join(argv)]).strip(),
                context.REEXEC_ENV: "; ".join(desc)})
    sys.stdout.flush()
    sys.stderr.flush()
    os.execvpe(cmd[0], cmd, env)


def import_gemmkit(args):
    """gemmkit, from a snapshot copy unless --no-snapshot; (module, snapshot source or None)."""
    snap = None
    if not args.no_snapshot:
        try:
            snap = machine.snapshot_gemmkit()
        except Exception as e:
            print(f"  .. could not snapshot gemmkit ({e}); importing it in place", file=sys.stderr)
    try:
        import gemmkit
    except Exception as e:
        sys.exit(f"run_bench: `import gemmkit` failed ({type(e).__name__}: {e}); build it with "
                 f"`cd {machine.REPO} && pip install . --no-build-isolation -q`")
    return gemmkit, snap


def run_ops(ctx, out, ops):
    """Each op's cases and table, under the progress bar; an op that fails is reported, not fatal."""
    total = sum(len(op.specs(ctx)) for op in ops)
    with Progress(total, enabled=not ctx.args.no_progress) as bar:
        ctx.say, out.echo = bar.write, bar.echo
        for op in ops:
            try:
                op.run(ctx, out, bar.tick)
            except Exception as e:
                traceback.print_exc()
                out(f"(op {op.name} aborted: {type(e).__name__}: {e})")
                out()
        out.echo = print


def main(argv=None):
    """Run the benchmark; returns the exit status (2 when a gemmkit result mismatched)."""
    faulthandler.enable()   # a crash in a kernel prints where it happened
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--model" in argv:   # the llvm-mca model of the kernels' k loops (bench/model.py), nothing timed
        from . import model
        return model.main([x for x in argv if x != "--model"])
    args = parse_args(argv)
    if len(args.thread_list) > 1:
        return run_each_thread_count(args, argv)
    if args.tuning != "on":  # before gemmkit is imported (and inherited by the re-executed child)
        os.environ["GEMMKIT_TUNING"] = args.tuning
    if args.blocking != "auto":
        os.environ["GEMMKIT_BLOCKING"] = args.blocking
    maybe_reexec(args, argv)
    t_start = time.time()
    import numpy as np
    gemmkit, snap = import_gemmkit(args)
    cpus = sorted(os.sched_getaffinity(0))
    ctx = context.setup(args, cpus, len(cpus) if args.threads == "all" else int(args.threads), np, gemmkit, snap)
    w = machine.stale_extension_warning(gemmkit._core.__file__ if not snap else
                                        os.path.join(snap, os.path.basename(gemmkit._core.__file__)))
    if w:
        ctx.warnings.append(w)
    meter = machine.LoadMeter(cpus).start()
    out = report.Out(args.markdown)
    report.header(ctx, out)
    run_ops(ctx, out, cases.selected_ops(args.sections))
    report.footer(ctx, out, meter.stop(), time.time() - t_start)
    out.close()
    if args.json:
        report.write_json(ctx, args.json)
    if args.plot:
        from . import plot
        plot.plot_runs([ctx.run_data()], args.plot)
        print(f"plot: {args.plot}", file=sys.stderr)
    return 2 if ctx.gemmkit_mismatch() else 0


def without_options(argv, names):
    """argv less the options in `names` (each taking one value, as '--opt value' or '--opt=value')."""
    out, skip = [], False
    for arg in argv:
        if skip:
            skip = False
        elif arg in names:
            skip = True
        elif not any(arg.startswith(n + "=") for n in names):
            out.append(arg)
    return out


def run_each_thread_count(args, argv):
    """--threads 1,all: one run per thread count, each in its own process (pinned and timed as on its own,
    appending to --markdown), then the side-by-side table of gemmkit's rates and ratios and one --plot."""
    base = without_options(argv, {"--threads", "--json", "--plot"})
    folder = tempfile.mkdtemp(prefix="gemmkit-bench-runs-")
    runs, rc = [], 0
    for t in args.thread_list:
        path = os.path.join(folder, f"threads-{t}.json")
        rc = max(rc, subprocess.run([sys.executable, ENTRY, *base, "--threads", t, "--json", path]).returncode)
        if os.path.exists(path):
            with open(path) as f:
                runs.append(json.load(f))
    out = report.Out(args.markdown)
    report.side_by_side(runs, out)
    out.close()
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"runs": runs}, f, indent=1)
    if args.plot and runs:
        from . import plot
        plot.plot_runs(runs, args.plot)
        print(f"plot: {args.plot}", file=sys.stderr)
    shutil.rmtree(folder, ignore_errors=True)
    return rc


def run_and_exit(argv=None):
    """main(), then exit; with oneDNN loaded, without the C++ teardown of its TBB/SYCL runtime, which can
    crash at exit while TBB workers wind down (everything is written by then)."""
    rc = main(argv)
    sys.stdout.flush()
    sys.stderr.flush()
    if onednn._state.get("lib") is not None:
        import atexit
        atexit._run_exitfuncs()
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(rc)
    sys.exit(rc)
