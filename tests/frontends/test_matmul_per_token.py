"""Tests of gemmkit.quant.matmul_per_token (and its core, gemmkit._core.gemm_s8s8_per_token): bit for bit
against a NumPy model of the contract, ONNX Runtime as a second oracle, every kernel path and bad input."""
import tracemalloc

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import gemmkit
from gemmkit import _core, quant

ml_dtypes = pytest.importorskip("ml_dtypes")

OUT_DTYPES = ("float16", "bfloat16", "float32")
BITS = {"float16": np.uint16, "bfloat16": np.uint16, "float32": np.uint32}


def np_dtype(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def model(x, w, deq_scale, per_token_scale, out_dtype, transpose_a=False, transpose_b=False, bias=None):
    """The contract in NumPy: exact int64 sum, float32 ops in the stated order, ml_dtypes/NumPy rounding."""
    xa = np.swapaxes(x, -1, -2) if transpose_a else x
    wa = np.swapaxes(w, -1, -2) if transpose_b else w
    acc = np.matmul(xa.astype(np.int64), wa.astype(np.int64))
    with np.errstate(all="ignore"):
        y = acc.astype(np.float32) * np.asarray(deq_scale, np.float32)
        y = y * np.asarray(per_token_scale, np.float32)[..., :, None]
        if bias is not None:
            y = y + np.asarray(bias, np.float32)
        return y.astype(np_dtype(out_dtype))


def assert_same_bits(got, want):
    """Equal bit patterns, except that a NaN only has to be a NaN (IEEE leaves the payload open)."""
    assert got.shape == want.shape and got.dtype == want.dtype, (got.shape, got.dtype, want.shape, want.dtype)
    bits = BITS[want.dtype.name]
    g, w = np.ascontiguousarray(got).view(bits), np.ascontiguousarray(want).view(bits)
    g_nan = np.isnan(np.ascontiguousarray(got).astype(np.float32))
    w_nan = np.isnan(np.ascontiguousarray(want).astype(np.float32))
    assert np.array_equal(g_nan, w_nan), f"NaN positions differ: {np.argwhere(g_nan != w_nan)[:5]}"
    bad = (g != w) & ~w_nan
    assert not bad.any(), (f"{bad.sum()} of {bad.size} elements differ, first at {np.argwhere(bad)[:3].tolist()}: "
                           f"got {got[bad][:3]} want {want[bad][:3]}")


def random_case(rng, m, n, k, batch=None, shared_weight=False, batched_tokens=True):
    lead = () if batch is None else (batch,)
    x = rng.integers(-128, 128, lead + (m, k), dtype=np.int8)
    w = rng.integers(-128, 128, (k, n) if shared_weight or batch is None else lead + (k, n), dtype=np.int8)
    deq = (rng.standard_normal(n) * 1e-2).astype(np.float32)
    pts = (rng.standard_normal(lead + (m,) if batched_tokens else (m,)) * 3e-2).astype(np.float32)
    bias = rng.standard_normal(n).astype(np.float32)
    return x, w, deq, pts, bias


def test_issue_worked_example(arch):
    x = np.array([[1, 2], [3, 4]], np.int8)
    w = np.array([[1, 2, 3], [4, 5, 6]], np.int8)
    for name in OUT_DTYPES:
        y = quant.matmul_per_token(x, w, np.array([1, 2, 3], np.float32), np.array([1, 2], np.float32),
                                   out_dtype=name)
        assert y.dtype == np_dtype(name)
        assert y.astype(np.float32).tolist() == [[9, 24, 45], [38, 104, 198]]


@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
@pytest.mark.parametrize("trans", ["NN", "NT", "TN", "TT"])
def test_random_against_model(arch, nthreads, out_dtype, trans, rng):
    ta, tb = trans[0] == "T", trans[1] == "T"
    for m, n, k in [(1, 1, 1), (5, 17, 33), (13, 33, 70), (37, 65, 129), (130, 70, 300)]:
        x, w, deq, pts, bias = random_case(rng, m, n, k)
        xs = np.ascontiguousarray(x.T) if ta else x
        ws = np.ascontiguousarray(w.T) if tb else w
        for b in (None, bias):
            got = quant.matmul_per_token(xs, ws, deq, pts, out_dtype=out_dtype, transpose_a=ta, transpose_b=tb,
                                         bias=b)
            assert_same_bits(got, model(xs, ws, deq, pts, out_dtype, ta, tb, b))


def test_float_conversion_every_path(arch):
    """acc = 1 and unit token scale: the output is deq_scale converted, so this walks the float16 and
    bfloat16 rounding over halfway cases, subnormals, overflow, infinities and NaN on every kernel path."""
    rng = np.random.default_rng(7)
    special = np.array([0x7f7fffff, 0x477fe000, 0x477fefff, 0x477ff000, 0x38800000, 0x387fffff, 0x33000000,
                        0x33000001, 0x32ffffff, 0x33800000, 0x3f801000, 0x3f803000, 0x3f808000, 0x3f818000,
                        0x7f800000, 0x7fc00000, 0x00000001, 0x00800000, 0x3f7fffff], np.uint32)
    edges = np.arange(0x33000000, 0x38900000, 0x1000 - 1, dtype=np.uint32)[:4000]
    bits = np.concatenate([special, special | 0x80000000, edges, rng.integers(0, 2**32, 20000, dtype=np.uint32)])
    deq = bits.view(np.float32)
    x = np.ones((3, 1), np.int8)
    w = np.ones((1, deq.size), np.int8)
    pts = np.ones(3, np.float32)
    for name in OUT_DTYPES:
        assert_same_bits(quant.matmul_per_token(x, w, deq, pts, out_dtype=name), model(x, w, deq, pts, name))


@pytest.mark.parametrize("out_dtype", OUT_DTYPES)
def test_nan_inf_scales_propagate(arch, out_dtype, rng):
    x, w, deq, pts, bias = random_case(rng, 9, 40, 20)
    deq[[1, 7]] = [np.nan, np.inf]
    pts[[2, 5]] = [-np.inf, np.nan]
    x[3] = 0  # 0 * inf = NaN
    for b in (None, bias):
        got = quant.matmul_per_token(x, w, deq, pts, out_dtype=out_dtype, bias=b)
        assert_same_bits(got, model(x, w, deq, pts, out_dtype, bias=b))
        assert np.isnan(got[:, 1].astype(np.float32)).all()


@pytest.mark.parametrize("shared_weight", [False, True], ids=["batched_weight", "shared_weight"])
@pytest.mark.parametrize("batched_tokens", [True, False], ids=["token_scale_per_batch", "token_scale_shared"])
def test_batched(arch, nthreads, shared_weight, batched_tokens, rng):
    for batch, m, n, k in [(1, 5, 17, 9), (3, 13, 33, 40), (7, 2, 20, 64), (2, 70, 40, 100)]:
        x, w, deq, pts, bias = random_case(rng, m, n, k, batch, shared_weight, batched_tokens)
        for name in ("float16", "bfloat16"):
            got = quant.matmul_per_token(x, w, deq, pts, out_dtype=name, bias=bias)
            assert got.shape == (batch, m, n)
            assert_same_bits(got, model(x, w, deq, pts, name, bias=bias))


def test_batched_transposes_and_views(arch, nthreads, rng):
    batch, m, n, k = 4, 11, 35, 50
    x, w, deq, pts, bias = random_case(rng, m, n, k, batch)
    xt = np.ascontiguousarray(np.swapaxes(x, 1, 2))            # (batch, k, m)
    wt = np.swapaxes(np.ascontiguousarray(np.swapaxes(w, 1, 2)), 1, 2)  # columns contiguous
    for xs, ta in ((x, False), (xt, True), (np.swapaxes(xt, 1, 2), False)):
        for ws, tb in ((w, False), (wt, False), (np.swapaxes(wt, 1, 2), True)):
            got = quant.matmul_per_token(xs, ws, deq, pts, out_dtype="bfloat16", transpose_a=ta, transpose_b=tb)
            assert_same_bits(got, model(xs, ws, deq, pts, "bfloat16", ta, tb))
    big = rng.integers(-128, 128, (2 * batch, m, 2 * k), dtype=np.int8)  # batch and row strides, no copy
    assert_same_bits(quant.matmul_per_token(big[::2, :, :k], w, deq, pts, out_dtype="float16"),
                     model(big[::2, :, :k], w, deq, pts, "float16"))
    rev = x[::-1]  # negative batch stride: copied
    assert_same_bits(quant.matmul_per_token(rev, w, deq, pts, out_dtype="float16"),
                     model(rev, w, deq, pts, "float16"))


@pytest.mark.parametrize("layout", ["C", "F", "strided", "batch_reversed"])
def test_out_layouts(arch, nthreads, layout, rng):
    batch, m, n, k = 3, 14, 37, 21
    x, w, deq, pts, bias = random_case(rng, m, n, k, batch)
    want = model(x, w, deq, pts, "float16", bias=bias)
    if layout == "C":
        out = np.empty((batch, m, n), np.float16)
    elif layout == "F":
        out = np.swapaxes(np.empty((batch, n, m), np.float16), 1, 2)
    elif layout == "strided":
        out = np.empty((batch, 2 * m, 2 * n), np.float16)[:, ::2, ::2]
    else:
        out = np.empty((batch, m, n), np.float16)[::-1]
    got = quant.matmul_per_token(x, w, deq, pts, out_dtype="float16", bias=bias, out=out)
    assert got is out
    assert_same_bits(out, want)
    out2 = np.asfortranarray(np.empty((m, n), np.float32))  # 2-D, columns contiguous
    quant.matmul_per_token(x[0], w[0], deq, pts[0], bias=bias, out=out2)
    assert_same_bits(out2, model(x[0], w[0], deq, pts[0], "float32", bias=bias))


def test_operands_with_unit_stride_are_not_copied(arch):
    """No Python-side copy of x, weight or out when an axis has unit stride: peak traced memory during the
    call stays far below the operands' size (the core's packing buffers are not traced)."""
    rng = np.random.default_rng(3)
    m, n, k = 256, 256, 1024
    x = np.asfortranarray(rng.integers(-128, 128, (m, k), dtype=np.int8))
    w = np.ascontiguousarray(rng.integers(-128, 128, (n, k), dtype=np.int8)).T
    out = np.asfortranarray(np.empty((m, n), np.float32))
    deq, pts = np.ones(n, np.float32), np.ones(m, np.float32)
    tracemalloc.start()
    try:
        quant.matmul_per_token(x, w, deq, pts, out=out)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 64 * 1024, f"{peak} bytes allocated in Python: an operand was copied"
    assert_same_bits(out, model(x, w, deq, pts, "float32"))


@pytest.mark.parametrize("k", [16384, 16385, 40000])
def test_long_k_chunks(arch, nthreads, k, rng):
    x, w, deq, pts, bias = random_case(rng, 7, 19, k)
    for name in ("float32", "bfloat16"):
        assert_same_bits(quant.matmul_per_token(x, w, deq, pts, out_dtype=name, bias=bias),
                         model(x, w, deq, pts, name, bias=bias))


def test_k_beyond_int32(arch):
    """K = 140000 with every product 128 * 128: the sum 2.29e9 overflows int32 and must be exact."""
    k = 140000
    x = np.full((2, k), -128, np.int8)
    x[1, ::3] = 127
    w = np.full((k, 3), -128, np.int8)
    w[::5, 2] = 127
    deq, pts = np.ones(3, np.float32), np.ones(2, np.float32)
    exact = (x.astype(np.int64) @ w.astype(np.int64))
    assert exact.max() > 2**31
    got = quant.matmul_per_token(x, w, deq, pts, out_dtype="float32")
    assert np.array_equal(got, exact.astype(np.float32))
    assert_same_bits(got, model(x, w, deq, pts, "float32"))


def test_m_one_and_few_rows(arch, nthreads, rng):
    for m in (1, 2, 5, 16, 17, 24, 32, 33):
        x, w, deq, pts, bias = random_case(rng, m, 300, 200)
        wt = np.ascontiguousarray(w.T)
        assert_same_bits(quant.matmul_per_token(x, wt, deq, pts, transpose_b=True, out_dtype="float16", bias=bias),
                         model(x, wt, deq, pts, "float16", transpose_b=True, bias=bias))
        assert_same_bits(quant.matmul_per_token(x, w, deq, pts, out_dtype="bfloat16", bias=bias),
                         model(x, w, deq, pts, "bfloat16", bias=bias))
        xt = np.ascontiguousarray(x.T)  # transpose_a, and a weight view with padded rows
        wp = np.zeros((200, 307), np.int8)
        wp[:, :300] = w
        assert_same_bits(quant.matmul_per_token(xt, wp[:, :300], deq, pts, transpose_a=True, out_dtype="float32"),
                         model(x, w, deq, pts, "float32"))


def test_threads_shared_b_block(arch, nthreads, rng):
    x, w, deq, pts, bias = random_case(rng, 300, 40, 256)  # tall: row slices share one packed B block
    assert_same_bits(quant.matmul_per_token(x, w, deq, pts, out_dtype="bfloat16"),
                     model(x, w, deq, pts, "bfloat16"))


@pytest.mark.parametrize("m,n,k", [(0, 5, 3), (4, 0, 3), (0, 0, 0)])
def test_empty_results(m, n, k):
    y = quant.matmul_per_token(np.zeros((m, k), np.int8), np.zeros((k, n), np.int8), np.ones(n, np.float32),
                               np.ones(m, np.float32))
    assert y.shape == (m, n) and y.dtype == np.float16


def test_k_zero_gives_scaled_zeros_plus_bias(arch):
    deq = np.array([1, -2, np.inf], np.float32)
    pts = np.array([1, 3], np.float32)
    bias = np.array([0.5, 0, 2], np.float32)
    x, w = np.zeros((2, 0), np.int8), np.zeros((0, 3), np.int8)
    for b in (None, bias):
        got = quant.matmul_per_token(x, w, deq, pts, out_dtype="float32", bias=b)
        assert_same_bits(got, model(x, w, deq, pts, "float32", bias=b))
    assert np.array_equal(quant.matmul_per_token(x, w[:, :2], deq[:2], pts, bias=bias[:2]).astype(np.float32),
                          [[0.5, 0], [0.5, 0]])


settings.register_profile("per_token", deadline=None, max_examples=100,
                          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])


