"""The aarch64 NEON kernels beyond the packed tiles: GEMV on Advanced SIMD vectors and the 16-byte quantized add,
compact enough for the emulated lane (.ci/arm64-lane); skipped on builds without the aarch64 kernels."""
import numpy as np
import pytest

import gemmkit
from gemmkit import _core, quant

ARM_BUILD = any(c["arch"] == "neon" for c in _core.configs())
pytestmark = pytest.mark.skipif(not ARM_BUILD, reason="a build without the aarch64 kernels")
ARM_PATHS = [a for a in ("neon", "dotprod", "i8mm") if a in gemmkit.available_archs()]
GEMM = {np.float32: gemmkit.sgemm, np.float64: gemmkit.dgemm}
SENTINEL = -7.0


def test_quantized_add_kernel_of_every_arm_config():
    """Every aarch64 configuration (neon, dotprod, i8mm, the Apple one) names the NEON quantized add."""
    arm = [i for i, c in enumerate(_core.configs()) if c["arch"] in ("neon", "dotprod", "i8mm")]
    assert len(arm) == 4
    for i in arm:
        assert _core.config_fields(i)["qadd"] == "qadd_neon_16bytes", _core.configs()[i]


def _gemv_case(rng, dtype, M, N, K, ta, tb, beta, pad=3, alpha=0.75):
    """One product against float64, on operands inside padded parents (a write outside C shows)."""
    def padded(rows, cols):
        parent = np.full((rows + 1, cols + pad), SENTINEL, dtype)
        parent[:rows, :cols] = rng.uniform(-1, 1, (rows, cols))
        return parent
    pa = padded(*((M, K) if ta == "N" else (K, M)))
    pb = padded(*((K, N) if tb == "N" else (N, K)))
    pc = padded(M, N)
    if beta == 0:
        pc[:M, :N] = np.nan  # beta == 0: C is not read
    before = pc.copy()
    GEMM[dtype](ta, tb, M, N, K, alpha, pa, pa.shape[1], pb, pb.shape[1], beta, pc, pc.shape[1])
    A = pa[:pa.shape[0] - 1, :pa.shape[1] - pad].astype(np.float64)
    B = pb[:pb.shape[0] - 1, :pb.shape[1] - pad].astype(np.float64)
    A, B = (A if ta == "N" else A.T), (B if tb == "N" else B.T)
    ref = alpha * (A @ B) + (beta * before[:M, :N].astype(np.float64) if beta else 0.0)
    eps = np.finfo(dtype).eps
    tol = (4 + np.sqrt(K)) * eps * (np.abs(A) @ np.abs(B) * alpha + abs(beta)) + eps
    err = np.abs(pc[:M, :N] - ref)
    assert np.all(err <= tol), (dtype.__name__, M, N, K, ta, tb, beta, float(err.max()))
    outside = np.ones(pc.shape, bool)
    outside[:M, :N] = False
    assert np.array_equal(pc[outside], before[outside]), "wrote outside C"


