"""ctypes wrapper for Intel MKL's cblas_sgemm/dgemm/cgemm/zgemm and cblas_gemm_bf16bf16f32 (libmkl_rt from
`pip install mkl`), a peer in the benchmark only; `python bench/mkl.py` says whether it loads.

    lib = mkl.load()                      # None when MKL is not installed (see why_unavailable())
    lib.gemm("d", "N", "N", M, N, K, 1.0, A, K, B, N, 0.0, C, N)    # row-major, C in place
    fn = lib.bound("d", "N", "N", M, N, K, A, K, B, N, C, N)         # a no-argument call for timing loops
    fn = lib.bound_bf16("N", "T", M, N, K, A16, K, B16, K, C, N)    # bfloat16 A, B (MKL_BF16), float32 C

Row-major CBLAS calls on the arrays' own memory (no copies); MKL's LP64 interface (32-bit ints).
"""
import ctypes
import functools
import glob
import os
import sys

ROW_MAJOR, NO_TRANS, TRANS, CONJ_TRANS = 101, 111, 112, 113
_TRANS = {"N": NO_TRANS, "T": TRANS, "C": CONJ_TRANS}
_DTYPES = {"s": "float32", "d": "float64", "c": "complex64", "z": "complex128"}


def _candidate_paths():
    """libmkl_rt.so* in $GEMMKIT_BENCH_MKL_DIR, the `mkl` distribution's files, and <prefix>/lib."""
    dirs = [os.environ.get("GEMMKIT_BENCH_MKL_DIR")]
    try:
        from importlib import metadata
        dist = metadata.distribution("mkl")
        dirs += [os.path.dirname(os.path.realpath(dist.locate_file(f))) for f in dist.files or ()
                 if os.path.basename(str(f)).startswith("libmkl_rt.so")]
    except Exception:
        pass
    dirs += [os.path.join(sys.prefix, "lib"), os.path.join(sys.base_prefix, "lib")]
    paths = []
    for d in dirs:
        if d:
            paths += sorted(glob.glob(os.path.join(d, "libmkl_rt.so*")), reverse=True)
    return paths


class MKL:
    """A loaded libmkl_rt: gemm() checks and calls, bound() prepares a call for timing."""

    def __init__(self, cdll, path):
        self.cdll, self.path = cdll, path
        i, vp = ctypes.c_int, ctypes.c_void_p
        for p, scalar in (("s", ctypes.c_float), ("d", ctypes.c_double), ("c", vp), ("z", vp)):
            f = getattr(cdll, f"cblas_{p}gemm")
            f.argtypes = [i, i, i, i, i, i, scalar, vp, i, vp, i, scalar, vp, i]
            f.restype = None
        # MKL_BF16 operands are raw 16-bit words; alpha, beta and C are float (same MKL_INT as ?gemm).
        self._bf16 = getattr(cdll, "cblas_gemm_bf16bf16f32", None)
        if self._bf16 is not None:
            f32 = ctypes.c_float
            self._bf16.argtypes = [i, i, i, i, i, i, f32, vp, i, vp, i, f32, vp, i]
            self._bf16.restype = None

    @property
    def has_bf16(self):
        """Whether this libmkl_rt exports cblas_gemm_bf16bf16f32."""
        return self._bf16 is not None

    def version(self):
        try:
            buf = ctypes.create_string_buffer(256)
            self.cdll.mkl_get_version_string(buf, 256)
            return buf.value.decode(errors="replace").strip()
        except Exception:
            return "MKL (version unknown)"

    def set_num_threads(self, n):
        try:
            self.cdll.MKL_Set_Num_Threads(ctypes.c_int(int(n)))
        except AttributeError:
            pass

    def bound(self, p, transa, transb, M, N, K, A, lda, B, ldb, C, ldc, alpha=1.0, beta=0.0):
        """A no-argument callable for C := alpha op(A) op(B) + beta C (prefix p in s, d, c, z); the scalars of
        c/z are passed by pointer, as CBLAS wants."""
        import numpy as np
        for name, x in (("A", A), ("B", B), ("C", C)):
            if x.dtype != np.dtype(_DTYPES[p]) or not x.flags.c_contiguous:
                raise TypeError(f"{name} must be a C-contiguous {_DTYPES[p]} array")
        f = getattr(self.cdll, f"cblas_{p}gemm")
        if p in "cz":
            al, be = np.array([alpha], _DTYPES[p]), np.array([beta], _DTYPES[p])
            a_arg, b_arg, keep = al.ctypes.data, be.ctypes.data, (al, be)
        else:
            a_arg, b_arg, keep = alpha, beta, ()
        args = (ROW_MAJOR, _TRANS[transa], _TRANS[transb], M, N, K, a_arg, A.ctypes.data, lda,
                B.ctypes.data, ldb, b_arg, C.ctypes.data, ldc)

        def call(_keep=keep):
            f(*args)
        return call

    def bound_bf16(self, transa, transb, M, N, K, A, lda, B, ldb, C, ldc, alpha=1.0, beta=0.0):
        """A no-argument callable for float32 C := alpha op(A) op(B) + beta C with A and B bfloat16
        (ml_dtypes.bfloat16 arrays or uint16 arrays of the same bits), row-major."""
        import numpy as np
        if self._bf16 is None:
            raise AttributeError(f"{self.path} does not export cblas_gemm_bf16bf16f32")
        for name, x in (("A", A), ("B", B)):
            if x.dtype.itemsize != 2 or x.dtype.name not in ("bfloat16", "uint16") or not x.flags.c_contiguous:
                raise TypeError(f"{name} must be a C-contiguous bfloat16 (or uint16) array")
        if C.dtype != np.float32 or not C.flags.c_contiguous:
            raise TypeError("C must be a C-contiguous float32 array")
        f = self._bf16
        args = (ROW_MAJOR, _TRANS[transa], _TRANS[transb], M, N, K, alpha, A.ctypes.data, lda,
                B.ctypes.data, ldb, beta, C.ctypes.data, ldc)

        def call():
            f(*args)
        return call

    def gemm_bf16bf16f32(self, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
        self.bound_bf16(transa, transb, M, N, K, A, lda, B, ldb, C, ldc, alpha, beta)()
        return C

    def gemm(self, p, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
        self.bound(p, transa, transb, M, N, K, A, lda, B, ldb, C, ldc, alpha, beta)()
        return C


@functools.lru_cache(maxsize=None)
def _load_once():
    """(MKL or None, why it is missing or None), computed on the first call only."""
    paths = _candidate_paths()
    if not paths:
        return None, "not installed (pip install mkl)"
    try:
        return MKL(ctypes.CDLL(paths[0]), paths[0]), None
    except (OSError, AttributeError) as e:
        return None, f"found {paths[0]} but it does not load ({e})"


def load():
    """libmkl_rt as an :class:`MKL`, loaded once; None when missing (see why_unavailable())."""
    return _load_once()[0]


def why_unavailable():
    return _load_once()[1]


if __name__ == "__main__":
    lib = load()
    print(f"MKL: {lib.version()} from {lib.path}" if lib else f"MKL: {why_unavailable()}")
    sys.exit(0 if lib else 1)
