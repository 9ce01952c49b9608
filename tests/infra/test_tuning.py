"""The analytical blocking model on recorded cache hierarchies, the tuning overrides' C entry, the tuning
file (refused for another CPU / version, hostile files rejected) and exact results under a tuning."""
import json
import os
import subprocess
import sys
import warnings

import numpy as np
import pytest

import gemmkit
from gemmkit import _core, _tune, _tuning_file

from conftest import AVAILABLE_ARCHS


def _h(l1, l1w, l2, l2w, l3, l3w, l3_cores, line=64, l2_cores=1):
    """A hierarchy as cache_hierarchy() gives it (sizes in bytes, L3 shared by l3_cores cores)."""
    return {"L1d": {"size": l1, "ways": l1w, "line": line, "sharing": 1},
            "L2": {"size": l2, "ways": l2w, "line": line, "sharing": l2_cores},
            "L3": {"size": l3, "ways": l3w, "line": line, "sharing": l3_cores}}


K, M = 1 << 10, 1 << 20
# Recorded hierarchies (vendors' optimization guides / lscpu): L1d, L2, L3 (one CCX / CCD / socket) and the
# cores sharing that L3.
ZEN2 = _h(32 * K, 8, 512 * K, 8, 16 * M, 16, 4)         # EPYC 7002: 16 MiB per 4-core CCX
ZEN3 = _h(32 * K, 8, 512 * K, 8, 32 * M, 16, 8)         # EPYC 7003: 32 MiB per 8-core CCD
ZEN4 = _h(32 * K, 8, 1 * M, 8, 32 * M, 16, 8)           # EPYC 9004
ZEN5 = _h(48 * K, 12, 1 * M, 16, 32 * M, 16, 8)         # EPYC 9005
SKYLAKE_SP = _h(32 * K, 8, 1 * M, 16, 28 * 1408 * K, 11, 28)   # 1.375 MiB of 11-way L3 per core
ICE_LAKE_SP = _h(48 * K, 12, 1280 * K, 20, 40 * 1536 * K, 12, 40)  # 1.5 MiB of 12-way L3 per core
SAPPHIRE_RAPIDS = _h(48 * K, 12, 2 * M, 16, 56 * 1920 * K, 15, 56)  # 1.875 MiB of 15-way L3 per core
NEOVERSE_N1 = _h(64 * K, 4, 1 * M, 8, 32 * M, 16, 64)   # Graviton2: 32 MiB system cache for 64 cores
NEOVERSE_V1 = _h(64 * K, 4, 1 * M, 8, 32 * M, 16, 64)   # Graviton3: the same sizes
APPLE_M1 = _h(128 * K, 8, 12 * M, 12, 0, 0, 1, line=128, l2_cores=4)  # Firestorm: 12 MiB L2 for 4 cores, no L3

