"""ctypes wrapper for oneDNN's BLAS-like API (dnnl_sgemm, dnnl_gemm_u8s8s32, dnnl_gemm_s8s8s32 and, where the
library exports it, dnnl_gemm_bf16bf16f32).

Only used by the benchmarks in bench/, never by gemmkit itself.  oneDNN comes from the `onednn` pip
package (``pip install onednn``), which puts libdnnl.so.* and its runtime (TBB, the Intel compiler
runtime, SYCL) into ``<prefix>/lib``.  That directory is not on the loader's search path, so either
start Python with ``LD_LIBRARY_PATH=<prefix>/lib`` (bench/run_bench.py re-executes itself that way) or
let :func:`load` preload the dependencies from that directory by absolute path (what pytest gets).

    from bench import onednn            # or: import onednn, with bench/ on sys.path
    lib = onednn.load()                 # None when oneDNN is not installed / not loadable
    if lib is None: print(onednn.why_unavailable())
    lib.sgemm('N', 'N', M, N, K, 1.0, A, K, B, N, 0.0, C, N)
    lib.gemm_bf16bf16f32('N', 'T', M, N, K, 1.0, A16, K, B16, K, 0.0, C, N)   # uint16 (bfloat16 bits), float32 C

Arguments follow oneDNN (row-major, C updated in place).  Arrays must be C-contiguous NumPy arrays
(or 1-D flat buffers) of the right dtype; no copies are made, so the call costs only the ctypes
overhead (about a microsecond).
"""
import ctypes
import glob
import os
import sys

__all__ = ["load", "find_lib_dir", "why_unavailable", "OneDNN", "DnnlError"]

_CPU_ISA = {0x0: "all", 0x1: "sse41", 0x3: "avx", 0x7: "avx2", 0xf: "avx2_vnni", 0x1f: "avx2_vnni_2",
            0x27: "avx512_core", 0x67: "avx512_core_vnni", 0xe7: "avx512_core_bf16",
            0x1ef: "avx10_1_512 (avx512_core_fp16)", 0xfef: "avx10_1_512_amx (avx512_core_amx)"}
_RUNTIME = {0: "none", 1: "seq", 2: "omp", 4: "tbb", 8: "threadpool", 256: "ocl", 512: "sycl"}
_STATUS = {1: "out_of_memory", 2: "invalid_arguments", 3: "unimplemented", 5: "runtime_error",
           6: "not_required"}

# Runtime libraries libdnnl.so.3 needs from the pip layout, preloaded when LD_LIBRARY_PATH lacks the dir.
_DEPS = ["libtbb.so.12", "libintlc.so.5", "libimf.so", "libsvml.so", "libirng.so", "libumf.so.1",
         "libur_loader.so.0", "libsycl.so.9"]

_dim = ctypes.c_int64
_vp = ctypes.c_void_p
_char = ctypes.c_char
_f32 = ctypes.c_float

_state = {"lib": None, "tried": False, "why": None}


class DnnlError(RuntimeError):
    pass


def _candidate_dirs():
    """Directories that may hold libdnnl.so.*: $GEMMKIT_BENCH_DNNL_DIR, the onednn dist's files, prefixes."""
    dirs = []
    env = os.environ.get("GEMMKIT_BENCH_DNNL_DIR")
    if env:
        dirs.append(env)
    try:
        from importlib import metadata
        dist = metadata.distribution("onednn")
        for f in dist.files or ():
            if os.path.basename(str(f)).startswith("libdnnl.so"):
                dirs.append(os.path.dirname(os.path.realpath(dist.locate_file(f))))
                break
    except Exception:
        pass
    import site
    prefixes = [sys.prefix, sys.exec_prefix, sys.base_prefix, getattr(site, "USER_BASE", None) or ""]
    dirs += [os.path.join(p, "lib") for p in prefixes if p]
    out = []
    for d in dirs:
        d = os.path.realpath(d)
        if d not in out:
            out.append(d)
    return out


def _lib_in(d):
    for name in ("libdnnl.so.3", "libdnnl.so"):
        if os.path.exists(os.path.join(d, name)):
            return os.path.join(d, name)
    hits = sorted(glob.glob(os.path.join(d, "libdnnl.so*")))
    return hits[0] if hits else None


def find_lib_dir():
    """The directory holding libdnnl.so.* (e.g. <prefix>/lib of a `pip install onednn`), or None."""
    for d in _candidate_dirs():
        if _lib_in(d):
            return d
    return None


