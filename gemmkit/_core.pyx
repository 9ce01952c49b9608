# cython: language_level=3
"""Thin Cython layer over the C core: checks arguments and buffers (naming the argument at fault),
then calls gemmkit_* with the GIL released. No arithmetic on matrix data happens here."""

from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release, PyBUF_STRIDES, PyBUF_FORMAT,
                             PyBUF_WRITABLE)
from libc.stdint cimport int64_t, int32_t, uint8_t, int8_t, uint16_t, uint32_t, uint64_t, INT64_MAX

import numpy as np

cdef int _i = 0
cdef uint32_t _bit = 0
cdef const char *_name
CPU_FEATURE_BITS = {}
while True:
    _name = gemmkit_cpu_feature_name(_i, &_bit)
    if _name == NULL:
        break
    CPU_FEATURE_BITS[_name.decode()] = _bit
    _i += 1
ARCHS = tuple(gemmkit_arch_name(i).decode() for i in range(gemmkit_arch_count() - 1, -1, -1))  # best last


# ---- argument checks (same order and meaning as oneDNN's) ----------------------------------------

cdef char _trans_flag(object t, str name, bint allow_conj=False) except 0:
    cdef str allowed = "NnTtCc" if allow_conj else "NnTt"
    if not isinstance(t, str) or len(t) != 1 or t not in allowed:
        raise ValueError(f"{name} must be one of {', '.join(repr(x) for x in allowed)}, got {t!r}")
    return ord(t)


cdef char _offsetc_flag(object t) except 0:
    if not isinstance(t, str) or len(t) != 1 or t not in "FfCcRr":
        raise ValueError(f"offsetc must be one of 'F', 'C', 'R' (either case), got {t!r}")
    return ord(t.upper())


cdef inline bint _is_t(char t) noexcept:
    """op(X) is stored transposed (T or C)."""
    return t == b'T' or t == b't' or t == b'C' or t == b'c'


cdef int _check_dims_lds(char ta, char tb, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb,
                         int64_t ldc) except -1:
    if M < 0:
        raise ValueError(f"M must be >= 0, got {M}")
    if N < 0:
        raise ValueError(f"N must be >= 0, got {N}")
    if K < 0:
        raise ValueError(f"K must be >= 0, got {K}")
    cdef int64_t need
    need = max(1, M if _is_t(ta) else K)
    if lda < need:
        raise ValueError(f"lda={lda} must be >= {need} (max(1, {'M' if _is_t(ta) else 'K'}) "
                         f"for transa={chr(ta)!r})")
    need = max(1, K if _is_t(tb) else N)
    if ldb < need:
        raise ValueError(f"ldb={ldb} must be >= {need} (max(1, {'K' if _is_t(tb) else 'N'}) "
                         f"for transb={chr(tb)!r})")
    need = max(1, N)
    if ldc < need:
        raise ValueError(f"ldc={ldc} must be >= {need} (max(1, N))")
    return 0


# ---- buffers ----------------------------------------------------------------------------------

cdef str _dtype_of(const char *fmt, Py_ssize_t itemsize):
    cdef bytes f = fmt if fmt != NULL else b"B"
    if f[:1] in (b"@", b"=", b"<", b"|"):
        f = f[1:]
    if f == b"f" and itemsize == 4:
        return "float32"
    if f == b"d" and itemsize == 8:
        return "float64"
    if f == b"Zf" and itemsize == 8:
        return "complex64"
    if f == b"Zd" and itemsize == 16:
        return "complex128"
    if f in (b"i", b"l") and itemsize == 4:
        return "int32"
    if f in (b"q", b"l") and itemsize == 8:
        return "int64"
    if f in (b"I", b"L") and itemsize == 4:
        return "uint32"
    if f in (b"Q", b"L") and itemsize == 8:
        return "uint64"
    if f == b"e" and itemsize == 2:
        return "float16"
    if f == b"H" and itemsize == 2:
        return "uint16"
    if f == b"b" and itemsize == 1:
        return "int8"
    if f == b"B" and itemsize == 1:
        return "uint8"
    return f"format {fmt.decode() if fmt != NULL else 'B'!r} (itemsize {itemsize})"


