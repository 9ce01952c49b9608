"""Per-microarchitecture configurations (csrc/config/zen2.c, zen4.c, ...): the choice by CPUID vendor, family
and model (a pure function, tested with synthetic CPUs), GEMMKIT_UARCH, and every configuration run for real
where this CPU has its instruction set (the others are skipped here and run on a CPU that has it)."""
import os
import subprocess
import sys
import tempfile
import textwrap

import pytest

import gemmkit
from gemmkit import _core

CONFIGS = _core.configs()
AVX512_VNNI = ["avx2", "avx512", "avx512_vnni"]
AVX512 = ["avx2", "avx512"]
AVX2 = ["avx2"]
# The x86-64 configurations exist in x86-64 builds only (an aarch64 build has its own: tests/test_arm64.py).
x86_only = pytest.mark.skipif(not any(c["arch"] == "avx2" for c in CONFIGS), reason="a build without x86-64 kernels")

# (vendor, family, model, features) -> (arch, uarch); models from the vendors' revision guides (family 19h:
# Zen 3 00h-0Fh, 20h-5Fh; Zen 4 10h-1Fh Genoa/Stromboli, 60h-74h Raphael/Phoenix, 78h-7Bh Phoenix 2,
# A0h-AFh Bergamo/Siena; family 17h: Zen 1/+ 00h-2Fh, Zen 2 30h-3Fh Rome/Castle Peak, 47h, 60h-7Fh
# Renoir/Lucienne/Matisse, 84h-87h, 90h-AFh Van Gogh/Mendocino; family 1Ah: Zen 5).
SELECTION = [
    (("AMD", 0x19, 0x10, AVX512_VNNI), ("avx512_vnni", "zen4")),
    (("AMD", 0x19, 0x11, AVX512_VNNI), ("avx512_vnni", "zen4")),   # EPYC 9004 Genoa (issue 14's core)
    (("AMD", 0x19, 0x18, AVX512_VNNI), ("avx512_vnni", "zen4")),
    (("AMD", 0x19, 0x1f, AVX512_VNNI), ("avx512_vnni", "zen4")),
    (("AMD", 0x19, 0x61, AVX512_VNNI), ("avx512_vnni", "zen4")),   # Ryzen 7000 Raphael
    (("AMD", 0x19, 0x74, AVX512_VNNI), ("avx512_vnni", "zen4")),   # Phoenix
    (("AMD", 0x19, 0x78, AVX512_VNNI), ("avx512_vnni", "zen4")),   # Phoenix 2
    (("AMD", 0x19, 0x7b, AVX512_VNNI), ("avx512_vnni", "zen4")),
    (("AMD", 0x19, 0xa0, AVX512_VNNI), ("avx512_vnni", "zen4")),   # Bergamo / Siena
    (("AMD", 0x19, 0xaf, AVX512_VNNI), ("avx512_vnni", "zen4")),
    (("AMD", 0x19, 0x75, AVX512_VNNI), ("avx512_vnni", "any")),    # outside the Zen 4 ranges
    (("AMD", 0x19, 0x7c, AVX512_VNNI), ("avx512_vnni", "any")),
    (("AMD", 0x19, 0xb0, AVX512_VNNI), ("avx512_vnni", "any")),
    (("AMD", 0x19, 0x11, AVX2), ("avx2", "any")),                  # Zen 4 with AVX-512 hidden (a VM)
    (("AMD", 0x19, 0x01, AVX2), ("avx2", "any")),                  # Zen 3 Milan
    (("AMD", 0x19, 0x21, AVX2), ("avx2", "any")),                  # Zen 3 Vermeer
    (("AMD", 0x19, 0x50, AVX2), ("avx2", "any")),                  # Zen 3 Cezanne
    (("AMD", 0x1a, 0x02, AVX512_VNNI), ("avx512_vnni", "any")),    # Zen 5 Turin: its settings stay
    (("AMD", 0x1a, 0x11, AVX512_VNNI), ("avx512_vnni", "any")),
    (("AMD", 0x1a, 0x44, AVX512_VNNI), ("avx512_vnni", "any")),    # Zen 5 Granite Ridge
    (("AMD", 0x17, 0x31, AVX2), ("avx2", "zen2")),                 # EPYC 7002 Rome (this project's 2-core box)
    (("AMD", 0x17, 0x30, AVX2), ("avx2", "zen2")),
    (("AMD", 0x17, 0x3f, AVX2), ("avx2", "zen2")),
    (("AMD", 0x17, 0x47, AVX2), ("avx2", "zen2")),
    (("AMD", 0x17, 0x60, AVX2), ("avx2", "zen2")),                 # Renoir
    (("AMD", 0x17, 0x71, AVX2), ("avx2", "zen2")),                 # Matisse
    (("AMD", 0x17, 0x84, AVX2), ("avx2", "zen2")),
    (("AMD", 0x17, 0x90, AVX2), ("avx2", "zen2")),                 # Van Gogh
    (("AMD", 0x17, 0xa0, AVX2), ("avx2", "zen2")),                 # Mendocino
    (("AMD", 0x17, 0x01, AVX2), ("avx2", "any")),                  # Zen 1 Naples
    (("AMD", 0x17, 0x08, AVX2), ("avx2", "any")),                  # Zen+ Pinnacle Ridge
    (("AMD", 0x17, 0x18, AVX2), ("avx2", "any")),                  # Zen 1 Raven Ridge
    (("AMD", 0x17, 0x48, AVX2), ("avx2", "any")),
    (("AMD", 0x17, 0x31, []), ("generic", "any")),                 # no AVX2 (an emulator): portable
    (("Intel", 0x6, 0x8f, AVX512_VNNI), ("avx512_vnni", "any")),   # Sapphire Rapids: family 6 is not AMD's
    (("Intel", 0x19, 0x11, AVX512_VNNI), ("avx512_vnni", "any")),  # the vendor counts, not only the numbers
    (("Intel", 0x17, 0x31, AVX2), ("avx2", "any")),
    (("other", 0x19, 0x11, AVX512_VNNI), ("avx512_vnni", "any")),
    (("Intel", 0x6, 0x55, AVX512), ("avx512", "any")),             # Skylake-SP
]


