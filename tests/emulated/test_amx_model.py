"""The AMX-BF16 part of bochs_cpu's tile-unit model checked on its own, without gemmkit: tdpbf16ps's decoding, its
arithmetic against a scalar reference written from the SDM's pseudo-code, and the CPUID bits the Emulator reports.

The arithmetic is checked twice: on AmxUnit directly (shape rules, rows past the configuration) and through a small
C function built with gcc's AMX intrinsics (ldtilecfg, tileloadd, tdpbf16ps, tilestored, tilerelease) run on the
emulated Sapphire Rapids. Skipped like test_isa_lane.py where bochscpu-python is missing (unless GEMMKIT_ISA_LANE=1);
the compiled case is skipped where the compiler has no -mamx-bf16.
"""
import ctypes
import math
import os
import shutil
import struct
import subprocess
import tempfile

import numpy as np
import pytest

from lane_guard import require_lane

require_lane()
import bochs_cpu  # noqa: E402

FLT_MIN = 2.0 ** -126

_KERNEL_C = r"""
#include <immintrin.h>
#include <stdint.h>

struct tilecfg { uint8_t palette, start_row, reserved0[14]; uint16_t colsb[16]; uint8_t rows[16]; };

/* C (rows x cols float32) += A (rows x pairs bfloat16 pairs) . B (pairs x cols bfloat16 pairs); each buffer is
   16 rows of 64 bytes, the tile shapes come from the configuration only. */
void dpbf16ps(float *c, const void *a, const void *b, int rows, int pairs, int cols) {
    struct tilecfg cfg = {0};
    cfg.palette = 1;
    cfg.rows[0] = (uint8_t)rows;  cfg.colsb[0] = (uint16_t)(4 * cols);
    cfg.rows[1] = (uint8_t)rows;  cfg.colsb[1] = (uint16_t)(4 * pairs);
    cfg.rows[2] = (uint8_t)pairs; cfg.colsb[2] = (uint16_t)(4 * cols);
    _tile_loadconfig(&cfg);
    _tile_loadd(0, c, 64);
    _tile_loadd(1, a, 64);
    _tile_loadd(2, b, 64);
    _tile_dpbf16ps(0, 1, 2);
    _tile_stored(0, c, 64);
    _tile_release();
}
"""

_CPUID_C = r"""
#include <cpuid.h>

/* bit 0: AMX-BF16, 1: AMX-TILE, 2: AMX-INT8 (CPUID.(7,0).EDX 22, 24, 25); bit 3: AVX512_BF16 (CPUID.(7,1).EAX 5) */
int amx_feature_bits(void) {
    unsigned a, b, c, d, r = 0;
    __cpuid_count(7, 0, a, b, c, d);
    r |= ((d >> 22) & 1) | ((d >> 24) & 1) << 1 | ((d >> 25) & 1) << 2;
    __cpuid_count(7, 1, a, b, c, d);
    r |= ((a >> 5) & 1) << 3;
    return (int)r;
}
"""


def _build(name, source, flags, tmp):
    cc = os.environ.get("CC") or "gcc"
    if shutil.which(cc) is None:
        return None, f"no C compiler ({cc})"
    src, so = os.path.join(tmp, name + ".c"), os.path.join(tmp, name + ".so")
    with open(src, "w") as f:
        f.write(source)
    r = subprocess.run([cc, "-O2", "-shared", "-fPIC", *flags, "-o", so, src], capture_output=True, text=True)
    if r.returncode != 0:
        return None, f"{cc} {' '.join(flags)} failed: {r.stderr.strip()[:300]}"
    return bochs_cpu.load_private_copy(so), None


@pytest.fixture(scope="module")
def built():
    tmp = tempfile.mkdtemp(prefix="gemmkit-amx-model-")
    kernel = _build("amx_bf16_kernel", _KERNEL_C, ["-mamx-tile", "-mamx-bf16", "-mavx512f"], tmp)
    cpuid = _build("amx_cpuid", _CPUID_C, [], tmp)
    yield {"kernel": kernel, "cpuid": cpuid}
    shutil.rmtree(tmp, ignore_errors=True)