# Expected blockings, derived by hand from the formulas of csrc/blocking_model.c (Low et al. 2016, with its
# three departures). Bytes per way: B1 = L1 / W1, B2 = L2 share / W2, B3 = L3 share / W3 (share: size / cores
# sharing it).
#   kc = floor((W1 - 1) / (1 + mr S_A / (nr S))) * B1 / (nr S), down to a multiple of 8, at least 2048 / S_A
#        (a real kernel reading nr S >= 128 bytes of B a k step, the AVX-512 tiles: at least 512)
#   mc = min(W2 - 1 - ceil(nr kc S / B2), floor(W2 / 4)) * B2 / (kc S_A), down to a multiple of mr
#   nc = max(W3 - 1 - ceil(mc kc S_A / B3), floor((W3 - 1) / 2)) * B3 (at most 4 MiB) / (kc S), down to nr
# (S_A = S for real kernels, 2 S for a native complex one whose kc and nc are then reported doubled / real).
#
# Zen 4, sgemm 12 x 32 (S 4): B1 = 4096, C_Br = floor(7 / (1 + 48/128)) = floor(5.09) = 5, 5*4096/128 = 160
#   < 2048/4 = 512: kc = 512; B2 = 131072, ceil(32*512*4 / 131072) = 1, C_Ac = min(6, 2) = 2, mc =
#   2*131072/2048 = 128 -> 120; L3 share 4 MiB, B3 = 262144, ceil(120*2048 / 262144) = 1, C_B3 = max(14, 7)
#   = 14, nc = 3670016/2048 = 1792.
# Zen 4, dgemm 12 x 16 (S 8): C_Br = floor(7 / 1.75) = 4, 4*4096/128 = 128 < 256, and nr S = 128: kc = 512;
#   ceil(16*512*8 / 131072) = 1, mc = 2*131072/4096 = 64 -> 60; ceil(60*4096 / 262144) = 1, C_B3 = 14, nc =
#   3670016/4096 = 896.
# Zen 5, sgemm 12 x 32: B1 = 4096, C_Br = floor(11 / 1.375) = 8, 8*4096/128 = 256 < 512: kc = 512; B2 =
#   65536, ceil(65536 / 65536) = 1, C_Ac = min(14, 4) = 4, mc = 4*65536/2048 = 128 -> 120; B3 = 262144,
#   ceil(120*2048 / 262144) = 1, C_B3 = 14, nc = 1792.
# Skylake-SP, sgemm 12 x 32: kc = 512 (160 from L1); B2 = 65536, C_Ac = min(14, 4), mc = 128 -> 120; B3 =
#   1441792/11 = 131072, ceil(120*2048 / 131072) = 2, C_B3 = max(11 - 1 - 2, 5) = 8, nc = 1048576/2048 = 512.
# Ice Lake SP, sgemm 12 x 32: kc = 512 (256 from L1); B2 = 1310720/20 = 65536, C_Ac = min(18, 5), mc =
#   5*65536/2048 = 160 -> 156; B3 = 1572864/12 = 131072, ceil(156*2048 / 131072) = 3, C_B3 = max(8, 5) = 8,
#   nc = 512.
# Sapphire Rapids, sgemm 12 x 32: kc = 512; B2 = 131072, ceil(65536 / 131072) = 1, C_Ac = min(14, 4), mc =
#   4*131072/2048 = 256 -> 252; B3 = 1966080/15 = 131072, ceil(252*2048 / 131072) = ceil(3.94) = 4, C_B3 =
#   max(10, 7) = 10, nc = 1310720/2048 = 640.
# Sapphire Rapids, dgemm 12 x 16 (S 8, nr S = 128): kc = 512; ceil(65536 / 131072) = 1, mc = 4*131072/4096 =
#   128 -> 120; ceil(120*4096 / 131072) = ceil(3.75) = 4, C_B3 = 10, nc = 1310720/4096 = 320.
# Zen 2 / Zen 3 (the same L1, L2 and a 4 MiB L3 share), sgemm 6 x 16 (S 4): C_Br = floor(7 / (1 + 24/64))
#   = 5, 5*4096/64 = 320 < 512: kc = 512; B2 = 65536, ceil(16*512*4 / 65536) = 1, C_Ac = min(6, 2), mc =
#   2*65536/2048 = 64 -> 60; B3 = 262144, ceil(60*2048 / 262144) = 1, C_B3 = 14, nc = 3670016/2048 = 1792.
# Zen 2, dgemm 6 x 8 (S 8): C_Br = floor(7 / 1.75) = 4, kc = 4*4096/64 = 256 (= 2048/8); mc = 2*65536/2048 =
#   64 -> 60; ceil(60*2048 / 262144) = 1, nc = 14*262144/2048 = 1792.
# Zen 2, native zgemm 3 x 4 (S 8, S_A 16): C_Br = floor(7 / (1 + 48/32)) = 2, 2*4096/32 = 256 complex (>=
#   2048/16 = 128) -> kc 512; mc = 2*65536/(256*16) = 32 -> 30; ceil(30*4096 / 262144) = 1, nc =
#   14*262144/2048 = 1792.
# Zen 2, native cgemm 3 x 8 (S 4, S_A 8): C_Br = floor(7 / (1 + 24/32)) = 4, 4*4096/32 = 512 complex (>= 256)
#   -> kc 1024; mc = 2*65536/(512*8) = 32 -> 30; ceil(30*4096 / 262144) = 1, nc = 14*262144/2048 = 1792.
# Neoverse N1 / V1, generic sgemm 4 x 16 (S 4): B1 = 16384, C_Br = floor(3 / 1.25) = 2, kc = 2*16384/64 =
#   512; B2 = 131072, C_Ac = min(6, 2), mc = 2*131072/2048 = 128; L3 share 512 KiB, B3 = 32768,
#   ceil(128*2048 / 32768) = 8, C_B3 = max(7, 7) = 7, nc = 229376/2048 = 112.
# Neoverse N1, generic dgemm 4 x 8 (S 8): C_Br = floor(3 / 1.5) = 2, kc = 2*16384/64 = 512; mc =
#   2*131072/4096 = 64; ceil(64*4096 / 32768) = 8, C_B3 = 7, nc = 229376/4096 = 56.
# Apple M1, generic sgemm 4 x 16 (line 128): B1 = 16384, C_Br = floor(7 / 1.25) = 5, kc = 5*16384/64 =
#   1280; L2 share 3 MiB, B2 = 262144, ceil(16*1280*4 / 262144) = 1, C_Ac = min(10, 3), mc = 3*262144/5120
#   = 153.6 -> 152; no L3: nc = the fallback given (2048).
MODEL_CASES = [
    ("zen4 sgemm", ZEN4, 12, 32, 4, False, (120, 512, 1792)),
    ("zen4 dgemm", ZEN4, 12, 16, 8, False, (60, 512, 896)),
    ("zen5 sgemm", ZEN5, 12, 32, 4, False, (120, 512, 1792)),
    ("skylake-sp sgemm", SKYLAKE_SP, 12, 32, 4, False, (120, 512, 512)),
    ("ice lake sgemm", ICE_LAKE_SP, 12, 32, 4, False, (156, 512, 512)),
    ("sapphire rapids sgemm", SAPPHIRE_RAPIDS, 12, 32, 4, False, (252, 512, 640)),
    ("sapphire rapids dgemm", SAPPHIRE_RAPIDS, 12, 16, 8, False, (120, 512, 320)),
    ("zen2 sgemm", ZEN2, 6, 16, 4, False, (60, 512, 1792)),
    ("zen3 sgemm", ZEN3, 6, 16, 4, False, (60, 512, 1792)),
    ("zen2 dgemm", ZEN2, 6, 8, 8, False, (60, 256, 1792)),
    ("zen2 zgemm native", ZEN2, 3, 4, 8, True, (30, 512, 1792)),
    ("zen2 cgemm native", ZEN2, 3, 8, 4, True, (30, 1024, 1792)),
    ("neoverse n1 sgemm", NEOVERSE_N1, 4, 16, 4, False, (128, 512, 112)),
    ("neoverse v1 sgemm", NEOVERSE_V1, 4, 16, 4, False, (128, 512, 112)),
    ("neoverse n1 dgemm", NEOVERSE_N1, 4, 8, 8, False, (64, 512, 56)),
    ("apple m1 sgemm", APPLE_M1, 4, 16, 4, False, (152, 1280, 2048)),
]