def _preload(d):
    """Load libdnnl's runtime dependencies from d by absolute path, in whatever order resolves."""
    pending = [n for n in _DEPS if os.path.exists(os.path.join(d, n))]
    while pending:
        progressed = False
        for n in list(pending):
            try:
                ctypes.CDLL(os.path.join(d, n), mode=ctypes.RTLD_GLOBAL)
                pending.remove(n)
                progressed = True
            except OSError:
                pass
        if not progressed:
            return


class _Version(ctypes.Structure):
    _fields_ = [("major", ctypes.c_int), ("minor", ctypes.c_int), ("patch", ctypes.c_int),
                ("hash", ctypes.c_char_p), ("cpu_runtime", ctypes.c_uint), ("gpu_runtime", ctypes.c_uint)]


def _ptr(x, dtype, name):
    import numpy as np
    if not isinstance(x, np.ndarray):
        raise TypeError(f"{name} must be a numpy array")
    if x.dtype != np.dtype(dtype):
        raise TypeError(f"{name} must be {dtype}, got {x.dtype}")
    if not x.flags.c_contiguous:
        raise ValueError(f"{name} must be C-contiguous")
    return x.ctypes.data


def _bits16(x):
    """A bfloat16 array (ml_dtypes) as its uint16 bits, without a copy; anything else unchanged."""
    import numpy as np
    if isinstance(x, np.ndarray) and x.dtype.itemsize == 2 and x.dtype.name == "bfloat16":
        return x.view(np.uint16)
    return x


def _ch(c):
    return c.encode() if isinstance(c, str) else bytes(c)


