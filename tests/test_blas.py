"""gemmkit.blas against SciPy's own scipy.linalg.blas: a generated corpus of gemm calls (dtypes, layouts,
transposes, conversions, c handling, bad arguments) run through both, comparing results, returned
objects, in-place writes, warnings and exception types; plus get_blas_funcs, find_best_blas_type, the
module's other names, scipy_patched and the no-copy guarantee."""
import copy
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

scipy_blas = pytest.importorskip("scipy.linalg.blas")

import gemmkit  # noqa: E402
from gemmkit import blas as gk_blas  # noqa: E402

from conftest import AVAILABLE_ARCHS, THREAD_COUNTS  # noqa: E402

PREFIXES = "sdcz"
DTYPE = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}
TOL = {"s": 3e-5, "d": 1e-12, "c": 3e-5, "z": 1e-12}


def _values(rng, shape, dtype):
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)


def _layout(x, how):
    """x (2-D) in one of the layouts users pass."""
    if how == "C":
        return np.ascontiguousarray(x)
    if how == "F":
        return np.asfortranarray(x)
    if how == "sliced_F":  # scipy#11606: SciPy copies this one
        big = np.asfortranarray(np.zeros((x.shape[0] + 3, x.shape[1] + 2), x.dtype))
        big[1:1 + x.shape[0], 2:2 + x.shape[1]] = x
        return big[1:1 + x.shape[0], 2:2 + x.shape[1]]
    if how == "T_view":
        return np.ascontiguousarray(x.T).T
    if how == "strided":  # no unit-stride axis
        big = np.zeros((2 * x.shape[0], 2 * x.shape[1]), x.dtype)
        big[::2, ::2] = x
        return big[::2, ::2]
    if how == "list":  # an empty matrix has no list form that keeps its shape
        return x.tolist() if x.size else np.ascontiguousarray(x)
    raise AssertionError(how)


@st.composite
def gemm_call(draw):
    """One call: (prefix, args, kwargs) with inputs built from a seed (so both libraries get equal copies)."""
    p = draw(st.sampled_from(PREFIXES), label="prefix")
    dim = st.one_of(st.integers(0, 3), st.integers(4, 20), st.sampled_from([31, 32, 33, 47]))
    m, n, k = draw(dim, label="m"), draw(dim, label="n"), draw(dim, label="k")
    ta, tb = draw(st.sampled_from([0, 1, 2]), label="trans_a"), draw(st.sampled_from([0, 1, 2]), label="trans_b")
    in_dtype = draw(st.sampled_from([DTYPE[p], DTYPE[p], np.float32, np.float64, np.complex128, np.int32]),
                    label="input dtype")
    a_how = draw(st.sampled_from(["C", "F", "sliced_F", "T_view", "strided", "list"]), label="a layout")
    b_how = draw(st.sampled_from(["C", "F", "sliced_F", "T_view", "strided", "list"]), label="b layout")
    alpha = draw(st.sampled_from([1.0, -0.5, 0.0, 2, 1.5 - 0.5j, "2.5", np.float32(0.25), np.array([3.0])]),
                 label="alpha")
    beta = draw(st.sampled_from([0.0, 1.0, -2.0, None, 0.5 + 1j]), label="beta")
    c_how = draw(st.sampled_from([None, "F", "C", "other_dtype", "list", "wrong_shape"]), label="c")
    overwrite = draw(st.sampled_from([0, 1, True]), label="overwrite_c")
    positional = draw(st.booleans(), label="positional")
    seed = draw(st.integers(0, 2**31), label="seed")
    return dict(p=p, m=m, n=n, k=k, ta=ta, tb=tb, in_dtype=in_dtype, a_how=a_how, b_how=b_how, alpha=alpha,
                beta=beta, c_how=c_how, overwrite=overwrite, positional=positional, seed=seed)


