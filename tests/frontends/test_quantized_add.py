"""Tests of gemmkit.quant.quantized_add: bit for bit against NumPy float32 models of both formulas and
against onnxruntime's QLinearAdd, on every kernel path, with broadcasting, strides, in place, bad input."""
import platform

import numpy as np
import pytest

import gemmkit
from gemmkit import quant

QTYPES = (np.uint8, np.int8)
f32 = np.float32


# ---- NumPy models ------------------------------------------------------------------------------

def model_directml(a, sa, za, b, sb, zb, sc, zc, out_dtype):
    """clamp(round_half_even(((a - za) * sa + (b - zb) * sb) / sc) + zc), each step in float32."""
    za = np.int32(0) if za is None else np.asarray(za).astype(np.int32)
    zb = np.int32(0) if zb is None else np.asarray(zb).astype(np.int32)
    zc = np.int32(0) if zc is None else np.asarray(zc).astype(np.int32)
    with np.errstate(over="ignore", invalid="ignore"):
        av = (a.astype(np.int32) - za).astype(f32) * np.asarray(sa, f32)
        bv = (b.astype(np.int32) - zb).astype(f32) * np.asarray(sb, f32)
        q = (av + bv) / np.asarray(sc, f32)
    assert q.dtype == f32
    # clamped to +-2^20 before rounding (no result changes; NaN from inf - inf goes to the low end)
    q = np.where(np.isnan(q), f32(-2 ** 20), np.clip(q, f32(-2 ** 20), f32(2 ** 20)))
    info = np.iinfo(out_dtype)
    return np.clip(np.rint(q).astype(np.int64) + zc, info.min, info.max).astype(out_dtype)


def fma32(x, y, z):
    """float32 fused multiply-add, correctly rounded: the float64 product of a float32 and a small
    integer is exact, the float64 sum is rounded to odd, then rounded once to float32."""
    x, y, z = (np.asarray(v, np.float64) for v in (x, y, z))
    with np.errstate(over="ignore", invalid="ignore"):
        return _fma32(x, y, z)


def _fma32(x, y, z):
    p = x * y
    s = p + z
    bp = s - z
    err = (p - bp) + (z - (s - bp))
    odd = (np.asarray(s).view(np.int64) & 1) == 1
    s = np.where((err != 0) & ~odd & np.isfinite(s), np.nextafter(s, np.where(err > 0, np.inf, -np.inf)), s)
    return s.astype(f32)


def ort_a_first(a_shape, b_shape):
    shape = np.broadcast_shapes(a_shape, b_shape)
    a_full = (1,) * (len(shape) - len(a_shape)) + tuple(a_shape)
    last = [d for d, n in enumerate(shape) if n > 1]
    return not last or a_full[last[-1]] == 1


def model_onnxruntime(a, sa, za, b, sb, zb, sc, zc, out_dtype):
    """ONNX Runtime's x86-64 QLinearAdd (found by experiment, see the README)."""
    za, zb, zc = (f32(0) if z is None else f32(int(z)) for z in (za, zb, zc))
    af, bf = a.astype(f32), b.astype(f32)
    with np.errstate(over="ignore", invalid="ignore"):
        ra, rb = f32(f32(sa) / f32(sc)), f32(f32(sb) / f32(sc))
        if ort_a_first(a.shape, b.shape):
            fixed = f32(zc - fma32(rb, zb, f32(ra * za)))
            v = fma32(bf, rb, fma32(af, ra, fixed))
        else:
            fixed = f32(zc - fma32(ra, za, f32(rb * zb)))
            v = fma32(af, ra, fma32(bf, rb, fixed))
    v = np.asarray(v, f32)
    with np.errstate(invalid="ignore"):
        ok = (v >= -2.0 ** 31) & (v < 2.0 ** 31)
    r = np.where(ok, np.rint(np.where(ok, v, 0)), -2.0 ** 31).astype(np.int64)
    info = np.iinfo(out_dtype)
    return np.clip(r, info.min, info.max).astype(out_dtype)


# ---- generators ----------------------------------------------------------------------------------

def random_q(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, size=shape, endpoint=False).astype(dtype)


