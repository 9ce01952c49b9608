"""Hypothesis fuzzing of every front end against its peer: gemmkit.matmul / gemm against NumPy, gemmkit.blas
against SciPy, gemmkit.onnx.gemm against onnx.reference, gemmkit.quant against the tests' bit-exact models.
Each draw mixes valid and hostile arguments (odd layouts, broadcast views, strings, bools, masked arrays);
where the peer raises, gemmkit must raise the same exception type, and a rejected call leaves outputs untouched.
"""
import numbers

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import gemmkit
from gemmkit import quant

ml_dtypes = pytest.importorskip("ml_dtypes")

# the bit-exact models of the other test modules (imported here, not under a @settings-decorated test)
from test_matmul_per_token import model as per_token_model  # noqa: E402
from test_quantized_add import model_directml  # noqa: E402

try:
    from test_onnx_gemm import reference_gemm  # onnx.reference's Gemm
except pytest.skip.Exception:  # onnx is not installed
    reference_gemm = None

FUZZ = settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
DTYPES = ["float32", "float64", "complex64", "complex128", "float16", "bfloat16", "int32", "bool"]


def _dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


@st.composite
def arrays(draw, shape, dtype, swapped=True):
    """Small integer values (every sum exact in every dtype drawn) in one of many layouts."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    lo = 0 if dtype.kind == "b" else -3
    base = rng.integers(lo, 4 if dtype.kind != "b" else 2, shape).astype(dtype)
    layout = draw(st.sampled_from(["C", "F", "strided", "reversed", "broadcast", "swapped", "list", "transposed"]))
    if layout == "F":
        return np.asfortranarray(base)
    if layout == "strided" and base.ndim:
        big = np.repeat(base, 2, axis=-1)
        return big[..., ::2]
    if layout == "reversed" and base.ndim:
        return np.ascontiguousarray(base[..., ::-1])[..., ::-1]
    if layout == "broadcast" and base.ndim and base.size:
        axis = draw(st.integers(0, base.ndim - 1))
        return np.broadcast_to(np.take(base, [0], axis=axis), shape)
    if layout == "swapped" and swapped and dtype.isnative and dtype.kind in "fc" and dtype.name != "bfloat16":
        return base.astype(dtype.newbyteorder())
    if layout == "list" and dtype.name != "bfloat16" and base.size:
        return base.tolist()
    if layout == "transposed" and base.ndim >= 2:
        return np.ascontiguousarray(np.swapaxes(base, -1, -2)).swapaxes(-1, -2)
    return base


def _outcome(fn):
    try:
        return fn(), None
    except Exception as e:  # noqa: BLE001 - the type is what is compared
        return None, e


def _peer_type(e):
    """The builtin class NumPy's exception belongs to (UFuncTypeError and friends are TypeErrors)."""
    for cls in (ValueError, TypeError, MemoryError):
        if isinstance(e, cls):
            return cls
    return type(e)


def _as_f64(x):
    x = np.asarray(x)
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


# ---- gemmkit.matmul against np.matmul ------------------------------------------------------------------------

@st.composite
def matmul_case(draw):
    m, k, n = draw(st.integers(0, 7)), draw(st.integers(0, 9)), draw(st.integers(0, 7))
    batch = draw(st.sampled_from([(), (2,), (3, 1), (1,)]))
    batch_b = draw(st.sampled_from([batch, batch[1:], (), (2,), (4,)]))
    nd_a, nd_b = draw(st.sampled_from([1, 2, 3])), draw(st.sampled_from([1, 2, 3]))
    shape_a = (k,) if nd_a == 1 else (batch + (m, k) if nd_a == 3 else (m, k))
    kb = k if draw(st.integers(0, 9)) else k + 1  # sometimes a contracted-size mismatch
    shape_b = (kb,) if nd_b == 1 else (batch_b + (kb, n) if nd_b == 3 else (kb, n))
    da, db = _dtype(draw(st.sampled_from(DTYPES))), _dtype(draw(st.sampled_from(DTYPES)))
    if draw(st.integers(0, 3)) == 0:
        db = da
    a, b = draw(arrays(shape_a, da)), draw(arrays(shape_b, db))
    out_kind = draw(st.sampled_from(["none", "none", "right", "wrong_shape", "wrong_dtype", "readonly"]))
    hostile = draw(st.sampled_from([None, None, None, "masked_a", "scalar_a", "string_b"]))
    return a, b, out_kind, hostile


