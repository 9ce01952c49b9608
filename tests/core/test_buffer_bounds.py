"""Reads and writes stay inside the buffers given (float32, float64, bfloat16, int8): each operand ends against a page the
process may not touch (mprotect PROT_NONE), so a load or store past it faults; in a child process, every path."""
import subprocess
import sys
import textwrap

import pytest

CHILD = textwrap.dedent(r"""
    import ctypes, mmap, sys
    import numpy as np
    import gemmkit

    PAGE = mmap.PAGESIZE
    libc = ctypes.CDLL(None, use_errno=True)
    libc.mprotect.argtypes = (ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int)
    keep = []

    def fenced(values):
        # a copy of `values` (C order) whose last byte is the last before a PROT_NONE page
        nbytes = values.nbytes
        body = (nbytes + PAGE - 1) // PAGE * PAGE
        mm = mmap.mmap(-1, body + PAGE)
        base = ctypes.addressof(ctypes.c_char.from_buffer(mm))
        if libc.mprotect(base + body, PAGE, 0) != 0:
            raise OSError(ctypes.get_errno(), "mprotect")
        keep.append(mm)
        out = np.frombuffer(mm, dtype=values.dtype, count=values.size, offset=body - nbytes).reshape(values.shape)
        out[...] = values
        return out

    def int8_case(M, N, K, lay, signed):
        # gemm_u8s8s32 / gemm_s8s8s32 on dense operands (ld = row length), zero points, offsets by row
        ta, tb = lay
        at = np.int8 if signed else np.uint8
        a = rng.integers(-128 if signed else 0, 128 if signed else 256, (M, K) if ta == "N" else (K, M)).astype(at)
        b = rng.integers(-128, 128, (K, N) if tb == "N" else (N, K)).astype(np.int8)
        A, B, C = fenced(a), fenced(b), fenced(np.zeros((M, N), np.int32))
        co = np.arange(M, dtype=np.int32)
        f = gemmkit.gemm_s8s8s32 if signed else gemmkit.gemm_u8s8s32
        f(ta, tb, "C", M, N, K, 1.0, A, A.shape[1], 3, B, B.shape[1], -2, 0.0, C, N, co)
        oa = (a if ta == "N" else a.T).astype(np.int64) - 3
        ob = (b if tb == "N" else b.T).astype(np.int64) + 2
        assert np.array_equal(C, oa @ ob + co[:, None]), (M, N, K, lay, signed)

    kind = sys.argv[1]
    int8 = kind in ("u8s8s32", "s8s8s32")
    if kind == "bfloat16":
        import ml_dtypes
    dtype = None if int8 else np.dtype(ml_dtypes.bfloat16 if kind == "bfloat16" else kind)
    c_dtype = np.dtype(np.float32) if kind == "bfloat16" else dtype  # matmul's result for bfloat16 operands
    rng = np.random.default_rng(5)
    shapes = [tuple(map(int, s.split("x"))) for s in sys.argv[2].split(",")]
    for arch in gemmkit.available_archs():
        with gemmkit.use_arch(arch):
            for threads in (1, 2):
                gemmkit.set_num_threads(threads)
                for M, N, K in shapes:
                    for lay in ("NN", "TN", "NT"):
                        print(arch, threads, lay, M, N, K, flush=True)
                        if int8:
                            int8_case(M, N, K, lay, kind == "s8s8s32")
                            continue
                        a = rng.standard_normal((M, K) if lay[0] == "N" else (K, M)).astype(dtype)
                        b = rng.standard_normal((K, N) if lay[1] == "N" else (N, K)).astype(dtype)
                        A, B = fenced(a), fenced(b)
                        A, B = (A if lay[0] == "N" else A.T), (B if lay[1] == "N" else B.T)
                        C = fenced(np.zeros((M, N), c_dtype))
                        gemmkit.matmul(A, B, out=C)
                        ref = A.astype(np.float64) @ B.astype(np.float64)
                        tol = (1e-12 if dtype == np.float64 else 1e-4) * (K + 1)
                        assert np.allclose(C, ref, rtol=tol, atol=tol), (arch, lay, M, N, K)
    print("ok")
""")

# Shapes on each small-problem path: tiny products with ragged columns, the plain loops (groups of chunks, a last
# chunk of 1 to VL - 1 columns), few columns by the dot path, the `cols` loops and the short sums, few rows of C,
# and the packed driver's edges.
SHAPES = ("5x13x7,12x31x9,65x65x65,7x201x33,100x71x80,30x46x19,3001x17x70,256x3x100,1000x3x3,1000x1x8,"
          "64x3x300,3x64x300,2x300x700,1x1000x37,300x300x5,130x9x70")


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="mprotect fences: Linux")
@pytest.mark.parametrize("dtype", ["float32", "float64", "bfloat16", "u8s8s32", "s8s8s32"])
def test_operands_against_a_fenced_page(dtype, tmp_path):
    """A, B and C each end at a page the process may not touch; every layout, path and thread count: a fault
    (a load or store past an operand's end) kills the child, whose last line names the case. The child runs in
    an empty folder (`python -c` puts its folder first on sys.path: from the repository root, the unbuilt source)."""
    run = subprocess.run([sys.executable, "-c", CHILD, dtype, SHAPES], capture_output=True, text=True, timeout=600,
                         cwd=tmp_path)
    last = (run.stdout.strip().splitlines() or ["(nothing)"])[-1]
    assert run.returncode == 0 and last == "ok", f"rc {run.returncode}, last case: {last}\n{run.stderr[-2000:]}"