class OneDNN:
    """A loaded libdnnl; methods mirror the C functions with NumPy arrays for the pointers."""

    def __init__(self, cdll, path):
        self.cdll = cdll
        self.path = path
        L = cdll
        L.dnnl_sgemm.argtypes = [_char, _char, _dim, _dim, _dim, _f32, _vp, _dim, _vp, _dim, _f32, _vp, _dim]
        L.dnnl_sgemm.restype = ctypes.c_int
        i8 = [_char, _char, _char, _dim, _dim, _dim, _f32, _vp, _dim, None, _vp, _dim, ctypes.c_int8,
              _f32, _vp, _dim, _vp]
        u8 = list(i8); u8[9] = ctypes.c_uint8
        s8 = list(i8); s8[9] = ctypes.c_int8
        L.dnnl_gemm_u8s8s32.argtypes = u8
        L.dnnl_gemm_u8s8s32.restype = ctypes.c_int
        L.dnnl_gemm_s8s8s32.argtypes = s8
        L.dnnl_gemm_s8s8s32.restype = ctypes.c_int
        self._sgemm = L.dnnl_sgemm
        # Exported by libdnnl but not declared in its public header: bound here by its C signature
        # (row-major like dnnl_sgemm, bfloat16 A and B as raw 16-bit words, float32 C).
        self._bf16 = getattr(L, "dnnl_gemm_bf16bf16f32", None)
        if self._bf16 is not None:
            self._bf16.argtypes = [_char, _char, _dim, _dim, _dim, _f32, _vp, _dim, _vp, _dim, _f32, _vp, _dim]
            self._bf16.restype = ctypes.c_int
        self._u8 = L.dnnl_gemm_u8s8s32
        self._s8 = L.dnnl_gemm_s8s8s32
        self._set_max_threads = getattr(L, "dnnl_set_max_threads", None)

    # --- info -------------------------------------------------------------------------------------
    def version(self):
        try:
            f = self.cdll.dnnl_version
            f.restype = ctypes.POINTER(_Version)
            v = f().contents
            return {"version": f"{v.major}.{v.minor}.{v.patch}",
                    "hash": (v.hash or b"").decode(errors="replace")[:12],
                    "cpu_runtime": _RUNTIME.get(v.cpu_runtime, str(v.cpu_runtime))}
        except Exception as e:  # pragma: no cover - very old libdnnl
            return {"version": f"unknown ({e})"}

    def effective_isa(self):
        try:
            f = self.cdll.dnnl_get_effective_cpu_isa
            f.restype = ctypes.c_int
            v = f()
            return _CPU_ISA.get(v, hex(v))
        except AttributeError:
            return "unknown"

    def describe(self):
        v = self.version()
        s = f"oneDNN {v.get('version')}"
        if v.get("hash"):
            s += f" ({v['hash']})"
        s += f", cpu runtime {v.get('cpu_runtime', '?')}, effective ISA {self.effective_isa()}"
        return s

    def set_max_threads(self, n):
        """dnnl_set_max_threads where the library exports it (OpenMP/threadpool builds); returns
        whether it did anything.  TBB/SYCL builds (the pip wheel) don't: pin with taskset instead."""
        if self._set_max_threads is None:
            return False
        self._set_max_threads.argtypes = [ctypes.c_int]
        return self._set_max_threads(int(n)) == 0

    # --- BLAS-like calls ----------------------------------------------------------------------------
    @staticmethod
    def _check(st, fn):
        if st != 0:
            raise DnnlError(f"{fn} returned dnnl_status {st} ({_STATUS.get(st, '?')})")

    def sgemm(self, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
        st = self._sgemm(_ch(transa), _ch(transb), M, N, K, alpha, _ptr(A, "float32", "A"), lda,
                         _ptr(B, "float32", "B"), ldb, beta, _ptr(C, "float32", "C"), ldc)
        self._check(st, "dnnl_sgemm")
        return C

    @property
    def has_bf16(self):
        """Whether this libdnnl exports dnnl_gemm_bf16bf16f32."""
        return self._bf16 is not None

    def gemm_bf16bf16f32(self, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
        """C (float32) := alpha op(A) op(B) + beta C with A and B bfloat16: ml_dtypes.bfloat16 arrays or
        uint16 arrays of the same bits."""
        if self._bf16 is None:
            raise DnnlError(f"{self.path} does not export dnnl_gemm_bf16bf16f32")
        st = self._bf16(_ch(transa), _ch(transb), M, N, K, alpha, _ptr(_bits16(A), "uint16", "A"), lda,
                        _ptr(_bits16(B), "uint16", "B"), ldb, beta, _ptr(C, "float32", "C"), ldc)
        self._check(st, "dnnl_gemm_bf16bf16f32")
        return C

    def gemm_u8s8s32(self, transa, transb, offsetc, M, N, K, alpha, A, lda, ao, B, ldb, bo, beta, C, ldc, co):
        st = self._u8(_ch(transa), _ch(transb), _ch(offsetc), M, N, K, alpha, _ptr(A, "uint8", "A"), lda, ao,
                      _ptr(B, "int8", "B"), ldb, bo, beta, _ptr(C, "int32", "C"), ldc, _ptr(co, "int32", "co"))
        self._check(st, "dnnl_gemm_u8s8s32")
        return C

    def gemm_s8s8s32(self, transa, transb, offsetc, M, N, K, alpha, A, lda, ao, B, ldb, bo, beta, C, ldc, co):
        st = self._s8(_ch(transa), _ch(transb), _ch(offsetc), M, N, K, alpha, _ptr(A, "int8", "A"), lda, ao,
                      _ptr(B, "int8", "B"), ldb, bo, beta, _ptr(C, "int32", "C"), ldc, _ptr(co, "int32", "co"))
        self._check(st, "dnnl_gemm_s8s8s32")
        return C

    # Raw entry points taking integer addresses (no checks): for timing loops where the ~1 us of
    # argument checking above would dominate tiny problems.
    def raw_sgemm(self, *args):
        return self._sgemm(*args)

    def raw_bf16bf16f32(self, *args):
        return self._bf16(*args)

    def raw_u8s8s32(self, *args):
        return self._u8(*args)

    def raw_s8s8s32(self, *args):
        return self._s8(*args)


def load():
    """Load libdnnl once; returns a :class:`OneDNN` or None (see :func:`why_unavailable`)."""
    if _state["tried"]:
        return _state["lib"]
    _state["tried"] = True
    d = find_lib_dir()
    if d is None:
        _state["why"] = "not installed (pip install onednn)"
        return None
    path = _lib_in(d)
    try:
        cdll = ctypes.CDLL(path)
    except OSError:
        _preload(d)
        try:
            cdll = ctypes.CDLL(path)
        except OSError as e:
            _state["why"] = (f"found {path} but it does not load ({e}); start Python with "
                             f"LD_LIBRARY_PATH={d}")
            return None
    for fn in ("dnnl_sgemm", "dnnl_gemm_u8s8s32", "dnnl_gemm_s8s8s32"):
        if not hasattr(cdll, fn):
            _state["why"] = f"{path} lacks {fn}"
            return None
    _state["lib"] = OneDNN(cdll, path)
    return _state["lib"]


def why_unavailable():
    load()
    return _state["why"]


if __name__ == "__main__":
    lib = load()
    if lib is None:
        print("oneDNN:", why_unavailable())
        sys.exit(1)
    print(lib.describe(), "from", lib.path)
