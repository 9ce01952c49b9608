"""Tests of gemmkit.onnx's com.microsoft MatMulIntegerToFloat and DynamicQuantizeMatMul: run in
onnx.reference.ReferenceEvaluator(new_ops=[...]) and checked against ONNX Runtime itself on the same model,
and their integer part against an int64 NumPy reference."""
import numpy as np
import pytest

from gemmkit import onnx as gk_onnx

onnx = pytest.importorskip("onnx")
from onnx import TensorProto, helper, numpy_helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

TYPES = {np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8,
         np.dtype(np.float32): TensorProto.FLOAT}


def model(op, inputs, m, n):
    """A one-node com.microsoft model; `inputs` is a list of (name, array or None for an empty slot)."""
    names = [name if arr is not None else "" for name, arr in inputs]
    node = helper.make_node(op, names, ["y"], domain="com.microsoft")
    vi = [helper.make_tensor_value_info(name, TYPES[arr.dtype], list(arr.shape)) for name, arr in inputs
          if arr is not None]
    graph = helper.make_graph([node], "g", vi, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    mdl = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid("com.microsoft", 1)])
    mdl.ir_version = 8
    return mdl, {name: arr for name, arr in inputs if arr is not None}


def run_both(mdl, feeds):
    ort = pytest.importorskip("onnxruntime")
    sess = ort.InferenceSession(mdl.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, feeds)[0]
    ref = ReferenceEvaluator(mdl, new_ops=[gk_onnx.DynamicQuantizeMatMul, gk_onnx.MatMulIntegerToFloat])
    got = ref.run(None, feeds)[0]
    return got, want


EXACT = []  # fractions of bit-equal outputs (printed with -s)


def close(got, want):
    assert got.shape == want.shape and got.dtype == np.float32
    EXACT.append(float(np.mean(got == want)))
    # the same integer sums and multipliers; ORT's kernels may round the scaling step differently
    np.testing.assert_allclose(got, want, rtol=2e-6, atol=2e-6 * np.abs(want).max())


@pytest.mark.parametrize("a_type", [np.int8, np.uint8])
@pytest.mark.parametrize("b_type", [np.int8, np.uint8])
@pytest.mark.parametrize("per_column", [False, True])
@pytest.mark.parametrize("mnk", [(1, 33, 64), (17, 40, 130), (3, 1, 9)])
def test_matmul_integer_to_float_vs_onnxruntime(a_type, b_type, per_column, mnk):
    m, n, k = mnk
    rng = np.random.default_rng(m * 7 + n)
    info_a, info_b = np.iinfo(a_type), np.iinfo(b_type)
    A = rng.integers(info_a.min, info_a.max + 1, (m, k)).astype(a_type)
    # int8 B in [-64, 64): ONNX Runtime's u8 x s8 kernels on CPUs without VNNI add pairs of products in
    # int16 (vpmaddubsw), which saturates on full-range data (test_full_range_exact covers that range)
    B = rng.integers(-64 if b_type == np.int8 else 0, 64 if b_type == np.int8 else 256, (k, n)).astype(b_type)
    a_scale = np.array(0.02, np.float32)
    b_scale = (rng.random(n if per_column else 1) * 0.01 + 1e-3).astype(np.float32)
    azp = np.array(rng.integers(info_a.min, info_a.max + 1), a_type)
    bzp = np.array(rng.integers(info_b.min, info_b.max + 1), b_type)
    bias = rng.standard_normal(n).astype(np.float32)
    mdl, feeds = model("MatMulIntegerToFloat", [("A", A), ("B", B), ("a_scale", a_scale), ("b_scale", b_scale),
                                                ("a_zp", azp), ("b_zp", bzp), ("bias", bias)], m, n)
    if a_type == np.int8 and b_type == np.uint8:  # ONNX Runtime has no kernel for this pair: ours alone
        ref = ReferenceEvaluator(mdl, new_ops=[gk_onnx.DynamicQuantizeMatMul, gk_onnx.MatMulIntegerToFloat])
        got = ref.run(None, feeds)[0]
    else:
        got, want = run_both(mdl, feeds)
        close(got, want)
    # the integer part exactly: the epilogue of an int64 sum
    acc = (A.astype(np.int64) - int(azp)) @ (B.astype(np.int64) - int(bzp))
    mult = (a_scale * b_scale).astype(np.float32)
    np.testing.assert_array_equal(got, acc.astype(np.float32) * mult + bias)