@pytest.mark.parametrize("name,caches,mr,nr,elem,cplx,expected", MODEL_CASES, ids=[c[0] for c in MODEL_CASES])
def test_model_blocks_recorded_hierarchies(name, caches, mr, nr, elem, cplx, expected):
    got = _core.model_blocks(caches, mr, nr, elem, cplx, 2048)
    assert got == expected, (name, got)
    mc, kc, nc = got
    assert mc % mr == 0 and nc % nr == 0 and kc % 8 == 0


def test_model_int8_zen4():
    # int8 12 x 32 (bytes): kb = GK_MODEL_INT8_KB = 4096; A budget = min(8 - 1 - ceil(32*4096 / 131072),
    # 8 / 4) ways = 2 * 131072 = 262144; B budget = (16 - 2) ways of the 4 MiB share = 14 * 262144 = 3670016.
    assert _core.model_int8_blocks(ZEN4, 12, 32, 1) == (4096, 262144, 3670016)
    # Sapphire Rapids: A budget min(16 - 1 - 1, 4) ways of 131072 = 524288; B budget (15 - 2) * 131072.
    assert _core.model_int8_blocks(SAPPHIRE_RAPIDS, 12, 32, 1) == (4096, 524288, 1703936)


MI8 = float(8 << 20)


@pytest.mark.parametrize("name,caches,table,expected", [
    # direct_b: floor(sqrt(L1 * 3/4 / 8))^3 (32 KiB: 55^3, 48 KiB: 67^3, 64 KiB: 78^3, 128 KiB: 110^3); row panels: the
    # table's where this core's L2 share is 2 MiB or more (Sapphire Rapids; Apple M1's 12 MiB for 4 cores), else 1;
    # the strips' walk: 2 MiB there, else the table's
    ("zen2", ZEN2, 3, (55.0 ** 3, 1, MI8)), ("zen3", ZEN3, 3, (55.0 ** 3, 1, MI8)),
    ("zen4", ZEN4, 3, (55.0 ** 3, 1, MI8)), ("zen5", ZEN5, 3, (67.0 ** 3, 1, MI8)),
    ("skylake_sp", SKYLAKE_SP, 3, (55.0 ** 3, 1, MI8)), ("ice_lake_sp", ICE_LAKE_SP, 3, (67.0 ** 3, 1, MI8)),
    ("sapphire_rapids", SAPPHIRE_RAPIDS, 3, (67.0 ** 3, 3, float(2 << 20))),
    ("neoverse_n1", NEOVERSE_N1, 4, (78.0 ** 3, 1, MI8)), ("apple_m1", APPLE_M1, 4, (110.0 ** 3, 4, float(2 << 20))),
    ("no caches", _h(0, 0, 0, 0, 0, 0, 1), 3, (None, None, None))])
def test_model_small_limits_recorded_hierarchies(name, caches, table, expected):
    assert _core.model_small_limits(caches, table, MI8) == expected, name