cdef class _Operand:
    """A buffer seen as a row-major matrix of `rows` x `cols` with row stride `ld` elements."""
    cdef Py_buffer view
    cdef bint held
    cdef void *ptr

    def __dealloc__(self):
        if self.held:
            PyBuffer_Release(&self.view)

    cdef int acquire(self, object obj, str name, str dtype, int64_t rows, int64_t cols, int64_t ld,
                     bint writable) except -1:
        cdef int flags = PyBUF_STRIDES | PyBUF_FORMAT
        if writable:
            flags |= PyBUF_WRITABLE
        if obj is None:
            raise TypeError(f"{name} must be a {dtype} array or buffer, got None")
        try:
            PyObject_GetBuffer(obj, &self.view, flags)
        except (BufferError, ValueError) as e:  # NumPy says ValueError for a read-only array
            if writable:
                try:
                    PyObject_GetBuffer(obj, &self.view, PyBUF_STRIDES | PyBUF_FORMAT)
                except Exception:
                    raise TypeError(f"{name} must be a writable {dtype} array or buffer ({e})") from None
                PyBuffer_Release(&self.view)
                raise ValueError(f"{name} is read-only: it must be writable") from None
            raise TypeError(f"{name} must be a {dtype} array or buffer ({e})") from None
        except TypeError:
            raise TypeError(f"{name} must be a {dtype} array or buffer, got {type(obj).__name__}") from None
        self.held = True
        self.ptr = self.view.buf
        got = _dtype_of(self.view.format, self.view.itemsize)
        if got != dtype:
            raise TypeError(f"{name} must have dtype {dtype}, got {got}")
        cdef Py_ssize_t isz = self.view.itemsize
        cdef int64_t need
        if rows == 0 or cols == 0:
            need = 0
        else:
            if rows > 1 and ld > (INT64_MAX - cols) // (rows - 1):
                raise ValueError(f"{name}: extent (rows-1)*ld+cols overflows")
            need = (rows - 1) * ld + cols
        if self.view.ndim == 1:
            if self.view.strides[0] != isz and self.view.shape[0] > 1:
                raise ValueError(f"{name} must be contiguous: a 1-D {name} is read as a flat buffer")
            if self.view.shape[0] < need:
                raise ValueError(f"{name} is too small: {self.view.shape[0]} elements, but "
                                 f"{rows} x {cols} with ld={ld} needs {need}")
        elif self.view.ndim == 2:
            if self.view.shape[0] * self.view.shape[1] == 0:
                if need > 0:
                    raise ValueError(f"{name} is empty but {rows} x {cols} elements are needed")
            else:
                if self.view.shape[1] > 1 and self.view.strides[1] != isz:
                    raise ValueError(f"{name} must be contiguous along rows (unit column stride); "
                                     f"got strides {self.view.strides[0]}, {self.view.strides[1]} bytes")
                if self.view.shape[0] > 1 and self.view.strides[0] != ld * isz:
                    raise ValueError(
                        f"{name} rows are {self.view.strides[0] // isz} elements apart but "
                        f"ld={ld}: a 2-D {name} must have rows exactly ld elements apart "
                        f"(pass a 1-D flat buffer, or a C-ordered array X or X[:, :k] with ld=X.shape[1])")
                if self.view.shape[0] < rows or self.view.shape[1] < cols:
                    raise ValueError(f"{name} is too small: shape ({self.view.shape[0]}, "
                                     f"{self.view.shape[1]}), but {rows} x {cols} is needed")
        else:
            raise ValueError(f"{name} must be 1-D (flat buffer) or 2-D, got {self.view.ndim}-D")
        return 0


