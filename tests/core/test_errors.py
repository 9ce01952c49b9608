"""Argument checking of the core's entry points: every rejected call raises the documented exception naming the
argument at fault and leaves C untouched.

First sgemm, gemm_u8s8s32 and gemm_s8s8s32 in oneDNN's order (transa, transb, M, N, K, lda, ldb, ldc; then
buffers); then hostile callers of every entry (s/d/c/z, int8, 16-bit and integer families): argument conversion
(sizes must be integers, scalars must fit the routine's type), stride checks that cannot overflow, bounded
workspaces, no global state switched by queries, thread-count changes racing with calls (each of those cases
failed before it was fixed).
"""
import os
import re
import subprocess
import sys
import threading

import numpy as np
import pytest

import gemmkit

FUNCS = ["sgemm", "u8", "s8"]
ORDER_S = ["transa", "transb", "M", "N", "K", "alpha", "A", "lda", "B", "ldb", "beta", "C", "ldc"]
ORDER_I = ["transa", "transb", "offsetc", "M", "N", "K", "alpha", "A", "lda", "ao", "B", "ldb", "bo",
           "beta", "C", "ldc", "co"]
DT = {"sgemm": (np.float32, np.float32, np.float32), "u8": (np.uint8, np.int8, np.int32),
      "s8": (np.int8, np.int8, np.int32)}
LAYOUT_WORDS = r"(contiguous|stride|apart|layout|[12]-D)"


def _fn(kind):
    return {"sgemm": gemmkit.sgemm, "u8": gemmkit.gemm_u8s8s32, "s8": gemmkit.gemm_s8s8s32}[kind]


def sentinel(kind):
    return DT[kind][2](-42)


def valid_args(kind, M=3, N=4, K=5, ta="N", tb="N"):
    """A valid call (2-D operands with minimal lds); every test changes one thing."""
    tA, tB, tC = DT[kind]
    ash = (K, M) if ta in "Tt" else (M, K)
    bsh = (N, K) if tb in "Tt" else (K, N)
    args = dict(transa=ta, transb=tb, M=M, N=N, K=K, alpha=1.0, A=np.ones(ash, tA), lda=max(1, ash[1]),
                B=np.ones(bsh, tB), ldb=max(1, bsh[1]), beta=0.0, C=np.full((M, N), sentinel(kind), tC),
                ldc=max(1, N))
    if kind != "sgemm":
        args.update(offsetc="F", ao=0, bo=0, co=[0])
    return args


def call(kind, args):
    order = ORDER_S if kind == "sgemm" else ORDER_I
    return _fn(kind)(*[args[k] for k in order])


def expect(kind, exc, name, args, extra=None):
    """Call with args; expect exc whose message names `name` (as a word); C must be unchanged."""
    C = args["C"]
    before = np.array(C, copy=True) if isinstance(C, np.ndarray) else None
    with pytest.raises(exc) as info:
        call(kind, args)
    msg = str(info.value)
    assert re.search(rf"(?<![A-Za-z_]){re.escape(name)}(?![A-Za-z_])", msg), \
        f"{exc.__name__} message does not name {name!r}: {msg!r}"
    if extra is not None:
        assert re.search(extra, msg), f"message {msg!r} does not match {extra!r}"
    if before is not None:
        assert np.array_equal(C, before), "C was modified by a rejected call"
    return msg


def test_valid_args_are_valid():
    for kind in FUNCS:
        for ta in "NT":
            for tb in "NT":
                args = valid_args(kind, ta=ta, tb=tb)
                assert call(kind, args) is args["C"]
                assert (args["C"] == 5).all()


# ---- transa / transb / offsetc --------------------------------------------------------------

@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("which", ["transa", "transb"])
@pytest.mark.parametrize("bad", ["P", "C", "c", "X", "", "NN", "TN", " N", "n ", None, 1, b"N"])
def test_bad_trans(kind, which, bad):
    args = valid_args(kind)
    args[which] = bad
    expect(kind, ValueError, which, args)


@pytest.mark.parametrize("kind", ["u8", "s8"])
@pytest.mark.parametrize("bad", ["X", "N", "T", "A", "", "FF", "f ", None, 0, b"F"])
def test_bad_offsetc(kind, bad):
    args = valid_args(kind)
    args["offsetc"] = bad
    expect(kind, ValueError, "offsetc", args)


@pytest.mark.parametrize("kind", ["u8", "s8"])
@pytest.mark.parametrize("oc", list("FfCcRr"))
def test_offsetc_all_cases_accepted(kind, oc):
    args = valid_args(kind)
    args["offsetc"] = oc
    args["co"] = [1, 2, 3, 4]
    call(kind, args)
    expected = {"F": np.full((3, 4), 6), "C": 5 + np.array([[1], [2], [3]]) + np.zeros((3, 4), int),
                "R": 5 + np.array([[1, 2, 3, 4]]) + np.zeros((3, 4), int)}[oc.upper()]
    assert np.array_equal(args["C"], expected)


# ---- dimensions and leading dimensions -----------------------------------------------------

@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("dim", ["M", "N", "K"])
@pytest.mark.parametrize("value", [-1, -100, -(2**62)])
def test_negative_dims(kind, dim, value):
    args = valid_args(kind)
    args[dim] = value
    expect(kind, ValueError, dim, args)


