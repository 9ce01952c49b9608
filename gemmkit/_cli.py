"""The `gemmkit` command line (installed as the `gemmkit` console command; `python -m gemmkit` is the same):
`gemmkit` runs the main job, `gemmkit bench ...` the benchmark, `gemmkit info` prints the configuration."""
import argparse
import errno
import importlib.util
import os
import re
import signal
import sys

COMMANDS_HELP = """\
commands:
  %(prog)s [--no-bench]   what runs here, a self-check of every kernel path, a short table beside NumPy
  %(prog)s bench [...]    the benchmark of the checkout gemmkit was built from (%(prog)s bench --help)
  %(prog)s info           the configuration: CPU features, kernel path, kernels and blocking, threads
  %(prog)s tune [--quick] measure this machine's blockings and thresholds, save them (--show: the table)"""


def _main_job(argv, prog):
    parser = argparse.ArgumentParser(prog=prog, usage="%(prog)s [--no-bench] | bench [...] | info | tune [...]",
                                     description="gemmkit: fast, exact GEMM kernels.",
                                     epilog=COMMANDS_HELP % {"prog": prog},
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--no-bench", action="store_true", help="self-check only, no table")
    args = parser.parse_args(argv)
    from . import _main_job
    return _main_job.run(bench=not args.no_bench)


def _info(argv, prog):
    argparse.ArgumentParser(prog=f"{prog} info", description="Print gemmkit's configuration.").parse_args(argv)
    import gemmkit
    gemmkit.show_config()
    return 0


BENCH_ENTRY = os.path.join("bench", "run_bench.py")
BENCH_OPTION = "--bench-script"
BENCH_MISSING = ("{prog} bench: the benchmark is not part of the installed package; it lives in the bench/ "
                 "folder of a gemmkit source checkout. Build gemmkit in a checkout (pip install -e . or "
                 "setup.py build_ext --inplace) and run `{prog} bench ...` with it, or name the script: "
                 "`{prog} bench " + BENCH_OPTION + " CHECKOUT/bench/run_bench.py ...`.")
BENCH_HELP = """\
usage: {prog} bench [{opt} PATH] [BENCHMARK OPTIONS ...] [-- BENCHMARK OPTIONS ...]

Runs the gemmkit benchmark (bench/run_bench.py) of the source checkout this gemmkit package was imported
from (an in-place or editable build); no other folder is searched, the current one neither.

options:
  -h, --help            this message; nothing is run
  {opt} PATH   run this bench/run_bench.py instead (for example another checkout's)
  --                    everything after it goes to the benchmark, --help included:
                        `{prog} bench -- --help` lists the benchmark's own options

benchmark here: {entry}"""


def _is_gemmkit_checkout(root):
    """True when `root` holds bench/run_bench.py, bench/cli.py and the pyproject.toml of gemmkit."""
    if not (os.path.isfile(os.path.join(root, BENCH_ENTRY)) and os.path.isfile(os.path.join(root, "bench", "cli.py"))):
        return False
    try:
        with open(os.path.join(root, "pyproject.toml"), encoding="utf-8") as f:
            text = f.read(1 << 20)
    except (OSError, UnicodeDecodeError):
        return False
    return re.search(r'^\s*name\s*=\s*["\']gemmkit["\']', text, re.MULTILINE) is not None


def find_bench():
    """bench/run_bench.py of the checkout this package was imported from (an in-place or editable install),
    else None (an installed wheel). Never a folder found from the working directory: whoever can write
    there (a shared /tmp) would run code in the user's `gemmkit bench`."""
    root = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))
    return os.path.join(root, BENCH_ENTRY) if _is_gemmkit_checkout(root) else None


def _bench_args(argv):
    """(script given with --bench-script or None, wants the wrapper's help, the benchmark's arguments)."""
    script, wants_help, rest = None, False, []
    args = list(argv)
    while args:
        a = args.pop(0)
        if a == "--":
            rest.extend(args)
            break
        if a in ("-h", "--help"):
            wants_help = True
        elif a == BENCH_OPTION:
            if not args:
                raise ValueError(f"{BENCH_OPTION} needs a PATH")
            script = args.pop(0)
        elif a.startswith(BENCH_OPTION + "="):
            script = a[len(BENCH_OPTION) + 1:]
        else:
            rest.append(a)
    return script, wants_help, rest


def _bench(argv, prog):
    try:
        script, wants_help, rest = _bench_args(argv)
    except ValueError as e:
        print(f"{prog} bench: {e}", file=sys.stderr)
        return 2
    entry = os.path.abspath(script) if script else find_bench()
    if wants_help:
        print(BENCH_HELP.format(prog=prog, opt=BENCH_OPTION, entry=entry or "none found (see " + BENCH_OPTION + ")"))
        return 0
    if entry is None:
        print(BENCH_MISSING.format(prog=prog), file=sys.stderr)
        return 2
    if not os.path.isfile(entry):
        print(f"{prog} bench: {BENCH_OPTION} {script}: no such file", file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location("gemmkit_bench_entry", entry)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return int(module.main(list(rest)) or 0)


def _tune(argv, prog):
    from . import _tune as tune_module
    return tune_module.main(argv, prog)


COMMANDS = {"bench": _bench, "info": _info, "tune": _tune}


def _quiet_stdout():
    """Points stdout at the null device, so that the interpreter's last flush at exit cannot fail again."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):
        pass


# exit status of a command whose reader went away: what a shell reports for a process ended by SIGPIPE
CLOSED_PIPE_STATUS = 128 + int(getattr(signal, "SIGPIPE", 13))


def main(argv=None, prog="gemmkit"):
    """Entry point of the `gemmkit` console command; returns the exit status. A reader that closes the pipe
    (`gemmkit tune --show | head -1`) ends the command quietly; a full disk is said in one line."""
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        try:
            if argv and argv[0] in COMMANDS:
                status = COMMANDS[argv[0]](argv[1:], prog)
            else:
                status = _main_job(argv, prog)
        except SystemExit as e:  # argparse's --help and the benchmark's own exit: flushed below all the same
            status = 0 if e.code is None else e.code
        sys.stdout.flush()
    except BrokenPipeError:
        _quiet_stdout()
        return CLOSED_PIPE_STATUS
    except OSError as e:
        if e.errno not in (errno.ENOSPC, errno.EDQUOT if hasattr(errno, "EDQUOT") else errno.ENOSPC):
            raise
        _quiet_stdout()
        where = f" {e.filename}" if e.filename else " the output"
        print(f"{prog}: cannot write{where}: {e.strerror or 'no space left on device'}", file=sys.stderr)
        return 1
    return status
