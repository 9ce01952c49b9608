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
from gemmkit import _cli

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
    if _cli.find_bench() is not None:
        pytest.skip("gemmkit is imported from a checkout (in-place install): its bench/ is run from anywhere")
    r = _run([_console_script(), "bench", "--quick"], cwd=tmp_path)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "bench/ folder of a gemmkit source checkout" in r.stderr, r.stderr


def test_console_command_bench_runs_the_checkouts_benchmark(tmp_path):
    if _cli.find_bench() is None:
        pytest.skip("gemmkit is not imported from a checkout with bench/")
    r = _run([_console_script(), "bench", "--", "--help"], cwd=tmp_path)  # the benchmark's own options
    assert r.returncode == 0, r.stdout + r.stderr
    assert "usage: gemmkit bench" in r.stdout and "--plot" in r.stdout, r.stdout
    r = _run([_console_script(), "bench", "--help"], cwd=tmp_path)  # the command's: nothing run
    assert r.returncode == 0, r.stdout + r.stderr
    assert "--bench-script" in r.stdout and _cli.find_bench() in r.stdout and "--plot" not in r.stdout


HOSTILE_BENCH = """
import os, pathlib
pathlib.Path(os.environ["GEMMKIT_TEST_MARKER"]).write_text("ran")
def main(argv=None):
    return 0
"""


@pytest.mark.parametrize("start", [".", "sub/dir"])
def test_bench_never_runs_a_script_found_from_the_working_directory(tmp_path, start):
    """A folder anyone can write (a shared /tmp) holding bench/run_bench.py, even laid out as a checkout, is
    never run by `gemmkit bench` started there or below: only the package's own checkout or a named script."""
    (tmp_path / "bench").mkdir()
    (tmp_path / "bench" / "run_bench.py").write_text(HOSTILE_BENCH)
    (tmp_path / "bench" / "cli.py").write_text(HOSTILE_BENCH)
    (tmp_path / "pyproject.toml").write_text('[project]\nname = "gemmkit"\n')
    cwd = tmp_path / start
    cwd.mkdir(parents=True, exist_ok=True)
    marker = tmp_path.parent / f"marker-{tmp_path.name}"
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    env["GEMMKIT_TEST_MARKER"] = str(marker)
    for args in (["bench", "--help"], ["bench", "--no-such-option"]):
        r = subprocess.run([_console_script(), *args], cwd=cwd, capture_output=True, text=True, timeout=120,
                           env=env)
        assert not marker.exists(), f"gemmkit {' '.join(args)} ran {tmp_path}/bench/run_bench.py"
        assert r.returncode in (0, 2), r.stdout + r.stderr
        assert "Traceback" not in r.stderr, r.stderr
    # named explicitly, the same script is run, with the arguments after the option
    r = subprocess.run([_console_script(), "bench", "--bench-script", str(tmp_path / "bench" / "run_bench.py"),
                        "--quick"], cwd=cwd, capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert marker.read_text() == "ran"
    marker.unlink()


def test_bench_script_option_errors(tmp_path):
    r = _run([_console_script(), "bench", "--bench-script", str(tmp_path / "missing.py")], cwd=tmp_path)
    assert r.returncode == 2 and "no such file" in r.stderr and "Traceback" not in r.stderr, r.stderr
    r = _run([_console_script(), "bench", "--bench-script"], cwd=tmp_path)
    assert r.returncode == 2 and "needs a PATH" in r.stderr and "Traceback" not in r.stderr, r.stderr


# ---- closed pipes and full disks -------------------------------------------------------------------

@pytest.mark.parametrize("args", [["tune", "--show"], ["--no-bench"], ["info"], ["bench", "--help"],
                                  ["bench", "--", "--help"]])
def test_closed_pipe_ends_quietly(tmp_path, args):
    """`gemmkit ... | head -1`: the reader gone (here before the first line, so every write meets the closed
    pipe), the command ends without a traceback, as a command ended by SIGPIPE does."""
    if args[0] == "bench" and _cli.find_bench() is None and "--" in args:
        pytest.skip("no checkout benchmark here")
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    p = subprocess.Popen([_console_script(), *args], cwd=tmp_path, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, env=env)
    p.stdout.close()
    err = p.stderr.read().decode()
    rc = p.wait(timeout=300)
    assert "Traceback" not in err and "BrokenPipe" not in err and "Exception ignored" not in err, err
    assert rc in (0, _cli.CLOSED_PIPE_STATUS), (rc, err)


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
@pytest.mark.parametrize("args", [["tune", "--show"], ["info"], ["bench", "--help"]])
def test_full_disk_is_said_in_one_line(tmp_path, args):
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    with open("/dev/full", "w") as full:
        r = subprocess.run([_console_script(), *args], cwd=tmp_path, stdout=full, stderr=subprocess.PIPE,
                           text=True, env=env, timeout=300)
    assert r.returncode != 0
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and "No space left on device" in lines[0], r.stderr
    assert "Traceback" not in r.stderr


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