@pytest.mark.parametrize("path", ARM_PATHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_gemv_vector_lanes_and_edges(path, dtype, rng):
    """1 or 2 rows / columns of C (the GEMV kernels), the long side around the 4 / 2 lanes, cache lines
    (16 floats, 8 doubles) and the 8-row passes, every transpose, beta 0 over NaN and beta != 0."""
    with gemmkit.use_arch(path):
        for few in (1, 2):
            for long_ in (1, 3, 4, 5, 9, 17, 33, 130):
                for ta, tb in ("NN", "NT", "TN", "TT"):
                    beta = 0.0 if (long_ + few) % 2 else 0.5
                    _gemv_case(rng, dtype, few, long_, long_ + 2, ta, tb, beta)   # few rows: gemv_rows / dots
                    _gemv_case(rng, dtype, long_, few, long_ + 1, ta, tb, beta)   # few columns


@pytest.mark.parametrize("path", ARM_PATHS)
@pytest.mark.parametrize("formula", ["directml", "onnxruntime"])
@pytest.mark.parametrize("layout", ["flat", "a_repeated", "b_repeated"])
def test_quantized_add_same_bytes_as_portable(path, formula, layout):
    """Every pair of input bytes, each signedness and scales that take the fixed-point, divide, reciprocal
    and fma forms: the NEON kernel's bytes are the portable kernel's (the contract of every ISA)."""
    rng = np.random.default_rng(25)
    scales = [(0.02, 0.03, 0.05), (0.25, 0.125, 0.5), (0.5, 1.0, 1.0), (1 / 255, 2 / 255, 3 / 255),
              (0.0173, 0.0291, 0.0437), (3.7, 0.9, 1e-6)]
    for i, (sa, sb, sc) in enumerate(scales):
        adt, bdt, odt = (np.uint8, np.int8)[i % 2], (np.uint8, np.int8)[(i // 2) % 2], (np.uint8, np.int8)[(i // 3) % 2]
        if formula == "onnxruntime":
            bdt = odt = adt
        va = np.arange(256, dtype=np.uint8).view(adt)
        vb = np.arange(256, dtype=np.uint8).view(bdt)
        if layout == "flat":   # 2^17 + 9 outputs: every pair, then a tail shorter than a vector
            a = np.concatenate([np.tile(np.repeat(va, 256), 2), va[:9]])
            b = np.concatenate([np.tile(vb, 512), vb[100:109]])
        elif layout == "a_repeated":
            a, b = va.reshape(256, 1), np.tile(vb, 2)[:509].reshape(1, 509)
        else:
            a, b = np.tile(va, 2)[:509].reshape(1, 509), vb.reshape(256, 1)
        lo = -128 if adt == np.int8 else 0
        za, zb = int(rng.integers(lo, lo + 256)), int(rng.integers(-128 if bdt == np.int8 else 0, 128))
        zc = odt(rng.integers(-128 if odt == np.int8 else 0, 128))
        with gemmkit.use_arch("generic"):
            want = quant.quantized_add(a, sa, za, b, sb, zb, sc, zc, formula=formula)
        with gemmkit.use_arch(path):
            got = quant.quantized_add(a, sa, za, b, sb, zb, sc, zc, formula=formula)
        np.testing.assert_array_equal(got, want, err_msg=f"{sa} {sb} {sc} {za} {zb} {zc} {adt} {bdt} {odt}")


# ---- per-token activation quantization (csrc/kernels/quantize_neon.c) ----------------------------------------

QUANT_TYPES = ("float32", "float16", "bfloat16")
QUANT_K = (1, 3, 4, 7, 8, 15, 16, 31, 64, 100, 4096 + 13)
QUANT_M = (1, 2, 3, 4, 5, 6, 37)
TOKEN_KINDS = 11


def test_quantize_kernel_of_every_arm_config():
    """Every aarch64 configuration names the NEON per-token quantizer, and it is the one in use on its path."""
    arm = [i for i, c in enumerate(_core.configs()) if c["arch"] in ("neon", "dotprod", "i8mm")]
    assert len(arm) == 4
    for i in arm:
        assert _core.config_fields(i)["quant"] == "quantize_neon_4lanes", _core.configs()[i]
    for path in ARM_PATHS:
        with gemmkit.use_arch(path):
            assert _core.quantize_kernel_name() == "quantize_neon_4lanes"
            assert gemmkit.show_config(print_out=False)["quantize"] == "quantize_neon_4lanes"
    with gemmkit.use_arch("generic"):
        assert _core.quantize_kernel_name() == "quantize_generic"


def _designed_tokens(rng, M, K, wide16):
    """M float64 tokens x' of K values, kind i % TOKEN_KINDS: 0 random, 1 near ties at a random scale, 2 exact
    ties at a power-of-two scale (values (n + 1/2) 2^e, the max 127 2^e first), 3 the same to be moved one ulp,
    4 zeros, 5 a NaN, 6 an infinity, 7 a subnormal scale, 8 all subnormal (scale 0 or a few units: quotients past 127), 9 near the
    float32 max, 10 float16-sized. wide16: exponents that float16 keeps."""
    x = np.zeros((M, K))
    lo, hi = (-12, 9) if wide16 else (-30, 30)
    for i in range(M):
        kind, row = i % TOKEN_KINDS, x[i]
        e = float(rng.integers(lo, hi))
        if kind == 0:
            row[:] = rng.standard_normal(K) * 2.0 ** e
        elif kind == 1:
            amax = (rng.random() + 0.5) * 2.0 ** e
            scale = float(np.float32(np.float32(amax) / np.float32(127)))
            row[:] = (rng.integers(-127, 127, K) + 0.5) * scale * (1 + rng.integers(-3, 4, K) * 2.0 ** -23)
            row[0] = np.float32(amax)
        elif kind in (2, 3):
            row[:] = (rng.integers(-127, 127, K) + 0.5) * 2.0 ** e
            row[0] = 127 * 2.0 ** e * (1 if rng.random() < 0.5 else -1)
        elif kind in (5, 6):
            row[:] = rng.standard_normal(K)
        elif kind == 7:
            row[:] = rng.uniform(-1, 1, K) * 1e-37
        elif kind == 8:  # max |x'| of A units of 2^-149: scale 0 (A < 64) or a few units, x' / scale up to 190
            A = int(rng.integers(20, 700))
            row[:] = rng.integers(-A, A + 1, K) * 2.0 ** -149
            row[0] = -A * 2.0 ** -149 if rng.random() < 0.5 else A * 2.0 ** -149
        elif kind == 9:
            row[:] = rng.uniform(-1, 1, K) * 3.4e38
        elif kind == 10:
            row[:] = rng.uniform(-1, 1, K) * 65000
    return x


def _to_bits(x32, in_type):
    """float32 values as the kernel's input: float32, or the uint16 bits of float16 / bfloat16 (truncated)."""
    if in_type == "float32":
        return x32.copy()
    if in_type == "float16":
        with np.errstate(over="ignore", invalid="ignore"):
            return x32.astype(np.float16).view(np.uint16)
    return (x32.view(np.uint32) >> 16).astype(np.uint16)


def _quant_inputs(rng, M, K, in_type, mode):
    """Padded token rows (ldx = K + 3) of in_type whose x' (after the smoothing of `mode`) are _designed_tokens,
    with the special values set in the bits, and the smoothing vector (None without one)."""
    smooth = None
    x = _designed_tokens(rng, M, K, in_type == "float16")
    if mode is not None:
        # powers of two (the ties stay exact) in the odd columns and column 0, random factors elsewhere
        smooth = rng.uniform(0.25, 4, K)
        smooth[1::2] = 2.0 ** rng.integers(-3, 4, len(smooth[1::2]))
        smooth[0] = 1.0
        smooth = smooth.astype(np.float32)
        x = x * smooth if mode == "divide" else x / smooth
    with np.errstate(over="ignore"):
        x32 = x.astype(np.float32)
    bits = _to_bits(x32, in_type)
    ui = bits.view(np.uint32) if in_type == "float32" else bits
    nan = {"float32": (0x7FC00000, 0x7F800001, 0xFFC00000), "float16": (0x7E00, 0x7C01, 0xFE00),
           "bfloat16": (0x7FC0, 0x7F81, 0xFFC0)}[in_type]
    inf = {"float32": (0x7F800000, 0xFF800000), "float16": (0x7C00, 0xFC00), "bfloat16": (0x7F80, 0xFF80)}[in_type]
    for i in range(M):
        kind, j = i % TOKEN_KINDS, int(rng.integers(0, K))
        if kind == 3 and K > 1:  # one ulp towards or away from zero, the max left alone
            ui[i, 1:] += rng.integers(-1, 2, K - 1).astype(ui.dtype)
        elif kind == 5:
            ui[i, j] = nan[i % 3]
        elif kind == 6:
            ui[i, j] = inf[i % 2]
    padded = np.zeros((M, K + 3), bits.dtype)
    padded[:, :K] = bits
    return padded, smooth


def _quantize_rows(in_type, x, K, smooth, mode):
    M = x.shape[0]
    q = np.full((M, K + 2), 99, np.int8)
    scale = np.full(M, -1.0, np.float32)
    _core.quantize_per_token_rows(in_type, M, K, x, x.shape[1], smooth, mode or "divide", q, K + 2, scale)
    assert (q[:, K:] == 99).all(), "wrote outside q"
    return q[:, :K], scale


@pytest.mark.parametrize("path", ARM_PATHS)
@pytest.mark.parametrize("in_type", QUANT_TYPES)
def test_quantize_same_bytes_as_portable(path, in_type):
    """The NEON quantizer's bytes and scale bits are the portable kernel's: random tokens, near and exact
    rounding ties (each one float32 / float16 / bfloat16 ulp either side), zeros, NaN and Inf, subnormal and
    zero scales, float32-max values; without smoothing and with a smoothing vector divided and multiplied; K
    around the 4- and 16-value steps and their scalar tails, M around the four tokens read side by side."""
    rng = np.random.default_rng(2529)
    for mode in (None, "divide", "multiply"):
        for K in QUANT_K:
            for M in QUANT_M:
                x, smooth = _quant_inputs(rng, M, K, in_type, mode)
                with gemmkit.use_arch("generic"):
                    want_q, want_s = _quantize_rows(in_type, x, K, smooth, mode)
                with gemmkit.use_arch(path):
                    got_q, got_s = _quantize_rows(in_type, x, K, smooth, mode)
                where = f"{in_type} mode={mode} K={K} M={M}"
                np.testing.assert_array_equal(got_s.view(np.uint32), want_s.view(np.uint32), err_msg=where)
                np.testing.assert_array_equal(got_q, want_q, err_msg=where)


def test_quantize_inputs_reach_every_lane():
    """The inputs above take the divided and the offset-reciprocal lanes: exact ties, subnormal scales, NaN
    tokens and zero tokens are present (a guard against a generator that silently lost a kind)."""
    rng = np.random.default_rng(2529)
    x, _ = _quant_inputs(rng, 37, 64, "float32", None)
    with gemmkit.use_arch("generic"):
        q, s = _quantize_rows("float32", x, 64, None, None)
    assert np.isnan(s).sum() >= 6 and (s == 0).sum() >= 3
    sub = (s > 0) & (s < np.finfo(np.float32).tiny)
    assert sub.sum() >= 3
    ties = x[2::TOKEN_KINDS, :64] / s[2::TOKEN_KINDS, None]
    assert (ties % 1 == 0.5).mean() > 0.9 and (np.abs(q[2::TOKEN_KINDS]) % 2 == 0)[:, 1:].all()


@pytest.fixture
def tiny_everywhere():
    """The tiny thresholds at their structural limits (32^3; 64^3 with a plain A) on every ARM path, restored after."""
    from gemmkit import _tuning_file
    _core.tuning_clear()
    for path in ARM_PATHS:
        assert _core.tuning_set(path, "small.tiny_max_macs", 32.0 ** 3) is None
        assert _core.tuning_set(path, "small.tiny_direct_max_macs", 64.0 ** 3) is None
    yield
    _core.tuning_clear()
    _tuning_file.load(warn=False)


@pytest.mark.parametrize("path", ARM_PATHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_tiny_inplace_row_blocks(path, dtype, rng, tiny_everywhere):
    """The tiny kernel's 6- and 5-row in-place NEON k loops (real_neon_tiny.h), forced by the thresholds: every
    row block split (6, 5 5, 6 5, 6 6 5, 5 5 5 5, 6 6 5 5 5 5, 8 = 4 4, 64 rows), then 1-4 rows left, whole chunks
    (16 floats / 8 doubles) and a part chunk (B copied), alpha 1 beta 0 over NaN (stored straight), alpha != 1,
    beta != 0, K 1, odd and 64."""
    chunk = 16 if dtype == np.float32 else 8
    with gemmkit.use_arch(path):
        for M in (5, 6, 7, 8, 10, 11, 12, 13, 17, 20, 31, 32, 40, 64):
            for N, K in ((chunk, 29), (2 * chunk + 1, 1), (3 * chunk, 64), (chunk + 3, 33)):
                for alpha, beta in ((1.0, 0.0), (0.5, 0.0), (1.0, -1.5)):
                    _gemv_case(rng, dtype, M, N, K, "N", "N", beta, pad=1 + M % 3, alpha=alpha)


def _hgemm_padded(ta, tb, alpha, A, B, beta, C, pad):
    """hgemm on A, B, C placed inside parents `pad` columns wider (a sentinel there: lda, ldb, ldc padded);
    returns C's parent after the call."""
    def parent(x):
        p = np.full((x.shape[0], x.shape[1] + pad), np.float16(-7.0))
        p[:, :x.shape[1]] = x
        return p
    pa, pb, pc = parent(A), parent(B), parent(C)
    M, N = C.shape
    K = A.shape[0] if ta == "T" else A.shape[1]
    _core.hgemm(ta, tb, M, N, K, alpha, pa, pa.shape[1], pb, pb.shape[1], beta, pc, pc.shape[1])
    return pc


def _same_half_bits(got, want, what):
    """Bit for bit, except that a NaN only has to be a NaN (its payload is the hardware's: F16C and FCVTN may
    keep different bits of it; the portable converters follow F16C)."""
    gn, wn = np.isnan(got), np.isnan(want)
    assert np.array_equal(gn, wn), what
    g, w = got.view(np.uint16)[~gn], want.view(np.uint16)[~wn]
    bad = np.flatnonzero(g != w)
    assert bad.size == 0, (what, [(hex(g[i]), hex(w[i])) for i in bad[:5]])


@pytest.mark.parametrize("path", ARM_PATHS)
def test_hgemm_neon_converters_same_bits_as_generic(path):
    """float16 on the NEON converters (kernels/half_neon.c: 8-wide FCVTL / FCVTN, a 4-wide step, scalar tails)
    against the portable path (generic): the same bits. Products of integers exact in float (every sum exact,
    whatever the kernel's order or FMA), so the only rounding is the final narrowing, with power-of-two alphas
    taking results to float16 overflow, subnormals and zero; beta 0 over NaN and beta != 0 (C widened); shapes
    around the 8 / 4 lanes, the 8 x 12 panels and their edges, every transpose, padded lda / ldb / ldc. Then
    the widening alone (K 1 against ones) of every kind of float16, and the narrowing alone (alpha 0: C := beta C)
    of arbitrary floats: ties, subnormal results, values around 65504 / 65520 (overflow to infinity), NaN."""
    rng = np.random.default_rng(2525)
    f16 = np.float16
    for i, (M, N, K) in enumerate(((1, 1, 1), (3, 5, 7), (8, 12, 16), (9, 13, 11), (4, 20, 9), (17, 29, 23),
                                   (13, 37, 40))):
        ta, tb = "NT"[i % 2], "NT"[(i // 2) % 2]
        A = rng.integers(-256, 257, size=(K, M) if ta == "T" else (M, K)).astype(f16)
        B = rng.integers(-256, 257, size=(N, K) if tb == "T" else (K, N)).astype(f16)
        exact = op_t(A, ta).astype(np.float64) @ op_t(B, tb).astype(np.float64)
        C0 = rng.integers(-256, 257, size=(M, N)).astype(f16)
        for alpha, beta in ((1.0, 0.0), (2.0 ** -34, 0.0), (2.0 ** -30, 0.0), (2.0 ** -2, 0.0), (2.0 ** -9, -1.0),
                            (1.0, 0.5)):
            C = np.full((M, N), np.nan, f16) if beta == 0 else C0
            pad = 1 + (M + N) % 3
            with gemmkit.use_arch(path):
                got = _hgemm_padded(ta, tb, alpha, A, B, beta, C, pad)
            with gemmkit.use_arch("generic"):
                want = _hgemm_padded(ta, tb, alpha, A, B, beta, C, pad)
            what = (path, M, N, K, ta, tb, alpha, beta)
            _same_half_bits(got, want, what)
            with np.errstate(over="ignore"):
                ref = (alpha * exact + (beta * C0.astype(np.float64) if beta else 0.0)).astype(np.float32).astype(f16)
            _same_half_bits(got[:, :N], ref, what)
            assert np.all(got[:, N:] == f16(-7.0)), ("wrote outside C", what)

    # the widening: every finite float16 kind (zeros, subnormals, normals up to 65504) through both packer
    # layouts (K 1: A's column, B's row of ones), then narrowed back unchanged
    bits = rng.integers(0, 0x7C00, size=(45, 1), dtype=np.uint16) | (rng.integers(0, 2, (45, 1), np.uint16) << 15)
    bits[:6, 0] = (0x0000, 0x8000, 0x0001, 0x83FF, 0x7BFF, 0x0400)
    A = bits.view(f16)
    for ta, tb in ("NN", "TT", "NT", "TN"):
        Ak = A if ta == "N" else A.T.copy()
        ones = np.ones((1, 19) if tb == "N" else (19, 1), f16)
        C = np.full((45, 19), np.nan, f16)
        with gemmkit.use_arch(path):
            got = _hgemm_padded(ta, tb, 1.0, Ak, ones, 0.0, C, 2)
        with gemmkit.use_arch("generic"):
            want = _hgemm_padded(ta, tb, 1.0, Ak, ones, 0.0, C, 2)
        _same_half_bits(got, want, ("widen", ta, tb))
        assert np.array_equal(got[:, :19], np.repeat(A, 19, axis=1)), ("widen", ta, tb)  # -0 == 0 here

    # the narrowing: C := beta * C (alpha 0) rounds float products of every size once, by row (n 1 .. 43)
    C0 = np.concatenate([rng.uniform(-1, 1, (6, 43)), rng.uniform(60000, 65504, (2, 43)),
                         rng.uniform(-2.0 ** -14, 2.0 ** -14, (3, 43))]).astype(f16)
    C0[0, :5] = (np.nan, np.inf, -np.inf, 0.0, -0.0)
    for beta in (0.7, 1.0 + 2.0 ** -11, 1.0009765625 + 2.0 ** -12, 3e-5, 2.0 ** -13 * 1.37, 1.00006, -1.3):
        for N in (1, 3, 4, 7, 8, 9, 12, 43):
            with gemmkit.use_arch(path):
                got = _hgemm_padded("N", "N", 0.0, C0[:, :1], C0[:1, :N], beta, C0[:, :N], 1 + N % 2)
            with gemmkit.use_arch("generic"):
                want = _hgemm_padded("N", "N", 0.0, C0[:, :1], C0[:1, :N], beta, C0[:, :N], 1 + N % 2)
            _same_half_bits(got, want, ("narrow", beta, N))
            with np.errstate(over="ignore", invalid="ignore"):
                ref = (C0[:, :N].astype(np.float32) * np.float32(beta)).astype(f16)
            _same_half_bits(got[:, :N], ref, ("narrow", beta, N))


def op_t(x, t):
    return x.T if t == "T" else x
