"""Configuration: show_config, kernel path selection (use_arch / set_arch / GEMMKIT_ARCH), threads, and the
per-microarchitecture configurations (csrc/config/zen2.c, zen4.c, ...): the choice by CPUID vendor, family and
model (a pure function, tested with synthetic CPUs), GEMMKIT_UARCH, and every configuration run for real where
this CPU has its instruction set (the others are skipped here and run on a CPU that has it)."""
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

import gemmkit
from gemmkit import _core

ALL_ARCHS = ("generic", "neon", "dotprod", "i8mm", "avx2", "avx_vnni", "avx512", "avx512_vnni", "avx512_amx")
# which cpu_features flag each path needs
NEEDS = {"generic": [], "avx2": ["avx2"], "avx_vnni": ["avx2", "avx_vnni"], "avx512": ["avx512"],
         "avx512_vnni": ["avx512", "avx512_vnni"], "neon": ["neon"], "dotprod": ["neon", "dotprod"],
         "i8mm": ["neon", "i8mm"], "avx512_amx": ["avx512", "avx512_vnni", "amx_int8"]}


def run_python(code, env_updates=None, env_remove=(), tmp_path=None):
    """Run `code` in a fresh interpreter (outside the source tree) with a modified environment."""
    env = dict(os.environ)
    for k in ("GEMMKIT_ARCH", "GEMMKIT_NUM_THREADS", *env_remove):
        env.pop(k, None)
    env.update(env_updates or {})
    cwd = str(tmp_path) if tmp_path else tempfile.gettempdir()  # never the checkout (no built _core)
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], env=env, capture_output=True,
                          text=True, timeout=120, cwd=cwd)


# ---- show_config -------------------------------------------------------------------------

@pytest.mark.smoke
def test_show_config_keys_and_values():
    cfg = gemmkit.show_config(print_out=False)
    for key in ("arch", "sgemm", "int8", "cpu_features", "num_threads", "available_archs"):
        assert key in cfg, key
    assert cfg["arch"] == gemmkit.get_arch()
    assert cfg["arch"] in cfg["available_archs"]
    assert cfg["available_archs"] == gemmkit.available_archs()
    assert cfg["num_threads"] == gemmkit.get_num_threads() >= 1
    assert set(cfg["cpu_features"]) >= {"avx2", "avx512", "avx512_vnni", "avx_vnni"}
    assert all(isinstance(v, bool) for v in cfg["cpu_features"].values())
    s, q = cfg["sgemm"], cfg["int8"]
    for key in ("kernel", "MR", "NR", "MC", "KC", "NC"):
        assert key in s, key
    for key in ("kernel", "MR", "NR", "K_chunk"):
        assert key in q, key
    assert isinstance(s["kernel"], str) and s["kernel"]
    assert isinstance(q["kernel"], str) and q["kernel"]
    for d in (s, q):
        assert d["MR"] >= 1 and d["NR"] >= 1
    assert s["MC"] >= s["MR"] and s["NC"] >= s["NR"] and s["KC"] >= 1
    # the int8 K chunk is summed in int32: K_chunk products of u8 * s8 (|x| <= 255 * 128) must fit
    assert 1 <= q["K_chunk"] and q["K_chunk"] * 255 * 128 < 2**31


def test_show_config_prints(capsys):
    """The printed report names the path, the kernels, the CPU (vendor, family, model), the tuned uarch and the
    GEMV settings, and print_out=False returns the same dict silently."""
    cfg = gemmkit.show_config()
    out = capsys.readouterr().out
    assert isinstance(cfg, dict)
    assert cfg["arch"] in out
    assert cfg["sgemm"]["kernel"] in out and cfg["int8"]["kernel"] in out
    assert cfg["cpu"]["vendor"] in ("AMD", "Intel", "other")
    assert f"family {cfg['cpu']['family']:#x} model {cfg['cpu']['model']:#x}" in out
    assert f"tuned for: {cfg['uarch']}" in out
    g = cfg["gemv"]
    assert g["max_M"] >= 1 and g["max_N"] >= 1 and g["prefetch_bytes"] >= 0
    assert "gemv" in out
    assert gemmkit.show_config(print_out=False) == cfg
    assert capsys.readouterr().out == ""


def test_version():
    assert isinstance(gemmkit.__version__, str) and gemmkit.__version__
    assert gemmkit.show_config(print_out=False)["version"] == gemmkit.__version__


def test_public_api():
    for name in ("sgemm", "gemm_u8s8s32", "gemm_s8s8s32", "set_num_threads", "get_num_threads",
                 "show_config", "use_arch", "set_arch", "get_arch", "available_archs"):
        assert callable(getattr(gemmkit, name)), name
        assert name in gemmkit.__all__


# ---- kernel paths ------------------------------------------------------------------------

