"""Tests of the dynamic W8A8 layer pieces: quant.quantize_per_token against a NumPy float32 reference of its
formula (bit for bit, every path, edge lengths, threads), quantize_weight, Int8Linear (exact int8 part,
bit-identical across paths and threads, pickling) and the argument errors."""
import pickle

import numpy as np
import pytest

import gemmkit
from gemmkit import _core, quant

ml_dtypes = pytest.importorskip("ml_dtypes")
BF16 = np.dtype(ml_dtypes.bfloat16)
DTYPES = [np.dtype(np.float32), np.dtype(np.float16), BF16]
# around the vector widths 8 / 16 / 32 / 64 and a model's 4096
LENGTHS = [1, 2, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 63, 64, 65, 100, 4099]


def reference(x, axis=-1, smooth=None, multiply=False):
    """The documented formula in NumPy float32 (one IEEE rounding per operation)."""
    xf = np.moveaxis(np.asarray(x).astype(np.float32), axis, -1)
    if smooth is not None:
        xf = xf * smooth if multiply else xf / smooth
    with np.errstate(all="ignore"):
        amax = np.abs(xf).max(-1, keepdims=True, initial=np.float32(0))
        scale = (amax / np.float32(127)).astype(np.float32)
        bad = ~np.isfinite(amax)
        scale[bad] = np.nan
        t = xf / scale
        q = np.clip(np.rint(t), -127, 127)
        q[~(scale > 0).repeat(xf.shape[-1], -1)] = 0
    return np.moveaxis(q.astype(np.int8), -1, axis), scale[..., 0]


def tokens(rng, m, k, dtype):
    """Random tokens of varied magnitude, plus exact halves (x / scale = n + 0.5: round half to even)."""
    x = rng.standard_normal((m, k)).astype(np.float32) * np.float32(10.0) ** rng.integers(-3, 4, (m, 1))
    if m > 1 and k > 1:
        row = (np.arange(k) % 9 - 4.5).astype(np.float32)
        row[0] = 127.0  # scale 1.0: row's values are n + 0.5
        x[1] = row
    return x.astype(dtype)


def assert_quant_equal(got, want):
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1].view(np.uint32), np.asarray(want[1], np.float32).view(np.uint32))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("k", LENGTHS)
def test_quantize_matches_reference(arch, dtype, k):
    rng = np.random.default_rng(k)
    x = tokens(rng, 5, k, dtype)
    assert_quant_equal(quant.quantize_per_token(x), reference(x))


@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
@pytest.mark.parametrize("k", [1, 15, 16, 17, 33, 64, 65])
def test_quantize_smooth_matches_reference(arch, dtype, k):
    rng = np.random.default_rng(100 + k)
    x = tokens(rng, 4, k, dtype)
    s = (rng.random(k) * 4 + 0.1).astype(np.float32)
    assert_quant_equal(quant.quantize_per_token(x, smooth=s), reference(x, smooth=s))
    w = rng.standard_normal((6, k)).astype(np.float32)
    assert_quant_equal(quant.quantize_weight(w, smooth=s), reference(w, smooth=s, multiply=True))


def test_quantize_divides(arch):
    """Many tokens of random scale: x / scale, not x * (1 / scale) nor x * (127 / max), which round
    differently for some values."""
    rng = np.random.default_rng(5)
    x = ((rng.random((3000, 48)) * 2 - 1) * 2.0 ** rng.integers(-20, 20, (3000, 1))).astype(np.float32)
    assert_quant_equal(quant.quantize_per_token(x), reference(x))
    # values next to the rounding ties: (n + 1/2) * scale rounded to float32, for a token maximum `amax`
    # (here x * (1 / scale) rounds differently from x / scale for about 1 value in 8)
    m, k = 2000, 40
    amax = (rng.random((m, 1)) * 2.0 ** rng.integers(-30, 30, (m, 1))).astype(np.float32)
    scale = (amax / np.float32(127)).astype(np.float64)
    x = ((rng.integers(-126, 126, (m, k)) + 0.5) * scale).astype(np.float32)
    x[:, 0] = amax[:, 0]
    for dtype in DTYPES:
        assert_quant_equal(quant.quantize_per_token(x.astype(dtype)), reference(x.astype(dtype)))


def test_quantize_special_tokens(arch):
    k = 37
    x = np.ones((9, k), np.float32)
    x[0] = 0.0                      # zeros: scale 0, q 0
    x[1] = -0.0
    x[2, 5] = np.nan                # NaN: scale NaN, q 0
    x[3, 36] = np.inf
    x[4, 0] = -np.inf
    x[5] = 1e-44                    # subnormal: max / 127 underflows to 0
    x[6] = np.float32(3.4e38)       # near the float32 max
    x[7, ::2] = -np.float32(3e-39)  # subnormal values, finite scale
    x[7, 1::2] = np.float32(1e-39)
    x[8, 3] = 127.0                 # ordinary
    q, s = quant.quantize_per_token(x)
    assert_quant_equal((q, s), reference(x))
    assert s[0] == 0 and s[1] == 0 and s[5] == 0 and not q[[0, 1, 5]].any()
    assert np.isnan(s[2:5]).all() and not q[2:5].any()
    assert (np.abs(q) <= 127).all()


