"""Tests of the bfloat16 products on pair kernels (k packed in pairs of bfloat16, as vdpbf16ps / tdpbf16ps read them):
tile and pair edges, odd K, K across cache blocks, subnormal inputs, NaN / Inf, every path; reused by the ISA lane."""
import numpy as np
import pytest

import contextlib

import gemmkit
from gemmkit import _core, _tuning_file
from _support import kernel_path

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
F32_EPS = float(np.finfo(np.float32).eps)


def op(x, t):
    return x.T if t == "T" else x


def native_bf16bf16f32(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
    return _core.gemm_bf16bf16f32(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def run_case(fn, rng, ta, tb, M, N, K, alpha, beta, *, pad=(0, 0, 0), c_nan=False, values=None):
    """One gemm_bf16bf16f32 call by `fn` (gemm_bf16bf16f32's signature) on padded row-major operands, checked against
    the float64 product within the float32 error bound, and C's padding unchanged. `values`: (A, B) given (op()
    shapes M x K, K x N, any float dtype: cast to bfloat16), else standard normal."""
    if values is None:
        a, b = rng.standard_normal((M, K)), rng.standard_normal((K, N))
    else:
        a, b = values
    a, b = np.asarray(a).astype(BF16), np.asarray(b).astype(BF16)
    sa = a.T if ta == "T" else a
    sb = b.T if tb == "T" else b
    A = np.zeros((sa.shape[0], sa.shape[1] + pad[0]), BF16)
    B = np.zeros((sb.shape[0], sb.shape[1] + pad[1]), BF16)
    A[:, : sa.shape[1]], B[:, : sb.shape[1]] = sa, sb
    A[:, sa.shape[1]:], B[:, sb.shape[1]:] = np.nan, np.nan  # padding must never be read
    ldc = N + pad[2]
    C = rng.standard_normal((M, ldc)).astype(np.float32)
    if c_nan:
        C[:, :N] = np.nan
    C0 = C.copy()
    fn(ta, tb, M, N, K, alpha, A, A.shape[1], B, B.shape[1], beta, C, ldc)
    a64, b64 = a.astype(np.float64), b.astype(np.float64)
    with np.errstate(invalid="ignore", over="ignore"):
        want = alpha * (a64 @ b64)
        bound = abs(alpha) * (np.abs(a64) @ np.abs(b64))
        if beta != 0:
            want = want + beta * C0[:, :N].astype(np.float64)
            bound = bound + abs(beta) * np.abs(C0[:, :N].astype(np.float64))
    bound = (K + 3) * F32_EPS * bound
    got = C[:, :N].astype(np.float64)
    finite = np.isfinite(want)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (ta, tb, M, N, K, "NaN pattern")
    assert np.array_equal(got[~finite & ~np.isnan(want)], want[~finite & ~np.isnan(want)]), (ta, tb, M, N, K, "Inf")
    err = np.abs(got[finite] - want[finite])
    assert np.all(err <= bound[finite] + 1e-38), (ta, tb, M, N, K, float(np.max(err - bound[finite])))
    assert np.array_equal(C[:, N:], C0[:, N:]), "C's padding written"


# The tiny path's two limits: products within them run widened whole on the float tiny kernel, not on a pair kernel
TINY_LIMITS = ("small.tiny_max_macs", "small.tiny_direct_max_macs")
# Past these a CPU whose pair instruction is slower than its float FMA widens bfloat16 onto the float kernel (0: never)
WIDEN_LIMITS = ("small.bf16_widen_min_m", "small.bf16_widen_min_n")
# Fewer rows or columns take the 16-bit GEMV path (the big operand read in place), not a pair kernel
GEMV_MAX_M, GEMV_MAX_N = 16, 2


@contextlib.contextmanager
def on_pair_kernel(set_param, arch):
    """Products of every size on the packed driver's pair kernel where the path has one: the tiny limits and the
    widening limits set to 0 through `set_param(arch, name, value)` (the tuning overrides), restored after."""
    for name in TINY_LIMITS + WIDEN_LIMITS:
        assert set_param(arch, name, 0) is None, name
    try:
        yield
    finally:
        _core.tuning_clear()
        _tuning_file.load(warn=False)


def pair_kernel_sizes(k):
    """M, N around the bf16 kernel's tile past the GEMV path's few rows / columns (edges fall in the last row and
    column panels), K around its pair and group edges and across its k block (KC pairs)."""
    mr, nr, kc = k["MR"], k["NR"], k["KC"]
    base = mr * -(-(GEMV_MAX_M + 2) // mr)  # the first multiple of MR past the few-row limit
    ms = sorted({base - 1, base, base + 1, base + mr + 3})
    ns = sorted({GEMV_MAX_N + 1, nr - 1, nr, nr + 1, 2 * nr + 5} - set(range(GEMV_MAX_N + 1)))
    ks = [1, 2, 3, 31, 32, 33, 63, 65, 2 * kc - 1, 2 * kc + 3]
    return ms, ns, ks


def check_tile_edges(fn, k, rng, cases=None):
    ms, ns, ks = pair_kernel_sizes(k)
    trans = ["NN", "NT", "TN", "TT"]
    scal = [(1.0, 0.0), (1.0, 1.0), (-0.5, 2.25), (2.0, -1.0)]
    i = 0
    for M in ms:
        for N in ns:
            ta, tb = trans[i % 4]
            alpha, beta = scal[i % 4]
            K = ks[i % len(ks)]
            if M * N * K > 4_000_000 // (1 if cases is None else cases):
                K = ks[i % 6]
            run_case(fn, rng, ta, tb, M, N, K, alpha, beta, pad=(i % 3, (i + 1) % 3, i % 2), c_nan=beta == 0)
            i += 1


def check_subnormals(fn, rng, kc):
    """bfloat16 subnormal inputs whose products are normal (the hardware reads them as zero): in the first k block,
    in the last only (K across blocks: detected while packing a later block), in B only, and only as the second value
    of a pair (odd k) in either operand."""
    # (32, 20, 64): one tile whose A rows a kernel reading A as rows takes in place (scanned, not packed)
    cases = [(19, 7, 9, "all"), (33, 40, 2 * kc + 5, "last"), (21, 65, 70, "b"), (32, 20, 64, "a"), (37, 65, 70, "a_odd"),
             (37, 65, 70, "b_odd")]
    for M, N, K, where in cases:
        a = rng.standard_normal((M, K))
        b = rng.standard_normal((K, N))
        tiny, big = 2.0 ** -130, 2.0 ** 110
        if where == "all":
            a[:, ::2] = tiny * (1 + rng.integers(0, 64, (M, (K + 1) // 2))) * rng.choice([-1, 1], (M, (K + 1) // 2))
            b[::2, :] = big
        elif where == "last":
            a[:, -3:] = tiny * 3
            b[-3:, :] = big
        elif where == "a":
            a[:, 5::7] = tiny * 11
            b[5::7, :] = 2.0 ** 120  # products near 2^-6 against sums near 1
        elif where == "a_odd":  # products near 2^-7 against sums near 1, as in "a"
            a[:, 1::4], b[1::4, :] = tiny * 7, 2.0 ** 120
        elif where == "b_odd":
            b[3::4, :], a[:, 3::4] = tiny * 9, 2.0 ** 120
        else:
            b[1::3, :] = tiny * 5
            a[:, 1::3] = big
        for ta, tb in ("NN", "TT", "NT", "TN"):
            run_case(fn, rng, ta, tb, M, N, K, 1.0, 0.0, values=(a, b))


def check_nan_inf(fn, rng):
    M, N, K = 19, 35, 21
    a, b = rng.standard_normal((M, K)), rng.standard_normal((K, N))
    a[2, 3], b[4, 5], a[6, 7], b[7, 8] = np.nan, np.inf, -np.inf, 0.0  # inf * 0: NaN
    for ta, tb in ("NN", "TT"):
        run_case(fn, rng, ta, tb, M, N, K, 1.0, 0.0, values=(a, b), c_nan=True)


def _bf16_kernel():
    return _core.kernel_info()["bf16"]


# the bfloat16 kernel a path runs where the CPU has the feature (None: widened to float on the sgemm kernel)
PAIR_KERNELS = {"generic": (None, "ukernel_bf16_generic_4x16"), "avx512_amx": ("amx_bf16", "ukernel_bf16_amx_32x32"),
                "avx512_vnni": ("avx512_bf16", "ukernel_bf16_avx512_12x32"),
                **{a: ("bf16", "ukernel_bf16_bfmmla_8x8") for a in ("neon", "dotprod", "i8mm")}}


def test_each_path_takes_its_bf16_kernel_where_the_cpu_has_it(arch):
    feature, kernel = PAIR_KERNELS.get(arch, (None, None))
    has = feature is None or _core.cpu_features().get(feature, False)
    with gemmkit.use_arch(arch):
        k = _bf16_kernel()
    if kernel and has:
        assert (k["kernel"], k["k_group"]) == (kernel, 2), (arch, k)
    else:
        assert k["k_group"] == 1 and "sgemm" in k["kernel"], (arch, k)


def test_pair_kernel_on_the_generic_path():
    """The portable path's bfloat16 kernel packs pairs (the pair driver is run on every machine through it)."""
    with gemmkit.use_arch("generic"):
        k = _bf16_kernel()
    assert k["k_group"] == 2 and "bf16" in k["kernel"], k


@pytest.mark.parametrize("tiny", [False, True], ids=["packed", "tiny_widened"])
def test_tile_and_pair_edges(arch, nthreads, rng, tiny):
    """The pair kernel's edges on the packed driver (tiny path off), and the same shapes with the tiny path on."""
    with kernel_path(arch, nthreads), (contextlib.nullcontext() if tiny else on_pair_kernel(_core.tuning_set, arch)):
        check_tile_edges(native_bf16bf16f32, _bf16_kernel(), rng)


def test_subnormal_inputs_are_honoured(arch, rng):
    for threads in (1, 2):
        with kernel_path(arch, threads), on_pair_kernel(_core.tuning_set, arch):
            check_subnormals(native_bf16bf16f32, rng, _bf16_kernel()["KC"])


def test_nan_and_inf_propagate(arch, rng):
    with kernel_path(arch, 1), on_pair_kernel(_core.tuning_set, arch):
        check_nan_inf(native_bf16bf16f32, rng)


def test_bf16_batches_on_pair_kernels(arch, rng):
    """Strided batches (a shared B, stride 0) and the matmul stacks over them, against float64."""
    a = rng.standard_normal((6, 17, 33)).astype(BF16)
    b = rng.standard_normal((33, 40)).astype(BF16)
    with gemmkit.use_arch(arch):
        got = gemmkit.matmul(a, b)
    want = a.astype(np.float64) @ b.astype(np.float64)
    bound = 36 * F32_EPS * (np.abs(a.astype(np.float64)) @ np.abs(b.astype(np.float64)))
    assert got.dtype == np.float32 and np.all(np.abs(got - want) <= bound)


# (M, N, transb) under widening limits of 40 rows and 40 columns: widened onto the float kernel (True) or not
WIDEN_CASES = [(50, 60, "N", True), (150, 60, "T", True), (41, 41, "N", True), (40, 60, "N", False),
               (50, 40, "N", False), (50, 60, "T", False), (128, 60, "T", False)]


def test_bf16_widened_past_the_widening_limits(arch, rng):
    """small.bf16_widen_min_m / n: products of more rows and columns widened onto the float kernel (the same bits as
    sgemm on the widened operands), the others and x W^T up to 128 rows on the pair kernel (other bits, where a path's
    pair kernel sums in another order than its float kernel)."""
    K = 70

    def both(M, N, tb):
        a = rng.standard_normal((M, K)).astype(BF16)
        b = rng.standard_normal((K, N) if tb == "N" else (N, K)).astype(BF16)
        got, ref = np.zeros((M, N), np.float32), np.zeros((M, N), np.float32)
        ldb = N if tb == "N" else K
        _core.gemm_bf16bf16f32("N", tb, M, N, K, 1.0, a, K, b, ldb, 0.0, got, N)
        _core.sgemm("N", tb, M, N, K, 1.0, a.astype(np.float32), K, b.astype(np.float32), ldb, 0.0, ref, N)
        return np.array_equal(got, ref)

    with kernel_path(arch, 1), on_pair_kernel(_core.tuning_set, arch):
        if _bf16_kernel()["k_group"] != 2:
            pytest.skip(f"{arch} widens every bfloat16 product on this CPU")
        pair_bits_differ = not both(50, 60, "N")  # limits 0: every product on the pair kernel
        for name in WIDEN_LIMITS:
            assert _core.tuning_set(arch, name, 40) is None, name
        for M, N, tb, widened in WIDEN_CASES:
            same = both(M, N, tb)
            assert same if widened else (same != pair_bits_differ), (arch, M, N, tb, widened)

# x @ W^T with few rows of x: a pair kernel that reads A as rows computes it as W x^T (C transposed), W's rows read in
# place against one panel of x (up to the kernel's NR rows, K a whole number of the kernel's pair groups), packed as
# rows past that; both with all of k in one block. Rows past GEMV_MAX_M up to and past the swap's limit (128).
FEW_ROWS_M = [3, 17, 31, 32, 33, 64, 127, 128, 129]


def test_few_rows_against_a_transposed_b(arch, nthreads, rng):
    """Edges of the transposed-C path: M around the kernel's tile and the swap's limit, N around the tile, K whole
    groups (W in place) and not (zero pairs packed), op(A) both ways, the special alpha / beta, NaN in C at beta = 0,
    padded operands and C (the padding never read or written)."""
    scal = [(1.0, 0.0), (1.0, 1.0), (-0.5, 2.25), (2.0, 0.0)]
    ks = [64, 96, 33, 63, 2]
    with kernel_path(arch, nthreads), on_pair_kernel(_core.tuning_set, arch):
        for i, M in enumerate(FEW_ROWS_M):
            for j, N in enumerate((5, 33, 100)):
                alpha, beta = scal[(i + j) % 4]
                K = ks[(i + 2 * j) % len(ks)]
                run_case(native_bf16bf16f32, rng, "NT"[(i + j) % 2], "T", M, N, K, alpha, beta,
                         pad=((i + j) % 3, j % 2, i % 2), c_nan=beta == 0)


def test_few_rows_subnormals_in_either_operand(arch, rng):
    """Subnormal bfloat16 values in W (read in place: scanned where no packer reads it) or in x only, with normal
    products, on the transposed-C path: honoured as on every path."""
    tiny, big = 2.0 ** -130, 2.0 ** 120  # products near 2^-10 against sums near 1: a flushed one is seen
    for threads in (1, 2):
        with kernel_path(arch, threads), on_pair_kernel(_core.tuning_set, arch):
            # W's subnormals in whole panels of its rows only (an edge panel is packed, and its packer would see them)
            for M, N, K, where in [(5, 64, 64, "w"), (32, 96, 128, "w_last"), (20, 33, 64, "x"), (100, 40, 96, "w")]:
                x, w = rng.standard_normal((M, K)), rng.standard_normal((N, K))
                if where == "w":
                    w[:32, 1::5], x[:, 1::5] = tiny * 7, big
                elif where == "w_last":
                    w[32:64, -2:], x[:, -2:] = -tiny * 3, big
                else:
                    x[:, 5], w[:, 5] = tiny * 9, big
                run_case(native_bf16bf16f32, rng, "N", "T", M, N, K, 1.0, 0.0, values=(x, w.T))


def test_few_rows_bfloat16_c_and_batches(arch, rng):
    """bf16gemm (bfloat16 C, rounded once) and stacks of x against one W^T (the batch strides swapped with the
    operands) on the transposed-C path, against float64."""
    with kernel_path(arch, 2), on_pair_kernel(_core.tuning_set, arch):
        for M, N, K in [(7, 50, 64), (40, 33, 70)]:
            x, w = rng.standard_normal((M, K)).astype(BF16), rng.standard_normal((N, K)).astype(BF16)
            C = np.full((M, N), np.nan, BF16)
            _core.bf16gemm("N", "T", M, N, K, 1.0, x, K, w, K, 0.0, C, N)
            want = x.astype(np.float64) @ w.astype(np.float64).T
            bound = (K + 3) * F32_EPS * (np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64)).T)
            bound += np.abs(want) * 2.0 ** -8  # one rounding to bfloat16
            assert np.all(np.abs(C.astype(np.float64) - want) <= bound), (M, N, K)
        x = rng.standard_normal((5, 24, 64)).astype(BF16)
        w = rng.standard_normal((40, 64)).astype(BF16)
        got = gemmkit.matmul(x, w.T)
        want = x.astype(np.float64) @ w.astype(np.float64).T
        bound = 67 * F32_EPS * (np.abs(x.astype(np.float64)) @ np.abs(w.astype(np.float64)).T)
        assert got.dtype == np.float32 and np.all(np.abs(got - want) <= bound)


# x @ W^T with 3 to 16 rows of x on a pair kernel's own dot products (kernel.h pair_dots; the 16-bit GEMV path
# elsewhere): W's rows in blocks of 6 and triples, k in 32-value steps and chunks of 1024 values.
PAIR_DOTS_MS = [3, 5, 8, 9, 13, 16]
PAIR_DOTS_NS = [1, 2, 3, 5, 6, 7, 13, 40]
PAIR_DOTS_KS = [1, 2, 31, 32, 33, 63, 64, 1023, 1024, 1025, 2100]
PAIR_DOTS_CHUNK = 1024


def _few_rows_edges(fn, rng, tb, ns, cases):
    """Rows of x in PAIR_DOTS_MS, W's columns (tb 'T': its rows) in ns, K in PAIR_DOTS_KS (cut where the product gets
    large), op(A) both ways, the special alpha / beta, NaN in C at beta = 0, padded operands."""
    scal = [(1.0, 0.0), (1.0, 1.0), (-0.5, 2.25), (2.0, 0.0)]
    for c in range(len(PAIR_DOTS_MS) * len(ns) if cases is None else cases):
        M = PAIR_DOTS_MS[c % len(PAIR_DOTS_MS)]
        N = ns[(c // len(PAIR_DOTS_MS) + c) % len(ns)]
        K = PAIR_DOTS_KS[c % len(PAIR_DOTS_KS)]
        if M * N * K > 3_000_000:
            K = PAIR_DOTS_KS[c % 6]
        alpha, beta = scal[c % 4]
        run_case(fn, rng, "NT"[c % 2], tb, M, N, K, alpha, beta, pad=(c % 3, (c + 1) % 3, c % 2), c_nan=beta == 0)


def check_pair_dots_edges(fn, rng, cases=None):
    """x @ W^T: rows of x around the register tile (8) and the pass (16), W's rows around the tile's triple and the
    block (6), K around the 32-value step (an odd K's last pair half read) and the chunk."""
    _few_rows_edges(fn, rng, "T", PAIR_DOTS_NS, cases)


def check_pair_dots_subnormals(fn, rng):
    """Subnormal bfloat16 values (read as zero by the instruction) whose products are normal and far above the error
    bound: in W's rows of one triple only, in a later chunk of k only, in x only; each honoured."""
    tiny, big = 2.0 ** -130, 2.0 ** 127  # products near 1
    for M, N, K, where in [(16, 13, 200, "w_triple"), (5, 40, 2100, "w_chunk"), (9, 7, 100, "x"), (3, 6, 33, "w_tail")]:
        x, w = rng.standard_normal((M, K)), rng.standard_normal((N, K))
        if where == "w_triple":
            cols, rows = np.arange(3, K, 5), [4]
        elif where == "w_chunk":
            cols, rows = np.arange(PAIR_DOTS_CHUNK + 7, K, 9), [1, 38]
        elif where == "w_tail":
            cols, rows = np.array([32]), [5]
        else:
            cols, rows = np.arange(2, K, 11), None
        if rows is None:  # x's values subnormal, W's big
            x[:, cols], w[:, cols] = tiny * 9, big
        else:  # W's values subnormal in a few rows, zero in the others, x's big
            w[:, cols] = 0.0
            for r in rows:
                w[r, cols] = -tiny * 11
            x[:, cols] = big
        run_case(fn, rng, "N", "T", M, N, K, 1.0, 0.0, values=(x, w.T))


def test_pair_dots_edges_and_subnormals(arch, nthreads, rng):
    with kernel_path(arch, nthreads):
        check_pair_dots_edges(native_bf16bf16f32, rng)
        check_pair_dots_subnormals(native_bf16bf16f32, rng)


# x @ W with 3 to 16 rows of x on the pair kernel's own dot products against W's rows paired (kernel.h pair_rows): 64
# columns a tile in strips of 32 (a row's last strip masked), 16 pairs of k a visit, blocks of 1024 columns.
PAIR_ROWS_NS = [1, 3, 31, 32, 33, 63, 64, 65, 100, 1030]


def check_pair_rows_edges(fn, rng, cases=None):
    """x @ W, W plain: columns around the strips, the tile and the block, K odd and even around the visit of 16
    pairs."""
    _few_rows_edges(fn, rng, "N", PAIR_ROWS_NS, cases)


def check_pair_rows_subnormals(fn, rng):
    """Subnormal values of a plain W in one strip of columns of a later visit of k only, in the masked last strip, an
    odd K's last row, or in x only; products near 1, far above the error bound."""
    tiny, big = 2.0 ** -130, 2.0 ** 127
    for M, N, K, where in [(16, 100, 70, "w_strip"), (5, 40, 33, "w_last_row"), (9, 70, 50, "w_masked"), (3, 6, 64, "x")]:
        x, w = rng.standard_normal((M, K)), rng.standard_normal((K, N))
        if where == "x":
            x[:, 3::7], w[3::7, :] = tiny * 9, big
        else:
            rows = {"w_strip": np.arange(40, K, 3), "w_last_row": np.array([K - 1]), "w_masked": np.arange(1, K, 4)}[where]
            cols = {"w_strip": [70], "w_last_row": [2, 39], "w_masked": [65, 69]}[where]
            w[rows, :] = 0.0
            w[np.ix_(rows, cols)] = -tiny * 11
            x[:, rows] = big
        run_case(fn, rng, "N", "N", M, N, K, 1.0, 0.0, values=(x, w))


def test_pair_rows_edges_and_subnormals(arch, nthreads, rng):
    with kernel_path(arch, nthreads):
        check_pair_rows_edges(native_bf16bf16f32, rng)
        check_pair_rows_subnormals(native_bf16bf16f32, rng)
