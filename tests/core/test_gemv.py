"""The GEMV paths (few rows or few columns of C, csrc/gemm_small.c and kernels/real_gemv_template.h) against
float64 references: every kernel path, 1 and 2 threads, all transposes, padded leading dimensions."""
import numpy as np
import pytest

import gemmkit

GEMM = {np.float32: gemmkit.sgemm, np.float64: gemmkit.dgemm}
# the long dimension around the kernels' edges: cache lines (16 floats, 8 doubles), the 8 / 4 rows of a
# pass, the 8 / 4 dot products of a block, the 32 KiB sum blocks (4096 floats of two rows or doubles of one,
# 2048 doubles of two; 8192 floats of one row: the 1 x 9000 case below)
LONG = [1, 3, 7, 8, 9, 15, 16, 17, 31, 33, 63, 65, 129, 2047, 2049, 4097]
SENTINEL = -7.0


def padded(rng, rows, cols, pad, dtype):
    """(parent, view): a rows x cols view of a parent with `pad` extra columns and one extra row of
    SENTINEL, so the leading dimension is cols + pad and writes outside the view show."""
    parent = np.full((rows + 1, cols + pad), SENTINEL, dtype)
    view = parent[:rows, :cols]
    view[...] = rng.uniform(-1, 1, (rows, cols))
    return parent, view


def run_case(rng, dtype, M, N, K, ta, tb, beta, pad=3):
    pa, A = padded(rng, *((M, K) if ta == "N" else (K, M)), pad, dtype)
    pb, B = padded(rng, *((K, N) if tb == "N" else (N, K)), pad, dtype)
    pc, C = padded(rng, M, N, pad, dtype)
    if beta == 0:
        C[...] = np.nan   # beta == 0: C is not read
    before_c = pc.copy()
    alpha = 0.75
    GEMM[dtype](ta, tb, M, N, K, alpha, pa, pa.shape[1], pb, pb.shape[1], beta, pc, pc.shape[1])
    Aop = A.astype(np.float64) if ta == "N" else A.T.astype(np.float64)
    Bop = B.astype(np.float64) if tb == "N" else B.T.astype(np.float64)
    ref = alpha * (Aop @ Bop) + (beta * before_c[:M, :N].astype(np.float64) if beta else 0.0)
    eps = np.finfo(dtype).eps
    tol = (4 + np.sqrt(K)) * eps * (np.abs(Aop) @ np.abs(Bop) * alpha + abs(beta)) + eps
    err = np.abs(C - ref)
    assert np.all(err <= tol), f"max err {err.max():.3g} at {np.unravel_index(np.argmax(err - tol), err.shape)}"
    outside = np.ones(pc.shape, bool)
    outside[:M, :N] = False
    assert np.array_equal(pc[outside], before_c[outside]), "wrote outside C"


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("trans", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("m", [1, 2])
def test_few_rows(arch, nthreads, dtype, trans, m, rng):
    for n in LONG:
        for k in (1, 5, 16, 33, 100):
            run_case(rng, dtype, m, n, k, trans[0], trans[1], beta=0.0 if (n + k) % 2 else 0.5)
    for k in LONG:
        run_case(rng, dtype, m, 37, k, trans[0], trans[1], beta=0.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
@pytest.mark.parametrize("trans", ["NN", "NT", "TN", "TT"])
@pytest.mark.parametrize("n", [1, 2])
def test_few_columns(arch, nthreads, dtype, trans, n, rng):
    for m in LONG:
        for k in (1, 5, 16, 33, 100):
            run_case(rng, dtype, m, n, k, trans[0], trans[1], beta=0.0 if (m + k) % 2 else 0.5)
    for k in LONG:
        run_case(rng, dtype, 37, n, k, trans[0], trans[1], beta=0.5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_large_vector_products_split_across_threads(arch, nthreads, dtype, rng):
    """Sizes where both threads take a share (and the sum blocks of gemv_rows wrap several times)."""
    for M, N, K, tr in [(1, 9000, 700, "NN"), (2, 5000, 900, "NT"), (6000, 1, 800, "NN"), (5000, 2, 700, "TN"),
                        (1, 3000, 3000, "TT"), (3000, 1, 3000, "TT")]:
        run_case(rng, dtype, M, N, K, tr[0], tr[1], beta=0.5, pad=5)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_big_s_streamed_in_quarters(arch, nthreads, dtype, rng):
    """S of 8 MiB or more (GK_GEMV_SPREAD_MIN_BYTES): the x86 kernels stream the 4 quarters of its rows
    together; rows / dot products left over past 4 x (k // 4) or 4 x (n // 4) (1-3 here) come after. Few columns
    against such a plain A take the GEMV kernels there, not the dot path (4099 x 1, 2003 x 2); one column against a
    transposed A past one `cols` block takes them at any size (1003 x 1 x 2200 TN)."""
    for M, N, K, tr in [(1, 4101, 1027, "NN"), (2, 2001, 1001, "NN"), (1, 1031, 4099, "NT"), (2, 1030, 2001, "NT"),
                        (4099, 1, 1001, "NN"), (2003, 2, 1100, "NN"), (1003, 2, 2002, "TN"), (1003, 1, 2200, "TN"),
                        (1, 2001, 1002, "TT")]:
        run_case(rng, dtype, M, N, K, tr[0], tr[1], beta=0.0 if K % 2 else 0.5, pad=3)


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_matmul_with_vectors(arch, nthreads, dtype, rng):
    """matmul's 1-D operands (a row times a matrix, a matrix times a column), plain and transposed views."""
    A = rng.uniform(-1, 1, (300, 500)).astype(dtype)
    x, y = rng.uniform(-1, 1, 500).astype(dtype), rng.uniform(-1, 1, 300).astype(dtype)
    A64 = A.astype(np.float64)
    tol = 8 * np.finfo(dtype).eps * 500
    for got, ref in [(gemmkit.matmul(A, x), A64 @ x), (gemmkit.matmul(y, A), y @ A64),
                     (gemmkit.matmul(A.T, y), A64.T @ y), (gemmkit.matmul(x, A.T), x @ A64.T),
                     (gemmkit.matmul(A[:, ::2], x[::2]), A64[:, ::2] @ x[::2])]:
        assert got.dtype == dtype
        np.testing.assert_allclose(got, ref, rtol=0, atol=tol)
