"""gemmkit.matmul / gemm on integer and bool arrays against np.matmul bit for bit (NumPy's modular arithmetic),
and matmul's NumPy keywords (out with casting, dtype, signature, axes, axis, order, subok) against np.matmul."""
import numpy as np
import pytest

import gemmkit
from gemmkit import _core

INT_DTYPES = ("int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64")
ALL_DTYPES = ("bool",) + INT_DTYPES
# tile edges of the int8 kernels, the 4 x 16 limb tile and the 4 x 8 64-bit one, with one past each
SIZES = (1, 3, 4, 5, 8, 15, 16, 17, 33)


def values(rng, shape, dtype, kind="full"):
    """Random entries of dtype: the full range, only its extremes, or small ones (the narrow kernels)."""
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return rng.random(shape) < 0.3
    info = np.iinfo(dtype)
    if kind == "extreme":
        picks = np.array([info.min, info.max, info.min + 1, info.max - 1, 0, 1], dtype=object)
        return np.array(rng.choice(picks, shape), dtype=dtype)
    if kind == "small":
        return rng.integers(max(info.min, -100), min(info.max, 100), shape, dtype=dtype, endpoint=True)
    return rng.integers(info.min, info.max, shape, dtype=dtype, endpoint=True)


def check(a, b, **kw):
    want = np.matmul(a, b, **kw)
    got = gemmkit.matmul(a, b, **kw)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    assert got.shape == want.shape
    np.testing.assert_array_equal(got, want)
    return got


@pytest.mark.smoke
@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_known_values_wrap(dtype):
    """A product that overflows the type wraps as NumPy's loop does (bool: any of and)."""
    if dtype == "bool":
        a = np.array([[True, False], [False, False]])
        b = np.array([[False, True], [True, True]])
        np.testing.assert_array_equal(gemmkit.matmul(a, b), [[False, True], [False, False]])
        return
    info = np.iinfo(dtype)
    a = np.full((2, 3), info.max, dtype)
    b = np.full((3, 2), info.max, dtype)
    check(a, b)
    check(np.full((2, 3), info.min, dtype), b)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
@pytest.mark.parametrize("kind", ("full", "extreme", "small"))
def test_generated_every_path(arch, nthreads, dtype, kind, rng):
    """Tile edges, each transposition (views of transposed storage), every kernel path, 1 and 2 threads."""
    for M in SIZES[::2]:
        for N in SIZES[1::2]:
            K = int(rng.choice(SIZES))
            a, b = values(rng, (M, K), dtype, kind), values(rng, (K, N), dtype, kind)
            check(a, b)
            check(np.ascontiguousarray(a.T).T, b)
            check(a, np.ascontiguousarray(b.T).T)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_larger_products_two_threads(dtype, rng):
    """Past the packing blocks and split between threads."""
    with_threads = gemmkit.get_num_threads()
    gemmkit.set_num_threads(2)
    try:
        for M, N, K in ((130, 140, 300), (64, 257, 1030)):
            check(values(rng, (M, K), dtype), values(rng, (K, N), dtype))
    finally:
        gemmkit.set_num_threads(with_threads)


@pytest.mark.parametrize("dtype", ("uint8", "int8", "bool"))
def test_8bit_long_k_past_int32_chunk(dtype):
    """K past the int8 kernels' exact int32 chunk: sums that would saturate int32 still wrap modulo 2^8."""
    K = (1 << 16) + 700
    if dtype == "bool":
        a = np.zeros((2, K), bool)
        b = np.zeros((K, 3), bool)
        a[1, K - 1] = b[K - 1, 2] = True  # the only true pair: in the last chunk
        check(a, b)
        return
    big = np.iinfo(dtype).max if dtype == "uint8" else np.iinfo(dtype).min
    a = np.full((2, K), big, dtype)
    b = np.full((K, 3), 128 if dtype == "uint8" else -128, dtype)
    b[5, 1] = 7
    check(a, b)