def random_strided(rng, shape, dtype):
    """An array of `shape` that is a view with some reversed / stepped axes, or a plain one."""
    kind = rng.integers(3)
    if kind == 0 or not shape:
        return random_q(rng, shape, dtype)
    steps = [int(rng.choice([1, 2, -1, -2])) for _ in shape]
    base = random_q(rng, tuple(n * abs(s) for n, s in zip(shape, steps)), dtype)
    view = base[tuple(slice(None, None, s) for s in steps)]
    if kind == 2 and len(shape) >= 2:
        view = np.asfortranarray(view)
    assert view.shape == tuple(shape)
    return view


def random_broadcast_pair(rng, max_ndim=8):
    ndim = int(rng.integers(0, max_ndim + 1))
    shape = [int(rng.integers(1, 5)) for _ in range(ndim)]
    if ndim and rng.random() < 0.5:
        shape[-1] = int(rng.integers(1, 70))  # runs longer than a SIMD step, with tails
    a_shape = [n if rng.random() < 0.7 else 1 for n in shape]
    b_shape = [n if rng.random() < 0.7 else 1 for n in shape]
    a_shape = a_shape[int(rng.integers(0, ndim + 1)) if rng.random() < 0.3 else 0:]
    return tuple(a_shape), tuple(b_shape)


def random_scale(rng):
    return f32(rng.choice([rng.uniform(0.001, 0.2), 2.0 ** int(rng.integers(-8, 3))]))


def random_zp(rng, dtype):
    info = np.iinfo(dtype)
    return int(rng.integers(info.min, info.max + 1))


# ---- the default (DirectML) formula ----------------------------------------------------------------

@pytest.mark.parametrize("seed", range(12))
def test_directml_matches_model(arch, seed):
    rng = np.random.default_rng(seed)
    for _ in range(25):
        a_shape, b_shape = random_broadcast_pair(rng)
        adt, bdt, odt = (QTYPES[int(rng.integers(2))] for _ in range(3))
        a, b = random_strided(rng, a_shape, adt), random_strided(rng, b_shape, bdt)
        sa, sb, sc = random_scale(rng), random_scale(rng), random_scale(rng)
        za, zb, zc = random_zp(rng, adt), random_zp(rng, bdt), random_zp(rng, odt)
        if rng.random() < 0.2:
            za = zb = None
        got = quant.quantized_add(a, sa, za, b, sb, zb, sc, odt(zc))
        want = model_directml(a, sa, za, b, sb, zb, sc, zc, odt)
        assert got.dtype == odt and got.shape == want.shape and got.flags.c_contiguous
        np.testing.assert_array_equal(got, want, err_msg=f"{a_shape} {b_shape} {adt} {bdt} {odt}")


def test_ties_round_half_to_even(arch):
    """Quotients exactly k + 0.5 round to the even neighbour (half away from zero would fail)."""
    for dt in QTYPES:
        info = np.iinfo(dt)
        vals = np.arange(info.min, info.max + 1, dtype=dt)
        a = np.repeat(vals, 3)[:700]
        b = np.tile(vals[:3], 256)[:700].astype(dt)
        got = quant.quantized_add(a, 0.5, 0, b, 1.0, 0, 1.0, dt(0))
        np.testing.assert_array_equal(got, model_directml(a, 0.5, 0, b, 1.0, 0, 1.0, 0, dt))
        q = a.astype(np.float64) * 0.5 + b
        half = np.abs(q - np.floor(q) - 0.5) < 1e-12
        assert half.sum() > 100
        expect = np.clip(np.rint(q[half]), info.min, info.max)  # numpy rint: half to even
        np.testing.assert_array_equal(got[half].astype(np.int64), expect.astype(np.int64))
        assert got[half][np.abs(q[half]) < 100].astype(np.int64).tolist() != \
            np.floor(q[half][np.abs(q[half]) < 100] + 0.5).astype(np.int64).tolist()


def test_ties_with_zero_point_and_clamp(arch):
    """The rounding comes before the output zero point: (2.5 -> 2) + 3 = 5, not round(5.5) = 6."""
    a = np.array([5, 7, 9, 11, 255, 0], np.uint8)
    b = np.zeros(6, np.uint8)
    got = quant.quantized_add(a, 0.5, 0, b, 1.0, 0, 1.0, np.uint8(3))
    np.testing.assert_array_equal(got, [5, 7, 7, 9, 131, 3])
    got = quant.quantized_add(a, 0.5, 0, b, 1.0, 0, 0.25, np.int8(-100))
    np.testing.assert_array_equal(got, [-90, -86, -82, -78, 127, -100])


