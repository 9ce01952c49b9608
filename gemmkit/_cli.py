"""The `gemmkit` command line (installed as the `gemmkit` console command; `python -m gemmkit` is the same):
`gemmkit` runs the main job, `gemmkit bench ...` the benchmark, `gemmkit info` prints the configuration."""
import argparse
import importlib
import sys

COMMANDS_HELP = """\
commands:
  %(prog)s [--no-bench]   what runs here, a self-check of every kernel path, a short table beside NumPy
  %(prog)s bench [...]    the benchmark (%(prog)s bench --help for its options)
  %(prog)s info           the configuration: CPU features, kernel path, kernels and blocking, threads"""

BENCH_MODULE = "gemmkit.bench.cli"


def _main_job(argv, prog):
    parser = argparse.ArgumentParser(prog=prog, usage="%(prog)s [--no-bench] | bench [...] | info",
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


def _bench(argv, prog):
    try:
        bench_cli = importlib.import_module(BENCH_MODULE)
    except ModuleNotFoundError as e:
        if e.name not in ("gemmkit.bench", BENCH_MODULE):
            raise  # the benchmark is there but needs something that is not installed: say what
        print(f"{prog} bench: this gemmkit has no benchmark command yet ({BENCH_MODULE} is not installed); "
              "from a checkout, run: python bench/run_bench.py", file=sys.stderr)
        return 2
    return int(bench_cli.main(list(argv)) or 0)


COMMANDS = {"bench": _bench, "info": _info}


def main(argv=None, prog="gemmkit"):
    """Entry point of the `gemmkit` console command; returns the exit status."""
    argv = list(sys.argv[1:] if argv is None else argv)
    if argv and argv[0] in COMMANDS:
        return COMMANDS[argv[0]](argv[1:], prog)
    return _main_job(argv, prog)
