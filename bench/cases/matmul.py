"""gemmkit.matmul against np.matmul, float32 and float64: squares 64..2048 and stacks of small products
(10 000 × 8×8×8, 1 000 × 32×32×32), which NumPy runs one small BLAS call (or loop) per matrix."""
from .common import QUICK_SQUARES, Case, Op, aligned_empty, random

ORDER = 60
SQUARES = [64, 128, 256, 512, 1024, 2048]
STACKS = [(10000, 8), (1000, 32)]


class MatmulOp(Op):
    group = "matmul"
    columns = [("gemmkit", "gemmkit.matmul"), ("numpy", "np.matmul")]

    def __init__(self, dtype, peak_kind):
        self.dtype = dtype
        self.name = f"matmul {dtype}"
        self.title = f"`gemmkit.matmul` vs `np.matmul`, {dtype}, out= given"
        self.peak_kind = peak_kind

    def specs(self, ctx):
        a = ctx.args
        sq = [int(s) for s in a.sizes.split(",") if s] if a.sizes else (QUICK_SQUARES if a.quick else SQUARES)
        return [(1, n) for n in sq] + STACKS

    def label(self, spec):
        b, n = spec
        return f"{n}×{n}×{n}" if b == 1 else f"{b} × {n}×{n}×{n}"

    def build(self, ctx, spec):
        np, gk = ctx.np, ctx.gemmkit
        b, n = spec
        shape = (n, n) if b == 1 else (b, n, n)
        A, B = random(ctx, shape, self.dtype), random(ctx, shape, self.dtype)
        outs = {k: aligned_empty(np, shape, self.dtype) for k in ("gemmkit", "numpy")}
        fns = {"gemmkit": lambda: gk.matmul(A, B, out=outs["gemmkit"]),
               "numpy": lambda: np.matmul(A, B, out=outs["numpy"])}
        picks = np.unique(ctx.rng.integers(0, b, size=min(b, 8)))

        def check(key, C):
            """Sampled matrices of the stack against a float64 reference."""
            A3, B3, C3 = (x.reshape((-1, n, n))[picks] for x in (A, B, C))
            err = float(np.max(np.abs(C3 - A3.astype(np.float64) @ B3.astype(np.float64))))
            tol = 8 * float(np.finfo(self.dtype).eps) * n + 1e-12
            return None if err <= tol else f"max |err| {err:.3g} > {tol:.3g}"
        return Case(self.label(spec), 2.0 * b * n ** 3, fns, outs, check, x=n if b == 1 else None)


OPS = [MatmulOp("float32", "fp32"), MatmulOp("float64", "fp64")]
