"""The ISA lane: gemmkit's avx512, avx512_vnni (generic and zen4 configs), avx_vnni and avx512_amx paths executed
on an emulated CPU (Bochs Sapphire Rapids via bochscpu-python), checked against the native tests' own references.

Run by `bash .ci/isa-lane` (which sets GEMMKIT_ISA_LANE=1: missing tools then fail instead of skipping).
Every call runs the whole C path of a private copy of gemmkit/_core emulated, single-threaded: front
checks, driver, packers, microkernels, GEMV / tiny / few-row paths, epilogues, quantized add.

avx512_amx runs the int8 tests only (its float, 16-bit and quantized-add code is avx512_vnni's): its tile
instructions are executed by bochs_cpu.AmxUnit, a model of the AMX unit after the Intel SDM, since
bochscpu-python's Bochs has no AMX (see bochs_cpu's docstring); everything around them runs on Bochs.
"""
import numpy as np
import pytest

from lane_guard import require_lane

require_lane()
import bochs_cpu  # noqa: E402
from emulated_gemmkit import EmulatedGemmkit  # noqa: E402

import test_gemm_bf16_pairs as tbf  # noqa: E402
import test_gemm_float  # noqa: E402  (the native tests' references and checks, reused as they are)
import test_int8  # noqa: E402
import test_matmul_int as tmi  # noqa: E402
import test_quantized_add as tqa  # noqa: E402
from _support import _edge_sizes, normal_values  # noqa: E402

# (path, GEMMKIT_UARCH) -> what the emulated dispatcher must then run: every test's (`emu`, and `emu_int8` for
# the int8 tests), avx512_amx for its float kernels too (the broadcast-operand k loop). avx512_vnni's untuned config
# by name ("any"): on this Sapphire Rapids the path's own choice is xeon_amx, which is that config with avx512_amx's
# float kernels and bfloat16 widened past a few rows (test_avx512_vnni_on_this_cpu_is_xeon_amx).
PATHS = [("avx512", None), ("avx512_vnni", "any"), ("avx512_vnni", "zen4"), ("avx_vnni", None), ("avx512_amx", None)]
INT8_KERNEL = {"avx512": "avx512bw", "avx512_vnni": "avx512_vnni", "avx_vnni": "avx_vnni", "avx512_amx": "amx"}


def _ids(paths):
    return [p if u is None else f"{p}-{u}" for p, u in paths]


@pytest.fixture(scope="session")
def emulator():
    return EmulatedGemmkit("sapphire_rapids", amx=True)


def _select(emulator, path, uarch):
    emulator.set_arch(path, uarch)
    k = emulator.kernel_info("int8")
    assert INT8_KERNEL[path] in k["kernel"], k
    if path.startswith("avx512"):
        for op in ("sgemm", "dgemm", "cgemm", "zgemm"):
            kernel = emulator.kernel_info(op)["kernel"]
            assert "avx512" in kernel and kernel.endswith("_embed") == (path == "avx512_amx"), (path, op, kernel)
    if uarch:
        assert k["uarch"] == uarch, k
    return emulator


@pytest.fixture(params=PATHS, ids=_ids(PATHS))
def emu(request, emulator):
    return _select(emulator, *request.param)


@pytest.fixture(params=PATHS, ids=_ids(PATHS))
def emu_int8(request, emulator):
    """As `emu`, on the int8 paths; on avx512_amx the test must have run tile products (tdpbusd)."""
    path, uarch = request.param
    amx = emulator.emu.amx
    before = amx.executed.get("tdpbusd", 0)
    yield _select(emulator, path, uarch)
    if path == "avx512_amx":
        assert amx.executed.get("tdpbusd", 0) > before, "no tile product ran on avx512_amx"
    else:
        assert amx.executed.get("tdpbusd", 0) == before, f"{path} ran tile instructions"


def _check(status, what):
    assert status == 0, f"emulated {what} returned status {status}"


# ---- emulated stand-ins with the native functions' signatures ------------------------------------

