"""gemm_u8s8s32 / gemm_s8s8s32: bit-exact against an exact integer reference on every kernel path.

C := alpha * (op(A) - ao) @ (op(B) - bo) + beta * C + co.
Reference rule: acc = sum_k (a - ao)(b - bo) exactly. alpha == 1 and beta in {0, 1}: the exact integer
acc + beta*C + co, saturated to int32. Otherwise ((alpha*acc) + (beta*C)) + co in float64 with alpha,
beta the float32 values, rounded half to even and saturated; beta == 0 omits the C term.
"""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gemmkit
from _support import draw_gemm_case, kernel_path, run_while_pool_busy, TRANS_PAIRS, TRANS_PAIRS_UPPER, Operand, _edge_sizes, _is_t, _kernel

I32_MIN, I32_MAX = -2**31, 2**31 - 1
C_SENTINEL = np.int32(-123456789)
FUNCS = ["u8", "s8"]
A_RANGE = {"u8": (0, 255), "s8": (-128, 127)}
A_DTYPE = {"u8": np.uint8, "s8": np.int8}


def _fn(kind):
    return gemmkit.gemm_u8s8s32 if kind == "u8" else gemmkit.gemm_s8s8s32


def exact_acc(ta, tb, A, ao, B, bo):
    """sum_k (a - ao)(b - bo), exact, in int64 (NumPy's integer matmul: no BLAS, no rounding)."""
    opA = (A.T if _is_t(ta) else A).astype(np.int64) - int(ao)
    opB = (B.T if _is_t(tb) else B).astype(np.int64) - int(bo)
    if opA.shape[1] == 0:
        return np.zeros((opA.shape[0], opB.shape[1]), np.int64)
    return opA @ opB


def co_matrix(offsetc, co, M, N):
    co = np.asarray(co, dtype=np.int64).reshape(-1)
    oc = offsetc.upper()
    if oc == "F":
        return np.full((M, N), co[0], np.int64)
    if oc == "C":
        return np.broadcast_to(co[:M, None], (M, N)).astype(np.int64)
    return np.broadcast_to(co[None, :N], (M, N)).astype(np.int64)


def ref_int8(acc, alpha, beta, C0, com):
    """Final int32 values from the exact sums acc (int64), the old C and the offsets (M x N)."""
    a32, b32 = np.float32(alpha), np.float32(beta)
    if a32 == 1.0 and b32 in (0.0, 1.0):
        v = acc + com + (C0.astype(np.int64) if b32 == 1.0 else 0)
        return np.clip(v, I32_MIN, I32_MAX).astype(np.int32)
    v = np.float64(a32) * acc.astype(np.float64)
    if b32 != 0.0:
        v = v + np.float64(b32) * C0.astype(np.float64)
    v = v + com.astype(np.float64)
    return np.clip(np.rint(v), I32_MIN, I32_MAX).astype(np.int32)


