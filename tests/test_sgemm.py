"""sgemm correctness on every kernel path and thread count, against a float64 NumPy reference.

C := alpha * op(A) @ op(B) + beta * C, row-major, C updated in place and returned.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gemmkit
from _support import draw_gemm_case, kernel_path, run_while_pool_busy, TRANS_PAIRS, TRANS_PAIRS_UPPER, Operand, _edge_sizes, _is_t, _kernel

EPS32 = float(np.finfo(np.float32).eps)
C_SENTINEL = np.float32(-7777.25)   # fills C's padding; must survive every call
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
    """Few rows of C against a large B: plain B is streamed in place in short k blocks, with the
    row-count kernels for the panels shorter than MR."""
    ta, tb = trans
    for M in (1, 5, 13, 47, 49):
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