@pytest.fixture(scope="module")
def emu():
    return bochs_cpu.shared_emulator("sapphire_rapids", amx=True)


def _addr(fn):
    return ctypes.cast(fn, ctypes.c_void_p).value


# ---- the reference: the SDM's TDPBF16PS pseudo-code, element by element -------------------------------------

def _bf16_value(bits):
    """A bfloat16 bit pattern's value, a denormal read as a zero of its sign (DAZ)."""
    if bits & 0x7F80 == 0:
        return -0.0 if bits & 0x8000 else 0.0
    return struct.unpack("<f", struct.pack("<I", bits << 16))[0]


def _f32(x):
    """x rounded to float32, nearest even, a result below FLT_MIN flushed to a zero of its sign (FTZ). x is the
    exact value, or one rounded to double so close to it that the float32 rounding cannot differ."""
    if math.isnan(x) or math.isinf(x):
        return x
    try:
        r = struct.unpack("<f", struct.pack("<f", x))[0]
    except OverflowError:
        return math.copysign(math.inf, x)
    return math.copysign(0.0, r) if abs(r) < FLT_MIN else r


def _reference(c, a, b, rows, pairs, cols):
    """c (float32 rows x cols) after tdpbf16ps with a (uint16 rows x 2 pairs) and b (uint16 pairs x 2 cols): per
    row, even and odd partial sums from 0 by fused product-adds over k, their sum, then dst plus that sum; DAZ and
    FTZ at every step. Products of two bfloat16 are exact in double."""
    out = np.array(c, np.float32)
    for m in range(rows):
        for n in range(cols):
            part = [0.0, 0.0]
            for k in range(pairs):
                for lane in (0, 1):
                    p = _bf16_value(int(a[m, 2 * k + lane])) * _bf16_value(int(b[k, 2 * n + lane]))
                    part[lane] = _f32(part[lane] + p)
            dst = float(out[m, n])
            dst = math.copysign(0.0, dst) if abs(dst) < FLT_MIN else dst  # dst is an input of the last add: DAZ
            out[m, n] = _f32(dst + _f32(part[0] + part[1]))
    return out


def _same(got, want):
    """Bit for bit (zeros' signs included), NaN against NaN whatever its payload."""
    got, want = np.asarray(got, np.float32), np.asarray(want, np.float32)
    assert np.array_equal(np.isnan(got), np.isnan(want)), (got, want)
    ok = ~np.isnan(want)
    bad = np.argwhere(ok & (got.view(np.uint32) != want.view(np.uint32)))
    assert bad.size == 0, [(tuple(i), float(got[tuple(i)]), float(want[tuple(i)])) for i in bad[:5]]


def _bf16(x):
    """float values to bfloat16 bit patterns (truncated: any bfloat16 will do as an input)."""
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


def _random_case(rng, rows=16, pairs=16, cols=16, exp_lo=-8, exp_hi=8):
    a = _bf16(rng.standard_normal((rows, 2 * pairs)) * 2.0 ** rng.integers(exp_lo, exp_hi, (rows, 2 * pairs)))
    b = _bf16(rng.standard_normal((pairs, 2 * cols)) * 2.0 ** rng.integers(exp_lo, exp_hi, (pairs, 2 * cols)))
    c = (rng.standard_normal((rows, cols)) * 2.0 ** rng.integers(exp_lo, exp_hi, (rows, cols))).astype(np.float32)
    return c, a, b


# ---- AmxUnit on its own -------------------------------------------------------------------------------------

