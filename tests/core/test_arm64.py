"""The aarch64 paths (neon, dotprod, i8mm): dispatch by the OS's CPU feature bits and CPU family, the kernels
each path runs, and exact int8 on every tile edge and k-group parity; skipped on builds without them."""
import numpy as np
import pytest

import gemmkit
from gemmkit import _core

ARM_BUILD = any(c["arch"] == "neon" for c in _core.configs())
pytestmark = pytest.mark.skipif(not ARM_BUILD, reason="a build without the aarch64 kernels")

KERNELS = {  # path -> (sgemm, dgemm, int8) kernel names
    "neon": ("ukernel_sgemm_neon_8x12", "ukernel_dgemm_neon_8x6", "ukernel_i8_generic_4x16"),
    "dotprod": ("ukernel_sgemm_neon_8x12", "ukernel_dgemm_neon_8x6", "ukernel_i8_dotprod_8x12"),
    "i8mm": ("ukernel_sgemm_neon_8x12", "ukernel_dgemm_neon_8x6", "ukernel_i8_i8mm_8x8"),
}
ARM_PATHS = [a for a in ("neon", "dotprod", "i8mm") if a in gemmkit.available_archs()]
SENTINEL_C = -7777.25  # fills the padding around C: must survive every call


@pytest.mark.parametrize("cpu,expected", [
    (("other", 0x41, 0xd0c, ["neon", "dotprod"]), ("dotprod", "any")),          # Neoverse N1
    (("other", 0x41, 0xd40, ["neon", "dotprod", "i8mm", "bf16"]), ("i8mm", "any")),  # Neoverse V1
    (("other", 0x41, 0xd08, ["neon"]), ("neon", "any")),                        # Cortex-A72
    (("other", 0x61, 0x32, ["neon", "dotprod", "i8mm", "bf16"]), ("dotprod", "apple")),  # Apple M2: not i8mm
    (("other", 0x61, 0x22, ["neon", "dotprod"]), ("dotprod", "apple")),          # Apple M1
    (("other", 0, 0, []), ("generic", "any")),
])
def test_selection_by_features_and_family(cpu, expected):
    assert _core.config_for_cpu(*cpu) == expected


def test_features_come_from_the_os():
    feats = _core.cpu_features()
    assert feats["neon"], "every aarch64 CPU has Advanced SIMD"
    assert not any(feats[f] for f in ("avx2", "avx512", "avx512_vnni", "avx_vnni"))
    for path, need in (("neon", "neon"), ("dotprod", "dotprod"), ("i8mm", "i8mm")):
        assert (path in gemmkit.available_archs()) == feats[need], path


@pytest.mark.parametrize("path", ARM_PATHS)
def test_kernels_of_each_path(path):
    with gemmkit.use_arch(path):
        cfg = gemmkit.show_config(print_out=False)
        assert (cfg["sgemm"]["kernel"], cfg["dgemm"]["kernel"], cfg["int8"]["kernel"]) == KERNELS[path]


@pytest.mark.parametrize("path", ARM_PATHS)
@pytest.mark.parametrize("s8", [False, True], ids=["u8s8", "s8s8"])
def test_int8_every_edge_and_group_parity(path, s8, rng):
    """Every M, N residue of the 8 x 12 / 8 x 8 tiles, K of odd and even 4-byte group counts and partial
    groups, extreme bytes, zero points and every offsetc: exact against int64."""
    gemm = gemmkit.gemm_s8s8s32 if s8 else gemmkit.gemm_u8s8s32
    lo, hi = (-128, 127) if s8 else (0, 255)
    with gemmkit.use_arch(path):
        for M, N, K in ((1, 1, 1), (7, 11, 3), (8, 12, 4), (9, 13, 8), (15, 23, 12), (16, 24, 20), (17, 25, 37),
                        (24, 36, 257), (3, 40, 1030)):
            for offsetc in "FCR":
                A = rng.integers(lo, hi + 1, (M, K)).astype(np.int8 if s8 else np.uint8)
                A.flat[:3] = hi
                B = rng.integers(-128, 128, (K, N)).astype(np.int8)
                B.flat[:3] = -128
                ao, bo = (int(rng.integers(lo, hi + 1)), int(rng.integers(-128, 128)))
                n_co = {"F": 1, "C": M, "R": N}[offsetc]
                co = rng.integers(-1000, 1000, n_co).astype(np.int32)
                C = np.zeros((M, N), np.int32)
                gemm("N", "N", offsetc, M, N, K, 1.0, A, K, ao, B, N, bo, 0.0, C, N, co)
                ref = (A.astype(np.int64) - ao) @ (B.astype(np.int64) - bo)
                ref += co[0] if offsetc == "F" else (co[:, None] if offsetc == "C" else co[None, :])
                assert np.array_equal(C, ref), (path, M, N, K, offsetc)


