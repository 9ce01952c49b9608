"""What every cases module builds on: the Op class (one table: its cases, libraries, ratios and peak), the
Case it times, aligned random operands, the result check, and the BLAS-3 case shared by s/d/c/z gemm.
"""
import contextlib

from .. import report
from ..timing import Meas, timed

SQUARES = [64, 128, 256, 512, 1024, 2048, 4096]
QUICK_SQUARES = [64, 128, 256, 512]
MEMORY_BOUND_MARK = "ᵐ"


class Case:
    """One timed problem: key -> no-argument callable (fns), key -> output array (outs), check(key, out) ->
    None or what is wrong, the operation count, x (a size for the plot's axis) and, for memory-bound shapes,
    the peak to compare with: ('stream', ops per byte read). unchecked: keys of references that compute no
    product (a plain read of the same bytes), which have no output to check."""

    def __init__(self, label, ops, fns, outs=None, check=None, x=None, bound=None, unchecked=()):
        self.label, self.ops, self.fns = label, ops, fns
        self.outs = {} if outs is None else outs   # the same dict: fns may fill it (keeping_result)
        self.check, self.x, self.bound = check, x, bound
        self.unchecked = tuple(unchecked)


class Op:
    """One table of the report. Subclasses (or instances) set name, group (the --only key: the module),
    title, unit, peak_kind ('fp32', 'fp64', 'int8' or None), columns [(key, header)], ours (gemmkit's keys)
    and implement specs(ctx) (cheap: one entry per case, for the progress bar) and build(ctx, spec) -> Case.
    ratios: [(key, peer key, header)]; by default gemmkit's first key against every peer column. A tuple of peer
    keys stands for the fastest of those present in each row (gemmkit against the best peer).
    footnote: text under the table; other_processes: True when the libraries compute in other processes."""
    name = group = title = "?"
    unit = "GFLOP/s"
    peak_kind = None
    columns = []
    ours = ["gemmkit"]
    ratios = None
    footnote = None
    other_processes = False   # True: the work runs in other processes (timed on the wall clock)

    def specs(self, ctx):
        raise NotImplementedError

    def build(self, ctx, spec):
        raise NotImplementedError

    def label(self, spec):
        return spec if isinstance(spec, str) else "×".join(map(str, spec))

    def ratio_pairs(self, present):
        if self.ratios is not None:
            return [r for r in self.ratios if r[0] in present and set(_keys(r[1])) & present]
        head = dict(self.columns)
        g = self.ours[0]
        return [(g, k, f"gk/{head[k]}") for k, _ in self.columns if k not in self.ours and k in present]

    def run(self, ctx, out, tick):
        """Time every case, then write the table: rates, ratios, % of peak (nothing when it has no cases)."""
        done = []
        for spec in self.specs(ctx):
            label = self.label(spec)
            tick(f"{self.name} {label}")
            case = self.build(ctx, spec)
            clock = ctx.clock.wall_for_other_processes() if self.other_processes else contextlib.nullcontext()
            with clock:
                res, flag = timed(ctx, f"{self.name} {label}", case.fns)
            for key, arr in case.outs.items():
                m = res.get(key)
                if isinstance(m, Meas) and case.check is not None:
                    try:
                        m.bad = case.check(key, arr)
                    except Exception as e:
                        m.bad = f"check failed: {e}"
            ctx.record(self, case, res)
            done.append((case, res, flag))
            del case
        if done:
            self.write(ctx, out, done)

    def write(self, ctx, out, done):
        present = {k for _, res, _ in done for k in res}
        cols = [(k, h) for k, h in self.columns if k in present]
        pairs = self.ratio_pairs(present)
        peak = ctx.peak(self.peak_kind)
        out(f"### {self.title} ({ctx.args.layout}), {self.unit} (median), threads={ctx.nthreads}")
        out()
        hdr = ["case"] + [h for _, h in cols] + [h for _, _, h in pairs]
        if peak:
            hdr += [f"{'gk' if k == 'gemmkit' else dict(self.columns)[k]} % peak" for k in self.ours if k in present]
        rows, marked = [], False
        for case, res, flag in done:
            rates = {k: report.rate(res.get(k), case.ops) for k in present}
            row = [case.label + flag]
            row += [report.cell(ctx, res.get(k), case.ops, f"{self.name} {case.label}: {h}") for k, h in cols]
            row += [report.ratio(rates[a], best_rate(rates, b)) for a, b, _ in pairs]
            if peak:
                bound = ctx.bound(case.bound) if case.bound else None
                for k in (k for k in self.ours if k in present):
                    row.append(report.pct(rates[k], bound) + MEMORY_BOUND_MARK if bound else report.pct(rates[k], peak))
                    marked = marked or bool(bound)
            rows.append(row)
        report.table(out, hdr, rows)
        out()
        if peak:
            out(f"% peak: of {ctx.nthreads} × {ctx.peak_per_core(self.peak_kind):.0f} {self.unit} "
                f"({ctx.peak_source(self.peak_kind)})"
                + (f"; {MEMORY_BOUND_MARK}: of the streaming-read bound (B read once at "
                   f"{ctx.peak_per_core('stream'):.1f} GB/s, one core)" if marked else "") + ".")
            out()
        if self.footnote:
            out(self.footnote)
            out()