def _unit_run(c, a, b, rows, pairs, cols, garbage=None):
    """tdpbf16ps tmm0, tmm1, tmm2 on an AmxUnit configured rows x cols += rows x pairs . pairs x cols; the bytes
    outside the configured shapes hold garbage, which must not count. Returns the whole dst tile."""
    unit = bochs_cpu.AmxUnit()
    unit.palette = 1
    unit.rows = [rows, rows, pairs, 0, 0, 0, 0, 0]
    unit.colsb = [4 * cols, 4 * pairs, 4 * cols, 0, 0, 0, 0, 0]
    if garbage is not None:
        unit.tiles[:] = garbage
    unit.tiles[0, :rows, :4 * cols] = np.ascontiguousarray(c, np.float32).view(np.uint8)
    unit.tiles[1, :rows, :4 * pairs] = np.ascontiguousarray(a, np.uint16).view(np.uint8)
    unit.tiles[2, :pairs, :4 * cols] = np.ascontiguousarray(b, np.uint16).view(np.uint8)
    unit.execute(None, "tdpbf16ps", {"reg": 0, "rm": 1, "vvvv": 2}, 0)
    return unit.tiles[0]


def test_unit_random_and_partial_shapes():
    rng = np.random.default_rng(1)
    for rows, pairs, cols in [(16, 16, 16), (5, 3, 7), (1, 1, 1), (16, 1, 9), (2, 16, 16)]:
        c, a, b = _random_case(rng, rows, pairs, cols)
        garbage = rng.integers(0, 256, (8, 16, 64), dtype=np.uint8)
        tile = _unit_run(c, a, b, rows, pairs, cols, garbage)
        _same(tile[:rows, :4 * cols].copy().view(np.float32), _reference(c, a, b, rows, pairs, cols))
        assert not tile[rows:].any() and not tile[:, 4 * cols:].any(), "dst past its configuration not zeroed"


def test_unit_shape_rules():
    unit = bochs_cpu.AmxUnit()
    unit.palette = 1
    ok = {"reg": 0, "rm": 1, "vvvv": 2}
    for rows, colsb, what in [([4, 4, 3], [16, 12, 16], "fits"), ([4, 5, 3], [16, 12, 16], "dst.rows != a.rows"),
                              ([4, 4, 2], [16, 12, 16], "a.colsb/4 != b.rows"),
                              ([4, 4, 3], [16, 12, 20], "dst.colsb != b.colsb"),
                              ([4, 4, 3], [18, 12, 18], "dst.colsb % 4"), ([4, 4, 3], [16, 14, 16], "a.colsb % 4")]:
        unit.rows, unit.colsb = rows + [0] * 5, colsb + [0] * 5
        if what == "fits":
            unit.execute(None, "tdpbf16ps", ok, 0)
            continue
        with pytest.raises(bochs_cpu.EmulationError, match="#UD"):
            unit.execute(None, "tdpbf16ps", ok, 0)
    unit.rows, unit.colsb = [4, 4, 3] + [0] * 5, [16, 12, 16] + [0] * 5
    for f in ({"reg": 0, "rm": 0, "vvvv": 2}, {"reg": 1, "rm": 1, "vvvv": 2}, {"reg": 0, "rm": 1, "vvvv": 0}):
        with pytest.raises(bochs_cpu.EmulationError, match="distinct"):
            unit.execute(None, "tdpbf16ps", f, 0)
    with pytest.raises(bochs_cpu.EmulationError, match="not configured"):
        unit.execute(None, "tdpbf16ps", {"reg": 0, "rm": 1, "vvvv": 3}, 0)