@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_float_tiles_and_k_blocks(op):
    """The 8 x 12 / 8 x 6 NEON tiles: M, N around the tile and its multiples, K across the 256-deep k block,
    every transpose, alpha / beta (beta 0 over NaN: C is not read), against float64."""
    if "neon" not in ARM_PATHS:
        pytest.skip("no neon path")
    dt = np.float32 if op == "sgemm" else np.float64
    gemm = getattr(gemmkit, op)
    nr = 12 if op == "sgemm" else 6
    rng = np.random.default_rng(11)
    eps = np.finfo(dt).eps
    with gemmkit.use_arch("neon"):
        for M in (1, 7, 8, 9, 17):
            for N in (1, nr - 1, nr, nr + 1, 2 * nr + 1):
                for K in (1, 5, 300):
                    for ta, tb in (("N", "N"), ("T", "N"), ("N", "T"), ("T", "T")):
                        alpha, beta = (1.5, 0.0) if K != 5 else (-0.5, 2.0)
                        A = rng.uniform(-1, 1, (M, K) if ta == "N" else (K, M)).astype(dt)
                        B = rng.uniform(-1, 1, (K, N) if tb == "N" else (N, K)).astype(dt)
                        C0 = rng.uniform(-1, 1, (M, N + 2)).astype(dt)
                        if beta == 0.0:
                            C0[:, :N] = np.nan
                        C = C0.copy()
                        gemm(ta, tb, M, N, K, alpha, A, A.shape[1], B, B.shape[1], beta, C, N + 2)
                        Aop = (A if ta == "N" else A.T).astype(np.float64)
                        Bop = (B if tb == "N" else B.T).astype(np.float64)
                        ref = alpha * (Aop @ Bop) + (beta * C0[:, :N].astype(np.float64) if beta else 0.0)
                        tol = (4 + K) * eps * (abs(alpha) * np.abs(Aop) @ np.abs(Bop) + 2) + eps
                        assert np.all(np.abs(C[:, :N] - ref) <= tol), (op, M, N, K, ta, tb)
                        assert np.array_equal(C[:, N:], C0[:, N:]), "wrote past N"


@pytest.mark.parametrize("op", ["sgemm", "dgemm"])
def test_float_tiles_every_row_remainder(op):
    """Every row remainder 1..7 of the 8-row NEON tiles (ukernel_rows, straight into C): M = 64 + r (past the tiny
    and GEMV paths) and a skinny M = r (3..7, K past 64), N around the 12 / 6 columns (full-width panels and an
    edge one), K of one step, a few and across the 256-deep k block (later blocks add to C), alpha / beta special
    values, beta 0 over NaN (C not read), C inside a padded parent whose sentinels must stay, every transpose, 1 or
    2 threads; against float64, and each edge row bit for bit the same row computed inside a whole tile."""
    if "neon" not in ARM_PATHS:
        pytest.skip("no neon path")
    dt = np.float32 if op == "sgemm" else np.float64
    gemm = getattr(gemmkit, op)
    mr, nr, pad = 8, (12 if op == "sgemm" else 6), 3
    eps = np.finfo(dt).eps
    rng = np.random.default_rng(25)
    # (N, K, alpha, beta, NaN in C)
    combos = [(nr, 1, 1.0, 0.0, True), (nr + 1, 7, -0.5, 0.0, True), (2 * nr + 1, 257, 1.0, 1.0, False),
              (nr, 300, 0.75, -1.5, False), (2 * nr, 3, 2.0, 0.5, False), (nr + 1, 513, 1.0, 0.0, True),
              (nr, 5, 0.0, 2.5, False)]
    cases = [(64 + r, *combos[(r + i) % len(combos)]) for r in range(1, mr) for i in range(len(combos))]
    cases += [(r, 2 * nr + 1, 129, -1.0, 0.0, True) for r in range(3, mr)]
    cases += [(r, nr, 257, 0.5, -1.0, False) for r in range(3, mr)]

    def run(ta, tb, A, B, C0, M, N, K, alpha, beta):
        parent = np.full((M + 1, N + pad), SENTINEL_C, dt)
        parent[:M, :N] = C0
        gemm(ta, tb, M, N, K, alpha, A, A.shape[1], B, B.shape[1], beta, parent, N + pad)
        outside = np.ones(parent.shape, bool)
        outside[:M, :N] = False
        assert np.all(parent[outside] == SENTINEL_C), ("wrote outside C", op, M, N, K, ta, tb)
        return parent[:M, :N]

    with gemmkit.use_arch("neon"):
        for i, (M, N, K, alpha, beta, nan) in enumerate(cases):
            ta, tb = ("NN", "TN", "NT", "TT")[i % 4]
            gemmkit.set_num_threads(1 + i % 2)
            Mf = -(-M // mr) * mr                       # the same rows inside whole tiles
            Af = rng.uniform(-1, 1, (Mf, K)).astype(dt)
            B = rng.uniform(-1, 1, (K, N) if tb == "N" else (N, K)).astype(dt)
            Cf = rng.uniform(-1, 1, (Mf, N)).astype(dt)
            if nan:
                Cf[:] = np.nan
            A = Af[:M] if ta == "N" else np.ascontiguousarray(Af[:M].T)
            got = run(ta, tb, A, B, Cf[:M], M, N, K, alpha, beta)
            whole = run(ta, tb, Af if ta == "N" else np.ascontiguousarray(Af.T), B, Cf, Mf, N, K, alpha, beta)
            ctx = (op, M, N, K, ta, tb, alpha, beta)
            Aop, Bop = Af[:M].astype(np.float64), (B if tb == "N" else B.T).astype(np.float64)
            cterm = beta * Cf[:M].astype(np.float64) if beta else 0.0
            ref = alpha * (Aop @ Bop) + cterm
            tol = (4 + K) * eps * (abs(alpha) * (np.abs(Aop) @ np.abs(Bop)) + np.abs(cterm)) + eps
            assert np.all(np.abs(got - ref) <= tol), ctx
            assert np.array_equal(got, whole[:M]), ("edge rows differ from the whole tile's", *ctx)
