"""The libraries gemmkit is compared with (NumPy/SciPy's OpenBLAS, MKL, oneDNN) and every library's thread
pool: while one library is timed on several threads, the others' pools are held at one thread (threadpoolctl).
"""
import contextlib
import os

from . import mkl, onednn

PEER_NAMES = {"numpy": "NumPy", "scipy": "SciPy", "mkl": "MKL", "onednn": "oneDNN"}


class Peers:
    """What is loaded: scipy.linalg.blas (or None), an mkl.MKL, an onednn.OneDNN, with why one is missing."""

    def __init__(self):
        try:
            import scipy
            import scipy.linalg.blas as blas
            self.scipy_blas, self.scipy_version = blas, scipy.__version__
        except Exception:
            self.scipy_blas, self.scipy_version = None, None
        self.mkl = mkl.load()
        self.dnnl = onednn.load()

    def describe(self):
        """One line per peer for the header."""
        mkl_fns = "cblas_?gemm" + (", cblas_gemm_bf16bf16f32" if self.mkl and self.mkl.has_bf16 else "")
        dnnl_fns = "dnnl_sgemm/dnnl_gemm_*s8s32" + ("/dnnl_gemm_bf16bf16f32" if self.dnnl and self.dnnl.has_bf16 else "")
        return [f"MKL: {self.mkl.version() if self.mkl else mkl.why_unavailable()}"
                + (f" ({mkl_fns} via ctypes)" if self.mkl else ""),
                f"oneDNN: {self.dnnl.describe() if self.dnnl else onednn.why_unavailable()}"
                + (f"; {dnnl_fns} via ctypes, threads follow the affinity mask (TBB)"
                   if self.dnnl else "")]


def owner(key):
    """The library a result key belongs to: 'gemmkit' (gemmkit, gk_*, kernel-path tuples), 'numpy', 'scipy',
    'mkl' or 'onednn' (onednn, dnnl_*)."""
    if isinstance(key, tuple) or key == "gemmkit" or key.startswith("gk"):
        return "gemmkit"
    if key.startswith("dnnl") or key == "onednn":
        return "onednn"
    return key.split("_")[0]


def pool_owner(info):
    """The library a threadpoolctl pool (its info dict) belongs to, or None for one we don't time."""
    path = os.path.basename(info.get("filepath") or "")
    full = info.get("filepath") or ""
    if info.get("user_api") == "gemmkit":
        return "gemmkit"
    if info.get("internal_api") == "mkl" or "iomp" in path or "mkl" in path:
        return "mkl"
    if "numpy" in full:
        return "numpy"
    if "scipy" in full:
        return "scipy"
    return None


class Pools:
    """Every thread pool threadpoolctl sees; only(key) gives that key's library `nthreads` and every other
    pool one thread for the duration of a with block."""

    def __init__(self, nthreads):
        self.nthreads = nthreads
        try:
            from threadpoolctl import ThreadpoolController
            self.controller = ThreadpoolController()
        except Exception:
            self.controller = None

    def available(self):
        return self.controller is not None

    def info(self):
        return self.controller.info() if self.controller else []

    def set_all(self, n):
        for lc in (self.controller.lib_controllers if self.controller else []):
            lc.set_num_threads(n)

    @contextlib.contextmanager
    def only(self, key):
        lib = owner(key)
        saved = []
        for lc in (self.controller.lib_controllers if self.controller else []):
            want = self.nthreads if pool_owner(lc.info()) == lib else 1
            saved.append((lc, lc.num_threads))
            lc.set_num_threads(want)
        try:
            yield
        finally:
            for lc, n in saved:
                lc.set_num_threads(n)

    def describe(self):
        """'NumPy: openblas 0.3.x (Haswell kernels, 1 thread); ...' for the header."""
        parts = []
        for i in self.info():
            who = pool_owner(i) or os.path.basename(i.get("filepath", "?"))
            arch = f", {i['architecture']} kernels" if i.get("architecture") else ""
            n = i.get("num_threads")
            parts.append(f"{PEER_NAMES.get(who, who)}: {i.get('internal_api')} {i.get('version') or ''}".rstrip()
                         + f" ({n} thread{'' if n == 1 else 's'}{arch})")
        return "; ".join(parts)