def _build(case):
    """The call's arguments, freshly made (one set per library)."""
    rng = np.random.default_rng(case["seed"])
    m, n, k = case["m"], case["n"], case["k"]
    a = _values(rng, (k, m) if case["ta"] else (m, k), case["in_dtype"])
    b = _values(rng, (n, k) if case["tb"] else (k, n), case["in_dtype"])
    if np.dtype(case["in_dtype"]).kind == "i":
        a, b = (rng.integers(-3, 4, a.shape).astype(np.int32), rng.integers(-3, 4, b.shape).astype(np.int32))
    a, b = _layout(a, case["a_how"]), _layout(b, case["b_how"])
    c = None
    if case["c_how"] is not None:
        dt = DTYPE[case["p"]]
        c0 = _values(rng, (m, n) if case["c_how"] != "wrong_shape" else (m + 1, n), dt)
        if case["c_how"] == "F" or case["c_how"] == "wrong_shape":
            c = np.asfortranarray(c0)
        elif case["c_how"] == "C":
            c = np.ascontiguousarray(c0)
        elif case["c_how"] == "other_dtype":
            c = np.asfortranarray(c0.real.astype(np.float16 if dt in (np.float32, np.complex64) else np.float32))
        else:
            c = c0.tolist() if c0.size else np.asfortranarray(c0)
        if case["beta"] == 0.0 and isinstance(c, np.ndarray) and c.dtype.kind in "fc":
            c[...] = np.nan  # never read when beta = 0
    args = [case["alpha"], a, b]
    kwargs = dict(trans_a=case["ta"], trans_b=case["tb"], overwrite_c=case["overwrite"])
    if case["beta"] is not None or case["c_how"] is not None:
        kwargs["beta"] = case["beta"]
        kwargs["c"] = c
    if case["positional"] and "c" in kwargs:
        args += [kwargs.pop("beta"), kwargs.pop("c"), kwargs.pop("trans_a"), kwargs.pop("trans_b")]
    return args, kwargs


def _run(fn, args, kwargs):
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            out = fn(*args, **kwargs)
            exc = None
        except Exception as e:  # compared below
            out, exc = None, e
    return out, exc, sorted({w.category.__name__ for w in caught})


def _check_same_as_scipy(case):
    p = case["p"]
    args_s, kw_s = _build(case)
    args_g, kw_g = _build(case)
    c_s, c_g = kw_s.get("c", args_s[4] if len(args_s) > 4 else None), kw_g.get("c", args_g[4] if len(args_g) > 4 else None)
    out_s, exc_s, warn_s = _run(getattr(scipy_blas, p + "gemm"), args_s, kw_s)
    out_g, exc_g, warn_g = _run(getattr(gk_blas, p + "gemm"), args_g, kw_g)
    ctx = f"{case}: scipy {exc_s!r} / gemmkit {exc_g!r}"
    if isinstance(exc_s, ValueError) and "unexpected array size" in str(exc_s):
        # f2py cannot make some empty arrays (m = n = 0 ...): gemmkit returns the empty product instead
        assert (exc_g is None and out_g.size == 0) or isinstance(exc_g, (ValueError, gk_blas.error)), ctx
        return
    if exc_s is not None:
        assert exc_g is not None, ctx
        want = gk_blas.error if type(exc_s).__name__ == "error" else type(exc_s)
        assert isinstance(exc_g, want), ctx
        if isinstance(c_g, np.ndarray) and isinstance(c_s, np.ndarray):
            assert np.array_equal(c_g, c_s, equal_nan=True), f"{ctx}: c written although the call failed"
        return
    assert exc_g is None, ctx
    assert warn_g == warn_s, f"{ctx}: warnings {warn_g} vs SciPy's {warn_s}"
    assert out_g.dtype == out_s.dtype and out_g.shape == out_s.shape, ctx
    assert out_g.flags.f_contiguous == out_s.flags.f_contiguous, ctx
    assert (out_g is c_g) == (out_s is c_s), f"{ctx}: in-place result differs from SciPy's"
    if isinstance(c_s, np.ndarray) and c_s.flags.writeable:
        # the given c: written in place exactly when SciPy writes it
        assert np.allclose(c_g, c_s, rtol=TOL[p] * (case["k"] + 2), atol=TOL[p] * (case["k"] + 2) * 10,
                           equal_nan=True), ctx
    k = max(case["k"], 1)
    scale = max(1.0, float(np.nanmax(np.abs(out_s))) if out_s.size else 1.0)
    assert np.allclose(out_g, out_s, rtol=TOL[p] * k, atol=TOL[p] * k * scale), ctx