@pytest.mark.parametrize("density", (0.002, 0.05, 0.6))
@pytest.mark.parametrize("trans", ("NN", "TN", "NT"))
def test_bool_bit_sets(density, trans, rng):
    """bool on bit sets: rows of C that fill up early (dense) or never (sparse, runs of false bytes skipped
    eight at a time), N across and within 64-bit words and the 512-column chunks a row of C is summed in, each
    storage order, bytes other than 0 / 1 as true."""
    for M, N, K in ((7, 64, 600), (9, 65, 129), (3, 200, 1000), (130, 1, 70), (5, 512, 90), (4, 1100, 300)):
        a, b = rng.random((M, K)) < density, rng.random((K, N)) < density
        if trans[0] == "T":
            a = np.ascontiguousarray(a.T).T
        if trans[1] == "T":
            b = np.ascontiguousarray(b.T).T
        check(a, b)
    # one true byte per row of A and per column of B, with one set bit anywhere: each C entry hangs on one pair
    raw_a = np.zeros((40, 70), np.uint8)
    raw_a[np.arange(40), rng.integers(0, 70, 40)] = rng.choice(np.array([1, 2, 8, 64, 128, 255], np.uint8), 40)
    raw_b = np.zeros((70, 19), np.uint8)
    raw_b[rng.integers(0, 70, 19), np.arange(19)] = rng.choice(np.array([1, 2, 4, 16, 128], np.uint8), 19)
    raw_b[raw_a.argmax(1)[:19], np.arange(19)] = np.array([2, 4, 16, 32, 128] * 4, np.uint8)[:19]
    check(raw_a.view(bool), raw_b.view(bool))
    check(raw_b.T.view(bool), raw_a.T.view(bool))


# columns of C around a 64-bit word, the portable kernel's 512-column chunk and the AVX-512 one's 2048 (its zmm of 8
# words, the last one partial)
BOOL_NS = (1, 63, 64, 65, 511, 512, 513, 600, 1100, 2047, 2048, 2049, 2600)


def check_bool_chunks(fn, rng):
    """fn(a, b, c0, beta) -> C for bool a, b (op shapes), beta 0 / 1 over c0: N around the words and chunks, rows of C
    that fill up early (dense), late (a chunk's last columns the last true) or never (sparse), K across the all-true
    checks (16 k), either storage order, against np.matmul."""
    for i, N in enumerate(BOOL_NS):
        M, K = (3, 5, 9)[i % 3], (1, 17, 40, 300)[i % 4]
        for density in (0.6, 0.02):
            a, b = rng.random((M, K)) < density, rng.random((K, N)) < density
            if i % 2:  # the last column true only through the last k: a chunk's check must not stop before it
                a[:, -1], b[-1, -1], b[:-1, -1] = True, True, False
            if i % 3 == 2:  # op(B) transposed (its rows strided), op(A) transposed
                a, b = np.asfortranarray(a), np.asfortranarray(b)
            beta = (i + int(density * 10)) % 2
            c0 = rng.random((M, N)) < 0.3
            want = np.matmul(a, b) | (c0 if beta else False)
            np.testing.assert_array_equal(fn(a, b, c0, beta), want, err_msg=f"{M}x{N}x{K} {density} beta={beta}")


def test_bool_chunks_every_path(arch, nthreads, rng):
    """The bool kernels of each path (AVX-512's where the path has them, else the portable ones), 1 and 2 threads."""
    def fn(a, b, c0, beta):
        c = c0.copy()
        return gemmkit.gemm(a, b, c, alpha=1, beta=beta) if beta else gemmkit.matmul(a, b)
    check_bool_chunks(fn, rng)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_stacks_broadcast_vectors_empty(dtype, rng):
    check(values(rng, (3, 4, 5), dtype), values(rng, (5, 6), dtype))
    check(values(rng, (2, 1, 4, 5), dtype), values(rng, (3, 5, 2), dtype))
    check(values(rng, (5,), dtype), values(rng, (4, 5, 3), dtype))
    check(values(rng, (4, 5), dtype), values(rng, (5,), dtype))
    got = check(values(rng, (7,), dtype), values(rng, (7,), dtype))
    assert np.ndim(got) == 0
    check(values(rng, (3, 0), dtype), values(rng, (0, 4), dtype))  # K = 0: zeros (False)
    check(values(rng, (0, 3), dtype), values(rng, (3, 4), dtype))
    row = values(rng, (1, 5), dtype)
    check(np.broadcast_to(row, (6, 5)), values(rng, (5, 3), dtype))  # a stride-0 operand


@pytest.mark.parametrize("pair", [("int8", "uint8"), ("int16", "uint8"), ("int32", "int64"), ("uint32", "int8"),
                                  ("int8", "float32"), ("uint64", "int64"), ("bool", "int8"), ("bool", "float64"),
                                  ("int64", "complex64")])
