"""gemmkit.matmul and gemmkit.gemm against np.matmul on generated shapes, layouts and dtypes, plus the
stride resolver's no-copy promise and the argument errors (with out/c untouched on rejection)."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gemmkit
from gemmkit import _core, _fastpaths, _matmul, _resolve

try:
    import ml_dtypes
except ImportError:  # pragma: no cover - ml_dtypes is a test dependency
    ml_dtypes = None

FLOAT_DTYPES = ["float32", "float64", "complex64", "complex128", "float16"] + (["bfloat16"] if ml_dtypes else [])


def _dtype(name):
    return np.dtype(getattr(ml_dtypes, name)) if name == "bfloat16" else np.dtype(name)


def _has_kernels(name):
    fn = _matmul.CORE_FUNCTION.get(name)
    return fn is not None and hasattr(_core, fn)


def _product_dtype(dtype):
    """The dtype np.matmul gives for two operands of `dtype` (bfloat16: float32)."""
    return np.matmul(np.zeros((1, 1), dtype), np.zeros((1, 1), dtype)).dtype


def _values(rng, shape, dtype):
    x = rng.uniform(-1, 1, shape)
    if dtype.kind == "c":
        x = x + 1j * rng.uniform(-1, 1, shape)
    return x.astype(dtype)


# ---- layouts: the same values stored with different strides ------------------------------------------

MATRIX_LAYOUTS = ["C", "F", "padded_rows", "padded_F", "no_unit_stride", "negative_rows", "negative_cols"]
VECTOR_LAYOUTS = ["C", "stepped", "negative"]


def _with_layout(vals, layout):
    """An array equal to `vals` whose last two axes (last axis for 1-D) are stored as `layout` says."""
    if vals.ndim == 1:
        if layout == "C":
            return vals.copy()
        if layout == "stepped":
            big = np.zeros(2 * vals.shape[0] + 1, vals.dtype)
            big[::2][:vals.shape[0]] = vals
            return big[::2][:vals.shape[0]]
        return vals[::-1].copy()[::-1]
    rows, cols = vals.shape[-2:]
    lead = vals.shape[:-2]
    if layout == "C":
        return np.ascontiguousarray(vals)
    if layout == "F":
        return np.swapaxes(np.ascontiguousarray(np.swapaxes(vals, -1, -2)), -1, -2)
    if layout == "padded_rows":  # rows ld = cols + 3 apart
        big = np.zeros(lead + (rows, cols + 3), vals.dtype)
        big[..., :cols] = vals
        return big[..., :cols]
    if layout == "padded_F":  # columns contiguous, ld = rows + 2
        big = np.zeros(lead + (cols, rows + 2), vals.dtype)
        big[..., :rows] = np.swapaxes(vals, -1, -2)
        return np.swapaxes(big[..., :rows], -1, -2)
    if layout == "no_unit_stride":
        big = np.zeros(lead + (2 * rows, 2 * cols), vals.dtype)
        big[..., ::2, ::2] = vals
        return big[..., ::2, ::2]
    if layout == "negative_rows":
        return np.ascontiguousarray(vals[..., ::-1, :])[..., ::-1, :]
    if layout == "negative_cols":
        return np.ascontiguousarray(vals[..., :, ::-1])[..., :, ::-1]
    raise AssertionError(layout)


OUT_LAYOUTS = ["C", "F", "no_unit_stride"]


def _out_array(shape, dtype, layout, fill):
    out = np.full(shape, fill, dtype)
    if len(shape) >= 2 and layout != "C":
        out = _with_layout(out, "F" if layout == "F" else "no_unit_stride")
    elif len(shape) == 1 and layout == "no_unit_stride":
        out = _with_layout(out, "stepped")
    return out


# ---- reference and tolerance -----------------------------------------------------------------------

def _wide(x):
    return x.astype(np.complex128 if x.dtype.kind == "c" else np.float64)


def _assert_close(got, a, b, dtype, alpha=1.0, beta=0.0, c0=None, ta=False, tb=False, exact_matmul=True):
    """|got - ref| <= 4 (K + 2) eps (|alpha| |op a| |op b| + |beta c0|), the reference in float64."""
    A, B = _wide(a), _wide(b)
    A = A.T if ta else A
    B = B.T if tb else B
    ref = alpha * np.matmul(A, B)
    scale = abs(alpha) * np.matmul(np.abs(A), np.abs(B))
    if c0 is not None and beta != 0:
        ref = ref + beta * _wide(c0)
        scale = scale + abs(beta) * np.abs(_wide(c0))
    K = A.shape[-1]
    eps = np.finfo(dtype).eps
    bound = 4 * (K + 2) * eps * scale + np.finfo(dtype).tiny
    err = np.abs(_wide(np.asarray(got)) - ref)
    assert np.shape(got) == np.shape(ref)
    assert np.all(err <= bound), f"max error {err.max()} > bound {bound.max()} (K={K})"


# ---- generated np.matmul cases ---------------------------------------------------------------------

@st.composite
def matmul_case(draw):
    """Shapes with np.matmul's rules (1-D operands, stacks with broadcasting, empty dims), one layout per
    operand and for out."""
    dim = st.one_of(st.integers(0, 4), st.integers(5, 40))
    M, N, K = draw(dim, label="M"), draw(dim, label="N"), draw(st.one_of(st.integers(0, 4), st.integers(5, 70)),
                                                                   label="K")
    batch = tuple(draw(st.lists(st.integers(0, 3), max_size=2), label="batch"))

    def operand_batch(label):
        keep = draw(st.integers(0, len(batch)), label=f"{label}_batch_dims")
        dims = batch[len(batch) - keep:]
        return tuple(d if draw(st.booleans(), label=f"{label}_bcast") else 1 for d in dims)

    a_vec = draw(st.booleans(), label="a_1d") if draw(st.integers(0, 3), label="a_vec_roll") == 0 else False
    b_vec = draw(st.booleans(), label="b_1d") if draw(st.integers(0, 3), label="b_vec_roll") == 0 else False
    a_shape = (K,) if a_vec else operand_batch("a") + (M, K)
    b_shape = (K,) if b_vec else operand_batch("b") + (K, N)
    a_layout = draw(st.sampled_from(VECTOR_LAYOUTS if a_vec else MATRIX_LAYOUTS), label="a_layout")
    b_layout = draw(st.sampled_from(VECTOR_LAYOUTS if b_vec else MATRIX_LAYOUTS), label="b_layout")
    out_layout = draw(st.sampled_from([None] + OUT_LAYOUTS), label="out_layout")
    seed = draw(st.integers(0, 2**32 - 1), label="seed")
    return a_shape, a_layout, b_shape, b_layout, out_layout, seed


@pytest.mark.parametrize("dtype_name", FLOAT_DTYPES)
@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=matmul_case())
def test_matmul_matches_numpy(dtype_name, case):
    a_shape, a_layout, b_shape, b_layout, out_layout, seed = case
    dtype = _dtype(dtype_name)
    rng = np.random.default_rng(seed)
    a = _with_layout(_values(rng, a_shape, dtype), a_layout)
    b = _with_layout(_values(rng, b_shape, dtype), b_layout)
    expect_shape = np.matmul(np.zeros(a.shape, np.float32), np.zeros(b.shape, np.float32)).shape
    out = None if out_layout is None else _out_array(expect_shape, _product_dtype(dtype), out_layout, np.nan)
    if not _has_kernels(dtype_name):
        before = None if out is None else out.copy()
        with pytest.raises(TypeError, match="not there yet"):
            gemmkit.matmul(a, b, out=out)
        if out is not None:
            assert np.array_equal(out, before, equal_nan=True), "out was written although matmul refused"
        return
    got = gemmkit.matmul(a, b, out=out)
    want = np.matmul(a, b)
    if out is not None:
        assert got is out
    assert np.shape(got) == np.shape(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    if out is None:
        assert type(got) is type(want)  # a NumPy scalar for 1-D @ 1-D, as np.matmul gives
    _assert_close(got, a, b, _product_dtype(dtype))  # bfloat16: exact operands, float32 arithmetic


def test_matmul_bfloat16_gives_float32_as_numpy_does():
    """bfloat16 @ bfloat16 is float32 in NumPy (ml_dtypes); gemmkit computes it from the exactly widened
    operands in float32 (oneDNN's gemm_bf16bf16f32), for 2-D, vectors, stacks, out= and gemm's c."""
    if ml_dtypes is None:  # pragma: no cover
        pytest.skip("ml_dtypes missing")
    bf16 = np.dtype(ml_dtypes.bfloat16)
    rng = np.random.default_rng(8)
    a = rng.uniform(-2, 2, (3, 37, 29)).astype(bf16)
    b = rng.uniform(-2, 2, (29, 45)).astype(bf16)
    for x, y in ((a, b), (a[0], b), (a[1, 0], b), (a[2], b[:, 3]), (a, b.T.copy().T)):
        want = np.matmul(x, y)
        got = gemmkit.matmul(x, y)
        assert got.dtype == want.dtype == np.float32 and got.shape == want.shape
        _assert_close(got, x, y, np.dtype(np.float32))
    out = np.full((3, 37, 45), np.nan, np.float32)
    assert gemmkit.matmul(a, b, out=out) is out
    _assert_close(out, a, b, np.dtype(np.float32))
    out16 = np.zeros((3, 37, 45), bf16)  # the float32 result cast into it, as np.matmul's same_kind casting
    assert gemmkit.matmul(a, b, out=out16) is out16
    np.testing.assert_array_equal(out16, out.astype(bf16))
    small = a[:, :19, :24], b[:24, :31]  # one kernel tile a product, a bfloat16 C written directly: the same bits
    out16 = np.full((3, 19, 31), np.nan, bf16)
    assert gemmkit.matmul(*small, out=out16) is out16
    np.testing.assert_array_equal(out16, gemmkit.matmul(*small).astype(bf16))
    c = np.ones((37, 45), np.float32)
    assert gemmkit.gemm(a[0], b, c, alpha=2.0, beta=0.5) is c
    _assert_close(c, a[0], b, np.dtype(np.float32), alpha=2.0, beta=0.5, c0=np.ones((37, 45)))
    z = np.zeros((4, 3), np.float32)  # core entry: exact widening, K = 0 scaling
    _core.gemm_bf16bf16f32("N", "N", 4, 3, 0, 1.0, np.zeros((4, 0), bf16), 1, np.zeros((0, 3), bf16), 3, 0.0, z, 3)
    assert not z.any()
    with pytest.raises(TypeError, match="A must be a bfloat16"):
        _core.gemm_bf16bf16f32("N", "N", 1, 1, 1, 1.0, np.ones((1, 1), np.float32), 1, np.ones((1, 1), bf16), 1,
                               0.0, np.zeros((1, 1), np.float32), 1)


@pytest.mark.parametrize("a_dtype,b_dtype", [("float32", "float64"), ("float16", "float32"), ("int64", "float32"),
                                             ("float32", "complex64"), ("float64", "complex64")])
def test_matmul_mixed_dtypes_give_numpys_result_dtype(a_dtype, b_dtype):
    rng = np.random.default_rng(5)
    a = (rng.uniform(-4, 4, (5, 6))).astype(a_dtype)
    b = (rng.uniform(-4, 4, (6, 3))).astype(b_dtype)
    want = np.matmul(a, b)
    if not _has_kernels(want.dtype.name):
        with pytest.raises(TypeError, match="not there yet"):
            gemmkit.matmul(a, b)
        return
    got = gemmkit.matmul(a, b)
    assert got.dtype == want.dtype
    _assert_close(got, a.astype(want.dtype), b.astype(want.dtype), want.dtype)


def _float32_only():
    if not _has_kernels("float32"):  # pragma: no cover
        pytest.skip("no float32 kernels")


def test_matmul_k_zero_gives_zeros_even_over_nan_out():
    _float32_only()
    out = np.full((2, 3, 4), np.nan, np.float32)
    got = gemmkit.matmul(np.ones((2, 3, 0), np.float32), np.ones((0, 4), np.float32), out=out)
    assert got is out and np.array_equal(out, np.zeros((2, 3, 4), np.float32))


def test_matmul_out_may_be_an_input():
    _float32_only()
    rng = np.random.default_rng(2)
    a = _values(rng, (6, 6), np.dtype(np.float32))
    b = _values(rng, (6, 6), np.dtype(np.float32))
    a0 = a.copy()
    got = gemmkit.matmul(a, b, out=a)
    assert got is a
    _assert_close(a, a0, b, np.dtype(np.float32))
    b0 = b.copy()
    gemmkit.matmul(a0, b, out=b.T)  # out is b's transpose: read b before writing
    _assert_close(b.T, a0, b0, np.dtype(np.float32))


def test_matmul_accepts_sequences_and_readonly_inputs():
    _float32_only()
    a = np.arange(6, dtype=np.float32).reshape(2, 3)
    a.flags.writeable = False
    b = np.broadcast_to(np.arange(3, dtype=np.float32)[:, None], (3, 2))  # read-only, row stride 4 bytes
    assert np.array_equal(gemmkit.matmul(a, b), np.matmul(a, b))
    got = gemmkit.matmul(np.array([1.0, 2.0], np.float32), [[3.0], [4.0]]) if _has_kernels("float64") else None
    assert got is None or (got.dtype == np.float64 and np.array_equal(got, [11.0]))


# ---- the resolver: no copies where an axis has unit stride ------------------------------------------

class _Recorder:
    """Wraps a core gemm function and keeps the buffers each call received."""

    def __init__(self, fn):
        self.fn, self.calls = fn, []

    def __call__(self, *args):
        self.calls.append(args)
        return self.fn(*args)


@pytest.mark.parametrize("a_layout", ["C", "F", "padded_rows", "padded_F"])
@pytest.mark.parametrize("b_layout", ["C", "F", "padded_rows", "padded_F"])
@pytest.mark.parametrize("out_layout", ["C", "F"])
def test_resolver_passes_unit_stride_matrices_without_copies(monkeypatch, a_layout, b_layout, out_layout):
    _float32_only()
    rng = np.random.default_rng(11)
    dt = np.dtype(np.float32)
    a = _with_layout(_values(rng, (2, 7, 5), dt), a_layout)
    b = _with_layout(_values(rng, (5, 9), dt), b_layout)
    out = _out_array((2, 7, 9), dt, out_layout, 0)
    rec = _Recorder(_core.gemm_batch)
    monkeypatch.setattr(_core, "gemm_batch", rec)
    gemmkit.matmul(a, b, out=out)
    assert len(rec.calls) == 1, "a stack of products must be one core call"
    A, B, C = rec.calls[0][3], rec.calls[0][4], rec.calls[0][6]
    assert C.shape[0] == 2 and 2 in (A.shape[0], B.shape[0])
    assert np.shares_memory(C, out), "out was not written in place"
    assert all(np.shares_memory(x, a) or np.shares_memory(x, b) for x in (A, B)), "an input was copied"
    assert np.shares_memory(A, a) != np.shares_memory(A, b)
    _assert_close(out, a, b, dt)


def _check_fast_path(got, expect, a, b, out, before, shape, dtype):
    """After _fastpaths.matmul_fast(a, b, out) returned `got`: it took the case exactly when `expect` says (None:
    either way); when it declined, out is untouched and gemmkit.matmul's general path gives the result;
    either way the result has `shape` and `dtype`, is out when given, and is close to float64 a @ b."""
    assert expect is None or (got is not None) == expect, f"fast path {'declined' if got is None else 'took'} it"
    if got is None:
        if out is not None:
            assert np.array_equal(out, before, equal_nan=True), "declined, but out was written"
        got = gemmkit.matmul(a, b, out=out)
    if out is not None:
        assert got is out
    assert got.shape == shape and got.dtype == dtype
    _assert_close(got, a, b, dtype)


FAST_LAYOUTS = {"C", "F", "padded_rows", "padded_F", "stepped"}  # a unit-stride axis: read in place


@pytest.mark.parametrize("dtype_name", FLOAT_DTYPES)
@pytest.mark.parametrize("shapes", [((7, 5), (5, 9)), ((1, 5), (5, 1)), ((5,), (5, 9)), ((7, 5), (5,)),
                                    ((33, 17), (17, 1)), ((1, 40), (40,))])
@pytest.mark.parametrize("a_layout", ["C", "F", "padded_F", "no_unit_stride", "stepped", "negative"])
@pytest.mark.parametrize("out_layout", [None, "C", "F", "no_unit_stride"])
def test_matmul_fast_path_takes_in_place_operands_only(dtype_name, shapes, a_layout, out_layout):
    """The Cython fast path (1-D/2-D, one dtype) computes in place exactly when every operand has a
    unit-stride axis and out shares no memory with the inputs; otherwise it declines (None) and writes
    nothing, and gemmkit.matmul's general path gives the same result."""
    if not _has_kernels(dtype_name):
        pytest.skip(f"no {dtype_name} kernels")
    dtype = _dtype(dtype_name)
    (a_shape, b_shape) = shapes
    a_layout = (a_layout if a_layout in ("stepped", "negative", "C") else "C") if len(a_shape) == 1 else (
        a_layout if a_layout in MATRIX_LAYOUTS else "C")
    rng = np.random.default_rng(3)
    a = _with_layout(_values(rng, a_shape, dtype), a_layout)
    b = _with_layout(_values(rng, b_shape, dtype), "F" if len(b_shape) == 2 else "stepped")
    want_shape = np.matmul(a, b).shape
    rdt = _product_dtype(dtype)
    out = None if out_layout is None else _out_array(want_shape, rdt, out_layout, np.nan)
    before = None if out is None else out.copy()
    got = _fastpaths.matmul_fast(a, b, out)
    # expected: declined for a without a unit-stride axis, such an out (a 1-D out and an out with a size-1
    # axis are read at any positive stride); a 2-D a with a size-1 axis may go either way (any stride along
    # that axis), only the result is checked then
    fast_dtype = dtype_name in ("float32", "float64", "complex64", "complex128", "float16", "bfloat16")
    a_in_place = a_layout in FAST_LAYOUTS or a_layout == "C"
    out_in_place = out_layout != "no_unit_stride" or len(want_shape) == 1 or 1 in want_shape
    expect = None if a.ndim == 2 and 1 in a.shape and fast_dtype else (fast_dtype and a_in_place and out_in_place)
    _check_fast_path(got, expect, a, b, out, before, want_shape, rdt)


def test_matmul_fast_path_declines_overlapping_out():
    _float32_only()
    buf = np.arange(1, 37, dtype=np.float32).reshape(6, 6) / 7
    a = buf[:, :3]
    b = np.ones((3, 3), np.float32)
    want = np.matmul(a, b)
    assert _fastpaths.matmul_fast(a, b, buf[:, 3:]) is None  # out beside a in the same rows: bytes interleave
    out = buf[:, 3:]
    assert gemmkit.matmul(a, b, out=out) is out
    np.testing.assert_allclose(out, want, rtol=1e-6)
    c = np.zeros((6, 3), np.float32)
    assert _fastpaths.matmul_fast(a, b, c) is c  # disjoint: done in place
    np.testing.assert_allclose(c, want, rtol=1e-6)



def _stack_with_layout(rng, shape, dtype, layout):
    """A 3-D stack equal to random values, stored as `layout` says: 'C'; 'padded' (rows wider than the
    matrix); 'every_other' (a batch stride of two matrices); 'F' (each matrix column-major: not read in
    place by the stack fast path); 'reversed' (a negative batch stride)."""
    vals = _values(rng, shape, dtype)
    b, r, c = shape
    if layout == "C":
        return vals.copy()
    if layout == "padded":
        big = np.zeros((b, r, c + 3), dtype)
        big[:, :, :c] = vals
        return big[:, :, :c]
    if layout == "every_other":
        big = np.zeros((2 * b, r, c), dtype)
        big[::2] = vals
        return big[::2]
    if layout == "F":
        return np.swapaxes(np.ascontiguousarray(np.swapaxes(vals, 1, 2)), 1, 2)
    big = vals[::-1].copy()
    return big[::-1]


STACK_LAYOUTS = ["C", "padded", "every_other", "F", "reversed"]
STACK_IN_PLACE = {"C", "padded", "every_other"}


@pytest.mark.parametrize("dtype_name", ["float32", "float64", "complex64", "complex128"])
@pytest.mark.parametrize("seed", range(12))
def test_matmul_stack_fast_path_against_numpy(dtype_name, seed):
    """3-D @ 3-D of one dtype, same stack length: the Cython fast path takes exactly the stacks read in
    place (row-major matrices, positive batch strides) with an out disjoint from both, in one batched
    core call; otherwise it declines and writes nothing. Generated shapes around the kernels' tile
    edges, layouts of a, b and out, results against float64 NumPy."""
    if not _has_kernels(dtype_name):
        pytest.skip(f"no {dtype_name} kernels")
    dtype = _dtype(dtype_name)
    rng = np.random.default_rng(seed)
    batch = int(rng.integers(1, 6))
    m, n, k = (int(x) for x in rng.choice([1, 2, 5, 6, 7, 8, 13, 16, 17, 24, 31, 32, 33, 40], 3))
    la, lb, lo = (STACK_LAYOUTS[int(i)] for i in rng.integers(0, len(STACK_LAYOUTS), 3))
    a = _stack_with_layout(rng, (batch, m, k), dtype, la)
    b = _stack_with_layout(rng, (batch, k, n), dtype, lb)
    out = None if seed % 4 == 0 else _stack_with_layout(rng, (batch, m, n), dtype, lo)
    if out is not None:
        out[...] = np.nan
    before = None if out is None else out.copy()
    got = _fastpaths.matmul_fast(a, b, out)
    # a size-1 matrix axis may be read at any stride: only layouts that cannot be read in place decline
    def in_place(x, layout):
        return layout in STACK_IN_PLACE or (layout == "F" and x.shape[2] == 1)
    expect = in_place(a, la) and in_place(b, lb) and (out is None or in_place(out, lo))
    if (la == "F" and a.shape[1] == 1) or (lb == "F" and b.shape[1] == 1) or (out is not None and lo == "F" and m == 1):
        expect = None  # a one-row matrix has a unit stride along its row whatever its layout
    _check_fast_path(got, expect, a, b, out, before, (batch, m, n), dtype)


def test_matmul_stack_fast_path_declines_out_over_an_input():
    """An out that shares memory with a (the same stack, or its matrices interleaved with a's rows)
    goes to the general path, which copies the input first: the result is still a @ b."""
    _float32_only()
    rng = np.random.default_rng(7)
    a = _values(rng, (4, 8, 8), np.dtype(np.float32))
    b = _values(rng, (4, 8, 8), np.dtype(np.float32))
    want = np.matmul(a.astype(np.float64), b.astype(np.float64))
    same = a.copy()
    assert _fastpaths.matmul_fast(same, b, same) is None
    assert gemmkit.matmul(same, b, out=same) is same
    np.testing.assert_allclose(same, want, rtol=1e-5, atol=1e-5)
    buf = np.zeros((4, 8, 16), np.float32)
    buf[:, :, :8] = a
    a_view, out_view = buf[:, :, :8], buf[:, :, 8:]
    assert _fastpaths.matmul_fast(a_view, b, out_view) is None  # out's rows interleave with a's
    assert gemmkit.matmul(a_view, b, out=out_view) is out_view
    np.testing.assert_allclose(out_view, want, rtol=1e-5, atol=1e-5)

@pytest.mark.parametrize("layout,expect_trans", [("C", False), ("F", True), ("padded_rows", False),
                                                 ("padded_F", True), ("no_unit_stride", False),
                                                 ("negative_rows", False), ("negative_cols", False)])
def test_resolve_operand(layout, expect_trans):
    x = _with_layout(np.arange(12.0).reshape(3, 4), layout)
    view, trans, ld = _resolve.resolve_operand(x)
    assert trans == expect_trans
    assert np.array_equal(view.T if trans else view, x)
    copied = layout in ("no_unit_stride", "negative_rows", "negative_cols")
    assert np.shares_memory(view, x) != copied
    assert view.strides[1] == view.itemsize and view.strides[0] == ld * view.itemsize
    assert ld >= view.shape[1]


@pytest.mark.parametrize("shape,strides", [((1, 5), (0, 8)), ((5, 1), (8, 0)), ((1, 1), (0, 0)),
                                           ((0, 3), (8, 16)), ((3, 0), (16, 8))])
def test_resolve_operand_size_one_and_empty_axes_take_any_stride(shape, strides):
    x = np.lib.stride_tricks.as_strided(np.zeros(8), shape, strides)
    view, trans, ld = _resolve.resolve_operand(x)
    assert view is x and not trans and ld >= max(1, shape[1])


def test_resolve_output_without_unit_stride_uses_a_temporary():
    out = _with_layout(np.zeros((3, 4)), "no_unit_stride")
    res = _resolve.resolve_output(out, reads_c=False)
    assert not res.transposed and res.copy_back is out and not np.shares_memory(res.target, out)
    res.target[...] = 5.0
    res.finish()
    assert np.all(out == 5.0)


# ---- every dtype through the resolver, on a strict model of the core's buffer contract ---------------

def _strict_core_model(dtype):
    """A stand-in for the core's gemm_batch that checks the buffer rules the core enforces (3-D stacks,
    unit stride along rows, rows at least a row apart, whole-element batch strides, the right dtypes: the
    operands', and the product's for C (float32 for bfloat16), shapes that fit) and computes in
    float64/complex128. Lets the front end's stride handling be tested independently of the kernels."""
    c_dtype = _product_dtype(dtype)

    def gemm_batch_model(transa, transb, alpha, A, B, beta, C):
        ta, tb = transa == "T", transb == "T"
        M, N = C.shape[-2:]
        K = A.shape[-2] if ta else A.shape[-1]
        batch = C.shape[:-2]
        for name, X, rows, cols in (("A", A, K if ta else M, M if ta else K),
                                    ("B", B, N if tb else K, K if tb else N), ("C", C, M, N)):
            assert X.dtype == (c_dtype if name == "C" else dtype) and X.ndim >= 2, name
            assert X.shape[-2:] == (rows, cols), (name, X.shape, rows, cols)
            assert X.ndim - 2 <= len(batch) and np.broadcast_shapes(X.shape[:-2], batch) == batch, (name, X.shape)
            if X.size:
                if cols > 1:
                    assert X.strides[-1] == X.itemsize, (name, X.strides)
                if rows > 1:
                    assert X.strides[-2] >= cols * X.itemsize and X.strides[-2] % X.itemsize == 0, (name, X.strides)
        A = np.broadcast_to(A, batch + A.shape[-2:])
        B = np.broadcast_to(B, batch + B.shape[-2:])
        for i in np.ndindex(*batch):
            opA = _wide(A[i].T if ta else A[i])
            opB = _wide(B[i].T if tb else B[i])
            C[i] = alpha * (opA @ opB) + (beta * _wide(C[i]) if beta != 0 else 0)
        return C
    return gemm_batch_model


@pytest.mark.parametrize("dtype_name", FLOAT_DTYPES)
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(case=matmul_case())
def test_matmul_on_the_strict_core_model(monkeypatch, dtype_name, case):
    a_shape, a_layout, b_shape, b_layout, out_layout, seed = case
    dtype = _dtype(dtype_name)
    monkeypatch.setattr(_core, "gemm_batch", _strict_core_model(dtype))
    monkeypatch.setattr(_fastpaths, "matmul_fast", lambda a, b, out: None)  # 1-D/2-D through the resolver too
    rng = np.random.default_rng(seed)
    a = _with_layout(_values(rng, a_shape, dtype), a_layout)
    b = _with_layout(_values(rng, b_shape, dtype), b_layout)
    want = np.matmul(a, b)
    out = None if out_layout is None else _out_array(np.shape(want), want.dtype, out_layout, np.nan)
    got = gemmkit.matmul(a, b, out=out)
    assert np.shape(got) == np.shape(want) and np.asarray(got).dtype == want.dtype
    _assert_close(got, a, b, want.dtype)


# ---- gemm -------------------------------------------------------------------------------------------

@st.composite
def gemm_case(draw):
    dim = st.one_of(st.integers(0, 4), st.integers(5, 40))
    return dict(M=draw(dim, label="M"), N=draw(dim, label="N"), K=draw(dim, label="K"),
                ta=draw(st.booleans(), label="trans_a"), tb=draw(st.booleans(), label="trans_b"),
                a_layout=draw(st.sampled_from(MATRIX_LAYOUTS), label="a_layout"),
                b_layout=draw(st.sampled_from(MATRIX_LAYOUTS), label="b_layout"),
                c_layout=draw(st.sampled_from([None] + OUT_LAYOUTS), label="c_layout"),
                alpha=draw(st.sampled_from([1.0, -0.5, 2.0, 0.0]), label="alpha"),
                beta=draw(st.sampled_from([0.0, 1.0, -1.5]), label="beta"),
                seed=draw(st.integers(0, 2**32 - 1), label="seed"))


def _check_gemm_case(dtype, case):
    rng = np.random.default_rng(case["seed"])
    M, N, K, ta, tb = case["M"], case["N"], case["K"], case["ta"], case["tb"]
    a = _with_layout(_values(rng, (K, M) if ta else (M, K), dtype), case["a_layout"])
    b = _with_layout(_values(rng, (N, K) if tb else (K, N), dtype), case["b_layout"])
    alpha, beta = case["alpha"], case["beta"]
    if dtype.kind == "c":
        alpha, beta = alpha * (1 - 0.5j), beta * (0.5 + 1j)
    rdt = _product_dtype(dtype)  # C's dtype (bfloat16 operands: float32)
    if case["c_layout"] is None:
        got = gemmkit.gemm(a, b, alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)
        assert got.shape == (M, N) and got.dtype == rdt
        _assert_close(got, a, b, rdt, alpha=alpha, ta=ta, tb=tb)
        return
    c = _out_array((M, N), rdt, case["c_layout"], 0)
    c[...] = _values(rng, (M, N), rdt)
    c0 = c.copy()
    got = gemmkit.gemm(a, b, c, alpha=alpha, beta=beta, trans_a=ta, trans_b=tb)
    assert got is c
    _assert_close(c, a, b, rdt, alpha=alpha, beta=beta, c0=c0, ta=ta, tb=tb)


@pytest.mark.parametrize("dtype_name", FLOAT_DTYPES)
@settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=gemm_case())
def test_gemm_alpha_beta_trans_c_in_place(dtype_name, case):
    dtype = _dtype(dtype_name)
    if not _has_kernels(dtype_name):
        c = np.full((case["M"], case["N"]), 3, dtype)
        with pytest.raises(TypeError, match="not there yet"):
            gemmkit.gemm(np.ones((case["M"], case["K"]), dtype), np.ones((case["K"], case["N"]), dtype), c)
        assert np.all(c == 3)
        return
    _check_gemm_case(dtype, case)