def _keys(k):
    return k if isinstance(k, tuple) else (k,)


def best_rate(rates, keys):
    """The highest rate among a key or a tuple of keys (None when none of them has one)."""
    got = [rates[k] for k in _keys(keys) if rates.get(k) is not None]
    return max(got) if got else None


# ------------------------------------------------------------------------------------------------------
# operands and checks
# ------------------------------------------------------------------------------------------------------
def aligned_empty(np, shape, dtype, align=64):
    """An uninitialised C-ordered array whose data starts on an `align`-byte boundary."""
    dtype = np.dtype(dtype)
    nbytes = int(np.prod(shape)) * dtype.itemsize
    buf = np.empty(nbytes + align, np.uint8)
    off = (-buf.ctypes.data) % align
    return buf[off:off + nbytes].view(dtype).reshape(shape)


def random(ctx, shape, dtype):
    """Aligned operands: uniform in [-1, 1) for float/complex, the full range for int8/uint8."""
    np = ctx.np
    dtype = np.dtype(dtype)
    a = aligned_empty(np, shape, dtype)
    if dtype.kind in "iu":
        lo, hi = (0, 256) if dtype == np.uint8 else (-128, 128)
        a[...] = ctx.rng.integers(lo, hi, size=shape, dtype=np.int16).astype(dtype)
    elif dtype.kind == "c":
        real = np.float32 if dtype == np.complex64 else np.float64
        a.real = ctx.rng.random(shape, dtype=real) * 2 - 1
        a.imag = ctx.rng.random(shape, dtype=real) * 2 - 1
    else:
        a[...] = ctx.rng.random(shape, dtype=np.float32 if dtype == np.float32 else np.float64) * 2 - 1
    return a


def machine_epsilon(np, dtype):
    """eps of a floating or complex dtype, ml_dtypes' types (bfloat16) included."""
    try:
        return float(np.finfo(dtype).eps)
    except ValueError:
        import ml_dtypes
        return float(ml_dtypes.finfo(dtype).eps)


def check_rows(ctx, C, A, Bop, K, exact=False, bias=None):
    """Compare C = A @ Bop (+ bias, broadcast to C's shape) against a float64 (complex128) reference on up
    to 48 sampled rows; None or what is wrong. Exact for integers; otherwise within 8·eps·K (+ a little)."""
    np = ctx.np
    M = C.shape[0]
    rows = np.unique(np.concatenate([[0, M - 1], ctx.rng.integers(0, M, size=min(M, 46))]))
    wide = np.complex128 if np.iscomplexobj(C) else np.float64
    ref = A[rows].astype(wide) @ Bop.astype(wide)
    if bias is not None:
        ref += np.broadcast_to(bias, C.shape)[rows].astype(wide)
    got = C[rows].astype(wide)
    err = float(np.max(np.abs(got - ref))) if got.size else 0.0
    if exact:
        return None if err == 0 else f"max |err| {err:g} (expected exact)"
    eps = machine_epsilon(np, C.dtype)
    tol = 8 * eps * K + 100 * eps
    return None if err <= tol else f"max |err| {err:.3g} > {tol:.3g}"


def keeping_result(outs, key, fn):
    """A callable that runs fn() and keeps what it returns as outs[key]: for libraries that allocate their
    result rather than write into a given array."""
    def call():
        outs[key] = fn()
    return call


def square_sizes(ctx, squares, quick):
    """Square sizes n: --sizes, else the quick or full list."""
    a = ctx.args
    return [int(s) for s in a.sizes.split(",") if s] if a.sizes else list(quick if a.quick else squares)


def square_shapes(ctx, squares, quick, extra=()):
    """(M, N, K) cases: --sizes, else the quick or full squares; then `extra` shapes unless --quick/--no-skinny."""
    a = ctx.args
    return [(n, n, n) for n in square_sizes(ctx, squares, quick)] + ([] if a.quick or a.no_skinny else list(extra))