@FUZZ
@given(case=matmul_case())
def test_matmul_against_numpy(case):
    a, b, out_kind, hostile = case
    if hostile == "masked_a":
        a = np.ma.array(np.asarray(a), mask=False)
    elif hostile == "scalar_a":
        a = np.float32(2)
    elif hostile == "string_b":
        b = "ab"
    with np.errstate(all="ignore"):
        want, np_exc = _outcome(lambda: np.matmul(a, b))
    out = None
    if out_kind != "none" and np_exc is None and isinstance(want, np.ndarray):
        shape, dtype = want.shape, want.dtype
        if out_kind == "wrong_shape":
            shape = shape + (1,)
        if out_kind == "wrong_dtype":
            dtype = np.dtype(np.complex128 if dtype != np.complex128 else np.float32)
        out = np.full(shape, 7, dtype)
        if out_kind == "readonly":
            out.flags.writeable = False
    before = None if out is None else out.copy()
    np_out_exc = probe = None
    if out is not None:  # what NumPy says of this out (a cast same_kind allows is taken)
        probe = out.copy()
        probe.flags.writeable = out.flags.writeable
        with np.errstate(all="ignore"):
            _, np_out_exc = _outcome(lambda: np.matmul(a, b, out=probe))
    got, gk_exc = _outcome(lambda: gemmkit.matmul(a, b, out=out))
    if gk_exc is not None:
        if out is not None:
            np.testing.assert_array_equal(out, before)  # untouched on rejection
        if hostile == "masked_a":
            assert isinstance(gk_exc, TypeError) and "MaskedArray" in str(gk_exc)
        elif np_exc is not None:
            assert isinstance(gk_exc, _peer_type(np_exc)), (repr(np_exc), repr(gk_exc))
        else:  # NumPy computes it: only an out NumPy refuses too may be refused
            assert np_out_exc is not None, f"NumPy takes this out, gemmkit raised {gk_exc!r}"
            assert isinstance(gk_exc, _peer_type(np_out_exc)), (repr(np_out_exc), repr(gk_exc))
        return
    assert np_out_exc is None, f"NumPy refuses this out ({np_out_exc!r}), gemmkit did not"
    assert hostile != "masked_a", "a masked array was accepted"
    assert np_exc is None or out_kind in ("wrong_shape", "readonly"), f"NumPy raised {np_exc!r}, gemmkit did not"
    if np_exc is not None:
        return
    if out is not None:
        assert got is out
        want = probe  # what np.matmul wrote into the same out (its cast, its broadcast)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    assert np.ndim(got) == np.ndim(want) and np.isscalar(got) == np.isscalar(want)
    np.testing.assert_array_equal(_as_f64(got), _as_f64(want))


# ---- gemmkit.gemm against a float64 NumPy formula ---------------------------------------------------------------

FLAGS = [False, True, 0, 1, np.True_, np.int64(0), "N", "T", 2, -1, None, 1.0]
SCALARS = [1.0, 2, -1, 0.5, np.float32(1.5), np.int64(3), 0, 1j, True, "2", None, [1.0]]


def _flag_ok(f):
    return isinstance(f, (bool, np.bool_)) or (isinstance(f, (int, np.integer)) and f in (0, 1))


@FUZZ
@given(m=st.integers(0, 6), k=st.integers(0, 7), n=st.integers(0, 6), dtype=st.sampled_from(DTYPES[:6]),
       ta=st.sampled_from(FLAGS), tb=st.sampled_from(FLAGS), alpha=st.sampled_from(SCALARS),
       beta=st.sampled_from(SCALARS), with_c=st.booleans(), data=st.data())