@settings(settings.get_profile("per_token"))
@given(data=st.data())
def test_property_against_model(data):
    arch = data.draw(st.sampled_from(gemmkit.available_archs()), label="arch")
    threads = data.draw(st.sampled_from([1, 2]), label="threads")
    batch = data.draw(st.sampled_from([None, 1, 2, 3]), label="batch")
    m = data.draw(st.integers(0, 40), label="m")
    n = data.draw(st.integers(0, 70), label="n")
    k = data.draw(st.integers(0, 300), label="k")
    ta, tb = data.draw(st.booleans(), label="transpose_a"), data.draw(st.booleans(), label="transpose_b")
    shared = data.draw(st.booleans(), label="shared_weight")
    name = data.draw(st.sampled_from(OUT_DTYPES), label="out_dtype")
    with_bias = data.draw(st.booleans(), label="bias")
    x_view = data.draw(st.sampled_from(["plain", "flipped", "padded", "no_unit_stride"]), label="x_view")
    out_view = data.draw(st.sampled_from([None, "C", "F", "strided"]), label="out")
    seed = data.draw(st.integers(0, 2**32 - 1), label="seed")
    use_packed = (batch is None or shared) and data.draw(st.booleans(), label="pack_weight")
    rng = np.random.default_rng(seed)
    x, w, deq, pts, bias = random_case(rng, m, n, k, batch, shared, data.draw(st.booleans(), label="tok_batched"))
    if ta:
        x = np.ascontiguousarray(np.swapaxes(x, -1, -2))
    if tb:
        w = np.ascontiguousarray(np.swapaxes(w, -1, -2))
    if x_view == "flipped":
        x = np.swapaxes(np.ascontiguousarray(np.swapaxes(x, -1, -2)), -1, -2)
    elif x_view == "padded":
        pad = np.zeros(x.shape[:-1] + (x.shape[-1] + 3,), np.int8)
        pad[..., :x.shape[-1]] = x
        x = pad[..., :x.shape[-1]]
    elif x_view == "no_unit_stride":
        big = np.zeros(x.shape[:-2] + (2 * x.shape[-2], 2 * x.shape[-1]), np.int8)
        big[..., ::2, ::2] = x
        x = big[..., ::2, ::2]
    shape = ((batch,) if batch else ()) + (m, n)
    out = None
    if out_view == "C":
        out = np.empty(shape, np_dtype(name))
    elif out_view == "F":
        out = np.swapaxes(np.empty(shape[:-2] + (n, m), np_dtype(name)), -1, -2)
    elif out_view == "strided":
        out = np.empty(shape[:-2] + (2 * m, 2 * n), np_dtype(name))[..., ::2, ::2]
    b = bias if with_bias else None
    prev = gemmkit.get_num_threads()
    gemmkit.set_num_threads(threads)
    try:
        with gemmkit.use_arch(arch):
            if use_packed:  # a prepacked weight in the weight's place
                got = quant.matmul_per_token(x, quant.pack_weight(w, transpose_b=tb), deq, pts, out_dtype=name,
                                             transpose_a=ta, bias=b, out=out)
            else:
                got = quant.matmul_per_token(x, w, deq, pts, out_dtype=name, transpose_a=ta, transpose_b=tb,
                                             bias=b, out=out)
    finally:
        gemmkit.set_num_threads(prev)
    if out is not None:
        assert got is out
    assert_same_bits(got, model(x, w, deq, pts, name, ta, tb, b))