@pytest.mark.parametrize("dtype_name", FLOAT_DTYPES)
@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(case=gemm_case())
def test_gemm_on_the_strict_core_model(monkeypatch, dtype_name, case):
    dtype = _dtype(dtype_name)
    monkeypatch.setattr(_core, "gemm_batch", _strict_core_model(dtype))
    _check_gemm_case(dtype, case)


def test_gemm_beta_zero_ignores_nan_in_c():
    _float32_only()
    c = np.full((3, 2), np.nan, np.float32)
    gemmkit.gemm(np.ones((3, 4), np.float32), np.ones((4, 2), np.float32), c, beta=0.0)
    assert np.array_equal(c, np.full((3, 2), 4, np.float32))


# ---- bad arguments ----------------------------------------------------------------------------------

def _reject(exc, match, fn, *args, untouched=(), **kwargs):
    before = [x.copy() for x in untouched]
    with pytest.raises(exc, match=match):
        fn(*args, **kwargs)
    for x, x0 in zip(untouched, before):
        assert np.array_equal(x, x0, equal_nan=True), "an output was written although the call was rejected"


def test_matmul_rejects_bad_arguments():
    f32 = np.float32
    a, b = np.ones((3, 4), f32), np.ones((4, 5), f32)
    out = np.full((3, 5), 9, f32)
    _reject(ValueError, r"a has 4 columns .* b has 3 rows", gemmkit.matmul, a, np.ones((3, 5), f32), out,
            untouched=[out])
    _reject(ValueError, r"stack dimensions of a \(2,\) and b \(3,\)", gemmkit.matmul, np.ones((2, 3, 4), f32),
            np.ones((3, 4, 5), f32))
    _reject(ValueError, r"out has shape \(5, 3\) but the result has shape \(3, 5\)", gemmkit.matmul, a, b,
            np.zeros((5, 3), f32))
    _reject(ValueError, r"out has shape \(3, 5\) but the result has shape \(2, 3, 5\)", gemmkit.matmul,
            np.ones((2, 3, 4), f32), b, out, untouched=[out])
    _reject(TypeError, r"Cannot cast ufunc 'matmul' output from dtype\('float32'\) to dtype\('int32'\)",
            gemmkit.matmul, a, b, np.zeros((3, 5), np.int32))
    _reject(TypeError, r"out must be a NumPy array", gemmkit.matmul, a, b, [[0.0] * 5] * 3)
    ro = np.zeros((3, 5), f32)
    ro.flags.writeable = False
    _reject(ValueError, r"out is read-only", gemmkit.matmul, a, b, ro)
    _reject(ValueError, r"a is a scalar", gemmkit.matmul, np.float32(2), b)
    _reject(ValueError, r"b is a scalar", gemmkit.matmul, a, 2.0)
    _reject(TypeError, r"are not numbers", gemmkit.matmul, np.ones((3, 4), "U2"), np.ones((4, 5), "U2"))
    _reject(TypeError, r"no common dtype", gemmkit.matmul, np.zeros((3, 4), "datetime64[s]"), b)