def test_model_needs_l1_and_l2():
    for bad in [(0, MI8), (9, MI8), (3, 0.0), (3, float("nan")), (3, -1.0)]:
        with pytest.raises(ValueError, match="model_small_limits"):
            _core.model_small_limits(ZEN4, *bad)
    assert _core.model_blocks(_h(0, 0, 1 * M, 8, 0, 0, 1), 12, 32, 4) is None
    assert _core.model_blocks(_h(32 * K, 8, 0, 0, 0, 0, 1), 12, 32, 4) is None
    with pytest.raises(ValueError):
        _core.model_blocks(ZEN4, 0, 32, 4)
    with pytest.raises(ValueError):
        _core.model_blocks(ZEN4, 12, 32, 3)


def test_cache_hierarchy_read_here():
    c = _core.cache_hierarchy()
    assert c["source"] in ("cpuid", "sysfs", "sysctl", "none")
    if c["source"] != "none":
        assert c["L1d"]["size"] >= 4096 and c["L1d"]["ways"] >= 1 and c["L1d"]["line"] in (32, 64, 128, 256)
        assert c["L2"]["size"] >= c["L1d"]["size"]
    cfg = gemmkit.show_config(print_out=False)
    assert cfg["caches"] == c and set(cfg["params"]) == set(_core.param_names())


def test_model_applies_where_no_hand_config():
    """The generic tables of a path give way to the model on a CPU whose caches are known; hand configs
    stay (GEMMKIT_BLOCKING=hand / model switch)."""
    caches = _core.cache_hierarchy()
    prev = _core.blocking_model()
    try:
        for arch in AVAILABLE_ARCHS:
            with gemmkit.use_arch(arch):
                info, params = _core.kernel_info(), _core.params()
                hand = info["uarch"] != "any"
                src = params["sgemm.kc"][1]
                if caches["source"] == "none":
                    assert src in ("path table", "hand config")
                    continue
                assert src == ("hand config" if hand else "model"), (arch, src)
                if not hand:
                    s = info["sgemm"]
                    assert (s["MC"], s["KC"]) == _core.model_blocks(caches, s["MR"], s["NR"], 4)[:2]
                    assert params["small.direct_max_row_panels"][1] == "model"
                    l2 = caches["L2"]["size"] // max(1, caches["L2"]["sharing"])  # this core's share
                    group = 1024 // (s["NR"] * 4)  # panels of 1 KiB of B's rows: AVX-512 8, AVX2 16
                    assert params["small.b_group_panels"] == (group if l2 >= 2 << 20 else 0, "model")
                _core.blocking_model(0)
                assert _core.params()["sgemm.kc"][1] in ("path table", "hand config")
                if not hand:  # the model's row panels and strips' walk from the table's (left as they are)
                    table, walk = (_core.params()[k][0] for k in ("small.direct_max_row_panels", "small.ta_strips_min_walk"))
                    got = _core.model_small_limits(caches, table, walk)[1:]
                    assert got == tuple(params[k][0] for k in ("small.direct_max_row_panels", "small.ta_strips_min_walk"))
                    assert got[0] in (1, table) and got[1] <= walk
                _core.blocking_model(2)
                assert _core.params()["sgemm.kc"][1] == "model"
                _core.blocking_model(prev)
    finally:
        _core.blocking_model(prev)


# ---- the C entry of the overrides ------------------------------------------------------------------

@pytest.fixture
def clean_tuning():
    _core.tuning_clear()
    yield
    _core.tuning_clear()
    _tuning_file.load(warn=False)


@pytest.mark.parametrize("name,value", [
    ("sgemm.mc", 0), ("sgemm.mc", -12), ("sgemm.mc", 13), ("sgemm.mc", 1 << 40), ("sgemm.kc", 7), ("sgemm.kc", 1e300),
    ("sgemm.kc", float("nan")), ("sgemm.kc", float("inf")), ("sgemm.nc", 1), ("sgemm.nc", 10 ** 9), ("sgemm.kc", 12.5),
    ("int8.kb", 3), ("int8.l2_bytes", 1 << 40), ("int8.l3_bytes", -1), ("small.gemv_max_m", 1000),
    ("small.gemv_pf_bytes", 100), ("small.tiny_max_macs", 1e12), ("small.dot_max_m", 2.5), ("threads.min_macs", 0),
    ("small.direct_max_row_panels", 9), ("small.direct_max_row_panels", 1.5), ("small.b_group_panels", 65),
    ("small.b_group_panels", 2.5), ("small.b_group_panels", -1), ("small.b_group_kc", 100), ("small.dot_max_n", 5),
    ("small.dot_rows_plain_min_m", 33), ("small.tiny_stream_min_k", 1.5),
    ("small.bf16_widen_min_m", 2.5), ("small.bf16_widen_min_n", -1),
    ("bf16.mc", 13), ("bf16.kc", 7), ("bf16.nc", 1 << 40), ("small.ta_strips_min_walk", -1), ("small.ta_strips_min_walk", 1e300), ("nonsense", 1), ("sgemm.kc", "512"), ("sgemm.kc", None), ("sgemm.kc", True), ("sgemm.kc", 10 ** 400),
])
def test_override_rejected(clean_tuning, name, value):
    before = _core.params()
    arch = gemmkit.get_arch()
    assert _core.tuning_set(arch, name, value) is not None
    assert _core.params() == before


