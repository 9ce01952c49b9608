"""Tests of the W8A8 speed paths: the few-row int8 path over a packed weight (M <= 4, column panels
read side by side) and the quantizer's 64-value main loop with its offset-reciprocal tie test, bit for bit."""
import numpy as np
import pytest

from gemmkit import quant

ml_dtypes = pytest.importorskip("ml_dtypes")
DTYPES = [np.dtype(np.float32), np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)]


def reference(x, smooth=None):
    """The documented quantize formula in NumPy float32, one IEEE rounding per operation (tokens along -1; a
    token with an infinity, e.g. from a float16 overflow, gets scale NaN and q 0)."""
    xf = np.asarray(x).astype(np.float32)
    if smooth is not None:
        xf = xf / smooth
    amax = np.abs(xf).max(-1, keepdims=True)
    scale = (amax / np.float32(127)).astype(np.float32)
    scale[~np.isfinite(amax)] = np.nan
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.clip(np.rint(xf / scale), -127, 127)
    q[~(scale > 0).repeat(xf.shape[-1], -1)] = 0
    return q.astype(np.int8), scale[..., 0]


def assert_quant_equal(got, want):
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1].view(np.uint32), np.asarray(want[1], np.float32).view(np.uint32))


def exact_per_token(x, w, x_scale, w_scale, out_dtype):
    """matmul_per_token's documented result from an int64 product: float32(acc) * x_scale * w_scale."""
    acc = (x.astype(np.int64) @ w.T.astype(np.int64)).astype(np.float32)
    y = (acc * x_scale[:, None]).astype(np.float32) * w_scale[None, :]
    return y.astype(np.float32)


# M 1-4 take the panel path (4 column panels at a time for 1-2 rows, 2 for 3-4), 5-6 the tile path; N
# around the 32-column panel and the 4-panel step (edges: 1, 31, 33, 100, 129, 160); K around the k group
SHAPES = [(m, k, n) for m in (1, 2, 3, 4, 5) for (k, n) in ((1, 1), (3, 31), (4, 33), (65, 100), (130, 129),
                                                             (257, 160), (1000, 96))]


@pytest.mark.parametrize("m,k,n", SHAPES)
def test_few_rows_packed_weight_exact(arch, nthreads, m, k, n):
    rng = np.random.default_rng(m * 10007 + k * 31 + n)
    x = rng.integers(-127, 128, (m, k), dtype=np.int8)
    w = rng.integers(-127, 128, (n, k), dtype=np.int8)
    x[0, : min(k, 8)] = 127  # the largest sums
    w[:, : min(k, 8)] = 127
    xs = (rng.random(m) + 0.5).astype(np.float32)
    ws = (rng.random(n) * 1e-2 + 1e-3).astype(np.float32)
    pk = quant.pack_weight(w, transpose_b=True)
    got = quant.matmul_per_token(x, pk, ws, xs, out_dtype="float32")
    want = quant.matmul_per_token(x, np.ascontiguousarray(w.T), ws, xs, out_dtype="float32")
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    ref = exact_per_token(x, w, xs, ws, "float32")
    np.testing.assert_allclose(got, ref, rtol=2e-6, atol=0)  # float32(acc) exact up to 2^24, then scaled
    for od in ("float16", "bfloat16"):
        a = quant.matmul_per_token(x, pk, ws, xs, out_dtype=od)
        b = quant.matmul_per_token(x, np.ascontiguousarray(w.T), ws, xs, out_dtype=od)
        np.testing.assert_array_equal(a.view(np.uint16), b.view(np.uint16))


def test_few_rows_layer_same_bytes_across_batches(arch, nthreads):
    """A token's output row is the same bytes whether it runs alone (the panel path) or among 7 (tiles)."""
    rng = np.random.default_rng(3)
    k, n = 300, 200
    layer = quant.Int8Linear.from_float(rng.standard_normal((n, k)).astype(np.float32),
                                        rng.standard_normal(n).astype(np.float32))
    x = rng.standard_normal((7, k)).astype(np.float32)
    whole = layer(x)
    for i in range(7):
        np.testing.assert_array_equal(layer(x[i:i + 1]).view(np.uint32), whole[i:i + 1].view(np.uint32))
    for m in (2, 3, 4):
        np.testing.assert_array_equal(layer(x[:m]).view(np.uint32), whole[:m].view(np.uint32))


def near_tie_tokens(rng, m, k):
    """Tokens of random scale whose values sit on the rounding ties x / scale = n + 1/2 and one to a few
    float32 ulps either side of them (both roundings occur), the token maximum first."""
    amax = (rng.random((m, 1)) * 2.0 ** rng.integers(-30, 30, (m, 1)) + 1e-30).astype(np.float32)
    scale = (amax / np.float32(127)).astype(np.float32)
    half = (rng.integers(-127, 127, (m, k)) + 0.5).astype(np.float64)
    x = (half * scale.astype(np.float64)).astype(np.float32)
    steps = rng.integers(-3, 4, (m, k))
    for s in range(1, 4):  # move by s ulps towards +inf / -inf
        for sign in (1, -1):
            sel = steps == sign * s
            y = x[sel]
            for _ in range(s):
                y = np.nextafter(y, np.float32(sign * np.inf), dtype=np.float32)
            x[sel] = y
    x[:, 0] = amax[:, 0]
    return x


@pytest.mark.parametrize("k", [8, 21, 40, 64, 77, 128, 192, 4096 + 64, 4096 + 45])
def test_quantize_main_loop_near_ties(arch, k):
    """The 64-value main loop and the 32-, 16- and 8-value and scalar tails (the offset reciprocal and its tie
    test) next to every tie: the bytes of x / scale rounded half to even, for float32, float16 and bfloat16
    inputs; token counts that leave 1-3 tokens after the last group of four."""
    rng = np.random.default_rng(k)
    x = near_tie_tokens(rng, 301 if k < 1000 else 23, k)
    for dtype in DTYPES:
        xd = x.astype(dtype)
        assert_quant_equal(quant.quantize_per_token(xd), reference(xd))


def test_quantize_main_loop_wide_range(arch):
    """Values spread over the whole [-127, 127] range at random fractions, 64-value groups without ties (the
    fast lane taken), and the token's maximum anywhere in it (q = +-127 exactly)."""
    rng = np.random.default_rng(11)
    m, k = 400, 256
    x = ((rng.random((m, k)) * 2 - 1) * 2.0 ** rng.integers(-40, 40, (m, 1))).astype(np.float32)
    at = rng.integers(0, k, m)
    x[np.arange(m), at] = np.abs(x).max(1) * np.float32(-1.5)
    want = reference(x)
    assert_quant_equal(quant.quantize_per_token(x), want)
    assert (np.abs(want[0][np.arange(m), at]) == 127).all()


def test_quantize_main_loop_smooth_near_ties(arch):
    """With a smoothing vector the ties are those of x / smooth."""
    rng = np.random.default_rng(12)
    m, k = 100, 128
    s = (rng.random(k) * 3 + 0.25).astype(np.float32)
    xs = near_tie_tokens(rng, m, k)
    x = (xs * s).astype(np.float32)  # x / s is near xs (one rounding each way)
    assert_quant_equal(quant.quantize_per_token(x, smooth=s), reference(x, smooth=s))