def test_gemm_against_numpy(m, k, n, dtype, ta, tb, alpha, beta, with_c, data):
    dt = _dtype(dtype)
    ok_t = _flag_ok(ta) and _flag_ok(tb)
    sa = (k, m) if ok_t and ta else (m, k)
    sb = (n, k) if ok_t and tb else (k, n)
    a, b = (np.asarray(data.draw(arrays(s, dt)), dtype=dt) for s in (sa, sb))
    c_dtype = np.dtype(np.float32) if dtype == "bfloat16" else dt
    c = np.asarray(data.draw(arrays((m, n), c_dtype)), dtype=c_dtype).copy() if with_c else None
    before = None if c is None else c.copy()
    got, exc = _outcome(lambda: gemmkit.gemm(a, b, c, alpha=alpha, beta=beta, trans_a=ta, trans_b=tb))

    def scalar_ok(s):
        return (isinstance(s, numbers.Number) and not isinstance(s, (bool, np.bool_))
                and (dt.kind == "c" or not isinstance(s, complex)))
    if not (ok_t and scalar_ok(alpha) and scalar_ok(beta)):
        assert isinstance(exc, (TypeError, ValueError)), f"accepted a bad argument: {exc!r}"
        if c is not None:
            np.testing.assert_array_equal(c, before)
        return
    assert exc is None, repr(exc)
    op_a = np.asarray(a, dtype=np.float64 if dt.kind != "c" else np.complex128)
    op_b = np.asarray(b, dtype=op_a.dtype)
    want = complex(alpha) * ((op_a.T if ta else op_a) @ (op_b.T if tb else op_b))
    if c is not None:
        want = want + complex(beta) * before.astype(np.complex128)
    if dt.kind != "c":
        want = want.real
    assert got.shape == (m, n) and (c is None or got is c)
    np.testing.assert_allclose(_as_f64(got), want, rtol=2e-2 if dt.itemsize == 2 else 1e-6, atol=1e-6)


# ---- gemmkit.blas against scipy.linalg.blas ---------------------------------------------------------------------

@FUZZ
@given(prefix=st.sampled_from("sdcz"), m=st.integers(0, 5), k=st.integers(0, 5), n=st.integers(0, 5),
       ta=st.sampled_from([0, 1, 2, 3, -1, True, "N", None, 1.5]), tb=st.sampled_from([0, 1, 2, True]),
       alpha=st.sampled_from([1.0, 2, np.float32(0.5), True, "2", None, 1j, [1.0]]),
       beta=st.sampled_from([0.0, 1.0, -2, None, "x"]), with_c=st.booleans(), overwrite=st.sampled_from([0, 1]),
       data=st.data())
def test_blas_against_scipy(prefix, m, k, n, ta, tb, alpha, beta, with_c, overwrite, data):
    scipy_blas = pytest.importorskip("scipy.linalg.blas")
    from gemmkit import blas as gk_blas
    dt = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}[prefix]
    a = data.draw(arrays((k, m) if ta in (1, 2, True) else (m, k), np.dtype(dt)))
    b = data.draw(arrays((n, k) if tb in (1, 2, True) else (k, n), np.dtype(dt)))
    c = np.asfortranarray(data.draw(arrays((m, n), np.dtype(dt)))) if with_c else None
    kw = dict(trans_a=ta, trans_b=tb, overwrite_c=overwrite)
    if beta is not None:
        kw["beta"] = beta
    c1, c2 = (None, None) if c is None else (c.copy(order="F"), c.copy(order="F"))
    with np.errstate(all="ignore"):
        want, s_exc = _outcome(lambda: getattr(scipy_blas, prefix + "gemm")(alpha, a, b, c=c1, **kw))
        got, g_exc = _outcome(lambda: getattr(gk_blas, prefix + "gemm")(alpha, a, b, c=c2, **kw))
    if s_exc is not None:
        assert g_exc is not None and type(g_exc) is type(s_exc), (repr(s_exc), repr(g_exc))
        return
    assert g_exc is None, repr(g_exc)
    np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
    if c is not None:
        np.testing.assert_array_equal(c2, c1)


# ---- gemmkit.onnx.gemm against onnx.reference ----------------------------------------------------------------------