# ---- ONNX Runtime's MatMulIntegerToFloat (+ Cast) as a second oracle -------------------------------------

def _ort_session(m, k, n, out_dtype, w):
    onnx = pytest.importorskip("onnx")
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper, numpy_helper
    to = {"float16": TensorProto.FLOAT16, "bfloat16": TensorProto.BFLOAT16, "float32": TensorProto.FLOAT}[out_dtype]
    nodes = [helper.make_node("MatMulIntegerToFloat", ["x", "w", "a_scale", "b_scale"], ["y32"],
                              domain="com.microsoft"),
             helper.make_node("Cast", ["y32"], ["y"], to=to)]
    graph = helper.make_graph(
        nodes, "per_token",
        [helper.make_tensor_value_info("x", TensorProto.INT8, [m, k]),
         helper.make_tensor_value_info("a_scale", TensorProto.FLOAT, [1]),
         helper.make_tensor_value_info("b_scale", TensorProto.FLOAT, [n])],
        [helper.make_tensor_value_info("y", to, [m, n])],
        initializer=[numpy_helper.from_array(w, "w")])
    model_proto = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17),
                                                          helper.make_opsetid("com.microsoft", 1)])
    model_proto.ir_version = 8  # what every ONNX Runtime of the last years reads (a new onnx writes a newer IR)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    return ort.InferenceSession(model_proto.SerializeToString(), opts, providers=["CPUExecutionProvider"])