@pytest.mark.parametrize("seed", range(4))
def test_per_axis_scales_and_zero_points(arch, seed):
    rng = np.random.default_rng(100 + seed)
    for _ in range(10):
        shape = tuple(int(rng.integers(1, 6)) for _ in range(int(rng.integers(1, 5))))
        a = random_strided(rng, shape, np.uint8)
        b = random_strided(rng, shape[1:], np.int8)
        ax = int(rng.integers(len(shape)))
        pshape = tuple(n if d == ax else 1 for d, n in enumerate(shape))
        sa = rng.uniform(0.01, 0.1, size=pshape).astype(f32)
        za = rng.integers(0, 256, size=pshape).astype(np.uint8)
        sb = f32(0.03) if len(shape) == 1 else rng.uniform(0.01, 0.1, size=shape[-1:]).astype(f32)
        zb = rng.integers(-128, 128, size=np.shape(sb)).astype(np.int8)
        sc = rng.uniform(0.02, 0.2, size=pshape[1:] or (1,)).astype(f32)
        zc = rng.integers(-128, 128, size=np.shape(sc)).astype(np.int8)
        got = quant.quantized_add(a, sa, za, b, sb, zb, sc, zc)
        np.testing.assert_array_equal(got, model_directml(a, sa, za, b, sb, zb, sc, zc, np.int8))


def test_large_tensor_threads(nthreads):
    rng = np.random.default_rng(7)
    a = random_q(rng, (3, 400_001), np.uint8)
    b = random_q(rng, (400_001,), np.uint8)
    for formula, model in (("directml", model_directml), ("onnxruntime", model_onnxruntime)):
        got = quant.quantized_add(a, 0.021, 131, b, 0.037, 7, 0.05, np.uint8(120), formula=formula)
        np.testing.assert_array_equal(got, model(a, 0.021, 131, b, 0.037, 7, 0.05, 120, np.uint8))


def test_zero_d_and_empty(arch):
    a, b = np.array(200, np.uint8), np.array(17, np.uint8)
    got = quant.quantized_add(a, 0.1, 0, b, 0.1, 0, 0.1)
    assert got.shape == () and got == 217
    got = quant.quantized_add(np.zeros((0, 3), np.int8), 0.1, 0, np.zeros(3, np.int8), 0.1, 0, 0.1)
    assert got.shape == (0, 3) and got.dtype == np.int8


def test_overflowing_values_clamp(arch):
    """Huge scale ratios saturate (DirectML clamps; ONNX Runtime's int32 conversion gives the minimum)."""
    a = np.array([0, 1, 255, 128] * 10, np.uint8)
    b = np.array([0, 0, 0, 255] * 10, np.uint8)
    for formula, model in (("directml", model_directml), ("onnxruntime", model_onnxruntime)):
        got = quant.quantized_add(a, 3e38, 0, b, 3e38, 0, 1e-30, formula=formula)
        np.testing.assert_array_equal(got, model(a, 3e38, 0, b, 3e38, 0, 1e-30, 0, np.uint8))
    assert quant.quantized_add(a, 3e38, 0, b, 3e38, 0, 1e-30)[1] == 255


# ---- every pair of input bytes, at sizes where the kernels try their 16-bit fixed-point form ---------
# csrc/qadd.c uses a fixed-point form only after checking, for the call's parameters, that it gives
# the float form's bytes for all 65536 input pairs (on calls of 2^17+ outputs). These cases hold every
# pair, with parameters it accepts (decimal-looking scales) and ones it must refuse (exact ties at
# k + 1/2, where its round-half-up differs; random scales), compared with the NumPy models.

FIXED_POINT_SCALES = [(0.02, 0.03, 0.05), (0.1, 0.2, 0.3), (0.25, 0.125, 0.5), (0.5, 1.0, 1.0), (1.0, 1.0, 2.0),
                      (0.004, 0.006, 0.01), (3.0, -2.0, 0.7), (1 / 255, 2 / 255, 3 / 255)]


def all_pairs(a_dtype, b_dtype, layout):
    """Inputs whose result (2^17 elements) holds every pair of byte values: flat, or with A or B
    repeated along the innermost axis (one value per run)."""
    va = np.arange(256, dtype=np.uint8).view(a_dtype)
    vb = np.arange(256, dtype=np.uint8).view(b_dtype)
    if layout == "flat":
        return np.tile(np.repeat(va, 256), 2), np.tile(vb, 512)
    if layout == "a_repeated":
        return va.reshape(256, 1), np.tile(vb, 2).reshape(1, 512)
    return np.tile(va, 2).reshape(1, 512), vb.reshape(256, 1)