def run_int8(kind, rng, ta, tb, offsetc, M, N, K, alpha, ao, bo, beta, *, pads=(0, 0, 0),
             layouts=("1d", "1d", "1d"), A0=None, B0=None, C0=None, co=None, co_form="array",
             c_range=(-2**20, 2**20)):
    """One call on fresh operands (full-range random unless given); checks bit-exactness, padding
    and inputs, returns the result matrix."""
    fn = _fn(kind)
    lo, hi = A_RANGE[kind]
    ar, ac = (K, M) if _is_t(ta) else (M, K)
    br, bc = (N, K) if _is_t(tb) else (K, N)
    lda, ldb, ldc = max(1, ac) + pads[0], max(1, bc) + pads[1], max(1, N) + pads[2]
    if A0 is None:
        A0 = rng.integers(lo, hi + 1, size=(ar, ac)).astype(A_DTYPE[kind])
    if B0 is None:
        B0 = rng.integers(-128, 128, size=(br, bc)).astype(np.int8)
    if C0 is None:
        C0 = rng.integers(c_range[0], c_range[1] + 1, size=(M, N), dtype=np.int64).astype(np.int32)
    if co is None:
        n_co = {"F": 1, "C": M, "R": N}[offsetc.upper()]
        co = rng.integers(-1000, 1001, size=n_co).astype(np.int32)
    co_arg = {"array": lambda c: np.asarray(c, np.int32), "list": lambda c: [int(x) for x in c],
              "tuple": lambda c: tuple(int(x) for x in c), "int": lambda c: int(np.asarray(c).reshape(-1)[0]),
              "int64": lambda c: np.asarray(c, np.int64)}[co_form](co)
    # padding in A/B is random garbage of the right type: reading it gives wrong (detected) sums
    a = Operand(A0, lda, layouts[0], hi)
    b = Operand(B0, ldb, layouts[1], -128)
    c = Operand(C0, ldc, layouts[2], C_SENTINEL)
    co_before = np.array(co_arg, copy=True) if isinstance(co_arg, np.ndarray) else None
    out = fn(ta, tb, offsetc, M, N, K, alpha, a.arg, lda, ao, b.arg, ldb, bo, beta, c.arg, ldc, co_arg)
    ctx = (f"gemm_{kind}s8s32({ta!r},{tb!r},{offsetc!r},M={M},N={N},K={K},alpha={alpha},ao={ao},"
           f"bo={bo},beta={beta},lds={lda},{ldb},{ldc},{layouts},co={co_form})")
    assert out is c.arg, "must return C itself"
    a.assert_untouched("A")
    b.assert_untouched("B")
    c.assert_outside_untouched("C")
    if co_before is not None:
        assert np.array_equal(co_arg, co_before), "co was modified"
    res = c.matrix.copy()
    if M and N:
        acc = exact_acc(ta, tb, A0, ao, B0, bo) if (K and np.float32(alpha) != 0) \
            else np.zeros((M, N), np.int64)
        expected = ref_int8(acc, alpha, beta, C0, co_matrix(offsetc, co, M, N))
        if not np.array_equal(res, expected):
            bad = np.argwhere(res != expected)
            i, j = bad[0]
            raise AssertionError(f"{ctx}: {len(bad)} of {res.size} elements differ; first at ({i},{j}): "
                                 f"got {res[i, j]}, expected {expected[i, j]}")
    return res


# ---- basic / smoke ------------------------------------------------------------------------------

@pytest.mark.smoke
@pytest.mark.parametrize("kind", FUNCS)
def test_tiny_known_values(arch, kind):
    A = np.array([[1, 2], [3, 4]], A_DTYPE[kind])
    B = np.array([[5, -6], [7, 8]], np.int8)
    C = np.full((2, 2), 99, np.int32)
    out = _fn(kind)('N', 'N', 'F', 2, 2, 2, 1.0, A, 2, 1, B, 2, -1, 0.0, C, 2, 10)
    assert out is C
    # (A - 1) @ (B + 1) + 10 = [[0,1],[2,3]] @ [[6,-5],[8,9]] + 10
    assert C.tolist() == [[18, 19], [46, 27]]


@pytest.mark.smoke
@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("trans", TRANS_PAIRS_UPPER)
def test_small_smoke(arch, kind, trans, rng):
    ta, tb = trans
    lo, hi = A_RANGE[kind]
    for i, (M, N, K) in enumerate([(1, 1, 1), (5, 7, 3), (13, 33, 17)]):
        run_int8(kind, rng, ta, tb, "FCR"[i], M, N, K, 1.0, lo + 3, -5, 1.0)
        run_int8(kind, rng, ta, tb, "fcr"[i], M, N, K, 2.33, hi - 1, 7, 1.01)


# ---- tile edges, all transposes ------------------------------------------------------------------

AB_CYCLE = [(1.0, 0.0), (1.0, 1.0), (2.0, 1.0), (1.0, 2.0), (2.33, 1.01), (-1.5, 0.5)]


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("trans", TRANS_PAIRS)
def test_kernel_edges(arch, nthreads, kind, trans, rng):
    ta, tb = trans
    k = _kernel("int8")
    sizes = _edge_sizes(k["MR"], k["NR"])
    ks = [1, 2, 3, 4, 5, 9, 31, 64, 67]
    lo, hi = A_RANGE[kind]
    i = 0
    for M in sizes:
        for N in sizes:
            alpha, beta = AB_CYCLE[i % len(AB_CYCLE)]
            ao = int(rng.integers(lo, hi + 1))
            bo = int(rng.integers(-128, 128))
            run_int8(kind, rng, ta, tb, "FfCcRr"[i % 6], M, N, ks[i % len(ks)], alpha, ao, bo, beta)
            i += 1
    assert i == len(sizes) ** 2


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("trans", TRANS_PAIRS_UPPER)
def test_prime_sizes(arch, nthreads, kind, trans, rng):
    ta, tb = trans
    for i, (M, N, K) in enumerate([(2, 3, 5), (17, 19, 23), (97, 101, 103), (131, 127, 257), (211, 199, 13)]):
        run_int8(kind, rng, ta, tb, "FCR"[i % 3], M, N, K, *[(1.0, 0, 0, 1.0), (-1.5, 7, -3, 0.5)][i % 2])