def test_unit_sdm_order_and_fused_rounding():
    """Known answers that tell the SDM's order from a single running sum seeded with dst, and one rounding per
    product-add from rounding the product first."""
    one, e = _bf16([1.0])[0], _bf16([2.0 ** -12])[0]            # e * e = 2^-24: half an ulp of 1.0
    # Even lanes: 1*1, then 0; odd lanes: e*e twice. The SDM: 1 + (2^-24 + 2^-24) = 1 + 2^-23. One running sum
    # would lose each 2^-24 to the even tie at 1.0.
    a = np.array([[one, e, 0, e]], np.uint16)
    b = np.array([[one, e], [0, e]], np.uint16)
    got = _unit_run(np.zeros((1, 1), np.float32), a, b, 1, 2, 1)[:1, :4].copy().view(np.float32)
    _same(got, [[1.0 + 2.0 ** -23]])
    # dst added last: 1.0 + (2^-24 + 2^-24) = 1 + 2^-23, where dst first would give 1.0.
    a = np.array([[e, e, e, e]], np.uint16)
    b = np.array([[e, 0], [e, 0]], np.uint16)
    got = _unit_run(np.ones((1, 1), np.float32), a, b, 1, 2, 1)[:1, :4].copy().view(np.float32)
    _same(got, [[1.0 + 2.0 ** -23]])
    # Even lanes: 2^-126, 2^-149, then 2^-150 exactly half an ulp: fused, the tie goes to the even 2^-126 + 2^-148;
    # a product rounded to float32 first would be 0 (the tie at 0), leaving 2^-126 + 2^-149.
    x, y, z = (_bf16([2.0 ** s])[0] for s in (-63, -75, -74))
    a = np.array([[x, 0, y, 0, y, 0]], np.uint16)
    b = np.array([[x, 0], [z, 0], [y, 0]], np.uint16)               # x*x = 2^-126, y*z = 2^-149, y*y = 2^-150
    assert _bf16_value(int(y)) ** 2 == 2.0 ** -150
    got = _unit_run(np.zeros((1, 1), np.float32), a, b, 1, 3, 1)[:1, :4].copy().view(np.float32)
    _same(got, [[2.0 ** -126 + 2.0 ** -148]])


# ---- decoding ---------------------------------------------------------------------------------------------------

def test_decode_tdpbf16ps():
    """The bytes binutils 2.40 assembles for `tdpbf16ps %tmm2,%tmm1,%tmm0` (AT&T: src2, src1, dst) and for
    `%tmm7,%tmm6,%tmm5`: VEX.128.F3.0F38.W0 5C /r, reg = dst, r/m = src1, vvvv = src2, as tdpbusd's."""
    for code, (dst, a, b) in [(bytes.fromhex("c4e26a5cc1"), (0, 1, 2)), (bytes.fromhex("c4e2425cee"), (5, 6, 7))]:
        name, n, f = bochs_cpu.decode_amx(code)
        assert (name, n, f["reg"], f["rm"], f["vvvv"]) == ("tdpbf16ps", 5, dst, a, b)
    name, n, f = bochs_cpu.decode_amx(bytes.fromhex("c4e2695ec1"))  # tdpbusd %tmm2,%tmm1,%tmm0
    assert (name, f["reg"], f["rm"], f["vvvv"]) == ("tdpbusd", 0, 1, 2)
    assert bochs_cpu.decode_amx(bytes.fromhex("c4e26a5c01")) is None    # a memory form: no such instruction
    assert bochs_cpu.decode_amx(bytes.fromhex("c4e26b5cc1")) is None    # pp = F2: not tdpbf16ps
    assert bochs_cpu.decode_amx(bytes.fromhex("c4e2ea5cc1")) is None    # W1
    assert bochs_cpu.decode_amx(bytes.fromhex("c4e26e5cc1")) is None    # VEX.L = 1


