"""Tests of the float16 and bfloat16 core functions gemmkit._core.hgemm / bf16gemm: float arithmetic
rounded once to nearest-even (bit for bit against NumPy / ml_dtypes rounding), every kernel path and layout."""
import numpy as np
import pytest

import gemmkit
from gemmkit import _core

ml_dtypes = pytest.importorskip("ml_dtypes")
HALF_TYPES = [(np.dtype(np.float16), _core.hgemm), (np.dtype(ml_dtypes.bfloat16), _core.bf16gemm)]
ARCHS = gemmkit.available_archs()


def op(x, t):
    return x.T if t == "T" else x


def run(fn, ta, tb, alpha, A, B, beta, C):
    M, N = C.shape
    K = op(A, ta).shape[1]
    return fn(ta, tb, M, N, K, alpha, A, A.shape[1], B, B.shape[1], beta, C, N)


@pytest.mark.parametrize("dtype,fn", HALF_TYPES, ids=["float16", "bfloat16"])
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("shape", [(7, 9, 5), (61, 83, 200), (150, 530, 64)])
def test_rounding_is_once_to_nearest_even(dtype, fn, arch, threads, shape):
    """Integer operands in [-256, 256] (exact in both types) with K <= 200 keep every float sum exact, so
    the only rounding left is the final one: the result must equal NumPy's / ml_dtypes' rounding of the
    exact value bit for bit, with power-of-two alphas reaching overflow, normals, subnormals and zero."""
    M, N, K = shape
    rng = np.random.default_rng(M * N + K)
    previous = gemmkit.get_num_threads()
    gemmkit.set_num_threads(threads)
    try:
        for ta, tb in (("N", "N"), ("T", "N"), ("N", "T"), ("T", "T")):
            A = rng.integers(-256, 257, size=(K, M) if ta == "T" else (M, K)).astype(dtype)
            B = rng.integers(-256, 257, size=(N, K) if tb == "T" else (K, N)).astype(dtype)
            exact = op(A, ta).astype(np.float64) @ op(B, tb).astype(np.float64)
            for alpha in (1.0, 2.0 ** -9, 2.0 ** -30, 2.0 ** -40):
                C = np.full((M, N), np.nan, dtype)  # beta = 0: C is not read
                with gemmkit.use_arch(arch):
                    run(fn, ta, tb, alpha, A, B, 0.0, C)
                with np.errstate(over="ignore"):
                    want = (alpha * exact).astype(np.float32).astype(dtype)
                np.testing.assert_array_equal(C.view(np.uint16), want.view(np.uint16))
            C = rng.integers(-256, 257, size=(M, N)).astype(dtype)  # beta = -1: still exact in float
            with np.errstate(over="ignore"):
                want = (exact - C.astype(np.float64)).astype(np.float32).astype(dtype)
            with gemmkit.use_arch(arch):
                run(fn, ta, tb, 1.0, A, B, -1.0, C)
            np.testing.assert_array_equal(C.view(np.uint16), want.view(np.uint16))
    finally:
        gemmkit.set_num_threads(previous)


@pytest.mark.parametrize("dtype,fn", HALF_TYPES, ids=["float16", "bfloat16"])
def test_k_zero_and_alpha_zero_scale_c(dtype, fn):
    C0 = np.array([[1.5, -2.0], [3.0, 0.25]], dtype)
    for K, alpha in ((0, 1.0), (3, 0.0)):
        A = np.ones((2, max(K, 1)), dtype)
        B = np.ones((max(K, 1), 2), dtype)
        C = C0.copy()
        fn("N", "N", 2, 2, K, alpha, A, max(K, 1), B, 2, 3.0, C, 2)
        np.testing.assert_array_equal(C, (C0.astype(np.float32) * 3).astype(dtype))


def test_bad_arguments_raise_and_leave_c_untouched():
    bf16 = ml_dtypes.bfloat16
    A = np.ones((2, 2), bf16)
    C = np.zeros((2, 2), bf16)
    with pytest.raises(TypeError, match="A must be a bfloat16 NumPy array"):
        _core.bf16gemm("N", "N", 2, 2, 2, 1.0, A.view(np.uint16), 2, A, 2, 0.0, C, 2)
    with pytest.raises(TypeError, match="A must have dtype float16"):
        _core.hgemm("N", "N", 2, 2, 2, 1.0, A.astype(np.float32), 2, A.astype(np.float16), 2, 0.0,
                    C.astype(np.float16), 2)
    with pytest.raises(ValueError, match="ldc"):
        _core.bf16gemm("N", "N", 2, 2, 2, 1.0, A, 2, A, 2, 0.0, C, 1)
    with pytest.raises(ValueError, match="transa"):
        _core.hgemm("X", "N", 2, 2, 2, 1.0, A, 2, A, 2, 0.0, C, 2)
    np.testing.assert_array_equal(C, np.zeros((2, 2), bf16))
