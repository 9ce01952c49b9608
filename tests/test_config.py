"""Configuration: show_config, kernel path selection (use_arch / set_arch / GEMMKIT_ARCH), threads."""
import os
import subprocess
import sys
import tempfile
import textwrap

import numpy as np
import pytest

import gemmkit

ALL_ARCHS = ("generic", "neon", "dotprod", "i8mm", "avx2", "avx_vnni", "avx512", "avx512_vnni")
# which cpu_features flag each path needs
NEEDS = {"generic": [], "avx2": ["avx2"], "avx_vnni": ["avx2", "avx_vnni"], "avx512": ["avx512"],
         "avx512_vnni": ["avx512", "avx512_vnni"], "neon": ["neon"], "dotprod": ["neon", "dotprod"],
         "i8mm": ["neon", "i8mm"]}


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
    cfg = gemmkit.show_config()
    out = capsys.readouterr().out
    assert isinstance(cfg, dict)
    assert cfg["arch"] in out
    assert cfg["sgemm"]["kernel"] in out and cfg["int8"]["kernel"] in out
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


@pytest.mark.parametrize("bad", ["2", 2.0, None, True])
def test_set_num_threads_type_error(bad):
    before = gemmkit.get_num_threads()
    with pytest.raises(TypeError):
        gemmkit.set_num_threads(bad)
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
