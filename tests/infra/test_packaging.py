"""Packaging configuration: pyproject.toml (metadata, extras, [tool.cibuildwheel]), the GitHub
workflows' structure, and the build's CPU-flag rules.

These read the repository's files next to this test folder, so they run wherever tests/ sits in a
checkout or an unpacked sdist (CI runs the suite from outside the tree against the installed wheel),
and skip when those files are not there. They import neither gemmkit nor NumPy, so .ci/run also runs
this file on its own before anything is built: `pytest --noconftest tests/infra/test_packaging.py`.
"""
import ast
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]  # tests/infra/ -> the checkout (or unpacked sdist)
WORKFLOWS = ROOT / ".github" / "workflows"

if not (ROOT / "pyproject.toml").is_file():
    pytest.skip("pyproject.toml is not beside tests/ (not a checkout or sdist)", allow_module_level=True)

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    tomllib = pytest.importorskip("tomli")

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
CIBW = PYPROJECT.get("tool", {}).get("cibuildwheel", {})

# Runner labels of the wheel matrix -> (cibuildwheel platform, arch) each builds natively.
WHEEL_RUNNERS = {
    "ubuntu-latest": ("linux", "x86_64"),
    "ubuntu-24.04-arm": ("linux", "aarch64"),
    "macos-15-intel": ("macos", "x86_64"),
    "macos-14": ("macos", "arm64"),
    "windows-latest": ("windows", "AMD64"),
}
NATIVE_FLAGS = ("-march=native", "-mtune=native", "-mcpu=native", "-xHost", "/arch:native")


def _strings(obj):
    """Every string value in a parsed TOML/YAML document (comments are not values)."""
    if isinstance(obj, str):
        yield obj
    elif isinstance(obj, dict):
        for k, v in obj.items():
            yield from _strings(k)
            yield from _strings(v)
    elif isinstance(obj, (list, tuple)):
        for v in obj:
            yield from _strings(v)


# ---- pyproject.toml ------------------------------------------------------------------------------

def test_build_system_is_setuptools_with_cython_and_numpy():
    bs = PYPROJECT["build-system"]
    assert bs["build-backend"] == "setuptools.build_meta"
    names = {re.split(r"[<>=!~;\[ ]", r, maxsplit=1)[0].lower() for r in bs["requires"]}
    assert {"setuptools", "cython", "numpy"} <= names, bs["requires"]


def test_project_metadata():
    project = PYPROJECT["project"]
    assert project["name"] == "gemmkit"
    assert project["requires-python"].replace(" ", "") == ">=3.10"
    assert project.get("license"), "license is missing"
    assert project.get("readme") == "README.md"
    # Version single-sourced from gemmkit/_version.py.
    assert "version" in project.get("dynamic", []) and "version" not in project
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "gemmkit._version.__version__"}
    assert re.search(r'^__version__ = "\d+\.\d+\.\d+[\w.]*"$',
                     (ROOT / "gemmkit" / "_version.py").read_text(encoding="utf-8"), re.M)
    classifiers = project["classifiers"]
    for minor in (10, 11, 12, 13, 14):
        assert f"Programming Language :: Python :: 3.{minor}" in classifiers
    # PEP 639: a license expression excludes License :: classifiers.
    assert not any(c.startswith("License ::") for c in classifiers)


def test_extras():
    extras = PYPROJECT["project"]["optional-dependencies"]
    assert {"test", "bench"} <= set(extras)
    test = " ".join(extras["test"])
    for dep in ("pytest", "threadpoolctl>=3.4", "pyyaml"):
        assert dep in test, dep


def test_cibuildwheel_config():
    assert CIBW, "[tool.cibuildwheel] is missing"
    build = CIBW["build"] if isinstance(CIBW["build"], list) else CIBW["build"].split()
    assert all(b.startswith("cp3") for b in build), build  # CPython only (no PyPy/GraalPy)
    skip = CIBW["skip"] if isinstance(CIBW["skip"], list) else CIBW["skip"].split()
    assert "*-musllinux_*" in skip and any("t-*" in s for s in skip), skip
    assert "test" in CIBW["test-extras"]
    assert re.search(r"\bpytest \{project\}/tests\b", CIBW["test-command"]), CIBW["test-command"]
    assert CIBW["linux"]["archs"] == ["auto64"]
    assert CIBW["macos"]["archs"] == ["native"]
    assert CIBW["windows"]["archs"] == ["AMD64"]


