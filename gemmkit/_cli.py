"""The `gemmkit` command line (installed as the `gemmkit` console command; `python -m gemmkit` is the same):
`gemmkit` runs the main job, `gemmkit bench ...` the benchmark, `gemmkit info` prints the configuration."""
import argparse
import importlib.util
import os
import sys

COMMANDS_HELP = """\
commands:
  %(prog)s [--no-bench]   what runs here, a self-check of every kernel path, a short table beside NumPy
  %(prog)s bench [...]    the benchmark (%(prog)s bench --help for its options)
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
BENCH_MISSING = ("{prog} bench: the benchmark is not part of the installed package; it lives in the bench/ "
                 "folder of a gemmkit source checkout. Run `{prog} bench ...` (or `python bench/run_bench.py "
                 "...`) inside a checkout (git clone the project, then pip install . there).")


def find_bench(start=None):
    """bench/run_bench.py of the gemmkit checkout that holds `start` (default: the current folder) or its
    parents, else of the checkout this package was imported from (an in-place or editable install); None
    when neither is a checkout (an installed wheel run elsewhere)."""
    here = os.path.abspath(start or os.getcwd())
    candidates = [here]
    while os.path.dirname(candidates[-1]) != candidates[-1]:
        candidates.append(os.path.dirname(candidates[-1]))
    candidates.append(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    for root in candidates:
        entry = os.path.join(root, BENCH_ENTRY)
        if os.path.isfile(entry) and os.path.isfile(os.path.join(root, "bench", "cli.py")):
            return entry
    return None


def _bench(argv, prog):
    entry = find_bench()
    if entry is None:
        print(BENCH_MISSING.format(prog=prog), file=sys.stderr)
        return 2
    spec = importlib.util.spec_from_file_location("gemmkit_bench_entry", entry)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return int(module.main(list(argv)) or 0)


def _tune(argv, prog):
    from . import _tune as tune_module
    return tune_module.main(argv, prog)


COMMANDS = {"bench": _bench, "info": _info, "tune": _tune}


def main(argv=None, prog="gemmkit"):
    """Entry point of the `gemmkit` console command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        return COMMANDS[argv[0]](argv[1:], prog)
    return _main_job(argv, prog)