@pytest.mark.parametrize("out_dtype", ["float16", "float32"])
def test_onnxruntime_oracle(arch, out_dtype, rng):
    """Without bias and with a power-of-two token scale (ONNX Runtime's a_scale is one value, folded into
    b_scale first: exact only then), MatMulIntegerToFloat + Cast is the contract."""
    for m, n, k in [(1, 64, 256), (16, 96, 200), (45, 33, 129)]:
        x, w, deq, _, _ = random_case(rng, m, n, k)
        sess = _ort_session(m, k, n, out_dtype, w)
        a_scale = np.array([0.25], np.float32)
        want = sess.run(None, {"x": x, "a_scale": a_scale, "b_scale": deq})[0]
        got = quant.matmul_per_token(x, w, deq, np.full(m, 0.25, np.float32), out_dtype=out_dtype)
        assert_same_bits(got, want.astype(np_dtype(out_dtype)))


# ---- bad input: errors naming the argument, out untouched -------------------------------------------------

def _bad_calls():
    x, w = np.ones((4, 6), np.int8), np.ones((6, 5), np.int8)
    deq, pts, bias = np.ones(5, np.float32), np.ones(4, np.float32), np.ones(5, np.float32)
    ok = dict(x=x, weight=w, deq_scale=deq, per_token_scale=pts)
    return [
        (dict(ok, x=x.astype(np.int16)), TypeError, "x"),
        (dict(ok, x=x.astype(np.uint8)), TypeError, "x"),
        (dict(ok, weight=w.astype(np.float32)), TypeError, "weight"),
        (dict(ok, x=np.ones(6, np.int8)), ValueError, "x"),
        (dict(ok, weight=np.ones((7, 5), np.int8)), ValueError, "weight"),
        (dict(ok, weight=np.ones((2, 6, 5), np.int8)), ValueError, "weight"),
        (dict(ok, deq_scale=np.ones(4, np.float32)), ValueError, "deq_scale"),
        (dict(ok, deq_scale=np.ones(5, np.float64)), TypeError, "deq_scale"),
        (dict(ok, deq_scale="abc"), TypeError, "deq_scale"),
        (dict(ok, per_token_scale=np.ones(5, np.float32)), ValueError, "per_token_scale"),
        (dict(ok, per_token_scale=np.ones((1, 4), np.float32)), ValueError, "per_token_scale"),
        (dict(ok, bias=np.ones(4, np.float32)), ValueError, "bias"),
        (dict(ok, bias=np.ones(5, np.int32)), TypeError, "bias"),
        (dict(ok, out_dtype="int8"), TypeError, "out_dtype"),
        (dict(ok, transpose_a="yes"), TypeError, "transpose_a"),
    ]


