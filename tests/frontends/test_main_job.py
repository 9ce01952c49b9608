"""Tests of the main job's table (`gemmkit`, gemmkit/_main_job.py): each row is compared with a named peer,
int8 with ONNX Runtime's MatMulInteger when installed (exact), else NumPy's float32 matmul of the same values;
bfloat16 with MKL's or oneDNN's gemm_bf16bf16f32 when installed, else NumPy's bfloat16 matmul (ml_dtypes)."""
import sys

import numpy as np
import pytest

from gemmkit import _main_job


def test_int8_peer_is_onnxruntime_matmul_integer_when_installed():
    pytest.importorskip("onnx")
    pytest.importorskip("onnxruntime")
    name, fn = _main_job.int8_peer()
    assert name.startswith("ONNX Runtime ") and "MatMulInteger" in name
    rng = np.random.default_rng(5)
    A = rng.integers(0, 128, (7, 33), dtype=np.uint8)
    B = rng.integers(-128, 128, (33, 5), dtype=np.int8)
    got = fn(A, B)
    assert got.dtype == np.int32
    assert np.array_equal(got, A.astype(np.int64) @ B.astype(np.int64))


def test_int8_peer_without_onnxruntime_is_numpy_float32_and_says_so(monkeypatch):
    monkeypatch.setitem(sys.modules, "onnxruntime", None)   # import onnxruntime raises ImportError
    name, fn = _main_job.int8_peer()
    assert fn is None and name.startswith("NumPy float32 matmul") and "no int8 peer installed" in name


def _bf16_operands(rng, M, N, K):
    ml_dtypes = pytest.importorskip("ml_dtypes")
    A = rng.standard_normal((M, K)).astype(ml_dtypes.bfloat16)
    B = rng.standard_normal((K, N)).astype(ml_dtypes.bfloat16)
    return A, B, A.astype(np.float64) @ B.astype(np.float64)


@pytest.mark.parametrize("find", ["_mkl_bf16", "_onednn_bf16"])
def test_bf16_library_peer_matches_float64_when_installed(find):
    peer = getattr(_main_job, find)()
    if peer is None:
        pytest.skip(f"{find}: the library is not installed (or lacks gemm_bf16bf16f32)")
    name, fn = peer
    assert name.split(" ")[0] in ("MKL", "oneDNN") and "bf16bf16f32" in name
    A, B, want = _bf16_operands(np.random.default_rng(3), 7, 5, 129)
    C = np.zeros((7, 5), np.float32)
    assert fn(A, B, C) is C
    assert np.abs(C - want).max() <= 8 * np.finfo(np.float32).eps * 129 * np.abs(want).max()


def test_bf16_peer_without_libraries_is_numpy_bfloat16_up_to_its_cap(monkeypatch):
    monkeypatch.setattr(_main_job, "_mkl_bf16", lambda: None)
    monkeypatch.setattr(_main_job, "_onednn_bf16", lambda: None)
    name, fn, max_n = _main_job.bf16_peer()
    assert name.startswith("NumPy bfloat16 matmul") and "no bfloat16 BLAS installed" in name
    assert max_n == _main_job.BF16_NUMPY_MAX_N
    A, B, want = _bf16_operands(np.random.default_rng(4), 3, 4, 8)
    got = fn(A, B, None)
    assert got.dtype in (np.float32, A.dtype)   # float32 from recent ml_dtypes, bfloat16 from older ones
    assert np.allclose(got.astype(np.float64), want, rtol=2**-7, atol=1e-2)


def _rows(out):
    return [line for line in out.splitlines() if line.startswith(("sgemm", "gemm_u8s8s32", "bf16bf16f32"))]


def test_bench_table_names_each_rows_peer(capsys, monkeypatch):
    monkeypatch.setattr(_main_job, "_median_time", lambda fn, **kw: (fn(), 1e-3)[1])
    _main_job.bench_table(sizes=(16,))
    out = capsys.readouterr().out
    rows = _rows(out)
    try:
        import ml_dtypes  # noqa: F401
    except ImportError:
        assert len(rows) == 2 and "no bfloat16 rows: ml_dtypes is not installed" in out
    else:
        assert len(rows) == 3
        bf16_name, _, _ = _main_job.bf16_peer()
        assert rows[2].endswith(bf16_name.split(" ")[0]) and f"bfloat16 peer: {bf16_name}" in out
    assert rows[0].endswith("NumPy matmul (its BLAS)")
    peer_name, peer = _main_job.int8_peer()
    assert rows[1].endswith("ONNX Runtime" if peer is not None else "NumPy float32")
    assert f"int8 peer: {peer_name}" in out
    assert "beyond the rounding bound" not in out
    # the int8 note only where the peer is not exact (ONNX Runtime's u8s8 MatMulInteger saturates pairs of products
    # to int16 on AVX2 CPUs without VNNI): the table's inputs, redrawn, decide
    rng = np.random.default_rng(0)
    rng.standard_normal((16, 16)), rng.standard_normal((16, 16))  # the sgemm row's draws
    A, B = rng.integers(0, 256, (16, 16), dtype=np.uint8), rng.integers(-128, 128, (16, 16), dtype=np.int8)
    exact = peer is None or np.array_equal(peer(A, B), A.astype(np.int64) @ B.astype(np.int64))
    assert ("differs from the exact one" in out) == (not exact)


def test_bench_table_bf16_rows_with_numpy_peer_stop_at_its_cap(capsys, monkeypatch):
    pytest.importorskip("ml_dtypes")
    monkeypatch.setattr(_main_job, "_median_time", lambda fn, **kw: (fn(), 1e-3)[1])
    monkeypatch.setattr(_main_job, "_mkl_bf16", lambda: None)
    monkeypatch.setattr(_main_job, "_onednn_bf16", lambda: None)
    monkeypatch.setattr(_main_job, "BF16_NUMPY_MAX_N", 16)
    notes = _main_job._bf16_rows((16, 24), np.random.default_rng(0))
    rows = _rows(capsys.readouterr().out)
    assert len(rows) == 2 and rows[0].endswith("  NumPy") and rows[1].endswith("NumPy (only up to 16)")
    assert notes[0].startswith("bfloat16 peer: NumPy bfloat16 matmul") and len(notes) == 1