def test_override_block_too_big_for_the_workspace(clean_tuning):
    # each value alone is in range; together the packed A block would be 4096 x 4096 x 4 B = 64 MiB
    arch = gemmkit.get_arch()
    mr, nr = _core.kernel_info()["sgemm"]["MR"], _core.kernel_info()["sgemm"]["NR"]
    assert _core.tuning_set(arch, "sgemm.nc", nr) is None
    assert _core.tuning_set(arch, "sgemm.mc", mr) is None
    assert _core.tuning_set(arch, "sgemm.kc", 4096) is None
    assert _core.tuning_set(arch, "sgemm.mc", 4096 // mr * mr) is not None
    assert _core.params()["sgemm.mc"] == (mr, "tuned")


def test_override_accepted_and_sourced(clean_tuning):
    arch = gemmkit.get_arch()
    k = _core.kernel_info()["sgemm"]
    mc = 4 * k["MR"]
    assert _core.tuning_set(arch, "sgemm.mc", mc) is None
    assert _core.tuning_set(arch, "small.gemv_pf_bytes", 1024) is None
    p = _core.params()
    assert p["sgemm.mc"] == (mc, "tuned") and p["small.gemv_pf_bytes"] == (1024, "tuned")
    assert _core.kernel_info()["sgemm"]["MC"] == mc
    assert _core.kernel_info()["sgemm"]["kernel"] == k["kernel"]  # never another kernel
    _core.tuning_clear()
    assert _core.params()["sgemm.mc"][1] != "tuned"


# ---- the tuning file -----------------------------------------------------------------------------

def _doc(**changes):
    doc = {"format": _tuning_file.FORMAT, "version": _tuning_file.FORMAT_VERSION, **_tuning_file.machine_key(),
           "arch": gemmkit.get_arch(), "params": {"sgemm.kc": 256, "small.gemv_pf_bytes": 0}}
    doc.update(changes)
    return doc


def _write(tmp_path, doc, name="tuning.json"):
    p = tmp_path / name
    p.write_text(doc if isinstance(doc, str) else json.dumps(doc))
    return str(p)


def test_file_applied(clean_tuning, tmp_path):
    status = _tuning_file.load(_write(tmp_path, _doc()))
    assert status.startswith("applied"), status
    assert _core.params()["sgemm.kc"] == (256, "tuned")
    assert gemmkit.show_config(print_out=False)["tuning"]["status"] == status


def _other_cpu():
    key = _tuning_file.machine_key()
    cpu = dict(key["cpu"], model=key["cpu"]["model"] + 1)
    return cpu


@pytest.mark.parametrize("changes", [
    {"gemmkit": "0.0.0-other"}, {"cpu": "other"}, {"caches": {"L1d": [1, 2, 3]}}, {"version": 2}, {"version": True},
    {"format": "something-else"}, {"arch": "sse9"}, {"params": []}, {"params": {"sgemm.kc": "256"}},
    {"params": {"sgemm.kc": True}}, {"params": {"no.such": 1}}, {"params": {"sgemm.kc": 10 ** 12}},
    {"params": {"sgemm.kc": 256, "sgemm.mc": 7}}, {"params": {"int8.l3_bytes": 1 << 45}},
])
def test_file_refused(clean_tuning, tmp_path, changes):
    if changes.get("cpu") == "other":
        changes = {"cpu": _other_cpu()}
    before = _core.params()
    with pytest.warns(_tuning_file.TuningWarning):
        status = _tuning_file.load(_write(tmp_path, _doc(**changes)))
    assert status.startswith("ignored"), status
    assert _core.params() == before  # all or nothing: not even sgemm.kc = 256


@pytest.mark.parametrize("text", ["", "{", "null", "[1, 2]", "\x00\xff", '{"format": "gemmkit-tuning"}',
                                  "[" * 100000, '{"a": ' + "1" * 70000 + "}"])
def test_corrupt_file_rejected(clean_tuning, tmp_path, text):
    before = _core.params()
    with pytest.warns(_tuning_file.TuningWarning):
        status = _tuning_file.load(_write(tmp_path, text))
    assert status.startswith("ignored")
    assert _core.params() == before


def test_env_off_and_path(tmp_path):
    """At import: GEMMKIT_TUNING=off ignores the file, a path is read, a bad one only warns."""
    good = _write(tmp_path, _doc(), "good.json")
    bad = _write(tmp_path, _doc(gemmkit="0.0.0-other"), "bad.json")
    code = ("import warnings, gemmkit; from gemmkit import _core, _tuning_file; "
            "print(_tuning_file.state['status']); print(_core.params()['sgemm.kc'][1])")
    for env, status, src in ((good, "applied", "tuned"), ("off", "off", None), (bad, "ignored", None)):
        r = subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True, text=True,
                           env={**os.environ, "GEMMKIT_TUNING": env}, cwd=str(tmp_path))
        assert r.returncode == 0, r.stderr
        lines = r.stdout.split("\n")
        assert lines[0].startswith(status), r.stdout
        if src:
            assert lines[1] == src
        else:
            assert lines[1] != "tuned"
        assert ("TuningWarning" in r.stderr) == (status == "ignored"), r.stderr