def test_gemm_rejects_bad_arguments():
    f32 = np.float32
    a, b = np.ones((3, 4), f32), np.ones((4, 5), f32)
    c = np.full((3, 5), 9, f32)
    _reject(ValueError, r"op\(a\) is 3x4 .* op\(b\) is 5x4", gemmkit.gemm, a, b, c, trans_b=True, untouched=[c])
    _reject(ValueError, r"op\(a\) is 4x3", gemmkit.gemm, a, b, c, trans_a=True, untouched=[c])
    _reject(ValueError, r"c has shape \(5, 3\) but the result has shape \(3, 5\)", gemmkit.gemm, a, b,
            np.zeros((5, 3), f32))
    _reject(TypeError, r"c has dtype float64 but the result is float32", gemmkit.gemm, a, b, np.zeros((3, 5)))
    _reject(ValueError, r"a must be 2-D", gemmkit.gemm, np.ones(4, f32), b)
    _reject(ValueError, r"b must be 2-D", gemmkit.gemm, a, np.ones((1, 4, 5), f32))
    _reject(TypeError, r"alpha=1j is complex but the arrays are float32", gemmkit.gemm, a, b, c, alpha=1j,
            untouched=[c])
    _reject(TypeError, r"beta must be a real number", gemmkit.gemm, a, b, c, beta="x", untouched=[c])
    _reject(TypeError, r"are not numbers", gemmkit.gemm, np.ones((3, 4), "U2"), np.ones((4, 5), "U2"))
