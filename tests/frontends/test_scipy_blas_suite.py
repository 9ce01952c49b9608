"""SciPy's own BLAS test module, scipy/linalg/tests/test_blas.py as the installed SciPy ships it, run here with
gemmkit's gemm in SciPy's place (gemmkit.blas.scipy_patched()); nothing of SciPy's is copied into this repository.

The module is loaded from SciPy's installation under a name of its own, while scipy_patched() is active and
with `scipy.linalg._fblas` (which it imports as `fblas`) seen as a copy whose sgemm ... zgemm are gemmkit's:
its gemm tests then take gemmkit's routines (they are parametrized by the routine objects at import), its
get_blas_funcs is the patched one, and each of its tests runs inside scipy_patched(). Every test of the module
runs: the gemm ones test gemmkit, the others show that the patch leaves SciPy's other routines working.
Skipped where SciPy is absent or its installation has no tests (some distributions' packages strip them).
"""
import importlib.util
import types

import pytest

scipy_linalg = pytest.importorskip("scipy.linalg")

from gemmkit import blas as gk_blas  # noqa: E402

GEMMS = {p + "gemm": getattr(gk_blas, p + "gemm") for p in "sdcz"}


def _suite_path():
    try:
        spec = importlib.util.find_spec("scipy.linalg.tests.test_blas")
    except ImportError:  # no scipy.linalg.tests package at all
        spec = None
    if spec is None or not spec.origin:
        pytest.skip("this SciPy installation ships no scipy/linalg/tests/test_blas.py (its tests were left out)",
                    allow_module_level=True)
    return spec.origin


def _fblas_with_gemmkit_gemm(fblas):
    """A module that is SciPy's _fblas with gemmkit's gemm routines: what the suite imports as `fblas`."""
    stand_in = types.ModuleType(fblas.__name__, fblas.__doc__)
    stand_in.__dict__.update({k: v for k, v in vars(fblas).items() if k not in ("__name__", "__doc__")})
    stand_in.__dict__.update(GEMMS)
    return stand_in


def _load_suite(path):
    spec = importlib.util.spec_from_file_location("gemmkit_peer_scipy_test_blas", path)
    suite = importlib.util.module_from_spec(spec)
    real = scipy_linalg._fblas
    with gk_blas.scipy_patched():
        # `from scipy.linalg import _fblas as fblas` reads the package attribute: the stand-in, for the import only
        scipy_linalg._fblas = _fblas_with_gemmkit_gemm(real)
        try:
            spec.loader.exec_module(suite)
        finally:
            scipy_linalg._fblas = real
    return suite


SUITE = _load_suite(_suite_path())
# pytest collects SciPy's test functions and classes from this module's namespace
globals().update({name: obj for name, obj in vars(SUITE).items()
                  if name.startswith(("test_", "Test")) and (callable(obj) or isinstance(obj, type))})


@pytest.fixture(autouse=True)
def _gemmkit_gemm_in_scipy():
    """Each test of the suite (and of this module) inside scipy_patched(): scipy.linalg.blas.?gemm and
    get_blas_funcs looked up at run time are gemmkit's."""
    with gk_blas.scipy_patched():
        yield


def test_suite_runs_gemmkits_gemm():
    """The loaded suite holds gemmkit's routines where it tests gemm (so its passing gemm tests are gemmkit's)."""
    assert all(getattr(SUITE.fblas, name) is fn for name, fn in GEMMS.items())
    assert SUITE.fblas is not scipy_linalg._fblas and scipy_linalg._fblas.dgemm is not gk_blas.dgemm
    assert SUITE.get_blas_funcs("gemm", dtype="F") is gk_blas.cgemm
    marks = [m for m in getattr(SUITE.TestFBLAS3Simple.test_gemm, "pytestmark", []) if m.name == "parametrize"]
    routines = [param.values[0] for m in marks for param in m.args[1]]
    assert routines == list(GEMMS.values())  # parametrized in the order sdcz
    # the suite's other routines stay SciPy's
    assert SUITE.fblas.daxpy is scipy_linalg._fblas.daxpy