@pytest.mark.smoke
def test_available_archs():
    avail = gemmkit.available_archs()
    assert "generic" in avail
    assert set(avail) <= set(ALL_ARCHS)
    assert avail == [a for a in ALL_ARCHS if a in avail], "order should follow ARCHS"
    before = gemmkit.get_arch()
    gemmkit.available_archs()
    assert gemmkit.get_arch() == before, "available_archs() must not change the current path"
    feats = gemmkit.show_config(print_out=False)["cpu_features"]
    for a in avail:
        for f in NEEDS[a]:
            assert feats[f], f"path {a} is listed as available but cpu feature {f} is absent"


def test_default_arch_is_best_available():
    out = run_python("import gemmkit; print(gemmkit.get_arch()); print(','.join(gemmkit.available_archs()))")
    assert out.returncode == 0, out.stderr
    arch, avail = out.stdout.split()
    assert arch == avail.split(",")[-1]


@pytest.mark.smoke
@pytest.mark.parametrize("name", gemmkit.available_archs())
def test_use_arch_switches_and_restores(name):
    before = gemmkit.get_arch()
    with gemmkit.use_arch(name):
        cfg = gemmkit.show_config(print_out=False)
        assert cfg["arch"] == name
        assert gemmkit.get_arch() == name
        C = np.zeros((2, 2), np.float32)
        gemmkit.sgemm('N', 'N', 2, 2, 1, 1.0, np.ones(2, np.float32), 1, np.ones(2, np.float32), 2, 0.0, C, 2)
        assert (C == 1).all()
    assert gemmkit.get_arch() == before
    assert gemmkit.show_config(print_out=False)["arch"] == before


def test_use_arch_restores_after_exception():
    before = gemmkit.get_arch()
    with pytest.raises(RuntimeError, match="boom"):
        with gemmkit.use_arch("generic"):
            assert gemmkit.get_arch() == "generic"
            raise RuntimeError("boom")
    assert gemmkit.get_arch() == before


def test_use_arch_nested():
    before = gemmkit.get_arch()
    avail = gemmkit.available_archs()
    with gemmkit.use_arch(avail[0]):
        with gemmkit.use_arch(avail[-1]):
            assert gemmkit.get_arch() == avail[-1]
        assert gemmkit.get_arch() == avail[0]
    assert gemmkit.get_arch() == before


@pytest.mark.parametrize("bad", ["bogus", "AVX2", "avx512f", "", "auto "])
def test_unknown_arch_raises_value_error(bad):
    before = gemmkit.get_arch()
    with pytest.raises(ValueError):
        with gemmkit.use_arch(bad):
            pass
    assert gemmkit.get_arch() == before
    with pytest.raises(ValueError):
        gemmkit.set_arch(bad)
    assert gemmkit.get_arch() == before


def test_unsupported_arch_raises_runtime_error():
    """Known paths this CPU cannot run are refused (RuntimeError) without changing the path."""
    before = gemmkit.get_arch()
    avail = gemmkit.available_archs()
    for name in ALL_ARCHS:
        if name in avail:
            with gemmkit.use_arch(name):
                assert gemmkit.get_arch() == name
        else:
            with pytest.raises(RuntimeError):
                gemmkit.set_arch(name)
        assert gemmkit.get_arch() == before


def test_set_arch_none_selects_best():
    before = gemmkit.get_arch()
    try:
        gemmkit.set_arch("generic")
        assert gemmkit.get_arch() == "generic"
        gemmkit.set_arch(None)
        assert gemmkit.get_arch() == gemmkit.available_archs()[-1]
    finally:
        gemmkit.set_arch(before)
    assert gemmkit.get_arch() == before


# ---- GEMMKIT_ARCH ------------------------------------------------------------------------

ENV_PROBE = """
import gemmkit, numpy as np
cfg = gemmkit.show_config(print_out=False)
C = np.zeros((3, 3), np.float32)
gemmkit.sgemm('N', 'N', 3, 3, 2, 1.0, np.ones(6, np.float32), 2, np.ones(6, np.float32), 3, 0.0, C, 3)
assert (C == 2).all()
print(cfg['arch'], cfg['num_threads'], cfg['GEMMKIT_ARCH'])
"""