cdef int _raise_status(int st, str fn) except -1:
    if st == 0:
        return 0
    if st == 1:
        raise MemoryError(f"{fn}: out of memory")
    if st == 2:
        raise ValueError(f"{fn}: invalid arguments")
    raise NotImplementedError(f"{fn}: unimplemented (status {st})")


# ---- entry points -----------------------------------------------------------------------------

cdef object _gemm(str fn, str dtype, transa, transb, int64_t M, int64_t N, int64_t K, alpha, A,
                  int64_t lda, B, int64_t ldb, beta, C, int64_t ldc):
    """The float family (s, d, c, z): checks in oneDNN's order, buffers acquired, C computed in place."""
    cdef bint cplx = dtype.startswith("complex")
    cdef char ta = _trans_flag(transa, "transa", cplx), tb = _trans_flag(transb, "transb", cplx)
    _check_dims_lds(ta, tb, M, N, K, lda, ldb, ldc)
    cdef double complex al, be
    try:
        al = alpha if cplx else <double>alpha
    except TypeError:
        raise TypeError(f"alpha must be a {'complex' if cplx else 'real'} number, got {type(alpha).__name__}") from None
    try:
        be = beta if cplx else <double>beta
    except TypeError:
        raise TypeError(f"beta must be a {'complex' if cplx else 'real'} number, got {type(beta).__name__}") from None
    cdef bint work = M > 0 and N > 0
    cdef bint reads_ab = work and K > 0 and al != 0
    cdef _Operand a = _Operand(), b = _Operand(), c = _Operand()
    a.acquire(A, "A", dtype, (K if _is_t(ta) else M) if reads_ab else 0,
              (M if _is_t(ta) else K) if reads_ab else 0, lda, False)
    b.acquire(B, "B", dtype, (N if _is_t(tb) else K) if reads_ab else 0,
              (K if _is_t(tb) else N) if reads_ab else 0, ldb, False)
    c.acquire(C, "C", dtype, M if work else 0, N if work else 0, ldc, True)
    cdef int st
    cdef gemmkit_complex64_t a64, b64
    cdef gemmkit_complex128_t a128, b128
    if dtype == "float32":
        with nogil:
            st = gemmkit_sgemm(ta, tb, M, N, K, <float>al.real, <const float *>a.ptr, lda, <const float *>b.ptr,
                               ldb, <float>be.real, <float *>c.ptr, ldc)
    elif dtype == "float64":
        with nogil:
            st = gemmkit_dgemm(ta, tb, M, N, K, al.real, <const double *>a.ptr, lda, <const double *>b.ptr,
                               ldb, be.real, <double *>c.ptr, ldc)
    elif dtype == "complex64":
        a64.re = al.real; a64.im = al.imag; b64.re = be.real; b64.im = be.imag
        with nogil:
            st = gemmkit_cgemm(ta, tb, M, N, K, a64, <const gemmkit_complex64_t *>a.ptr, lda,
                               <const gemmkit_complex64_t *>b.ptr, ldb, b64, <gemmkit_complex64_t *>c.ptr, ldc)
    else:
        a128.re = al.real; a128.im = al.imag; b128.re = be.real; b128.im = be.imag
        with nogil:
            st = gemmkit_zgemm(ta, tb, M, N, K, a128, <const gemmkit_complex128_t *>a.ptr, lda,
                               <const gemmkit_complex128_t *>b.ptr, ldb, b128, <gemmkit_complex128_t *>c.ptr, ldc)
    _raise_status(st, fn)
    return C