def _ld_cases():
    # (transa, transb, M, N, K, which ld, bad value); need = max(1, ...)
    return [
        ("N", "N", 3, 4, 5, "lda", 4), ("N", "N", 3, 4, 5, "lda", 0), ("N", "N", 3, 4, 5, "lda", -1),
        ("T", "N", 3, 4, 5, "lda", 2),   # transposed A needs lda >= M (4 would be fine)
        ("T", "N", 6, 4, 5, "lda", 5),   # ... and 5 >= K does not help
        ("N", "N", 0, 4, 0, "lda", 0),   # max(1, .) even when M = K = 0
        ("T", "N", 0, 4, 0, "lda", 0),
        ("N", "N", 3, 4, 5, "ldb", 3), ("N", "N", 3, 4, 5, "ldb", 0),
        ("N", "T", 3, 4, 5, "ldb", 4),   # transposed B needs ldb >= K
        ("N", "T", 3, 4, 6, "ldb", 5),   # ... 5 >= N does not help
        ("N", "N", 3, 0, 5, "ldb", 0), ("N", "T", 3, 4, 0, "ldb", 0),
        ("N", "N", 3, 4, 5, "ldc", 3), ("N", "N", 3, 4, 5, "ldc", 0), ("T", "T", 3, 4, 5, "ldc", 3),
        ("N", "N", 0, 0, 0, "ldc", 0),
    ]


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("ta,tb,M,N,K,which,bad", _ld_cases())
def test_leading_dimensions(kind, ta, tb, M, N, K, which, bad):
    args = valid_args(kind, M=M, N=N, K=K, ta=ta, tb=tb)
    args[which] = bad
    args["C"] = np.full(64, sentinel(kind), DT[kind][2])
    args["A"] = np.ones(64, DT[kind][0])
    args["B"] = np.ones(64, DT[kind][1])
    expect(kind, ValueError, which, args)


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("ta,tb", ["NN", "nt", "TN", "tt"])
def test_minimal_lds_accepted(kind, ta, tb):
    """The bounds are inclusive and depend on the transposes: lda = M for 'T' even when K > M."""
    M, N, K = 2, 3, 7
    args = valid_args(kind, M=M, N=N, K=K, ta=ta, tb=tb)
    assert args["lda"] == (M if ta in "Tt" else K) and args["ldb"] == (K if tb in "Tt" else N)
    assert call(kind, args) is args["C"]
    assert (args["C"] == K).all()


@pytest.mark.parametrize("kind", FUNCS)
def test_check_order(kind):
    """oneDNN order: transa, transb, M, N, K, lda, ldb, ldc, and all before the buffers."""
    def bad(**kw):
        args = valid_args(kind)
        args.update(kw)
        return args
    expect(kind, ValueError, "transa", bad(transa="P", transb="P", M=-1, lda=0, A=None))
    expect(kind, ValueError, "transb", bad(transb="P", M=-1, lda=0))
    expect(kind, ValueError, "M", bad(M=-1, N=-1, K=-1, lda=0))
    expect(kind, ValueError, "N", bad(N=-1, K=-1, lda=0))
    # (transa='T' so that a wrongly reported lda message, "max(1, M)", would not mention K)
    expect(kind, ValueError, "K", bad(transa="T", K=-1, lda=0, ldb=0))
    expect(kind, ValueError, "lda", bad(lda=0, ldb=0, ldc=0))
    expect(kind, ValueError, "ldb", bad(ldb=0, ldc=0, A=None))
    expect(kind, ValueError, "ldc", bad(ldc=0, A=None, B=np.ones(2, np.float64)))
    expect(kind, ValueError, "M", bad(M=-1, C=None))


# ---- buffers: size -------------------------------------------------------------------------

def _dims(ta, tb, M, N, K):
    ash = (K, M) if ta in "Tt" else (M, K)
    bsh = (N, K) if tb in "Tt" else (K, N)
    return {"A": ash, "B": bsh, "C": (M, N)}


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("which", ["A", "B", "C"])
@pytest.mark.parametrize("trans", ["NN", "TT"])
@pytest.mark.parametrize("pad", [0, 3])
def test_too_small_flat_buffer(kind, which, trans, pad):
    ta, tb = trans
    M, N, K = 3, 4, 5
    args = valid_args(kind, M=M, N=N, K=K, ta=ta, tb=tb)
    ld = {"A": "lda", "B": "ldb", "C": "ldc"}[which]
    args[ld] += pad
    rows, cols = _dims(ta, tb, M, N, K)[which]
    need = (rows - 1) * args[ld] + cols
    dt = DT[kind]["ABC".index(which)]
    for name, shape in [("A", _dims(ta, tb, M, N, K)["A"]), ("B", _dims(ta, tb, M, N, K)["B"]),
                        ("C", (M, N))]:
        ldn = args[{"A": "lda", "B": "ldb", "C": "ldc"}[name]]
        size = (shape[0] - 1) * ldn + shape[1]
        args[name] = np.full(size, sentinel(kind) if name == "C" else 1, DT[kind]["ABC".index(name)])
    assert call(kind, dict(args, C=args["C"].copy())) is not None   # exactly big enough is fine
    args[which] = np.full(need - 1, sentinel(kind) if which == "C" else 1, dt)
    expect(kind, ValueError, which, args, extra="small")


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("which", ["A", "B", "C"])
def test_too_small_2d_buffer(kind, which):
    M, N, K = 3, 4, 5
    args = valid_args(kind, M=M, N=N, K=K)
    rows, cols = _dims("N", "N", M, N, K)[which]
    dt = DT[kind]["ABC".index(which)]
    ld = {"A": "lda", "B": "ldb", "C": "ldc"}[which]
    # too few rows
    args[which] = np.full((rows - 1, cols), sentinel(kind), dt)
    expect(kind, ValueError, which, args, extra="small")
    # too few columns (a slice of a wider array, so the row stride is right)
    X = np.full((rows, cols), sentinel(kind), dt)
    args[which] = X[:, :cols - 1]
    expect(kind, ValueError, which, args, extra="small")
    # empty 2-D array
    args[which] = np.zeros((0, cols), dt)
    expect(kind, ValueError, which, args)
    assert args[ld] == cols