@pytest.mark.parametrize("b_type", [np.int8, np.uint8])
@pytest.mark.parametrize("mnk", [(1, 64, 256), (16, 48, 100), (5, 7, 3)])
@pytest.mark.parametrize("with_bias", [False, True])
def test_dynamic_quantize_matmul_vs_onnxruntime(b_type, mnk, with_bias):
    m, n, k = mnk
    rng = np.random.default_rng(k + n)
    A = rng.standard_normal((m, k)).astype(np.float32)
    A[:, 0] *= 8
    B = rng.integers(-64 if b_type == np.int8 else 0, 64 if b_type == np.int8 else 256, (k, n)).astype(b_type)
    b_scale = (rng.random(n) * 0.01 + 1e-3).astype(np.float32)
    bzp = np.array(3 if b_type == np.int8 else 128, b_type)
    bias = rng.standard_normal(n).astype(np.float32) if with_bias else None
    mdl, feeds = model("DynamicQuantizeMatMul", [("A", A), ("B", B), ("b_scale", b_scale), ("b_zp", bzp),
                                                 ("bias", bias)], m, n)
    got, want = run_both(mdl, feeds)
    close(got, want)


def test_dynamic_quantize_matmul_zeros_and_errors():
    B = np.ones((4, 3), np.int8)
    y = gk_onnx.dynamic_quantize_matmul(np.zeros((2, 4), np.float32), B, np.ones(3, np.float32),
                                        bias=np.arange(3, dtype=np.float32))
    np.testing.assert_array_equal(y, np.tile(np.arange(3, dtype=np.float32), (2, 1)))
    with pytest.raises(TypeError, match="A"):
        gk_onnx.dynamic_quantize_matmul(np.zeros((2, 4)), B, np.ones(3, np.float32))
    with pytest.raises(ValueError, match="K"):
        gk_onnx.matmul_integer_to_float(np.zeros((2, 5), np.int8), B, np.float32(1), np.float32(1))
    with pytest.raises(ValueError, match="b_zero_point"):
        gk_onnx.matmul_integer_to_float(np.zeros((2, 4), np.int8), B, np.float32(1), np.float32(1),
                                        b_zero_point=np.array([1, 2, 3], np.int8))
    with pytest.raises(ValueError, match="b_scale"):
        gk_onnx.matmul_integer_to_float(np.zeros((2, 4), np.int8), B, np.float32(1), np.ones(2, np.float32))


@pytest.mark.parametrize("a_type", [np.int8, np.uint8])
@pytest.mark.parametrize("b_type", [np.int8, np.uint8])
def test_full_range_exact(a_type, b_type):
    """Full-range operands and zero points: the float of the exact int64 sum, scaled as documented."""
    rng = np.random.default_rng(3)
    ia, ib = np.iinfo(a_type), np.iinfo(b_type)
    A = rng.integers(ia.min, ia.max + 1, (9, 300)).astype(a_type)
    A[0] = ia.max
    B = rng.integers(ib.min, ib.max + 1, (300, 21)).astype(b_type)
    B[:, 0] = ib.min
    azp, bzp = np.array(ia.min, a_type), np.array(ib.max, b_type)
    b_scale = (rng.random(21) * 0.01).astype(np.float32)
    got = gk_onnx.matmul_integer_to_float(A, B, np.float32(0.5), b_scale, azp, bzp)
    acc = (A.astype(np.int64) - int(azp)) @ (B.astype(np.int64) - int(bzp))
    np.testing.assert_array_equal(got, acc.astype(np.float32) * (np.float32(0.5) * b_scale))
