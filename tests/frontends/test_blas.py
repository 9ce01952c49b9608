"""gemmkit.blas against SciPy's own scipy.linalg.blas: a generated corpus of gemm calls (dtypes, layouts,
transposes, conversions, c handling, bad arguments) run through both, comparing results, returned
objects, in-place writes, warnings and exception types; plus get_blas_funcs, find_best_blas_type, the
module's other names, scipy_patched and the no-copy guarantee.

(A non-array a, b or c that NumPy cannot convert makes SciPy's f2py wrapper release the target dtype
once too often: PyArray_FromAny takes the reference even when it fails, and ndarray_from_pyobj drops it
again. After enough such calls NumPy prints "Reference count error detected ... dtype 12 (d)" and
restores the count. That message is SciPy's, not gemmkit's.)"""
import copy
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

scipy_blas = pytest.importorskip("scipy.linalg.blas")

import gemmkit  # noqa: E402
from gemmkit import blas as gk_blas  # noqa: E402

from conftest import AVAILABLE_ARCHS, THREAD_COUNTS  # noqa: E402
from _support import normal_values  # noqa: E402

PREFIXES = "sdcz"
DTYPE = {"s": np.float32, "d": np.float64, "c": np.complex64, "z": np.complex128}
TOL = {"s": 3e-5, "d": 1e-12, "c": 3e-5, "z": 1e-12}


_values = normal_values


# Exotic arguments, as factories (a fresh object per library), with the trans value SciPy reads from
# them (None where SciPy rejects them: the operand shapes then follow trans 0).
ODD_TRANS = [("x", lambda: "x", None), ("'1'", lambda: "1", 1), ("b'2'", lambda: b"2", 2), ("''", lambda: "", None),
             ("[]", lambda: [], None), ("[1]", lambda: [1], 1), ("(2,)", lambda: (2,), 2), ("[[1]]", lambda: [[1]], 1),
             ("1+0j", lambda: 1 + 0j, 1), ("2+1j", lambda: 2 + 1j, 2), ("np.complex64(1)", lambda: np.complex64(1), 1),
             ("1.5", lambda: 1.5, 1), ("2.9", lambda: 2.9, 2), ("nan", lambda: float("nan"), None),
             ("True", lambda: True, 1), ("np.int64(2)", lambda: np.int64(2), 2), ("np.array(1)", lambda: np.array(1), 1),
             ("np.array([2])", lambda: np.array([2]), 2), ("np.array([])", lambda: np.array([]), None),
             ("None", lambda: None, 0), ("-1", lambda: -1, None), ("3", lambda: 3, None), ("2**40", lambda: 2**40, None),
             ("[2**40]", lambda: [2**40], None), ("object()", lambda: object(), None)]
ODD_OVERWRITE = [0, 1, True, False, np.int64(1), np.uint8(0), np.array(1), -1, 7, 2**31 - 1, 2**31, -2**31 - 1, 2**40,
                 2**70, 1.5, 1.0, None, "1", np.float64(1), np.bool_(True), np.array([1])]
ALPHAS = [1.0, -0.5, 0.0, 2, True, 1.5 - 0.5j, 1j, "2.5", b"0.5", "x", np.float32(0.25), np.float64(-1), np.int8(3),
          np.complex64(1 + 2j), np.complex128(0.5 - 1j), np.array(2.0), np.array(2j), np.array([3.0]), np.array([[1 - 1j]]),
          [2.0], (0.5, 1), [[1.5]], [1j], [], np.array([]), None, object(), 10**400, 3e38 * 10, float("inf")]
BETAS = [0.0, 1.0, -2.0, None, 0.5 + 1j, 0, np.float32(1.5), np.complex64(2j), [0.5], [], "1", "x", float("nan")]