@pytest.mark.parametrize("kind", FUNCS)
def test_extent_overflow(kind):
    args = valid_args(kind)
    args["lda"] = 2**62
    args["A"] = np.ones(64, DT[kind][0])
    expect(kind, ValueError, "A", args)


# ---- buffers: dtype ------------------------------------------------------------------------

WRONG_DTYPES = {
    "sgemm": {"A": [np.float64, np.int32, np.float16, np.uint8, np.complex64],
              "B": [np.float64, np.int32, np.int8],
              "C": [np.float64, np.int32, np.float16]},
    "u8": {"A": [np.int8, np.int32, np.float32, np.uint16, np.bool_],
           "B": [np.uint8, np.int16, np.float32],
           "C": [np.int64, np.uint32, np.float32, np.int16]},
    "s8": {"A": [np.uint8, np.int32, np.float32, np.bool_],
           "B": [np.uint8, np.int32, np.float64],
           "C": [np.int64, np.uint32, np.float32, np.float64]},
}
DTYPE_CASES = [(k, w, d) for k, ws in WRONG_DTYPES.items() for w, ds in ws.items() for d in ds]


@pytest.mark.parametrize("kind,which,dtype", DTYPE_CASES,
                         ids=[f"{k}-{w}-{np.dtype(d).name}" for k, w, d in DTYPE_CASES])
def test_wrong_dtype(kind, which, dtype):
    args = valid_args(kind)
    shape = args[which].shape
    args[which] = np.ones(shape, dtype)
    expect(kind, TypeError, which, args, extra="dtype")
    if which != "C":
        # C (right dtype) must be untouched
        assert (args["C"] == sentinel(kind)).all()


@pytest.mark.parametrize("kind,which", [("sgemm", "A"), ("sgemm", "B"), ("sgemm", "C"), ("u8", "C"),
                                        ("s8", "C")])
def test_byteswapped_dtype_rejected(kind, which):
    """A non-native byte order is a different element format: reading it natively would be wrong."""
    args = valid_args(kind)
    dt = np.dtype(DT[kind]["ABC".index(which)])
    assert dt.itemsize > 1
    args[which] = np.ones(args[which].shape, dt.newbyteorder())
    expect(kind, TypeError, which, args)


@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("which", ["A", "B", "C"])
@pytest.mark.parametrize("obj", [None, "list", "str", 1.5, "dict"])
def test_non_buffer_objects(kind, which, obj):
    args = valid_args(kind)
    obj = {"list": [[1] * 5] * 5, "str": "abcdefghijklmnopqrstuvwxyz", "dict": {"a": 1}}.get(obj, obj) \
        if isinstance(obj, str) else obj
    args[which] = obj
    expect(kind, TypeError, which, args)


@pytest.mark.parametrize("kind", FUNCS)
def test_read_only_c_numpy(kind):
    args = valid_args(kind)
    args["C"].setflags(write=False)
    expect(kind, ValueError, "C", args, extra="read-only|writable")


@pytest.mark.parametrize("kind", FUNCS)
def test_read_only_c_bytes(kind):
    """bytes are read-only buffers too."""
    args = valid_args(kind)
    args["C"] = bytes(4 * 12)
    with pytest.raises(ValueError, match=r"\bC\b"):
        call(kind, args)


@pytest.mark.parametrize("kind", FUNCS)
def test_read_only_inputs_accepted(kind):
    args = valid_args(kind)
    args["A"].setflags(write=False)
    args["B"].setflags(write=False)
    assert call(kind, args) is args["C"]
    assert (args["C"] == 5).all()


@pytest.mark.parametrize("kind", ["u8", "s8"])
def test_any_buffer_object(kind):
    """Not only NumPy arrays: bytes / bytearray / memoryview / array.array of the right type."""
    import array
    M, N, K = 2, 3, 4
    A = bytes([2] * (M * K)) if kind == "u8" else memoryview(bytes([2] * (M * K))).cast("b")
    B = array.array("b", [3] * (K * N))
    C = array.array("i", [0] * (M * N))
    out = _fn(kind)('N', 'N', 'F', M, N, K, 1.0, A, K, 0, B, N, 0, 0.0, C, N, array.array("i", [1]))
    assert out is C
    assert list(C) == [25] * (M * N)


# ---- buffers: layout -----------------------------------------------------------------------

