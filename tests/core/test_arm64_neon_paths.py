"""The aarch64 NEON kernels beyond the packed tiles: GEMV on Advanced SIMD vectors and the 16-byte quantized add,
compact enough for the emulated lane (.ci/arm64-lane); skipped on builds without the aarch64 kernels."""
import numpy as np
import pytest

import gemmkit
from gemmkit import _core, quant

ARM_BUILD = any(c["arch"] == "neon" for c in _core.configs())
pytestmark = pytest.mark.skipif(not ARM_BUILD, reason="a build without the aarch64 kernels")
ARM_PATHS = [a for a in ("neon", "dotprod", "i8mm") if a in gemmkit.available_archs()]
GEMM = {np.float32: gemmkit.sgemm, np.float64: gemmkit.dgemm}
SENTINEL = -7.0


def test_quantized_add_kernel_of_every_arm_config():
    """Every aarch64 configuration (neon, dotprod, i8mm, the Apple one) names the NEON quantized add."""
    arm = [i for i, c in enumerate(_core.configs()) if c["arch"] in ("neon", "dotprod", "i8mm")]
    assert len(arm) == 4
    for i in arm:
        assert _core.config_fields(i)["qadd"] == "qadd_neon_16bytes", _core.configs()[i]


def _gemv_case(rng, dtype, M, N, K, ta, tb, beta, pad=3):
    """One product against float64, on operands inside padded parents (a write outside C shows)."""
    def padded(rows, cols):
        parent = np.full((rows + 1, cols + pad), SENTINEL, dtype)
        parent[:rows, :cols] = rng.uniform(-1, 1, (rows, cols))
        return parent
    pa = padded(*((M, K) if ta == "N" else (K, M)))
    pb = padded(*((K, N) if tb == "N" else (N, K)))
    pc = padded(M, N)
    if beta == 0:
        pc[:M, :N] = np.nan  # beta == 0: C is not read
    before = pc.copy()
    alpha = 0.75
    GEMM[dtype](ta, tb, M, N, K, alpha, pa, pa.shape[1], pb, pb.shape[1], beta, pc, pc.shape[1])
    A = pa[:pa.shape[0] - 1, :pa.shape[1] - pad].astype(np.float64)
    B = pb[:pb.shape[0] - 1, :pb.shape[1] - pad].astype(np.float64)
    A, B = (A if ta == "N" else A.T), (B if tb == "N" else B.T)
    ref = alpha * (A @ B) + (beta * before[:M, :N].astype(np.float64) if beta else 0.0)
    eps = np.finfo(dtype).eps
    tol = (4 + np.sqrt(K)) * eps * (np.abs(A) @ np.abs(B) * alpha + abs(beta)) + eps
    err = np.abs(pc[:M, :N] - ref)
    assert np.all(err <= tol), (dtype.__name__, M, N, K, ta, tb, beta, float(err.max()))
    outside = np.ones(pc.shape, bool)
    outside[:M, :N] = False
    assert np.array_equal(pc[outside], before[outside]), "wrote outside C"


@pytest.mark.parametrize("path", ARM_PATHS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=["f32", "f64"])
def test_gemv_vector_lanes_and_edges(path, dtype, rng):
    """1 or 2 rows / columns of C (the GEMV kernels), the long side around the 4 / 2 lanes, cache lines
    (16 floats, 8 doubles) and the 8-row passes, every transpose, beta 0 over NaN and beta != 0."""
    with gemmkit.use_arch(path):
        for few in (1, 2):
            for long_ in (1, 3, 4, 5, 9, 17, 33, 130):
                for ta, tb in ("NN", "NT", "TN", "TT"):
                    beta = 0.0 if (long_ + few) % 2 else 0.5
                    _gemv_case(rng, dtype, few, long_, long_ + 2, ta, tb, beta)   # few rows: gemv_rows / dots
                    _gemv_case(rng, dtype, long_, few, long_ + 1, ta, tb, beta)   # few columns


@pytest.mark.parametrize("path", ARM_PATHS)
@pytest.mark.parametrize("formula", ["directml", "onnxruntime"])
@pytest.mark.parametrize("layout", ["flat", "a_repeated", "b_repeated"])
def test_quantized_add_same_bytes_as_portable(path, formula, layout):
    """Every pair of input bytes, each signedness and scales that take the fixed-point, divide, reciprocal
    and fma forms: the NEON kernel's bytes are the portable kernel's (the contract of every ISA)."""
    rng = np.random.default_rng(25)
    scales = [(0.02, 0.03, 0.05), (0.25, 0.125, 0.5), (0.5, 1.0, 1.0), (1 / 255, 2 / 255, 3 / 255),
              (0.0173, 0.0291, 0.0437), (3.7, 0.9, 1e-6)]
    for i, (sa, sb, sc) in enumerate(scales):
        adt, bdt, odt = (np.uint8, np.int8)[i % 2], (np.uint8, np.int8)[(i // 2) % 2], (np.uint8, np.int8)[(i // 3) % 2]
        if formula == "onnxruntime":
            bdt = odt = adt
        va = np.arange(256, dtype=np.uint8).view(adt)
        vb = np.arange(256, dtype=np.uint8).view(bdt)
        if layout == "flat":   # 2^17 + 9 outputs: every pair, then a tail shorter than a vector
            a = np.concatenate([np.tile(np.repeat(va, 256), 2), va[:9]])
            b = np.concatenate([np.tile(vb, 512), vb[100:109]])
        elif layout == "a_repeated":
            a, b = va.reshape(256, 1), np.tile(vb, 2)[:509].reshape(1, 509)
        else:
            a, b = np.tile(va, 2)[:509].reshape(1, 509), vb.reshape(256, 1)
        lo = -128 if adt == np.int8 else 0
        za, zb = int(rng.integers(lo, lo + 256)), int(rng.integers(-128 if bdt == np.int8 else 0, 128))
        zc = odt(rng.integers(-128 if odt == np.int8 else 0, 128))
        with gemmkit.use_arch("generic"):
            want = quant.quantized_add(a, sa, za, b, sb, zb, sc, zc, formula=formula)
        with gemmkit.use_arch(path):
            got = quant.quantized_add(a, sa, za, b, sb, zb, sc, zc, formula=formula)
        np.testing.assert_array_equal(got, want, err_msg=f"{sa} {sb} {sc} {za} {zb} {zc} {adt} {bdt} {odt}")
