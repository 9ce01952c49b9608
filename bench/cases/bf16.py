"""bfloat16 GEMM cases: gemmkit.gemm_bf16bf16f32 against oneDNN's dnnl_gemm_bf16bf16f32 and MKL's
cblas_gemm_bf16bf16f32 (bfloat16 A and B, float32 C), with gemmkit's sgemm on the same values beside them.

Squares 256, 1024 and 4096 (4096 left out with --quick), then x @ W^T with W 4096 × 4096 stored N × K (transb
'T', as a linear layer keeps its weights) at M = 1, 16, 128 (left out with --quick / --no-skinny). The
fraction of peak is of the widest bf16 unit the peak probe finds (AMX-BF16, AVX512_BF16); without one it is of
the fp32 FMA peak, which is what a kernel that widens bfloat16 to float32 can reach. Needs ml_dtypes."""
from .common import Case, Op, aligned_empty, check_rows, random, square_sizes

ORDER = 45
SQUARES = [256, 1024, 4096]
QUICK_SQUARES = [256]
LINEAR = [(m, 4096, 4096) for m in (1, 16, 128)]
# Below AVX-512 oneDNN's dnnl_gemm_bf16bf16f32 is its reference loop (ref_gemm_bf16bf16f32), minutes per call
# at 4096³: there it runs only up to this M·N·K.
ONEDNN_REF_MAX_MNK = 1024 ** 3


def onednn_is_reference(dnnl):
    """Whether oneDNN's bf16 GEMM is its reference loop here: its effective ISA is below AVX-512."""
    return not dnnl.effective_isa().startswith(("avx512", "avx10"))


def bfloat16(np):
    """ml_dtypes' bfloat16 as a NumPy dtype, or None when ml_dtypes is not installed."""
    try:
        import ml_dtypes
    except ImportError:
        return None
    return np.dtype(ml_dtypes.bfloat16)


class Bf16Op(Op):
    name = group = "bf16"
    title = "bfloat16 GEMM (bfloat16 A, B; float32 C; alpha=1, beta=0)"
    peak_kind = "bf16"
    columns = [("gemmkit", "gemmkit bf16bf16f32"), ("onednn", "oneDNN bf16bf16f32"),
               ("mkl", "MKL bf16bf16f32"), ("gk_sgemm", "gemmkit sgemm")]
    ratios = [("gemmkit", ("onednn", "mkl"), "gk/best bf16 peer")]

    @property
    def footnote(self):
        return ("Squares use --layout; the 4096-wide rows are x @ W^T (transb 'T', W stored 4096 × 4096). "
                "gemmkit sgemm: the same values as float32 arrays (twice the bytes), for what the bfloat16 path "
                "costs or saves against the float path. gk/best bf16 peer: against the faster of oneDNN and MKL "
                "in that row. Results checked on sampled rows against a float64 product of the same bfloat16 "
                "values, within the float32 bound.")

    def specs(self, ctx):
        if bfloat16(ctx.np) is None:
            ctx.notes.append(f"{self.name}: left out, ml_dtypes is not installed (pip install ml_dtypes)")
            return []
        a = ctx.args
        squares = [(n, n, n, a.layout[1]) for n in square_sizes(ctx, SQUARES, QUICK_SQUARES)]
        return squares + ([] if a.quick or a.no_skinny else [(m, n, k, "T") for m, n, k in LINEAR])

    def label(self, spec):
        M, N, K, tb = spec
        return f"{M}×{N}×{K}" + (" Wᵀ" if (M, N, K) in LINEAR else "")

    def build(self, ctx, spec):
        np, gk, peers = ctx.np, ctx.gemmkit, ctx.peers
        M, N, K, tb = spec
        bf16 = bfloat16(np)
        A = random(ctx, (M, K), bf16)
        B = random(ctx, (K, N) if tb == "N" else (N, K), bf16)
        ldb, Bop = (N, B) if tb == "N" else (K, B.T)
        outs = {k: aligned_empty(np, (M, N), np.float32) for k in ("gemmkit", "gk_sgemm")}
        A32, B32 = A.astype(np.float32), B.astype(np.float32)
        fns = {"gemmkit": lambda: gk.gemm_bf16bf16f32("N", tb, M, N, K, 1.0, A, K, B, ldb, 0.0, outs["gemmkit"], N),
               "gk_sgemm": lambda: gk.sgemm("N", tb, M, N, K, 1.0, A32, K, B32, ldb, 0.0, outs["gk_sgemm"], N)}
        dnnl = peers.dnnl
        if dnnl is not None and dnnl.has_bf16 and onednn_is_reference(dnnl):
            ctx.notes.append(f"{self.name}: oneDNN's effective ISA is {dnnl.effective_isa()}, where its "
                             "dnnl_gemm_bf16bf16f32 is the reference loop (ref_gemm_bf16bf16f32): run only up to "
                             f"M·N·K = {round(ONEDNN_REF_MAX_MNK ** (1 / 3))}³")
            if M * N * K > ONEDNN_REF_MAX_MNK:
                dnnl = None
        if dnnl is not None and dnnl.has_bf16:
            C = outs["onednn"] = aligned_empty(np, (M, N), np.float32)
            dnnl.gemm_bf16bf16f32("N", tb, M, N, K, 1.0, A, K, B, ldb, 0.0, C, N)   # raises on bad arguments
            raw, pa, pb, pc, bn = dnnl.raw_bf16bf16f32, A.ctypes.data, B.ctypes.data, C.ctypes.data, tb.encode()
            fns["onednn"] = lambda: raw(b"N", bn, M, N, K, 1.0, pa, K, pb, ldb, 0.0, pc, N)
        elif dnnl is not None and not dnnl.has_bf16:
            ctx.notes.append(f"{self.name}: {dnnl.path} does not export dnnl_gemm_bf16bf16f32: no oneDNN column")
        if peers.mkl is not None and peers.mkl.has_bf16:
            C = outs["mkl"] = aligned_empty(np, (M, N), np.float32)
            fns["mkl"] = peers.mkl.bound_bf16("N", tb, M, N, K, A, K, B, ldb, C, N)

        def check(key, C):
            return check_rows(ctx, C, A32 if key == "gk_sgemm" else A, Bop, K)
        return Case(self.label(spec), 2.0 * M * N * K, fns, outs, check, x=M if M == N == K else None,
                    bound=("stream", 1.0) if M == 1 else None)   # B's bfloat16 read once: 2 ops per 2 bytes


OPS = [Bf16Op()]
