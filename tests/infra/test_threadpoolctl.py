"""gemmkit's worker pool is visible to and limited by threadpoolctl (gemmkit/_threadpoolctl.py)."""
import ctypes
import os
import shutil

import pytest

import gemmkit

threadpoolctl = pytest.importorskip("threadpoolctl", minversion="3.4")


def _gemmkit_entries():
    return [info for info in threadpoolctl.threadpool_info() if info["internal_api"] == "gemmkit"]


@pytest.fixture
def restore_threads():
    before = gemmkit.get_num_threads()
    yield
    gemmkit.set_num_threads(before)


def test_threadpool_info_lists_gemmkit(restore_threads):
    gemmkit.set_num_threads(3)
    entries = _gemmkit_entries()
    assert len(entries) == 1, entries
    info = entries[0]
    assert info["user_api"] == "gemmkit"
    assert info["num_threads"] == 3 == gemmkit.get_num_threads()
    assert info["version"] == gemmkit.__version__
    assert info["arch"] == gemmkit.get_arch()
    # The very extension module gemmkit imported, not some other "_core" library.
    assert os.path.samefile(info["filepath"], gemmkit._core.__file__)


@pytest.mark.parametrize("user_api", [None, "gemmkit"])
def test_threadpool_limits_caps_and_restores(restore_threads, user_api):
    gemmkit.set_num_threads(3)
    with threadpoolctl.threadpool_limits(1, user_api=user_api):
        assert gemmkit.get_num_threads() == 1
        assert _gemmkit_entries()[0]["num_threads"] == 1
    assert gemmkit.get_num_threads() == 3


def test_threadpool_limits_by_internal_api(restore_threads):
    gemmkit.set_num_threads(2)
    with threadpoolctl.threadpool_limits({"gemmkit": 1}):
        assert gemmkit.get_num_threads() == 1
    assert gemmkit.get_num_threads() == 2


def test_limited_gemm_still_correct(restore_threads):
    np = pytest.importorskip("numpy")
    rng = np.random.default_rng(0)
    M, N, K = 64, 48, 80
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C = np.zeros((M, N), np.float32)
    with threadpoolctl.threadpool_limits(1):
        gemmkit.sgemm("N", "N", M, N, K, 1.0, A, K, B, N, 0.0, C, N)
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-4, atol=1e-4)


def test_other_core_library_is_not_taken_for_gemmkit(tmp_path):
    # threadpoolctl matches file names by prefix, and "_core" is a common extension name: a loaded
    # library named _core* without gemmkit's symbols must not show up as gemmkit.
    import _ctypes

    src = getattr(_ctypes, "__file__", None)
    if not src or not os.path.isfile(src):
        pytest.skip("_ctypes is built into this interpreter; no shared library to copy")
    foreign = tmp_path / ("_core_foreign" + os.path.splitext(src)[1])
    shutil.copyfile(src, foreign)
    try:
        ctypes.CDLL(str(foreign))  # loaded, not initialised as a module
    except OSError as e:
        pytest.skip(f"cannot load a copy of {src}: {e}")
    paths = [info["filepath"] for info in _gemmkit_entries()]
    assert len(paths) == 1 and os.path.samefile(paths[0], gemmkit._core.__file__), paths