# ---- offsets -------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("offsetc", list("FfCcRr"))
@pytest.mark.parametrize("co_form", ["array", "list", "tuple", "int", "int64"])
def test_offsetc_and_co_forms(arch, kind, offsetc, co_form, rng):
    k = _kernel("int8")
    M, N, K = k["MR"] + 1, k["NR"] + 1, 19
    if co_form == "int" and offsetc in "Cc":
        M = 1      # a bare int is a 1-element co: valid per row only when M == 1
    if co_form == "int" and offsetc in "Rr":
        N = 1
    for ta, tb in ["NN", "TT"]:
        run_int8(kind, rng, ta, tb, offsetc, M, N, K, 1.0, 3, -2, 1.0, co_form=co_form)
        run_int8(kind, rng, ta, tb, offsetc, M, N, K, 0.7, 0, 0, -0.3, co_form=co_form)


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("offsetc", list("FCR"))
def test_co_longer_than_needed_and_exact_offsets(arch, kind, offsetc, rng):
    M, N, K = 5, 6, 7
    co = np.arange(100, 100 + 3 * max(M, N), dtype=np.int32) * 1000   # longer than needed
    res = run_int8(kind, rng, "N", "N", offsetc, M, N, K, 1.0, 0, 0, 0.0, co=co,
                   A0=np.zeros((M, K), A_DTYPE[kind]), B0=np.zeros((K, N), np.int8))
    expected = co_matrix(offsetc, co, M, N)
    assert np.array_equal(res, expected)


U8_AO = [0, 1, 128, 254, 255]
S8_AO = [-128, -127, 0, 1, 127]
BO = [-128, -127, 0, 1, 127]
ZERO_POINT_CASES = [("u8", ao, bo) for ao in U8_AO for bo in BO] + [("s8", ao, bo) for ao in S8_AO for bo in BO]


@pytest.mark.parametrize("kind,ao,bo", ZERO_POINT_CASES)
def test_zero_points(arch, kind, ao, bo, rng):
    k = _kernel("int8")
    M, N, K = k["MR"] + 1, k["NR"] + 3, 67
    for i, (ta, tb) in enumerate(TRANS_PAIRS_UPPER):
        alpha, beta = [(1.0, 0.0), (1.0, 1.0), (2.33, 1.01), (-1.5, 0.5)][i]
        run_int8(kind, rng, ta, tb, "FCR"[i % 3], M, N, K, alpha, ao, bo, beta)
    # numpy integer scalars are accepted as offsets
    run_int8(kind, rng, "N", "N", "F", 3, 5, 7, 1.0, np.int64(ao), np.int16(bo), 0.0)


@pytest.mark.parametrize("kind", FUNCS)
def test_extreme_data_all_offset_extremes(arch, kind):
    """Constant extreme data (every product at the edge of int16) with every extreme zero point."""
    lo, hi = A_RANGE[kind]
    k = _kernel("int8")
    M, N, K = k["MR"] + 2, k["NR"] + 2, 301
    rng = np.random.default_rng(1)
    for aval in (lo, hi):
        for bval in (-128, 127):
            for ao in (lo, hi, 0 if kind == "s8" else 128):
                for bo in (-128, 127, 0):
                    A0 = np.full((M, K), aval, A_DTYPE[kind])
                    B0 = np.full((K, N), bval, np.int8)
                    res = run_int8(kind, rng, "N", "N", "F", M, N, K, 1.0, ao, bo, 0.0, A0=A0, B0=B0,
                                   co=[0])
                    assert (res == K * (aval - ao) * (bval - bo)).all()


# ---- alpha / beta --------------------------------------------------------------------------

ALPHA_BETA = [(1.0, 0.0), (1.0, 1.0), (2.0, 1.0), (1.0, 2.0), (2.33, 1.01), (-1.5, 0.5), (-1.0, 0.0),
              (-1.0, -1.0), (1.0, -1.0), (0.5, 0.0), (0.1, 0.3), (1e-3, 2.5), (0.0, 1.0), (0.0, 0.0),
              (0.0, 2.5), (-2.75, -0.25)]


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("alpha,beta", ALPHA_BETA)
def test_alpha_beta(arch, nthreads, kind, alpha, beta, rng):
    k = _kernel("int8")
    M, N, K = 2 * k["MR"] + 1, k["NR"] + 5, 45
    lo, hi = A_RANGE[kind]
    for i, (ta, tb) in enumerate(TRANS_PAIRS_UPPER):
        run_int8(kind, rng, ta, tb, "FCR"[i % 3], M, N, K, alpha, [0, hi, lo + 17, 5][i], [0, -128, 127, -9][i],
                 beta)


