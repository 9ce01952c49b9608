"""pytest-benchmark cases for gemmkit against NumPy and oneDNN (not part of the test suite in tests/).

    python -m pytest bench --benchmark-only                       # all CPUs
    taskset -c 0 env OPENBLAS_NUM_THREADS=1 python -m pytest bench --benchmark-only   # one core

Needs pytest-benchmark (``pip install ".[bench]"``); without it every case is skipped.  The oneDNN
cases need ``pip install onednn`` and are skipped otherwise.  Each case is grouped by shape, so
pytest-benchmark's table puts gemmkit beside its peer; GFLOP/s (GOP/s for int8) of the mean time is
added to extra_info.  bench/run_bench.py gives the fuller, median-based comparison.
"""
import os
import sys

import pytest

pytest.importorskip("pytest_benchmark")
np = pytest.importorskip("numpy")
gemmkit = pytest.importorskip("gemmkit")

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import onednn  # noqa: E402

# Installed but switched off (-p no:benchmark): skip rather than fail on the missing fixture.
pytestmark = pytest.mark.skipif("not config.pluginmanager.hasplugin('benchmark')",
                                reason="pytest-benchmark plugin is disabled")


@pytest.fixture(scope="module")
def dnnl():
    lib = onednn.load()
    if lib is None:
        pytest.skip(f"oneDNN: {onednn.why_unavailable()}")
    return lib


def _record(benchmark, ops, unit):
    stats = getattr(benchmark, "stats", None)
    try:
        mean = stats.stats.mean
    except AttributeError:
        return
    if mean:
        benchmark.extra_info[unit] = round(ops / mean / 1e9, 1)


def _sgemm_data(n, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.random((n, n), dtype=np.float32) * 2 - 1
    B = rng.random((n, n), dtype=np.float32) * 2 - 1
    return A, B, np.empty((n, n), np.float32)


def _int8_data(n, seed=0):
    rng = np.random.default_rng(seed)
    A = rng.integers(0, 256, size=(n, n), dtype=np.int16).astype(np.uint8)
    B = rng.integers(-128, 128, size=(n, n), dtype=np.int16).astype(np.int8)
    return A, B, np.empty((n, n), np.int32), np.zeros(1, np.int32)


@pytest.mark.parametrize("n", [256, 1024])
def test_sgemm_gemmkit(benchmark, n):
    A, B, C = _sgemm_data(n)
    benchmark.group = f"sgemm {n}x{n}x{n} NN"
    benchmark(gemmkit.sgemm, "N", "N", n, n, n, 1.0, A, n, B, n, 0.0, C, n)
    _record(benchmark, 2.0 * n ** 3, "GFLOP/s")
    np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-3)


@pytest.mark.parametrize("n", [256, 1024])
def test_sgemm_numpy(benchmark, n):
    A, B, C = _sgemm_data(n)
    benchmark.group = f"sgemm {n}x{n}x{n} NN"
    benchmark(np.matmul, A, B, out=C)
    _record(benchmark, 2.0 * n ** 3, "GFLOP/s")


@pytest.mark.parametrize("n", [256, 1024])
def test_sgemm_onednn(benchmark, dnnl, n):
    A, B, C = _sgemm_data(n)
    benchmark.group = f"sgemm {n}x{n}x{n} NN"
    benchmark(dnnl.sgemm, "N", "N", n, n, n, 1.0, A, n, B, n, 0.0, C, n)
    _record(benchmark, 2.0 * n ** 3, "GFLOP/s")
    np.testing.assert_allclose(C, A @ B, rtol=1e-4, atol=1e-3)


def _int8_ref(A, B):
    return (A.astype(np.float64) @ B.astype(np.float64)).astype(np.int64)


@pytest.mark.parametrize("n", [1024])
def test_u8s8s32_gemmkit(benchmark, n):
    A, B, C, co = _int8_data(n)
    benchmark.group = f"u8s8s32 {n}x{n}x{n} NN"
    benchmark(gemmkit.gemm_u8s8s32, "N", "N", "F", n, n, n, 1.0, A, n, 0, B, n, 0, 0.0, C, n, co)
    _record(benchmark, 2.0 * n ** 3, "GOP/s")
    np.testing.assert_array_equal(C, _int8_ref(A, B))


@pytest.mark.parametrize("n", [1024])
def test_u8s8s32_onednn(benchmark, dnnl, n):
    A, B, C, co = _int8_data(n)
    benchmark.group = f"u8s8s32 {n}x{n}x{n} NN"
    benchmark(dnnl.gemm_u8s8s32, "N", "N", "F", n, n, n, 1.0, A, n, 0, B, n, 0, 0.0, C, n, co)
    _record(benchmark, 2.0 * n ** 3, "GOP/s")
    np.testing.assert_array_equal(C, _int8_ref(A, B))
