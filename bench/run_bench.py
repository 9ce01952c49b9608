#!/usr/bin/env python
"""Entry point of the gemmkit benchmark: `python bench/run_bench.py [options]` (--help lists them); the
`gemmkit bench` command runs this file's main() when gemmkit was built in this checkout (or is given
this file with --bench-script).

The code is the package in this folder (cli, machine, peers, timing, cases/, report, plot). It is loaded
as `gemmkit_bench` straight from here, without putting the checkout on sys.path, where the source folder
gemmkit/ (no compiled extension) would hide the installed gemmkit.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
PACKAGE = "gemmkit_bench"


def load_package():
    """The bench/ folder as the package `gemmkit_bench` (loaded once)."""
    if PACKAGE not in sys.modules:
        spec = importlib.util.spec_from_file_location(PACKAGE, os.path.join(HERE, "__init__.py"),
                                                      submodule_search_locations=[HERE])
        module = importlib.util.module_from_spec(spec)
        sys.modules[PACKAGE] = module
        spec.loader.exec_module(module)
    return sys.modules[PACKAGE]


def main(argv=None):
    """Run the benchmark and exit with its status."""
    load_package()
    from gemmkit_bench import cli
    cli.run_and_exit(argv)


if __name__ == "__main__":
    # Running a script puts its folder first on sys.path; the package's modules are reached through it.
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != HERE]
    main()