def _special_tuning_file(kind, tmp_path):
    """A path where the tuning file would be that is a FIFO, a symlink to a device, or a regular file past
    the size limit (valid JSON: only its size refuses it)."""
    p = tmp_path / "tuning.json"
    if kind == "fifo":
        os.mkfifo(p)
    elif kind in ("zero", "urandom"):
        os.symlink(f"/dev/{kind}", p)
    else:
        p.write_text('{"pad": "' + "x" * _tuning_file.MAX_FILE_BYTES + '"}')
    return p


@pytest.mark.skipif(not hasattr(os, "mkfifo") or not os.path.exists("/dev/zero"), reason="needs POSIX FIFOs and /dev")
@pytest.mark.parametrize("where", ["env", "cache dir"])
@pytest.mark.parametrize("kind", ["fifo", "zero", "urandom", "too large"])
def test_special_file_is_not_read_at_import(tmp_path, kind, where):
    """A FIFO or device as the tuning file must not hang the import or fill memory: warned, defaults used."""
    if where == "env":
        path = _special_tuning_file(kind, tmp_path)
        env = {**os.environ, "GEMMKIT_TUNING": str(path)}
    else:
        cache = tmp_path / "cache"
        (cache / "gemmkit").mkdir(parents=True)
        path = _special_tuning_file(kind, cache / "gemmkit")
        env = {k: v for k, v in os.environ.items() if k != "GEMMKIT_TUNING"}
        env["XDG_CACHE_HOME"] = str(cache)
        if _tuning_file.default_path() is None:
            pytest.skip("needs platformdirs")
    code = ("import resource; resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30)); "
            "import gemmkit; from gemmkit import _core, _tuning_file; "
            "print(_tuning_file.state['status']); print(_tuning_file.state['path']); print(_core.params()['sgemm.kc'][1])")
    r = subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True, text=True, env=env,
                       cwd=str(tmp_path), timeout=60)
    assert r.returncode == 0, r.stderr
    status, used, source = r.stdout.split("\n")[:3]
    assert status.startswith("ignored"), r.stdout
    assert os.path.realpath(used) == os.path.realpath(path)
    assert source != "tuned"
    assert "TuningWarning" in r.stderr and str(path) in r.stderr and "defaults" in r.stderr, r.stderr


# ---- results under a tuning --------------------------------------------------------------------