@pytest.mark.parametrize("kind", FUNCS)
@pytest.mark.parametrize("which", ["A", "B", "C"])
@pytest.mark.parametrize("layout", ["fortran", "row_stride_too_big", "row_stride_too_small", "transposed_view",
                                    "strided_1d", "column_step", "3d"])
def test_bad_layouts(kind, which, layout):
    args = valid_args(kind)
    ld = args[{"A": "lda", "B": "ldb", "C": "ldc"}[which]]
    rows, cols = args[which].shape
    dt = args[which].dtype
    fill = sentinel(kind)
    if layout == "fortran":
        obj = np.asfortranarray(np.full((rows, cols), fill, dt))
    elif layout == "row_stride_too_big":
        obj = np.full((rows, cols + 2), fill, dt)[:, :cols]      # rows ld+2 apart
    elif layout == "row_stride_too_small":
        obj = np.full((rows, cols), fill, dt)
        args[{"A": "lda", "B": "ldb", "C": "ldc"}[which]] = ld + 1  # valid ld, but rows ld apart
    elif layout == "transposed_view":
        obj = np.full((cols, rows), fill, dt).T
    elif layout == "strided_1d":
        obj = np.full(2 * rows * cols, fill, dt)[::2]
    elif layout == "column_step":
        obj = np.full((rows, 2 * cols), fill, dt)[:, ::2]
    else:
        obj = np.full((1, rows, cols), fill, dt)
    parent_before = (obj.base if obj.base is not None else obj).copy()
    args[which] = obj
    expect(kind, ValueError, which, args, extra=LAYOUT_WORDS)
    assert np.array_equal(obj.base if obj.base is not None else obj, parent_before)


# ---- int8 specific: offsets and co ---------------------------------------------------------

@pytest.mark.parametrize("kind,which,bad", [
    ("u8", "ao", -1), ("u8", "ao", 256), ("u8", "ao", -128), ("u8", "ao", 1000),
    ("s8", "ao", -129), ("s8", "ao", 128), ("s8", "ao", 255),
    ("u8", "bo", -129), ("u8", "bo", 128), ("u8", "bo", 255),
    ("s8", "bo", -129), ("s8", "bo", 128), ("s8", "bo", 2**40),
])
def test_zero_point_out_of_range(kind, which, bad):
    args = valid_args(kind)
    args[which] = bad
    expect(kind, ValueError, which, args)
    args[which] = np.int64(bad)
    expect(kind, ValueError, which, args)


@pytest.mark.parametrize("kind", ["u8", "s8"])
@pytest.mark.parametrize("which", ["ao", "bo"])
@pytest.mark.parametrize("bad", [1.5, "1", None])
def test_zero_point_not_an_integer(kind, which, bad):
    args = valid_args(kind)
    args[which] = bad
    expect(kind, (ValueError, TypeError), which, args)


@pytest.mark.parametrize("kind,ao,bo", [("u8", 0, -128), ("u8", 255, 127), ("s8", -128, -128), ("s8", 127, 127)])
def test_zero_point_extremes_accepted(kind, ao, bo):
    args = valid_args(kind)
    args["ao"], args["bo"] = ao, bo
    call(kind, args)
    a = 1 - ao
    assert (args["C"] == 5 * a * (1 - bo)).all()


@pytest.mark.parametrize("kind", ["u8", "s8"])
@pytest.mark.parametrize("offsetc,co", [("F", []), ("f", np.array([], np.int32)), ("C", [1, 2]),
                                        ("c", np.zeros(2, np.int32)), ("R", [1, 2, 3]),
                                        ("r", np.zeros(3, np.int32)), ("C", 7), ("R", np.int32(7))])
def test_co_too_short(kind, offsetc, co):
    args = valid_args(kind)   # M = 3, N = 4
    args["offsetc"], args["co"] = offsetc, co
    expect(kind, ValueError, "co", args)


@pytest.mark.parametrize("kind", ["u8", "s8"])
@pytest.mark.parametrize("co", [np.array([1.0], np.float64), [1.5], None, "abc", np.array([1], np.float32),
                                [[1], "x"]])
def test_co_wrong_type(kind, co):
    args = valid_args(kind)
    args["co"] = co
    expect(kind, (TypeError, ValueError), "co", args)


@pytest.mark.parametrize("kind", ["u8", "s8"])
@pytest.mark.parametrize("co", [[2**31], [-(2**31) - 1], np.array([2**40], np.int64)])
def test_co_out_of_int32_range(kind, co):
    args = valid_args(kind)
    args["co"] = co
    expect(kind, ValueError, "co", args)


@pytest.mark.parametrize("kind", ["u8", "s8"])
def test_co_int32_extremes_and_other_int_dtypes_accepted(kind):
    for co in ([2**31 - 1], [-(2**31)], np.array([7], np.int64), np.array([7], np.uint8), np.int16(7), 7):
        args = valid_args(kind)
        args["co"] = co
        call(kind, args)
        v = int(np.asarray(co).reshape(-1)[0])
        assert (args["C"] == np.clip(5 + v, -2**31, 2**31 - 1)).all()


# ---- errors do not depend on the kernel path -----------------------------------------------