@pytest.mark.parametrize("kind", FUNCS)
def test_round_half_to_even(arch, kind):
    """alpha = 0.5 on odd sums and beta = 2.5 on odd C give exact .5 ties: rounded to even."""
    M, N, K = 1, 8, 1
    A = np.array([[1]], A_DTYPE[kind])
    B = np.array([[-7, -5, -3, -1, 1, 3, 5, 7]], np.int8)
    C = np.zeros((M, N), np.int32)
    _fn(kind)('N', 'N', 'F', M, N, K, 0.5, A, 1, 0, B, N, 0, 0.0, C, N, 0)
    assert C.tolist() == [[-4, -2, -2, 0, 0, 2, 2, 4]]
    # K == 0 / alpha == 0 path: C := beta*C + co, same rounding
    for K0, alpha in ((0, 1.0), (1, 0.0)):
        C = np.array([[1, 3, 5, -1, -3, -5, 7, 9]], np.int32)
        _fn(kind)('N', 'N', 'F', M, N, K0, alpha, A, 1, 0, B, N, 0, 2.5, C, N, 0)
        assert C.tolist() == [[2, 8, 12, -2, -8, -12, 18, 22]]
    # a tie created by adding co: 0.5*3 = 1.5, + co=1 -> 2.5 -> 2
    C = np.zeros((1, 1), np.int32)
    _fn(kind)('N', 'N', 'F', 1, 1, 1, 0.5, A, 1, 0, np.array([[3]], np.int8), 1, 0, 0.0, C, 1, 1)
    assert C.tolist() == [[2]]


@pytest.mark.parametrize("kind", FUNCS)
def test_float_order_of_operations(arch, kind):
    """((alpha*acc) + (beta*C)) + co in double: a co that vanishes against a huge beta*C term."""
    alpha, beta = np.float32(0.1), np.float32(3.0)
    A = np.array([[1]], A_DTYPE[kind])
    B = np.array([[3]], np.int8)
    for c0, co in [(2**31 - 1, -5), (12345, -1), (-(2**31), 7)]:
        C = np.array([[c0]], np.int32)
        _fn(kind)('N', 'N', 'F', 1, 1, 1, float(alpha), A, 1, 0, B, 1, 0, float(beta), C, 1, co)
        v = ((np.float64(alpha) * 3.0) + np.float64(beta) * c0) + co
        assert C[0, 0] == np.clip(np.rint(v), I32_MIN, I32_MAX)


# ---- beta == 0 never reads C; M/N == 0; K == 0 ------------------------------------------------