@pytest.mark.parametrize("layout", ["flat", "a_repeated", "b_repeated"])
def test_all_input_pairs_directml(arch, layout):
    rng = np.random.default_rng(400)
    cases = FIXED_POINT_SCALES + [tuple(float(random_scale(rng)) for _ in range(3)) for _ in range(4)]
    for i, (sa, sb, sc) in enumerate(cases):
        adt, bdt, odt = QTYPES[i % 2], QTYPES[(i // 2) % 2], QTYPES[(i // 4) % 2]
        a, b = all_pairs(adt, bdt, layout)
        za, zb, zc = random_zp(rng, adt), random_zp(rng, bdt), random_zp(rng, odt)
        got = quant.quantized_add(a, sa, za, b, sb, zb, sc, odt(zc))
        want = model_directml(a, sa, za, b, sb, zb, sc, zc, odt)
        np.testing.assert_array_equal(got, want, err_msg=f"{sa} {sb} {sc} {za} {zb} {zc} {adt} {bdt} {odt}")


@pytest.mark.parametrize("layout", ["flat", "a_repeated", "b_repeated"])
def test_all_input_pairs_onnxruntime(arch, layout):
    rng = np.random.default_rng(500)
    cases = FIXED_POINT_SCALES + [tuple(float(random_scale(rng)) for _ in range(3)) for _ in range(4)]
    for i, (sa, sb, sc) in enumerate(cases):
        dt = QTYPES[i % 2]
        a, b = all_pairs(dt, dt, layout)
        za, zb, zc = random_zp(rng, dt), random_zp(rng, dt), random_zp(rng, dt)
        got = quant.quantized_add(a, sa, za, b, sb, zb, sc, dt(zc), formula="onnxruntime")
        want = model_onnxruntime(a, sa, za, b, sb, zb, sc, zc, dt)
        np.testing.assert_array_equal(got, want, err_msg=f"{sa} {sb} {sc} {za} {zb} {zc} {dt}")


def test_all_input_pairs_directml_reciprocal_refused(arch):
    """Where the float form may not multiply by 1 / out_scale (it changes some pair: the C core must find
    that and keep dividing), every pair at 2^17 outputs still matches the model."""
    rng = np.random.default_rng(450)
    ia = np.repeat(np.arange(256), 256).astype(np.int32)
    ib = np.tile(np.arange(256), 256).astype(np.int32)
    found = 0
    while found < 3:
        sa, sb, sc = (f32(rng.uniform(0.001, 0.2)) for _ in range(3))
        za, zb, zc = (int(z) for z in rng.integers(0, 256, 3))
        s = (ia - za).astype(f32) * sa + (ib - zb).astype(f32) * sb
        def out(q):
            return np.clip(np.rint(q) + zc, 0, 255)
        if (out(s / sc) == out(s * (f32(1) / sc))).all():
            continue
        found += 1
        a, b = all_pairs(np.uint8, np.uint8, "flat")
        got = quant.quantized_add(a, float(sa), za, b, float(sb), zb, float(sc), np.uint8(zc))
        np.testing.assert_array_equal(got, model_directml(a, sa, za, b, sb, zb, sc, zc, np.uint8))


def test_all_input_pairs_threads(nthreads):
    """The fixed-point check happens once per call before the threads split the work."""
    for formula, model in (("directml", model_directml), ("onnxruntime", model_onnxruntime)):
        a, b = all_pairs(np.uint8, np.uint8, "flat")
        a, b = np.tile(a, 4), np.tile(b, 4)  # 2^19 outputs: two threads
        got = quant.quantized_add(a, 0.02, 128, b, 0.03, 3, 0.05, np.uint8(125), formula=formula)
        np.testing.assert_array_equal(got, model(a, 0.02, 128, b, 0.03, 3, 0.05, 125, np.uint8))


def test_streaming_stores_unaligned_output(nthreads):
    """2^23+ outputs are stored non-temporally after a head up to the vector alignment: an output that
    starts one byte past an alignment, a length with a tail, the fixed-point and the float forms."""
    rng = np.random.default_rng(700)
    n = (1 << 23) + 77
    a, b = random_q(rng, n, np.uint8), random_q(rng, n, np.uint8)
    buf = np.zeros(n + 64 + 1, np.uint8)
    start = 64 - buf.__array_interface__["data"][0] % 64 + 1
    out = buf[start:start + n]
    for formula, model, (sa, sb, sc) in (("directml", model_directml, (0.02, 0.03, 0.05)),
                                         ("onnxruntime", model_onnxruntime, (0.0123, 0.0456, 0.0789))):
        quant.quantized_add(a, sa, 128, b, sb, 3, sc, np.uint8(125), out=out, formula=formula)
        np.testing.assert_array_equal(out, model(a, sa, 128, b, sb, 3, sc, 125, np.uint8))
    assert not buf[:start].any() and not buf[start + n:].any()


# ---- the common call's one C step (_fastpaths.quantized_add_common) against the full front end ---------

def test_common_call_matches_full_path(arch):
    rng = np.random.default_rng(600)
    for _ in range(40):
        shape = tuple(int(rng.integers(1, 40)) for _ in range(int(rng.integers(0, 4))))
        adt, bdt = QTYPES[int(rng.integers(2))], QTYPES[int(rng.integers(2))]
        a, b = random_q(rng, shape, adt), random_q(rng, shape, bdt)
        sa, sb, sc = (float(random_scale(rng)) for _ in range(3))
        za, zb = random_zp(rng, adt), (None if rng.random() < 0.3 else random_zp(rng, bdt))
        if rng.random() < 0.5:  # an int: the result takes a's dtype
            odt = adt
            zc = zc_arg = random_zp(rng, odt)
        else:
            odt = QTYPES[int(rng.integers(2))]
            zc = random_zp(rng, odt)
            zc_arg = odt(zc)
        assert _core_common(a, sa, za, b, sb, zb, sc, zc_arg) is not None or a.size == 0
        want = model_directml(a, sa, za, b, sb, zb, sc, zc, odt)
        np.testing.assert_array_equal(quant.quantized_add(a, sa, za, b, sb, zb, sc, zc_arg), want)
        full = quant.quantized_add(a, sa, za, b, sb, zb, sc, zc_arg, out_dtype=odt)  # the full checks
        np.testing.assert_array_equal(full, want)
        if odt == adt:  # in place
            a2 = a.copy()
            assert quant.quantized_add(a2, sa, za, b, sb, zb, sc, zc_arg, out=a2) is a2
            np.testing.assert_array_equal(a2, want)


def _core_common(a, sa, za, b, sb, zb, sc, zc, out=None, formula="directml"):
    return gemmkit._fastpaths.quantized_add_common(formula, a, sa, za, b, sb, zb, out, sc, zc)


def test_common_call_declines_other_calls():
    """Anything but the common call goes to the full front end (which reads copies, raises the errors)."""
    a, b = np.arange(100, dtype=np.uint8), np.arange(100, dtype=np.uint8)[::-1].copy()
    assert _core_common(a, 0.1, 0, b, 0.1, 0, 0.1, 0) is not None
    for args in [dict(a=a[::2], b=b[::2]), dict(b=b[:50]), dict(sa=0.0), dict(sa=1e39), dict(sa=1),
                 dict(za=256), dict(za=np.int8(0)), dict(zc=np.int32(0)), dict(formula="tflite"),
                 dict(out=np.empty(100, np.int8)), dict(out=np.empty(99, np.uint8)), dict(a=a.astype(np.int16))]:
        kw = dict(a=a, sa=0.1, za=0, b=b, sb=0.1, zb=0, sc=0.1, zc=0)
        kw.update(args)
        assert _core_common(**kw) is None, args
    buf = np.arange(101, dtype=np.uint8)
    out = buf[1:]
    assert _core_common(buf[:100], 0.1, 0, b, 0.1, 0, 0.1, 0, out=out) is None  # out overlaps a, shifted
    want = model_directml(buf[:100].copy(), 0.1, 0, b, 0.1, 0, 0.1, 0, np.uint8)
    quant.quantized_add(buf[:100], 0.1, 0, b, 0.1, 0, 0.1, 0, out=out)
    np.testing.assert_array_equal(out, want)


# ---- formula="onnxruntime" --------------------------------------------------------------------

@pytest.mark.parametrize("seed", range(8))
def test_onnxruntime_formula_matches_model(arch, seed):
    rng = np.random.default_rng(200 + seed)
    for _ in range(25):
        a_shape, b_shape = random_broadcast_pair(rng)
        dt = QTYPES[seed % 2]
        a, b = random_strided(rng, a_shape, dt), random_strided(rng, b_shape, dt)
        args = (random_scale(rng), random_zp(rng, dt), random_scale(rng), random_zp(rng, dt), random_scale(rng),
                random_zp(rng, dt))
        sa, za, sb, zb, sc, zc = args
        got = quant.quantized_add(a, sa, za, b, sb, zb, sc, dt(zc), formula="onnxruntime")
        want = model_onnxruntime(a, sa, za, b, sb, zb, sc, zc, dt)
        np.testing.assert_array_equal(got, want, err_msg=f"{a_shape} {b_shape} {dt}")


def test_formulas_differ_on_ties():
    """ONNX Runtime adds the zero point before rounding: 2.5 + 3 = 5.5 -> 6, DirectML (2.5 -> 2) + 3 = 5."""
    a, b = np.array([5], np.uint8), np.array([0], np.uint8)
    assert quant.quantized_add(a, 0.5, 0, b, 1.0, 0, 1.0, np.uint8(3))[0] == 5
    assert quant.quantized_add(a, 0.5, 0, b, 1.0, 0, 1.0, np.uint8(3), formula="onnxruntime")[0] == 6


def _ort_session(ort, onnx, dt, a_ndim, b_ndim):
    from onnx import TensorProto, helper
    T = TensorProto.UINT8 if dt == np.uint8 else TensorProto.INT8
    names = ["A", "As", "Az", "B", "Bs", "Bz", "Cs", "Cz"]
    types = [T, TensorProto.FLOAT, T, T, TensorProto.FLOAT, T, TensorProto.FLOAT, T]
    shapes = [[None] * a_ndim, [], [], [None] * b_ndim, [], [], [], []]
    inputs = [helper.make_tensor_value_info(n, t, s) for n, t, s in zip(names, types, shapes)]
    node = helper.make_node("QLinearAdd", names, ["C"], domain="com.microsoft")
    graph = helper.make_graph([node], "qladd", inputs, [helper.make_tensor_value_info("C", T, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                    helper.make_opsetid("com.microsoft", 1)])
    model.ir_version = 8  # what every ONNX Runtime of the last years reads (a new onnx writes a newer IR)
    so = ort.SessionOptions()
    so.intra_op_num_threads = 1
    return ort.InferenceSession(model.SerializeToString(), so, providers=["CPUExecutionProvider"])


ORT_X86_AVX2 = (platform.machine().lower() in ("x86_64", "amd64")
                and gemmkit._core.cpu_features().get("avx2", False))


@pytest.mark.skipif(not ORT_X86_AVX2, reason="ONNX Runtime's reproduced kernel is its x86-64 AVX2 one")
@pytest.mark.parametrize("seed", range(6))
def test_onnxruntime_oracle(seed):
    ort = pytest.importorskip("onnxruntime")
    onnx = pytest.importorskip("onnx")
    rng = np.random.default_rng(300 + seed)
    dt = QTYPES[seed % 2]
    sessions = {}
    for i in range(40):
        a_shape, b_shape = random_broadcast_pair(rng, max_ndim=5)
        if i < 4:  # all value pairs: every rounding case of these scales
            vals = np.arange(np.iinfo(dt).min, np.iinfo(dt).max + 1).astype(dt)
            a, b = np.repeat(vals, 256), np.tile(vals, 256)
        else:
            a, b = random_q(rng, a_shape, dt), random_q(rng, b_shape, dt)
        sa, sb, sc = random_scale(rng), random_scale(rng), random_scale(rng)
        za, zb, zc = random_zp(rng, dt), random_zp(rng, dt), random_zp(rng, dt)
        key = (a.ndim, b.ndim)
        if key not in sessions:
            sessions[key] = _ort_session(ort, onnx, dt, *key)
        feed = dict(A=a, As=np.array(sa, f32), Az=np.array(za, dt), B=b, Bs=np.array(sb, f32), Bz=np.array(zb, dt),
                    Cs=np.array(sc, f32), Cz=np.array(zc, dt))
        want = sessions[key].run(None, feed)[0]
        np.testing.assert_array_equal(model_onnxruntime(a, sa, za, b, sb, zb, sc, zc, dt), want)
        for arch in gemmkit.available_archs():
            with gemmkit.use_arch(arch):
                got = quant.quantized_add(a, sa, za, b, sb, zb, sc, dt(zc), formula="onnxruntime")
            np.testing.assert_array_equal(got, want, err_msg=f"{arch} {a.shape} {b.shape} {dt}")


@pytest.mark.skipif(not ORT_X86_AVX2, reason="ONNX Runtime's reproduced kernel is its x86-64 AVX2 one")
@pytest.mark.parametrize("dt", QTYPES)
def test_onnxruntime_oracle_all_pairs_fixed_point_sizes(dt):
    """Every input pair at 2^17 outputs (where the fixed-point form is tried), against onnxruntime."""
    ort = pytest.importorskip("onnxruntime")
    onnx = pytest.importorskip("onnx")
    rng = np.random.default_rng(800)
    sess = _ort_session(ort, onnx, dt, 1, 1)
    a, b = all_pairs(dt, dt, "flat")
    for sa, sb, sc in FIXED_POINT_SCALES:
        za, zb, zc = random_zp(rng, dt), random_zp(rng, dt), random_zp(rng, dt)
        feed = dict(A=a, As=np.array(sa, f32), Az=np.array(za, dt), B=b, Bs=np.array(sb, f32), Bz=np.array(zb, dt),
                    Cs=np.array(sc, f32), Cz=np.array(zc, dt))
        want = sess.run(None, feed)[0]
        for arch in gemmkit.available_archs():
            with gemmkit.use_arch(arch):
                got = quant.quantized_add(a, sa, za, b, sb, zb, sc, dt(zc), formula="onnxruntime")
            np.testing.assert_array_equal(got, want, err_msg=f"{arch} {sa} {sb} {sc} {za} {zb} {zc}")


# ---- out=, in place, output type ---------------------------------------------------------------

def test_in_place(arch):
    rng = np.random.default_rng(5)
    for formula, model in (("directml", model_directml), ("onnxruntime", model_onnxruntime)):
        a = random_q(rng, (37, 41), np.uint8)
        b = random_q(rng, (41,), np.uint8)
        want = model(a, 0.02, 128, b, 0.03, 0, 0.05, 125, np.uint8)
        r = quant.quantized_add(a, 0.02, 128, b, 0.03, None, 0.05, np.uint8(125), out=a, formula=formula)
        assert r is a
        np.testing.assert_array_equal(a, want)
        b2 = random_q(rng, (37, 41), np.uint8)
        a2 = random_q(rng, (41,), np.uint8)
        want = model(a2, 0.02, 128, b2, 0.03, 0, 0.05, 125, np.uint8)
        quant.quantized_add(a2, 0.02, 128, b2, 0.03, None, 0.05, np.uint8(125), out=b2, formula=formula)
        np.testing.assert_array_equal(b2, want)


def test_out_overlapping_in_another_layout(arch):
    rng = np.random.default_rng(6)
    a = random_q(rng, (33, 33), np.int8)
    b = random_q(rng, (33, 33), np.int8)
    want = model_directml(a.T, 0.05, 1, b, 0.07, -3, 0.1, 2, np.int8)
    quant.quantized_add(a.T, 0.05, 1, b, 0.07, -3, 0.1, np.int8(2), out=a)
    np.testing.assert_array_equal(a, want)


def test_out_strided(arch):
    rng = np.random.default_rng(8)
    a, b = random_q(rng, (5, 70), np.uint8), random_q(rng, (5, 70), np.uint8)
    big = np.zeros((10, 140), np.uint8)
    out = big[::-2, ::2]
    quant.quantized_add(a, 0.1, 3, b, 0.2, 4, 0.3, out=out)
    np.testing.assert_array_equal(out, model_directml(a, 0.1, 3, b, 0.2, 4, 0.3, None, np.uint8))
    assert not big[::-2, 1::2].any() and not big[-2::-2].any()


def test_output_type_rules():
    a, b = np.zeros(4, np.uint8), np.zeros(4, np.int8)
    assert quant.quantized_add(a, 1, 0, b, 1, 0, 1, 0).dtype == np.uint8                     # a's
    assert quant.quantized_add(a, 1, 0, b, 1, 0, 1, 0, out_dtype=np.int8).dtype == np.int8   # out_dtype
    assert quant.quantized_add(a, 1, 0, b, 1, 0, 1, np.int8(0)).dtype == np.int8             # zero point's
    assert quant.quantized_add(a, 1, 0, b, 1, 0, 1, np.zeros(4, np.int8)).dtype == np.int8
    with pytest.raises(TypeError, match="out_dtype"):
        quant.quantized_add(a, 1, 0, b, 1, 0, 1, np.int8(0), out_dtype=np.uint8)
    with pytest.raises(TypeError, match="out has dtype"):
        quant.quantized_add(a, 1, 0, b, 1, 0, 1, np.int8(0), out=np.zeros(4, np.uint8))
    assert quant.quantized_add(b, 1, 0, a, 1, 0, 1).dtype == np.int8


# ---- bad input ---------------------------------------------------------------------------------

@pytest.mark.parametrize("bad", [0.0, float("nan"), float("inf"), -float("inf"), 1e-50, 1e39,
                                 np.array([0.1, 0.0], np.float32)])
@pytest.mark.parametrize("which", ["a_scale", "b_scale", "out_scale"])
def test_bad_scale_rejected_and_nothing_written(bad, which):
    a, b = np.ones(2, np.uint8), np.ones(2, np.uint8)
    out = np.full(2, 77, np.uint8)
    kw = dict(a_scale=0.1, b_scale=0.1, out_scale=0.1)
    kw[which] = bad
    with pytest.raises(ValueError, match=which):
        quant.quantized_add(a, kw["a_scale"], 0, b, kw["b_scale"], 0, kw["out_scale"], 0, out=out)
    assert (out == 77).all()


@pytest.mark.parametrize("args, exc, match", [
    (dict(a_zero_point=256), ValueError, "a_zero_point"),
    (dict(a_zero_point=-1), ValueError, "a_zero_point"),
    (dict(b_zero_point=128), ValueError, "b_zero_point"),
    (dict(out_zero_point=-129, out_dtype=np.int8), ValueError, "out_zero_point"),
    (dict(out_zero_point=300), ValueError, "out_zero_point"),
    (dict(a_zero_point=np.int8(3)), TypeError, "a_zero_point"),
    (dict(a_zero_point=1.5), TypeError, "a_zero_point"),
    (dict(out_zero_point=np.int32(300)), ValueError, "out_zero_point"),  # a wider NumPy int: a plain value
    (dict(a_scale="x"), TypeError, "a_scale"),
    (dict(a_scale=np.ones(3, np.float32)), ValueError, "a_scale"),
    (dict(out_dtype=np.int16), TypeError, "out_dtype"),
    (dict(formula="tflite"), ValueError, "formula"),
    (dict(a_scale=np.array([0.1, 0.2], np.float32), formula="onnxruntime"), ValueError, "a_scale"),
    (dict(out=np.zeros(3, np.uint8)), ValueError, "out has shape"),
    (dict(out=np.zeros(2, np.uint8)[::1].view(np.uint8).copy().astype(np.int8)), TypeError, "out has dtype"),
])
def test_bad_arguments(args, exc, match):
    a, b = np.ones(2, np.uint8), np.ones(2, np.int8)
    kw = dict(a_scale=0.1, a_zero_point=0, b_scale=0.1, b_zero_point=0, out_scale=0.1, out_zero_point=0)
    kw.update(args)
    with pytest.raises(exc, match=match):
        quant.quantized_add(a, kw.pop("a_scale"), kw.pop("a_zero_point"), b, kw.pop("b_scale"),
                            kw.pop("b_zero_point"), kw.pop("out_scale"), kw.pop("out_zero_point"), **kw)


def test_bad_tensors():
    a = np.ones(2, np.uint8)
    with pytest.raises(TypeError, match="a must"):
        quant.quantized_add(np.ones(2, np.int16), 1, 0, a, 1, 0, 1)
    with pytest.raises(TypeError, match="b must"):
        quant.quantized_add(a, 1, 0, [1, 2], 1, 0, 1)
    with pytest.raises(ValueError, match="broadcast"):
        quant.quantized_add(a, 1, 0, np.ones(3, np.uint8), 1, 0, 1)
    ro = np.zeros(2, np.uint8)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        quant.quantized_add(a, 1, 0, a, 1, 0, 1, out=ro)