@settings(max_examples=600, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=gemm_call())
def test_gemm_calls_behave_as_scipys(case):
    _check_same_as_scipy(case)


@pytest.mark.parametrize("arch", AVAILABLE_ARCHS)
@pytest.mark.parametrize("threads", THREAD_COUNTS)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=gemm_call())
def test_gemm_calls_on_every_path_and_thread_count(arch, threads, case):
    with gemmkit.use_arch(arch):
        old = gemmkit.get_num_threads()
        gemmkit.set_num_threads(threads)
        try:
            _check_same_as_scipy(case)
        finally:
            gemmkit.set_num_threads(old)


@pytest.mark.parametrize("p", PREFIXES)
def test_large_products_match_scipy(p):
    rng = np.random.default_rng(3)
    a, b = _values(rng, (300, 200), DTYPE[p]), np.asfortranarray(_values(rng, (250, 200), DTYPE[p]))
    for tb in (1, 2):
        want = getattr(scipy_blas, p + "gemm")(1.0, a, b, trans_b=tb)
        got = getattr(gk_blas, p + "gemm")(1.0, a, b, trans_b=tb)
        assert np.allclose(got, want, rtol=TOL[p] * 200, atol=TOL[p] * 200 * np.abs(want).max())


@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("how", ["C", "F", "sliced_F", "T_view", "strided"])
@pytest.mark.parametrize("trans", [0, 1, 2])
def test_unit_stride_inputs_are_not_copied(p, how, trans):
    """A long inner dimension (a and b 4 MB and more each, the result 8 x 8): NumPy reports its
    allocations to tracemalloc, so any copy of a or b shows in the peak; only the layout with no
    unit-stride axis ('strided') may be copied."""
    import tracemalloc
    k = 60000
    rng = np.random.default_rng(1)
    a = _layout(_values(rng, (k, 8) if trans else (8, k), DTYPE[p]), how)
    b = _layout(_values(rng, (8, k) if trans else (k, 8), DTYPE[p]), how)
    fn = getattr(gk_blas, p + "gemm")
    tracemalloc.start()
    try:
        out = fn(1.0, a, b, trans_a=trans, trans_b=trans)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    one_input = 8 * k * np.dtype(DTYPE[p]).itemsize
    if how == "strided":
        assert peak >= one_input, "the test would not see a copy"
    else:
        assert peak < one_input // 4, f"{peak} bytes allocated: an input was copied"
    want = getattr(scipy_blas, p + "gemm")(1.0, a, b, trans_a=trans, trans_b=trans)
    assert np.allclose(out, want, rtol=1e-3, atol=1e-3 * np.abs(want).max())


def test_beta_zero_never_reads_c_and_overwrite_writes_in_place():
    a, b = np.ones((3, 4)), np.ones((4, 2))
    c = np.full((3, 2), np.nan, order="F")
    out = gk_blas.dgemm(1.0, a, b, 0.0, c, overwrite_c=1)
    assert out is c and np.array_equal(c, np.full((3, 2), 4.0))
    c2 = np.ones((3, 2), order="F")
    out = gk_blas.dgemm(1.0, a, b, 1.0, c2)
    assert out is not c2 and np.array_equal(c2, np.ones((3, 2))) and np.array_equal(out, np.full((3, 2), 5.0))


@pytest.mark.parametrize("beta", [np.nan, np.inf, 2.0])
def test_beta_without_c_as_scipy(beta):
    """Without c, SciPy's c is zeros: a beta of nan or inf makes the result nan (nan * 0)."""
    a, b = np.ones((2, 3)), np.ones((3, 2))
    want = scipy_blas.dgemm(1.0, a, b, beta)
    assert np.array_equal(gk_blas.dgemm(1.0, a, b, beta), want, equal_nan=True)


def test_read_only_c_is_not_written():
    """SciPy writes into a read-only c with overwrite_c; gemmkit returns a new array instead."""
    c = np.ones((2, 2), order="F")
    c.flags.writeable = False
    out = gk_blas.dgemm(1.0, np.ones((2, 3)), np.ones((3, 2)), 1.0, c, overwrite_c=1)
    assert out is not c and np.array_equal(c, np.ones((2, 2))) and np.array_equal(out, np.full((2, 2), 4.0))