def _odd_tuning(arch):
    """Small, unusual blocks (many edges, many k blocks), a GEMV prefetch, thresholds moved."""
    with gemmkit.use_arch(arch):
        info = _core.kernel_info()
    params = {}
    for op in ("sgemm", "dgemm", "cgemm", "zgemm"):
        params[f"{op}.mc"] = 2 * info[op]["MR"]
        params[f"{op}.kc"] = 24
        params[f"{op}.nc"] = 3 * info[op]["NR"]
    params.update({"int8.kb": 64, "int8.l2_bytes": 16384, "int8.l3_bytes": 65536, "small.gemv_pf_bytes": 512,
                   "small.gemv_max_m": 4, "small.dot_max_m": 4, "small.tiny_max_macs": 8.0 ** 3,
                   "small.direct_b_max_macs": 16.0 ** 3, "small.direct_max_row_panels": 8,
                   "small.ta_strips_min_walk": 4096.0, "small.b_group_panels": 3, "small.b_group_kc": 64,
                   "small.dot_max_n": 2, "small.dot_rows_plain_min_m": 2, "small.tiny_stream_min_row_bytes": 0,
                   "small.tiny_stream_min_k": 0, "small.bf16_widen_min_m": 3, "small.bf16_widen_min_n": 5,
                   "threads.min_macs": 4096})
    return params


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.complex64, np.complex128])
def test_results_under_tuning(clean_tuning, arch, nthreads, dtype):
    for name, v in _odd_tuning(arch).items():
        assert _core.tuning_set(arch, name, v) is None, (name, v)
    rng = np.random.default_rng(7)
    tol = 1e-4 if dtype in (np.float32, np.complex64) else 1e-12
    with gemmkit.use_arch(arch):
        assert _core.params()["sgemm.kc"] == (24, "tuned")
        gemmkit.set_num_threads(nthreads)
        try:
            for m, n, k in [(1, 300, 257), (3, 77, 130), (37, 53, 61), (100, 131, 97), (130, 70, 200), (8, 8, 8)]:
                a = rng.standard_normal((m, k)).astype(dtype)
                b = rng.standard_normal((k, n)).astype(dtype)
                if np.dtype(dtype).kind == "c":
                    a = a + 1j * rng.standard_normal((m, k)).astype(dtype)
                    b = b + 1j * rng.standard_normal((k, n)).astype(dtype)
                ref = a.astype(np.complex128) @ b.astype(np.complex128)
                scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64)
                for got in (gemmkit.matmul(a, b), gemmkit.matmul(b.T, a.T).T,
                            gemmkit.gemm(a, np.ascontiguousarray(b.T), trans_b=True)):
                    assert np.all(np.abs(got - ref) <= tol * (scale + 1)), (m, n, k)
        finally:
            gemmkit.set_num_threads(0)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_few_rows_in_groups_take_rows_by_bytes(clean_tuning, arch, nthreads, dtype):
    """Few rows of C with B packed in groups: the group's k block (256) is shorter than the tuned one (512), so
    its A block holds twice the tuned mc rows in one block (csrc/gemm_real.c few_rows_blocks); rows on both
    sides of that limit, several k blocks, beta != 0."""
    op = "sgemm" if dtype == np.float32 else "dgemm"
    with gemmkit.use_arch(arch):
        mr = _core.kernel_info()[op]["MR"]
    # nc first: the model's nc on some CPUs is too wide for kc 512 within the tuning's block limit
    for name, v in {f"{op}.nc": 1024, f"{op}.kc": 512, f"{op}.mc": mr, "small.b_group_panels": 2,
                    "small.direct_max_row_panels": 0,
                    "small.direct_b_max_macs": 4096.0}.items():
        assert _core.tuning_set(arch, name, v) is None, (name, v)
    rng = np.random.default_rng(11)
    tol = 1e-4 if dtype == np.float32 else 1e-12
    with gemmkit.use_arch(arch):
        gemmkit.set_num_threads(nthreads)
        try:
            for m in (mr + 1, 2 * mr + mr // 2, 3 * mr - 1, 4 * mr, 6 * mr + 1):
                n, k = 7 * 32 + 5, 700
                a = rng.standard_normal((m, k)).astype(dtype)
                b = rng.standard_normal((k, n)).astype(dtype)
                c = rng.standard_normal((m, n)).astype(dtype)
                ref = 1.5 * (a.astype(np.float64) @ b.astype(np.float64)) - 0.5 * c
                got = gemmkit.gemm(a, b, c.copy(), alpha=1.5, beta=-0.5)
                scale = np.abs(a).astype(np.float64) @ np.abs(b).astype(np.float64) + np.abs(c)
                assert np.all(np.abs(got - ref) <= tol * (scale + 1)), (arch, m)
        finally:
            gemmkit.set_num_threads(0)


def test_bf16_results_under_tuned_blocks(clean_tuning, arch, nthreads):
    """bfloat16 pair kernels under small blocks (bf16.mc / kc / nc: several blocks of each, a k block that is not a
    whole number of the kernel's k groups), on the paths that run one here."""
    ml_dtypes = pytest.importorskip("ml_dtypes")
    with gemmkit.use_arch(arch):
        k = _core.kernel_info()["bf16"]
    if k["k_group"] != 2:  # widened to float32 here: the path's blocks (if it has a pair kernel) are not used
        pytest.skip(f"{arch} runs no bfloat16 pair kernel on this CPU")
    tuned = {"bf16.mc": 2 * k["MR"], "bf16.kc": 24, "bf16.nc": 3 * k["NR"]}
    for name, v in tuned.items():
        assert _core.tuning_set(arch, name, v) is None, (name, v)
    rng = np.random.default_rng(5)
    with gemmkit.use_arch(arch):
        assert _core.kernel_info()["bf16"]["KC"] == 24
        gemmkit.set_num_threads(nthreads)
        try:
            for m, n, kk in [(100, 131, 197), (3 * k["MR"] + 1, 7 * k["NR"] - 3, 64), (200, 40, 301)]:
                a = rng.standard_normal((m, kk)).astype(ml_dtypes.bfloat16)
                b = rng.standard_normal((kk, n)).astype(ml_dtypes.bfloat16)
                a64, b64 = a.astype(np.float64), b.astype(np.float64)
                ref, scale = a64 @ b64, np.abs(a64) @ np.abs(b64)
                got = gemmkit.matmul(a, b)
                assert np.all(np.abs(got - ref) <= 1e-5 * kk * (scale + 1)), (arch, m, n, kk)
        finally:
            gemmkit.set_num_threads(0)


def test_int8_exact_under_tuning(clean_tuning, arch, nthreads):
    for name, v in _odd_tuning(arch).items():
        assert _core.tuning_set(arch, name, v) is None
    rng = np.random.default_rng(3)
    with gemmkit.use_arch(arch):
        gemmkit.set_num_threads(nthreads)
        try:
            for m, n, k in [(1, 100, 300), (5, 70, 129), (40, 90, 700), (130, 33, 65)]:
                a = rng.integers(0, 256, (m, k), dtype=np.uint8)
                b = rng.integers(-128, 128, (k, n), dtype=np.int8)
                c = np.zeros((m, n), np.int32)
                gemmkit.gemm_u8s8s32("N", "N", "F", m, n, k, 1.0, a, k, 0, b, n, 0, 0.0, c, n, np.zeros(1, np.int32))
                ref = a.astype(np.int64) @ b.astype(np.int64)
                assert np.array_equal(c, ref)
        finally:
            gemmkit.set_num_threads(0)


def test_tune_quick_writes_a_file_it_then_applies(tmp_path):
    """`gemmkit tune --quick --output` (a subprocess: it measures) writes a file the next import applies."""
    if os.environ.get("GEMMKIT_ARM64_CPU"):  # set by .ci/arm64-run
        pytest.skip("under QEMU (.ci/arm64-run) the quick tune's 25 s budget covers its first steps only")
    out = tmp_path / "t.json"
    env = {**os.environ, "GEMMKIT_TUNING": "off"}
    r = subprocess.run([sys.executable, "-m", "gemmkit", "tune", "--quick", "--output", str(out)],
                       capture_output=True, text=True, env=env, cwd=str(tmp_path), timeout=300)
    assert r.returncode == 0, r.stderr
    doc = json.loads(out.read_text())
    assert doc["format"] == _tuning_file.FORMAT and doc["gemmkit"] == gemmkit.__version__
    assert isinstance(doc["params"], dict) and len(doc["params"]) + len(doc["confirmed"]) >= 8
    assert doc["seconds"] < 60
    r = subprocess.run([sys.executable, "-m", "gemmkit", "tune", "--show"], capture_output=True, text=True,
                       env={**os.environ, "GEMMKIT_TUNING": str(out)}, cwd=str(tmp_path))
    assert r.returncode == 0 and "applied" in r.stdout, r.stdout + r.stderr
    assert ("tuned" in r.stdout) == bool(doc["params"]), r.stdout


# ---- `gemmkit tune` cannot save: said before measuring, in one line ---------------------------------

@pytest.fixture
def no_measuring(monkeypatch):
    """Any start of measuring fails the test: a save that cannot happen must be found first."""
    def refuse(*a, **k):
        raise AssertionError("measuring started before the destination was checked")
    monkeypatch.setattr(_tune, "_steps", refuse)
    monkeypatch.setattr(_tune, "_Tuner", refuse)
    monkeypatch.setattr(_tune, "_default_arch", refuse)


def _unwritable_folder(tmp_path):
    if os.geteuid() != 0:
        d = tmp_path / "ro"
        d.mkdir()
        d.chmod(0o500)
        return d
    if os.path.isdir("/sys"):
        return "/sys"  # root may write almost anywhere, but cannot create files in sysfs
    pytest.skip("no folder this user cannot write")


@pytest.mark.parametrize("case", ["unwritable output", "output under a file", "output a directory", "HOME a file",
                                  "no platformdirs"])
def test_tune_refuses_an_unsavable_destination_before_measuring(case, tmp_path, monkeypatch, capsys, no_measuring):
    from gemmkit import _cli
    args = ["tune", "--quick"]
    if case == "unwritable output":
        args += ["--output", os.path.join(str(_unwritable_folder(tmp_path)), "gemmkit-tuning.json")]
    elif case == "output under a file":
        (tmp_path / "file").write_text("")
        args += ["--output", str(tmp_path / "file" / "sub" / "t.json")]
    elif case == "output a directory":
        args += ["--output", str(tmp_path)]
    elif case == "HOME a file":
        if _tuning_file.default_path() is None:
            pytest.skip("needs platformdirs")
        (tmp_path / "home").write_text("")
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        monkeypatch.delenv("XDG_CACHE_HOME", raising=False)
    else:
        monkeypatch.setitem(sys.modules, "platformdirs", None)  # import fails as when not installed
        assert _tuning_file.default_path() is None
    status = _cli.main(args)
    out, err = capsys.readouterr()
    assert status == 2
    lines = err.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("gemmkit tune: "), err
    assert ("--output" in lines[0]) == (case == "no platformdirs"), lines[0]
    assert "Traceback" not in err and out == ""


def test_tune_checks_leave_no_file(tmp_path):
    out = tmp_path / "new" / "t.json"
    assert _tuning_file.check_destination(str(out)) == str(out)
    assert (tmp_path / "new").is_dir() and list((tmp_path / "new").iterdir()) == []