def _cibuildwheel_cmd():
    exe = shutil.which("cibuildwheel")
    if exe:
        return [exe]
    try:
        import cibuildwheel  # noqa: F401
    except ImportError:
        return None
    return [sys.executable, "-m", "cibuildwheel"]


@pytest.mark.parametrize("runner", sorted(WHEEL_RUNNERS))
def test_cibuildwheel_build_identifiers(runner):
    """What cibuildwheel would build on each runner of the wheel matrix: CPython 3.10..3.14 at least,
    no free-threaded, PyPy or musllinux builds."""
    cmd = _cibuildwheel_cmd()
    if cmd is None:
        pytest.skip("cibuildwheel is not installed (.ci/run installs it)")
    platform, arch = WHEEL_RUNNERS[runner]
    env = {k: v for k, v in os.environ.items() if not k.startswith("CIBW_")}
    env["CIBW_ARCHS"] = arch
    out = subprocess.run(cmd + ["--print-build-identifiers", "--platform", platform], cwd=ROOT, env=env,
                         capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    ids = out.stdout.split()
    plat_tag = {"linux": f"manylinux_{arch}", "macos": f"macosx_{arch}",
                "windows": f"win_{arch.lower()}"}[platform]
    for minor in (10, 11, 12, 13, 14):
        assert f"cp3{minor}-{plat_tag}" in ids, ids
    for ident in ids:
        assert re.fullmatch(rf"cp3\d+-{plat_tag}", ident), ident


# ---- CPU flags and the x86-64 decision ----------------------------------------------------------

def test_no_native_cpu_flags():
    sources = [ROOT / "setup.py", ROOT / "csrc" / "SOURCES", *sorted((ROOT / "csrc").rglob("*.[ch]")),
               *(ROOT / "gemmkit").glob("*.pyx")]
    for path in sources:
        text = path.read_text(encoding="utf-8", errors="replace")
        for flag in NATIVE_FLAGS:
            assert flag not in text, f"{flag} in {path.relative_to(ROOT)}"
    values = list(_strings(PYPROJECT)) + [s for wf in _workflows().values() for s in _strings(wf)]
    for value in values:
        for flag in NATIVE_FLAGS:
            assert flag not in value, f"{flag} in {value!r}"


def _target_is_x86_64():
    """setup.py's target_is_x86_64, taken out of the file (importing setup.py would run setup())."""
    tree = ast.parse((ROOT / "setup.py").read_text(encoding="utf-8"))
    fn = next((n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "target_is_x86_64"), None)
    if fn is None:
        pytest.skip("setup.py has no target_is_x86_64()")
    src = ast.get_source_segment((ROOT / "setup.py").read_text(encoding="utf-8"), fn)

    def decide(platform, **environ):
        class FakeSysconfig:
            @staticmethod
            def get_platform():
                return platform

        class FakeOs:
            pass

        FakeOs.name = environ.pop("_os_name", "posix")
        FakeOs.environ = environ
        FakeOs.path = os.path
        ns = {"sysconfig": FakeSysconfig, "os": FakeOs, "sys": sys}
        exec(src, ns)
        return ns["target_is_x86_64"]()

    return decide


@pytest.mark.parametrize("platform, environ, expected", [
    ("linux-x86_64", {}, True),                     # manylinux x86_64
    ("linux-aarch64", {}, False),                   # manylinux aarch64 (native runner or QEMU)
    ("linux-i686", {}, False),
    ("win-amd64", {}, True),
    ("win-arm64", {}, False),                       # native Windows ARM64
    # cibuildwheel on macOS sets ARCHFLAGS (and _PYTHON_HOST_PLATFORM when cross-compiling).
    ("macosx-10.13-x86_64", {"ARCHFLAGS": "-arch x86_64"}, True),
    ("macosx-11.0-arm64", {"ARCHFLAGS": "-arch arm64"}, False),
    ("macosx-10.9-universal2", {"ARCHFLAGS": "-arch x86_64"}, True),     # x86_64 wheel, universal2 Python
    ("macosx-10.9-universal2", {"ARCHFLAGS": "-arch arm64"}, False),     # arm64 cross build on Intel
    ("macosx-10.9-universal2", {"ARCHFLAGS": "-arch arm64 -arch x86_64"}, False),  # universal2 wheel
    ("macosx-10.9-universal2", {}, False),          # universal2 Python, no ARCHFLAGS: fat build
    ("win-amd64", {"_os_name": "nt", "VSCMD_ARG_TGT_ARCH": "arm64"}, False),  # MSVC cross to ARM64
    ("win-amd64", {"_os_name": "nt", "VSCMD_ARG_TGT_ARCH": "x64"}, True),
])
def test_target_is_x86_64(platform, environ, expected):
    assert _target_is_x86_64()(platform, **environ) is expected


# ---- GitHub workflows ------------------------------------------------------------------------------

def _workflows():
    yaml = pytest.importorskip("yaml")
    if not WORKFLOWS.is_dir():
        pytest.skip(".github/workflows is not beside tests/ (an sdist has none)")
    out = {}
    for path in sorted(WORKFLOWS.glob("*.yml")):
        doc = yaml.safe_load(path.read_text(encoding="utf-8"))
        if isinstance(doc, dict) and True in doc:  # YAML 1.1 reads the key `on` as true
            doc["on"] = doc.pop(True)
        out[path.name] = doc
    return out


PINNED_REF = re.compile(r"v\d+(\.\d+){0,2}|[0-9a-f]{40}|release/v\d+")


def test_workflows_structure():
    workflows = _workflows()
    assert {"wheels.yml", "tests.yml"} <= set(workflows), sorted(workflows)
    for name, wf in workflows.items():
        assert isinstance(wf, dict), name
        assert wf.get("name") and wf.get("on") and wf.get("jobs"), f"{name}: needs name, on and jobs"
        for job_id, job in wf["jobs"].items():
            where = f"{name}:{job_id}"
            assert "runs-on" in job and job.get("steps"), f"{where}: needs runs-on and steps"
            assert isinstance(job.get("timeout-minutes"), int), f"{where}: needs timeout-minutes"
            for needed in job.get("needs", []) if isinstance(job.get("needs"), list) else [job.get("needs")]:
                assert needed is None or needed in wf["jobs"], f"{where}: needs unknown job {needed}"
            for i, step in enumerate(job["steps"]):
                assert ("uses" in step) != ("run" in step), f"{where} step {i}: exactly one of uses/run"
                if "uses" in step:
                    action, _, ref = step["uses"].partition("@")
                    assert re.fullmatch(r"[\w.-]+/[\w.-]+(/[\w./-]+)?", action), f"{where}: {step['uses']}"
                    assert PINNED_REF.fullmatch(ref), f"{where}: {step['uses']} is not pinned to a version"


def _steps_using(job, action):
    return [s for s in job["steps"] if s.get("uses", "").split("@")[0] == action]


def _runs(job):
    return "\n".join(s.get("run", "") for s in job["steps"])


def test_wheels_workflow():
    wf = _workflows()["wheels.yml"]
    on = wf["on"]
    assert "pull_request" in on and "v*" in on["push"]["tags"]
    jobs = wf["jobs"]
    assert {"sdist", "wheels", "publish"} <= set(jobs)

    assert "-m build --sdist" in _runs(jobs["sdist"])
    assert _steps_using(jobs["sdist"], "actions/upload-artifact")

    wheels = jobs["wheels"]
    runners = [entry["os"] for entry in wheels["strategy"]["matrix"]["include"]]
    assert sorted(runners) == sorted(WHEEL_RUNNERS)
    assert wheels["runs-on"] == "${{ matrix.os }}"
    assert _steps_using(wheels, "pypa/cibuildwheel")
    assert _steps_using(wheels, "actions/upload-artifact")

    publish = jobs["publish"]
    assert set(publish["needs"]) == {"sdist", "wheels"}
    assert "refs/tags/v" in publish["if"]
    assert publish["permissions"]["id-token"] == "write"
    assert publish["environment"]["name"] == "pypi"
    assert _steps_using(publish, "actions/download-artifact")
    steps = _steps_using(publish, "pypa/gh-action-pypi-publish")
    assert steps and "password" not in (steps[0].get("with") or {}), "trusted publishing takes no token"


def test_tests_workflow():
    wf = _workflows()["tests.yml"]
    assert {"push", "pull_request"} <= set(wf["on"])
    runs = "\n".join(_runs(job) for job in wf["jobs"].values())
    assert 'pip install' in runs and ".[test]" in runs
    assert "-m pytest" in runs


def test_ci_script_uses_the_same_cibuildwheel_as_the_workflow():
    scripts = [ROOT / ".ci" / "run", *sorted((ROOT / ".ci" / "steps").glob("[0-9][0-9]-*"))]
    if not scripts[0].is_file():
        pytest.skip(".ci/run is not beside tests/")
    ci = "\n".join(p.read_text(encoding="utf-8") for p in scripts)
    assert "wheels.yml" in ci and "cibuildwheel" in ci  # .ci/run's tools step installs the version the action pins
    uses = [s["uses"] for s in _workflows()["wheels.yml"]["jobs"]["wheels"]["steps"] if "uses" in s]
    assert any(re.fullmatch(r"pypa/cibuildwheel@v\d+\.\d+\.\d+", u) for u in uses), uses


# ---- sdist and README ---------------------------------------------------------------------------

def test_manifest_ships_sources_not_build_outputs():
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    assert re.search(r"^recursive-include csrc .*\*\.h", manifest, re.M)
    assert "gemmkit/_core.pyx" in manifest and "gemmkit/_fastpaths.pyx" in manifest
    assert re.search(r"^graft tests", manifest, re.M)
    assert re.search(r"^exclude gemmkit/_core\.c", manifest, re.M)
    assert re.search(r"^global-exclude .*\*\.so", manifest, re.M)


def test_readme_install_section():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert "## Install from a wheel or sdist" in readme
    assert "(#kernel-paths-and-threads)" in readme  # links to the kernel-path section


def test_suite_runs_against_installed_package():
    """Under .ci/run (GEMMKIT_CI_INSTALLED=1) gemmkit must be the installed wheel, not the sources."""
    if os.environ.get("GEMMKIT_CI_INSTALLED") != "1":
        pytest.skip("only checked by .ci/run")
    import gemmkit

    where = Path(gemmkit.__file__).resolve()
    assert ROOT not in where.parents, f"gemmkit imported from the source tree: {where}"


@pytest.mark.parametrize("module", ["_core", "_fastpaths"])
def test_core_stub_names_every_public_function_of_the_extension(module):
    """gemmkit/<module>.pyi declares each public callable of the built extension gemmkit.<module> (and nothing
    it lacks)."""
    import ast
    import pathlib

    import importlib

    try:  # not importorskip(exc_type=...): that needs pytest 8.2, the test extra asks for pytest >= 7
        ext = importlib.import_module(f"gemmkit.{module}")
    except ImportError:
        pytest.skip("needs the built extension (the README's test run has it)")
    stub = pathlib.Path(ext.__file__).with_name(f"{module}.pyi")
    if not stub.exists():  # an installed wheel ships it beside the extension; a source tree has it too
        stub = pathlib.Path(__file__).resolve().parents[2] / "gemmkit" / f"{module}.pyi"
    declared = {node.name for node in ast.parse(stub.read_text()).body if isinstance(node, ast.FunctionDef)}
    public = {name for name in dir(ext) if not name.startswith("_") and callable(getattr(ext, name))
              and getattr(getattr(ext, name), "__module__", f"gemmkit.{module}") == f"gemmkit.{module}"}
    assert public - declared == set(), f"not in {module}.pyi: {sorted(public - declared)}"
    assert declared - public == set(), f"in {module}.pyi but not in the extension: {sorted(declared - public)}"