# ------------------------------------------------------------------------------------------------------
# the BLAS-3 case (sgemm, dgemm, cgemm, zgemm)
# ------------------------------------------------------------------------------------------------------
BLAS_DTYPES = {"s": "float32", "d": "float64", "c": "complex64", "z": "complex128"}
FLOPS_PER_MULADD = {"s": 2, "d": 2, "c": 8, "z": 8}


def blas3_columns(p):
    return [("gemmkit", "gemmkit"), ("numpy", "NumPy matmul"), ("scipy", f"SciPy {p}gemm"),
            ("mkl", f"MKL {p}gemm"), ("onednn", "oneDNN")]


def blas3_case(ctx, p, M, N, K, scipy_max_mnk=None):
    """gemmkit.<p>gemm against np.matmul, scipy.linalg.blas.<p>gemm, MKL's cblas_<p>gemm and (sgemm only)
    dnnl_sgemm on the same operands, row-major C = A·op(B) with op from --layout."""
    np, gk, peers = ctx.np, ctx.gemmkit, ctx.peers
    tb = ctx.args.layout[1]
    dtype = BLAS_DTYPES[p]
    A = random(ctx, (M, K), dtype)
    B = random(ctx, (K, N) if tb == "N" else (N, K), dtype)
    ldb = N if tb == "N" else K
    Bop = B if tb == "N" else B.T
    fns, outs = {}, {}

    def out(key):
        outs[key] = aligned_empty(np, (M, N), dtype)
        return outs[key]

    Cg = out("gemmkit")
    gemm = getattr(gk, f"{p}gemm")
    fns["gemmkit"] = lambda: gemm("N", tb, M, N, K, 1.0, A, K, B, ldb, 0.0, Cg, N)
    Cn = out("numpy")
    fns["numpy"] = lambda: np.matmul(A, Bop, out=Cn)
    if peers.scipy_blas is not None and (scipy_max_mnk is None or M * N * K <= scipy_max_mnk):
        Cs, sg = out("scipy"), getattr(peers.scipy_blas, f"{p}gemm")
        # row-major C = A op(B)  <=>  column-major C^T = op(B)^T A^T: views, no copies
        fns["scipy"] = lambda: sg(1.0, B.T, A.T, trans_a=int(tb == "T"), beta=0.0, c=Cs.T, overwrite_c=1)
        if not np.shares_memory(fns["scipy"](), Cs):
            ctx.notes.append(f"scipy {p}gemm did not write in place (a copy is included in its time)")
    if peers.mkl is not None:
        fns["mkl"] = peers.mkl.bound(p, "N", tb, M, N, K, A, K, B, ldb, out("mkl"), N)
    if peers.dnnl is not None and p == "s":
        Cd = out("onednn")
        raw, pa, pb, pc, bn = peers.dnnl.raw_sgemm, A.ctypes.data, B.ctypes.data, Cd.ctypes.data, tb.encode()
        peers.dnnl.sgemm("N", tb, M, N, K, 1.0, A, K, B, ldb, 0.0, Cd, N)  # raises on bad arguments
        fns["onednn"] = lambda: raw(b"N", bn, M, N, K, 1.0, pa, K, pb, ldb, 0.0, pc, N)
    return Case(f"{M}×{N}×{K}", FLOPS_PER_MULADD[p] * M * N * K, fns, outs,
                check=lambda key, C: check_rows(ctx, C, A, Bop, K), x=M if M == N == K else None,
                bound=("stream", FLOPS_PER_MULADD[p] / np.dtype(dtype).itemsize) if M == 1 else None)


class Blas3Op(Op):
    """The table of one of sgemm/dgemm/cgemm/zgemm."""
    extra_shapes = ()
    scipy_max_mnk = None

    def __init__(self, p, group, squares=SQUARES, quick=QUICK_SQUARES, peak_kind=None):
        self.p = p
        self.name = self.group = group
        self.title = f"{p}gemm ({BLAS_DTYPES[p]}{', 8 flops per complex multiply-add' if p in 'cz' else ''})"
        self.columns = blas3_columns(p)
        self.squares, self.quick = squares, quick
        self.peak_kind = peak_kind or ("fp32" if p in "sc" else "fp64")

    def specs(self, ctx):
        return square_shapes(ctx, self.squares, self.quick, self.extra_shapes)

    def build(self, ctx, spec):
        return blas3_case(ctx, self.p, *spec, scipy_max_mnk=self.scipy_max_mnk)