def test_mixed_dtypes_promote_as_numpy(pair, rng):
    a = values(rng, (5, 7), pair[0]) if pair[0] in ALL_DTYPES else rng.standard_normal((5, 7)).astype(pair[0])
    b = values(rng, (7, 4), pair[1]) if pair[1] in ALL_DTYPES else rng.standard_normal((7, 4)).astype(pair[1])
    if np.result_type(a, b).kind in "fc":
        want = np.matmul(a, b)
        got = gemmkit.matmul(a, b)
        assert got.dtype == want.dtype
        np.testing.assert_allclose(got, want, rtol=1e-5 if want.dtype.itemsize >= 8 else 1e-3,
                                   atol=1e-5 * np.abs(want).max())
    else:
        check(a, b)


@pytest.mark.parametrize("dtype", ALL_DTYPES)
def test_gemm_integer_alpha_beta(dtype, rng):
    """gemm on integers: alpha * (a @ b) + beta * c in NumPy's arithmetic with Python-int scalars."""
    a, b = values(rng, (6, 9), dtype), values(rng, (9, 5), dtype)
    c0 = values(rng, (6, 5), dtype)
    for alpha, beta in ((1, 0), (3, 0), (3, 2), (-1, 1), (0, 5)) if dtype != "bool" else ((1, 0), (1, 1), (0, 1)):
        if dtype.startswith("uint") and (alpha < 0 or beta < 0):
            continue
        if dtype == "bool":
            want = (bool(alpha) & np.matmul(a, b)) | (bool(beta) & c0)
        else:
            with np.errstate(over="ignore"):
                want = np.array(alpha, dtype) * np.matmul(a, b) + np.array(beta, dtype) * c0
        c = c0.copy()
        got = gemmkit.gemm(a, b, c, alpha=alpha, beta=beta)
        assert got is c
        np.testing.assert_array_equal(c, want)
    np.testing.assert_array_equal(gemmkit.gemm(a, b, trans_b=False), np.matmul(a, b))
    np.testing.assert_array_equal(gemmkit.gemm(a.T.copy(), b, trans_a=True), np.matmul(a, b))


def test_gemm_integer_scalars_refused():
    a = np.ones((2, 2), np.int8)
    c = np.zeros((2, 2), np.int8)
    with pytest.raises(TypeError, match="alpha"):
        gemmkit.gemm(a, a, c, alpha=2.5)
    with pytest.raises(OverflowError, match="beta"):
        gemmkit.gemm(a, a, c, beta=300)
    assert not c.any()


def test_core_entry_checks():
    """gemm_batch refuses what the C entry refuses; nothing is written then."""
    a = np.ones((2, 3), np.int16)
    c = np.full((2, 2), 7, np.int16)
    with pytest.raises(ValueError):
        _core.gemm_batch("N", "N", 1, a, np.ones((4, 2), np.int16), 0, c)
    with pytest.raises(TypeError):
        _core.gemm_batch("N", "N", 1.5, a, np.ones((3, 2), np.int16), 0, c)
    with pytest.raises(TypeError):
        _core.gemm_batch("N", "N", 1, a, np.ones((3, 2), np.int32), 0, c)
    assert (c == 7).all()


# ---- matmul's NumPy keywords --------------------------------------------------------------------------------

def same_outcome(*args, **kw):
    """gemmkit.matmul and np.matmul give the same values and dtype, or raise the same exception type."""
    try:
        want = np.matmul(*args, **kw)
    except Exception as e:
        with pytest.raises(type(e)):
            gemmkit.matmul(*args, **kw)
        return None
    got = gemmkit.matmul(*args, **kw)
    assert type(got) is type(want)
    assert np.asarray(got).dtype == np.asarray(want).dtype
    np.testing.assert_allclose(np.asarray(got, np.float64) if np.asarray(got).dtype.kind != "c" else got,
                               np.asarray(want, np.float64) if np.asarray(want).dtype.kind != "c" else want,
                               rtol=1e-5)
    return got


@pytest.mark.parametrize("out_dtype", ("float64", "float32", "float16", "complex64", "int32", "int64", "bool"))
@pytest.mark.parametrize("casting", ("same_kind", "unsafe", "safe", "no"))
def test_out_casting(out_dtype, casting, rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 5))
    out = np.full((3, 5), 9, out_dtype)
    ref = out.copy()
    got = same_outcome(a, b, out=out, casting=casting)
    if got is None:
        np.testing.assert_array_equal(out, ref)  # refused: out untouched
    else:
        assert got is out
    ai, bi = values(rng, (3, 4), "int16"), values(rng, (4, 5), "int16")
    out = np.full((3, 5), 9, out_dtype)
    same_outcome(ai, bi, out=out, casting=casting)