@FUZZ
@given(m=st.integers(1, 5), k=st.integers(1, 5), n=st.integers(1, 5),
       dtype=st.sampled_from(["float32", "float64", "float16", "int32", "int64"]),
       ta=st.sampled_from([0, 1, True, "N", 2]), tb=st.sampled_from([0, 1, False]),
       alpha=st.sampled_from([1.0, 0.5, 2, True, "2"]), beta=st.sampled_from([1.0, 0.0, -1.5]),
       c_shape=st.sampled_from(["mn", "n", "1n", "m1", "none", "bad"]), opset=st.sampled_from([11, 13]),
       masked=st.booleans(), data=st.data())
def test_onnx_gemm_against_onnx_reference(m, k, n, dtype, ta, tb, alpha, beta, c_shape, opset, masked, data):
    if reference_gemm is None:
        pytest.skip("onnx is not installed")
    from gemmkit import onnx as gk_onnx
    dt = np.dtype(dtype)
    flags_ok = all(isinstance(f, bool) or f in (0, 1) for f in (ta, tb)) and not isinstance(ta, str)
    alpha_ok = isinstance(alpha, (int, float)) and not isinstance(alpha, bool)
    A = np.asarray(data.draw(arrays((k, m) if flags_ok and ta else (m, k), dt, swapped=False)), dtype=dt)
    B = np.asarray(data.draw(arrays((n, k) if tb else (k, n), dt, swapped=False)), dtype=dt)
    C = {"mn": (m, n), "n": (n,), "1n": (1, n), "m1": (m, 1), "none": None, "bad": (m + 1, n)}[c_shape]
    C = None if C is None else np.asarray(data.draw(arrays(C, dt, swapped=False)), dtype=dt)
    if masked:
        A = np.ma.array(A, mask=False)
    got, exc = _outcome(lambda: gk_onnx.gemm(A, B, C, alpha=alpha, beta=beta, transA=ta, transB=tb, opset=opset))
    if masked or not flags_ok or not alpha_ok:
        assert isinstance(exc, (TypeError, ValueError)), repr(exc)
        return
    if c_shape == "bad":
        assert isinstance(exc, ValueError), repr(exc)
        return
    assert exc is None, repr(exc)
    want = reference_gemm(A, B, C, opset, alpha=float(alpha), beta=float(beta), transA=int(ta), transB=int(tb))
    assert got.dtype == want.dtype and got.shape == want.shape
    if dt.kind in "iu":
        np.testing.assert_array_equal(got, want)
    else:
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=1e-2, atol=1e-2)


# ---- gemmkit.quant -----------------------------------------------------------------------------------------------

@FUZZ
@given(shape_a=st.sampled_from([(), (3,), (2, 3), (2, 1), (1, 3)]), shape_b=st.sampled_from([(), (3,), (2, 3), (4, 3)]),
       da=st.sampled_from(["uint8", "int8"]), db=st.sampled_from(["uint8", "int8"]),
       scalar_inputs=st.booleans(), za=st.sampled_from([None, 3, "np64", "np_own", 300, "str", True]),
       so=st.sampled_from([0.25, np.float32(0.5), 0.0, "x", True]), with_out=st.booleans(), data=st.data())
def test_quantized_add_against_model(shape_a, shape_b, da, db, scalar_inputs, za, so, with_out, data):
    a = np.asarray(data.draw(arrays(shape_a, np.dtype(da)))).astype(da) if shape_a else np.dtype(da).type(5)
    b = np.asarray(data.draw(arrays(shape_b, np.dtype(db)))).astype(db) if shape_b else np.dtype(db).type(9)
    if not scalar_inputs:
        a, b = np.asarray(a), np.asarray(b)
    zval = {"np64": np.int64(3), "np_own": np.dtype(da).type(3)}.get(za, za) if isinstance(za, str) else za
    try:
        shape = np.broadcast_shapes(np.shape(a), np.shape(b))
    except ValueError:
        shape = None
    out = np.full(shape, 7, da) if with_out and shape is not None else None
    before = None if out is None else out.copy()
    got, exc = _outcome(lambda: quant.quantized_add(a, 0.5, zval, b, 0.25, 1, so, 2, out=out))
    valid = (shape is not None and isinstance(so, (float, np.floating)) and so != 0
             and (zval is None or (isinstance(zval, (int, np.integer)) and not isinstance(zval, bool)
                                   and 0 <= (int(zval) if da == "uint8" else int(zval) + 128) <= 255)))
    if not valid:
        assert isinstance(exc, (TypeError, ValueError)), f"accepted: {exc!r}"
        if out is not None:
            np.testing.assert_array_equal(out, before)
        return
    assert exc is None, repr(exc)
    want = model_directml(np.asarray(a), 0.5, zval, np.asarray(b), 0.25, 1, so, 2, np.dtype(da))
    np.testing.assert_array_equal(np.asarray(got), want)
    if scalar_inputs and not shape_a and not shape_b and out is None:
        assert np.isscalar(got)


