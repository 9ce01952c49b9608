"""dgemm, cgemm and zgemm (and sgemm through the same driver) on every kernel path and thread count,
against NumPy references in float64 / complex128 with bounds that scale with K."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gemmkit
from _support import Operand, kernel_path

TYPES = {  # op -> (dtype, function)
    "sgemm": (np.float32, gemmkit.sgemm),
    "dgemm": (np.float64, gemmkit.dgemm),
    "cgemm": (np.complex64, gemmkit.cgemm),
    "zgemm": (np.complex128, gemmkit.zgemm),
}
C_SENTINEL = -7777.25


def _op(X, t):
    if t in "Nn":
        return X
    if t in "Rr":  # conjugate, no transpose
        return X.conj()
    return X.T if t in "Tt" else X.conj().T


def _gen(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def run_case(rng, op, ta, tb, M, N, K, alpha, beta, pads=(0, 0, 0), layouts=("2d", "2d", "2d"), c_nan=False):
    dtype, fn = TYPES[op]
    ar, ac = (M, K) if ta in "NnRr" else (K, M)
    br, bc = (K, N) if tb in "NnRr" else (N, K)
    lda, ldb, ldc = max(1, ac) + pads[0], max(1, bc) + pads[1], max(1, N) + pads[2]
    A0, B0 = _gen(rng, (ar, ac), dtype), _gen(rng, (br, bc), dtype)
    C0 = np.full((M, N), np.nan, dtype) if c_nan else _gen(rng, (M, N), dtype)
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
    beside the chunk edges."""
    rng = np.random.default_rng(7)
    chunk = 16 if op == "sgemm" else 8
    for arch in gemmkit.available_archs():
        with kernel_path(arch, 1):
            for M in (1, 2, 3, 4, 5, 6, 7, 8, 10, 11, 12, 13, 14, 17, 20, 31, 32):
                for N in (chunk - 1, chunk, 2 * chunk, 2 * chunk + 1, 32):
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
                A, B = _gen(rng, (M, K), dtype), _gen(rng, (K, N), dtype)
                C = _gen(rng, (M, N), dtype)
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
            C0 = _gen(rng, (5, 6), dtype)
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
                A = _gen(rng, (M, K) if ta == "N" else (K, M), dtype)
                B = _gen(rng, (K, N) if tb == "N" else (N, K), dtype)
                C = _gen(rng, (M, N), dtype)
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
