"""Shared fixtures for the gemmkit test suite.

Only ``import gemmkit`` is used, so the suite runs against an installed package from any directory.
"""
import os
import sys

# `python -m pytest tests` from a checkout puts the checkout first on sys.path, where `gemmkit/` has
# no compiled extension: test the installed package instead.
_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != _ROOT]
# The tests sit in one folder per layer (core/: the C core through gemmkit._core and the BLAS-style entries;
# frontends/: matmul, blas, onnx, quant, dask, the command line; infra/: packaging, tuning, threads,
# reliability, fuzzing; emulated/: .ci/isa-lane) and import shared helpers and each other's references by
# module name (_support, conftest, test_int8, ...): every folder is on sys.path, whatever subset pytest runs.
_TESTS = os.path.dirname(os.path.abspath(__file__))
for _folder in ("infra", "frontends", "core", ""):
    _path = os.path.join(_TESTS, _folder) if _folder else _TESTS
    if _path not in sys.path:
        sys.path.insert(0, _path)

import numpy as np  # noqa: E402
import pytest  # noqa: E402

import gemmkit  # noqa: E402

AVAILABLE_ARCHS = tuple(gemmkit.available_archs())
# GEMMKIT_TEST_ARCHS=a,b: the `arch` fixture runs only these of the available paths (the emulated aarch64
# lane, .ci/arm64-lane, tests its own paths; the portable one is tested natively). Unset or empty: all.
if os.environ.get("GEMMKIT_TEST_ARCHS"):
    AVAILABLE_ARCHS = tuple(a for a in AVAILABLE_ARCHS if a in os.environ["GEMMKIT_TEST_ARCHS"].split(","))
THREAD_COUNTS = (1, 2)


def pytest_configure(config):
    config.addinivalue_line(
        "markers",
        "smoke: small fast subset (a few sgemm/int8 correctness cases and config) for emulated CI")


@pytest.fixture(scope="session", autouse=True)
def _single_threaded_blas():
    """The float64 references use NumPy's BLAS; on a 2-core CI box its (spinning) threads compete
    with gemmkit's pool. Keep BLAS on one thread when threadpoolctl is there (gemmkit is untouched:
    only user_api="blas" is limited)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


@pytest.fixture(params=AVAILABLE_ARCHS)
def arch(request):
    """Every kernel path this CPU can run, forced for the duration of the test."""
    name = request.param
    with gemmkit.use_arch(name):
        assert gemmkit.get_arch() == name
        yield name


@pytest.fixture(params=THREAD_COUNTS, ids=lambda n: f"t{n}")
def nthreads(request):
    """Thread counts 1 and 2; the previous setting is restored afterwards."""
    previous = gemmkit.get_num_threads()
    gemmkit.set_num_threads(request.param)
    assert gemmkit.get_num_threads() == request.param
    try:
        yield request.param
    finally:
        gemmkit.set_num_threads(previous)


@pytest.fixture
def rng(request):
    """A NumPy generator seeded from the test id, so every test is reproducible on its own."""
    import zlib
    return np.random.default_rng(zlib.crc32(request.node.nodeid.encode()))


@pytest.fixture(autouse=True)
def _restore_global_state():
    """No test may leak a forced kernel path or thread count into the next one."""
    arch0, threads0 = gemmkit.get_arch(), gemmkit.get_num_threads()
    yield
    if gemmkit.get_arch() != arch0:
        gemmkit.set_arch(arch0)
    if gemmkit.get_num_threads() != threads0:
        gemmkit.set_num_threads(threads0)
