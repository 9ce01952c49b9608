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


# ---- few rows / few columns: the 16-bit big operand read in place (csrc/gemm_small.c, gk_half_gemv) ----

BF16 = np.dtype(ml_dtypes.bfloat16)
# (A and B type, C type, entry): hgemm, bf16gemm (16-bit C through a float buffer) and gemm_bf16bf16f32 (float C)
IN_PLACE = [(np.dtype(np.float16), np.dtype(np.float16), _core.hgemm), (BF16, BF16, _core.bf16gemm),
            (BF16, np.dtype(np.float32), _core.gemm_bf16bf16f32)]
IN_PLACE_IDS = ["hgemm", "bf16gemm", "bf16bf16f32"]
# (alpha, beta) in turn: the special values 0, 1, -1, 0.5 of each (alpha 0 scales C only)
ALPHA_BETA = [(1.0, 0.0), (-1.0, 1.0), (0.5, -1.0), (1.0, 0.5), (0.5, 0.0), (-1.0, 0.5), (0.0, 0.5)]
PAD_VALUE = 7.0


def padded_operand(rng, rows, cols, pad, dtype, scale=1.0):
    """A rows x cols operand inside a parent with `pad` more columns and one more row of PAD_VALUE (its leading
    dimension cols + pad; writes outside it show)."""
    parent = np.full((rows + 1, cols + pad), PAD_VALUE, dtype)
    parent[:rows, :cols] = (rng.uniform(-1, 1, (rows, cols)) * scale).astype(dtype)
    return parent


def float32_bound(K, alpha, beta, absA, absB, absC, ct):
    """float32 sums of exact products (the standard bound), plus the one rounding to a 16-bit C."""
    eps = float(np.finfo(np.float32).eps)
    bound = (4 + np.sqrt(K)) * eps * (abs(alpha) * (absA @ absB) + abs(beta) * absC) + 1e-37
    if ct.itemsize == 2:
        bound = bound * (1 + 2 * float(ml_dtypes.finfo(ct).eps)) + float(ml_dtypes.finfo(ct).smallest_subnormal)
    return bound


def check_in_place(rng, ab, ct, fn, M, N, K, ta, tb, alpha, beta, pad=3, a_scale=1.0, b_scale=1.0):
    pa = padded_operand(rng, *((M, K) if ta == "N" else (K, M)), pad, ab, a_scale)
    pb = padded_operand(rng, *((K, N) if tb == "N" else (N, K)), pad, ab, b_scale)
    pc = padded_operand(rng, M, N, pad, ct)
    if beta == 0:
        pc[:M, :N] = np.nan  # beta = 0: C is not read
    before = pc.copy()
    fn(ta, tb, M, N, K, alpha, pa, pa.shape[1], pb, pb.shape[1], beta, pc, pc.shape[1])
    A = pa[:K, :M].T if ta == "T" else pa[:M, :K]
    B = pb[:N, :K].T if tb == "T" else pb[:K, :N]
    A, B = A.astype(np.float64), B.astype(np.float64)
    C0 = before[:M, :N].astype(np.float64) if beta != 0 else np.zeros((M, N))
    ref = alpha * (A @ B) + beta * C0
    got = pc[:M, :N].astype(np.float64)
    bound = float32_bound(K, alpha, beta, np.abs(A), np.abs(B), np.abs(C0), ct)
    if ct.itemsize == 2:
        bound = bound + float(ml_dtypes.finfo(ct).eps) * np.abs(ref)
    err = np.abs(got - ref)
    case = f"{fn.__name__} {ta}{tb} M={M} N={N} K={K} alpha={alpha} beta={beta}"
    assert np.all(err <= bound), f"{case}: max err {err.max():.3g} (bound {bound.ravel()[np.argmax(err)]:.3g})"
    outside = np.ones(pc.shape, bool)
    outside[:M, :N] = False
    assert np.array_equal(pc[outside].view(np.uint8), before[outside].view(np.uint8)), f"{case}: wrote outside C"


@pytest.mark.parametrize("ab,ct,fn", IN_PLACE, ids=IN_PLACE_IDS)
@pytest.mark.parametrize("trans", ["NN", "NT", "TN", "TT"])
def test_few_rows_and_columns_in_place(arch, nthreads, ab, ct, fn, trans, rng):
    """M = 1..17 (the in-place paths' row limits and one past) and N = 1..3 (the columns' limit and one past),
    K odd and even around the vector width, the kernels' k chunks and column blocks, every alpha / beta value."""
    ta, tb = trans
    cases = []
    for M in range(1, 18):
        cases += [(M, 37, 33), (M, 70, 302), (M, 20, 7)]
    cases += [(16, 1100, 45), (5, 9, 601), (3, 5, 1), (16, 8, 300), (17, 1030, 19)]
    for N in (1, 2, 3):
        cases += [(37, N, 33), (300, N, 265), (70, N, 8), (9, N, 600)]
    for c, (M, N, K) in enumerate(cases):
        alpha, beta = ALPHA_BETA[c % len(ALPHA_BETA)]
        check_in_place(rng, ab, ct, fn, M, N, K, ta, tb, alpha, beta, pad=1 + c % 4)