@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("alpha", [1.0, 2.33])
def test_beta_zero_ignores_c(arch, kind, alpha, rng):
    k = _kernel("int8")
    M, N, K = k["MR"] + 3, 2 * k["NR"] + 1, 33
    lo, hi = A_RANGE[kind]
    A0 = rng.integers(lo, hi + 1, size=(M, K)).astype(A_DTYPE[kind])
    B0 = rng.integers(-128, 128, size=(K, N)).astype(np.int8)
    results = []
    for fill in (I32_MIN, I32_MAX, -1, None):
        C0 = (rng.integers(I32_MIN, I32_MAX, size=(M, N), dtype=np.int64).astype(np.int32)
              if fill is None else np.full((M, N), fill, np.int32))
        results.append(run_int8(kind, rng, "N", "N", "R", M, N, K, alpha, 5, -7, 0.0, A0=A0, B0=B0, C0=C0,
                                co=np.arange(N, dtype=np.int32)))
    for r in results[1:]:
        assert np.array_equal(r, results[0]), "result with beta=0 depends on the initial C"


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("M,N", [(0, 0), (0, 5), (5, 0)])
def test_m_or_n_zero_touch_nothing(arch, kind, M, N):
    C = np.full(40, C_SENTINEL, np.int32)
    before = C.copy()
    A = np.ones(64, A_DTYPE[kind])
    B = np.ones(64, np.int8)
    for oc in "FCR":
        out = _fn(kind)('N', 'N', oc, M, N, 3, 2.0, A, 3, 1, B, max(1, N), 1, 1.0, C, max(1, N),
                        np.full(8, 77, np.int32))
        assert out is C
        assert np.array_equal(C, before), f"M={M}, N={N}, offsetc={oc}: C was written"


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("alpha,beta", [(1.0, 0.0), (1.0, 1.0), (2.0, 2.5), (0.0, -1.5)])
def test_k_zero(arch, kind, alpha, beta, rng):
    """K == 0: C := beta*C + co; A and B may be empty."""
    M, N = 6, 9
    C0 = rng.integers(-10**6, 10**6, size=(M, N)).astype(np.int32)
    for oc in "FCR":
        co = rng.integers(-100, 100, size=max(M, N)).astype(np.int32)
        res = run_int8(kind, rng, "N", "T", oc, M, N, 0, alpha, 1, 1, beta, C0=C0, co=co)
        b32 = np.float64(np.float32(beta))
        expected = np.rint((b32 * C0 if beta else 0.0) + co_matrix(oc, co, M, N)).astype(np.int32)
        assert np.array_equal(res, expected)


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("offsetc,M,N", [("C", 0, 4), ("R", 4, 0), ("c", 0, 0)])
def test_empty_co_sequence_when_none_needed(kind, offsetc, M, N):
    """offsetc='C' needs len(co) >= M, 'R' len(co) >= N: with M (N) == 0 an empty list is enough,
    just as an empty int32 array is."""
    C = np.full(8, 5, np.int32)
    A = np.zeros(16, A_DTYPE[kind])
    B = np.zeros(16, np.int8)
    out = _fn(kind)('N', 'N', offsetc, M, N, 3, 1.0, A, 3, 0, B, max(1, N), 0, 0.0, C, max(1, N),
                    np.array([], np.int32))
    assert out is C and (C == 5).all()
    try:
        _fn(kind)('N', 'N', offsetc, M, N, 3, 1.0, A, 3, 0, B, max(1, N), 0, 0.0, C, max(1, N), [])
    except TypeError as e:
        raise AssertionError(f"empty list co rejected although no offsets are needed: {e}") from None
    assert (C == 5).all()


# ---- large K and overflow ------------------------------------------------------------------

@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("trans", ["NN", "TT", "NT"])
def test_large_k_random(arch, nthreads, kind, trans, rng):
    """K across the exact int32 chunk (K_chunk) boundaries, up to 70000, full-range data."""
    ta, tb = trans
    kc = _kernel("int8")["K_chunk"]
    lo, hi = A_RANGE[kind]
    for i, K in enumerate(sorted({kc - 1, kc, kc + 1, 2 * kc + 3, 70000})):
        run_int8(kind, rng, ta, tb, "FCR"[i % 3], 3, 17, K, *[(1.0, 0, 0, 1.0), (2.33, hi, -128, 1.01),
                                                             (1.0, lo, 127, 0.0)][i % 3])


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("trans", ["NN", "TN", "NT"])
def test_large_k_many_blocks(arch, nthreads, kind, trans, rng):
    """K over two exact chunks with C in several row blocks and column panels per thread (row-sliced
    threads sharing each chunk's packed B): every block's sums and row/column sums stay its own."""
    ta, tb = trans
    kc = _kernel("int8")["K_chunk"]
    lo, hi = A_RANGE[kind]
    run_int8(kind, rng, ta, tb, "R", 37, 45, 2 * kc + 3, 1.5, hi, -3, 0.5)


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("trans", ["NN", "TT"])
def test_large_k_partial_sums_beyond_int32(arch, kind, trans):
    """K = 70000 with (a-ao) = +-255 and (b-bo) = -255 everywhere: |acc| = 70000*65025 ~ 4.55e9.
    Any int32 accumulation (or int32 compensation terms) wraps; the exact answer with alpha=0.25 fits."""
    ta, tb = trans
    M, N, K = 3, 17, 70000
    aval, ao = (255, 0) if kind == "u8" else (-128, 127)
    A0 = np.full((K, M) if _is_t(ta) else (M, K), aval, A_DTYPE[kind])
    B0 = np.full((N, K) if _is_t(tb) else (K, N), -128, np.int8)
    bo = 127
    acc = K * (aval - ao) * (-128 - bo)
    assert abs(acc) > 2**32
    rng = np.random.default_rng(0)
    res = run_int8(kind, rng, ta, tb, "F", M, N, K, 0.25, ao, bo, 0.0, A0=A0, B0=B0, co=[3])
    assert (res == np.rint(acc * 0.25 + 3)).all()
    # exact path: saturates (alpha=1, beta=0)
    res = run_int8(kind, rng, ta, tb, "F", M, N, K, 1.0, ao, bo, 0.0, A0=A0, B0=B0, co=[0])
    assert (res == (I32_MAX if acc > 0 else I32_MIN)).all()
    # exact path with beta=1: C pulls the total back into range
    # float path, beta = 1: alpha * acc + C brought back into range by C
    C0 = np.full((M, N), -np.sign(acc) * 2**30, np.int32)
    res = run_int8(kind, rng, ta, tb, "F", M, N, K, 0.5, ao, bo, 1.0, A0=A0, B0=B0, C0=C0, co=[-1])
    assert (res == np.rint(acc * 0.5 - np.sign(acc) * 2**30 - 1)).all()