@pytest.mark.parametrize("kind", FUNCS)
def test_errors_on_every_arch(arch, kind):
    args = valid_args(kind)
    args["lda"] = 1
    expect(kind, ValueError, "lda", args)
    args = valid_args(kind)
    args["A"] = np.ones(3, DT[kind][0])
    expect(kind, ValueError, "A", args)


# ---- hostile callers of every entry: conversions, overflow, workspaces, global state, races ----

FLOAT_FNS = {"sgemm": np.float32, "dgemm": np.float64, "cgemm": np.complex64, "zgemm": np.complex128}


def _float_args(fn, **over):
    """A valid 2x4x5 call of a float routine as a dict, with some arguments replaced."""
    dt = FLOAT_FNS[fn]
    args = dict(transa="N", transb="N", M=2, N=4, K=5, alpha=1.0, A=np.ones((2, 5), dt), lda=5,
                B=np.ones((5, 4), dt), ldb=4, beta=0.0, C=np.full((2, 4), 7, dt), ldc=4)
    args.update(over)
    return args


def _int8_args(**over):
    args = dict(transa="N", transb="N", offsetc="F", M=2, N=4, K=5, alpha=1.0, A=np.ones((2, 5), np.int8), lda=5,
                ao=0, B=np.ones((5, 4), np.int8), ldb=4, bo=0, beta=0.0, C=np.full((2, 4), 7, np.int32), ldc=4,
                co=np.zeros(1, np.int32))
    args.update(over)
    return args


def _call(fn, args):
    return getattr(gemmkit, fn)(*args.values())


def _rejected(fn, args, exc, match):
    """The call raises `exc` whose message matches `match`, and C keeps its contents."""
    before = args["C"].copy()
    with pytest.raises(exc, match=match):
        _call(fn, args)
    assert np.array_equal(args["C"], before), "C was written although the call was rejected"


@pytest.mark.parametrize("fn", list(FLOAT_FNS))
@pytest.mark.parametrize("name", ["M", "N", "K", "lda", "ldb", "ldc"])
@pytest.mark.parametrize("bad", [2.9, 5.5, np.float64(3.0), True, None, "3"])
def test_sizes_must_be_integers(fn, name, bad):
    _rejected(fn, _float_args(fn, **{name: bad}), TypeError, rf"^{name} must be an integer")


@pytest.mark.parametrize("fn", ["gemm_s8s8s32", "gemm_u8s8s32"])
@pytest.mark.parametrize("name", ["M", "N", "K", "lda", "ldb", "ldc"])
@pytest.mark.parametrize("bad", [4.9, np.float32(2.0), False, None])
def test_int8_sizes_must_be_integers(fn, name, bad):
    args = _int8_args(**{name: bad})
    if fn == "gemm_u8s8s32":
        args["A"] = args["A"].view(np.uint8)
    _rejected(fn, args, TypeError, rf"^{name} must be an integer")


@pytest.mark.parametrize("name", ["ao", "bo"])
def test_int8_offsets_refuse_bools_and_floats(name):
    for bad in (True, 1.0, None):
        _rejected("gemm_s8s8s32", _int8_args(**{name: bad}), ValueError, rf"^{name} must be an integer")


@pytest.mark.parametrize("fn", list(FLOAT_FNS))
def test_numpy_integers_are_sizes(fn):
    dt = FLOAT_FNS[fn]
    args = _float_args(fn, M=np.int64(2), N=np.int32(4), K=np.uint8(5), lda=np.int16(5))
    _call(fn, args)
    assert np.array_equal(args["C"], np.full((2, 4), 5, dt))


@pytest.mark.parametrize("fn", list(FLOAT_FNS))
@pytest.mark.parametrize("name", ["M", "N", "ldc"])
def test_sizes_beyond_int64_are_value_errors(fn, name):
    _rejected(fn, _float_args(fn, **{name: 2**63}), ValueError, rf"^{name}=\d+ is out of range")


@pytest.mark.parametrize("fn", list(FLOAT_FNS))
@pytest.mark.parametrize("name", ["alpha", "beta"])
def test_scalars_name_the_argument(fn, name):
    _rejected(fn, _float_args(fn, **{name: None}), TypeError, rf"^{name} must be a (real|complex) number")
    _rejected(fn, _float_args(fn, **{name: "1"}), TypeError, rf"^{name} must be a (real|complex) number")
    _rejected(fn, _float_args(fn, **{name: 10**400}), ValueError, rf"^{name}=\d+ is too large")


@pytest.mark.parametrize("fn", ["sgemm", "cgemm"])
def test_single_precision_scalars_must_fit_float32(fn):
    _rejected(fn, _float_args(fn, alpha=1e300), ValueError, r"^alpha=1e\+300 is too large for (float32|complex64)")
    _rejected(fn, _float_args(fn, beta=-1e39), ValueError, r"^beta=-1e\+39 is too large")
    if fn == "cgemm":
        _rejected(fn, _float_args(fn, alpha=complex(1, 1e300)), ValueError, "too large for complex64")
    # infinities and NaN given as such are values of the type: they are computed with, not refused
    args = _float_args(fn, alpha=float("inf"))
    _call(fn, args)
    assert np.all(np.isinf(args["C"].real))


def test_real_routines_refuse_complex_scalars():
    _rejected("dgemm", _float_args("dgemm", alpha=1j), TypeError, "^alpha must be a real number")