def test_decode_matches_the_assembler(tmp_path):
    """Every register triple as the installed GNU assembler encodes it, where there is one that knows AMX-BF16."""
    if shutil.which("as") is None or shutil.which("objcopy") is None:
        pytest.skip("no GNU as / objcopy")
    triples = [(d, a, b) for d in range(8) for a in range(8) for b in range(8) if len({d, a, b}) == 3]
    src = tmp_path / "t.s"
    src.write_text("".join(f"tdpbf16ps %tmm{b}, %tmm{a}, %tmm{d}\n" for d, a, b in triples))
    r = subprocess.run(["as", "-o", str(tmp_path / "t.o"), str(src)], capture_output=True, text=True)
    if r.returncode != 0:
        pytest.skip(f"as does not know tdpbf16ps: {r.stderr.strip()[:200]}")
    subprocess.run(["objcopy", "-O", "binary", "-j", ".text", str(tmp_path / "t.o"), str(tmp_path / "t.bin")],
                   check=True)
    code = (tmp_path / "t.bin").read_bytes()
    assert len(code) == 5 * len(triples)
    for i, (d, a, b) in enumerate(triples):
        name, n, f = bochs_cpu.decode_amx(code[5 * i:5 * i + 5])
        assert (name, n, f["reg"], f["rm"], f["vvvv"]) == ("tdpbf16ps", 5, d, a, b)


# ---- CPUID ------------------------------------------------------------------------------------------------------

def test_cpuid_bits(emu, built):
    lib, why = built["cpuid"]
    if lib is None:
        pytest.skip(why)
    addr = _addr(lib.amx_feature_bits)
    # The feature-detection call sees AMX-BF16 with AMX-TILE / AMX-INT8; AVX512_BF16 is Bochs's own.
    assert emu.detect_cpu_features(addr) == 0b1111
    # Any other call sees Bochs's CPUID as it is: no AMX bits.
    assert emu.call(addr) == 0b1000


# ---- a compiled tdpbf16ps kernel on the emulated CPU ------------------------------------------------------------

def _run_kernel(emu, built, c, a, b, rows, pairs, cols, rng):
    lib, why = built["kernel"]
    if lib is None:
        pytest.skip(why)
    # 16 x 64-byte buffers; what lies outside the configured shapes is garbage the tile loads must not take in
    # and the tile store must leave alone.
    C = rng.integers(0, 2**32, (16, 16), dtype=np.uint32).view(np.float32)
    A = rng.integers(0, 2**16, (16, 32), dtype=np.uint16)
    B = rng.integers(0, 2**16, (16, 32), dtype=np.uint16)
    C[:rows, :cols], A[:rows, :2 * pairs], B[:pairs, :2 * cols] = c, a, b
    before = C.copy()
    executed = emu.amx.executed.get("tdpbf16ps", 0)
    emu.call(_addr(lib.dpbf16ps), (C.ctypes.data, A.ctypes.data, B.ctypes.data, rows, pairs, cols), ret="void")
    assert emu.amx.executed.get("tdpbf16ps", 0) == executed + 1, "the tile product did not run in the model"
    outside = np.ones(C.shape, bool)
    outside[:rows, :cols] = False
    assert np.array_equal(C.view(np.uint32)[outside], before.view(np.uint32)[outside])
    return C[:rows, :cols]


def test_emulated_random(emu, built):
    rng = np.random.default_rng(2)
    for rows, pairs, cols, lo, hi in [(16, 16, 16, -8, 8), (5, 3, 7, -8, 8), (16, 16, 16, -70, -56)]:
        # The last: products about 2^-126 and below, where partial sums flush and FTZ decides results.
        c, a, b = _random_case(rng, rows, pairs, cols, lo, hi)
        _same(_run_kernel(emu, built, c, a, b, rows, pairs, cols, rng), _reference(c, a, b, rows, pairs, cols))


def _with_denormals(rng, x, share):
    """x (bfloat16 bits) with about `share` of it replaced by denormals (exponent 0, mantissa not 0, either sign),
    and x with those replaced by zeros of their sign."""
    den = rng.random(x.shape) < share
    x = x.copy()
    x[den] = rng.integers(1, 0x80, den.sum()) | rng.integers(0, 2, den.sum()) << 15
    return x, np.where(den, x & 0x8000, x).astype(np.uint16)