def test_quantize_threads_and_layouts(arch, nthreads):
    rng = np.random.default_rng(7)
    x = tokens(rng, 96, 4096 + 5, np.float32)  # enough values to split among threads
    want = reference(x)
    assert_quant_equal(quant.quantize_per_token(x), want)
    # 3-D, axis 0 and a strided view
    x3 = rng.standard_normal((3, 40, 33)).astype(np.float16)
    for axis in (0, 1, -1):
        assert_quant_equal(quant.quantize_per_token(x3, axis=axis), reference(x3, axis=axis))
    xs = x[::2, 3:-2]
    assert_quant_equal(quant.quantize_per_token(xs), reference(xs))


def test_quantize_past_the_caches(arch, nthreads):
    """An x larger than a quarter of the last-level cache: the AVX-512 kernel takes its four-token loop there
    (csrc/quantize.c, qz_in_cache_bytes) and its pipelined one below; both give the reference's bytes, with
    special tokens, the smoothing and a strided x."""
    caches = gemmkit.show_config(print_out=False)["caches"]
    last = caches["L3"]["size"] or caches["L2"]["size"] or (8 << 20)
    k = 1024 + 37
    m = (last // 4) // (2 * k) + 9  # bfloat16: 2 bytes a value, just past the limit
    if m * k * 2 > 160 << 20:
        pytest.skip(f"a last-level cache of {last >> 20} MiB: x would be {m * k * 2 >> 20} MiB")
    rng = np.random.default_rng(11)
    x = tokens(rng, m, k, np.float32)
    x[2] = 0.0
    x[m // 2, 7] = np.nan
    x[m - 1, 3] = np.inf
    xb = x.astype(BF16)
    assert_quant_equal(quant.quantize_per_token(xb), reference(xb))
    sm = (rng.random(k) * 4 + 0.1).astype(np.float32)
    assert_quant_equal(quant.quantize_per_token(xb, smooth=sm), reference(xb, smooth=sm))
    wide = np.zeros((m, k + 40), np.float32)
    wide[:, 5:5 + k] = x
    xs = wide[:, 5:5 + k]
    assert_quant_equal(quant.quantize_per_token(xs), reference(xs))


def test_quantize_out_arguments():
    rng = np.random.default_rng(8)
    x = rng.standard_normal((4, 6, 50)).astype(np.float32)
    out = np.zeros((4, 6, 50), np.int8)
    sc = np.zeros((4, 6), np.float32)
    q, s = quant.quantize_per_token(x, out=out, scale_out=sc)
    assert q is out and s is sc
    assert_quant_equal((out, sc), reference(x))
    out_f = np.zeros((4, 6, 50), np.int8, order="F")   # a layout the core cannot write: copied back
    sc_f = np.zeros((6, 4), np.float32).T
    quant.quantize_per_token(x, out=out_f, scale_out=sc_f)
    assert_quant_equal((out_f, sc_f), reference(x))
    out1 = np.zeros((4, 6, 50), np.int8)
    q, s = quant.quantize_per_token(x, axis=1, out=out1, scale_out=np.zeros((4, 50), np.float32))
    assert_quant_equal((out1, s), reference(x, axis=1))


def test_quantize_out_overlapping_x():
    """Outputs that share bytes with x (or each other) give the bytes of a separate x, on the fast path's
    layouts (C-contiguous everything) too."""
    rng = np.random.default_rng(9)
    raw = np.zeros(8 * 50 * 4 + 64, np.uint8)
    x = raw[:1600].view(np.float32).reshape(8, 50)
    x[...] = rng.standard_normal((8, 50)).astype(np.float32)
    want = reference(x.copy())
    out = raw[800:1200].view(np.int8).reshape(8, 50)        # q rows land on x's rows 4-5
    q, s = quant.quantize_per_token(x, out=out)
    assert q is out
    assert_quant_equal((q, s), want)
    x = raw[:1600].view(np.float32).reshape(8, 50)
    x[...] = want_x = rng.standard_normal((8, 50)).astype(np.float32)
    sc = raw[1600 - 32:1600].view(np.float32)               # the scales land on x's last row
    q, s = quant.quantize_per_token(x, scale_out=sc)
    assert s is sc
    assert_quant_equal((q, s), reference(want_x))
    buf = np.zeros(8 * 50 + 64, np.uint8)                     # out and scale_out overlapping each other
    with pytest.raises(ValueError, match="overlap"):
        quant.quantize_per_token(want_x, out=buf[:400].view(np.int8).reshape(8, 50),
                                 scale_out=buf[384:416].view(np.float32))


@pytest.mark.parametrize("kwargs, exc, word", [
    (dict(x=np.ones((2, 3))), TypeError, "x"),                       # float64
    (dict(x=np.ones((2, 3), np.int8)), TypeError, "x"),
    (dict(x=np.float32(1)), ValueError, "x"),
    (dict(axis=2), ValueError, "axis"),
    (dict(axis=1.0), TypeError, "axis"),
    (dict(smooth=np.ones(4, np.float32)), ValueError, "smooth"),
    (dict(smooth=np.ones(3)), TypeError, "smooth"),
    (dict(smooth=np.array([1, 0, 1], np.float32)), ValueError, "smooth"),
    (dict(smooth=np.array([1, np.nan, 1], np.float32)), ValueError, "smooth"),
    (dict(out=np.zeros((2, 3), np.int16)), TypeError, "out"),
    (dict(out=np.zeros((3, 2), np.int8)), ValueError, "out"),
    (dict(scale_out=np.zeros(3, np.float32)), ValueError, "scale_out"),
    (dict(scale_out=np.zeros(2, np.float64)), TypeError, "scale_out"),
])
def test_quantize_errors_leave_outputs(kwargs, exc, word):
    args = dict(x=np.ones((2, 3), np.float32))
    args.update(kwargs)
    x = args.pop("x")
    out = np.full((2, 3), 5, np.int8)
    sc = np.full(2, 7, np.float32)
    args.setdefault("out", out)
    args.setdefault("scale_out", sc)
    with pytest.raises(exc, match=word):
        quant.quantize_per_token(x, **args)
    assert (out == 5).all() and (sc == 7).all()


def test_core_entry_rejects_short_buffers():
    x = np.ones(10, np.float32)
    with pytest.raises(ValueError, match="x"):
        _core.quantize_per_token_rows("float32", 2, 6, x, 6, None, "divide", np.empty(12, np.int8), 6,
                                      np.empty(2, np.float32))
    with pytest.raises(ValueError, match="q"):
        _core.quantize_per_token_rows("float32", 1, 10, x, 10, None, "divide", np.empty(9, np.int8), 10,
                                      np.empty(1, np.float32))
    with pytest.raises(ValueError, match="smooth_mode"):
        _core.quantize_per_token_rows("float32", 1, 10, x, 10, None, "add", np.empty(10, np.int8), 10,
                                      np.empty(1, np.float32))


# ---- Int8Linear -------------------------------------------------------------------------------------

def layer_reference(layer, x, name):
    """The layer's documented result from NumPy: the quantizer's reference, the int64 sum, the epilogue in
    float32 NumPy steps, rounded into the output type."""
    q, s = reference(x, smooth=layer.smooth)
    k = x.shape[-1]
    acc = q.reshape(-1, k).astype(np.int64) @ layer.weight_q.astype(np.int64).T
    with np.errstate(all="ignore"):
        y = (acc.astype(np.float32) * layer.weight_scale) * s.reshape(-1, 1)
        if layer.bias is not None:
            y = y + layer.bias
    dtype = BF16 if name == "bfloat16" else np.dtype(name)
    return y.astype(dtype).reshape(x.shape[:-1] + (layer.out_features,))


def same_bits(a, b):
    np.testing.assert_array_equal(np.asarray(a).view(np.uint8), np.asarray(b).view(np.uint8))


@pytest.mark.parametrize("out_dtype", ["float32", "float16", "bfloat16"])
@pytest.mark.parametrize("dtype", DTYPES, ids=lambda d: d.name)
def test_layer_exact_and_identical_across_paths(out_dtype, dtype):
    rng = np.random.default_rng(11)
    k, n = 200, 72
    w = rng.standard_normal((n, k)).astype(np.float32)
    b = rng.standard_normal(n).astype(np.float32)
    s = (rng.random(k) + 0.5).astype(np.float32)
    # C-contiguous x (one core call) and a Fortran-ordered one (the general path)
    xs = [tokens(rng, 1, k, dtype), tokens(rng, 33, k, dtype), tokens(rng, 30, k, dtype).reshape(2, 15, k),
          np.asfortranarray(tokens(rng, 20, k, dtype))]
    xs[1][3] = 0  # a zero token: the bias
    results = {}
    for arch in gemmkit.available_archs():
        with gemmkit.use_arch(arch):
            layer = quant.Int8Linear.from_float(w, b, smooth=s, out_dtype=out_dtype)
            for t in (1, 2):
                with _threads(t):
                    for i, x in enumerate(xs):
                        y = layer(x)
                        assert y.shape == x.shape[:-1] + (n,)
                        same_bits(y, layer_reference(layer, x, out_dtype))
                        results.setdefault(i, y)
                        same_bits(y, results[i])
    assert (np.asarray(results[1][3], np.float32) == np.asarray(b.astype(results[1].dtype), np.float32)).all()


class _threads:
    def __init__(self, n):
        self.n = n

    def __enter__(self):
        self.prev = gemmkit.get_num_threads()
        gemmkit.set_num_threads(self.n)

    def __exit__(self, *a):
        gemmkit.set_num_threads(self.prev)


def test_layer_large_threads(nthreads):
    rng = np.random.default_rng(12)
    k, n = 1024, 256
    w = rng.standard_normal((n, k)).astype(np.float32)
    layer = quant.Int8Linear.from_float(w.T, transpose=True)  # the (in, out) form gives the same layer
    same_bits(layer.weight_q, quant.quantize_weight(w)[0])
    x = tokens(rng, 130, k, np.float32)
    same_bits(layer(x), layer_reference(layer, x, "float32"))


def test_layer_pickle_and_out():
    rng = np.random.default_rng(13)
    w = rng.standard_normal((40, 64)).astype(np.float32)
    layer = quant.Int8Linear.from_float(w, rng.standard_normal(40).astype(np.float32),
                                        smooth=(rng.random(64) + 0.5).astype(np.float32), out_dtype="float16")
    x = tokens(rng, 7, 64, np.float32)
    blob = pickle.dumps(layer)
    assert len(blob) < 40 * 64 + 2000  # the int8 weight and scales, no packed panels
    again = pickle.loads(blob)
    same_bits(again(x), layer(x))
    assert again.weight_q.dtype == np.int8 and again.out_dtype == "float16"
    out = np.zeros((7, 40), np.float16)
    assert layer(x, out=out) is out
    same_bits(out, layer(x))
    y32 = layer(x, out_dtype="float32")
    same_bits(y32, layer_reference(layer, x, "float32"))


def test_layer_errors():
    w = np.ones((4, 8), np.float32)
    layer = quant.Int8Linear.from_float(w)
    with pytest.raises(ValueError, match="x"):
        layer(np.ones((2, 7), np.float32))
    with pytest.raises(TypeError, match="x"):
        layer(np.ones((2, 8), np.float64))
    with pytest.raises(TypeError, match="weight_q"):
        quant.Int8Linear(np.ones((4, 8), np.int16), np.ones(4, np.float32))
    with pytest.raises(ValueError, match="weight_scale"):
        quant.Int8Linear(np.ones((4, 8), np.int8), np.ones(3, np.float32))
    with pytest.raises(ValueError, match="bias"):
        quant.Int8Linear.from_float(w, np.ones(5, np.float32))
    with pytest.raises(ValueError, match="smooth"):
        quant.Int8Linear.from_float(w, smooth=np.ones(4, np.float32))
    with pytest.raises(TypeError, match="out_dtype"):
        quant.Int8Linear.from_float(w, out_dtype="int8")
    with pytest.raises(ValueError, match="weight"):
        quant.quantize_weight(np.ones(8, np.float32))
    out = np.full((2, 3), 9, np.float32)
    with pytest.raises(ValueError, match="out"):
        layer(np.ones((2, 8), np.float32), out=out)
    assert (out == 9).all()


def test_per_token_beats_per_tensor_on_outliers():
    """Tokens of different magnitude with outlier channels (as in LLMs): per-token scales keep the small
    tokens' resolution where one scale per tensor does not; smoothing helps the outlier channels."""
    rng = np.random.default_rng(14)
    m, k, n = 64, 512, 128
    x = rng.standard_normal((m, k)).astype(np.float32) * np.exp(rng.standard_normal((m, 1)) * 1.5).astype(np.float32)
    x[:, [3, 77, 300]] *= 60
    w = (rng.standard_normal((n, k)) * 0.05).astype(np.float32)
    errs = {}
    for act in ("per_token", "per_tensor"):
        layer = quant.Int8Linear.from_float(w, act_scale=act)
        errs[act] = quant.quantization_error(layer, x, w)
    s = np.sqrt(np.abs(x).max(0) / np.abs(w).max(0)).astype(np.float32)  # SmoothQuant alpha 0.5
    errs["smooth"] = quant.quantization_error(quant.Int8Linear.from_float(w, smooth=s), x, w)
    assert errs["per_token"]["mean_rel_error"] < errs["per_tensor"]["mean_rel_error"] / 2
    assert errs["smooth"]["mean_rel_error"] < errs["per_token"]["mean_rel_error"]
    assert 0 < errs["smooth"]["max_rel_error"] < 0.05