@pytest.mark.parametrize("kind", FUNCS)
def test_large_k_sum_just_beyond_int32_then_back(arch, kind):
    """u8: A=255, B=-128 (bo=0): acc = -32640*K. K=66000 crosses INT32_MIN (exact acc -2.154e9);
    with beta=1 and C=+1e9 the exact integer result is -1.154e9 and must not have wrapped."""
    M, N, K = 2, 5, 66000
    if kind == "u8":
        A0 = np.full((M, K), 255, np.uint8)
        ao = 0
    else:
        A0 = np.full((M, K), 127, np.int8)
        ao = -128
    B0 = np.full((K, N), -128, np.int8)
    acc = K * (int(A0[0, 0]) - ao) * -128
    assert acc < I32_MIN
    C0 = np.full((M, N), 10**9, np.int32)
    rng = np.random.default_rng(0)
    res = run_int8(kind, rng, "N", "N", "C", M, N, K, 1.0, ao, 0, 1.0, A0=A0, B0=B0, C0=C0, co=[1, -1])
    assert res[:, 0].tolist() == [acc + 10**9 + 1, acc + 10**9 - 1]


@pytest.mark.parametrize("kind", FUNCS)
def test_saturation(arch, kind, rng):
    k = _kernel("int8")
    M, N, K = k["MR"] + 1, k["NR"] + 1, 100
    lo, hi = A_RANGE[kind]
    A_pos = np.full((M, K), hi, A_DTYPE[kind])
    B_pos = np.full((K, N), 127, np.int8)
    # exact path, beta = 1: big C plus big acc
    C0 = np.full((M, N), I32_MAX - 10, np.int32)
    res = run_int8(kind, rng, "N", "N", "F", M, N, K, 1.0, 0, 0, 1.0, A0=A_pos, B0=B_pos, C0=C0, co=[0])
    assert (res == I32_MAX).all()
    C0 = np.full((M, N), I32_MIN + 10, np.int32)
    res = run_int8(kind, rng, "N", "N", "F", M, N, K, 1.0, 0, 0, 1.0, A0=A_pos, B0=-B_pos, C0=C0, co=[0])
    assert (res == I32_MIN).all()
    # co pushes over the edge (exact path, beta = 1, and beta = 0 with K = 0)
    C0 = np.full((M, N), I32_MAX, np.int32)
    res = run_int8(kind, rng, "N", "N", "F", M, N, 0, 1.0, 0, 0, 1.0, C0=C0, co=[I32_MAX])
    assert (res == I32_MAX).all()
    C0 = np.full((M, N), I32_MIN, np.int32)
    res = run_int8(kind, rng, "N", "N", "R", M, N, 0, 1.0, 0, 0, 1.0, C0=C0,
                   co=np.full(N, I32_MIN, np.int32))
    assert (res == I32_MIN).all()
    # big alpha (float path): both signs, plus entries with acc == 0 that must stay 0 + co
    A0 = rng.integers(lo, hi + 1, size=(M, K)).astype(A_DTYPE[kind])
    B0 = rng.integers(-128, 128, size=(K, N)).astype(np.int8)
    B0[:, 0] = 0
    for alpha in (1e10, -1e10, 3.0e38):
        res = run_int8(kind, rng, "N", "N", "F", M, N, K, alpha, 0, 0, 0.0, A0=A0, B0=B0, co=[5])
        assert (res[:, 0] == 5).all()
        assert set(np.unique(res[:, 1:])) <= {I32_MIN, I32_MAX}
    # big beta on big C (float path)
    C0 = rng.integers(-2**30, 2**30, size=(M, N)).astype(np.int32)
    C0[0, :] = 2**30
    C0[1, :] = -2**30
    res = run_int8(kind, rng, "N", "N", "C", M, N, K, 1.0, 0, 0, 4.0, A0=A0, B0=B0, C0=C0)
    assert (res[0] == I32_MAX).all() and (res[1] == I32_MIN).all()
    # random full-range C with beta = 1 and 2: the reference decides, but saturation must occur
    C0 = rng.integers(I32_MIN, I32_MAX, size=(M, N), dtype=np.int64).astype(np.int32)
    saturated = 0
    for alpha, beta in [(1.0, 1.0), (2.0, 2.0), (-1.0, -1.0)]:
        res = run_int8(kind, rng, "N", "T", "F", M, N, K, alpha, 0, 0, beta, C0=C0,
                       B0=rng.integers(-128, 128, size=(N, K)).astype(np.int8))
        saturated += int(((res == I32_MAX) | (res == I32_MIN)).sum())
    assert saturated > 0