def sgemm(transa, transb, int64_t M, int64_t N, int64_t K, alpha, A, int64_t lda, B, int64_t ldb, beta, C,
          int64_t ldc):
    """C := alpha * op(A) @ op(B) + beta * C (row-major, float32, in place); returns C."""
    return _gemm("sgemm", "float32", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def dgemm(transa, transb, int64_t M, int64_t N, int64_t K, alpha, A, int64_t lda, B, int64_t ldb, beta, C,
          int64_t ldc):
    """C := alpha * op(A) @ op(B) + beta * C (row-major, float64, in place); returns C."""
    return _gemm("dgemm", "float64", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def cgemm(transa, transb, int64_t M, int64_t N, int64_t K, alpha, A, int64_t lda, B, int64_t ldb, beta, C,
          int64_t ldc):
    """C := alpha * op(A) @ op(B) + beta * C (row-major, complex64, in place; op: 'N', 'T', 'C' = A^H)."""
    return _gemm("cgemm", "complex64", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def zgemm(transa, transb, int64_t M, int64_t N, int64_t K, alpha, A, int64_t lda, B, int64_t ldb, beta, C,
          int64_t ldc):
    """C := alpha * op(A) @ op(B) + beta * C (row-major, complex128, in place; op: 'N', 'T', 'C' = A^H)."""
    return _gemm("zgemm", "complex128", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


# ---- float16 and bfloat16 ----------------------------------------------------------------------

cdef object _bfloat16_bits(object x, str name):
    """A bfloat16 NumPy array (ml_dtypes) as its uint16 bits (a view; NumPy exports no buffer for it)."""
    dt = getattr(x, "dtype", None)
    if getattr(dt, "name", None) != "bfloat16" or not isinstance(x, np.ndarray):
        got = dt if dt is not None else type(x).__name__
        raise TypeError(f"{name} must be a bfloat16 NumPy array (ml_dtypes.bfloat16), got {got}")
    return x.view(np.uint16)


cdef object _gemm_half(str fn, bint bf16, transa, transb, int64_t M, int64_t N, int64_t K, alpha, A,
                       int64_t lda, B, int64_t ldb, beta, C, int64_t ldc):
    """float16 / bfloat16: checks as for the float family, then gemmkit_hgemm / gemmkit_bf16gemm."""
    cdef char ta = _trans_flag(transa, "transa"), tb = _trans_flag(transb, "transb")
    _check_dims_lds(ta, tb, M, N, K, lda, ldb, ldc)
    cdef float al, be
    try:
        al = <double>alpha
    except TypeError:
        raise TypeError(f"alpha must be a real number, got {type(alpha).__name__}") from None
    try:
        be = <double>beta
    except TypeError:
        raise TypeError(f"beta must be a real number, got {type(beta).__name__}") from None
    cdef str dtype = "float16"
    if bf16:
        A, B, C_bits = _bfloat16_bits(A, "A"), _bfloat16_bits(B, "B"), _bfloat16_bits(C, "C")
        dtype = "uint16"
    else:
        C_bits = C
    cdef bint work = M > 0 and N > 0
    cdef bint reads_ab = work and K > 0 and al != 0
    cdef _Operand a = _Operand(), b = _Operand(), c = _Operand()
    a.acquire(A, "A", dtype, (K if _is_t(ta) else M) if reads_ab else 0,
              (M if _is_t(ta) else K) if reads_ab else 0, lda, False)
    b.acquire(B, "B", dtype, (N if _is_t(tb) else K) if reads_ab else 0,
              (K if _is_t(tb) else N) if reads_ab else 0, ldb, False)
    c.acquire(C_bits, "C", dtype, M if work else 0, N if work else 0, ldc, True)
    cdef int st
    if bf16:
        with nogil:
            st = gemmkit_bf16gemm(ta, tb, M, N, K, al, <const uint16_t *>a.ptr, lda, <const uint16_t *>b.ptr, ldb,
                                  be, <uint16_t *>c.ptr, ldc)
    else:
        with nogil:
            st = gemmkit_hgemm(ta, tb, M, N, K, al, <const uint16_t *>a.ptr, lda, <const uint16_t *>b.ptr, ldb,
                               be, <uint16_t *>c.ptr, ldc)
    _raise_status(st, fn)
    return C


def hgemm(transa, transb, int64_t M, int64_t N, int64_t K, alpha, A, int64_t lda, B, int64_t ldb, beta, C,
          int64_t ldc):
    """C := alpha * op(A) @ op(B) + beta * C for float16 (in place): float arithmetic, rounded once."""
    return _gemm_half("hgemm", False, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def bf16gemm(transa, transb, int64_t M, int64_t N, int64_t K, alpha, A, int64_t lda, B, int64_t ldb, beta, C,
             int64_t ldc):
    """C := alpha * op(A) @ op(B) + beta * C for bfloat16 NumPy arrays (ml_dtypes, in place): float
    arithmetic, rounded once."""
    return _gemm_half("bf16gemm", True, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


# ---- int32, int64, uint32, uint64 (wrap-around) ------------------------------------------------

cdef object _gemm_wrap(str fn, str dtype, transa, transb, int64_t M, int64_t N, int64_t K, alpha, A,
                       int64_t lda, B, int64_t ldb, beta, C, int64_t ldc):
    """The integer family: checks as for the float family (A and B are read even when alpha = 0: the
    product's float64 scaling gives NaN for an infinite alpha), then gemmkit_gemm_<i/u><32/64>."""
    cdef char ta = _trans_flag(transa, "transa"), tb = _trans_flag(transb, "transb")
    _check_dims_lds(ta, tb, M, N, K, lda, ldb, ldc)
    cdef double al, be
    try:
        al = alpha
    except TypeError:
        raise TypeError(f"alpha must be a real number, got {type(alpha).__name__}") from None
    try:
        be = beta
    except TypeError:
        raise TypeError(f"beta must be a real number, got {type(beta).__name__}") from None
    cdef bint work = M > 0 and N > 0
    cdef bint reads_ab = work and K > 0
    cdef _Operand a = _Operand(), b = _Operand(), c = _Operand()
    a.acquire(A, "A", dtype, (K if _is_t(ta) else M) if reads_ab else 0,
              (M if _is_t(ta) else K) if reads_ab else 0, lda, False)
    b.acquire(B, "B", dtype, (N if _is_t(tb) else K) if reads_ab else 0,
              (K if _is_t(tb) else N) if reads_ab else 0, ldb, False)
    c.acquire(C, "C", dtype, M if work else 0, N if work else 0, ldc, True)
    cdef int st
    if dtype == "int32":
        with nogil:
            st = gemmkit_gemm_i32(ta, tb, M, N, K, al, <const int32_t *>a.ptr, lda, <const int32_t *>b.ptr, ldb,
                                  be, <int32_t *>c.ptr, ldc)
    elif dtype == "int64":
        with nogil:
            st = gemmkit_gemm_i64(ta, tb, M, N, K, al, <const int64_t *>a.ptr, lda, <const int64_t *>b.ptr, ldb,
                                  be, <int64_t *>c.ptr, ldc)
    elif dtype == "uint32":
        with nogil:
            st = gemmkit_gemm_u32(ta, tb, M, N, K, al, <const uint32_t *>a.ptr, lda, <const uint32_t *>b.ptr,
                                  ldb, be, <uint32_t *>c.ptr, ldc)
    else:
        with nogil:
            st = gemmkit_gemm_u64(ta, tb, M, N, K, al, <const uint64_t *>a.ptr, lda, <const uint64_t *>b.ptr,
                                  ldb, be, <uint64_t *>c.ptr, ldc)
    _raise_status(st, fn)
    return C


def gemm_i32(transa, transb, int64_t M, int64_t N, int64_t K, alpha, A, int64_t lda, B, int64_t ldb, beta, C,
             int64_t ldc):
    """int32 Gemm as ONNX computes it: the product wraps modulo 2^32, alpha and beta scale it in float64,
    the result is truncated back (see gemmkit.h); C in place."""
    return _gemm_wrap("gemm_i32", "int32", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def gemm_i64(transa, transb, int64_t M, int64_t N, int64_t K, alpha, A, int64_t lda, B, int64_t ldb, beta, C,
             int64_t ldc):
    """int64 Gemm as ONNX computes it (as gemm_i32, modulo 2^64)."""
    return _gemm_wrap("gemm_i64", "int64", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def gemm_u32(transa, transb, int64_t M, int64_t N, int64_t K, alpha, A, int64_t lda, B, int64_t ldb, beta, C,
             int64_t ldc):
    """uint32 Gemm as ONNX computes it (as gemm_i32, unsigned)."""
    return _gemm_wrap("gemm_u32", "uint32", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def gemm_u64(transa, transb, int64_t M, int64_t N, int64_t K, alpha, A, int64_t lda, B, int64_t ldb, beta, C,
             int64_t ldc):
    """uint64 Gemm as ONNX computes it (as gemm_i64, unsigned)."""
    return _gemm_wrap("gemm_u64", "uint64", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


cdef object _offset_vector(object co, char oc, int64_t M, int64_t N):
    """co as a contiguous int32 NumPy array, its length checked against offsetc."""
    cdef int64_t need = 1 if oc == b'F' else (M if oc == b'C' else N)
    if co is None:
        raise TypeError("co must be an int32 array, an int or a sequence of ints, got None")
    try:
        arr = np.asarray(co)
    except Exception as e:
        raise TypeError(f"co must be an int32 array, an int or a sequence of ints ({e})") from None
    if arr.size == 0:
        arr = arr.astype(np.int32)  # an empty list is float64 to NumPy; no offsets are read anyway
    if arr.dtype.kind not in "iu":
        raise TypeError(f"co must hold integers, got dtype {arr.dtype}")
    if arr.dtype != np.int32:
        if arr.size and (arr.min() < -2**31 or arr.max() > 2**31 - 1):
            raise ValueError("co values must fit in int32")
        arr = arr.astype(np.int32)
    arr = np.ascontiguousarray(arr.reshape(-1))
    if arr.shape[0] < need:
        what = {ord('F'): "1 (offsetc='F')", ord('C'): f"M={M} (offsetc='C')",
                ord('R'): f"N={N} (offsetc='R')"}[oc]
        raise ValueError(f"co has {arr.shape[0]} elements but needs at least {what}")
    return arr


cdef object _gemm_i8(str fn, bint a_signed, transa, transb, offsetc, int64_t M, int64_t N, int64_t K,
                     float alpha, A, int64_t lda, ao, B, int64_t ldb, bo, float beta, C, int64_t ldc,
                     co):
    cdef char ta = _trans_flag(transa, "transa"), tb = _trans_flag(transb, "transb")
    cdef char oc = _offsetc_flag(offsetc)
    _check_dims_lds(ta, tb, M, N, K, lda, ldb, ldc)
    lo, hi = (-128, 127) if a_signed else (0, 255)
    if not isinstance(ao, (int, np.integer)) or not lo <= ao <= hi:
        raise ValueError(f"ao must be an integer in [{lo}, {hi}], got {ao!r}")
    if not isinstance(bo, (int, np.integer)) or not -128 <= bo <= 127:
        raise ValueError(f"bo must be an integer in [-128, 127], got {bo!r}")
    cdef bint work = M > 0 and N > 0
    cdef bint reads_ab = work and K > 0 and alpha != 0.0
    co_arr = _offset_vector(co, oc, M, N)
    cdef _Operand a = _Operand(), b = _Operand(), c = _Operand(), o = _Operand()
    a.acquire(A, "A", "int8" if a_signed else "uint8", (K if _is_t(ta) else M) if reads_ab else 0,
              (M if _is_t(ta) else K) if reads_ab else 0, lda, False)
    b.acquire(B, "B", "int8", (N if _is_t(tb) else K) if reads_ab else 0,
              (K if _is_t(tb) else N) if reads_ab else 0, ldb, False)
    c.acquire(C, "C", "int32", M if work else 0, N if work else 0, ldc, True)
    o.acquire(co_arr, "co", "int32", 0, 0, 1, False)
    cdef int st
    cdef int ao_i = ao, bo_i = bo
    if a_signed:
        with nogil:
            st = gemmkit_gemm_s8s8s32(ta, tb, oc, M, N, K, alpha, <const int8_t *>a.ptr, lda,
                                      <int8_t>ao_i, <const int8_t *>b.ptr, ldb, <int8_t>bo_i, beta,
                                      <int32_t *>c.ptr, ldc, <const int32_t *>o.ptr)
    else:
        with nogil:
            st = gemmkit_gemm_u8s8s32(ta, tb, oc, M, N, K, alpha, <const uint8_t *>a.ptr, lda,
                                      <uint8_t>ao_i, <const int8_t *>b.ptr, ldb, <int8_t>bo_i, beta,
                                      <int32_t *>c.ptr, ldc, <const int32_t *>o.ptr)
    _raise_status(st, fn)
    return C


def gemm_u8s8s32(transa, transb, offsetc, int64_t M, int64_t N, int64_t K, float alpha, A,
                 int64_t lda, ao, B, int64_t ldb, bo, float beta, C, int64_t ldc, co):
    """C := alpha * (op(A) - ao) @ (op(B) - bo) + beta * C + co; A uint8, B int8, C int32."""
    return _gemm_i8("gemm_u8s8s32", False, transa, transb, offsetc, M, N, K, alpha, A, lda, ao, B,
                    ldb, bo, beta, C, ldc, co)


def gemm_s8s8s32(transa, transb, offsetc, int64_t M, int64_t N, int64_t K, float alpha, A,
                 int64_t lda, ao, B, int64_t ldb, bo, float beta, C, int64_t ldc, co):
    """C := alpha * (op(A) - ao) @ (op(B) - bo) + beta * C + co; A int8, B int8, C int32."""
    return _gemm_i8("gemm_s8s8s32", True, transa, transb, offsetc, M, N, K, alpha, A, lda, ao, B,
                    ldb, bo, beta, C, ldc, co)


# ---- configuration ----------------------------------------------------------------------------

def get_num_threads():
    return gemmkit_get_num_threads()


def set_num_threads(int n):
    gemmkit_set_num_threads(n)


def cpu_features():
    cdef uint32_t f = gemmkit_cpu_features()
    return {name: bool(f & bit) for name, bit in CPU_FEATURE_BITS.items()}


def arch_supported(name):
    """Whether this CPU and build can run kernel path `name` (does not change the path in use)."""
    cdef bytes b = str(name).encode()
    return gemmkit_arch_supported(b) == 1


def set_arch(name):
    """Force a kernel path ('generic', 'avx2', 'avx_vnni', 'avx512', 'avx512_vnni'); None = best."""
    cdef bytes b = (name or "").encode()
    cdef int st = gemmkit_set_arch(b)
    if st == 2:
        raise ValueError(f"unknown kernel path {name!r}; expected one of {', '.join(ARCHS)}")
    if st == 3:
        raise RuntimeError(f"kernel path {name!r} is not supported by this CPU or this build")


def get_arch():
    return gemmkit_get_arch().decode()


def kernel_info():
    """The configuration in use: per operation its kernel, micro-tile and cache blocks."""
    cdef gemmkit_kernel_info_t k
    out = {"arch": gemmkit_get_arch().decode()}
    for op in ("sgemm", "dgemm", "cgemm", "zgemm", "int8"):
        if gemmkit_kernel_info(op.encode(), &k) != 0:
            raise RuntimeError(f"gemmkit_kernel_info({op!r}) failed")
        out["uarch"] = k.uarch.decode()
        if op == "int8":
            out[op] = {"kernel": k.kernel.decode(), "MR": k.mr, "NR": k.nr, "k_group": k.k_group,
                       "packed_bytes": k.elem, "MC": k.mc, "K_chunk": k.kc, "NC": k.nc, "KB": k.kb}
        else:
            out[op] = {"kernel": k.kernel.decode(), "MR": k.mr, "NR": k.nr, "MC": k.mc, "KC": k.kc, "NC": k.nc}
    return out