def _layout(x, how, rng):
    """x (2-D, the matrix SciPy should read) in one of the forms users pass: every layout, lists,
    other dtypes, and the odd shapes f2py reads as matrices (1-D as a column, 0-d as 1 x 1, 3-D with
    axes of length 1 skipped, a 3-D fold of the columns), or an odd-shaped array SciPy may reject."""
    rows, cols = x.shape
    if how == "C":
        return np.ascontiguousarray(x)
    if how == "F":
        return np.asfortranarray(x)
    if how == "sliced_F":  # scipy#11606: SciPy copies this one
        big = np.asfortranarray(np.zeros((rows + 3, cols + 2), x.dtype))
        big[1:1 + rows, 2:2 + cols] = x
        return big[1:1 + rows, 2:2 + cols]
    if how == "T_view":
        return np.ascontiguousarray(x.T).T
    if how == "strided":  # no unit-stride axis
        big = np.zeros((2 * rows, 2 * cols), x.dtype)
        big[::2, ::2] = x
        return big[::2, ::2]
    if how == "reversed":  # negative strides
        return np.ascontiguousarray(x[::-1, ::-1])[::-1, ::-1]
    if how == "list":
        return x.tolist()
    if how == "swapped":  # non-native byte order
        return x.astype(x.dtype.newbyteorder())
    if how == "object":
        return x.astype(object)
    if how == "float16":
        return x.real.astype(np.float16)
    if how == "bool":
        return x.real > 0
    if how == "strings":
        return x.real.astype(str)
    if how == "1d":  # a column as 1-D (an empty 1-D array is read as 1 x 0)
        return np.ascontiguousarray(x[:, 0]) if cols == 1 else x.ravel(order="F")
    if how == "0d":
        return x[0, 0].copy() if x.size == 1 else np.asfortranarray(x)
    if how == "lead1":
        return np.ascontiguousarray(x)[np.newaxis]
    if how == "mid1":
        return np.asfortranarray(x)[:, np.newaxis, :]
    if how == "fold":  # (rows, 2, cols / 2): f2py folds the trailing axes back into columns
        return x.reshape((rows, 2, cols // 2), order="F") if cols % 2 == 0 else x.reshape((1, rows, cols))
    if how == "3d":  # a genuinely 3-D array (SciPy reshapes or rejects it)
        return rng.standard_normal((2, max(rows, 1), max(cols, 1))).astype(x.dtype)
    if how == "empty3d":
        return np.zeros((rows, 0, cols), x.dtype)
    if how == "empty1d":
        return np.zeros(0, x.dtype)
    raise AssertionError(how)


A_LAYOUTS = ["C", "F", "sliced_F", "T_view", "strided", "reversed", "list", "swapped", "object", "float16", "bool",
             "strings", "1d", "0d", "lead1", "mid1", "fold", "3d", "empty3d", "empty1d"]
C_KINDS = [None, "F", "C", "sliced_F", "other_dtype", "swapped", "list", "scalar", "wrong_shape", "transposed_shape",
           "1d", "0d", "lead1", "mid1", "3d", "empty", "row_for_empty", "empty1d"]


def _mostly(count, usual):
    """An index into a list whose first `usual` entries are the common arguments: those 3 times in 4."""
    return st.one_of(st.sampled_from(range(usual)), st.sampled_from(range(usual)), st.sampled_from(range(usual)),
                     st.sampled_from(range(count)))


@st.composite
def gemm_call(draw):
    """One call: a dict of choices, from which _build makes the arguments (a fresh set per library)."""
    p = draw(st.sampled_from(PREFIXES), label="prefix")
    dim = st.one_of(st.integers(1, 3), st.integers(0, 3), st.integers(4, 20), st.sampled_from([31, 32, 33, 47]))
    m, n, k = draw(dim, label="m"), draw(dim, label="n"), draw(dim, label="k")
    plain_trans = st.sampled_from([0, 1, 2]).map(lambda t: (str(t), t))
    odd_trans = st.sampled_from(range(len(ODD_TRANS))).map(lambda i: (i, ODD_TRANS[i][2]))
    ta = draw(st.one_of(plain_trans, plain_trans, plain_trans, odd_trans), label="trans_a")
    tb = draw(st.one_of(plain_trans, plain_trans, plain_trans, odd_trans), label="trans_b")
    in_dtype = draw(st.sampled_from([DTYPE[p], DTYPE[p], np.float32, np.float64, np.complex128, np.int32]),
                    label="input dtype")
    usual = st.sampled_from(["C", "F", "sliced_F", "T_view", "strided", "list"])
    a_how = draw(st.one_of(usual, usual, usual, st.sampled_from(A_LAYOUTS)), label="a layout")
    b_how = draw(st.one_of(usual, usual, usual, st.sampled_from(A_LAYOUTS)), label="b layout")
    alpha = draw(_mostly(len(ALPHAS), 7), label="alpha")
    beta = draw(_mostly(len(BETAS), 7), label="beta")
    c_how = draw(st.one_of(st.sampled_from(C_KINDS[:8]), st.sampled_from(C_KINDS)), label="c")
    overwrite = draw(_mostly(len(ODD_OVERWRITE), 6), label="overwrite_c")
    positional = draw(st.booleans(), label="positional")
    seed = draw(st.integers(0, 2**31), label="seed")
    return dict(p=p, m=m, n=n, k=k, ta=ta, tb=tb, in_dtype=in_dtype, a_how=a_how, b_how=b_how, alpha=alpha,
                beta=beta, c_how=c_how, overwrite=overwrite, positional=positional, seed=seed)


def _trans_arg(choice):
    """(the argument, the trans SciPy reads from it: 0 where it rejects it)."""
    key, effective = choice
    if isinstance(key, str):
        return int(key), effective
    return ODD_TRANS[key][1](), effective or 0


def _scalar_arg(x):
    """A fresh copy of a listed alpha/beta (arrays and lists are mutable)."""
    return x.copy() if isinstance(x, np.ndarray) else (list(x) if isinstance(x, list) else x)


def _c_arg(case, rng):
    m, n, dt = case["m"], case["n"], DTYPE[case["p"]]
    how = case["c_how"]
    shape = {"wrong_shape": (m + 1, n), "transposed_shape": (n, m), "empty": (m, 0) if m else (0, n),
             "row_for_empty": (1, n) if m == 0 else (m, 1)}.get(how, (m, n))
    c0 = _values(rng, shape, dt)
    if how in ("F", "wrong_shape", "transposed_shape", "empty", "row_for_empty"):
        return np.asfortranarray(c0)
    if how == "other_dtype":
        return np.asfortranarray(c0.real.astype(np.float16 if dt in (np.float32, np.complex64) else np.float32))
    if how == "scalar":
        return c0.ravel()[0].item() if c0.size else 1.5
    if how == "empty1d":
        return np.zeros(0, dt)
    return _layout(c0, how, rng)


def _build(case):
    """The call's arguments, freshly made (one set per library)."""
    rng = np.random.default_rng(case["seed"])
    m, n, k = case["m"], case["n"], case["k"]
    ta, eff_a = _trans_arg(case["ta"])
    tb, eff_b = _trans_arg(case["tb"])
    a = _values(rng, (k, m) if eff_a else (m, k), case["in_dtype"])
    b = _values(rng, (n, k) if eff_b else (k, n), case["in_dtype"])
    if np.dtype(case["in_dtype"]).kind == "i":
        a, b = (rng.integers(-3, 4, a.shape).astype(np.int32), rng.integers(-3, 4, b.shape).astype(np.int32))
    a, b = _layout(a, case["a_how"], rng), _layout(b, case["b_how"], rng)
    c = None if case["c_how"] is None else _c_arg(case, rng)
    beta = _scalar_arg(BETAS[case["beta"]])
    if isinstance(beta, float) and beta == 0.0 and isinstance(c, np.ndarray) and c.dtype.kind in "fc":
        c[...] = np.nan  # never read when beta = 0
    ow = ODD_OVERWRITE[case["overwrite"]]
    args = [_scalar_arg(ALPHAS[case["alpha"]]), a, b]
    kwargs = dict(trans_a=ta, trans_b=tb, overwrite_c=ow.copy() if isinstance(ow, np.ndarray) else ow)
    if beta is not None or c is not None:
        kwargs["beta"] = beta
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


def _snapshot(x):
    return x.copy() if isinstance(x, np.ndarray) else copy.deepcopy(x)


def _k0_with_infinite_alpha(case):
    """K = 0 with a real alpha that is inf or NaN in the routine's precision. Reference BLAS skips alpha
    when K = 0 (C := beta * C), and so do gemmkit, SciPy's complex routines and OpenBLAS's general
    driver; OpenBLAS's small-matrix kernels (its SkylakeX build, which SciPy runs on AVX-512 CPUs) form
    alpha * (empty sum) = NaN instead, so SciPy's answer there depends on the CPU. Such calls are compared
    with SciPy called with alpha = 1, which is the reference result."""
    alpha = ALPHAS[case["alpha"]]
    big = float(np.finfo(np.float32).max) if case["p"] == "s" else np.inf
    return (case["k"] == 0 and case["p"] in "sd" and isinstance(alpha, float)
            and not abs(alpha) < big)


def _check_same_as_scipy(case):
    def make_scipy():
        args, kwargs = _build(case)
        return [1.0, *args[1:]], kwargs
    _compare_with_scipy(case["p"], lambda: _build(case), case,
                        make_scipy if _k0_with_infinite_alpha(case) else None)


def _compare_with_scipy(p, make, label, make_scipy=None):
    """Both libraries on equal fresh arguments from make() (SciPy's from make_scipy when given): the same
    exception type, or the same warnings, result type, dtype, shape, memory order, identity with c and
    values, and c written exactly when SciPy writes it (and left alone when the call fails)."""
    args_s, kw_s = (make_scipy or make)()
    args_g, kw_g = make()
    c_s, c_g = kw_s.get("c", args_s[4] if len(args_s) > 4 else None), kw_g.get("c", args_g[4] if len(args_g) > 4 else None)
    c_before = _snapshot(c_g)
    out_s, exc_s, warn_s = _run(getattr(scipy_blas, p + "gemm"), args_s, kw_s)
    out_g, exc_g, warn_g = _run(getattr(gk_blas, p + "gemm"), args_g, kw_g)
    ctx = f"{p}gemm {label}: scipy {exc_s!r} / gemmkit {exc_g!r}"
    assert type(exc_g) is type(exc_s), ctx
    assert warn_g == warn_s, f"{ctx}: warnings {warn_g} vs SciPy's {warn_s}"
    if exc_s is not None:
        if isinstance(c_g, np.ndarray):
            assert np.array_equal(c_g, c_before, equal_nan=True), f"{ctx}: c written although the call failed"
        return
    assert type(out_g) is type(out_s), ctx
    assert out_g.dtype == out_s.dtype and out_g.shape == out_s.shape, ctx
    assert out_g.flags.f_contiguous == out_s.flags.f_contiguous, ctx
    assert out_g.flags.c_contiguous == out_s.flags.c_contiguous, ctx
    assert (out_g is c_g) == (out_s is c_s), f"{ctx}: in-place result differs from SciPy's"
    tol = TOL[p] * 64
    if isinstance(c_s, np.ndarray) and c_s.dtype == c_g.dtype:
        # the given c: written in place exactly when SciPy writes it
        scale = max(1.0, float(np.nanmax(np.abs(c_s))) if c_s.size and np.isfinite(c_s).any() else 1.0)
        assert np.allclose(c_g, c_s, rtol=tol, atol=tol * scale, equal_nan=True), ctx
    finite = np.isfinite(out_s)
    scale = max(1.0, float(np.abs(out_s[finite]).max()) if finite.any() else 1.0)
    assert np.allclose(out_g, out_s, rtol=tol, atol=tol * scale, equal_nan=True), ctx


def _f(*shape):
    return np.asfortranarray(np.arange(1.0, 1.0 + np.prod(shape, dtype=int)).reshape(shape))


class _FloatOwnFloat(float):
    """A float whose __float__ disagrees with its value (f2py reads the value)."""

    def __float__(self):
        return 5.0


class _IntOwnInt(int):
    """An int whose __int__, __index__ and __float__ disagree with its value (f2py reads the value)."""

    def __int__(self):
        return 0

    __index__ = __int__

    def __float__(self):
        return 5.0


# The differences a stricter corpus once found, by name (each also drawn by gemm_call): (label, make).
NAMED_ODD_CALLS = [
    ("m = n = k = 0, c (0, 0)", lambda: ((1.0, np.ones((0, 0)), np.ones((0, 0)), 1.0, _f(0, 0)), {})),
    ("m = 0, c (0, 4)", lambda: ((1.0, np.ones((0, 3)), np.ones((3, 4)), 1.0, _f(0, 4)), {})),
    ("n = 0, c (0,)", lambda: ((1.0, np.ones((2, 3)), np.ones((3, 0)), 1.0, np.zeros(0)), {})),
    ("m = 0, c (1, 4)", lambda: ((1.0, np.ones((0, 3)), np.ones((3, 4)), 1.0, _f(1, 4)), {})),
    ("k = 0, c", lambda: ((1.0, np.ones((2, 0)), np.ones((0, 3)), 2.0, _f(2, 3)), {})),
    ("k = 0, trans_a", lambda: ((1.0, np.ones((0, 2)), np.ones((0, 3))), {"trans_a": 1})),
    ("a [], b (0, 0)", lambda: ((1.0, [], np.ones((0, 0))), {})),
    ("a [], c []", lambda: ((1.0, [], np.ones((0, 0)), 1.0, []), {})),
    ("a empty 1-D", lambda: ((1.0, np.ones(0), np.ones((0, 3))), {})),
    ("a 3-D", lambda: ((1.0, np.arange(8.0).reshape(2, 2, 2), np.ones((4, 1))), {})),
    ("a (1, 1, 5)", lambda: ((1.0, np.arange(5.0).reshape(1, 1, 5), np.ones((1, 2))), {})),
    ("a 3-D with an empty axis", lambda: ((1.0, np.ones((2, 0, 3)), np.ones((0, 2))), {})),
    ("c 3-D (1, 4, 2)", lambda: ((1.0, np.ones((4, 3)), np.ones((3, 2)), 1.0, _f(1, 4, 2)), {"overwrite_c": 1})),
    ("c 3-D (4, 1, 2)", lambda: ((1.0, np.ones((4, 3)), np.ones((3, 2)), 1.0, _f(4, 1, 2)), {})),
    ("c 3-D (2, 4, 2)", lambda: ((1.0, np.ones((4, 3)), np.ones((3, 2)), 1.0, _f(2, 4, 2)), {})),
    ("c 1-D", lambda: ((1.0, np.ones((4, 3)), np.ones((3, 1)), 1.0, np.ones(4)), {"overwrite_c": 1})),
    *[(f"trans_a {t!r}", lambda t=t: ((1.0, np.ones((3, 2)), np.ones((3, 4))), {"trans_a": t}))
      for t in ["x", "1", [], 1 + 0j, [1], "", b"1", (1,), np.array([1]), 2**40, None, np.datetime64("2020"),
                _IntOwnInt(1)]],
    *[(f"overwrite_c {o!r}", lambda o=o: ((1.0, np.ones((2, 3)), np.ones((3, 4)), 1.0, _f(2, 4)), {"overwrite_c": o}))
      for o in [1.5, 2**40, 2**70, -2**31 - 1, None, np.bool_(True), np.int64(1), _IntOwnInt(1)]],
    ("overwrite_c 2**40, fast-path arguments", lambda: ((1.0, np.ones((2, 3)), np.ones((3, 4))), {"overwrite_c": 2**40})),
    *[(f"alpha {x!r}", lambda x=x: ((x, np.ones((2, 3)), np.ones((3, 4))), {}))
      for x in [np.complex64(1 + 2j), np.complex128(1 - 1j), [], np.array([]), np.array(2j), [1j], "2.5", None,
                np.datetime64("2020"), np.str_("1"), _FloatOwnFloat(2.0), _IntOwnInt(3)]],
]


@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("label, make", NAMED_ODD_CALLS, ids=[c[0] for c in NAMED_ODD_CALLS])
def test_named_odd_calls_behave_as_scipys(p, label, make):
    def make_typed():  # the same call in the routine's dtype (so that c can be written in place)
        args, kwargs = make()
        return [x.astype(DTYPE[p], order="K") if isinstance(x, np.ndarray) and x.dtype == np.float64 else x
                for x in args], kwargs
    _compare_with_scipy(p, make_typed, label)


@pytest.mark.parametrize("p", PREFIXES)
@pytest.mark.parametrize("alpha", [np.inf, -np.inf, np.nan, 3e39])
@pytest.mark.parametrize("beta", [0.0, 1.0, -2.0])
@pytest.mark.parametrize("arch", AVAILABLE_ARCHS)
def test_k0_skips_alpha_as_reference_blas(p, alpha, beta, arch):
    """K = 0: C := beta * C whatever alpha is (reference BLAS; see _k0_with_infinite_alpha), with
    beta = 0 never reading C, on every path."""
    dt = DTYPE[p]
    c0 = np.asfortranarray(np.array([[1.5, np.nan], [-2.0, 4.0], [0.25, 8.0]], dt))
    want = np.zeros_like(c0) if beta == 0 else (beta * c0).astype(dt)
    with gemmkit.use_arch(arch):
        got = getattr(gk_blas, p + "gemm")(alpha, np.ones((3, 0), dt), np.ones((0, 2), dt), beta=beta, c=c0.copy(order="F"))
    np.testing.assert_array_equal(got, want)
    if p in "cz":  # SciPy's complex routines have no small-matrix kernel: the same answer
        np.testing.assert_array_equal(getattr(scipy_blas, p + "gemm")(alpha, np.ones((3, 0), dt), np.ones((0, 2), dt),
                                                                       beta=beta, c=c0.copy(order="F")), want)


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
    a = _layout(_values(rng, (k, 8) if trans else (8, k), DTYPE[p]), how, rng)
    b = _layout(_values(rng, (8, k) if trans else (k, 8), DTYPE[p]), how, rng)
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


def _public_attributes(func):
    """What get_blas_funcs set on a routine: its public instance attributes (SciPy's f2py objects carry
    their own __name__ too, which is not an attribute SciPy sets)."""
    return {k: v for k, v in vars(func).items() if not k.startswith("_")}


def _outcome(get, *args, **kwargs):
    """get(...)'s routines as (name, attributes) pairs, or the exception type and message it raised."""
    try:
        funcs = get(*args, **kwargs)
    except Exception as e:  # compared with SciPy's below
        return type(e), str(e)
    return [(f.__name__.split()[-1], _public_attributes(f)) for f in (funcs if isinstance(funcs, list) else [funcs])]


ILP64_VALUES = [False, True, "preferred", 0, 1, None, "yes"]


@pytest.mark.parametrize("ilp64", ILP64_VALUES, ids=repr)
@pytest.mark.parametrize("arrays,dtype", [((), None), ((), np.complex64), ((), "F"), ((), np.clongdouble),
                                          ((np.ones(2, np.float32),), None), ((np.asfortranarray(np.ones((2, 2))),), None),
                                          ((np.ones(2, np.complex64), np.ones(2)), None), ((np.ones(2, np.int8),), None)])
def test_gemm_routine_attributes_are_scipys(arrays, dtype, ilp64):
    """The installed SciPy's get_blas_funcs and gemmkit's answer alike, attribute by attribute: the same
    names (typecode, dtype, int_dtype, module_name, prefix: whatever SciPy sets) with the same values, or
    the same exception for an ilp64 SciPy's BLAS cannot serve."""
    for names in ("gemm", ("gemm",), ("gemm", "axpy")):
        theirs = _outcome(scipy_blas.get_blas_funcs, names, arrays, dtype, ilp64=ilp64)
        mine = _outcome(gk_blas.get_blas_funcs, names, arrays, dtype, ilp64=ilp64)
        if isinstance(theirs, tuple):
            assert mine == theirs
            continue
        assert [name for name, _ in mine] == [name for name, _ in theirs]
        for (name, m), (_, t) in zip(mine, theirs):
            assert set(m) == set(t), name
            for attr in t:
                assert type(m[attr]) is type(t[attr]) and m[attr] == t[attr], (name, attr)
        gemm = gk_blas.get_blas_funcs(names, arrays, dtype, ilp64=ilp64)
        gemm = gemm if callable(gemm) else gemm[0]
        assert gemm is getattr(gk_blas, gemm.typecode + "gemm")  # LP64 Fortran: the module's own routines


@pytest.mark.parametrize("p", PREFIXES)
def test_module_routines_carry_scipys_attributes(p):
    """blas.sgemm ... zgemm have SciPy's attributes before any get_blas_funcs call."""
    theirs = _public_attributes(scipy_blas.get_blas_funcs("gemm", dtype=DTYPE[p]))
    assert _public_attributes(getattr(gk_blas, p + "gemm")) == theirs
    if "int_dtype" in theirs:  # SciPy >= 1.17
        assert theirs["int_dtype"] == np.dtype(np.intc)


@pytest.mark.parametrize("ilp64", ILP64_VALUES, ids=repr)
def test_without_scipy_ilp64_is_answered_as_a_32_bit_scipy(monkeypatch, ilp64):
    """With SciPy absent gemmkit answers ilp64 as a SciPy without ILP64 BLAS does (the installed SciPy is
    the reference where it has none): the same exception types, 'preferred' falling back."""
    if scipy_blas.HAS_ILP64:
        pytest.skip("the installed SciPy has an ILP64 BLAS: it is no reference for a 32-bit one")
    theirs = _outcome(scipy_blas.get_blas_funcs, ("gemm",), (), np.float32, ilp64=ilp64)
    monkeypatch.setattr(gk_blas, "_scipy_blas", None)
    mine = _outcome(gk_blas.get_blas_funcs, ("gemm",), (), np.float32, ilp64=ilp64)
    if isinstance(theirs, tuple):
        assert isinstance(mine, tuple) and mine[0] is theirs[0]
    else:
        assert mine == theirs


def test_ilp64_routine_gets_its_own_gemm_with_scipys_attributes(monkeypatch):
    """Where SciPy answers with its ILP64 routine (module_name 'fblas_64', int_dtype int64; simulated here
    with a stand-in routine, since an ILP64 SciPy may not be installed), gemmkit answers with a gemm of its
    own carrying those attributes: the LP64 routine's stay as they are."""
    class Routine:  # what SciPy's _get_funcs leaves on the routine it returns
        def __init__(self, prefix, module_name, int_dtype):
            self.module_name, self.typecode, self.dtype = module_name, prefix, np.dtype(DTYPE[prefix])
            self.int_dtype, self.prefix = np.dtype(int_dtype), prefix

    def fake_get(names, arrays=(), dtype=None, ilp64=False):
        f = Routine("z", "fblas_64", np.int64) if ilp64 else Routine("z", "fblas", np.intc)
        return f if isinstance(names, str) else [f]

    monkeypatch.setattr(gk_blas, "_scipy_blas", type("SciPyStandIn", (), {"get_blas_funcs": staticmethod(fake_get)}))
    wide = gk_blas.get_blas_funcs("gemm", ilp64=True)
    assert wide is not gk_blas.zgemm and gk_blas.get_blas_funcs(("gemm",), ilp64=True)[0] is wide
    assert _public_attributes(wide) == vars(Routine("z", "fblas_64", np.int64))
    assert gk_blas.get_blas_funcs("gemm") is gk_blas.zgemm
    assert gk_blas.zgemm.module_name == "fblas" and gk_blas.zgemm.int_dtype == np.dtype(np.intc)
    a = np.array([[1 + 1j, 2], [3, 4j]])
    assert np.array_equal(wide(1.0, a, a, trans_b=2), gk_blas.zgemm(1.0, a, a, trans_b=2))


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