@pytest.mark.smoke
def test_env_arch_generic(tmp_path):
    out = run_python(ENV_PROBE, {"GEMMKIT_ARCH": "generic"}, tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr
    arch, _, env = out.stdout.split()
    assert arch == "generic" and env == "generic"


@pytest.mark.parametrize("name", [a for a in gemmkit.available_archs() if a != "generic"] + ["auto"])
def test_env_arch_each_available(name, tmp_path):
    out = run_python(ENV_PROBE, {"GEMMKIT_ARCH": name}, tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr
    expected = gemmkit.available_archs()[-1] if name == "auto" else name
    assert out.stdout.split()[0] == expected


@pytest.mark.smoke
@pytest.mark.parametrize("bad", ["bogus", "AVX512"])
def test_env_arch_bogus_fails_import(bad, tmp_path):
    code = """
    try:
        import gemmkit
    except ImportError as e:
        print("IMPORTERROR", e)
    else:
        print("IMPORTED", gemmkit.get_arch())
    """
    out = run_python(code, {"GEMMKIT_ARCH": bad}, tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("IMPORTERROR"), out.stdout
    assert "GEMMKIT_ARCH" in out.stdout and bad in out.stdout


def test_env_arch_unsupported_fails_import(tmp_path):
    unsupported = [a for a in ALL_ARCHS if a not in gemmkit.available_archs()]
    if not unsupported:
        # nothing to refuse on this CPU: every known path must import fine instead
        out = run_python("import gemmkit; print(gemmkit.get_arch())", {"GEMMKIT_ARCH": ALL_ARCHS[-1]},
                         tmp_path=tmp_path)
        assert out.returncode == 0 and out.stdout.strip() == ALL_ARCHS[-1], out.stderr
        return
    code = """
    try:
        import gemmkit
    except ImportError as e:
        print("IMPORTERROR", e)
    else:
        print("IMPORTED")
    """
    out = run_python(code, {"GEMMKIT_ARCH": unsupported[0]}, tmp_path=tmp_path)
    assert out.stdout.startswith("IMPORTERROR") and unsupported[0] in out.stdout, out.stdout + out.stderr


# ---- threads -----------------------------------------------------------------------------

@pytest.mark.smoke
def test_set_num_threads_round_trip():
    before = gemmkit.get_num_threads()
    try:
        for n in (1, 2, 3, 7, 1):
            gemmkit.set_num_threads(n)
            assert gemmkit.get_num_threads() == n
            assert gemmkit.show_config(print_out=False)["num_threads"] == n
    finally:
        gemmkit.set_num_threads(before)
    assert gemmkit.get_num_threads() == before


@pytest.mark.smoke
def test_env_num_threads(tmp_path):
    code = """
    import gemmkit
    a = gemmkit.get_num_threads()
    gemmkit.set_num_threads(5)
    b = gemmkit.get_num_threads()
    gemmkit.set_num_threads(0)      # <= 0 restores the default, i.e. GEMMKIT_NUM_THREADS
    c = gemmkit.get_num_threads()
    print(a, b, c)
    """
    for n in ("1", "3"):
        out = run_python(code, {"GEMMKIT_NUM_THREADS": n}, tmp_path=tmp_path)
        assert out.returncode == 0, out.stderr
        assert out.stdout.split() == [n, "5", n]


# GEMMKIT_NUM_THREADS is a whole number of threads, 1 .. the pool's maximum, blanks around it allowed (as
# OMP_NUM_THREADS); empty is unset; anything else warns at import and the default is used
@pytest.mark.parametrize("text,taken", [("2", 2), (" 2", 2), ("2 ", 2), ("", None), ("3abc", None), ("2.5", None),
                                        ("abc", None), ("0", None), ("-1", None), ("+2", None), ("0x2", None),
                                        ("99999999999999999999", None), ("100000", None), ("2 3", None)])
def test_env_num_threads_is_parsed_strictly(tmp_path, text, taken):
    code = """
    import warnings
    warnings.simplefilter("always")
    with warnings.catch_warnings(record=True) as w:
        import gemmkit
    n = gemmkit.get_num_threads()
    gemmkit.set_num_threads(0)
    print(n, gemmkit.get_num_threads(), len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else -1)
    print("|".join(str(x.message) for x in w if "GEMMKIT_NUM_THREADS" in str(x.message)))
    """
    out = run_python("import os\n" + textwrap.dedent(code), {"GEMMKIT_NUM_THREADS": text}, tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr
    counts, warned = out.stdout.split("\n")[:2]
    n, again, cpus = map(int, counts.split())
    assert n == again  # the default restored reads the variable the same way
    if taken is not None:
        assert n == taken and warned == "", out.stdout
    else:
        assert warned == "" if text == "" else repr(text) in warned and "default" in warned, out.stdout
        if cpus > 0:
            assert n == max(1, min(cpus, 256)), out.stdout  # the default: this process's CPUs


@pytest.mark.skipif(not hasattr(os, "sched_getaffinity"), reason="needs os.sched_getaffinity")
def test_default_threads_follow_affinity(tmp_path):
    code = """
    import os, gemmkit
    print(gemmkit.get_num_threads(), len(os.sched_getaffinity(0)))
    os.sched_setaffinity(0, {sorted(os.sched_getaffinity(0))[0]})
    gemmkit.set_num_threads(-1)
    print(gemmkit.get_num_threads())
    """
    out = run_python(code, tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr
    lines = out.stdout.split("\n")
    got, ncpu = lines[0].split()
    assert got == ncpu
    assert lines[1].strip() == "1"


def test_threads_give_correct_results_for_each_count():
    rng = np.random.default_rng(5)
    M = N = K = 256
    A = rng.standard_normal((M, K)).astype(np.float32)
    B = rng.standard_normal((K, N)).astype(np.float32)
    ref = A.astype(np.float64) @ B
    before = gemmkit.get_num_threads()
    try:
        for n in (1, 2, 3, 4):
            gemmkit.set_num_threads(n)
            C = np.empty((M, N), np.float32)
            gemmkit.sgemm('N', 'N', M, N, K, 1.0, A, K, B, N, 0.0, C, N)
            assert np.abs(C - ref).max() <= 4 * K * np.finfo(np.float32).eps * (np.abs(A) @ np.abs(B)).max()
    finally:
        gemmkit.set_num_threads(before)


def test_fork_after_pool_use(tmp_path):
    """The pool is reset in a forked child: a big (multi-threaded) call there must not hang."""
    if not hasattr(os, "fork"):
        pytest.skip("needs os.fork")
    code = """
    import os, numpy as np, gemmkit
    gemmkit.set_num_threads(2)
    A = np.ones((300, 300), np.float32); C = np.zeros((300, 300), np.float32)
    gemmkit.sgemm('N', 'N', 300, 300, 300, 1.0, A, 300, A, 300, 0.0, C, 300)
    pid = os.fork()
    if pid == 0:
        C[:] = 0
        gemmkit.sgemm('N', 'N', 300, 300, 300, 1.0, A, 300, A, 300, 0.0, C, 300)
        os._exit(0 if (C == 300).all() else 3)
    _, status = os.waitpid(pid, 0)
    print(os.waitstatus_to_exitcode(status))
    """
    out = run_python(code, tmp_path=tmp_path)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "0"


# ---- per-microarchitecture configurations --------------------------------------------------

CONFIGS = _core.configs()
AVX512_VNNI = ["avx2", "avx512", "avx512_vnni"]
AMX = AVX512_VNNI + ["amx_int8"]
AVX512 = ["avx2", "avx512"]
AVX2 = ["avx2"]
# The x86-64 configurations exist in x86-64 builds only (an aarch64 build has its own: tests/core/test_arm64.py).
x86_only = pytest.mark.skipif(not any(c["arch"] == "avx2" for c in CONFIGS), reason="a build without x86-64 kernels")

# (vendor, family, model, features) -> (arch, uarch); models from the vendors' revision guides (family 19h:
# Zen 3 00h-0Fh, 20h-5Fh; Zen 4 10h-1Fh Genoa/Stromboli, 60h-74h Raphael/Phoenix, 78h-7Bh Phoenix 2,
# A0h-AFh Bergamo/Siena; family 17h: Zen 1/+ 00h-2Fh, Zen 2 30h-3Fh Rome/Castle Peak, 47h, 60h-7Fh
# Renoir/Lucienne/Matisse, 84h-87h, 90h-AFh Van Gogh/Mendocino; family 1Ah: Zen 5).
SELECTION = [
    (("AMD", 0x19, 0x10, AVX512_VNNI), ("avx512_vnni", "zen4")),
    (("AMD", 0x19, 0x11, AVX512_VNNI), ("avx512_vnni", "zen4")),   # EPYC 9004 Genoa
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
    (("Intel", 0x6, 0x8f, AVX512_VNNI), ("avx512_vnni", "xeon_amx")),  # Sapphire Rapids, AMX not granted
    (("Intel", 0x6, 0xcf, AVX512_VNNI), ("avx512_vnni", "xeon_amx")),  # Emerald Rapids, likewise
    (("Intel", 0x6, 0xad, AVX512_VNNI), ("avx512_vnni", "xeon_amx")),  # Granite Rapids
    (("Intel", 0x6, 0xae, AVX512_VNNI), ("avx512_vnni", "xeon_amx")),  # Granite Rapids-D
    (("Intel", 0x6, 0x6a, AVX512_VNNI), ("avx512_vnni", "any")),   # Ice Lake-SP: two load ports, no AVX512_BF16
    (("Intel", 0x6, 0xa7, AVX512_VNNI), ("avx512_vnni", "any")),   # Rocket Lake
    (("AMD", 0x19, 0x8f, AVX512_VNNI), ("avx512_vnni", "any")),    # the model number alone is not Intel's
    (("Intel", 0x6, 0xcf, AMX), ("avx512_amx", "any")),            # Emerald Rapids, AMX permitted
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