ARRAY_SETS = [(), (np.ones(2, np.float32),), (np.ones(2),), (np.ones(2, np.complex64),), (np.ones(2, np.int8),),
              (np.ones(2, np.float16),), (np.ones(2, np.float32), np.ones(2, np.complex128)),
              (np.ones(2, np.complex64), np.ones(2)), (np.asfortranarray(np.ones((2, 2))),),
              (np.ones(2, np.int64), np.ones(2, np.float32))]


@pytest.mark.parametrize("arrays", ARRAY_SETS)
@pytest.mark.parametrize("dtype", [None, "float32", np.complex64, "d", np.int16])
def test_type_choice_is_scipys(arrays, dtype):
    assert gk_blas.find_best_blas_type(arrays, dtype) == scipy_blas.find_best_blas_type(arrays, dtype)
    mine = gk_blas.get_blas_funcs(("gemm", "axpy", "nrm2"), arrays, dtype)
    theirs = scipy_blas.get_blas_funcs(("gemm", "axpy", "nrm2"), arrays, dtype)
    assert mine[0] is getattr(gk_blas, theirs[0].typecode + "gemm")
    assert mine[1] is theirs[1] and mine[2] is theirs[2]
    for f, g in zip(mine, theirs):
        assert (f.typecode, f.dtype, f.prefix) == (g.typecode, g.dtype, g.prefix)
    assert mine[0].module_name == theirs[0].module_name
    # memoized: the same objects again
    again = gk_blas.get_blas_funcs(("gemm", "axpy", "nrm2"), arrays, dtype)
    assert all(x is y for x, y in zip(mine, again))
    assert gk_blas.get_blas_funcs("gemm", arrays, dtype) is mine[0]


def test_other_names_are_scipys():
    assert gk_blas.daxpy is scipy_blas.daxpy and gk_blas.HAS_ILP64 == scipy_blas.HAS_ILP64
    assert "dsyrk" in dir(gk_blas) and "dgemm" in dir(gk_blas)
    with pytest.raises(AttributeError, match="nosuch"):
        gk_blas.nosuch
    with pytest.raises(ValueError):
        gk_blas.get_blas_funcs("nosuch")


def test_scipy_patched_swaps_and_restores():
    import scipy.linalg as scipy_linalg
    before = {n: getattr(scipy_blas, n) for n in ("sgemm", "dgemm", "cgemm", "zgemm", "get_blas_funcs")}
    before_linalg = scipy_linalg.get_blas_funcs
    a = np.ones((2, 2))
    with gk_blas.scipy_patched():
        assert scipy_blas.dgemm is gk_blas.dgemm and scipy_blas.zgemm is gk_blas.zgemm
        assert scipy_blas.get_blas_funcs("gemm", (a,)) is gk_blas.dgemm
        assert scipy_linalg.get_blas_funcs(("gemm",), (a,))[0] is gk_blas.dgemm
        assert scipy_blas.get_blas_funcs("axpy", (a,)) is before["get_blas_funcs"]("axpy", (a,))
    assert all(getattr(scipy_blas, n) is f for n, f in before.items())
    assert scipy_linalg.get_blas_funcs is before_linalg
    with pytest.raises(KeyError):
        with gk_blas.scipy_patched():
            raise KeyError("inside")
    assert all(getattr(scipy_blas, n) is f for n, f in before.items())
    assert scipy_linalg.get_blas_funcs is before_linalg


def test_error_is_scipys_error_class():
    with pytest.raises(gk_blas.error):
        gk_blas.dgemm(1.0, np.ones((2, 3)), np.ones((4, 2)))
    with pytest.raises(gk_blas.error):
        gk_blas.dgemm(1.0, np.ones((2, 3)), np.ones((3, 2)), trans_a=3)
    try:
        scipy_blas.dgemm(1.0, np.ones((2, 3)), np.ones((4, 2)))
    except Exception as e:
        assert isinstance(e, gk_blas.error)
