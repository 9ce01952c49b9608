"""Tests of the main job's table (`gemmkit`, gemmkit/_main_job.py): each row is compared with a named peer,
int8 with ONNX Runtime's MatMulInteger when installed (exact), else NumPy's float32 matmul of the same values."""
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


def test_bench_table_names_each_rows_peer(capsys, monkeypatch):
    monkeypatch.setattr(_main_job, "_median_time", lambda fn, **kw: (fn(), 1e-3)[1])
    _main_job.bench_table(sizes=(16,))
    out = capsys.readouterr().out
    rows = [line for line in out.splitlines() if line.startswith(("sgemm", "gemm_u8s8s32"))]
    assert len(rows) == 2
    assert rows[0].endswith("NumPy matmul (its BLAS)")
    peer_name, peer = _main_job.int8_peer()
    assert rows[1].endswith("ONNX Runtime" if peer is not None else "NumPy float32")
    assert f"int8 peer: {peer_name}" in out
    assert "differs from the exact one" not in out