@pytest.mark.parametrize("case", range(len(_bad_calls())))
def test_bad_input_names_argument_and_leaves_out_untouched(case):
    kwargs, exc, name = _bad_calls()[case]
    out = np.full((4, 5), 7, np.float16)
    with pytest.raises(exc, match=name):
        quant.matmul_per_token(**kwargs, out=out if "out_dtype" not in kwargs else None)
    assert (out == 7).all()


@pytest.mark.parametrize("out,exc", [(np.full((4, 6), 7, np.float16), ValueError),
                                     (np.full((4, 5), 7, np.float32), ValueError),
                                     (np.full((5, 4), 7, np.float16).T[:, :], None)])
def test_bad_out(out, exc):
    x, w = np.ones((4, 6), np.int8), np.ones((6, 5), np.int8)
    args = (x, w, np.ones(5, np.float32), np.ones(4, np.float32))
    if exc is None:  # a transposed view of the right shape is fine
        assert quant.matmul_per_token(*args, out=out, out_dtype="float16") is out
        return
    before = out.copy()
    with pytest.raises(exc, match="out"):
        quant.matmul_per_token(*args, out=out, out_dtype="float16")
    assert np.array_equal(out, before)
    ro = np.full((4, 5), 7, np.float16)
    ro.flags.writeable = False
    with pytest.raises(ValueError, match="out"):
        quant.matmul_per_token(*args, out=ro)


