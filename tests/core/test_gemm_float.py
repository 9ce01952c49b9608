"""The real and complex float GEMMs of the core (sgemm, dgemm, cgemm, zgemm) on every kernel path and thread
count, against float64 / complex128 NumPy references with bounds that scale with K.

C := alpha * op(A) @ op(B) + beta * C, row-major, C updated in place and returned. The sgemm cases (tile edges,
layouts, alpha / beta, threads, properties) come first, then the dgemm / cgemm / zgemm ones (and sgemm through
the same checks); tests/emulated/test_isa_lane.py reuses TYPES and run_case.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gemmkit
from _support import (draw_gemm_case, kernel_path, normal_values, run_while_pool_busy, TRANS_PAIRS, TRANS_PAIRS_UPPER,
                      Operand, _edge_sizes, _is_t, _kernel)

EPS32 = float(np.finfo(np.float32).eps)
C_SENTINEL = -7777.25   # fills C's padding (of every dtype); must survive every call


def ref_sgemm(ta, tb, alpha, A, B, beta, C0):
    """float64 reference and an elementwise error bound."""
    opA = (A.T if _is_t(ta) else A).astype(np.float64)
    opB = (B.T if _is_t(tb) else B).astype(np.float64)
    K = opA.shape[1]
    a64, b64 = float(np.float32(alpha)), float(np.float32(beta))
    M, N = opA.shape[0], opB.shape[1]
    if K == 0 or a64 == 0.0:
        prod = np.zeros((M, N))
        absprod = np.zeros((M, N))
    else:
        prod = opA @ opB
        absprod = np.abs(opA) @ np.abs(opB)
    if b64 != 0.0:
        cterm = b64 * C0.astype(np.float64)
    else:
        cterm = np.zeros((M, N))
    ref = a64 * prod + cterm
    bound = 3.0 * (K + 2) * EPS32 * (abs(a64) * absprod + np.abs(cterm)) + 1e-37
    return ref, bound


def assert_close(C, ref, bound, ctx=""):
    C = np.asarray(C, dtype=np.float64)
    err = np.abs(C - ref)
    ok = err <= bound
    if not ok.all():
        i, j = np.argwhere(~ok)[0]
        raise AssertionError(
            f"{ctx}: {int((~ok).sum())} of {ok.size} elements out of bound; first at ({i},{j}): "
            f"got {C[i, j]!r}, expected {ref[i, j]!r} (bound {bound[i, j]!r})")


def run_sgemm(rng, ta, tb, M, N, K, alpha, beta, *, pads=(0, 0, 0), layouts=("1d", "1d", "1d"),
              data="normal", c_data="normal", ab_nan=False, exact=False):
    """Run one sgemm on fresh operands, check result, padding and inputs; return the result copy."""
    ar, ac = (K, M) if _is_t(ta) else (M, K)
    br, bc = (N, K) if _is_t(tb) else (K, N)
    lda, ldb, ldc = max(1, ac) + pads[0], max(1, bc) + pads[1], max(1, N) + pads[2]

    def gen(shape):
        if data == "int":
            return rng.integers(-4, 5, size=shape).astype(np.float32)
        return rng.standard_normal(shape).astype(np.float32)

    A0 = np.full((ar, ac), np.nan, np.float32) if ab_nan else gen((ar, ac))
    B0 = np.full((br, bc), np.nan, np.float32) if ab_nan else gen((br, bc))
    if c_data == "nan":
        C0 = np.full((M, N), np.nan, np.float32)
    elif c_data == "int":
        C0 = rng.integers(-8, 9, size=(M, N)).astype(np.float32)
    else:
        C0 = rng.standard_normal((M, N)).astype(np.float32)
    a = Operand(A0, lda, layouts[0], np.nan)
    b = Operand(B0, ldb, layouts[1], np.nan)
    c = Operand(C0, ldc, layouts[2], C_SENTINEL)
    out = gemmkit.sgemm(ta, tb, M, N, K, alpha, a.arg, lda, b.arg, ldb, beta, c.arg, ldc)
    ctx = f"sgemm({ta!r},{tb!r},M={M},N={N},K={K},alpha={alpha},beta={beta},lds={lda},{ldb},{ldc},{layouts})"
    assert out is c.arg, "sgemm must return C itself"
    a.assert_untouched("A")
    b.assert_untouched("B")
    c.assert_outside_untouched("C")
    res = c.matrix.copy()
    ref, bound = ref_sgemm(ta, tb, alpha, A0, B0, beta, C0)
    if exact:
        assert np.array_equal(res, ref.astype(np.float32)), f"{ctx}: not exact"
    assert_close(res, ref, bound, ctx)
    return res


# ---- basic -------------------------------------------------------------------------------------

@pytest.mark.smoke
def test_readme_example(arch):
    M, N, K = 3, 4, 5
    A = np.ones((M, K), np.float32)
    B = np.ones((N, K), np.float32)
    C = np.zeros((M, N), np.float32)
    out = gemmkit.sgemm('N', 'T', M, N, K, 1.0, A, K, B, K, 0.0, C, N)
    assert out is C
    assert np.array_equal(C, np.full((M, N), 5.0, np.float32))


@pytest.mark.smoke
@pytest.mark.parametrize("trans", TRANS_PAIRS_UPPER)
def test_small_smoke(arch, trans, rng):
    ta, tb = trans
    for (M, N, K) in [(1, 1, 1), (5, 7, 3), (13, 33, 17)]:
        run_sgemm(rng, ta, tb, M, N, K, 1.5, -1.0)


# ---- shapes around the microkernel edges, all 16 transpose letter pairs -------------------------

@pytest.mark.parametrize("trans", TRANS_PAIRS)
def test_kernel_edges(arch, nthreads, trans, rng):
    """M, N in {1, MR-1, MR, MR+1, NR-1, NR, NR+1, 2NR+1}; small-integer data so results are exact."""
    ta, tb = trans
    k = _kernel("sgemm")
    sizes = _edge_sizes(k["MR"], k["NR"])
    ks = [1, 2, 7, k["MR"], 33]
    alphabeta = [(1.0, 0.0), (1.0, 1.0), (-1.0, 2.5), (2.5, -1.0)]
    i = 0
    for M in sizes:
        for N in sizes:
            alpha, beta = alphabeta[i % len(alphabeta)]
            run_sgemm(rng, ta, tb, M, N, ks[i % len(ks)], alpha, beta, data="int", c_data="int",
                      exact=True)
            i += 1
    assert i == len(sizes) ** 2


@pytest.mark.parametrize("trans", TRANS_PAIRS_UPPER)
def test_kernel_edges_random_floats(arch, trans, rng):
    ta, tb = trans
    k = _kernel("sgemm")
    sizes = _edge_sizes(k["MR"], k["NR"])
    for i, M in enumerate(sizes):
        for j, N in enumerate(sizes):
            run_sgemm(rng, ta, tb, M, N, 5 + 11 * ((i + j) % 4), 1.0 if (i + j) % 2 else -0.75, 0.5)


PRIMES = [(2, 3, 5), (7, 11, 13), (17, 19, 23), (31, 37, 41), (97, 101, 103), (127, 131, 137),
          (199, 211, 223), (263, 257, 251), (293, 283, 281)]


@pytest.mark.parametrize("trans", TRANS_PAIRS_UPPER)
def test_prime_sizes(arch, nthreads, trans, rng):
    ta, tb = trans
    for (M, N, K) in PRIMES:
        run_sgemm(rng, ta, tb, M, N, K, 1.0, 1.0)
    for (M, N, K) in [(3, 293, 7), (283, 5, 11), (2, 3, 293)]:
        run_sgemm(rng, ta, tb, M, N, K, -1.0, 0.0)


@pytest.mark.parametrize("trans", TRANS_PAIRS_UPPER)
def test_k_range(arch, nthreads, trans, rng):
    """K from 0 up to 10000, across the KC blocking boundaries; small M, N."""
    ta, tb = trans
    kc = _kernel("sgemm")["KC"]
    ks = sorted({0, 1, 2, 3, 4, 5, 7, 8, 9, 15, 16, 17, 31, 32, 33, kc - 1, kc, kc + 1, 2 * kc + 1,
                 1000, 4097, 10000})
    for i, K in enumerate(ks):
        M, N = (7, 19) if i % 2 else (3, 5)
        run_sgemm(rng, ta, tb, M, N, K, 2.5 if i % 3 else 1.0, 1.0 if i % 2 else 0.0)


@pytest.mark.parametrize("alpha", [0.0, 1.0, -1.0, 2.5])
@pytest.mark.parametrize("beta", [0.0, 1.0, -1.0, 2.5])
def test_alpha_beta(arch, nthreads, alpha, beta, rng):
    k = _kernel("sgemm")
    M, N, K = 2 * k["MR"] + 1, k["NR"] + 3, 29
    for ta, tb in ["NN", "TN", "NT", "TT"]:
        # beta == 0 must not read C (NaN in C must not leak); alpha == 0 must not read A/B.
        res = run_sgemm(rng, ta, tb, M, N, K, alpha, beta,
                        c_data="nan" if beta == 0.0 else "normal", ab_nan=(alpha == 0.0))
        assert np.isfinite(res).all()


# ---- padding and layouts -----------------------------------------------------------------------

@pytest.mark.parametrize("layouts", [("1d", "1d", "1d"), ("2d", "2d", "2d"), ("1d", "2d", "1d"),
                                     ("2d", "1d", "2d")], ids="-".join)
@pytest.mark.parametrize("trans", TRANS_PAIRS_UPPER)
def test_padded_lds(arch, nthreads, layouts, trans, rng):
    ta, tb = trans
    k = _kernel("sgemm")
    mr, nr = k["MR"], k["NR"]
    cases = [((1, 1, 1), (1, 2, 3)), ((mr + 1, nr + 1, 9), (3, 5, 1)), ((mr, 2 * nr + 1, 40), (7, 0, 16)),
             ((37, 45, 29), (0, 13, 0)), ((3, 1, 70), (64, 64, 64))]
    for (M, N, K), pads in cases:
        run_sgemm(rng, ta, tb, M, N, K, 1.25, -0.5, pads=pads, layouts=layouts)


def test_2d_sliced_view_of_wider_array(arch, rng):
    """The documented pattern: X[:, :k] of a C-ordered X with ld = X.shape[1]."""
    M, N, K = 9, 10, 11
    Xa = rng.standard_normal((M, K + 5)).astype(np.float32)
    Xb = rng.standard_normal((K, N + 3)).astype(np.float32)
    Xc = np.full((M, N + 7), C_SENTINEL, np.float32)
    Xc[:, :N] = rng.standard_normal((M, N)).astype(np.float32)
    C0 = Xc[:, :N].copy()
    pad0 = Xc[:, N:].copy()
    out = gemmkit.sgemm('N', 'N', M, N, K, 1.0, Xa[:, :K], K + 5, Xb[:, :N], N + 3, 1.0, Xc[:, :N], N + 7)
    assert np.shares_memory(out, Xc)
    ref, bound = ref_sgemm('N', 'N', 1.0, Xa[:, :K], Xb[:, :N], 1.0, C0)
    assert_close(Xc[:, :N], ref, bound)
    assert np.array_equal(Xc[:, N:], pad0)


# ---- special values of alpha / beta / sizes ---------------------------------------------------

def test_beta_zero_nan_c_does_not_leak(arch, nthreads, rng):
    for (M, N, K) in [(1, 1, 1), (5, 17, 3), (40, 70, 64)]:
        for ta, tb in TRANS_PAIRS_UPPER:
            res = run_sgemm(rng, ta, tb, M, N, K, 1.0, 0.0, c_data="nan")
            assert np.isfinite(res).all()
    # Inf in C as well, with alpha != 1
    C = np.full((4, 6), np.inf, np.float32)
    A = np.ones((4, 3), np.float32)
    B = np.ones((3, 6), np.float32)
    gemmkit.sgemm('N', 'N', 4, 6, 3, -2.0, A, 3, B, 6, 0.0, C, 6)
    assert np.array_equal(C, np.full((4, 6), -6.0, np.float32))


@pytest.mark.parametrize("beta", [0.0, 1.0, -1.0, 2.5])
def test_alpha_zero_does_not_read_ab(arch, nthreads, beta, rng):
    M, N, K = 13, 35, 21
    for ta, tb in TRANS_PAIRS_UPPER:
        A = np.full((K, M) if _is_t(ta) else (M, K), np.nan, np.float32)
        B = np.full((N, K) if _is_t(tb) else (K, N), np.nan, np.float32)
        C0 = rng.standard_normal((M, N)).astype(np.float32)
        C = C0.copy()
        gemmkit.sgemm(ta, tb, M, N, K, 0.0, A, A.shape[1], B, B.shape[1], beta, C, N)
        expected = np.zeros_like(C0) if beta == 0.0 else np.float32(beta) * C0
        assert np.array_equal(C, expected), f"alpha=0, beta={beta}: C must be exactly beta*C"


@pytest.mark.parametrize("beta", [0.0, 1.0, -1.0, 2.5])
def test_k_zero(arch, beta, rng):
    """K == 0: C := beta * C (exactly), A and B may be empty."""
    M, N = 7, 9
    C0 = rng.standard_normal((M, N)).astype(np.float32)
    C = C0.copy()
    out = gemmkit.sgemm('N', 'N', M, N, 0, 3.0, np.empty((M, 0), np.float32), 1,
                        np.empty((0, N), np.float32), N, beta, C, N)
    assert out is C
    expected = np.zeros_like(C0) if beta == 0.0 else np.float32(beta) * C0
    assert np.array_equal(C, expected)
    # beta == 0 with K == 0 must also clear NaN
    C = np.full((M, N), np.nan, np.float32)
    gemmkit.sgemm('T', 'T', M, N, 0, 1.0, np.empty(0, np.float32), M, np.empty(0, np.float32), 1,
                  0.0, C, N)
    assert np.array_equal(C, np.zeros((M, N), np.float32))


@pytest.mark.parametrize("M,N", [(0, 0), (0, 5), (5, 0)])
@pytest.mark.parametrize("beta", [0.0, 2.0])
def test_m_or_n_zero_touch_nothing(arch, M, N, beta):
    K = 4
    C = np.full(32, C_SENTINEL, np.float32)
    before = C.copy()
    A = np.full(64, np.nan, np.float32)
    B = np.full(64, np.nan, np.float32)
    out = gemmkit.sgemm('N', 'N', M, N, K, 1.0, A, K, B, max(1, N), beta, C, max(1, N))
    assert out is C
    assert np.array_equal(C, before)
    # also with a 2-D (M, N)-shaped empty C
    C2 = np.empty((M, N), np.float32)
    assert gemmkit.sgemm('N', 'N', M, N, K, 1.0, A, K, B, max(1, N), beta, C2, max(1, N)) is C2


def test_beta_one_alpha_zero_keeps_c_bitwise(arch, rng):
    C0 = rng.standard_normal((6, 10)).astype(np.float32)
    C0[0, 0] = -0.0
    C0[1, 1] = np.float32(1e-40)  # subnormal
    C = C0.copy()
    gemmkit.sgemm('N', 'N', 6, 10, 3, 0.0, np.zeros(18, np.float32), 3, np.zeros(30, np.float32), 10,
                  1.0, C, 10)
    assert C.tobytes() == C0.tobytes()


# ---- large K ---------------------------------------------------------------------------------

@pytest.mark.parametrize("trans", ["NN", "TT"])
def test_big_k_exact_integers(arch, trans, rng):
    """K = 10000 with +-1 data: every partial sum is a small integer, so the result is exact."""
    ta, tb = trans
    M, N, K = 5, 19, 10000
    run_sgemm(rng, ta, tb, M, N, K, 1.0, 0.0, exact=False)
    A = rng.choice(np.array([-1.0, 1.0], np.float32), size=(K, M) if _is_t(ta) else (M, K))
    B = rng.choice(np.array([-1.0, 1.0], np.float32), size=(N, K) if _is_t(tb) else (K, N))
    C = np.zeros((M, N), np.float32)
    gemmkit.sgemm(ta, tb, M, N, K, 1.0, A, A.shape[1], B, B.shape[1], 0.0, C, N)
    opA = A.T if _is_t(ta) else A
    opB = B.T if _is_t(tb) else B
    assert np.array_equal(C, (opA.astype(np.float64) @ opB.astype(np.float64)).astype(np.float32))


# ---- threads -----------------------------------------------------------------------------------

@pytest.mark.parametrize("trans", ["NN", "TT", "NT"])
def test_multithreaded_deterministic(arch, nthreads, trans, rng):
    """300x300x300 is big enough for 2 threads; repeated calls give bit-identical results."""
    ta, tb = trans
    M = N = K = 300
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    C0 = rng.standard_normal((M, N)).astype(np.float32)
    results = []
    for _ in range(3):
        C = C0.copy()
        gemmkit.sgemm(ta, tb, M, N, K, 1.0, A, K, B, N, 0.5, C, N)
        results.append(C)
    ref, bound = ref_sgemm(ta, tb, 1.0, A, B, 0.5, C0)
    assert_close(results[0], ref, bound, f"threads={nthreads}")
    for r in results[1:]:
        assert r.tobytes() == results[0].tobytes(), "repeated calls differ"


def test_concurrent_python_callers(arch, rng):
    """Python threads calling at once: while one call holds the worker pool, another call runs on its
    own calling thread (README). Both must still compute every element of C."""
    gemmkit.set_num_threads(2)
    M = N = K = 300
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    ref, bound = ref_sgemm('N', 'N', 1.0, A, B, 0.0, np.zeros((M, N), np.float32))
    Mb = 600
    Ab = np.ones((Mb, Mb), np.float32)

    def big():  # keeps the pool busy with big multi-threaded calls
        Cb = np.zeros((Mb, Mb), np.float32)
        gemmkit.sgemm('N', 'N', Mb, Mb, Mb, 1.0, Ab, Mb, Ab, Mb, 0.0, Cb, Mb)
        return int((Cb != Mb).sum())

    def small():
        C = np.zeros((M, N), np.float32)
        gemmkit.sgemm('N', 'N', M, N, K, 1.0, A, K, B, N, 0.0, C, N)
        return int((~(np.abs(C - ref) <= bound)).sum())

    run_while_pool_busy(big, small)


# ---- property test -------------------------------------------------------------------------

@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_property_sgemm(data):
    c = draw_gemm_case(data, max_m=40, max_n=70, max_k=40)
    nice = st.sampled_from([0.0, 1.0, -1.0, 2.5])
    alpha = data.draw(st.one_of(nice, st.floats(-4, 4, width=32)), label="alpha")
    beta = data.draw(st.one_of(nice, st.floats(-4, 4, width=32)), label="beta")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    with kernel_path(c["arch"], c["threads"]):
        run_sgemm(rng, c["ta"], c["tb"], c["M"], c["N"], c["K"], alpha, beta, pads=c["pads"], layouts=c["layouts"],
                  c_data="nan" if beta == 0.0 else "normal", ab_nan=(alpha == 0.0))


@pytest.mark.parametrize("trans", ["NN", "TN"])
def test_thread_count_changes(arch, trans, rng):
    """The pool keeps the workers of an earlier, larger thread count; a later call with fewer threads
    must use only as many as it asked for (regression: extra workers raced on C)."""
    ta, tb = trans
    for n in (4, 3, 2, 3, 1, 2):
        gemmkit.set_num_threads(n)
        for (M, N, K) in [(263, 257, 251), (301, 97, 130)]:
            run_sgemm(rng, ta, tb, M, N, K, 1.0, 1.0)


@pytest.mark.parametrize("trans", ["NN", "TN", "NT"])
def test_skinny_m(arch, nthreads, trans, rng):
    """Few rows of C against a large B: a plain B is streamed in place in short k blocks up to the table's
    row panels (one on AVX2: 6 rows, 6 and 7 either side), packed past them, with the row-count kernels for the
    panels shorter than MR."""
    ta, tb = trans
    for M in (1, 5, 6, 7, 13, 47, 49):
        run_sgemm(rng, ta, tb, M, 701, 6001, 1.0, 0.5 if M % 2 else 0.0, pads=(3, 0, 5))


@pytest.mark.parametrize("ta", ["N", "T"])
def test_few_rows_transposed_b(arch, nthreads, ta, rng):
    """op(B) = B^T with few rows of C: the dot-product path (k tails of the 16-wide vectors, column
    groups of 4 and their remainder, row groups of 4)."""
    for M in (1, 3, 4, 5, 16, 17):
        for K in (1, 15, 16, 17, 1000):
            run_sgemm(rng, ta, "T", M, 37, K, 1.5, -0.5 if K % 2 else 0.0, pads=(2, 3, 1))
    run_sgemm(rng, ta, "T", 7, 2053, 4099, 1.0, 1.0)


@pytest.mark.parametrize("ta", ["N", "T"])
def test_one_or_two_rows_plain_b(arch, nthreads, ta, rng):
    """M <= 2 against a plain B: the row-streaming GEMV path (k in steps of 8 plus a tail; columns
    in blocks of 64 plus a tail)."""
    for M in (1, 2):
        for K in (1, 7, 8, 9, 300):
            for N in (53, 64, 200):
                run_sgemm(rng, ta, "N", M, N, K, -2.5, 1.0 if K % 2 else 0.0, pads=(1, 4, 2))
        run_sgemm(rng, ta, "N", M, 3001, 2049, 1.0, -1.0)


# ---- dgemm, cgemm, zgemm (and sgemm through the same checks) ------------------------------------

TYPES = {  # op -> (dtype, function)
    "sgemm": (np.float32, gemmkit.sgemm),
    "dgemm": (np.float64, gemmkit.dgemm),
    "cgemm": (np.complex64, gemmkit.cgemm),
    "zgemm": (np.complex128, gemmkit.zgemm),
}


def _op(X, t):
    if t in "Nn":
        return X
    if t in "Rr":  # conjugate, no transpose
        return X.conj()
    return X.T if t in "Tt" else X.conj().T


def run_case(rng, op, ta, tb, M, N, K, alpha, beta, pads=(0, 0, 0), layouts=("2d", "2d", "2d"), c_nan=False):
    dtype, fn = TYPES[op]
    ar, ac = (M, K) if ta in "NnRr" else (K, M)
    br, bc = (K, N) if tb in "NnRr" else (N, K)
    lda, ldb, ldc = max(1, ac) + pads[0], max(1, bc) + pads[1], max(1, N) + pads[2]
    A0, B0 = normal_values(rng, (ar, ac), dtype), normal_values(rng, (br, bc), dtype)
    C0 = np.full((M, N), np.nan, dtype) if c_nan else normal_values(rng, (M, N), dtype)
    a, b = Operand(A0, lda, layouts[0], np.nan), Operand(B0, ldb, layouts[1], np.nan)
    c = Operand(C0, ldc, layouts[2], C_SENTINEL)
    ctx = f"{op}({ta!r},{tb!r},M={M},N={N},K={K},alpha={alpha},beta={beta},pads={pads},{layouts})"
    out = fn(ta, tb, M, N, K, alpha, a.arg, lda, b.arg, ldb, beta, c.arg, ldc)
    assert out is c.arg, ctx
    a.assert_untouched(f"{ctx}: A")
    b.assert_untouched(f"{ctx}: B")
    c.assert_outside_untouched(f"{ctx}: C")
    # reference in float64 / complex128, alpha and beta as the routine's type holds them
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    al, be = wide(dtype(alpha)), wide(dtype(beta))
    opA, opB = _op(A0.astype(wide), ta), _op(B0.astype(wide), tb)
    prod = opA @ opB if K and al != 0 else np.zeros((M, N), wide)
    absprod = np.abs(opA) @ np.abs(opB) if K else np.zeros((M, N))
    cterm = be * C0.astype(wide) if be != 0 else np.zeros((M, N), wide)
    ref = al * prod + cterm
    eps = float(np.finfo(dtype).eps)
    bound = 4.0 * (K + 2) * eps * (abs(al) * absprod + np.abs(cterm)) + 1e-300
    res = c.matrix
    err = np.abs(res.astype(wide) - ref)
    bad = ~(err <= bound)
    if bad.any():
        i, j = np.argwhere(bad)[0]
        raise AssertionError(f"{ctx}: {int(bad.sum())} of {bad.size} elements wrong; first ({i},{j}): "
                             f"got {res[i, j]!r}, expected {ref[i, j]!r} (bound {bound[i, j]:.3g})")
    return res


def _trans(op):
    return "NnTtCcRr" if op in ("cgemm", "zgemm") else "NnTt"


def _scalars(op):
    vals = [0.0, 1.0, -1.0, 0.5, 2.25]
    if op in ("cgemm", "zgemm"):
        vals += [1j, 0.5 - 0.75j, -1.5 + 0.25j]
    return vals


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_random_cases(data):
    op = data.draw(st.sampled_from(sorted(TYPES)), label="op")
    arch = data.draw(st.sampled_from(gemmkit.available_archs()), label="arch")
    threads = data.draw(st.sampled_from([1, 2]), label="threads")
    ta = data.draw(st.sampled_from(_trans(op)), label="transa")
    tb = data.draw(st.sampled_from(_trans(op)), label="transb")
    M, N, K = (data.draw(st.integers(0, hi), label=n) for n, hi in (("M", 40), ("N", 70), ("K", 70)))
    alpha = data.draw(st.sampled_from(_scalars(op)), label="alpha")
    beta = data.draw(st.sampled_from(_scalars(op)), label="beta")
    pads = tuple(data.draw(st.integers(0, 3), label=f"pad_{x}") for x in "abc")
    layouts = tuple(data.draw(st.sampled_from(["1d", "2d"]), label=f"layout_{x}") for x in "abc")
    c_nan = beta == 0.0 and data.draw(st.booleans(), label="nan_in_c")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), label="seed"))
    with kernel_path(arch, threads):
        run_case(rng, op, ta, tb, M, N, K, alpha, beta, pads, layouts, c_nan)


@pytest.mark.parametrize("op", ["dgemm", "cgemm", "zgemm"])
def test_tile_edges_every_path(op):
    """Sizes around the micro-tile of each path (MR, NR in the kernel's real domain), every transpose."""
    rng = np.random.default_rng(1)
    for arch in gemmkit.available_archs():
        with kernel_path(arch, 1):
            info = gemmkit.show_config(print_out=False)[op]
            mr, nr = info["MR"], info["NR"] // (2 if op != "dgemm" else 1)
            sizes = sorted({1, mr - 1, mr, mr + 1, nr - 1, nr, nr + 1, 2 * nr + 1} - {0})
            for M in sizes:
                for N in sizes:
                    for t in ("NN", "TC" if op != "dgemm" else "TT", "CN" if op != "dgemm" else "NT"):
                        run_case(rng, op, t[0], t[1], M, N, 13, 0.75, 0.5, pads=(1, 2, 3))
                    if op != "dgemm":  # complex scalars (alpha folded into A, C pre-scaled), beta 0 over NaN
                        run_case(rng, op, "R", "T", M, N, 13, 0.5 - 0.75j, -1.5 + 0.25j, pads=(2, 1, 1))
                        run_case(rng, op, "C", "R", M, N, 13, 1j, 0.0, pads=(0, 3, 2), c_nan=True)


@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_tiny_products_every_row_remainder(op):
    """The unpacked tiny path (up to 32 a side, 64 with the operands in place): 6-row blocks and the 5-row
    ones that leave no rows over (10 = 5 5, 11 = 6 5, 17 = 6 6 5, 20 = 5 5 5 5, 31, 32 = 6 6 5 5 5 5) stored
    straight into C (alpha 1, beta 0) or through the scaling pass, and 1-4 remaining rows over one chunk of
    columns or two at once (N a whole number of chunk pairs: 8 / 16 doubles, 16 / 32 floats), on every path,
    beside the chunk edges and in half chunks (N <= 8 floats / 4 doubles)."""
    rng = np.random.default_rng(7)
    chunk = 16 if op == "sgemm" else 8
    for arch in gemmkit.available_archs():
        with kernel_path(arch, 1):
            for M in (1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 17, 20, 31, 32):
                for N in (chunk // 2 - 3, chunk // 2, chunk - 1, chunk, 2 * chunk, 2 * chunk + 1, 32):
                    for alpha, beta, c_nan in ((1.0, 0.0, True), (1.0, 0.0, False), (0.5, 0.0, True),
                                               (1.0, -1.5, False)):
                        run_case(rng, op, "N", "N", M, N, 29, alpha, beta, pads=(1, 0, 3), c_nan=c_nan)
                    run_case(rng, op, "N", "N", M, N, 32, 1.0, 0.0)  # B rows in place (no pad)
                    run_case(rng, op, "T", "T", M, N, 7, 1.0, 0.0, pads=(2, 1, 0))
            # past 32 a side (Zen 2): a plain A (B copied where N is not whole chunks, B^T transposed)
            for M, N, K in ((33, 2 * chunk, 33), (40, 48, 64), (61, 32, 47), (64, 64, 64), (64, 40, 64), (50, 9, 60),
                            (64, 5, 64)):
                for alpha, beta, c_nan in ((1.0, 0.0, True), (-0.5, 0.0, True), (1.0, 0.25, False)):
                    run_case(rng, op, "N", "N", M, N, K, alpha, beta, pads=(0, 0, 1), c_nan=c_nan)
                run_case(rng, op, "N", "T", M, N, K, 1.0, 0.0, pads=(1, 1, 1))
                run_case(rng, op, "N", "T", M, N, K, 0.5, 0.0, pads=(0, 0, 0), c_nan=True)
                run_case(rng, op, "T", "N", M, N, K, 1.0, 0.0, pads=(1, 1, 1))  # A^T: packed


@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_tiny_ragged_columns(op):
    """Plain A and B whose N is not a whole number of vectors (the AVX-512 tiny path's masked loops read B in
    place and store C under a mask): every N up to four chunks and a bit past them, and past eight (groups of
    four chunks, then three, two, one or a half: 6 chunks + 5 and 7 chunks leave a group of three), row counts
    that make blocks of 1-8 rows (1-6 for four chunks), K from 1, alpha / beta (beta 0 over NaN), padded operands
    whose pads must stay untouched (a mask one lane too wide writes C's pad or reads B's NaN pad into the result),
    on every path."""
    rng = np.random.default_rng(17)
    chunk = 16 if op == "sgemm" else 8
    widths = list(range(1, 4 * chunk + 4)) + [5 * chunk, 6 * chunk - 1, 6 * chunk + 5, 7 * chunk, 7 * chunk + 3,
                                              8 * chunk, 8 * chunk + 1, 9 * chunk + chunk // 2]
    for arch in gemmkit.available_archs():
        with kernel_path(arch, 1):
            for N in widths:
                for M, K in ((1, 5), (2, 1), (3, 17), (4, 9), (5, 8), (6, 7), (7, 29), (11, 2), (13, 3), (20, 12),
                             (32, 32)):
                    alpha, beta, c_nan = ((1.0, 0.0, True), (0.5, 0.0, True), (1.0, -1.5, False),
                                          (-2.0, 0.25, False))[(N + M) % 4]
                    run_case(rng, op, "N", "N", M, N, K, alpha, beta, pads=((N + K) % 3, (M + 1) % 3, 1 + N % 2),
                             c_nan=c_nan)


def run_plain_shapes(op, threads, seed, shapes, ta="N", tb="N"):
    """op(A) x op(B) of each shape on every path: alpha / beta in turn, beta 0 over NaN, padded operands."""
    rng = np.random.default_rng(seed)
    cases = ((1.0, 0.0, True), (0.5, 0.0, True), (1.0, -1.5, False), (-2.0, 0.25, False))
    for arch in gemmkit.available_archs():
        with kernel_path(arch, threads):
            for n, (M, N, K) in enumerate(shapes):
                alpha, beta, c_nan = cases[n % 4]
                run_case(rng, op, ta, tb, M, N, K, alpha, beta, pads=(n % 3, (n + 1) % 3, 1 + n % 2), c_nan=c_nan)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_plain_products_past_the_tiny_limits(op, threads):
    """Plain A x plain B past the tiny path's limits and up to small.plain_max_macs (200^3, Zen 4 320^3): the kernel's `plain`
    loops (nothing packed; AVX-512: zmm quads in row blocks of <= 6, then a triple, a pair, a zmm or a masked ymm
    last chunk in row blocks of <= 8; AVX2: ymm pairs in row blocks of <= 6, looped over the columns in one call, then
    one ymm), elsewhere and past one thread's worth the packed driver: every class of column edge, alpha / beta, beta 0
    over NaN, padded operands, every path."""
    run_plain_shapes(op, threads, 23, ((65, 65, 65), (100, 100, 100), (72, 40, 130), (7, 200, 33), (130, 9, 70),
                                       (3, 71, 80), (150, 104, 96), (97, 88, 111), (199, 201, 199), (257, 263, 250),
                                       (70, 700, 600)))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_plain_products_columns_outer(op, threads):
    """Plain products whose B is past 32 KiB but within 256 KiB, sums of 64-128 terms and more than seven chunks: the
    AVX-512 plain loops run each group of four chunks down all the row blocks before the next group (a last group masked,
    then the chunks left, a half chunk or the dot path's tail columns), elsewhere as other plain products; every path,
    alpha / beta, beta 0 over NaN, padded operands."""
    shapes = {"sgemm": ((50, 200, 100), (37, 150, 64), (7, 250, 128), (61, 129, 96), (13, 1000, 64)),
              "dgemm": ((29, 61, 70), (45, 90, 128), (100, 100, 100), (6, 300, 100), (71, 65, 127))}[op]
    run_plain_shapes(op, threads, 83, shapes)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_plain_products_dot_tail(op, threads):
    """A last chunk of at most 4 columns after an even number of whole ones (AVX-512 float32 36, 66, 100, 129 columns;
    float64 17, 34, 50, 100): the AVX-512 plain loops run those columns by the dot path, B's columns copied
    transposed 512 terms at a time (K 513, 600, 1030, 1100: several copies, the later ones added to C); 31 terms stay in
    the masked loops, and so do 32-63 terms after a pair of whole chunks (float32 36 / 100 columns, float64 17 / 50:
    one masked group of three). Every path, alpha / beta, beta 0 over NaN."""
    run_plain_shapes(op, threads, 71, ((13, 36, 513), (64, 100, 32), (5, 66, 1100), (40, 34, 600), (9, 17, 1030),
                                       (33, 50, 31), (70, 129, 64), (3, 36, 700), (40, 36, 48), (9, 17, 63),
                                       (21, 100, 64), (17, 50, 40)))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_plain_products_transposed_a(op, threads):
    """A transposed A in one thread's worth of plain product: on AVX-512 and AVX2 the `plain` loops broadcast from A^T's
    columns (few rows or many, op(B) plain or copied), float64 only while A is within 1 MiB; every path."""
    shapes = ((65, 65, 65), (72, 40, 130), (3, 71, 80), (150, 104, 96), (199, 201, 199), (9, 300, 1000), (7, 200, 33))
    run_plain_shapes(op, threads, 61, shapes, ta="T")
    run_plain_shapes(op, threads, 67, shapes[::2], ta="T", tb="T")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_few_columns_plain_any_size(op, threads):
    """Few columns (N <= 64) against a B within 512 KiB: on AVX-512 and AVX2 the `plain` loops at any size, rows split
    among the threads in 8-row blocks (rows left over, a thread with none); elsewhere the packed driver."""
    run_plain_shapes(op, threads, 29, ((3001, 16, 700), (1000, 7, 300), (97, 64, 500), (2001, 33, 60), (9, 40, 1000),
                                       (517, 3, 2000)))


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_plain_products_against_a_big_b(op, threads):
    """Few rows within small.plain_max_macs against a B either side of 8 MiB (GK_GEMV_SPREAD_MIN_BYTES): the `plain`
    loops below it, the packed driver from it (float64 3 x 1100 x 1000, float32 6 x 2100 x 1000); 3 rows (past the
    GEMV kernels' 2), A plain or transposed."""
    shapes = ((3, 1100, 1000), (6, 2100, 1000), (5, 1000, 1040))
    run_plain_shapes(op, threads, 61, shapes)
    run_plain_shapes(op, threads, 67, shapes[:1], ta="T")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_short_sums_plain_any_size(op, threads):
    """Sums of at most 16 terms against a B within 512 KiB: the `plain` loops at any size (AVX-512 and AVX2), rows
    split among the threads; A plain or transposed, a transposed B copied; elsewhere the packed driver."""
    shapes = ((3001, 700, 3), (1001, 301, 16), (517, 129, 9), (64, 2000, 1), (40, 1500, 17))
    run_plain_shapes(op, threads, 43, shapes)
    run_plain_shapes(op, threads, 47, shapes[:3], ta="T")
    run_plain_shapes(op, threads, 53, shapes[1:], tb="T")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_few_columns_transposed_a_plain(op, threads):
    """Few columns with a transposed A: the `plain` loops broadcast from A^T's columns (rows split among the
    threads at a column offset of A^T), a transposed B copied as well, every path."""
    shapes = ((3001, 16, 700), (97, 64, 500), (517, 3, 2000), (40, 33, 61))
    run_plain_shapes(op, threads, 37, shapes, ta="T")
    run_plain_shapes(op, threads, 41, shapes, ta="T", tb="T")


@pytest.mark.parametrize("threads", [1, 2])
def test_few_columns_transposed_a_in_strips(threads):
    """Float32, 16-64 columns against a transposed A whose k lines walk more than 2048 pages (K lines 4 KiB apart or
    more, once per column group of the plain loops: 16 columns on AVX2, 64 on AVX-512): the `plain` loops on strips
    of 48 of A^T's columns, 256 k deep, copied first (csrc/gemm_small.c; the strip and k edges, C summed over the k
    strips after beta), every path; 15 columns and shorter walks in place (1040 x 20 x 1900 and 1030 x 64 x 1100:
    strips on AVX2, in place on AVX-512)."""
    shapes = ((1100, 17, 2100), (1030, 64, 2305), (1025, 16, 2060), (1100, 15, 2100), (1040, 20, 1900),
              (1030, 64, 1100))
    run_plain_shapes("sgemm", threads, 61, shapes, ta="T")
    run_plain_shapes("sgemm", threads, 67, shapes[:1], ta="T", tb="T")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_transposed_b_copied_for_the_plain_loops(op, threads):
    """A transposed B within 512 KiB copied plain for the `plain` loops on AVX-512 and AVX2 (few columns from 32 rows up,
    or K below the dot path's 64), every path: the copy's rows and columns, padded B; rows of N a multiple of 256 bytes
    (N = 64, 256: the copy's rows a cache line further apart)."""
    run_plain_shapes(op, threads, 31, ((64, 3, 1000), (203, 17, 130), (40, 64, 700), (16, 3000, 16), (7, 900, 5),
                                       (33, 61, 63), (64, 256, 64), (37, 64, 129)), tb="T")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
@pytest.mark.parametrize("tb", ["N", "T"])
def test_few_columns_dot_path(op, threads, tb):
    """1-4 columns of C against a plain A, K >= 16: on AVX-512 and AVX2 the dot path over A's rows (blocks of 4 / 2 rows
    by every column, the sums reduced together and stored masked, rows split among threads in 16s), op(B)'s columns
    gathered or a B^T read in place; elsewhere the GEMV / plain / packed paths: K tails, row remainders, alpha / beta,
    NaN."""
    run_plain_shapes(op, threads, 43, ((1001, 3, 64), (37, 1, 100), (18, 2, 65), (517, 4, 2000), (33, 3, 79),
                                       (5, 4, 1000), (70, 3, 1023), (2, 1, 300), (300, 3, 16), (41, 4, 33), (23, 2, 15)), tb=tb)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_few_columns_short_sums(op, threads):
    """1-4 columns of C, K below one vector (16 floats, 8 doubles): on AVX-512 the dot path's short loops, VL rows at a
    time, A's columns split from whole vectors (dense A, K <= 8) or gathered, C's columns merged into whole vectors
    (dense C) or written through a tile; every K, row remainders, alpha / beta, NaN, every path."""
    rng = np.random.default_rng(71)
    cases = ((1.0, 0.0, True), (0.5, 0.0, False), (1.0, -1.5, False), (-2.0, 0.25, False))
    for arch in gemmkit.available_archs():
        with kernel_path(arch, threads):
            for K in range(1, 16):
                for n, (M, N) in enumerate(((1000, 1), (37, 2), (203, 3), (16, 4), (17, 3))):
                    alpha, beta, c_nan = cases[(K + n) % 4]
                    for pads in ((0, 0, 0), (1, 0, 2)):  # dense A and C, then padded (gathers, the tile)
                        run_case(rng, op, "N", "NT"[(K + n) % 2], M, N, K, alpha, beta, pads=pads, c_nan=c_nan)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
@pytest.mark.parametrize("tb", ["N", "T"])
def test_few_columns_transposed_a(op, threads, tb):
    """1-4 columns of C against a transposed A, K >= 16: on AVX-512 and AVX2 the `cols` loops (up to 4 / 2 vectors of
    A^T's columns, the last masked, by a broadcast of each column of op(B); C written through a tile; rows split among
    threads in 64s), one column only while one block covers C's rows (64 / 32 rows on AVX-512, 16 / 8 on AVX2; past
    it the GEMV kernels: 300 x 1 x 70, 1100 x 1 x 600); elsewhere the GEMV / plain / packed paths."""
    run_plain_shapes(op, threads, 59, ((1001, 3, 64), (37, 1, 100), (18, 2, 16), (517, 4, 2000), (130, 3, 17),
                                       (65, 4, 300), (5, 4, 1000), (2, 1, 40), (49, 2, 15), (64, 1, 50), (16, 1, 33),
                                       (300, 1, 70), (1100, 1, 600)), ta="T", tb=tb)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_few_rows_dot_path(op, threads):
    """Few rows (<= 16) of C against a transposed B, K >= 16: on AVX-512 and AVX2 the dot path over B^T's rows (blocks
    of 4 columns by <= 4 / 2 rows, the column remainder in one block), A plain or transposed (copied), every path."""
    shapes = ((1, 37, 1000), (3, 5, 64), (4, 6, 65), (5, 7, 130), (16, 41, 200), (9, 1030, 71), (7, 9, 16), (16, 30, 47),
              (3, 3000, 17))
    run_plain_shapes(op, threads, 47, shapes, tb="T")
    run_plain_shapes(op, threads, 53, shapes[::2], ta="T", tb="T")


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["dgemm", "cgemm", "zgemm"])
def test_multiple_cache_blocks(op, threads):
    """M, N, K past MC, NC and KC of the path in use, so every loop of the driver runs more than once
    (and on 2 threads the shared packed B is used)."""
    info = gemmkit.show_config(print_out=False)[op]
    per = 2 if op != "dgemm" else 1  # complex: N and K are doubled in the kernel's domain
    M = info["MC"] + 7
    N = info["NC"] // per + 5
    K = info["KC"] // per + 9
    rng = np.random.default_rng(2)
    for arch in gemmkit.available_archs()[-2:]:
        with kernel_path(arch, threads):
            for t in ("NN", "TT") + (("CC", "RN") if per == 2 else ()):
                run_case(rng, op, t[0], t[1], M, N, K, 1.25 if per == 1 else 0.5 + 1j, 0.5)
            if per == 2:  # beta 0 over NaN, a complex beta, odd K past KC (269 prime)
                run_case(rng, op, "N", "C", M, N, K + 2, -0.75, 0.0, pads=(1, 0, 3), c_nan=True)
                run_case(rng, op, "T", "N", M, N, K + 4, 1.0, 0.25 - 1j, pads=(0, 2, 0))


def _small_paths_off(arch):
    """Every small path's limits at 0 on kernel path `arch`: any product runs the packed driver."""
    from gemmkit import _core
    for name in ("tiny_max_macs", "tiny_direct_max_macs", "tiny_complex_max_macs", "plain_max_macs",
                 "direct_max_macs", "direct_b_max_macs", "gemv_max_m", "gemv_max_n", "dot_max_m"):
        assert _core.tuning_set(arch, "small." + name, 0) is None


@pytest.fixture
def packed_everywhere():
    """Every small path's limits at 0 on every path, so any product runs the packed driver; restored after."""
    from gemmkit import _core, _tuning_file
    _core.tuning_clear()
    for arch in gemmkit.available_archs():
        _small_paths_off(arch)
    yield
    _core.tuning_clear()
    _tuning_file.load(warn=False)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm", "cgemm", "zgemm"])
def test_packed_k_blocks_of_every_length(op, threads, packed_everywhere):
    """The packed driver (small paths off) on every k block length around the AVX-512 12-row k loop's parts
    (real_zmm_asm.h: four k an iteration; C's prefetches in the first 12 iterations, in 12 iterations ending 4
    iterations before the end, at once where the block is shorter; 1-3 k left over) and around each path's own KC
    (past it: near-equal k blocks): every path, two full row tiles and an edge, two full column panels and an edge,
    alpha / beta, beta 0 over NaN."""
    per = 2 if op in ("cgemm", "zgemm") else 1  # complex: the kernel's k and columns are doubled
    rng = np.random.default_rng(5)
    cases = ((1.0, 0.0, True), (0.5, 1.0, False), (-2.0, 0.25, False))
    for arch in gemmkit.available_archs():
        with kernel_path(arch, threads):
            k = gemmkit.show_config(print_out=False)[op]
            ks = sorted({1, 2, 3, 4, 5, 15, 16, 17, 19, 63, 64, 65, 66, 67, 111, 112, 113, 115, 160, 161,
                         k["KC"] // per - 1, k["KC"] // per + 3})
            M, N = 2 * k["MR"] + 5, 2 * k["NR"] // per + 3
            for n, K in enumerate(ks):
                alpha, beta, c_nan = cases[n % 3]
                t = ("NN", "TN", "NT")[n % 3]
                run_case(rng, op, t[0], t[1], M, N, K, alpha, beta, pads=(n % 2, 1, 0), c_nan=c_nan)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_few_rows_wide_b_blocks(op, threads):
    """Few rows of C (M <= KC / 2) against a packed B: the driver widens the B blocks to rows of 32 KiB and
    shortens the k block to keep them within 4 MiB (csrc/gemm_real.c few_rows_blocks). N past 1.25 wide
    blocks (a wide block, then the rest), K past the short k block, M between the in-place-B row limit
    and KC / 2, on every path, every transpose, 1 and 2 threads."""
    rng = np.random.default_rng(13)
    es = 4 if op == "sgemm" else 8
    wide = (32 << 10) // es
    for arch in gemmkit.available_archs():
        with kernel_path(arch, threads):
            kc = gemmkit.show_config(print_out=False)[op]["KC"]
            M = min(61, kc // 2)
            for n, t in enumerate(("NN", "TN", "NT", "TT")):
                run_case(rng, op, t[0], t[1], M, wide + wide // 4 + 37, 4 * 1024 * 1024 // (wide * es) * 2 + 13,
                         1.0 if n % 2 else -0.5, 0.0 if n < 2 else 0.75, pads=(n % 2, 1, 0), c_nan=n == 0)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_few_rows_b_packed_in_groups(op, threads):
    """Few rows of C, each thread's one block of rows: the macro-kernel packs B a group of small.b_group_panels
    panels at a time into the front of its buffer, in k blocks of at most 256 (csrc/gemm_real.c few_rows_blocks).
    Groups of 1, 3, 8 and 16 panels (the model's 1 KiB of a row: 8 on AVX-512, 16 on AVX2) and none, on every path,
    every transpose, 1 and 2 threads: N past a whole number of groups with an edge panel, K past two k blocks
    (near-equal ones), M of full tiles and an edge, alpha / beta, beta 0 over NaN; against a float64 reference."""
    from gemmkit import _core, _tuning_file
    rng = np.random.default_rng(17)
    try:
        for arch in gemmkit.available_archs():
            with kernel_path(arch, threads):
                k = gemmkit.show_config(print_out=False)[op]
                M = min(3 * k["MR"] + 5, k["KC"] // 2)
                for n, group in enumerate((1, 3, 8, 16, 0)):
                    _core.tuning_clear()  # the packed driver for every shape (no small path), this group
                    _small_paths_off(arch)
                    assert _core.tuning_set(arch, "small.b_group_panels", group) is None
                    t = ("NN", "TN", "NT", "TT", "TN")[n]
                    N = (group or 2) * k["NR"] * 2 + k["NR"] + 5
                    run_case(rng, op, t[0], t[1], M, N, 2 * 256 + 37, 1.0 if n % 2 else -0.5,
                             0.0 if n < 2 else 0.75, pads=(n % 2, 1, 0), c_nan=n == 0)
    finally:
        _core.tuning_clear()
        _tuning_file.load(warn=False)


@pytest.mark.parametrize("threads", [1, 2])
@pytest.mark.parametrize("op", ["sgemm", "dgemm", "zgemm", "int8"])
def test_column_blocks_around_nc(op, threads):
    """N just past NC (the driver takes a last column block up to a quarter longer than NC whole, its
    buffers sized for it) and past 1.25 NC (a full NC block, then the rest), on the two most capable
    paths, 1 and 2 threads: against a float64 (complex128, int64) reference."""
    rng = np.random.default_rng(11)
    M, K = 40, 70
    for arch in gemmkit.available_archs()[-2:]:
        with kernel_path(arch, threads):
            info = gemmkit.show_config(print_out=False)[op]
            per = 2 if op in ("cgemm", "zgemm") else 1
            nc = info["NC"] // per
            for N in (nc + 5, nc + nc // 4 + 9):
                if op == "int8":
                    A = rng.integers(0, 256, (M, K), dtype=np.uint8)
                    B = rng.integers(-128, 128, (K, N), dtype=np.int8)
                    C = np.full((M, N), -5, np.int32)
                    gemmkit.gemm_u8s8s32("N", "N", "F", M, N, K, 1.0, A, K, 0, B, N, 0, 1.0, C, N,
                                         np.zeros(1, np.int32))
                    want = A.astype(np.int64) @ B.astype(np.int64) - 5
                    assert np.array_equal(C, want), f"{arch}: int8 N={N} wrong"
                    continue
                dtype, fn = TYPES[op]
                A, B = normal_values(rng, (M, K), dtype), normal_values(rng, (K, N), dtype)
                C = normal_values(rng, (M, N), dtype)
                want = 0.5 * (A.astype(np.complex128) @ B.astype(np.complex128)) - 2.0 * C
                fn("N", "N", M, N, K, 0.5, A, K, B, N, -2.0, C, N)
                eps = np.finfo(dtype).eps
                err = np.max(np.abs(C - want) / (np.abs(A) @ np.abs(B) + np.abs(want) + 1))
                assert err < 8 * (K + 2) * eps, f"{arch}: {op} N={N} relative error {err}"


@pytest.mark.smoke
@pytest.mark.parametrize("op", ["dgemm", "cgemm", "zgemm"])
def test_degenerate_cases(op):
    """K = 0 gives beta * C; alpha = 0 never reads A or B (NaN there); beta = 0 never reads C (NaN there);
    M = 0 or N = 0 touches nothing."""
    dtype, fn = TYPES[op]
    rng = np.random.default_rng(3)
    for arch in gemmkit.available_archs():
        with kernel_path(arch, 1):
            run_case(rng, op, "N", "N", 5, 6, 0, 1.0, 0.5)
            run_case(rng, op, "N", "N", 5, 6, 0, 1.0, 0.0, c_nan=True)
            A = np.full((5, 4), np.nan, dtype)
            B = np.full((4, 6), np.nan, dtype)
            C0 = normal_values(rng, (5, 6), dtype)
            C = C0.copy()
            fn("N", "N", 5, 6, 4, 0.0, A, 4, B, 6, 2.0, C, 6)
            np.testing.assert_array_equal(C, C0 * dtype(2))
            C = np.full((5, 6), np.nan, dtype)
            fn("N", "N", 5, 6, 4, 0.0, A, 4, B, 6, 0.0, C, 6)
            np.testing.assert_array_equal(C, np.zeros((5, 6), dtype))
            run_case(rng, op, "T", "N", 7, 9, 11, 1.5, 0.0, c_nan=True)
            C = np.full((0, 3), 1, dtype)
            fn("N", "N", 0, 3, 4, 1.0, np.zeros(0, dtype), 4, np.zeros(12, dtype), 3, 0.0, C, 3)


@pytest.mark.smoke
def test_complex_against_scipy_blas():
    """The same products as SciPy's (column-major) BLAS cgemm / zgemm, conjugate transposes included:
    a row-major C = op(A) op(B) is the column-major C^T = op(B)^T op(A)^T."""
    scipy_blas = pytest.importorskip("scipy.linalg.blas")
    rng = np.random.default_rng(4)
    for op, dtype in (("cgemm", np.complex64), ("zgemm", np.complex128)):
        ref_fn = getattr(scipy_blas, op)
        for ta in "NTC":
            for tb in "NTC":
                M, N, K = 9, 11, 13
                A = normal_values(rng, (M, K) if ta == "N" else (K, M), dtype)
                B = normal_values(rng, (K, N) if tb == "N" else (N, K), dtype)
                C = normal_values(rng, (M, N), dtype)
                alpha, beta = 0.5 - 1j, 0.25 + 0.5j
                want = ref_fn(alpha, _op(A, ta), _op(B, tb), beta=beta, c=np.asfortranarray(C.copy()))
                got = TYPES[op][1](ta, tb, M, N, K, alpha, A, A.shape[1], B, B.shape[1], beta, C.copy(), N)
                tol = 1e-4 if dtype == np.complex64 else 1e-12
                np.testing.assert_allclose(got, want, rtol=tol, atol=tol * K, err_msg=f"{op} {ta}{tb}")


def test_dgemm_against_scipy_blas():
    scipy_blas = pytest.importorskip("scipy.linalg.blas")
    rng = np.random.default_rng(5)
    A, B, C = rng.standard_normal((70, 90)), rng.standard_normal((90, 50)), rng.standard_normal((70, 50))
    want = scipy_blas.dgemm(1.5, A, B, beta=-0.5, c=C.copy())
    got = gemmkit.dgemm("N", "N", 70, 50, 90, 1.5, A, 90, B, 50, -0.5, C.copy(), 50)
    np.testing.assert_allclose(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("op", ["dgemm", "cgemm", "zgemm"])
def test_bad_arguments_leave_c_untouched(op):
    dtype, fn = TYPES[op]
    A, B = np.ones((3, 4), dtype), np.ones((4, 5), dtype)
    C = np.full((3, 5), 7, dtype)
    before = C.copy()
    bad_calls = [
        (ValueError, "transa", ("X", "N", 3, 5, 4, 1.0, A, 4, B, 5, 0.0, C, 5)),
        (ValueError, "lda", ("N", "N", 3, 5, 4, 1.0, A, 3, B, 5, 0.0, C, 5)),
        (ValueError, "ldc", ("N", "N", 3, 5, 4, 1.0, A, 4, B, 5, 0.0, C, 4)),
        (ValueError, "M", ("N", "N", -1, 5, 4, 1.0, A, 4, B, 5, 0.0, C, 5)),
        (TypeError, "A", ("N", "N", 3, 5, 4, 1.0, np.ones((3, 4), np.float16), 4, B, 5, 0.0, C, 5)),
        (TypeError, "C", ("N", "N", 3, 5, 4, 1.0, A, 4, B, 5, 0.0, np.zeros((3, 5), np.int32), 5)),
        (ValueError, "B", ("N", "N", 3, 5, 4, 1.0, A, 4, B[:3], 5, 0.0, C, 5)),
        (TypeError, "alpha", ("N", "N", 3, 5, 4, "x", A, 4, B, 5, 0.0, C, 5)),
    ]
    if op == "dgemm":
        bad_calls += [(ValueError, "transb", ("N", "C", 3, 5, 4, 1.0, A, 4, B, 5, 0.0, C, 5)),
                      (TypeError, "alpha", ("N", "N", 3, 5, 4, 1j, A, 4, B, 5, 0.0, C, 5))]
    for exc, name, args in bad_calls:
        with pytest.raises(exc, match=name):
            fn(*args)
        np.testing.assert_array_equal(C, before)


def test_c_is_written_in_place_and_read_only_c_is_refused():
    A, B = np.ones((2, 2)), np.ones((2, 2))
    C = np.zeros((2, 2))
    C.setflags(write=False)
    with pytest.raises(ValueError, match="C"):
        gemmkit.dgemm("N", "N", 2, 2, 2, 1.0, A, 2, B, 2, 0.0, C, 2)
