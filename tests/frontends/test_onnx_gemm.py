"""Tests of gemmkit.onnx (ONNX Gemm, every version and type) against onnx.reference and ONNX Runtime:
property cases over opsets, types, transposes, C shapes, alpha/beta, kernel paths and threads; models; errors."""
import zlib

import numpy as np
import pytest

import gemmkit
from gemmkit import _core, _fastpaths

onnx = pytest.importorskip("onnx")
from onnx import helper  # noqa: E402
from onnx.reference import ReferenceEvaluator  # noqa: E402

from gemmkit import onnx as gk_onnx  # noqa: E402

hypothesis = pytest.importorskip("hypothesis")
from hypothesis import given, settings, strategies as st  # noqa: E402

try:
    import ml_dtypes
    BFLOAT16 = np.dtype(ml_dtypes.bfloat16)
except ImportError:  # bfloat16 cases are skipped
    ml_dtypes = None
    BFLOAT16 = None

FLOAT_TYPES = ["float16", "float32", "float64", "bfloat16"]
INTEGER_TYPES = ["int32", "int64", "uint32", "uint64"]


def dtype_of(name):
    if name == "bfloat16":
        if BFLOAT16 is None:
            pytest.skip("ml_dtypes is not installed")
        return BFLOAT16
    return np.dtype(name)


def in_build(name):
    """Whether this build has the core function for the type (types land one step at a time)."""
    return hasattr(_core, gk_onnx.CORE_FUNCTION[name])


