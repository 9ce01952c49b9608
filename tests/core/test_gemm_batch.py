"""The core's strided batch (gemmkit._core.gemm_batch over gemmkit_<t>gemm_batch, the 16-bit types' too):
every dtype, path and thread count, shared (stride 0), negative and interleaved batch strides, small
products spread over threads and large ones split, checked against a float64/complex128 loop; overlapping
outputs refused."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings, strategies as st

import gemmkit
from gemmkit import _core

from conftest import AVAILABLE_ARCHS, THREAD_COUNTS

try:
    import ml_dtypes
except ImportError:  # bfloat16 cases need ml_dtypes
    ml_dtypes = None
from _support import kernel_path, normal_values

DTYPES = ["float32", "float64", "complex64", "complex128"]
TOL = {"float32": 2e-5, "float64": 1e-12, "complex64": 2e-5, "complex128": 1e-12}


_values = normal_values


def _reference(ta, tb, alpha, A, B, beta, C0):
    wide = np.complex128 if C0.dtype.kind == "c" else np.float64
    out = np.empty(C0.shape, wide)
    for i in range(C0.shape[0]):
        a = A[i].astype(wide)
        b = B[i].astype(wide)
        a = a.T if ta == "T" else a.conj().T if ta == "C" else a
        b = b.T if tb == "T" else b.conj().T if tb == "C" else b
        out[i] = alpha * (a @ b) + (beta * C0[i].astype(wide) if beta != 0 else 0)
    return out


def _check(ta, tb, alpha, A, B, beta, C):
    C0 = C.copy()
    want = _reference(ta, tb, alpha, A, B, beta, C0)
    got = _core.gemm_batch(ta, tb, alpha, A, B, beta, C)
    assert got is C
    K = A.shape[1] if ta != "N" else A.shape[2]
    scale = np.abs(want).max() if want.size else 1.0
    assert np.allclose(C, want, rtol=TOL[C.dtype.name] * max(1, K), atol=TOL[C.dtype.name] * max(1, K) * scale)


def _stack(rng, batch, rows, cols, dtype, how):
    """A (batch, rows, cols) stack laid out as `how`: 'C' contiguous, 'padded' (rows and matrices
    apart by more than needed), 'shared' (one matrix, batch stride 0), 'reversed' (negative batch stride),
    'interleaved' (a transposed view of a (rows, batch, cols)-like array: matrices one row apart)."""
    if how == "shared":
        return np.broadcast_to(_values(rng, (1, rows, cols), dtype), (batch, rows, cols))
    if how == "padded":
        return _values(rng, (batch + 1, rows + 2, cols + 3), dtype)[:batch, 1:rows + 1, 2:cols + 2]
    if how == "reversed":
        return _values(rng, (batch, rows, cols), dtype)[::-1]
    if how == "interleaved":
        return _values(rng, (rows, batch, cols), dtype).transpose(1, 0, 2)
    return _values(rng, (batch, rows, cols), dtype)


@st.composite
def batch_case(draw):
    dim = st.one_of(st.integers(1, 9), st.integers(10, 40))
    return dict(batch=draw(st.sampled_from([1, 2, 3, 7, 33])), M=draw(dim), N=draw(dim), K=draw(st.integers(0, 40)),
                ta=draw(st.sampled_from("NTC")), tb=draw(st.sampled_from("NTC")),
                a_how=draw(st.sampled_from(["C", "padded", "shared", "reversed", "interleaved"])),
                b_how=draw(st.sampled_from(["C", "padded", "shared", "reversed", "interleaved"])),
                c_how=draw(st.sampled_from(["C", "padded", "reversed", "interleaved"])),
                alpha=draw(st.sampled_from([1.0, -0.5, 0.0, 2 - 1j])),
                beta=draw(st.sampled_from([0.0, 1.0, 0.5 + 0.5j])), seed=draw(st.integers(0, 2**31)))


def _case_operands(case, dtype, c_dtype):
    """A drawn case's ta, tb, alpha, beta and A, B, C stacks (a real dtype: conjugate transposes as plain
    ones, real alpha and beta); C all NaN where beta = 0 (never read then)."""
    cplx = np.dtype(dtype).kind == "c"
    ta, tb = (t if cplx or t != "C" else "T" for t in (case["ta"], case["tb"]))
    alpha, beta = (x if cplx else complex(x).real for x in (case["alpha"], case["beta"]))
    rng = np.random.default_rng(case["seed"])
    b_, M, N, K = case["batch"], case["M"], case["N"], case["K"]
    A = _stack(rng, b_, K if ta != "N" else M, M if ta != "N" else K, dtype, case["a_how"])
    B = _stack(rng, b_, N if tb != "N" else K, K if tb != "N" else N, dtype, case["b_how"])
    C = _stack(rng, b_, M, N, c_dtype, case["c_how"])
    if beta == 0:
        C[...] = np.nan
    return ta, tb, alpha, beta, A, B, C


@pytest.mark.parametrize("arch", AVAILABLE_ARCHS)
@pytest.mark.parametrize("threads", THREAD_COUNTS)
@pytest.mark.parametrize("dtype", DTYPES)
@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=batch_case())
def test_gemm_batch_matches_a_loop(arch, threads, dtype, case):
    ta, tb, alpha, beta, A, B, C = _case_operands(case, dtype, dtype)
    with kernel_path(arch, threads):
        _check(ta, tb, alpha, A, B, beta, C)


HALF_DTYPES = ["float16"] + (["bfloat16"] if ml_dtypes else [])


@pytest.mark.parametrize("arch", AVAILABLE_ARCHS)
@pytest.mark.parametrize("threads", THREAD_COUNTS)
@pytest.mark.parametrize("dtype", HALF_DTYPES)
# data_too_large: seen under QEMU (.ci/arm64-run) once the checkout's .hypothesis database held examples (a fresh one
# passed): a check on the generation of examples only, nothing the test asserts changes
@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(case=batch_case())
def test_gemm_batch_half_matches_a_loop(arch, threads, dtype, case):
    """16-bit stacks (gemm_batch over gemmkit_hgemm_batch / gemmkit_gemm_bf16bf16f32_batch): float16
    into float16, bfloat16 into float32, every layout of the float types, against the plain
    call on each matrix (bit for bit: the same driver) and a float64 loop on the 16-bit values."""
    bf16 = dtype == "bfloat16"
    ta, tb, alpha, beta, A, B, C = _case_operands(case, dtype, "float32" if bf16 else dtype)
    b_, M, N, K = case["batch"], case["M"], case["N"], case["K"]
    C0 = C.copy()
    plain = _core.gemm_bf16bf16f32 if bf16 else _core.hgemm
    with kernel_path(arch, threads):
        assert _core.gemm_batch(ta, tb, alpha, A, B, beta, C) is C
        loop = C0.copy()
        for i in range(b_):
            a, b, c = np.ascontiguousarray(A[i]), np.ascontiguousarray(B[i]), loop[i]
            plain(ta, tb, M, N, K, alpha, a, max(1, a.shape[1]), b, max(1, b.shape[1]), beta, c, N)
    assert np.array_equal(C, loop, equal_nan=True)
    want = _reference(ta, tb, alpha, A.astype(np.float64), B.astype(np.float64), beta, C0.astype(np.float64))
    scale = np.abs(want).max() if want.size else 1.0
    rtol = 2e-5 * max(1, K) if bf16 else 1e-3  # float32 sums; float16: one rounding of them
    assert np.allclose(C.astype(np.float64), want, rtol=rtol, atol=2e-5 * max(1, K) * scale)


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("shape", [(10000, 8, 8, 8), (300, 32, 32, 32), (3, 200, 180, 190)])
def test_gemm_batch_small_and_large_products(dtype, shape):
    """Many tiny products (spread whole over the threads) and a few large ones (each split)."""
    rng = np.random.default_rng(5)
    b_, M, N, K = shape
    A, B, C = _values(rng, (b_, M, K), dtype), _values(rng, (b_, K, N), dtype), np.empty((b_, M, N), dtype)
    old = gemmkit.get_num_threads()
    gemmkit.set_num_threads(2)
    try:
        _check("N", "N", 1.0, A, B, 0.0, C)
    finally:
        gemmkit.set_num_threads(old)


def _aligned_empty(shape, dtype, offset):
    """An uninitialised array whose data starts `offset` bytes past a 64-byte boundary."""
    nbytes = int(np.prod(shape)) * np.dtype(dtype).itemsize
    buf = np.empty(nbytes + 128, np.uint8)
    start = (-buf.ctypes.data) % 64 + offset
    return buf[start:start + nbytes].view(dtype).reshape(shape)


@pytest.mark.parametrize("threads", THREAD_COUNTS)
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_gemm_batch_streamed_from_memory(dtype, threads):
    """Batches of tiny products past the caches (19-27 MiB of operands, C rows of 256 bytes, more than 32 k
    steps: streamed where the configuration says so (Zen 2, Zen 4, the AVX2 and AVX-512 defaults), the next
    product fetched while one computes and C stored non-temporally where 32-byte aligned): aligned and
    unaligned C, a shared (stride 0) A, an A with gaps between its rows, NaN in C under beta 0, alpha 1 (the
    direct store) and not, every path."""
    rng = np.random.default_rng(11)
    b_, n, k = (400, 64, 64) if dtype == "float32" else (1000, 32, 40)
    A, B = _values(rng, (b_, n, k), dtype), _values(rng, (b_, k, n), dtype)
    for arch in AVAILABLE_ARCHS:
        with kernel_path(arch, threads):
            for offset, alpha in ((0, 1.0), (8, 1.0), (32, -0.5)):
                C = _aligned_empty((b_, n, n), dtype, offset)
                C[...] = np.nan
                _check("N", "N", alpha, A, B, 0.0, C)
            C = _aligned_empty((b_, n, n), dtype, 0)
            C[...] = np.nan
            _check("N", "N", 1.0, np.broadcast_to(A[:1], A.shape), B, 0.0, C)
            # rows of A three times as far apart as they are long: nothing of it fetched ahead
            A_wide = np.zeros((b_, n, 3 * k), dtype)
            A_wide[:, :, :k] = A
            C[...] = np.nan
            _check("N", "N", 1.0, A_wide[:, :, :k], B, 0.0, C)


def test_gemm_batch_refuses_overlapping_outputs_and_bad_shapes():
    A = np.ones((3, 4, 5), np.float32)
    B = np.ones((3, 5, 6), np.float32)
    shared_c = np.lib.stride_tricks.as_strided(np.zeros((4, 6), np.float32), (3, 4, 6), (0, 24, 4))
    before = shared_c.copy()
    with pytest.raises(ValueError, match="C's matrices overlap"):
        _core.gemm_batch("N", "N", 1.0, A, B, 0.0, shared_c)
    assert np.array_equal(shared_c, before)
    half = np.lib.stride_tricks.as_strided(np.zeros(200, np.float32), (3, 4, 6), (40, 24, 4))  # overlap by rows
    with pytest.raises(ValueError, match="C's matrices overlap"):
        _core.gemm_batch("N", "N", 1.0, A, B, 0.0, half)
    C = np.zeros((3, 4, 6), np.float32)
    with pytest.raises(ValueError, match=r"^A's batch axes \(2,\) do not broadcast to \(3,\)"):
        _core.gemm_batch("N", "N", 1.0, A[:2], B, 0.0, C)
    with pytest.raises(ValueError, match="^A has more batch axes"):
        _core.gemm_batch("N", "N", 1.0, A[None], B, 0.0, C)
    with pytest.raises(ValueError, match="^B's matrices are 5 x 6, which does not fit"):
        _core.gemm_batch("N", "T", 1.0, A, B, 0.0, C)
    with pytest.raises(ValueError, match="^A's matrices are 4 x 5, which does not fit"):
        _core.gemm_batch("T", "N", 1.0, A, B, 0.0, C)
    with pytest.raises(TypeError, match="^B must have dtype float32"):
        _core.gemm_batch("N", "N", 1.0, A, B.astype(np.float64), 0.0, C)
    with pytest.raises(ValueError, match="^A must have at least 2 dimensions"):
        _core.gemm_batch("N", "N", 1.0, A[0, 0], B, 0.0, C)
    with pytest.raises(ValueError, match="^A must have unit stride"):
        _core.gemm_batch("N", "N", 1.0, np.ones((3, 4, 10), np.float32)[:, :, ::2], B, 0.0, C)
    with pytest.raises(TypeError, match="^alpha must be a real number"):
        _core.gemm_batch("N", "N", None, A, B, 0.0, C)
    with pytest.raises(ValueError, match="^transa must be one of"):
        _core.gemm_batch("C", "N", 1.0, A, B, 0.0, C)
    assert np.all(C == 0)


@pytest.mark.parametrize("dtype", DTYPES)
def test_gemm_batch_broadcasts_and_merges_batch_axes(dtype):
    """N-D batches: A shared along one axis and B along another, C with a gap between its outer axes
    (they cannot merge: the inner run is one core call each), size-1 axes anywhere."""
    rng = np.random.default_rng(9)
    A = _values(rng, (1, 3, 1, 5, 4), dtype)                    # broadcast over axes 0 and 2
    B = _values(rng, (2, 1, 4, 4, 6), dtype)                    # broadcast over axis 1
    C = _values(rng, (2, 4, 4, 1, 5, 7), dtype)[:, :3, :, 0, :, :6]   # (2, 3, 4, 5, 6), gaps
    want = 0.5 * np.matmul(A.astype(np.complex128), B.astype(np.complex128)) + 2.0 * C.astype(np.complex128)
    _core.gemm_batch("N", "N", 0.5, A, B, 2.0, C)
    assert np.allclose(C, want if np.dtype(dtype).kind == "c" else want.real, rtol=1e-4, atol=1e-4)