@pytest.mark.parametrize("dtype", ("float32", "float64", "int16", "int8", "complex128", "float16", "bool"))
@pytest.mark.parametrize("casting", ("same_kind", "unsafe", "safe"))
def test_dtype_keyword(dtype, casting, rng):
    for a, b in ((rng.standard_normal((3, 4)), rng.standard_normal((4, 2))),
                 (values(rng, (3, 4), "int8"), values(rng, (4, 2), "int8")),
                 (values(rng, (3, 4), "int32"), values(rng, (4, 2), "uint8"))):
        same_outcome(a, b, dtype=dtype, casting=casting)


def test_signature_order_subok_axis_bad_values(rng):
    a, b = rng.standard_normal((3, 4)), rng.standard_normal((4, 2))
    same_outcome(a, b, signature=(None, None, "f"))
    same_outcome(a, b, signature="ff->f")
    same_outcome(a, b, signature=("f", "f"))
    same_outcome(a, b, dtype="f", signature="dd->d")
    got = same_outcome(a, b, order="F")
    assert got.flags.f_contiguous
    same_outcome(a, b, order="X")
    same_outcome(a, b, casting="bogus")
    same_outcome(a, b, axis=0)
    same_outcome(a, b, subok=3)
    same_outcome(a, b, out=(np.empty((3, 2)),))
    same_outcome(a, b, out=(np.empty((3, 2)), np.empty((3, 2))))
    same_outcome(a, b, out=[np.empty((3, 2))])
    m = same_outcome(np.matrix(a), np.matrix(b))
    assert isinstance(m, np.matrix)
    assert type(gemmkit.matmul(np.matrix(a), np.matrix(b), subok=False)) is np.ndarray

    class Sub(np.ndarray):
        pass
    assert type(same_outcome(a.view(Sub), b)) is Sub
    with pytest.raises(TypeError):
        gemmkit.matmul(a, b, bogus=1)


def test_axes_keyword(rng):
    a, b = rng.standard_normal((5, 3, 4)), rng.standard_normal((5, 4, 2))
    same_outcome(a, b, axes=[(1, 2), (1, 2), (1, 2)])
    same_outcome(np.moveaxis(a, 0, 2), b, axes=[(0, 1), (1, 2), (0, 2)])
    same_outcome(a, np.moveaxis(b, 2, 0), axes=[(-2, -1), (2, 0), (-1, -2)])
    out = np.empty((2, 5, 3))
    got = gemmkit.matmul(a, b, axes=[(1, 2), (1, 2), (2, 0)], out=out)
    assert got is out
    np.testing.assert_allclose(out, np.matmul(a, b, axes=[(1, 2), (1, 2), (2, 0)]))
    v = rng.standard_normal(4)
    same_outcome(v, v, axes=[0, 0])
    same_outcome(v, v, axes=[(0,), (0,), ()])
    same_outcome(a, b, axes=5)
    same_outcome(a, b, axes=[(1, 7), (1, 2), (1, 2)])
    same_outcome(a, b, axes=[(1,), (1, 2), (1, 2)])
    same_outcome(a, b, axes=[(1, 2), (1, 2)])
    ai = values(rng, (4, 3, 6), "int16")
    bi = values(rng, (4, 6, 2), "int16")
    same_outcome(ai, bi, axes=[(1, 2), (1, 2), (2, 1)])


def test_array_protocol_exceptions_propagate():
    """What an operand's __array__ raises reaches the caller unchanged (NumPy's behaviour), not a TypeError."""
    class Bad:
        def __array__(self, dtype=None, copy=None):
            raise KeyError("from __array__")
    with pytest.raises(KeyError, match="from __array__"):
        gemmkit.matmul(Bad(), np.ones((2, 2)))
    with pytest.raises(KeyError, match="from __array__"):
        gemmkit.matmul(np.ones((2, 2)), Bad())
    with pytest.raises(KeyError, match="from __array__"):
        gemmkit.gemm(Bad(), np.ones((2, 2)))
    with pytest.raises(ValueError):  # ragged: NumPy's own ValueError
        gemmkit.matmul([[1.0, 2.0], [3.0]], np.ones((2, 2)))
