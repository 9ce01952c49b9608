"""The `gemmkit` console command (main job, `bench`, `info`) and `python -m gemmkit`, run as a user runs
them (subprocesses), and the one-line message when the source folder is imported without its extension."""
import importlib.metadata
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

import gemmkit

INSTALLED_PACKAGE = Path(gemmkit.__file__).resolve().parent


def _console_script():
    """Path of the installed `gemmkit` command (next to this Python, as pip installs it)."""
    eps = [ep for ep in importlib.metadata.entry_points(group="console_scripts") if ep.name == "gemmkit"]
    assert eps, "the installed gemmkit declares no `gemmkit` console command"
    assert eps[0].value == "gemmkit._cli:main"
    bindir = Path(sys.executable).parent
    for name in ("gemmkit", "gemmkit.exe"):
        if (bindir / name).is_file():
            return str(bindir / name)
    found = shutil.which("gemmkit")
    assert found, f"no `gemmkit` command in {bindir} or on PATH"
    return found


def _run(args, cwd, timeout=300):
    # the tests below need Python's default sys.path[0] (the folder run from): not PYTHONSAFEPATH's
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    return subprocess.run(args, cwd=cwd, capture_output=True, text=True, timeout=timeout, env=env)


@pytest.fixture
def source_folder(tmp_path):
    """A folder laid out like a checkout without a build: gemmkit/ with the package's .py files only."""
    pkg = tmp_path / "gemmkit"
    pkg.mkdir()
    for f in INSTALLED_PACKAGE.glob("*.py"):
        shutil.copy(f, pkg / f.name)
    assert not list(pkg.glob("_core*"))
    return tmp_path


def test_console_command_runs_the_main_job_from_a_source_folder(source_folder):
    """The README's first command: `gemmkit` (run here from a folder holding the sources, as from a checkout)."""
    r = _run([_console_script()], cwd=source_folder)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "kernel path" in r.stdout
    assert "self-check passed on:" in r.stdout
    assert "sgemm" in r.stdout and "NumPy" in r.stdout
    # how the table was timed: each library with the other's thread pool quiet
    assert "each library timed" in r.stdout, r.stdout


def test_console_command_no_bench_and_info(tmp_path):
    r = _run([_console_script(), "--no-bench"], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "self-check passed on:" in r.stdout and "ratio" not in r.stdout
    r = _run([_console_script(), "info"], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert f"kernel path  : {gemmkit.get_arch()}" in r.stdout and "self-check" not in r.stdout


def test_console_command_bench_outside_a_checkout_says_where_the_benchmark_is(tmp_path):
    r = _run([_console_script(), "bench", "--help"], cwd=tmp_path)
    if os.path.isfile(os.path.join(os.path.dirname(os.path.dirname(gemmkit.__file__)), "bench", "run_bench.py")):
        pytest.skip("gemmkit is imported from a checkout (in-place install): its bench/ is found from anywhere")
    assert r.returncode == 2, r.stdout + r.stderr
    assert "bench/ folder of a gemmkit source checkout" in r.stderr, r.stderr


def test_console_command_bench_runs_the_checkouts_benchmark(tmp_path):
    checkout = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # tests/frontends/..
    if not os.path.isfile(os.path.join(checkout, "bench", "run_bench.py")):
        pytest.skip("these tests do not run from a checkout with bench/")
    r = _run([_console_script(), "bench", "--help"], cwd=os.path.join(checkout, "bench"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "usage: gemmkit bench" in r.stdout and "--plot" in r.stdout, r.stdout


def test_console_command_rejects_unknown_options(tmp_path):
    r = _run([_console_script(), "--frobnicate"], cwd=tmp_path)
    assert r.returncode == 2 and "unrecognized arguments: --frobnicate" in r.stderr


def test_python_m_gemmkit_is_the_same_command(tmp_path):
    r = _run([sys.executable, "-m", "gemmkit", "info"], cwd=tmp_path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "kernel path" in r.stdout


def _expected_message(folder):
    return (f"gemmkit's compiled extension is not built here: you are importing the source folder "
            f"{folder}; install it (pip install .) and run from another folder, or use the `gemmkit` command")


def test_import_in_a_source_folder_says_what_to_do(source_folder):
    r = _run([sys.executable, "-c", "import gemmkit"], cwd=source_folder)
    assert r.returncode == 1
    last = r.stderr.strip().splitlines()[-1]
    folder = os.path.realpath(source_folder / "gemmkit")
    assert last == "ImportError: " + _expected_message(folder), r.stderr
    assert "circular import" not in r.stderr


def test_python_m_gemmkit_in_a_source_folder_says_it_in_one_line(source_folder):
    r = _run([sys.executable, "-m", "gemmkit"], cwd=source_folder)
    assert r.returncode == 1
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert _expected_message(os.path.realpath(source_folder / "gemmkit")) in lines[0]
    assert "Traceback" not in r.stderr and "circular import" not in r.stderr