@x86_only
@pytest.mark.parametrize("cpu,expected", SELECTION,
                         ids=[f"{c[0]}-{c[1]:x}h-{c[2]:x}h-{'+'.join(c[3]) or 'none'}" for c, _ in SELECTION])
def test_selection_by_cpuid(cpu, expected):
    assert _core.config_for_cpu(*cpu) == expected


@x86_only
def test_uarch_override_applies_on_any_cpu_with_the_features():
    # GEMMKIT_UARCH=zen4 on a Zen 2 that had AVX-512 would take the Zen 4 config; without AVX-512 it cannot
    assert _core.config_for_cpu("AMD", 0x17, 0x31, AVX512_VNNI, uarch="zen4") == ("avx512_vnni", "zen4")
    assert _core.config_for_cpu("Intel", 0x6, 0x8f, AVX512_VNNI, uarch="zen4") == ("avx512_vnni", "zen4")
    assert _core.config_for_cpu("AMD", 0x17, 0x31, AVX2, uarch="zen4") == ("avx2", "any")
    assert _core.config_for_cpu("Intel", 0x6, 0x9e, AVX2, uarch="zen2") == ("avx2", "zen2")
    # naming another uarch (or an unknown one) turns the CPU's own tuned config off
    assert _core.config_for_cpu("AMD", 0x19, 0x11, AVX512_VNNI, uarch="zen2") == ("avx512_vnni", "any")
    assert _core.config_for_cpu("AMD", 0x17, 0x31, AVX2, uarch="bogus") == ("avx2", "any")
    assert _core.config_for_cpu("AMD", 0x17, 0x31, AVX2, uarch="") == ("avx2", "zen2")


@pytest.mark.parametrize("bad", [("AMD", -1, 0), ("AMD", 0x1000, 0), ("AMD", 0x19, 0x1000), ("Via", 6, 1)])
def test_selection_rejects_bad_cpu(bad):
    with pytest.raises(ValueError):
        _core.config_for_cpu(*bad, AVX2)
    with pytest.raises(ValueError):
        _core.config_for_cpu("AMD", 0x19, 0x11, ["avx1024"])


def test_registry_lists_each_tuned_config_before_its_path_default():
    names = [(c["arch"], c["uarch"]) for c in CONFIGS]
    if any(c["arch"] == "avx2" for c in CONFIGS):
        assert ("avx512_vnni", "zen4") in names and ("avx2", "zen2") in names
    for i, c in enumerate(CONFIGS):
        if c["uarch"] != "any":
            assert (c["arch"], "any") in names[i + 1:], c
    assert names[-1] == ("generic", "any")