def test_int8_scalars_must_fit_float32():
    _rejected("gemm_s8s8s32", _int8_args(alpha=1e300), ValueError, r"^alpha=1e\+300 is too large for float32")
    _rejected("gemm_s8s8s32", _int8_args(beta=None), TypeError, "^beta must be a real number")


def test_dgemm_takes_large_doubles():
    args = _float_args("dgemm", alpha=1e300)
    _call("dgemm", args)
    assert np.array_equal(args["C"], np.full((2, 4), 5e300))


@pytest.mark.parametrize("fn", list(FLOAT_FNS))
def test_leading_dimension_check_does_not_overflow(fn):
    dt = FLOAT_FNS[fn]
    a2 = np.ones((2, 5), dt)
    _rejected(fn, _float_args(fn, A=a2, lda=5 + 2**62), ValueError, "^A rows are")
    _rejected(fn, _float_args(fn, A=a2[::-1], lda=2**62 - 5), ValueError, "^A rows are")
    _rejected(fn, _float_args(fn, ldc=4 + 2**62), ValueError, "^C rows are")
    # 2**64 / itemsize + 5 wraps to 5 when multiplied by the itemsize in 64 bits
    itemsize = np.dtype(dt).itemsize
    _rejected(fn, _float_args(fn, A=a2, lda=5 + 2**64 // itemsize), ValueError, "^A rows are|out of range")


def test_set_num_threads_conversion():
    old = gemmkit.get_num_threads()
    try:
        gemmkit.set_num_threads(np.int64(2))
        assert gemmkit.get_num_threads() == min(2, 256)
        for bad in (2.0, True, None, "2"):
            with pytest.raises(TypeError, match="^n must be an integer"):
                gemmkit.set_num_threads(bad)
        for bad in (2**31, -2**31 - 1, 2**70):
            with pytest.raises(ValueError, match=r"^n=-?\d+ is out of range"):
                gemmkit.set_num_threads(bad)
        assert gemmkit.get_num_threads() == 2
    finally:
        gemmkit.set_num_threads(old)


_RSS_SCRIPT = r"""
import os, numpy as np, gemmkit
def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
gemmkit.set_num_threads(1)
K = 4_000_000
base = rss()
for fn, dt in (("sgemm", np.float32),):
    A = np.ones((K, 16), dt)        # 'T': A is K x M, op(A) is copied for the dot kernel
    B = np.ones((1, K), dt)         # 'T': B is N x K
    C = np.zeros((16, 1), dt)
    gemmkit.sgemm("T", "T", 16, 1, K, 1.0, A, 16, B, K, 0.0, C, 1)
    assert np.all(C == K), C
    del A, B, C
A = np.ones((K, 8), np.int8); B = np.ones((1, K), np.int8); C = np.zeros((8, 1), np.int32)
gemmkit.gemm_s8s8s32("T", "T", "F", 8, 1, K, 1.0, A, 8, 0, B, K, 0, 0.0, C, 1, [0])
assert np.all(C == K), C
del A, B, C
print((rss() - base) >> 20)
"""


@pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="RSS read from /proc")
def test_workspaces_give_back_large_transient_copies(tmp_path):
    """A long dot product with a transposed A copies op(A) (256 MB for sgemm here): the thread must not
    keep that copy after the call."""
    env = dict(os.environ, GEMMKIT_NUM_THREADS="1")
    out = subprocess.run([sys.executable, "-c", _RSS_SCRIPT], capture_output=True, text=True, env=env, timeout=300,
                         cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    grown_mib = int(out.stdout.strip().splitlines()[-1])
    assert grown_mib < 48, f"RSS grew by {grown_mib} MiB and stayed"


def test_queries_do_not_switch_the_kernel_path():
    seen = set()
    stop = threading.Event()

    def watch():
        while not stop.is_set():
            seen.add(gemmkit.get_arch())

    before = gemmkit.get_arch()
    t = threading.Thread(target=watch)
    t.start()
    try:
        for _ in range(50):
            gemmkit.available_archs()
            gemmkit.kernel_info() if hasattr(gemmkit, "kernel_info") else gemmkit._core.kernel_info()
    finally:
        stop.set()
        t.join()
    assert seen == {before}


def test_thread_count_changes_race_with_calls():
    """Calls from four threads while a fifth flips the thread count: every result exact."""
    rng = np.random.default_rng(1)
    a = rng.integers(-3, 4, (96, 200)).astype(np.float64)
    b = rng.integers(-3, 4, (200, 80)).astype(np.float64)
    want = a @ b
    errors = []
    stop = threading.Event()
    old = gemmkit.get_num_threads()

    def flip():
        n = 1
        while not stop.is_set():
            gemmkit.set_num_threads(n)
            n = 3 - n

    def work():
        for _ in range(40):
            c = np.empty((96, 80))
            gemmkit.dgemm("N", "N", 96, 80, 200, 1.0, a, 200, b, 80, 0.0, c, 80)
            if not np.array_equal(c, want):
                errors.append("wrong result")

    flipper = threading.Thread(target=flip)
    flipper.start()
    workers = [threading.Thread(target=work) for _ in range(4)]
    for w in workers:
        w.start()
    for w in workers:
        w.join()
    stop.set()
    flipper.join()
    gemmkit.set_num_threads(old)
    assert errors == []


_FIRST_CALLS_SCRIPT = r"""
import threading, numpy as np, gemmkit
# The first calls of the process come from several threads at once (lazy dispatch initialisation).
barrier = threading.Barrier(4)
res = []
def go():
    a = np.ones((8, 8), np.float32); c = np.zeros((8, 8), np.float32)
    barrier.wait()
    gemmkit.sgemm("N", "N", 8, 8, 8, 1.0, a, 8, a, 8, 0.0, c, 8)
    res.append(bool(np.all(c == 8)))
ts = [threading.Thread(target=go) for _ in range(4)]
[t.start() for t in ts]; [t.join() for t in ts]
print(all(res) and len(res) == 4, gemmkit.get_arch())
"""


def test_first_calls_from_several_threads(tmp_path):
    for _ in range(3):
        out = subprocess.run([sys.executable, "-c", _FIRST_CALLS_SCRIPT], capture_output=True, text=True, timeout=120,
                             cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        ok, arch = out.stdout.split()
        assert ok == "True"
        assert arch in gemmkit.available_archs()


@pytest.mark.parametrize("fn,dtype", [("hgemm", np.float16), ("gemm_i32", np.int32), ("gemm_i64", np.int64),
                                      ("gemm_u32", np.uint32), ("gemm_u64", np.uint64)])
@pytest.mark.parametrize("name", ["M", "K", "ldc"])
def test_half_and_integer_families_share_the_conversion_rules(fn, dtype, name):
    """The ONNX families go through the same size and scalar checks as sgemm."""
    args = dict(transa="N", transb="N", M=2, N=4, K=5, alpha=1.0, A=np.ones((2, 5), dtype), lda=5,
                B=np.ones((5, 4), dtype), ldb=4, beta=0.0, C=np.full((2, 4), 7, dtype), ldc=4)
    bad = dict(args, **{name: 2.9})
    before = bad["C"].copy()
    with pytest.raises(TypeError, match=rf"^{name} must be an integer"):
        getattr(gemmkit._core, fn)(*bad.values())
    assert np.array_equal(bad["C"], before)
    with pytest.raises(TypeError, match="^alpha must be a real number"):
        getattr(gemmkit._core, fn)(*dict(args, alpha=None).values())


# ---- buffers without strides: ctypes arrays and their kin -------------------------------------------

_FOREIGN_BUFFERS_SCRIPT = r"""
import array, ctypes, sys
import numpy as np
import gemmkit
from gemmkit import _core

M, N, K = 3, 4, 4  # A 3 x 4, B 4 x 4, C 3 x 4: the 2-D ctypes forms are (T * 4) * rows
CT = {"float32": ctypes.c_float, "float64": ctypes.c_double, "uint8": ctypes.c_uint8, "int8": ctypes.c_int8,
      "int32": ctypes.c_int32, "uint16": ctypes.c_uint16}
AR = {"float32": "f", "float64": "d", "uint8": "B", "int8": "b", "int32": "i"}
ENTRIES = {"sgemm": ("float32", "float32", "float32"), "dgemm": ("float64", "float64", "float64"),
           "hgemm": ("float16", "float16", "float16"), "gemm_u8s8s32": ("uint8", "int8", "int32"),
           "gemm_s8s8s32": ("int8", "int8", "int32")}
SHAPES = {"A": (M, K), "B": (K, N), "C": (M, N)}
rng = np.random.default_rng(0)


def containers(values, dtype):
    # (description, object, numpy view of its memory or None): each container type that can hold `values`
    rows, cols = values.shape
    out = []
    for ct_name, ct in CT.items():
        flat = (ct * (rows * cols))()
        two = ((ct * cols) * rows)()
        for desc, obj in (("ctypes 1-D " + ct_name, flat), ("ctypes 2-D " + ct_name, two)):
            view = np.ctypeslib.as_array(obj).reshape(rows, cols)
            view[...] = values.astype(view.dtype)
            out.append((desc, obj, view))
    for ar_name, code in AR.items():
        a = array.array(code, values.astype(ar_name).ravel().tolist())
        out.append(("array.array " + code, a, np.frombuffer(a, ar_name).reshape(rows, cols)))
    b = bytearray(values.astype(np.uint8).tobytes())
    out.append(("bytearray", b, np.frombuffer(b, np.uint8).reshape(rows, cols)))
    base = values.astype(dtype)
    out.append(("memoryview 2-D " + str(base.dtype), memoryview(base), base))
    held = (ctypes.c_float * (rows * cols))()
    np.ctypeslib.as_array(held)[...] = values.ravel()
    out.append(("memoryview of ctypes", memoryview(held), np.ctypeslib.as_array(held).reshape(rows, cols)))
    out.append(("ctypes scalar", ctypes.c_float(1.0), None))
    return out


def call(entry, A, B, C):
    if entry.startswith("gemm_"):
        return getattr(gemmkit, entry)("N", "N", "F", M, N, K, 1.0, A, K, 0, B, N, 0, 0.0, C, N, [0])
    return getattr(gemmkit, entry)("N", "N", M, N, K, 1.0, A, K, B, N, 0.0, C, N)


for entry, dtypes in ENTRIES.items():
    vals = {r: rng.integers(0, 4, SHAPES[r]) for r in "ABC"}
    ref = vals["A"] @ vals["B"]
    for ri, role in enumerate("ABC"):
        for desc, obj, view in containers(vals[role], dtypes[ri]):
            ops = {r: vals[r].astype(dtypes[i]) for i, r in enumerate("ABC")}
            ops[role] = obj
            print(f"CASE {entry} {role} {desc}", flush=True)
            try:
                call(entry, ops["A"], ops["B"], ops["C"])
            except (TypeError, ValueError) as e:
                print(f"REFUSED {type(e).__name__} {e}", flush=True)
                continue
            c = view if role == "C" else ops["C"]
            got = np.asarray(c, np.float64).reshape(M, N)
            print("OK" if np.array_equal(got, ref) else f"WRONG {got.tolist()}", flush=True)

# the other views of a buffer: a stack (gemm_batch) and flat spans (per_token_scale_int32)
a2 = ((ctypes.c_float * K) * M)()
np.ctypeslib.as_array(a2)[...] = 1
for desc, A in (("ctypes 2-D float32", a2), ("ctypes 1-D float32", (ctypes.c_float * (M * K))())):
    print(f"CASE gemm_batch A {desc}", flush=True)
    C = np.zeros((M, N), np.float32)
    try:
        _core.gemm_batch("N", "N", 1.0, A, np.ones((K, N), np.float32), 0.0, C)
    except (TypeError, ValueError) as e:
        print(f"REFUSED {type(e).__name__} {e}", flush=True)
    else:
        print("OK" if np.array_equal(C, np.full((M, N), K)) else f"WRONG {C.tolist()}", flush=True)
scales = (ctypes.c_float * N)(*([0.5] * N))
print("CASE per_token_scale_int32 deq_scale ctypes 1-D float32", flush=True)
C = np.zeros((M, N), np.float32)
_core.per_token_scale_int32("float32", np.full((M, N), 4, np.int32), scales, (ctypes.c_float * M)(*([1.0] * M)),
                            None, C)
print("OK" if np.array_equal(C, np.full((M, N), 2.0)) else f"WRONG {C.tolist()}", flush=True)
print("DONE", flush=True)
"""


def test_buffers_without_strides(tmp_path):
    """ctypes arrays export no strides (NULL even when asked for them), ctypes scalars no shape either: read as
    C-contiguous, as NumPy reads them, or refused with an exception naming the argument, never a crash. Run in
    a subprocess, so that a crash names the case it happened in."""
    r = subprocess.run([sys.executable, "-c", _FOREIGN_BUFFERS_SCRIPT], capture_output=True, text=True, timeout=120,
                       cwd=tmp_path)
    lines = r.stdout.splitlines()
    cases = [l for l in lines if l.startswith("CASE")]
    assert r.returncode == 0 and lines[-1:] == ["DONE"], \
        f"crashed (status {r.returncode}) in {cases[-1] if cases else '?'}: {r.stderr[-2000:]}"
    results = {}
    for case, result in zip(lines[0::2], lines[1::2]):
        assert case.startswith("CASE"), (case, result)
        results[case[5:]] = result
    wrong = {c: v for c, v in results.items() if v.startswith("WRONG")}
    assert not wrong, wrong
    refused = {c: v for c, v in results.items() if v.startswith("REFUSED")}
    for case, v in refused.items():
        entry, role = case.split()[:2]
        assert f"{role} " in v.split(" ", 2)[2] or v.split(" ", 2)[2].startswith(role), (case, v)  # names it
        assert v.startswith("REFUSED TypeError") or "dimension" in v or "-D" in v, (case, v)
    # each entry takes the ctypes arrays of its own types, 1-D and 2-D, as A, B and C
    own = {"sgemm": ("float32",) * 3, "dgemm": ("float64",) * 3, "gemm_u8s8s32": ("uint8", "int8", "int32"),
           "gemm_s8s8s32": ("int8", "int8", "int32")}
    for entry, types in own.items():
        for role, t in zip("ABC", types):
            for nd in ("1-D", "2-D"):
                assert results[f"{entry} {role} ctypes {nd} {t}"] == "OK", (entry, role, nd)
    assert results["sgemm C memoryview of ctypes"] == "OK"
    assert results["gemm_batch A ctypes 2-D float32"] == "OK"
    assert results["per_token_scale_int32 deq_scale ctypes 1-D float32"] == "OK"
    assert results["sgemm C array.array f"] == "OK" and results["gemm_u8s8s32 A bytearray"] == "OK"


def test_buffer_protocol_errors_are_chained():
    """What an exporter's buffer protocol raises stays the cause of the TypeError naming the argument."""
    released = memoryview(bytearray(16))
    released.release()
    C = np.zeros((2, 2), np.float32)
    with pytest.raises(TypeError, match="A must be") as info:
        gemmkit.sgemm("N", "N", 2, 2, 2, 1.0, released, 2, np.ones((2, 2), np.float32), 2, 0.0, C, 2)
    assert isinstance(info.value.__cause__, ValueError), repr(info.value.__cause__)
    with pytest.raises(TypeError) as info:
        gemmkit._core.gemm_batch("N", "N", 1.0, released, np.ones((2, 2), np.float32), 0.0, C)
    assert info.value.__cause__ is not None
    assert not C.any()
