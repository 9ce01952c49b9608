"""gemmkit.dask.matmul against dask.array.matmul on one distributed.LocalCluster (one single-threaded worker
process per thread of the run), float32 n×n @ n×n in square chunks; heavy, so it runs only when named."""
import contextlib
import os
import threading

from .common import Case, Op, keeping_result, square_sizes

ORDER = 70
DEFAULT = False            # minutes at the full sizes and a cluster of processes: only with --only dask
SQUARES = [2048, 4096, 8192]
QUICK_SQUARES = [256, 512]
MAX_CHUNK = 1024           # 8 × 8 blocks at 8192, as the former bench/bench_dask.py ran it
RSS_SAMPLE_S = 0.2
MIB = 2 ** 20


def chunk_of(n):
    """The square chunk size for an n × n operand: a quarter of n, at most MAX_CHUNK."""
    return max(1, min(MAX_CHUNK, n // 4))


def why_unavailable():
    """None when dask.array and distributed import, else why not."""
    try:
        import dask.array  # noqa: F401
        import distributed  # noqa: F401
    except ImportError as e:
        return f"{e.name or e} is not installed (pip install 'dask[array]' distributed)"
    return None


def worker_rss(client):
    """{worker address: resident set size in bytes} of every worker process now."""
    def rss():          # nested, so it is pickled by value: the workers cannot import this package
        import psutil
        return psutil.Process().memory_info().rss
    return client.run(rss)


class PeakMemory:
    """Per library, the largest growth of a worker's RSS over its size once the inputs were persisted,
    sampled every RSS_SAMPLE_S s from a thread while that library's call runs (a shorter call: no sample)."""

    def __init__(self, client):
        self.client, self.base, self.peak = client, worker_rss(client), {}

    def sampled(self, key, fn):
        def call():
            stop = threading.Event()

            def sample():
                while not stop.wait(RSS_SAMPLE_S):
                    growth = max(rss - self.base.get(addr, 0) for addr, rss in worker_rss(self.client).items())
                    self.peak[key] = max(growth, self.peak.get(key) or 0)
            sampler = threading.Thread(target=sample, daemon=True)
            sampler.start()
            try:
                return fn()
            finally:
                stop.set()
                sampler.join()
        return call


class DaskMatmulOp(Op):
    """The table; run() holds the cluster for all its cases, build() needs one (cluster())."""
    name = group = "dask"
    title = "`gemmkit.dask.matmul` vs `dask.array.matmul`, float32, distributed.LocalCluster"
    peak_kind = "fp32"
    columns = [("gemmkit", "gemmkit.dask.matmul"), ("dask", "dask.array.matmul")]
    other_processes = True

    def __init__(self):
        self.client, self.memory = None, {}

    @property
    def footnote(self):
        peaks = "; ".join(f"{label}: " + ", ".join(f"{dict(self.columns)[k]} "
                                                     + (f"{v / MIB:.0f}" if v is not None else "–")
                                                     for k, v in per_lib.items())
                          for label, per_lib in self.memory.items())
        return ("One single-threaded worker process per thread of the run, wall clock; each call computes the "
                "column sums (float64) of the product, so only n numbers come back. Operands are integers in "
                "[-4, 4] stored as float32, so both products are exact and are checked exactly. Peak worker "
                f"RSS over the persisted inputs, MiB (sampled every {RSS_SAMPLE_S} s while a call runs; – : "
                f"shorter calls): {peaks}.")

    @contextlib.contextmanager
    def cluster(self, ctx):
        """A LocalCluster of ctx.nthreads worker processes of one thread each, and its client in self.client.
        The workers import the gemmkit this run measures (ctx.gemmkit: the snapshot, or the installed one,
        never a source folder on their inherited sys.path) before the first timed call."""
        import distributed
        folder = os.path.dirname(os.path.dirname(os.path.abspath(ctx.gemmkit.__file__)))

        def import_gemmkit_from(path):     # nested, so it is pickled by value
            import importlib
            import sys
            sys.path.insert(0, path)
            importlib.import_module("gemmkit.dask")

        with distributed.LocalCluster(n_workers=ctx.nthreads, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            client.run(import_gemmkit_from, folder)
            self.client = client
            try:
                yield client
            finally:
                self.client = None

    def specs(self, ctx):
        why = why_unavailable()
        if why:
            ctx.notes.append(f"dask: left out, {why}")
            return []
        return [(n, chunk_of(n)) for n in square_sizes(ctx, SQUARES, QUICK_SQUARES)]

    def label(self, spec):
        n, chunk = spec
        return f"{n}×{n}×{n} ({chunk}² chunks)"

    def run(self, ctx, out, tick):
        self.memory = {}
        if why_unavailable():
            self.specs(ctx)   # notes why
            return
        with self.cluster(ctx):
            super().run(ctx, out, tick)

    def build(self, ctx, spec):
        np = ctx.np
        import dask.array as da
        import distributed
        from gemmkit import dask as gkd
        n, chunk = spec
        client = self.client
        seed = int(ctx.rng.integers(2 ** 31))
        a, b = (da.random.default_rng(seed + i).integers(-4, 5, size=(n, n), chunks=chunk).astype(np.float32)
                for i in range(2))
        a, b = client.persist(a), client.persist(b)
        distributed.wait([a, b])
        memory = PeakMemory(client)
        self.memory[self.label(spec)] = memory.peak
        products = {"gemmkit": gkd.matmul(a, b), "dask": da.matmul(a, b)}
        outs, fns = {}, {}
        for key, c in products.items():
            column_sums = c.sum(axis=0, dtype=np.float64)
            fns[key] = keeping_result(outs, key, memory.sampled(key, lambda s=column_sums: client.compute(s).result()))
        reference = []

        def check(key, got):
            """Exact: every product and partial sum is an integer below 2**24 (float32) or 2**53 (float64)."""
            if not reference:
                reference.append(client.compute(a.sum(axis=0, dtype=np.float64) @ b.astype(np.float64)).result())
            wrong = int(np.count_nonzero(got != reference[0]))
            return None if wrong == 0 else f"{wrong} of {n} column sums differ (expected exact)"
        for key in products:
            memory.peak.setdefault(key, None)
        return Case(self.label(spec), 2.0 * n ** 3, fns, outs, check, x=n)


OPS = [DaskMatmulOp()]