def test_core_checks_buffers():
    """The core entry refuses buffers too small for the sizes, strides and batch it is given."""
    x, w = np.ones((4, 6), np.int8), np.ones((6, 5), np.int8)
    deq, pts = np.ones(5, np.float32), np.ones(4, np.float32)
    c = np.full((4, 5), 7, np.float32)
    args = dict(transa="N", transb="N", layout_c="R", out_type="float32", batch=1, M=4, N=5, K=6, A=x, lda=6,
                stride_a=0, B=w, ldb=5, stride_b=0, deq_scale=deq, token_scale=pts, stride_token_scale=0,
                bias=None, C=c, ldc=5, stride_c=0)
    for change, exc, name in [(dict(batch=2, stride_c=20), ValueError, "C"), (dict(batch=2, stride_a=24, stride_c=20, C=np.full(40, 7, np.float32)), ValueError, "A"),
                              (dict(lda=7), ValueError, "A"), (dict(deq_scale=deq[:4]), ValueError, "deq_scale"),
                              (dict(token_scale=pts[:3]), ValueError, "token_scale"), (dict(ldc=4), ValueError, "ldc"),
                              (dict(layout_c="X"), ValueError, "layout_c"), (dict(out_type="int8"), ValueError, "out_type"),
                              (dict(C=c.astype(np.float16)), TypeError, "C"), (dict(stride_a=-1), ValueError, "stride_a"),
                              (dict(batch=2, stride_c=0, stride_a=0, stride_b=0), ValueError, "stride_c"),
                              (dict(bias=np.ones(3, np.float32)), ValueError, "bias"),
                              (dict(C=np.lib.stride_tricks.as_strided(c, writeable=False)), ValueError, "C"),
                              (dict(A=[1, 2]), TypeError, "A")]:
        with pytest.raises(exc, match=name):
            _core.gemm_s8s8_per_token(**dict(args, **change))
        assert (c == 7).all()
    assert _core.gemm_s8s8_per_token(**args) is c
    assert (c == 6).all()


