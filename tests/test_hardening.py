"""Hostile-caller cases for every core entry point: argument conversion (sizes must be integers, scalars
must fit the routine's type), stride checks that cannot overflow, bounded workspaces, no global state
switched by queries, thread-count changes racing with calls. Each case failed before it was fixed."""
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import gemmkit

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
