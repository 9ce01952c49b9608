"""gemmkit.matmul against np.matmul on integer and bool arrays (NumPy's modular arithmetic, bit for bit), out=
given: squares 256..2048 of every integer dtype, and bool dense (half true) and sparse (1 % true: NumPy's loop
stops at a row's first true pair, so its speed depends on the data). np.matmul on integers is a plain loop."""
from .common import Case, Op, aligned_empty, square_sizes

ORDER = 61
DEFAULT = False           # np.matmul's integer loop takes minutes over every dtype: only with --only matmul_int
SQUARES = [256, 512, 1024, 2048]
QUICK_SQUARES = [256]
DTYPES = ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64", "bool", "bool 1%"]
NUMPY_MAX_N = 1024        # np.matmul's integer loop: seconds per call above this
CHECK_ROWS = 8            # rows compared with np.matmul where np.matmul does not run whole


def operand(ctx, shape, name):
    """Random entries: the dtype's full range; bool half true, or 1 % ('bool 1%')."""
    np = ctx.np
    if name.startswith("bool"):
        return ctx.rng.random(shape) < (0.01 if name.endswith("%") else 0.5)
    info = np.iinfo(name)
    a = aligned_empty(np, shape, name)
    a[...] = ctx.rng.integers(info.min, info.max, size=shape, dtype=name, endpoint=True)
    return a


class IntMatmulOp(Op):
    group = "matmul_int"
    unit = "GOP/s"
    peak_kind = None
    columns = [("gemmkit", "gemmkit.matmul"), ("numpy", "np.matmul")]

    def __init__(self, name):
        self.dtype_name = name
        self.name = f"matmul {name}"
        self.title = f"`gemmkit.matmul` vs `np.matmul`, {name}, out= given, 2 ops per multiply-add"
        self.footnote = (f"np.matmul runs up to {NUMPY_MAX_N}³ (a plain loop); above, {CHECK_ROWS} sampled rows "
                         f"of gemmkit's result are compared with it. Results bit for bit equal to np.matmul's.")

    def specs(self, ctx):
        return square_sizes(ctx, SQUARES, QUICK_SQUARES)

    def label(self, n):
        return f"{n}×{n}×{n}"

    def build(self, ctx, n):
        np, gk = ctx.np, ctx.gemmkit
        A, B = operand(ctx, (n, n), self.dtype_name), operand(ctx, (n, n), self.dtype_name)
        dtype = A.dtype
        outs = {"gemmkit": aligned_empty(np, (n, n), dtype)}
        fns = {"gemmkit": lambda: gk.matmul(A, B, out=outs["gemmkit"])}
        if n <= NUMPY_MAX_N:
            outs["numpy"] = aligned_empty(np, (n, n), dtype)
            fns["numpy"] = lambda: np.matmul(A, B, out=outs["numpy"])
        rows = np.unique(ctx.rng.integers(0, n, size=CHECK_ROWS))

        def check(key, C):
            """Bit for bit against np.matmul on sampled rows."""
            want = np.matmul(A[rows], B)
            bad = int(np.count_nonzero(C[rows] != want))
            return None if bad == 0 else f"{bad} entries differ from np.matmul"
        return Case(self.label(n), 2 * n ** 3, fns, outs, check, x=n)


OPS = [IntMatmulOp(name) for name in DTYPES]
