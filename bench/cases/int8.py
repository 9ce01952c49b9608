"""int8 GEMM cases: gemmkit.gemm_u8s8s32 and gemm_s8s8s32 against oneDNN's and NumPy's integer matmul
(offsetc F, zero offsets, alpha 1, beta 0), exact results; squares 256..2048 and the skinny shapes."""
from .common import Case, Op, aligned_empty, check_rows, random, square_shapes
from .sgemm import SKINNY

ORDER = 40
NUMPY_INT32_MAX_MNK = 512 ** 3     # NumPy's integer matmul is a plain loop (0.2-1 GOP/s): cap it


class Int8Op(Op):
    name = group = "int8"
    title = "int8 GEMM (offsetc F, ao=bo=0, alpha=1, beta=0; 2·M·N·K ops)"
    unit = "GOP/s"
    peak_kind = "int8"
    columns = [("gk_u8", "gk u8s8s32"), ("dnnl_u8", "oneDNN u8s8s32"), ("gk_s8", "gk s8s8s32"),
               ("dnnl_s8", "oneDNN s8s8s32"), ("numpy", "NumPy int32 @")]
    ours = ["gk_u8", "gk_s8"]
    ratios = [("gk_u8", "dnnl_u8", "u8: gk/oneDNN"), ("gk_s8", "dnnl_s8", "s8: gk/oneDNN"),
              ("gk_u8", "numpy", "gk u8/NumPy")]
    footnote = ("NumPy int32 @ is NumPy's non-BLAS integer matmul on A.astype(int32), B.astype(int32) (conversion "
                f"not timed); run only for M·N·K ≤ {NUMPY_INT32_MAX_MNK} (it runs at 0.2-1 GOP/s). On CPUs without VNNI "
                "oneDNN's u8s8s32 multiplies with the saturating vpmaddubsw (pairs of u8·s8 products clamped to "
                "int16), so its results are not exact on full-range data (✗); gemmkit widens to int16 first.")

    def specs(self, ctx):
        return square_shapes(ctx, [256, 512, 1024, 2048], [256, 512], SKINNY)

    def build(self, ctx, spec):
        M, N, K = spec
        np, gk, dnnl = ctx.np, ctx.gemmkit, ctx.peers.dnnl
        tb = ctx.args.layout[1]
        Au, As = random(ctx, (M, K), np.uint8), random(ctx, (M, K), np.int8)
        B = random(ctx, (K, N) if tb == "N" else (N, K), np.int8)
        ldb, Bop = (N, B) if tb == "N" else (K, B.T)
        co = np.zeros(1, np.int32)
        outs = {k: aligned_empty(np, (M, N), np.int32) for k in ("gk_u8", "gk_s8")}
        fns = {"gk_u8": lambda: gk.gemm_u8s8s32("N", tb, "F", M, N, K, 1.0, Au, K, 0, B, ldb, 0, 0.0,
                                                outs["gk_u8"], N, co),
               "gk_s8": lambda: gk.gemm_s8s8s32("N", tb, "F", M, N, K, 1.0, As, K, 0, B, ldb, 0, 0.0,
                                                outs["gk_s8"], N, co)}
        if dnnl is not None:
            bn, pb, pco = tb.encode(), B.ctypes.data, co.ctypes.data
            for key, A, checked, raw in (("dnnl_u8", Au, dnnl.gemm_u8s8s32, dnnl.raw_u8s8s32),
                                         ("dnnl_s8", As, dnnl.gemm_s8s8s32, dnnl.raw_s8s8s32)):
                C = outs[key] = aligned_empty(np, (M, N), np.int32)
                checked("N", tb, "F", M, N, K, 1.0, A, K, 0, B, ldb, 0, 0.0, C, N, co)  # raises on bad arguments
                pa, pc = A.ctypes.data, C.ctypes.data
                fns[key] = (lambda raw=raw, pa=pa, pc=pc:
                            raw(b"N", bn, b"F", M, N, K, 1.0, pa, K, 0, pb, ldb, 0, 0.0, pc, N, pco))
        if M * N * K <= NUMPY_INT32_MAX_MNK:
            A32, B32 = Au.astype(np.int32), Bop.astype(np.int32)
            C3 = outs["numpy"] = aligned_empty(np, (M, N), np.int32)
            fns["numpy"] = lambda: np.matmul(A32, B32, out=C3)

        def check(key, C):
            return check_rows(ctx, C, As if key.endswith("s8") else Au, Bop, K, exact=True)
        return Case(f"{M}×{N}×{K}", 2.0 * M * N * K, fns, outs, check, x=M if M == N == K else None,
                    bound=("stream", 2.0) if M == 1 else None)


OPS = [Int8Op()]