# ---- padding / layouts -----------------------------------------------------------------------

@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("layouts", [("1d", "1d", "1d"), ("2d", "2d", "2d"), ("2d", "1d", "2d"),
                                     ("1d", "2d", "1d")], ids="-".join)
@pytest.mark.parametrize("trans", TRANS_PAIRS_UPPER)
def test_padded_lds(arch, nthreads, kind, layouts, trans, rng):
    ta, tb = trans
    k = _kernel("int8")
    mr, nr = k["MR"], k["NR"]
    cases = [((1, 1, 1), (1, 2, 3)), ((mr + 1, nr + 1, 9), (3, 5, 1)), ((mr, 2 * nr + 1, 40), (7, 0, 16)),
             ((37, 45, 29), (0, 13, 0)), ((3, 1, 70), (64, 64, 64))]
    for i, ((M, N, K), pads) in enumerate(cases):
        alpha, beta = AB_CYCLE[i % len(AB_CYCLE)]
        run_int8(kind, rng, ta, tb, "FCR"[i % 3], M, N, K, alpha, 2, -3, beta, pads=pads, layouts=layouts)


# ---- threads ---------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("trans", ["NN", "TT"])
def test_multithreaded_deterministic(arch, nthreads, kind, trans, rng):
    """300x300x300 uses 2 threads when allowed; repeated calls give identical, exact results."""
    ta, tb = trans
    M = N = K = 300
    lo, hi = A_RANGE[kind]
    A0 = rng.integers(lo, hi + 1, size=(M, K)).astype(A_DTYPE[kind])
    B0 = rng.integers(-128, 128, size=(K, N)).astype(np.int8)
    C0 = rng.integers(-10**6, 10**6, size=(M, N)).astype(np.int32)
    first = run_int8(kind, rng, ta, tb, "R", M, N, K, 1.0, 3, -4, 1.0, A0=A0, B0=B0, C0=C0,
                     co=np.arange(N, dtype=np.int32))
    for _ in range(2):
        again = run_int8(kind, rng, ta, tb, "R", M, N, K, 1.0, 3, -4, 1.0, A0=A0, B0=B0, C0=C0,
                         co=np.arange(N, dtype=np.int32))
        assert np.array_equal(first, again)


@pytest.mark.parametrize("kind", FUNCS)
def test_concurrent_python_callers(kind, rng):
    """While one Python thread's call holds the worker pool, another thread's call runs on its own
    thread (README): it must still compute every element of C, exactly."""
    gemmkit.set_num_threads(2)
    M = N = K = 300
    lo, hi = A_RANGE[kind]
    A0 = rng.integers(lo, hi + 1, size=(M, K)).astype(A_DTYPE[kind])
    B0 = rng.integers(-128, 128, size=(K, N)).astype(np.int8)
    expected = np.clip(exact_acc("N", "N", A0, 0, B0, 0), I32_MIN, I32_MAX).astype(np.int32)
    Mb = 800
    Ab = np.ones((Mb, Mb), A_DTYPE[kind])
    Bb = np.ones((Mb, Mb), np.int8)

    def big():
        Cb = np.zeros((Mb, Mb), np.int32)
        _fn(kind)('N', 'N', 'F', Mb, Mb, Mb, 1.0, Ab, Mb, 0, Bb, Mb, 0, 0.0, Cb, Mb, 0)
        return int((Cb != Mb).sum())

    def small():
        C = np.zeros((M, N), np.int32)
        _fn(kind)('N', 'N', 'F', M, N, K, 1.0, A0, K, 0, B0, N, 0, 0.0, C, N, 0)
        return int((C != expected).sum())

    run_while_pool_busy(big, small)


# ---- property tests --------------------------------------------------------------------------