# ---- prepacked weights ------------------------------------------------------------------------------------

@pytest.mark.parametrize("transpose_b", [False, True])
def test_pack_weight_matches_model(arch, nthreads, transpose_b, rng):
    # k 80: just past one 64-byte group (AMX's short-K kernel, gk_int8_kernel_for: packed and read by one rule)
    for batch, m, n, k in [(None, 1, 33, 17), (None, 7, 70, 300), (None, 130, 100, 64), (3, 20, 50, 40),
                           (None, 3, 9, 16384), (None, 40, 45, 80)]:
        x, w, deq, pts, bias = random_case(rng, m, n, k, batch, shared_weight=True)
        ws = np.ascontiguousarray(w.T) if transpose_b else w
        packed = quant.pack_weight(ws, transpose_b=transpose_b)
        assert packed.data is not None and (packed.k, packed.n) == (k, n)
        for name in ("float16", "bfloat16"):
            assert_same_bits(quant.matmul_per_token(x, packed, deq, pts, out_dtype=name, bias=bias),
                             model(x, ws, deq, pts, name, transpose_b=transpose_b, bias=bias))
        out = np.asfortranarray(np.empty((m, n), np.float32)) if batch is None else None
        if out is not None:  # columns contiguous: computed into a temporary, copied in
            quant.matmul_per_token(x, packed, deq, pts, out=out)
            assert_same_bits(out, model(x, ws, deq, pts, "float32", transpose_b=transpose_b))


def test_packed_weight_is_read_on_its_path_at_every_k(arch, rng):
    """The core takes the panels it packed at K around a k group's edge (gk_int8_kernel_for picks the kernel for
    K when packing and when reading; matmul_per_token would fall back to the weight without a word)."""
    m, n = 40, 45
    with gemmkit.use_arch(arch):
        for k in (63, 64, 65, 80, 96, 97, 128):
            x, w, deq, pts, _ = random_case(rng, m, n, k)
            packed = quant.pack_weight(w)
            c = np.full((m, n), np.nan, np.float32)
            _core.gemm_s8s8_per_token_packed("N", "float32", 1, m, n, k, x, k, 0, packed.data, deq, pts, 0, None, c,
                                             n, 0)
            assert_same_bits(c, model(x, w, deq, pts, "float32"))


def test_pack_weight_long_k_and_other_path(rng):
    x, w, deq, pts, _ = random_case(rng, 3, 20, 16385)
    long_k = quant.pack_weight(w)
    assert long_k.data is None  # beyond one exact chunk: kept as it is
    assert_same_bits(quant.matmul_per_token(x, long_k, deq, pts), model(x, w, deq, pts, "float16"))
    x, w, deq, pts, _ = random_case(rng, 5, 40, 30)
    archs = gemmkit.available_archs()
    with gemmkit.use_arch(archs[0]):
        packed = quant.pack_weight(w)
    for arch in archs:  # packed for one path, used on every path: the others read the weight itself
        with gemmkit.use_arch(arch):
            assert_same_bits(quant.matmul_per_token(x, packed, deq, pts), model(x, w, deq, pts, "float16"))