def test_emulated_denormal_inputs_are_zero(emu, built):
    """bfloat16 denormals in A, then in B, against the other operand's values large enough (about 2^120) that
    reading them as their values would change the results."""
    rng = np.random.default_rng(3)
    rows, pairs, cols = 16, 16, 16
    c = rng.standard_normal((rows, cols)).astype(np.float32)
    small, large = (rng.standard_normal((16, 32)) * 2.0 ** s for s in (-120, 120))
    a_den, a_zeroed = _with_denormals(rng, _bf16(small), 0.3)
    b_den, b_zeroed = _with_denormals(rng, _bf16(small), 0.3)
    for a, a0, b, b0 in [(a_den, a_zeroed, _bf16(large), _bf16(large)), (_bf16(large), _bf16(large), b_den, b_zeroed)]:
        want = _reference(c, a, b, rows, pairs, cols)
        _same(want, _reference(c, a0, b0, rows, pairs, cols))
        _same(_run_kernel(emu, built, c, a, b, rows, pairs, cols, rng), want)


def test_emulated_results_below_flt_min_flush(emu, built):
    """Partial sums and results under FLT_MIN are zeros of their sign; a float32 denormal in dst reads as zero."""
    rng = np.random.default_rng(4)
    rows, pairs, cols = 4, 2, 3
    t, h = _bf16([2.0 ** -63])[0], _bf16([1.5 * 2.0 ** -63])[0]
    neg = np.uint16(0x8000)
    a = np.zeros((rows, 2 * pairs), np.uint16)
    b = np.zeros((pairs, 2 * cols), np.uint16)
    c = np.zeros((rows, cols), np.float32)
    # Row 0, column 0: products 2^-140 (denormal in float32): flushed at each step, the result 0.
    a[0, 0], b[0, 0] = _bf16([2.0 ** -70])[0], _bf16([2.0 ** -70])[0]
    # Row 1, column 1: 1.5 * 2^-126 - 2^-126 in the even lanes = 2^-127: flushed, +0.
    a[1, 0], b[0, 2], a[1, 2], b[1, 2] = h, t, t, t | neg
    # Row 2, column 2: dst -1.5 * 2^-126 plus a pair sum of 2^-126 = -2^-127: flushed, keeping its sign.
    a[2, 0], b[0, 4] = t, t
    c[2, 2] = -1.5 * FLT_MIN
    # Row 3, column 0: dst 2^-127 (a float32 denormal) plus a pair sum of 2^-126: 2^-126, dst read as 0.
    a[3, 2], b[1, 0] = t, t
    c[3, 0] = 2.0 ** -127
    got = _run_kernel(emu, built, c, a, b, rows, pairs, cols, rng)
    want = _reference(c, a, b, rows, pairs, cols)
    _same(got, want)
    assert got[0, 0] == 0 and got[1, 1] == 0 and not np.signbit(got[1, 1])
    assert got[2, 2] == 0 and np.signbit(got[2, 2])
    assert got[3, 0] == FLT_MIN


def test_emulated_nan_and_inf(emu, built):
    rng = np.random.default_rng(5)
    rows, pairs, cols = 8, 4, 8
    c, a, b = _random_case(rng, rows, pairs, cols)
    inf, nan = np.uint16(0x7F80), np.uint16(0x7FC0)
    a[0, 0] = inf                      # row 0: Inf times finite B values: +-Inf, and Inf - Inf where signs differ
    a[1, 3] = nan                      # row 1: NaN everywhere
    b[2, 4] = inf | 0x8000             # column 2: -Inf from pair 2's even lane
    a[3, :] = 0                        # row 3 times B's Inf: 0 * Inf = NaN in column 2 only
    c[4, 5] = np.inf                   # dst Inf stays Inf (or NaN where the row brings -Inf)
    got = _run_kernel(emu, built, c, a, b, rows, pairs, cols, rng)
    want = _reference(c, a, b, rows, pairs, cols)
    _same(got, want)
    assert np.isnan(got[1]).all() and np.isnan(got[3, 2]) and not np.isnan(got[3, [0, 1, 3]]).any()
    assert np.isinf(got[0]).any() and np.isinf(got[4, 5])
