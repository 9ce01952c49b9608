"""gemmkit.matmul against np.matmul, out= given: float32 and float64 squares 64..2048 and stacks of small
products (10 000 × 8³, 1 000 × 12³, 1 000 × 32³, 100 × 64³, 20 × 100³: sides that are and are not whole
vectors; NumPy runs one small BLAS call per matrix), and squares of complex64, complex128 and float16
(NumPy's float16 matmul is a plain loop: capped)."""
from .common import QUICK_SQUARES, Case, Op, aligned_empty, machine_epsilon, random, square_sizes

ORDER = 60
SQUARES = [64, 128, 256, 512, 1024, 2048]
SMALLER_SQUARES = [64, 256, 1024]          # complex and float16: the shape of the curve, not every point
STACKS = [(10000, 8), (1000, 12), (1000, 32), (100, 64), (20, 100)]
NUMPY_FLOAT16_MAX_N = 256                  # np.matmul on float16 runs at ~0.15 GFLOP/s (0.2 s at 256³)


class MatmulOp(Op):
    group = "matmul"
    columns = [("gemmkit", "gemmkit.matmul"), ("numpy", "np.matmul")]

    def __init__(self, dtype, peak_kind, squares=SQUARES, stacks=STACKS, numpy_max_n=None):
        self.dtype = dtype
        self.name = f"matmul {dtype}"
        complex_note = ", 8 flops per complex multiply-add" if dtype.startswith("complex") else ""
        self.title = f"`gemmkit.matmul` vs `np.matmul`, {dtype}, out= given{complex_note}"
        self.peak_kind = peak_kind
        self.squares, self.stacks, self.numpy_max_n = squares, stacks, numpy_max_n
        self.flops_per_muladd = 8 if dtype.startswith("complex") else 2
        if numpy_max_n is not None:
            self.footnote = f"np.matmul runs only up to {numpy_max_n}³ on {dtype} (a plain loop, not BLAS)."

    def specs(self, ctx):
        return [(1, n) for n in square_sizes(ctx, self.squares, QUICK_SQUARES)] + list(self.stacks)

    def label(self, spec):
        b, n = spec
        return f"{n}×{n}×{n}" if b == 1 else f"{b} × {n}×{n}×{n}"

    def build(self, ctx, spec):
        np, gk = ctx.np, ctx.gemmkit
        b, n = spec
        shape = (n, n) if b == 1 else (b, n, n)
        A, B = random(ctx, shape, self.dtype), random(ctx, shape, self.dtype)
        outs = {"gemmkit": aligned_empty(np, shape, self.dtype)}
        fns = {"gemmkit": lambda: gk.matmul(A, B, out=outs["gemmkit"])}
        if self.numpy_max_n is None or n <= self.numpy_max_n:
            outs["numpy"] = aligned_empty(np, shape, self.dtype)
            fns["numpy"] = lambda: np.matmul(A, B, out=outs["numpy"])
        picks = np.unique(ctx.rng.integers(0, b, size=min(b, 8)))
        wide = np.complex128 if np.dtype(self.dtype).kind == "c" else np.float64

        def check(key, C):
            """Sampled matrices of the stack against a float64 (complex128) reference."""
            A3, B3, C3 = (x.reshape((-1, n, n))[picks] for x in (A, B, C))
            err = float(np.max(np.abs(C3.astype(wide) - A3.astype(wide) @ B3.astype(wide))))
            tol = 8 * machine_epsilon(np, self.dtype) * n + 1e-12
            return None if err <= tol else f"max |err| {err:.3g} > {tol:.3g}"
        return Case(self.label(spec), self.flops_per_muladd * b * n ** 3, fns, outs, check,
                    x=n if b == 1 else None)


OPS = [MatmulOp("float32", "fp32"), MatmulOp("float64", "fp64"),
       MatmulOp("complex64", "fp32", SMALLER_SQUARES, stacks=()),
       MatmulOp("complex128", "fp64", SMALLER_SQUARES, stacks=()),
       MatmulOp("float16", "fp32", SMALLER_SQUARES, stacks=(), numpy_max_n=NUMPY_FLOAT16_MAX_N)]