def gemm_model(dtype, opset, has_c=True, **attrs):
    """A one-node model Y = Gemm(A, B[, C]) of the given type and opset."""
    elem = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    names = ["A", "B", "C"] if has_c else ["A", "B"]
    inputs = [helper.make_tensor_value_info(n, elem, None) for n in names]
    node = helper.make_node("Gemm", names, ["Y"], **attrs)
    graph = helper.make_graph([node], "gemm", inputs, [helper.make_tensor_value_info("Y", elem, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def reference_gemm(A, B, C, opset, **attrs):
    """onnx.reference's Y. It has no Gemm-1 (its Gemm-6 has the same semantics), and its Gemm-6 with
    broadcast=0 drops beta, which the specification applies: those cases run its broadcast=1 path,
    the same as the text for a C of shape (M, N)."""
    opset = max(opset, 6)
    if opset < 7:
        attrs["broadcast"] = 1
    feeds = {"A": A, "B": B}
    if C is not None:
        feeds["C"] = C
    with np.errstate(all="ignore"):
        return ReferenceEvaluator(gemm_model(A.dtype, opset, C is not None, **attrs)).run(None, feeds)[0]


def float_bound(A, B, C, alpha, beta, transA, transB):
    """|Y - Y_ref| allowed for a floating type: (K + 4) roundings of the type on the magnitudes."""
    a = np.abs(A.astype(np.float64))
    b = np.abs(B.astype(np.float64))
    a, b = (a.T if transA else a), (b.T if transB else b)
    mag = abs(np.float32(alpha)) * (a @ b)
    if C is not None:
        mag = mag + abs(np.float32(beta)) * np.abs(C.astype(np.float64))
    K = a.shape[1]
    eps = float(np.finfo(A.dtype).eps) if A.dtype != BFLOAT16 else 2.0 ** -8
    tiny = float(np.finfo(np.float16).tiny) if A.dtype.itemsize == 2 else 1e-30
    return (K + 4) * eps * mag + tiny


def integer_float64_result(A, B, C, alpha, beta, transA, transB):
    """The float64 value onnx.reference casts to an integer type: dot (wrapping) * alpha [+ C * beta]."""
    a, b = (A.T if transA else A), (B.T if transB else B)
    o = np.dot(a, b) * float(np.float32(alpha))
    if C is not None and np.float32(beta) != 0:
        o = o + C * float(np.float32(beta))
    return o


def assert_matches(Y, ref, A, B, C, alpha, beta, transA, transB):
    assert Y.dtype == A.dtype and Y.shape == ref.shape
    if A.dtype.kind in "iu":
        want = ref.astype(A.dtype)
        if A.dtype == np.uint32:
            # Outside (-2^31 - 1, 2^32) NumPy's float64 -> uint32 cast (so the reference) depends on the
            # element's place in its loop; gemmkit keeps the low 32 bits of the int64 conversion there.
            o = integer_float64_result(A, B, C, alpha, beta, transA, transB)
            with np.errstate(invalid="ignore"):
                modular = o.astype(np.int64).astype(np.uint32)
            outside = ~((o > -2.0**31 - 1) & (o < 2.0**32))
            want = np.where(outside, modular, want)
        np.testing.assert_array_equal(Y, want)
        return
    y, r = Y.astype(np.float64), ref.astype(np.float64)
    bound = float_bound(A, B, C, alpha, beta, transA, transB)
    bad = ~(np.abs(y - r) <= bound)
    assert not bad.any(), f"{bad.sum()} elements off, worst {np.max(np.abs(y - r) - bound)}"


def random_matrix(rng, shape, dtype):
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    return rng.uniform(-1, 1, size=shape).astype(np.float32).astype(dtype)


def c_shapes(M, N):
    return [(), (1,), (N,), (1, N), (M, 1), (1, 1), (M, N)]


OPSETS = [1, 6, 7, 9, 11, 13]
ARCHS = gemmkit.available_archs()


def allowed(type_name, opset):
    return gk_onnx.TYPE_SINCE[type_name] <= gk_onnx.gemm_version(opset)


@settings(max_examples=400, deadline=None)
@given(data=st.data())
def test_gemm_matches_reference(data):
    type_name = data.draw(st.sampled_from(FLOAT_TYPES + INTEGER_TYPES), "type")
    if not in_build(type_name):
        return
    dtype = dtype_of(type_name)
    opset = data.draw(st.sampled_from([o for o in OPSETS if allowed(type_name, o)]), "opset")
    M, N, K = (data.draw(st.integers(1, 40), n) for n in "MNK")
    transA, transB = data.draw(st.integers(0, 1), "transA"), data.draw(st.integers(0, 1), "transB")
    version = gk_onnx.gemm_version(opset)
    broadcast = data.draw(st.integers(0, 1), "broadcast") if version < 7 else 0
    shapes = [None] if version >= 11 else []
    shapes += c_shapes(M, N) if (version >= 7 or broadcast) else [(M, N)]
    c_shape = data.draw(st.sampled_from(shapes), "c_shape")
    values = [1.0, 0.0, -1.0, 0.5, 2.0, 0.1, 3.0, -0.3] + ([1e10, -7e18] if dtype.kind in "iu" else [])
    alpha, beta = data.draw(st.sampled_from(values), "alpha"), data.draw(st.sampled_from(values), "beta")
    arch = data.draw(st.sampled_from(ARCHS), "arch")
    threads = data.draw(st.sampled_from([1, 2]), "threads")
    rng = np.random.default_rng(data.draw(st.integers(0, 2**32 - 1), "seed"))
    A = random_matrix(rng, (K, M) if transA else (M, K), dtype)
    B = random_matrix(rng, (N, K) if transB else (K, N), dtype)
    C = None if c_shape is None else random_matrix(rng, c_shape, dtype)
    if data.draw(st.booleans(), "fortran_A"):
        A = np.asfortranarray(A)
    attrs = dict(alpha=alpha, beta=beta, transA=transA, transB=transB)
    if version < 7:
        attrs["broadcast"] = broadcast
    previous = gemmkit.get_num_threads()
    gemmkit.set_num_threads(threads)
    try:
        with gemmkit.use_arch(arch):
            Y = gk_onnx.gemm(A, B, C, opset=opset, **attrs)
    finally:
        gemmkit.set_num_threads(previous)
    attrs.pop("broadcast", None)
    ref = reference_gemm(A, B, C, opset, **attrs)
    assert_matches(Y, ref, A, B, C, alpha, beta, transA, transB)


@pytest.mark.parametrize("type_name", ["float32", "float64"])
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("threads", [1, 2])
def test_gemm_large_blocked_paths(type_name, arch, threads):
    """Sizes past the no-pack and single-block paths, every kernel path, 1 and 2 threads."""
    if not in_build(type_name):
        pytest.skip(f"no {type_name} kernels in this build")
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(7)
    M, N, K = 301, 257, 419
    A = random_matrix(rng, (K, M), dtype)
    B = random_matrix(rng, (K, N), dtype)
    C = random_matrix(rng, (M, 1), dtype)
    previous = gemmkit.get_num_threads()
    gemmkit.set_num_threads(threads)
    try:
        with gemmkit.use_arch(arch):
            Y = gk_onnx.gemm(A, B, C, alpha=0.75, beta=-1.5, transA=1)
    finally:
        gemmkit.set_num_threads(previous)
    ref = reference_gemm(A, B, C, 13, alpha=0.75, beta=-1.5, transA=1)
    assert_matches(Y, ref, A, B, C, 0.75, -1.5, 1, 0)


@pytest.mark.parametrize("type_name", INTEGER_TYPES)
@pytest.mark.parametrize("threads", [1, 2])
def test_integer_gemm_large_bit_for_bit(type_name, threads):
    """Full-range integers (every product wraps), K long enough to narrow the column blocks, both
    transposes, a column-broadcast C: equal to onnx.reference bit for bit."""
    dtype = np.dtype(type_name)
    rng = np.random.default_rng(5)
    M, N, K = 70, 150, 700
    A = random_matrix(rng, (K, M), dtype)
    B = random_matrix(rng, (N, K), dtype)
    C = random_matrix(rng, (M, 1), dtype)
    previous = gemmkit.get_num_threads()
    gemmkit.set_num_threads(threads)
    try:
        for alpha, beta in ((1.0, 0.0), (1.0, 1.0), (-0.7, 3.0), (2.5e-10, -1.0)):
            Y = gk_onnx.gemm(A, B, C, alpha=alpha, beta=beta, transA=1, transB=1)
            ref = reference_gemm(A, B, C, 13, alpha=alpha, beta=beta, transA=1, transB=1)
            assert_matches(Y, ref, A, B, C, alpha, beta, 1, 1)
    finally:
        gemmkit.set_num_threads(previous)


@pytest.mark.parametrize("type_name,A,B,C,alpha,beta,want", [
    ("int32", [[2**31 - 1, 2**31 - 1]], [[3], [1]], None, 1.0, 0.0, -4),          # product wraps
    ("int32", [[7, 5]], [[3], [1]], [[1]], 0.1, 0.3, 2),                          # float64 scaling, truncated
    ("int32", [[2**30 + 1, 0]], [[1], [1]], None, 3.0, 0.0, -2**31),               # out of range: INT32_MIN
    ("int64", [[2**53 + 1, 0]], [[1], [1]], None, 1.0, 0.0, 2**53),                # through float64
    ("int64", [[2**62, 0]], [[1], [1]], None, 3.0, 0.0, -2**63),
    ("uint32", [[7, 5]], [[3], [1]], None, -1.0, 0.0, 2**32 - 26),                 # negative wraps
    ("uint64", [[2**64 - 1, 2**64 - 1]], [[3], [1]], None, 1.0, 0.0, 0),           # 2^64 - 4 -> 2^64 -> 0
    ("uint64", [[2**63, 0]], [[1], [1]], [[5]], 1.0, 1.0, 2**63),
])
def test_integer_semantics_examples(type_name, A, B, C, alpha, beta, want):
    """The reference's integer behaviour, as the README states it, on hand-picked values."""
    dtype = np.dtype(type_name)
    A, B = np.array(A, dtype), np.array(B, dtype)
    C = None if C is None else np.array(C, dtype)
    Y = gk_onnx.gemm(A, B, C, alpha=alpha, beta=beta)
    assert Y.dtype == dtype and Y[0, 0] == want
    np.testing.assert_array_equal(Y, reference_gemm(A, B, C, 13, alpha=alpha, beta=beta).astype(dtype))


@pytest.mark.parametrize("type_name", ["float32", "float64", "float16"])
@pytest.mark.parametrize("c_shape", [None, (), (7,), (5, 1), (5, 7)])
def test_gemm_matches_onnxruntime(type_name, c_shape):
    ort = pytest.importorskip("onnxruntime")
    if not in_build(type_name):
        pytest.skip(f"no {type_name} kernels in this build")
    dtype = np.dtype(type_name)
    rng = np.random.default_rng(3)
    A, B = random_matrix(rng, (9, 5), dtype), random_matrix(rng, (7, 9), dtype)
    C = None if c_shape is None else random_matrix(rng, c_shape, dtype)
    attrs = dict(alpha=0.5, beta=2.0, transA=1, transB=1)
    model = gemm_model(dtype, 13, C is not None, **attrs)
    options = ort.SessionOptions()
    options.intra_op_num_threads = 1
    try:
        sess = ort.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
    except Exception as e:  # a type ONNX Runtime does not implement for Gemm
        pytest.skip(f"onnxruntime: {e}")
    feeds = {"A": A, "B": B, **({"C": C} if C is not None else {})}
    ref = sess.run(None, feeds)[0]
    Y = gk_onnx.gemm(A, B, C, **attrs)
    assert_matches(Y, ref, A, B, C, 0.5, 2.0, 1, 1)


def test_opset6_broadcast0_applies_beta_as_the_specification_says():
    """onnx.reference's Gemm-6 drops beta when broadcast=0; the text (and gemmkit) applies it."""
    A = np.ones((2, 3), np.float32)
    B = np.ones((3, 4), np.float32)
    C = np.ones((2, 4), np.float32)
    Y = gk_onnx.gemm(A, B, C, beta=2.0, broadcast=0, opset=6)
    np.testing.assert_array_equal(Y, np.full((2, 4), 5.0, np.float32))
    with np.errstate(all="ignore"):
        ref = ReferenceEvaluator(gemm_model(np.float32, 6, beta=2.0, broadcast=0)).run(
            None, {"A": A, "B": B, "C": C})[0]
    np.testing.assert_array_equal(ref, np.full((2, 4), 4.0, np.float32))  # the reference's departure


def test_model_with_several_gemm_nodes_runs_on_gemmkit(monkeypatch):
    """Three chained Gemm nodes (one transposed, one without C, one with a broadcast C) and a Relu:
    ReferenceEvaluator(new_ops=[gk_onnx.Gemm]) gives the reference's outputs and calls gemmkit each time."""
    rng = np.random.default_rng(11)
    f = onnx.TensorProto.FLOAT
    W1, b1 = rng.uniform(-1, 1, (16, 8)).astype(np.float32), rng.uniform(-1, 1, (16,)).astype(np.float32)
    W2 = rng.uniform(-1, 1, (16, 12)).astype(np.float32)
    W3, b3 = rng.uniform(-1, 1, (12, 5)).astype(np.float32), rng.uniform(-1, 1, (1, 5)).astype(np.float32)
    inits = [onnx.numpy_helper.from_array(v, n) for n, v in (("W1", W1), ("b1", b1), ("W2", W2), ("W3", W3),
                                                               ("b3", b3))]
    nodes = [helper.make_node("Gemm", ["X", "W1", "b1"], ["h1"], transB=1, alpha=0.5),
             helper.make_node("Relu", ["h1"], ["r1"]),
             helper.make_node("Gemm", ["r1", "W2"], ["h2"]),
             helper.make_node("Gemm", ["h2", "W3", "b3"], ["Y"], beta=-2.0)]
    graph = helper.make_graph(nodes, "mlp", [helper.make_tensor_value_info("X", f, [None, 8])],
                              [helper.make_tensor_value_info("Y", f, [None, 5])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    X = rng.uniform(-1, 1, (6, 8)).astype(np.float32)
    ref = ReferenceEvaluator(model).run(None, {"X": X})[0]
    calls = []
    real_gemm = gk_onnx.gemm
    monkeypatch.setattr(gk_onnx, "gemm", lambda *a, **k: calls.append(k["opset"]) or real_gemm(*a, **k))
    Y = ReferenceEvaluator(model, new_ops=[gk_onnx.Gemm]).run(None, {"X": X})[0]
    assert calls == [13, 13, 13]
    np.testing.assert_allclose(Y, ref, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("opset", OPSETS)
def test_gemm_op_serves_every_version(opset):
    A = np.arange(6, dtype=np.float64).reshape(3, 2)
    B = np.arange(8, dtype=np.float64).reshape(2, 4)
    C = np.arange(12, dtype=np.float64).reshape(3, 4)
    attrs = dict(alpha=0.5, beta=0.25)
    model = gemm_model(np.float64, opset, **attrs)
    Y = ReferenceEvaluator(model, new_ops=[gk_onnx.Gemm]).run(None, {"A": A, "B": B, "C": C})[0]
    np.testing.assert_allclose(Y, 0.5 * A @ B + 0.25 * C)


@pytest.mark.parametrize("type_name", FLOAT_TYPES + INTEGER_TYPES)
def test_gemm_op_serves_every_type(type_name):
    """A one-node model of each type through ReferenceEvaluator(new_ops=[gk_onnx.Gemm]) equals the
    reference's own run (integers bit for bit)."""
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(17)
    A, B, C = random_matrix(rng, (6, 9), dtype), random_matrix(rng, (5, 9), dtype), random_matrix(rng, (5,), dtype)
    attrs = dict(alpha=0.25, beta=-2.0, transB=1)
    model = gemm_model(dtype, 13, **attrs)
    feeds = {"A": A, "B": B, "C": C}
    with np.errstate(all="ignore"):
        Y = ReferenceEvaluator(model, new_ops=[gk_onnx.Gemm]).run(None, feeds)[0]
        ref = ReferenceEvaluator(model).run(None, feeds)[0]
    assert_matches(Y, ref, A, B, C, 0.25, -2.0, 0, 1)


def test_bad_input_raises_and_names_it():
    f = np.float32
    A, B, C = np.ones((2, 3), f), np.ones((3, 4), f), np.ones((2, 4), f)
    with pytest.raises(ValueError, match="contracted"):
        gk_onnx.gemm(A, np.ones((2, 4), f), C)
    with pytest.raises(ValueError, match=r"C has shape \(3,\)"):
        gk_onnx.gemm(A, B, np.ones(3, f))
    with pytest.raises(ValueError, match=r"C has shape \(2, 4, 1\)"):
        gk_onnx.gemm(A, B, np.ones((2, 4, 1), f))
    with pytest.raises(ValueError, match="broadcast=0"):
        gk_onnx.gemm(A, B, np.ones(4, f), opset=6)
    with pytest.raises(ValueError, match="C is required"):
        gk_onnx.gemm(A, B, None, opset=9)
    with pytest.raises(ValueError, match="broadcast is an attribute"):
        gk_onnx.gemm(A, B, C, broadcast=1, opset=13)
    with pytest.raises(ValueError, match="A must be 2-D"):
        gk_onnx.gemm(np.ones((1, 2, 3), f), B, C)
    with pytest.raises(ValueError, match="opset"):
        gk_onnx.gemm(A, B, C, opset=0)
    with pytest.raises(TypeError, match="B is float64"):
        gk_onnx.gemm(A, B.astype(np.float64), C)
    with pytest.raises(TypeError, match="Gemm-7 does not take int32"):
        gk_onnx.gemm(A.astype(np.int32), B.astype(np.int32), C.astype(np.int32), opset=8)
    with pytest.raises(TypeError, match="no type int8"):
        gk_onnx.gemm(A.astype(np.int8), B.astype(np.int8), C.astype(np.int8))
    with pytest.raises(TypeError, match="alpha"):
        gk_onnx.gemm(A, B, C, alpha="2")
    with pytest.raises(TypeError, match="A must be a NumPy array"):
        gk_onnx.gemm([[1.0]], B, C)
    if BFLOAT16 is not None:
        with pytest.raises(TypeError, match="Gemm-11 does not take bfloat16"):
            gk_onnx.gemm(A.astype(BFLOAT16), B.astype(BFLOAT16), None, opset=12)


def test_opset_selects_latest_version_not_above_it():
    assert [gk_onnx.gemm_version(o) for o in (1, 5, 6, 8, 10, 12, 13, 21)] == [1, 1, 6, 7, 9, 11, 13, 13]


def test_onnx_backend_cases():
    """onnx's own Gemm test cases (models with inputs and expected outputs, from
    onnx.backend.test.case) run through ReferenceEvaluator(new_ops=[gk_onnx.Gemm]). Collected here,
    not at import: collecting builds every operator's cases (seconds)."""
    import warnings
    try:
        from onnx.backend.test.case.node import collect_testcases
    except ImportError:
        pytest.skip("this onnx has no backend test cases")
    with warnings.catch_warnings(), np.errstate(all="ignore"):
        warnings.simplefilter("ignore")
        cases = collect_testcases("Gemm")
    assert len(cases) >= 10
    for case in cases:
        sess = ReferenceEvaluator(case.model, new_ops=[gk_onnx.Gemm])
        names = [i.name for i in case.model.graph.input]
        for inputs, outputs in case.data_sets:
            got = sess.run(None, dict(zip(names, inputs)))
            for g, want in zip(got, outputs):
                assert g.dtype == want.dtype and g.shape == want.shape, case.name
                np.testing.assert_allclose(g, want, rtol=case.rtol or 1e-5, atol=case.atol or 1e-6,
                                           err_msg=case.name)


def test_integer_core_functions_check_their_arguments():
    """gemmkit._core.gemm_i32 & co. name the argument at fault and leave C untouched."""
    A = np.ones((2, 2), np.int64)
    C = np.zeros((2, 2), np.int64)
    with pytest.raises(TypeError, match="A must have dtype int64"):
        _core.gemm_i64("N", "N", 2, 2, 2, 1.0, A.astype(np.int32), 2, A, 2, 0.0, C, 2)
    with pytest.raises(TypeError, match="C must have dtype uint32"):
        _core.gemm_u32("N", "N", 2, 2, 2, 1.0, A.astype(np.uint32), 2, A.astype(np.uint32), 2, 0.0, C, 2)
    with pytest.raises(ValueError, match="lda"):
        _core.gemm_i64("N", "N", 2, 2, 2, 1.0, A, 1, A, 2, 0.0, C, 2)
    with pytest.raises(TypeError, match="alpha"):
        _core.gemm_i64("N", "N", 2, 2, 2, "x", A, 2, A, 2, 0.0, C, 2)
    np.testing.assert_array_equal(C, 0)
    _core.gemm_i64("T", "N", 2, 2, 2, 1.0, A, 2, A, 2, 0.0, C, 2)
    np.testing.assert_array_equal(C, 2)


@pytest.mark.parametrize("type_name", FLOAT_TYPES + INTEGER_TYPES)
@pytest.mark.parametrize("c_kind", [None, "row", "row2d", "full", "column", "scalar", "full_fortran"])
@pytest.mark.parametrize("transA,transB", [(0, 0), (1, 0), (0, 1), (1, 1)])
def test_fast_path_gives_the_general_paths_bits(monkeypatch, type_name, c_kind, transA, transB):
    """The Cython fast path of gemmkit.onnx.gemm (float and integer types, C None / a row / a C-ordered
    (M, N)) makes the same core call as the general path: identical bits; other C shapes are declined (None)."""
    dtype = dtype_of(type_name)
    rng = np.random.default_rng(17)
    M, N, K = 13, 21, 9
    A = random_matrix(rng, (K, M) if transA else (M, K), dtype)
    B = np.asfortranarray(random_matrix(rng, (N, K) if transB else (K, N), dtype))
    C = {None: None, "row": (N,), "row2d": (1, N), "full": (M, N), "column": (M, 1), "scalar": (),
         "full_fortran": (M, N)}[c_kind]
    C = None if C is None else random_matrix(rng, C, dtype)
    if c_kind == "full_fortran":
        C = np.asfortranarray(C)
    fast = _fastpaths.onnx_gemm_fast(A, B, C, 0.5, -1.5, transA, transB)
    if type_name == "bfloat16":  # bfloat16 is a type of Gemm-13 on: declined before
        assert _fastpaths.onnx_gemm_fast(A, B, C, 0.5, -1.5, transA, transB, 11) is None
    assert (fast is None) == (c_kind in ("column", "scalar", "full_fortran"))
    monkeypatch.setattr(_fastpaths, "onnx_gemm_fast", lambda *args: None)
    general = gk_onnx.gemm(A, B, C, alpha=0.5, beta=-1.5, transA=transA, transB=transB)
    if fast is not None:
        assert fast.dtype == general.dtype and fast.shape == general.shape
        np.testing.assert_array_equal(fast, general)
    ref = reference_gemm(A, B, C, 13, alpha=0.5, beta=-1.5, transA=transA, transB=transB)
    assert_matches(general, ref, A, B, C, 0.5, -1.5, transA, transB)


# ---- the wrap-around kernels' paths: 16-bit limbs (with and without cross products), 64-bit by range ----

def wrap_product(A, B, transA, transB):
    """op(A) op(B) modulo 2^bits, read as A's type: NumPy's uint64 matmul (no BLAS; unsigned C arithmetic,
    exact modulo 2^64) on the entries' two's-complement bits, then the low bits."""
    a, b = (A.T if transA else A), (B.T if transB else B)
    wide = np.int64 if A.dtype.kind == "i" else np.uint64
    P = a.astype(wide).view(np.uint64) @ b.astype(wide).view(np.uint64)
    return P.astype(A.dtype)


def exact_wrap_gemm(A, B, C, alpha, beta, transA, transB, P=None):
    """Y as csrc/driver.h defines it: P = op(A) op(B) modulo 2^bits read as the type (wrap_product, unless
    given), v = fl(fl(P * alpha) + fl(C * beta)), then the conversion the README states (wrap_template.h's
    cvt_*)."""
    dtype = A.dtype
    if P is None:
        P = wrap_product(A, B, transA, transB)
    v = P.astype(np.float64) * float(np.float32(alpha))
    if C is not None and np.float32(beta) != 0:
        v = v + np.broadcast_to(C, v.shape).astype(np.float64) * float(np.float32(beta))

    def cvt_i64(x):
        ok = (x >= -2.0**63) & (x < 2.0**63)
        return np.where(ok, np.trunc(np.where(ok, x, 0)), 0).astype(np.int64) + np.where(ok, 0, -2**63).astype(
            np.int64)
    if dtype == np.int32:
        ok = (v > -2147483649.0) & (v < 2147483648.0)
        return np.where(ok, np.trunc(np.where(ok, v, 0)), -2.0**31).astype(np.int32)
    if dtype == np.int64:
        return cvt_i64(v)
    if dtype == np.uint32:
        return cvt_i64(v).astype(np.uint32)
    big = v >= 2.0**63
    return np.where(big, cvt_i64(np.where(big, v - 2.0**63, 0)).view(np.uint64) ^ np.uint64(2**63),
                    cvt_i64(np.where(big, 0, v)).view(np.uint64))


def wrap_operand(rng, shape, dtype, kind):
    """Entries of one range class: int8 and int16 (32-bit types: no cross products; 64-bit: the int32-sum
    limb path, int16 only at small K), int16_edge (all -2^15 or 2^15 - 1: vpmaddwd's one wrapping pair
    sum), int32 (64-bit types: the vpmuldq tile), full, or split (the first half of the rows int8, the rest
    full: the threads' blocks take different paths)."""
    info = np.iinfo(dtype)
    if kind == "full":
        return rng.integers(info.min, info.max, size=shape, dtype=dtype, endpoint=True)
    if kind == "split":
        x = wrap_operand(rng, shape, dtype, "full")
        x[: shape[0] // 2] = wrap_operand(rng, (shape[0] // 2, shape[1]), dtype, "int8")
        return x
    if kind == "int16_edge":
        x = np.where(rng.integers(0, 4, size=shape) == 0, 2**15 - 1, -2**15)
    else:
        bits = {"int8": 7, "int16": 15, "int32": 31}[kind]
        x = rng.integers(-2**bits, 2**bits - 1, size=shape, endpoint=True)
    return x.astype(np.int64).astype(dtype)  # negative values wrap into the unsigned types


WRAP_SIZES = [(1, 1, 1), (4, 16, 2), (3, 17, 5), (5, 15, 1), (9, 33, 31), (37, 41, 43), (67, 131, 257)]


@pytest.mark.parametrize("type_name", INTEGER_TYPES)
@pytest.mark.parametrize("kinds", [("int8", "int8"), ("int16", "int16"), ("int16_edge", "int16_edge"),
                                   ("full", "int8"), ("int16", "full"), ("full", "full"), ("int32", "int32"),
                                   ("int32", "int8"), ("split", "int8")])
@pytest.mark.parametrize("arch", ARCHS)
@pytest.mark.parametrize("threads", [1, 2])
def test_wrap_paths_exact(type_name, kinds, arch, threads):
    """Every range class of A and B on every kernel path, 1 and 2 threads, tile-edge and prime sizes, all
    transposes, padded leading dimensions: equal to the exact Python-int result and to onnx.reference."""
    dtype = np.dtype(type_name)
    rng = np.random.default_rng(zlib.crc32(repr((type_name, kinds, arch, threads)).encode()))
    previous = gemmkit.get_num_threads()
    gemmkit.set_num_threads(threads)
    try:
        for (M, N, K) in WRAP_SIZES:
            for transA, transB in ((0, 0), (1, 0), (0, 1), (1, 1)):
                sa, sb = ((K, M) if transA else (M, K)), ((N, K) if transB else (K, N))
                A = wrap_operand(rng, (sa[0], sa[1] + 3), dtype, kinds[0])[:, :sa[1]]  # padded lda
                B = wrap_operand(rng, (sb[0], sb[1] + 1), dtype, kinds[1])[:, :sb[1]]
                if kinds[0] == "split" and transA:  # the split along op(A)'s rows
                    A = np.ascontiguousarray(wrap_operand(rng, (M, K), dtype, "split").T)
                C = wrap_operand(rng, (1, N), dtype, "full")
                P = wrap_product(A, B, transA, transB)
                for alpha, beta in ((1.0, 0.0), (1.0, 1.0), (-0.75, 2.0), (1e10, -3.0)):  # 1e10: past int64
                    with gemmkit.use_arch(arch):
                        Y = gk_onnx.gemm(A, B, C, alpha=alpha, beta=beta, transA=transA, transB=transB)
                    want = exact_wrap_gemm(A, B, C, alpha, beta, transA, transB, P)
                    np.testing.assert_array_equal(Y, want, err_msg=f"{(M, N, K, transA, transB, alpha, beta)}")
                    if M * N * K <= 2000:
                        ref = reference_gemm(A, B, C, 13, alpha=alpha, beta=beta, transA=transA, transB=transB)
                        assert_matches(Y, ref, A, B, C, alpha, beta, transA, transB)
    finally:
        gemmkit.set_num_threads(previous)


@pytest.mark.parametrize("type_name", ["int64", "uint64"])
@pytest.mark.parametrize("K", [64, 128])
@pytest.mark.parametrize("arch", ARCHS)
def test_wrap_64_limb_threshold(type_name, K, arch):
    """64-bit entries within [-2^12, 2^12) take the int32-sum limb path while K * 2^12 * 2^12 <= 2^30
    (K = 64) and the vpmuldq tile past it (K = 128, where every entry -2^12 sums to 2^31, past int32):
    exact either way."""
    dtype = np.dtype(type_name)
    A = np.full((5, K), -2**12, np.int64).astype(dtype)
    B = np.full((K, 19), -2**12, np.int64).astype(dtype)
    B[:, 3] = 2**12 - 1
    with gemmkit.use_arch(arch):
        Y = gk_onnx.gemm(A, B, None)
    np.testing.assert_array_equal(Y, exact_wrap_gemm(A, B, None, 1.0, 0.0, 0, 0))
    assert int(Y[0, 0]) == K * 2**24