@FUZZ
@given(m=st.integers(1, 9), k=st.integers(0, 40), n=st.integers(1, 9), ta=st.sampled_from([False, True, 1, "T"]),
       packed=st.booleans(), out_dtype=st.sampled_from(["float32", "float16", "bfloat16", "int8"]),
       bad_x=st.sampled_from([None, None, "uint8", "masked", "packed"]), data=st.data())
def test_matmul_per_token_against_model(m, k, n, ta, packed, out_dtype, bad_x, data):
    ta_ok = not isinstance(ta, str)
    x = np.asarray(data.draw(arrays((k, m) if ta_ok and ta else (m, k), np.dtype(np.int8))), dtype=np.int8)
    w = np.asarray(data.draw(arrays((k, n), np.dtype(np.int8))), dtype=np.int8)
    deq = np.full(n, 0.5, np.float32)
    pts = np.arange(1, m + 1, dtype=np.float32)
    weight = quant.pack_weight(w) if packed else w
    bad = {None: None, "uint8": x.astype(np.uint8), "masked": np.ma.array(x, mask=False),
           "packed": quant.pack_weight(x)}[bad_x]
    out = np.full((m, n), 7, np.float32)
    got, exc = _outcome(lambda: quant.matmul_per_token(x if bad is None else bad, weight, deq, pts,
                                                       out_dtype=None if out_dtype == "float32" else out_dtype,
                                                       transpose_a=ta, out=out if out_dtype == "float32" else None))
    if not ta_ok or out_dtype == "int8" or bad is not None:
        assert isinstance(exc, (TypeError, ValueError)), repr(exc)
        assert (out == 7).all(), "out written by a rejected call"
        return
    assert exc is None, repr(exc)
    want = per_token_model(x, w, deq, pts, out_dtype, transpose_a=bool(ta))
    np.testing.assert_array_equal(got.astype(np.float64), want.astype(np.float64))


@pytest.mark.parametrize("da", DTYPES + ["int8", "uint8", "int64", "U2", "object"])
@pytest.mark.parametrize("db", DTYPES + ["int8", "uint8", "int64", "U2", "object"])
def test_matmul_every_dtype_pair_against_numpy(da, db):
    """Every pair of operand dtypes: NumPy's result dtype and values, or its exception type (a pair NumPy
    multiplies but gemmkit has no kernels for: TypeError naming it; object arrays: np.matmul's own result)."""
    rng = np.random.default_rng(0)
    a = rng.integers(0, 3, (3, 4)).astype(_dtype(da) if da not in ("U2", "object") else da)
    b = rng.integers(0, 3, (4, 2)).astype(_dtype(db) if db not in ("U2", "object") else db)
    with np.errstate(all="ignore"):
        want, np_exc = _outcome(lambda: np.matmul(a, b))
    got, exc = _outcome(lambda: gemmkit.matmul(a, b))
    if exc is not None:
        if np_exc is not None:
            assert isinstance(exc, _peer_type(np_exc)), (repr(np_exc), repr(exc))
        else:
            assert isinstance(exc, TypeError) and ("no kernels" in str(exc) or "not numbers" in str(exc)), repr(exc)
            assert want.dtype.kind in "biuO", f"NumPy gives {want.dtype}: gemmkit should too"
        return
    assert np_exc is None, repr(np_exc)
    assert got.dtype == want.dtype
    if want.dtype == object:  # handed to np.matmul whole
        assert got.tolist() == want.tolist()
        return
    np.testing.assert_array_equal(_as_f64(got), _as_f64(want))