def _property(kind, data):
    lo, hi = A_RANGE[kind]
    c = draw_gemm_case(data, max_m=30, max_n=70, max_k=70)
    M, N = c["M"], c["N"]
    oc = data.draw(st.sampled_from("FfCcRr"), label="offsetc")
    ao = data.draw(st.one_of(st.sampled_from([lo, hi, 0]), st.integers(lo, hi)), label="ao")
    bo = data.draw(st.one_of(st.sampled_from([-128, 127, 0]), st.integers(-128, 127)), label="bo")
    ab = st.sampled_from(ALPHA_BETA)
    alpha, beta = data.draw(st.one_of(ab, st.tuples(st.floats(-4, 4, width=32), st.floats(-4, 4, width=32))),
                            label="alpha_beta")
    co_form = data.draw(st.sampled_from(["array", "list"]), label="co_form")
    if (oc in "Cc" and M == 0) or (oc in "Rr" and N == 0):
        co_form = "array"   # an empty list is a separate case: see test_empty_co_sequence_when_none_needed
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    rng = np.random.default_rng(seed)
    c_range = data.draw(st.sampled_from([(-2**20, 2**20), (I32_MIN, I32_MAX)]), label="c_range")
    with kernel_path(c["arch"], c["threads"]):
        run_int8(kind, rng, c["ta"], c["tb"], oc, M, N, c["K"], alpha, ao, bo, beta, pads=c["pads"],
                 layouts=c["layouts"], co_form=co_form, c_range=c_range)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_property_u8s8s32(data):
    _property("u8", data)


@settings(max_examples=50, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_property_s8s8s32(data):
    _property("s8", data)


@pytest.mark.parametrize("kind", FUNCS)
def test_thread_count_changes(kind, arch, rng):
    """A later call with fewer threads than the pool holds uses only what it asked for."""
    for n in (4, 3, 2, 3, 1, 2):
        gemmkit.set_num_threads(n)
        run_int8(kind, rng, "N", "N", "R", 263, 257, 251, 1.0, 3, -2, 1.0)
        run_int8(kind, rng, "T", "N", "C", 301, 97, 130, 2.33, 0, 0, 1.01)


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("ta", ["N", "T"])
def test_few_rows_transposed_b(kind, arch, nthreads, ta, rng):
    """op(B) = B^T with few rows of C: the dot-product path (masked k tails of 64 bytes, column groups
    of 4 and their remainder, row groups of 4), with zero points and every offsetc."""
    for M in (1, 3, 4, 5, 16, 17, 32, 33):
        for K in (1, 63, 64, 65, 1000):
            oc = "FCR"[(M + K) % 3]
            run_int8(kind, rng, ta, "T", oc, M, 37, K, 1.0, 77 if kind == "u8" else -9, -5, 1.0 if K % 2 else 0.0,
                     pads=(2, 3, 1))
    run_int8(kind, rng, ta, "T", "R", 7, 2053, 4099, 2.33, 1, 2, 1.01)


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("ta", ["N", "T"])
def test_few_rows_plain_b(kind, arch, nthreads, ta, rng):
    """op(B) = B with few rows of C: B read in place where the path has a kernel for it (k in blocks of 8
    rows and their short last block, 16-column steps and the zero-padded edge columns, rows of A in
    groups of 4), with and without the column sums a zero point of A needs, every offsetc."""
    for M in (1, 2, 3, 4, 5, 8, 16, 17, 24, 25, 33):
        for K in (1, 2, 7, 8, 9, 15, 16, 17, 255, 1000):
            oc = "FCR"[(M + K) % 3]
            ao = 0 if (M + K) % 2 else (77 if kind == "u8" else -9)
            run_int8(kind, rng, ta, "N", oc, M, 37 + 16 * (K % 3), K, 1.0, ao, -5 if K % 4 else 0,
                     1.0 if K % 2 else 0.0, pads=(2, 3, 1))
    # wider than one 256-column chunk and one 4096-column kernel call, every row group
    run_int8(kind, rng, ta, "N", "R", 7, 4133, 41, 1.0, 0, 0, 0.0)
    run_int8(kind, rng, ta, "N", "C", 16, 300, 4099, 2.33, 1, 2, 1.01)
    run_int8(kind, rng, ta, "N", "F", 23, 301, 2051, 1.0, 0, 0, 0.0)
    # extreme values: the largest exact sums of each sign
    lo, hi = A_RANGE[kind]
    for a, b in ((lo, -128), (hi, -128), (lo, 127), (hi, 127)):
        A0 = np.full((3, 16384), a, A_DTYPE[kind])
        B0 = np.full((16384, 40), b, np.int8)
        run_int8(kind, rng, "N", "N", "F", 3, 40, 16384, 1.0, 0, 0, 0.0, A0=A0, B0=B0, co=np.zeros(1, np.int32))