def _gemm_fn(emu, kind):
    def fn(ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
        _check(emu.gemm(kind, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc), kind + "gemm")
        return C
    return fn


def _int8_fn(emu, kind):
    def fn(ta, tb, offsetc, M, N, K, alpha, A, lda, ao, B, ldb, bo, beta, C, ldc, co):
        co = np.ascontiguousarray(np.asarray(co).reshape(-1), dtype=np.int32)
        _check(emu.gemm_int8(kind, ta, tb, offsetc, M, N, K, alpha, A, lda, ao, B, ldb, bo, beta, C, ldc, co),
               f"gemm_{kind}s8s32")
        return C
    return fn


@pytest.fixture
def real_types(emu, monkeypatch):
    monkeypatch.setattr(test_gemm_float, "TYPES", {
        "sgemm": (np.float32, _gemm_fn(emu, "s")), "dgemm": (np.float64, _gemm_fn(emu, "d")),
        "cgemm": (np.complex64, _gemm_fn(emu, "c")), "zgemm": (np.complex128, _gemm_fn(emu, "z"))})
    return emu


@pytest.fixture
def int8_fns(emu_int8, monkeypatch):
    fns = {"u8": _int8_fn(emu_int8, "u8"), "s8": _int8_fn(emu_int8, "s8")}
    monkeypatch.setattr(test_int8, "_fn", lambda kind: fns[kind])
    return emu_int8


# ---- float products: sgemm, dgemm, cgemm, zgemm -----------------------------------------------------

@pytest.mark.parametrize("op", ["sgemm", "dgemm", "cgemm", "zgemm"])
def test_float_tile_edges(real_types, op):
    """M, N around MR / NR of the path's kernel (and the GEMV / tiny / few-row sizes among them), K
    around the vector width, every transpose (conjugate ones for complex), alpha / beta cycled."""
    emu = real_types
    base = {"sgemm": "sgemm", "dgemm": "dgemm", "cgemm": "cgemm", "zgemm": "zgemm"}[op]
    k = emu.kernel_info(base)
    sizes = _edge_sizes(k["MR"], k["NR"])
    ks = [1, 2, 3, 7, 8, 9, 16, 17, 33]
    trans = ["NN", "NT", "TN", "TT"] + (["CN", "NC", "RT", "CR"] if op in ("cgemm", "zgemm") else [])
    scal = [(1.0, 0.0), (1.0, 1.0), (-0.5, 2.25), (0.5 - 0.75j, 1j)] if op[0] in "cz" \
        else [(1.0, 0.0), (1.0, 1.0), (-0.5, 2.25), (2.0, -1.0)]
    rng = np.random.default_rng(sum(map(ord, op)))
    i = 0
    for M in sizes:
        for N in sizes:
            ta, tb = trans[i % len(trans)]
            alpha, beta = scal[i % len(scal)]
            test_gemm_float.run_case(rng, op, ta, tb, M, N, ks[i % len(ks)], alpha, beta)
            i += 1


@pytest.mark.parametrize("op", ["sgemm", "dgemm", "cgemm", "zgemm"])
def test_float_gemv_tiny_few_rows_and_k_blocks(real_types, op):
    """One or few rows / columns (GEMV and few-row paths), tiny products, K across the KC block, padded
    leading dimensions and 1-D layouts (writes outside C are caught)."""
    rng = np.random.default_rng(7 + len(op))
    trans = ["NN", "NT", "TN", "TT"]
    cases = [(1, 67, 300), (1, 1, 1000), (2, 130, 41), (3, 33, 5), (4, 65, 64), (5, 17, 129),
             (67, 1, 300), (130, 2, 41), (33, 3, 5), (8, 8, 8), (2, 2, 2), (3, 5, 7), (13, 40, 700)]
    for i, (M, N, K) in enumerate(cases):
        ta, tb = trans[i % 4]
        test_gemm_float.run_case(rng, op, ta, tb, M, N, K, 1.0 if i % 3 else -1.5, 0.0 if i % 2 else 0.5)
        test_gemm_float.run_case(rng, op, tb, ta, M, N, K, 0.5, 1.0, pads=(3, 1, 2), layouts=("1d", "2d", "1d"))
    # C never read when beta = 0 (NaN there must not leak)
    test_gemm_float.run_case(rng, op, "N", "N", 13, 37, 9, 1.0, 0.0, c_nan=True)


# ---- NumPy's integer matmul (gemmkit_gemm_int_batch): the 8-bit types on each path's int8 kernel -------------

INT_TYPES = {"bool": 0, "int8": 1, "uint8": 2, "int16": 3, "uint16": 4, "int32": 5, "uint32": 6, "int64": 7,
             "uint64": 8}


def _int_matmul_cases(emu, dtype, seed):
    rng = np.random.default_rng(seed)
    for M, N, K in ((5, 17, 9), (13, 20, 70), (4, 3, 130), (37, 45, 131)):  # the last past the tiny paths
        if dtype == "bool":
            a, b = rng.random((M, K)) < 0.2, rng.random((K, N)) < 0.2
        else:
            info = np.iinfo(dtype)
            a = rng.integers(info.min, info.max, (M, K), dtype=dtype, endpoint=True)
            b = rng.integers(info.min, info.max, (K, N), dtype=dtype, endpoint=True)
        c = np.zeros((M, N), dtype)
        _check(emu.gemm_int(INT_TYPES[dtype], "N", "T", M, N, K, 1, a, K, np.ascontiguousarray(b.T), K, 0, c, N),
               f"gemm_int_batch {dtype}")
        np.testing.assert_array_equal(c, np.matmul(a, b), err_msg=f"{dtype} {M}x{N}x{K}")


@pytest.mark.parametrize("dtype", ["int8", "uint8"])
def test_int_matmul_8bit_modular(emu_int8, dtype):
    """int8 / uint8 as np.matmul gives them, on the path's int8 kernel (tiles on avx512_amx)."""
    _int_matmul_cases(emu_int8, dtype, 7)


@pytest.mark.parametrize("dtype", ["int16", "int64", "bool"])
def test_int_matmul_wrap_and_bool(emu, dtype):
    _int_matmul_cases(emu, dtype, 8)


def test_bool_chunks(emu):
    """test_matmul_int's bool cases (words, chunks, early / late / no fill, both storage orders, beta) on the
    emulated path's bool kernels (AVX-512's on the AVX-512 paths)."""
    def fn(a, b, c0, beta):
        M, K = a.shape
        N = b.shape[1]
        ta, A = ("T", a.T) if not a.flags.c_contiguous else ("N", a)
        tb, B = ("T", b.T) if not b.flags.c_contiguous else ("N", b)
        c = c0.copy()
        _check(emu.gemm_int(INT_TYPES["bool"], ta, tb, M, N, K, 1, A, A.shape[1], B, B.shape[1], beta, c, N),
               "gemm_int_batch bool")
        return c
    tmi.check_bool_chunks(fn, np.random.default_rng(9))


# ---- int8: u8s8s32 / s8s8s32, every offsetc mode and zero points ---------------------------------------

@pytest.mark.parametrize("kind", ["u8", "s8"])
@pytest.mark.parametrize("trans", ["NN", "NT", "TN", "TT"])
def test_int8_tile_edges(int8_fns, kind, trans):
    """test_int8.test_kernel_edges on the emulated path: M, N around MR / NR, K around the k-group (2 or
    4) and the vector width, offsetc F/C/R (both cases), alpha / beta cycled, random zero points."""
    emu = int8_fns
    ta, tb = trans
    k = emu.kernel_info("int8")
    sizes = _edge_sizes(k["MR"], k["NR"])
    ks = [1, 2, 3, 4, 5, 7, 8, 9, 31, 64, 67]
    lo, hi = test_int8.A_RANGE[kind]
    rng = np.random.default_rng(len(trans) + ord(trans[0]) + ord(trans[1]) + ord(kind[0]))
    i = 0
    for M in sizes:
        for N in sizes:
            alpha, beta = test_int8.AB_CYCLE[i % len(test_int8.AB_CYCLE)]
            ao = int(rng.integers(lo, hi + 1))
            bo = int(rng.integers(-128, 128))
            test_int8.run_int8(kind, rng, ta, tb, "FfCcRr"[i % 6], M, N, ks[i % len(ks)], alpha, ao, bo, beta)
            i += 1


@pytest.mark.parametrize("kind", ["u8", "s8"])
@pytest.mark.parametrize("offsetc", list("FCR"))
def test_int8_zero_points_and_offsets(int8_fns, kind, offsetc):
    """Every extreme zero point pair (the VNNI epilogue's row / column sums of A and B), each offsetc
    mode, exact (alpha 1, beta 0 / 1) and rounded (other alpha / beta) epilogues, K past the k block."""
    emu = int8_fns
    k = emu.kernel_info("int8")
    M, N = k["MR"] + 1, k["NR"] + 1
    rng = np.random.default_rng(ord(kind[0]) * 3 + ord(offsetc))
    cases = [c for c in test_int8.ZERO_POINT_CASES if c[0] == kind]
    for i, (_, ao, bo) in enumerate(cases):
        K = [7, 19, 64, 300, k["KB"] + 5 if k["KB"] else 600][i % 5]
        alpha, beta = [(1.0, 0.0), (1.0, 1.0), (0.7, -0.3)][i % 3]
        ta, tb = ["NN", "TN", "NT", "TT"][i % 4]
        test_int8.run_int8(kind, rng, ta, tb, offsetc, M, N, K, alpha, ao, bo, beta)


@pytest.mark.parametrize("kind", ["u8", "s8"])
def test_int8_gemv_few_rows_and_layouts(int8_fns, kind):
    rng = np.random.default_rng(11 + ord(kind[0]))
    lo, hi = test_int8.A_RANGE[kind]
    cases = [(1, 67, 300), (1, 1, 1000), (2, 130, 41), (3, 33, 5), (4, 65, 64), (5, 17, 129),
             (67, 1, 300), (130, 2, 41), (33, 3, 5), (2, 2, 2), (13, 40, 700), (1, 300, 2049)]
    for i, (M, N, K) in enumerate(cases):
        for ta, tb in ["NN", "TN", "NT", "TT"]:
            test_int8.run_int8(kind, rng, ta, tb, "FCR"[i % 3], M, N, K, 1.0, lo + 3, -5, 1.0)
        test_int8.run_int8(kind, rng, "N", "T", "fcr"[i % 3], M, N, K, 2.33, hi - 1, 7, 1.01,
                           pads=(3, 5, 2), layouts=("1d", "2d", "1d"))


def test_int8_saturation_and_extremes(int8_fns):
    """Extreme data and offsets: the largest |sums| the kernels' int32 lanes and the epilogue handle."""
    rng = np.random.default_rng(3)
    for kind in ["u8", "s8"]:
        lo, hi = test_int8.A_RANGE[kind]
        for M, N, K in [(13, 33, 64), (12, 32, 1000)]:
            for av, ao, bv, bo in [(hi, lo, -128, 127), (lo, hi, 127, -128), (hi, 0, 127, 0)]:
                A0 = np.full((M, K), av, test_int8.A_DTYPE[kind])
                B0 = np.full((K, N), bv, np.int8)
                for offsetc in "FCR":
                    test_int8.run_int8(kind, rng, "N", "N", offsetc, M, N, K, 1.0, ao, bo, 1.0, A0=A0, B0=B0)


@pytest.mark.parametrize("kind", ["u8", "s8"])
def test_int8_tiles_and_k_groups(int8_fns, kind):
    """Several MR x NR tiles each way with partial ones (M, N not multiples of MR / NR), K around the k
    group (64 on avx512_amx: a last group part zero) and the k block, K = 0, every transpose and offsetc."""
    emu = int8_fns
    k = emu.kernel_info("int8")
    mr, nr, kg = k["MR"], k["NR"], k["k_group"]
    lo, hi = test_int8.A_RANGE[kind]
    rng = np.random.default_rng(29 + ord(kind[0]))
    ks = [0, 1, kg - 1, kg, kg + 1, 2 * kg - 3, 3 * kg + 5, (k["KB"] or 512) + kg + 3]
    shapes = [(2 * mr + 5, 3 * nr - 7), (mr + 3, 2 * nr), (3 * mr - 1, nr + 9), (5, 2 * nr + 3)]
    i = 0
    for K in ks:
        for M, N in shapes:
            ta, tb = ["NN", "NT", "TN", "TT"][i % 4]
            alpha, beta = test_int8.AB_CYCLE[i % len(test_int8.AB_CYCLE)]
            ao, bo = int(rng.integers(lo, hi + 1)), int(rng.integers(-128, 128))
            test_int8.run_int8(kind, rng, ta, tb, "FfCcRr"[i % 6], M, N, K, alpha, ao, bo, beta)
            i += 1


@pytest.mark.parametrize("out_type,out_name", [(1, "float32"), (2, "float16"), (3, "bfloat16")])
def test_int8_per_token_float_epilogue(emu_int8, out_type, out_name):
    """gemm_s8s8_per_token (the kernels' float epilogue): test_matmul_per_token's model, bit for bit, at
    tile edges and few rows, both transposes, with and without bias."""
    tpt = pytest.importorskip("test_matmul_per_token")
    emu = emu_int8
    k = emu.kernel_info("int8")
    sizes = [1, 2, 3, k["MR"] - 1, k["MR"] + 1, k["NR"] + 1]
    rng = np.random.default_rng(out_type)
    i = 0
    for M in sizes:
        for N in sizes:
            K = [1, 3, 4, 5, 9, 64, 67, 300][i % 8]
            ta, tb = ["NN", "NT", "TN", "TT"][i % 4]
            x, w, deq, pts, bias = tpt.random_case(rng, M, N, K)
            if i % 3 == 0:
                bias = None
            A = np.ascontiguousarray(x.T) if ta == "T" else x
            B = np.ascontiguousarray(w.T) if tb == "T" else w
            C = np.full((M, N), 0x7FFF if out_type > 1 else np.nan,
                        np.uint16 if out_type > 1 else np.float32)
            st = emu.gemm_s8s8_per_token(ta, tb, "R", out_type, 1, M, N, K, A, A.shape[1], 0, B, B.shape[1], 0,
                                         deq, pts, 0, bias, C, N, 0)
            _check(st, "gemm_s8s8_per_token")
            got = C.view(tpt.np_dtype(out_name)) if out_type > 1 else C
            tpt.assert_same_bits(got, tpt.model(x, w, deq, pts, out_name, bias=bias))
            i += 1


def test_int8_prepacked_weight(emu_int8):
    """gemmkit_s8s8_pack_weight (the path's own B packer, column sums included) and the _packed product,
    against test_matmul_per_token's model, K around the k group and k block, N around NR."""
    tpt = pytest.importorskip("test_matmul_per_token")
    emu = emu_int8
    k = emu.kernel_info("int8")
    rng = np.random.default_rng(42)
    for i, (M, N, K) in enumerate([(1, k["NR"] + 1, 5), (3, k["NR"], 64), (k["MR"] + 1, 2 * k["NR"] - 1, 67),
                                   (2, 7, 300), (k["MR"], 1, 1), (5, k["NR"] - 1, 1000)]):
        x, w, deq, pts, bias = tpt.random_case(rng, M, N, K)
        tb = "NT"[i % 2]
        B = np.ascontiguousarray(w.T) if tb == "T" else w
        size = emu.call_i("gemmkit_s8s8_packed_weight_size", N, K, ret="u64")
        assert 0 < size < 1 << 40, size
        packed = np.zeros(size, np.uint8)
        _check(emu.call_i("gemmkit_s8s8_pack_weight", tb, N, K, B.ctypes.data, B.shape[1], packed.ctypes.data,
                          size), "gemmkit_s8s8_pack_weight")
        C = np.full((M, N), np.nan, np.float32)
        _check(emu.call_i("gemmkit_gemm_s8s8_per_token_packed", "N", 1, 1, M, N, K, x.ctypes.data, K, 0,
                          packed.ctypes.data, size, deq.ctypes.data, pts.ctypes.data, 0, bias.ctypes.data,
                          C.ctypes.data, N, 0), "gemmkit_gemm_s8s8_per_token_packed")
        tpt.assert_same_bits(C, tpt.model(x, w, deq, pts, "float32", bias=bias))


# ---- 16-bit: float16 / bfloat16 on the sgemm kernels -----------------------------------------------------

@pytest.mark.parametrize("shape", [(7, 9, 5), (13, 33, 17), (1, 65, 40), (40, 1, 33), (61, 83, 200)])
def test_half_rounding_is_once(emu, shape):
    """test_gemm_half's rule: integer operands keep every float sum exact, so the result must equal the
    one rounding of the exact value, bit for bit (alpha powers of two reach overflow and subnormals)."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    M, N, K = shape
    rng = np.random.default_rng(M * N + K)
    for dtype, kind in [(np.dtype(np.float16), "h"), (np.dtype(ml_dtypes.bfloat16), "bf16")]:
        for ta, tb in (("N", "N"), ("T", "N"), ("N", "T"), ("T", "T")):
            A = rng.integers(-256, 257, size=(K, M) if ta == "T" else (M, K)).astype(dtype)
            B = rng.integers(-256, 257, size=(N, K) if tb == "T" else (K, N)).astype(dtype)
            exact = test_gemm_half_op(A, ta).astype(np.float64) @ test_gemm_half_op(B, tb).astype(np.float64)
            for alpha in (1.0, 2.0 ** -9, 2.0 ** -30, 2.0 ** -40):
                C = np.full((M, N), np.nan, dtype)
                _check(emu.gemm(kind, ta, tb, M, N, K, alpha, A, A.shape[1], B, B.shape[1], 0.0, C, N), kind)
                with np.errstate(over="ignore"):
                    want = (alpha * exact).astype(np.float32).astype(dtype)
                np.testing.assert_array_equal(C.view(np.uint16), want.view(np.uint16))
            C = rng.integers(-256, 257, size=(M, N)).astype(dtype)
            with np.errstate(over="ignore"):
                want = (exact - C.astype(np.float64)).astype(np.float32).astype(dtype)
            _check(emu.gemm(kind, ta, tb, M, N, K, 1.0, A, A.shape[1], B, B.shape[1], -1.0, C, N), kind)
            np.testing.assert_array_equal(C.view(np.uint16), want.view(np.uint16))
            if kind == "bf16":  # bfloat16 operands, float32 C: exact here
                C32 = rng.integers(-256, 257, size=(M, N)).astype(np.float32)
                want32 = (exact - C32.astype(np.float64)).astype(np.float32)
                _check(emu.gemm("bf16f32", ta, tb, M, N, K, 1.0, A, A.shape[1], B, B.shape[1], -1.0, C32, N),
                       "gemm_bf16bf16f32")
                np.testing.assert_array_equal(C32, want32)


def test_gemm_half_op(x, t):
    return x.T if t == "T" else x


test_gemm_half_op.__test__ = False  # a helper, not a test


# ---- bfloat16 on the pair kernels (AVX512_BF16's vdpbf16ps, AMX-BF16's tdpbf16ps) ---------------------------

# the bfloat16 kernel each path runs on the emulated CPU (it has AVX512_BF16, and AMX-BF16 where AMX is modelled):
# None = widened to float on the sgemm kernel (the paths without a bfloat16 unit)
BF16_KERNEL = {"avx512": None, "avx512_vnni": "ukernel_bf16_avx512_12x32", "avx_vnni": None,
               "avx512_amx": "ukernel_bf16_amx_32x32"}


@pytest.fixture
def emu_bf16(emu, request):
    """As `emu`, with the path's bfloat16 kernel checked; on avx512_amx the test must have run tdpbf16ps."""
    path = emu.get_arch()
    k = emu.kernel_info("bf16")
    want = BF16_KERNEL[path]
    assert (k["k_group"] == 2 and k["kernel"] == want) if want else k["k_group"] == 1, (path, k)
    amx = emu.emu.amx
    before = amx.executed.get("tdpbf16ps", 0)
    yield emu
    ran = amx.executed.get("tdpbf16ps", 0) > before
    assert ran == (path == "avx512_amx"), (path, "tdpbf16ps ran" if ran else "no tile product ran")


def _tuning_set(emu):
    """The emulated copy's tuning overrides (gemmkit_tuning_set), as _core.tuning_set answers: None when taken."""
    def set_param(arch, name, value):
        st = emu.call("gemmkit_tuning_set", "iid", emu.cstr(arch), emu.cstr(name), value)
        return None if st == 0 else f"status {st}"
    return set_param


@pytest.fixture
def emu_bf16_packed(emu_bf16, monkeypatch):
    """As emu_bf16, the emulated copy's tiny path and widening off (every size on the pair kernel), its overrides
    cleared after."""
    monkeypatch.setattr(tbf._core, "tuning_clear", lambda: emu_bf16.call_i("gemmkit_tuning_clear", ret="void"))
    monkeypatch.setattr(tbf._tuning_file, "load", lambda warn=False: emu_bf16.set_arch(emu_bf16.get_arch()))
    with tbf.on_pair_kernel(_tuning_set(emu_bf16), emu_bf16.get_arch()):
        yield emu_bf16


def test_bf16_tile_and_pair_edges(emu_bf16_packed):
    """M, N around the bfloat16 kernel's tile, K odd and even around its pairs and groups and across its k block,
    every transpose, padded leading dimensions, beta = 0 over a C of NaN, C's padding untouched."""
    emu = emu_bf16_packed
    tbf.check_tile_edges(_gemm_fn(emu, "bf16f32"), emu.kernel_info("bf16"), np.random.default_rng(57), 4)


def test_bf16_subnormals_nan_inf(emu_bf16_packed):
    """Subnormal bfloat16 inputs whose products are normal, which the instructions read as zero, give the exact
    path's sums (in the first k block, only in a later one, in B only); NaN and Inf propagate."""
    fn = _gemm_fn(emu_bf16_packed, "bf16f32")
    rng = np.random.default_rng(58)
    tbf.check_subnormals(fn, rng, emu_bf16_packed.kernel_info("bf16")["KC"])
    tbf.check_nan_inf(fn, rng)


def test_bf16_few_rows_and_tiny_products(emu_bf16):
    """The shapes that leave the pair kernels: few rows or columns (the 16-bit GEMV path, the operand read in place)
    and tiny products (widened whole onto the float tiny path)."""
    fn = _gemm_fn(emu_bf16, "bf16f32")
    rng = np.random.default_rng(59)
    for i, (M, N, K) in enumerate([(1, 67, 300), (3, 40, 33), (16, 70, 65), (67, 1, 300), (40, 2, 41), (7, 9, 5),
                                   (32, 32, 32), (20, 30, 64)]):
        ta, tb = ("NN", "NT", "TN", "TT")[i % 4]
        tbf.run_case(fn, rng, ta, tb, M, N, K, 1.0 if i % 2 else -0.5, 0.0 if i % 3 else 1.5, pad=(1, 2, 1),
                     c_nan=i % 3 != 0)


def test_bf16_pair_dots(emu_bf16):
    """x @ W^T with 3 to 16 rows of x: on avx512_vnni the pair kernel's own dot products (vdpbf16ps, x and W read
    as they lie), elsewhere the 16-bit GEMV path; tile, block, step and chunk edges and subnormals in W or x."""
    fn = _gemm_fn(emu_bf16, "bf16f32")
    rng = np.random.default_rng(60)
    tbf.check_pair_dots_edges(fn, rng, cases=16)
    tbf.check_pair_dots_subnormals(fn, rng)


def test_bf16_pair_rows(emu_bf16):
    """x @ W with 3 to 16 rows of x and a plain W: on avx512_vnni W's rows paired as read on vdpbf16ps, elsewhere the
    16-bit GEMV path; strip, tile, block and visit edges, subnormals in W or x."""
    fn = _gemm_fn(emu_bf16, "bf16f32")
    rng = np.random.default_rng(61)
    tbf.check_pair_rows_edges(fn, rng, cases=16)
    tbf.check_pair_rows_subnormals(fn, rng)


# ---- quantized add ----------------------------------------------------------------------------------------

QTYPES = [(np.uint8, 0), (np.int8, 1)]


def _qadd(emu, formula, a, sa, za, b, sb, zb, sc, zc, out_dtype, shape):
    out = np.zeros(shape, out_dtype)
    f32 = np.float32

    def qt(x, s, z):
        t = 0 if x.dtype == np.uint8 else 1
        view = np.broadcast_to(x, shape)
        strides = [st // x.itemsize for st in view.strides]
        return {"data": x, "type": t, "strides": strides, "scale": f32(s), "zero_point": np.array([z], x.dtype)}

    st = emu.quantized_add(formula, shape, qt(a, sa, za), qt(b, sb, zb), qt(out, sc, zc))
    _check(st, "quantized_add")
    return out


@pytest.mark.parametrize("formula", [0, 1], ids=["directml", "onnxruntime"])
def test_quantized_add_vector_edges(emu, formula):
    """Contiguous runs around the vector widths (16 / 32 / 64 bytes, unrolled), every input type pair,
    scalar-broadcast operands, against test_quantized_add's float32 models bit for bit."""
    rng = np.random.default_rng(5 + formula)
    model = tqa.model_directml if formula == 0 else tqa.model_onnxruntime
    lengths = sorted({1, 2, 3, 7, 8, 9, 15, 16, 17, 31, 32, 33, 47, 48, 49, 63, 64, 65, 95, 96, 97, 127, 128,
                      129, 191, 192, 193, 255, 256, 257, 511, 512, 513, 1000})
    i = 0
    for n in lengths:
        for (adt, _), (bdt, _) in [(x, y) for x in QTYPES for y in QTYPES]:
            odt = [np.uint8, np.int8][i % 2]
            a = tqa.random_q(rng, (n,), adt)
            b = tqa.random_q(rng, (n,) if i % 3 else (1,), bdt)
            sa, sb, sc = (tqa.random_scale(rng) for _ in range(3))
            za, zb, zc = tqa.random_zp(rng, adt), tqa.random_zp(rng, bdt), tqa.random_zp(rng, odt)
            got = _qadd(emu, formula, a, sa, za, b, sb, zb, sc, zc, odt, (n,))
            want = model(a, sa, za, b, sb, zb, sc, zc, odt)
            np.testing.assert_array_equal(got, want, err_msg=f"n={n} {adt} {bdt} -> {odt}")
            i += 1


@pytest.mark.parametrize("formula", [0, 1], ids=["directml", "onnxruntime"])
def test_quantized_add_broadcast_shapes(emu, formula):
    rng = np.random.default_rng(17 + formula)
    model = tqa.model_directml if formula == 0 else tqa.model_onnxruntime
    for i in range(60):
        a_shape, b_shape = tqa.random_broadcast_pair(rng, max_ndim=4)
        shape = np.broadcast_shapes(a_shape, b_shape)
        adt, bdt, odt = QTYPES[i % 2][0], QTYPES[(i // 2) % 2][0], QTYPES[(i // 4) % 2][0]
        a, b = tqa.random_q(rng, a_shape, adt), tqa.random_q(rng, b_shape, bdt)
        sa, sb, sc = (tqa.random_scale(rng) for _ in range(3))
        za, zb, zc = tqa.random_zp(rng, adt), tqa.random_zp(rng, bdt), tqa.random_zp(rng, odt)
        got = _qadd(emu, formula, a, sa, za, b, sb, zb, sc, zc, odt, tuple(shape))
        want = model(a, sa, za, b, sb, zb, sc, zc, odt)
        np.testing.assert_array_equal(got, np.broadcast_to(want, shape), err_msg=f"{a_shape} + {b_shape}")


@pytest.mark.parametrize("op", ["sgemm", "dgemm", "cgemm", "zgemm"])
def test_emulated_equals_native_where_the_host_has_the_path(emu, op):
    """Where this host runs the path natively with the same kernel (e.g. a Zen 4 for avx512 /
    avx512_vnni), the emulated results must be the native ones bit for bit (checks the harness; skipped on
    hosts without the path)."""
    import gemmkit
    path = emu.get_arch()
    if path not in gemmkit.available_archs():
        pytest.skip(f"this host does not run {path} natively")
    dtype = {"sgemm": np.float32, "dgemm": np.float64, "cgemm": np.complex64, "zgemm": np.complex128}[op]
    rng = np.random.default_rng(1)
    prev = gemmkit.get_num_threads()
    gemmkit.set_num_threads(1)
    try:
        with gemmkit.use_arch(path):
            cfg, mine = gemmkit.show_config(print_out=False), emu.kernel_info(op)
            if (cfg[op]["kernel"], cfg["uarch"]) != (mine["kernel"], mine["uarch"]):
                pytest.skip(f"native {path} runs {cfg[op]['kernel']} ({cfg['uarch']}) for {op}")
            for M, N, K in [(13, 33, 17), (1, 65, 40), (40, 2, 33), (25, 50, 100)]:
                A, B = (normal_values(rng, s, dtype) for s in ((M, K), (K, N)))
                C0 = normal_values(rng, (M, N), dtype)
                Cn, Ce = C0.copy(), C0.copy()
                getattr(gemmkit, op)("N", "N", M, N, K, 1.5, A, K, B, N, 0.5, Cn, N)
                _check(emu.gemm(op[0], "N", "N", M, N, K, 1.5, A, K, B, N, 0.5, Ce, N), op)
                assert np.array_equal(Ce.view(np.uint8), Cn.view(np.uint8)), (op, M, N, K)
    finally:
        gemmkit.set_num_threads(prev)


# ---- the lane itself ------------------------------------------------------------------------------------

def test_avx512_vnni_on_this_cpu_is_xeon_amx(emulator):
    emulator.set_arch("avx512_vnni", None)
    assert emulator.kernel_info("int8")["uarch"] == "xeon_amx"
    assert emulator.kernel_info("sgemm")["kernel"].endswith("_embed")


def test_lane_runs_emulated_not_native(emulator):
    """The emulated copy sees the emulated CPU's features (all four x86 feature bits, amx_int8 and the bfloat16
    ones: avx512_bf16 from Bochs, amx_bf16 from the model; the tile state permitted by the emulated arch_prctl),
    whatever the host."""
    assert emulator.cpu_features() & 0x70F == 0x70F
    assert emulator.emu.model == "sapphire_rapids"
    assert emulator.emu.syscalls.count(158) == 1  # ARCH_REQ_XCOMP_PERM, answered in the emulation


def test_amx_model_tdpbusd():
    """bochs_cpu.AmxUnit's tdpb*d against a direct sum of the SDM's definition: C[m][n] += sum over k and the
    4 bytes b of A[m][4k+b] * B[k][4n+b], int32 wrapping; rows past the configuration zeroed."""
    rng = np.random.default_rng(0)
    unit = bochs_cpu.AmxUnit()
    unit.palette, unit.rows, unit.colsb = 1, [12, 12, 7, 0, 0, 0, 0, 0], [40, 28, 40, 0, 0, 0, 0, 0]
    for name, sa, sb in [("tdpbusd", np.uint8, np.int8), ("tdpbssd", np.int8, np.int8),
                         ("tdpbsud", np.int8, np.uint8), ("tdpbuud", np.uint8, np.uint8)]:
        unit.tiles[:] = rng.integers(0, 256, unit.tiles.shape, dtype=np.uint8)
        C = unit.tiles[0, :12, :40].copy().view(np.int32).astype(np.int64)
        A = unit.tiles[1, :12, :28].view(sa).astype(np.int64)
        B = unit.tiles[2, :7, :40].view(sb).astype(np.int64)
        want = C.copy()
        for m in range(12):
            for n in range(10):
                want[m, n] += sum(A[m, 4 * kk + b] * B[kk, 4 * n + b] for kk in range(7) for b in range(4))
        want = ((want + 2**31) % 2**32 - 2**31).astype(np.int32)
        unit.execute(None, name, {"reg": 0, "rm": 1, "vvvv": 2}, 0)
        assert np.array_equal(unit.tiles[0, :12, :40].view(np.int32), want), name
        assert not unit.tiles[0, 12:].any() and not unit.tiles[0, :, 40:].any()