def test_this_cpu_gets_what_the_pure_selection_says():
    cpu = _core.cpu_identity()
    feats = [k for k, v in _core.cpu_features().items() if v]
    env = os.environ.get("GEMMKIT_UARCH")
    arch, uarch = _core.config_for_cpu(cpu["vendor"], cpu["family"], cpu["model"], feats, uarch=env)
    if os.environ.get("GEMMKIT_ARCH") in (None, "", "auto"):
        with gemmkit.use_arch(None):
            cfg = gemmkit.show_config(print_out=False)
            assert (cfg["arch"], cfg["uarch"]) == (arch, uarch)


def test_show_config_reports_cpu_uarch_and_gemv(capsys):
    cfg = gemmkit.show_config()
    out = capsys.readouterr().out
    assert cfg["cpu"]["vendor"] in ("AMD", "Intel", "other")
    assert f"family {cfg['cpu']['family']:#x} model {cfg['cpu']['model']:#x}" in out
    assert f"tuned for: {cfg['uarch']}" in out
    g = cfg["gemv"]
    assert g["max_M"] >= 1 and g["max_N"] >= 1 and g["prefetch_bytes"] >= 0
    assert "gemv" in out


CHECK_PROGRAM = """
    import numpy as np, gemmkit
    cfg = gemmkit.show_config(print_out=False)
    assert (cfg["arch"], cfg["uarch"]) == ({arch!r}, {uarch!r}), (cfg["arch"], cfg["uarch"])
    rng = np.random.default_rng(5)
    for threads in (1, 2):
        gemmkit.set_num_threads(threads)
        for dt, gemm in ((np.float32, gemmkit.sgemm), (np.float64, gemmkit.dgemm)):
            eps = np.finfo(dt).eps
            for M, N, K in ((1, 1000, 333), (2, 77, 4100), (900, 1, 129), (513, 2, 65), (67, 45, 99), (300, 260, 270)):
                for ta in "NT":
                    for tb in "NT":
                        A = rng.uniform(-1, 1, (M, K) if ta == "N" else (K, M)).astype(dt)
                        B = rng.uniform(-1, 1, (K, N) if tb == "N" else (N, K)).astype(dt)
                        C = np.full((M, N), np.nan, dt)
                        gemm(ta, tb, M, N, K, 1.0, A, A.shape[1], B, B.shape[1], 0.0, C, N)
                        Aop = (A if ta == "N" else A.T).astype(np.float64)
                        Bop = (B if tb == "N" else B.T).astype(np.float64)
                        tol = (4 + np.sqrt(K)) * eps * (np.abs(Aop) @ np.abs(Bop)) + eps
                        assert np.all(np.abs(C - Aop @ Bop) <= tol), (dt, M, N, K, ta, tb)
        A8 = rng.integers(0, 256, (40, 300), dtype=np.uint8)
        B8 = rng.integers(-128, 128, (300, 50), dtype=np.int8)
        C8 = np.zeros((40, 50), np.int32)
        gemmkit.gemm_u8s8s32("N", "N", "F", 40, 50, 300, 1.0, A8, 300, 0, B8, 50, 0, 0.0, C8, 50, np.zeros(1, np.int32))
        assert np.array_equal(C8, A8.astype(np.int64) @ B8.astype(np.int64))
    print("ok")
"""


@pytest.mark.parametrize("config", CONFIGS, ids=[f"{c['arch']}-{c['uarch']}" for c in CONFIGS])
def test_every_config_forced(config):
    """Each configuration forced by GEMMKIT_ARCH + GEMMKIT_UARCH computes right (GEMV and packed paths,
    1 and 2 threads); skipped where this CPU lacks its instruction set."""
    have = _core.cpu_features()
    missing = [f for f in config["needs"] if not have.get(f)]
    if missing:
        pytest.skip(f"this CPU lacks {', '.join(missing)} ({config['arch']} / {config['uarch']})")
    env = dict(os.environ, GEMMKIT_ARCH=config["arch"], GEMMKIT_UARCH=config["uarch"])
    env.pop("GEMMKIT_NUM_THREADS", None)
    code = textwrap.dedent(CHECK_PROGRAM.format(arch=config["arch"], uarch=config["uarch"]))
    r = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=300,
                       cwd=tempfile.gettempdir())
    assert r.returncode == 0 and r.stdout.strip() == "ok", r.stderr[-2000:]