@pytest.mark.parametrize("ab,ct,fn", IN_PLACE, ids=IN_PLACE_IDS)
@pytest.mark.parametrize("trans", ["NN", "NT", "TN", "TT"])
def test_in_place_subnormal_operands(arch, nthreads, ab, ct, fn, trans, rng):
    """Subnormal bfloat16 / float16 values (in A, then in B) whose products with the other operand are normal: widened
    exactly, never read as zero (a flush would leave C near zero, far outside the bound)."""
    tiny, big = (2.0 ** -130, 2.0 ** 100) if ab == BF16 else (2.0 ** -15, 2.0 ** 4)
    for M, N, K in [(1, 70, 301), (2, 33, 64), (7, 40, 300), (16, 17, 45), (60, 1, 33), (45, 2, 300)]:
        check_in_place(rng, ab, ct, fn, M, N, K, trans[0], trans[1], 1.0, 0.0, a_scale=tiny, b_scale=big)
        check_in_place(rng, ab, ct, fn, M, N, K, trans[0], trans[1], 0.5, 1.0, a_scale=big, b_scale=tiny)


@pytest.mark.parametrize("ab,ct,fn", IN_PLACE, ids=IN_PLACE_IDS)
@pytest.mark.parametrize("trans", ["NN", "NT", "TN", "TT"])
def test_in_place_nan_and_inf_propagate(arch, nthreads, ab, ct, fn, trans, rng):
    """A NaN in op(A) makes its row of C NaN, an infinity in op(B) its column infinite (NaN where both meet); the
    other elements stay finite, and beta = 0 never reads the NaN in C."""
    ta, tb = trans
    for M, N, K in [(1, 40, 33), (2, 9, 300), (5, 37, 17), (16, 70, 302), (33, 1, 20), (40, 2, 301)]:
        opA = rng.uniform(0.5, 1, (M, K)).astype(ab)
        opB = rng.uniform(-1, 1, (K, N)).astype(ab)
        i0, k0, k1, j1 = M // 2, K // 3, (2 * K) // 3, N - 1
        opA[i0, k0] = np.nan
        opB[k1, j1] = np.inf
        A = np.ascontiguousarray(opA.T) if ta == "T" else opA
        B = np.ascontiguousarray(opB.T) if tb == "T" else opB
        C = np.full((M, N), np.nan, ct)
        fn(ta, tb, M, N, K, -1.0, A, A.shape[1], B, B.shape[1], 0.0, C, N)
        want_nan = np.zeros((M, N), bool)
        want_nan[i0, :] = True
        got = C.astype(np.float64)
        np.testing.assert_array_equal(np.isnan(got), want_nan)
        col = np.delete(got[:, j1], i0)
        assert np.all(col == -np.inf), "the infinity's column: -inf (alpha -1, op(A) > 0)"
        rest = np.delete(np.delete(got, i0, axis=0), j1, axis=1)
        assert np.all(np.isfinite(rest))


@pytest.mark.parametrize("trans", ["NT", "NN"])
def test_decoding_row_streams_the_weight_in_place(arch, trans):
    """LLM decoding's x @ W^T (and x @ W) with a 4096 x 4096 bfloat16 W, one row: correct to the float32 bound. On
    the x86 paths the in-place kernel for one row is the AVX2 float GEMV kernel's code (one template; every x86 path
    runs the AVX2 + F16C half GEMV kernels) on the widened values, so its result equals sgemm's on the avx2 path on
    the widened operands bit for bit, where the packed path (W widened
    into panels first, summed in another order) would not: the evidence that W was read in place. No speed assert:
    the time of a call against one read of W is recorded (junit property), not checked."""
    import time
    rng = np.random.default_rng(4096)
    n = k = 4096
    W = rng.uniform(-1, 1, (n, k)).astype(BF16)
    if trans == "NN":
        W = np.ascontiguousarray(W.T)  # the plain B: K x N
    x = rng.uniform(-1, 1, (1, k)).astype(BF16)
    previous = gemmkit.get_num_threads()
    gemmkit.set_num_threads(1)
    try:
        y = np.full((1, n), np.nan, np.float32)
        t0 = time.perf_counter()
        _core.gemm_bf16bf16f32("N", trans[1], 1, n, k, 1.0, x, k, W, W.shape[1], 0.0, y, n)
        elapsed = time.perf_counter() - t0
        Wf, xf = W.astype(np.float32), x.astype(np.float32)
        W64, x64 = Wf.astype(np.float64), xf.astype(np.float64)
        ref = x64 @ (W64.T if trans == "NT" else W64)
        absref = np.abs(x64) @ (np.abs(W64).T if trans == "NT" else np.abs(W64))
        assert np.all(np.abs(y - ref) <= (4 + np.sqrt(k)) * np.finfo(np.float32).eps * absref + 1e-37)
        if arch != "generic" and trans == "NT":
            ys = np.full((1, n), np.nan, np.float32)
            with gemmkit.use_arch("avx2" if arch.startswith("avx") else arch):
                gemmkit.sgemm("N", "T", 1, n, k, 1.0, xf, k, Wf, k, 0.0, ys, n)
            np.testing.assert_array_equal(y.view(np.uint32), ys.view(np.uint32))
        t0 = time.perf_counter()
        W.copy()
        read_once = time.perf_counter() - t0
        print(f"M=1 x {n}x{k} bfloat16 {trans}: {elapsed * 1e3:.2f} ms, one copy of W {read_once * 1e3:.2f} ms")
    finally:
        gemmkit.set_num_threads(previous)