def test_few_rows_read_the_packed_weights_source(rng):
    """Few rows on a path that reads B in place use the weight, not its packed panels (same results)."""
    for arch in gemmkit.available_archs():
        with gemmkit.use_arch(arch):
            assert not _core.s8s8_reads_weight_in_place("N", 17, 4096)
            assert not _core.s8s8_reads_weight_in_place("T", 1, 16385)
            if arch == "generic":
                assert not _core.s8s8_reads_weight_in_place("T", 1, 64)
            if arch == "avx2":
                assert _core.s8s8_reads_weight_in_place("N", 1, 64) and _core.s8s8_reads_weight_in_place("T", 16, 64)
                assert not _core.s8s8_reads_weight_in_place("N", 16, 64)  # the packed panels win there
                assert _core.s8s8_reads_weight_in_place("T", 32, 64)
                assert not _core.s8s8_reads_weight_in_place("T", 33, 64)
            for transpose_b in (False, True):
                x, w, deq, pts, bias = random_case(rng, 3, 40, 70)
                ws = np.ascontiguousarray(w.T) if transpose_b else w
                packed = quant.pack_weight(ws, transpose_b=transpose_b)
                for xs in (x, x[:1], np.asfortranarray(x)):
                    assert_same_bits(quant.matmul_per_token(xs, packed, deq, pts[:len(xs)], bias=bias),
                                     model(xs, ws, deq, pts[:len(xs)], "float16", transpose_b=transpose_b,
                                           bias=bias))


def test_pack_weight_bad_input():
    w = np.ones((6, 5), np.int8)
    with pytest.raises(ValueError, match="weight"):
        quant.pack_weight(np.ones((2, 6, 5), np.int8))
    with pytest.raises(TypeError, match="weight"):
        quant.pack_weight(w.astype(np.int32))
    packed = quant.pack_weight(w)
    out = np.full((4, 5), 7, np.float16)
    with pytest.raises(ValueError, match="transpose_b"):
        quant.matmul_per_token(np.ones((4, 6), np.int8), packed, np.ones(5, np.float32), np.ones(4, np.float32),
                               transpose_b=True, out=out)
    with pytest.raises(ValueError, match="weight"):
        quant.matmul_per_token(np.ones((4, 7), np.int8), packed, np.ones(5, np.float32), np.ones(4, np.float32),
                               out=out)
    assert (out == 7).all()
    archs = gemmkit.available_archs()
    c = np.full((4, 5), 7, np.float32)
    args = dict(transa="N", out_type="float32", batch=1, M=4, N=5, K=6, A=np.ones((4, 6), np.int8), lda=6,
                stride_a=0, deq_scale=np.ones(5, np.float32), token_scale=np.ones(4, np.float32),
                stride_token_scale=0, bias=None, C=c, ldc=5, stride_c=0)
    with pytest.raises(ValueError, match="packed_weight"):  # sizes it was not packed for
        _core.gemm_s8s8_per_token_packed(packed_weight=packed.data, **dict(args, N=4, C=c[:, :4], ldc=5))
    with pytest.raises(ValueError, match="packed_weight"):  # too short
        _core.gemm_s8s8_per_token_packed(packed_weight=packed.data[:100], **args)
    int8_kernel = {}  # a path with another int8 kernel (aarch64's neon path runs the portable one)
    for a in archs:
        with gemmkit.use_arch(a):
            int8_kernel[a] = gemmkit.show_config(print_out=False)["int8"]["kernel"]
    unlike = [a for a in archs if int8_kernel[a] != int8_kernel[archs[0]]]
    if unlike:
        with gemmkit.use_arch(archs[0]):
            other = quant.pack_weight(w)
        with gemmkit.use_arch(unlike[-1]), pytest.raises(ValueError, match="packed_weight"):
            _core.gemm_s8s8_per_token_packed(packed_weight=other.data, **args)
    assert (c == 7).all()
    assert _core.gemm_s8s8_per_token_packed(packed_weight=packed.data, **args) is c
    assert (c == 6).all()
