# cython: language_level=3
"""Thin Cython layer over the C core: checks arguments and buffers (naming the argument at fault),
then calls gemmkit_* with the GIL released. No arithmetic on matrix data happens here."""

from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release, PyBUF_STRIDES, PyBUF_FORMAT,
                             PyBUF_WRITABLE)
from libc.stdint cimport int64_t, int32_t, uint8_t, int8_t, uint16_t, uint32_t, uint64_t, INT64_MAX
from libc.math cimport isinf
from libc.string cimport memcpy
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsDouble

import numbers

import numpy as np
cimport numpy as cnp

cnp.import_array()

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


# ---- argument conversion: integers must be integers, scalars must fit the routine's type ----------

cdef inline bint _is_bool(object x):
    return isinstance(x, (bool, np.bool_))


cdef int64_t _int_arg(object x, str name) except? -1:
    """A size, leading dimension or offset: a Python or NumPy integer (never a float or a bool)."""
    if type(x) is int and -INT64_MAX <= x <= INT64_MAX:  # the common case, quickly
        return x
    if _is_bool(x) or not isinstance(x, (int, np.integer)):
        raise TypeError(f"{name} must be an integer, got {type(x).__name__} {x!r}")
    v = int(x)
    if not -INT64_MAX <= v <= INT64_MAX:
        raise ValueError(f"{name}={v} is out of range (64-bit signed integers)")
    return v


cdef double _real_arg(object x, str name, bint single) except? -1.0:
    """alpha/beta of a real routine, as a double that is exactly representable in its scalar type
    (float32 when `single`): a value that would overflow to infinity is refused, not rounded."""
    cdef double d
    if type(x) is float:  # the common case, quickly
        d = x
        if not (single and isinf(<float>d) and not isinf(d)):
            return d
    if _is_bool(x) or not isinstance(x, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(x).__name__} {x!r}")
    try:
        v = float(x)
    except OverflowError:
        raise ValueError(f"{name}={x!r} is too large for {'float32' if single else 'float64'}") from None
    if single and isinf(<float>v) and not isinf(v):
        raise ValueError(f"{name}={x!r} is too large for float32 (it would become infinity)")
    return v


cdef object _complex_arg(object x, str name, bint single):
    """alpha/beta of a complex routine (real numbers allowed), each part checked as _real_arg does."""
    if _is_bool(x) or not isinstance(x, numbers.Complex):
        raise TypeError(f"{name} must be a complex number, got {type(x).__name__} {x!r}")
    try:
        z = complex(x)
    except OverflowError:
        raise ValueError(f"{name}={x!r} is too large for {'complex64' if single else 'complex128'}") from None
    if single and ((isinf(<float>z.real) and not isinf(z.real)) or (isinf(<float>z.imag) and not isinf(z.imag))):
        raise ValueError(f"{name}={x!r} is too large for complex64 (a part would become infinity)")
    return z


# ---- argument checks (same order and meaning as oneDNN's) ----------------------------------------

cdef char _trans_flag(object t, str name, bint allow_conj=False) except 0:
    cdef str allowed = "NnTtCcRr" if allow_conj else "NnTt"
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

cdef bint _format_is(const char *fmt, Py_ssize_t itemsize, str dtype):
    """Whether a buffer's struct format and item size are those of `dtype` (C-level checks only)."""
    if fmt == NULL:
        return _dtype_of(fmt, itemsize) == dtype
    cdef const char *f = fmt
    if f[0] == b'@' or f[0] == b'=' or f[0] == b'<' or f[0] == b'|':
        f += 1
    if dtype == "float32":
        return itemsize == 4 and f[0] == b'f' and f[1] == 0
    if dtype == "float64":
        return itemsize == 8 and f[0] == b'd' and f[1] == 0
    if dtype == "complex64":
        return itemsize == 8 and f[0] == b'Z' and f[1] == b'f' and f[2] == 0
    if dtype == "complex128":
        return itemsize == 16 and f[0] == b'Z' and f[1] == b'd' and f[2] == 0
    return _dtype_of(fmt, itemsize) == dtype


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

    cdef int get_buffer(self, object obj, str name, str dtype, bint writable) except -1:
        """Holds obj's buffer (strides and format); TypeError/ValueError naming `name` if it has none."""
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
        return 0

    cdef int acquire(self, object obj, str name, str dtype, int64_t rows, int64_t cols, int64_t ld,
                     bint writable) except -1:
        self.get_buffer(obj, name, dtype, writable)
        if not _format_is(self.view.format, self.view.itemsize, dtype):
            raise TypeError(f"{name} must have dtype {dtype}, got {_dtype_of(self.view.format, self.view.itemsize)}")
        cdef Py_ssize_t isz = self.view.itemsize
        cdef int64_t need
        cdef str ld_name = "ld" + name.lower() if name in ("A", "B", "C") else "ld"  # the argument's name
        if rows == 0 or cols == 0:
            need = 0
        else:
            if rows > 1 and ld > (INT64_MAX - cols) // (rows - 1):
                raise ValueError(f"{ld_name}={ld} is too large: {name}'s extent ({rows}-1)*{ld_name}+{cols} "
                                 f"overflows 64-bit integers")
            need = (rows - 1) * ld + cols
        if self.view.ndim == 1:
            if self.view.strides[0] != isz and self.view.shape[0] > 1:
                raise ValueError(f"{name} must be contiguous: a 1-D {name} is read as a flat buffer")
            if self.view.shape[0] < need:
                raise ValueError(f"{name} is too small: {self.view.shape[0]} elements, but "
                                 f"{rows} x {cols} with {ld_name}={ld} needs {need}")
        elif self.view.ndim == 2:
            if self.view.shape[0] * self.view.shape[1] == 0:
                if need > 0:
                    raise ValueError(f"{name} is empty but {rows} x {cols} elements are needed")
            else:
                if self.view.shape[1] > 1 and self.view.strides[1] != isz:
                    raise ValueError(f"{name} must be contiguous along rows (unit column stride); "
                                     f"got strides {self.view.strides[0]}, {self.view.strides[1]} bytes")
                if self.view.shape[0] > 1 and (self.view.strides[0] <= 0 or self.view.strides[0] % isz != 0
                                               or self.view.strides[0] // isz != ld):
                    raise ValueError(
                        f"{name} rows are {self.view.strides[0] // isz} elements apart but "
                        f"{ld_name}={ld}: a 2-D {name} must have rows exactly {ld_name} elements apart "
                        f"(pass a 1-D flat buffer, or a C-ordered array X or X[:, :k] with {ld_name}=X.shape[1])")
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

# ---- the float family's one call into C (every entry: plain, stacks, gemmkit.blas) ------------------

cdef enum FloatKind:
    KIND_S = 0
    KIND_D = 1
    KIND_C = 2
    KIND_Z = 3
    KIND_H = 4      # float16 operands and C (hgemm)
    KIND_BF16 = 5   # bfloat16 operands (their bits), a float32 C (gemm_bf16bf16f32)


cdef int _float_kind(str dtype) except -1:
    if dtype == "float32":
        return KIND_S
    if dtype == "float64":
        return KIND_D
    if dtype == "complex64":
        return KIND_C
    return KIND_Z


cdef int _call_float_gemm(int kind, char ta, char tb, int64_t M, int64_t N, int64_t K, double complex al,
                          const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb,
                          double complex be, void *C, int64_t ldc, int64_t sc, int64_t batch) noexcept nogil:
    """gemmkit_<s|d|c|z|h>gemm_batch or gemmkit_gemm_bf16bf16f32_batch (the plain entries are batches of one):
    alpha and beta narrowed to the routine's scalar type here, once for every caller. Returns the status."""
    cdef gemmkit_complex64_t a64, b64
    cdef gemmkit_complex128_t a128, b128
    if kind == KIND_H:
        return gemmkit_hgemm_batch(ta, tb, M, N, K, <float>al.real, <const uint16_t *>A, lda, sa, <const uint16_t *>B,
                                   ldb, sb, <float>be.real, <uint16_t *>C, ldc, sc, batch)
    if kind == KIND_BF16:
        return gemmkit_gemm_bf16bf16f32_batch(ta, tb, M, N, K, <float>al.real, <const uint16_t *>A, lda, sa,
                                              <const uint16_t *>B, ldb, sb, <float>be.real, <float *>C, ldc, sc, batch)
    if kind == KIND_S:
        return gemmkit_sgemm_batch(ta, tb, M, N, K, <float>al.real, <const float *>A, lda, sa, <const float *>B, ldb,
                                   sb, <float>be.real, <float *>C, ldc, sc, batch)
    if kind == KIND_D:
        return gemmkit_dgemm_batch(ta, tb, M, N, K, al.real, <const double *>A, lda, sa, <const double *>B, ldb, sb,
                                   be.real, <double *>C, ldc, sc, batch)
    if kind == KIND_C:
        a64.re = <float>al.real; a64.im = <float>al.imag; b64.re = <float>be.real; b64.im = <float>be.imag
        return gemmkit_cgemm_batch(ta, tb, M, N, K, a64, <const gemmkit_complex64_t *>A, lda, sa,
                                   <const gemmkit_complex64_t *>B, ldb, sb, b64, <gemmkit_complex64_t *>C, ldc, sc,
                                   batch)
    a128.re = al.real; a128.im = al.imag; b128.re = be.real; b128.im = be.imag
    return gemmkit_zgemm_batch(ta, tb, M, N, K, a128, <const gemmkit_complex128_t *>A, lda, sa,
                               <const gemmkit_complex128_t *>B, ldb, sb, b128, <gemmkit_complex128_t *>C, ldc, sc,
                               batch)


cdef (int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) _sizes(char ta, char tb, M_, N_, K_, lda_, ldb_,
                                                                   ldc_) except *:
    """M, N, K and the leading dimensions as checked integers (the same rules for every GEMM family)."""
    cdef int64_t M = _int_arg(M_, "M"), N = _int_arg(N_, "N"), K = _int_arg(K_, "K")
    cdef int64_t lda = _int_arg(lda_, "lda"), ldb = _int_arg(ldb_, "ldb"), ldc = _int_arg(ldc_, "ldc")
    _check_dims_lds(ta, tb, M, N, K, lda, ldb, ldc)
    return M, N, K, lda, ldb, ldc


cdef int _acquire_abc(_Operand a, _Operand b, _Operand c, A, B, C, str a_dtype, str b_dtype, str c_dtype, char ta,
                      char tb, int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc,
                      bint reads_ab) except -1:
    """A, B (read when reads_ab and there is a product) and C (written) held and checked for op(A) M x K,
    op(B) K x N, C M x N with their leading dimensions."""
    cdef bint work = M > 0 and N > 0
    reads_ab = reads_ab and work and K > 0
    a.acquire(A, "A", a_dtype, (K if _is_t(ta) else M) if reads_ab else 0,
              (M if _is_t(ta) else K) if reads_ab else 0, lda, False)
    b.acquire(B, "B", b_dtype, (N if _is_t(tb) else K) if reads_ab else 0,
              (K if _is_t(tb) else N) if reads_ab else 0, ldb, False)
    c.acquire(C, "C", c_dtype, M if work else 0, N if work else 0, ldc, True)
    return 0


cdef object _gemm(str fn, str dtype, transa, transb, M_, N_, K_, alpha, A, lda_, B, ldb_, beta, C, ldc_):
    """The float family (s, d, c, z): checks in oneDNN's order, buffers acquired, C computed in place."""
    cdef bint cplx = dtype.startswith("complex")
    cdef bint single = dtype in ("float32", "complex64")
    cdef char ta = _trans_flag(transa, "transa", cplx), tb = _trans_flag(transb, "transb", cplx)
    cdef int64_t M, N, K, lda, ldb, ldc
    M, N, K, lda, ldb, ldc = _sizes(ta, tb, M_, N_, K_, lda_, ldb_, ldc_)
    cdef double complex al, be
    if cplx:
        al = _complex_arg(alpha, "alpha", single)
        be = _complex_arg(beta, "beta", single)
    else:
        al = _real_arg(alpha, "alpha", single)
        be = _real_arg(beta, "beta", single)
    cdef _Operand a = _Operand(), b = _Operand(), c = _Operand()
    _acquire_abc(a, b, c, A, B, C, dtype, dtype, dtype, ta, tb, M, N, K, lda, ldb, ldc, al != 0)
    cdef int st, kind = _float_kind(dtype)
    with nogil:
        st = _call_float_gemm(kind, ta, tb, M, N, K, al, a.ptr, lda, 0, b.ptr, ldb, 0, be, c.ptr, ldc, 0, 1)
    _raise_status(st, fn)
    return C


def sgemm(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
    """C := alpha * op(A) @ op(B) + beta * C, row-major float32, in place (oneDNN's ``dnnl_sgemm``).

    Parameters
    ----------
    transa, transb : str
        ``'N'`` (op(X) = X) or ``'T'`` (op(X) = X^T), either case.
    M, N, K : int
        op(A) is M x K, op(B) K x N, C M x N. Python or NumPy integers (a float or a bool is a
        ``TypeError``).
    alpha, beta : float
        The scale factors; they must be representable in the routine's type. With ``beta = 0`` C is not read.
    A, B : buffer of float32
        A NumPy array or any buffer of that dtype: 1-D (flat memory, as the C API sees it) or 2-D with rows
        exactly ``lda`` / ``ldb`` elements apart and contiguous along rows. Read only.
    lda, ldb, ldc : int
        Leading dimensions (row strides, in elements) of the row-major A, B and C.
    C : writable buffer of float32
        Updated in place.

    Returns
    -------
    C
        The same object, updated.

    Raises
    ------
    ValueError
        A bad size, leading dimension, trans flag or alpha/beta, or a buffer too small for its matrix; the
        message names the argument. C is left untouched.
    TypeError
        A buffer of another dtype, or a size given as a float or bool.

    See Also
    --------
    gemmkit.gemm : the same product on whole 2-D arrays, shapes taken from the arrays.

    Examples
    --------
    >>> import numpy as np, gemmkit
    >>> A, B = np.ones((2, 4), np.float32), np.ones((3, 4), np.float32)
    >>> C = np.zeros((2, 3), np.float32)
    >>> gemmkit.sgemm('N', 'T', 2, 3, 4, 1.0, A, 4, B, 4, 0.0, C, 3)
    array([[4., 4., 4.],
           [4., 4., 4.]], dtype=float32)
    """
    return _gemm("sgemm", "float32", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def dgemm(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
    """C := alpha * op(A) @ op(B) + beta * C, row-major float64, in place.

    Parameters
    ----------
    transa, transb : str
        ``'N'`` (op(X) = X) or ``'T'`` (op(X) = X^T), either case.
    M, N, K : int
        op(A) is M x K, op(B) K x N, C M x N. Python or NumPy integers (a float or a bool is a
        ``TypeError``).
    alpha, beta : float
        The scale factors; they must be representable in the routine's type. With ``beta = 0`` C is not read.
    A, B : buffer of float64
        A NumPy array or any buffer of that dtype: 1-D (flat memory, as the C API sees it) or 2-D with rows
        exactly ``lda`` / ``ldb`` elements apart and contiguous along rows. Read only.
    lda, ldb, ldc : int
        Leading dimensions (row strides, in elements) of the row-major A, B and C.
    C : writable buffer of float64
        Updated in place.

    Returns
    -------
    C
        The same object, updated.

    Raises
    ------
    ValueError
        A bad size, leading dimension, trans flag or alpha/beta, or a buffer too small for its matrix; the
        message names the argument. C is left untouched.
    TypeError
        A buffer of another dtype, or a size given as a float or bool.

    Examples
    --------
    >>> import numpy as np, gemmkit
    >>> A = np.arange(6.0).reshape(2, 3); B = np.eye(3); C = np.ones((2, 3))
    >>> gemmkit.dgemm('N', 'N', 2, 3, 3, 2.0, A, 3, B, 3, 1.0, C, 3)
    array([[ 1.,  3.,  5.],
           [ 7.,  9., 11.]])
    """
    return _gemm("dgemm", "float64", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def cgemm(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
    """C := alpha * op(A) @ op(B) + beta * C, row-major complex64, in place.

    Parameters
    ----------
    transa, transb : str
        ``'N'`` (op(X) = X) or ``'T'`` (op(X) = X^T), either case; also ``'C'`` (op(X) = X^H) and ``'R'`` (conj(X), no transpose).
    M, N, K : int
        op(A) is M x K, op(B) K x N, C M x N. Python or NumPy integers (a float or a bool is a
        ``TypeError``).
    alpha, beta : complex
        The scale factors; they must be representable in the routine's type. With ``beta = 0`` C is not read.
    A, B : buffer of complex64
        A NumPy array or any buffer of that dtype: 1-D (flat memory, as the C API sees it) or 2-D with rows
        exactly ``lda`` / ``ldb`` elements apart and contiguous along rows. Read only.
    lda, ldb, ldc : int
        Leading dimensions (row strides, in elements) of the row-major A, B and C.
    C : writable buffer of complex64
        Updated in place.

    Returns
    -------
    C
        The same object, updated.

    Raises
    ------
    ValueError
        A bad size, leading dimension, trans flag or alpha/beta, or a buffer too small for its matrix; the
        message names the argument. C is left untouched.
    TypeError
        A buffer of another dtype, or a size given as a float or bool.

    Examples
    --------
    >>> import numpy as np, gemmkit
    >>> A = np.array([[1j, 1]], np.complex64); C = np.zeros((1, 1), np.complex64)
    >>> gemmkit.cgemm('N', 'C', 1, 1, 2, 1.0, A, 2, A, 2, 0.0, C, 1)     # A @ A^H
    array([[2.+0.j]], dtype=complex64)
    """
    return _gemm("cgemm", "complex64", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def zgemm(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
    """C := alpha * op(A) @ op(B) + beta * C, row-major complex128, in place.

    Parameters
    ----------
    transa, transb : str
        ``'N'`` (op(X) = X) or ``'T'`` (op(X) = X^T), either case; also ``'C'`` (op(X) = X^H) and ``'R'`` (conj(X), no transpose).
    M, N, K : int
        op(A) is M x K, op(B) K x N, C M x N. Python or NumPy integers (a float or a bool is a
        ``TypeError``).
    alpha, beta : complex
        The scale factors; they must be representable in the routine's type. With ``beta = 0`` C is not read.
    A, B : buffer of complex128
        A NumPy array or any buffer of that dtype: 1-D (flat memory, as the C API sees it) or 2-D with rows
        exactly ``lda`` / ``ldb`` elements apart and contiguous along rows. Read only.
    lda, ldb, ldc : int
        Leading dimensions (row strides, in elements) of the row-major A, B and C.
    C : writable buffer of complex128
        Updated in place.

    Returns
    -------
    C
        The same object, updated.

    Raises
    ------
    ValueError
        A bad size, leading dimension, trans flag or alpha/beta, or a buffer too small for its matrix; the
        message names the argument. C is left untouched.
    TypeError
        A buffer of another dtype, or a size given as a float or bool.

    Examples
    --------
    >>> import numpy as np, gemmkit
    >>> A = np.array([[1 + 1j, 2]]); C = np.zeros((1, 1), complex)
    >>> gemmkit.zgemm('N', 'T', 1, 1, 2, 1j, A, 2, A, 2, 0.0, C, 1)      # 1j * A @ A^T
    array([[-2.+4.j]])
    """
    return _gemm("zgemm", "complex128", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


# ---- float16 and bfloat16 ----------------------------------------------------------------------

cdef object _bfloat16_bits(object x, str name):
    """A bfloat16 NumPy array (ml_dtypes) as its uint16 bits (a view; NumPy exports no buffer for it)."""
    dt = getattr(x, "dtype", None)
    if getattr(dt, "name", None) != "bfloat16" or not isinstance(x, np.ndarray):
        got = dt if dt is not None else type(x).__name__
        raise TypeError(f"{name} must be a bfloat16 NumPy array (ml_dtypes.bfloat16), got {got}")
    return x.view(np.uint16)


cdef object _gemm_half(str fn, bint bf16, transa, transb, M_, N_, K_, alpha, A, lda_, B, ldb_, beta, C, ldc_):
    """float16 / bfloat16: checks as for the float family (scalars as float32), then gemmkit_hgemm /
    gemmkit_bf16gemm."""
    cdef char ta = _trans_flag(transa, "transa"), tb = _trans_flag(transb, "transb")
    cdef int64_t M, N, K, lda, ldb, ldc
    M, N, K, lda, ldb, ldc = _sizes(ta, tb, M_, N_, K_, lda_, ldb_, ldc_)
    cdef float al = _real_arg(alpha, "alpha", True), be = _real_arg(beta, "beta", True)
    cdef str dtype = "float16"
    if bf16:
        A, B, C_bits = _bfloat16_bits(A, "A"), _bfloat16_bits(B, "B"), _bfloat16_bits(C, "C")
        dtype = "uint16"
    else:
        C_bits = C
    cdef _Operand a = _Operand(), b = _Operand(), c = _Operand()
    _acquire_abc(a, b, c, A, B, C_bits, dtype, dtype, dtype, ta, tb, M, N, K, lda, ldb, ldc, al != 0)
    cdef int st
    with nogil:
        st = _call_half_gemm(bf16, ta, tb, M, N, K, al, a.ptr, lda, b.ptr, ldb, be, c.ptr, ldc)
    _raise_status(st, fn)
    return C


def gemm_bf16bf16f32(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
    """C := alpha * op(A) @ op(B) + beta * C with bfloat16 A and B and a float32 C, in place.

    oneDNN's ``gemm_bf16bf16f32`` (and NumPy's bfloat16 matmul): the operands widened exactly, float32
    arithmetic, C float32.

    Parameters
    ----------
    transa, transb : str
        ``'N'`` (op(X) = X) or ``'T'`` (op(X) = X^T), either case.
    M, N, K : int
        op(A) is M x K, op(B) K x N, C M x N. Python or NumPy integers (a float or a bool is a
        ``TypeError``).
    alpha, beta : float
        The scale factors; they must be representable in the routine's type. With ``beta = 0`` C is not read.
    A, B : buffer of bfloat16 (``ml_dtypes``)
        A NumPy array or any buffer of that dtype: 1-D (flat memory, as the C API sees it) or 2-D with rows
        exactly ``lda`` / ``ldb`` elements apart and contiguous along rows. Read only.
    lda, ldb, ldc : int
        Leading dimensions (row strides, in elements) of the row-major A, B and C.
    C : writable buffer of float32
        Updated in place.

    Returns
    -------
    C
        The same object, updated.

    Raises
    ------
    ValueError
        A bad size, leading dimension, trans flag or alpha/beta, or a buffer too small for its matrix; the
        message names the argument. C is left untouched.
    TypeError
        A buffer of another dtype, or a size given as a float or bool.

    Examples
    --------
    >>> import numpy as np, gemmkit, ml_dtypes
    >>> A = np.full((1, 4), 1.5, ml_dtypes.bfloat16); C = np.zeros((1, 1), np.float32)
    >>> gemmkit.gemm_bf16bf16f32('N', 'T', 1, 1, 4, 1.0, A, 4, A, 4, 0.0, C, 1)
    array([[9.]], dtype=float32)
    """
    cdef char ta = _trans_flag(transa, "transa"), tb = _trans_flag(transb, "transb")
    cdef int64_t M_, N_, K_, lda_, ldb_, ldc_
    M_, N_, K_, lda_, ldb_, ldc_ = _sizes(ta, tb, M, N, K, lda, ldb, ldc)
    cdef float al = _real_arg(alpha, "alpha", True), be = _real_arg(beta, "beta", True)
    cdef _Operand a = _Operand(), b = _Operand(), c = _Operand()
    _acquire_abc(a, b, c, _bfloat16_bits(A, "A"), _bfloat16_bits(B, "B"), C, "uint16", "uint16", "float32", ta, tb,
                 M_, N_, K_, lda_, ldb_, ldc_, al != 0)
    cdef int st
    with nogil:
        st = gemmkit_gemm_bf16bf16f32(ta, tb, M_, N_, K_, al, <const uint16_t *>a.ptr, lda_,
                                      <const uint16_t *>b.ptr, ldb_, be, <float *>c.ptr, ldc_)
    _raise_status(st, "gemm_bf16bf16f32")
    return C


def hgemm(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
    """C := alpha * op(A) @ op(B) + beta * C for float16, in place: float32 arithmetic, one rounding.

    A and B are widened exactly to float32, the sums run in float32 and alpha * AB + beta * C is rounded once to
    nearest even into float16 (overflow gives +-inf).

    Parameters
    ----------
    transa, transb : str
        ``'N'`` (op(X) = X) or ``'T'`` (op(X) = X^T), either case.
    M, N, K : int
        op(A) is M x K, op(B) K x N, C M x N. Python or NumPy integers (a float or a bool is a
        ``TypeError``).
    alpha, beta : float
        The scale factors; they must be representable in the routine's type. With ``beta = 0`` C is not read.
    A, B : buffer of float16
        A NumPy array or any buffer of that dtype: 1-D (flat memory, as the C API sees it) or 2-D with rows
        exactly ``lda`` / ``ldb`` elements apart and contiguous along rows. Read only.
    lda, ldb, ldc : int
        Leading dimensions (row strides, in elements) of the row-major A, B and C.
    C : writable buffer of float16
        Updated in place.

    Returns
    -------
    C
        The same object, updated.

    Raises
    ------
    ValueError
        A bad size, leading dimension, trans flag or alpha/beta, or a buffer too small for its matrix; the
        message names the argument. C is left untouched.
    TypeError
        A buffer of another dtype, or a size given as a float or bool.

    Examples
    --------
    >>> import numpy as np, gemmkit
    >>> A = np.full((2, 2), 0.5, np.float16); C = np.zeros((2, 2), np.float16)
    >>> gemmkit.hgemm('N', 'N', 2, 2, 2, 1.0, A, 2, A, 2, 0.0, C, 2)
    array([[0.5, 0.5],
           [0.5, 0.5]], dtype=float16)
    """
    return _gemm_half("hgemm", False, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def bf16gemm(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
    """C := alpha * op(A) @ op(B) + beta * C for bfloat16 arrays (``ml_dtypes.bfloat16``), in place.

    Float32 arithmetic, one rounding to nearest even into bfloat16, as :func:`hgemm`.

    Parameters
    ----------
    transa, transb : str
        ``'N'`` (op(X) = X) or ``'T'`` (op(X) = X^T), either case.
    M, N, K : int
        op(A) is M x K, op(B) K x N, C M x N. Python or NumPy integers (a float or a bool is a
        ``TypeError``).
    alpha, beta : float
        The scale factors; they must be representable in the routine's type. With ``beta = 0`` C is not read.
    A, B : buffer of bfloat16
        A NumPy array or any buffer of that dtype: 1-D (flat memory, as the C API sees it) or 2-D with rows
        exactly ``lda`` / ``ldb`` elements apart and contiguous along rows. Read only.
    lda, ldb, ldc : int
        Leading dimensions (row strides, in elements) of the row-major A, B and C.
    C : writable buffer of bfloat16
        Updated in place.

    Returns
    -------
    C
        The same object, updated.

    Raises
    ------
    ValueError
        A bad size, leading dimension, trans flag or alpha/beta, or a buffer too small for its matrix; the
        message names the argument. C is left untouched.
    TypeError
        A buffer of another dtype, or a size given as a float or bool.

    Examples
    --------
    >>> import numpy as np, gemmkit, ml_dtypes
    >>> A = np.ones((2, 3), ml_dtypes.bfloat16); C = np.zeros((2, 2), ml_dtypes.bfloat16)
    >>> C = gemmkit.bf16gemm('N', 'T', 2, 2, 3, 1.0, A, 3, A, 3, 0.0, C, 2)
    >>> C.astype(np.float32)
    array([[3., 3.],
           [3., 3.]], dtype=float32)
    """
    return _gemm_half("bf16gemm", True, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


# ---- int32, int64, uint32, uint64 (wrap-around) ------------------------------------------------

cdef object _gemm_wrap(str fn, str dtype, transa, transb, M_, N_, K_, alpha, A, lda_, B, ldb_, beta, C, ldc_):
    """The integer family: checks as for the float family (A and B are read even when alpha = 0: the
    product's float64 scaling gives NaN for an infinite alpha), then gemmkit_gemm_<i/u><32/64>."""
    cdef char ta = _trans_flag(transa, "transa"), tb = _trans_flag(transb, "transb")
    cdef int64_t M, N, K, lda, ldb, ldc
    M, N, K, lda, ldb, ldc = _sizes(ta, tb, M_, N_, K_, lda_, ldb_, ldc_)
    cdef double al = _real_arg(alpha, "alpha", False), be = _real_arg(beta, "beta", False)
    cdef _Operand a = _Operand(), b = _Operand(), c = _Operand()
    _acquire_abc(a, b, c, A, B, C, dtype, dtype, dtype, ta, tb, M, N, K, lda, ldb, ldc, True)
    cdef int st, typenum = np.dtype(dtype).num
    with nogil:
        st = _call_wrap_gemm(typenum, ta, tb, M, N, K, al, a.ptr, lda, b.ptr, ldb, be, c.ptr, ldc)
    _raise_status(st, fn)
    return C


def gemm_i32(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
    """int32 Gemm as ONNX computes it: the product wraps modulo 2^32, alpha and beta scale it in float64,
    the result is truncated back (see gemmkit.h); C in place."""
    return _gemm_wrap("gemm_i32", "int32", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def gemm_i64(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
    """int64 Gemm as ONNX computes it (as gemm_i32, modulo 2^64)."""
    return _gemm_wrap("gemm_i64", "int64", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def gemm_u32(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
    """uint32 Gemm as ONNX computes it (as gemm_i32, unsigned)."""
    return _gemm_wrap("gemm_u32", "uint32", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)


def gemm_u64(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
    """uint64 Gemm as ONNX computes it (as gemm_i64, unsigned)."""
    return _gemm_wrap("gemm_u64", "uint64", transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)
cdef class _Stack:
    """An N-D buffer (N >= 2) seen as a stack of row-major matrices in its last two axes: rows `ld`
    elements apart, unit stride along a row; its batch axes' sizes and strides in elements."""
    cdef Py_buffer view
    cdef bint held
    cdef char *ptr
    cdef int64_t rows, cols, ld
    cdef list sizes, strides

    def __dealloc__(self):
        if self.held:
            PyBuffer_Release(&self.view)

    cdef int acquire(self, object obj, str name, str dtype, bint writable) except -1:
        cdef int flags = PyBUF_STRIDES | PyBUF_FORMAT | (PyBUF_WRITABLE if writable else 0)
        try:
            PyObject_GetBuffer(obj, &self.view, flags)
        except Exception as e:
            raise TypeError(f"{name} must be a {'writable ' if writable else ''}{dtype} array ({e})") from None
        self.held = True
        if not _format_is(self.view.format, self.view.itemsize, dtype):
            raise TypeError(f"{name} must have dtype {dtype}, got {_dtype_of(self.view.format, self.view.itemsize)}")
        cdef int nd = self.view.ndim, d
        if nd < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (a matrix or a stack), got {nd}-D")
        cdef Py_ssize_t isz = self.view.itemsize
        self.ptr = <char *>self.view.buf
        self.rows, self.cols = self.view.shape[nd - 2], self.view.shape[nd - 1]
        self.ld = max(1, self.cols)
        self.sizes = [self.view.shape[d] for d in range(nd - 2)]
        self.strides = [0] * (nd - 2)
        for d in range(nd):
            if self.view.shape[d] == 0:
                return 0  # empty: nothing is read or written
        if self.cols > 1 and self.view.strides[nd - 1] != isz:
            raise ValueError(f"{name} must have unit stride along its last axis")
        if self.rows > 1 and self.view.strides[nd - 2] == 0 and not writable:
            self.ld = 0  # every row the same row (a broadcast operand): the core reads it with ld 0
        elif self.rows > 1:
            if (self.view.strides[nd - 2] <= 0 or self.view.strides[nd - 2] % isz != 0
                    or self.view.strides[nd - 2] // isz < self.cols):
                raise ValueError(f"{name}: rows must be at least a row apart, in whole elements "
                                 f"(row stride {self.view.strides[nd - 2]} bytes)")
            self.ld = self.view.strides[nd - 2] // isz
        for d in range(nd - 2):
            if self.view.shape[d] > 1:
                if self.view.strides[d] % isz != 0:
                    raise ValueError(f"{name}: matrices must be whole elements apart")
                self.strides[d] = self.view.strides[d] // isz
        return 0

    cdef list batch_axes(self, list batch_shape, str name):
        """(size, stride) of each of the output's batch axes for this operand, broadcast NumPy's way:
        missing or size-1 axes have stride 0."""
        cdef int lead = len(batch_shape) - len(self.sizes)
        if lead < 0:
            raise ValueError(f"{name} has more batch axes than the output")
        out = []
        for d, n in enumerate(batch_shape):
            if d < lead or self.sizes[d - lead] == 1:
                out.append(0)
            elif self.sizes[d - lead] == n:
                out.append(self.strides[d - lead])
            else:
                raise ValueError(f"{name}'s batch axes {tuple(self.sizes)} do not broadcast to {tuple(batch_shape)}")
        return out


cdef int _run_stack(int kind, char ta, char tb, int64_t M, int64_t N, int64_t K, double complex al,
                    _Stack a, int64_t sa, _Stack b, int64_t sb, double complex be, _Stack c, int64_t sc,
                    int64_t off_a, int64_t off_b, int64_t off_c, int64_t batch) except -1:
    """One strided-batch call of the core on matrices starting off_* elements into each buffer."""
    cdef int st
    cdef const char *pa = a.ptr + off_a * a.view.itemsize
    cdef const char *pb = b.ptr + off_b * b.view.itemsize
    cdef char *pc = c.ptr + off_c * c.view.itemsize
    with nogil:
        st = _call_float_gemm(kind, ta, tb, M, N, K, al, pa, a.ld, sa, pb, b.ld, sb, be, pc, c.ld, sc, batch)
    return _raise_status(st, "gemm_batch")


_BATCH_DTYPES = {np.dtype(np.float32): "float32", np.dtype(np.float64): "float64",
                 np.dtype(np.complex64): "complex64", np.dtype(np.complex128): "complex128"}


def gemm_batch(transa, transb, alpha, A, B, beta, C):
    """C[i] := alpha * op(A[i]) @ op(B[i]) + beta * C[i] over the batch axes of C (all axes but the
    last two), A's and B's batch axes broadcast to them as NumPy does (missing or size 1: shared).
    One float or complex dtype, or 16-bit operands: float16 A and B with a float16 C, bfloat16 A and B
    (ml_dtypes) with a float32 C (alpha and beta real); each matrix with unit stride along its rows and
    rows at least a row apart (A and B may also have rows 0 apart: one row repeated, a broadcast operand,
    read with leading dimension 0); batch strides are anything. M, N from C, K from op(A). Batch axes that walk
    with one stride merge into one core call (threads spread small products whole); others loop here.
    Refuses an output whose matrices overlap. For the front ends (gemmkit.matmul, gemmkit.gemm)."""
    operands = getattr(getattr(A, "dtype", None), "name", None)
    if operands == "float16":
        return _gemm_stacks(KIND_H, "float16", "float16", transa, transb, alpha, A, B, beta, C)
    if operands == "bfloat16":
        return _gemm_stacks(KIND_BF16, "uint16", "float32", transa, transb, alpha, _bfloat16_bits(A, "A"),
                            _bfloat16_bits(B, "B"), beta, C)
    dtype = _BATCH_DTYPES.get(getattr(C, "dtype", None))
    if dtype is None:
        raise TypeError(f"C must be a float32, float64, complex64 or complex128 array, got "
                        f"{getattr(C, 'dtype', type(C).__name__)}")
    return _gemm_stacks(_float_kind(dtype), dtype, dtype, transa, transb, alpha, A, B, beta, C)


cdef object _gemm_stacks(int kind, str ab_dtype, str c_dtype, transa, transb, alpha, A, B, beta, C):
    """gemm_batch's work for a kind of _call_float_gemm: operands of ab_dtype, C of c_dtype."""
    cdef bint cplx = kind == KIND_C or kind == KIND_Z, single = kind != KIND_D and kind != KIND_Z
    cdef char ta = _trans_flag(transa, "transa", cplx), tb = _trans_flag(transb, "transb", cplx)
    cdef _Stack a = _Stack(), b = _Stack(), c = _Stack()
    c.acquire(C, "C", c_dtype, True)
    a.acquire(A, "A", ab_dtype, False)
    b.acquire(B, "B", ab_dtype, False)
    cdef int64_t M = c.rows, N = c.cols
    cdef int64_t K = a.rows if _is_t(ta) else a.cols
    if (a.cols if _is_t(ta) else a.rows) != M:
        raise ValueError(f"A's matrices are {a.rows} x {a.cols}, which does not fit C's {M} x {N} "
                         f"with transa={chr(ta)!r}")
    if (b.cols if _is_t(tb) else b.rows) != K or (b.rows if _is_t(tb) else b.cols) != N:
        raise ValueError(f"B's matrices are {b.rows} x {b.cols}, which does not fit op(A) {M} x {K} "
                         f"and C {M} x {N} with transb={chr(tb)!r}")
    shape = c.sizes
    sa, sb, sc = a.batch_axes(shape, "A"), b.batch_axes(shape, "B"), c.strides
    cdef double complex al, be
    if cplx:
        al = _complex_arg(alpha, "alpha", single)
        be = _complex_arg(beta, "beta", single)
    else:
        al = _real_arg(alpha, "alpha", single)
        be = _real_arg(beta, "beta", single)
    if M == 0 or N == 0 or 0 in shape:
        return C
    # Batch axes of size 1 drop out; neighbours merge when every operand steps over the inner one.
    axes = []  # (size, stride of A, of B, of C), outer to inner (no negative indexing: wraparound is off)
    for n, x, y, z in zip(shape, sa, sb, sc):
        if n == 1:
            continue
        last = len(axes) - 1
        if last >= 0 and axes[last][1] == x * n and axes[last][2] == y * n and axes[last][3] == z * n:
            axes[last] = (axes[last][0] * n, x, y, z)
        else:
            axes.append((n, x, y, z))
    if not axes:
        axes = [(1, 0, 0, 0)]
    inner = axes[len(axes) - 1]
    cdef int64_t run = inner[0], ra = inner[1], rb = inner[2], rc = inner[3]
    cdef int64_t s = abs(rc)
    if run > 1 and s < (M - 1) * c.ld + N and not (N <= s and s * run <= c.ld):
        raise ValueError("C's matrices overlap: the output of a batch needs distinct matrices")
    if len(axes) == 1:
        _run_stack(kind, ta, tb, M, N, K, al, a, ra, b, rb, be, c, rc, 0, 0, 0, run)
        return C
    outer = axes[:len(axes) - 1]
    for idx in np.ndindex(*[ax[0] for ax in outer]):
        off_a = sum(i * ax[1] for i, ax in zip(idx, outer))
        off_b = sum(i * ax[2] for i, ax in zip(idx, outer))
        off_c = sum(i * ax[3] for i, ax in zip(idx, outer))
        _run_stack(kind, ta, tb, M, N, K, al, a, ra, b, rb, be, c, rc, off_a, off_b, off_c, run)
    return C


cdef int _call_wrap_gemm(int typenum, char ta, char tb, int64_t M, int64_t N, int64_t K, double al, const void *A,
                         int64_t lda, const void *B, int64_t ldb, double be, void *C, int64_t ldc) noexcept nogil:
    """gemmkit_gemm_<i32|i64|u32|u64> by NumPy type number (int32, int64, uint32, else uint64), once for
    every caller. Returns the status."""
    if typenum == cnp.NPY_INT32:
        return gemmkit_gemm_i32(ta, tb, M, N, K, al, <const int32_t *>A, lda, <const int32_t *>B, ldb, be,
                                <int32_t *>C, ldc)
    if typenum == cnp.NPY_INT64:
        return gemmkit_gemm_i64(ta, tb, M, N, K, al, <const int64_t *>A, lda, <const int64_t *>B, ldb, be,
                                <int64_t *>C, ldc)
    if typenum == cnp.NPY_UINT32:
        return gemmkit_gemm_u32(ta, tb, M, N, K, al, <const uint32_t *>A, lda, <const uint32_t *>B, ldb, be,
                                <uint32_t *>C, ldc)
    return gemmkit_gemm_u64(ta, tb, M, N, K, al, <const uint64_t *>A, lda, <const uint64_t *>B, ldb, be,
                            <uint64_t *>C, ldc)


cdef int _call_half_gemm(bint bf16, char ta, char tb, int64_t M, int64_t N, int64_t K, float al, const void *A,
                         int64_t lda, const void *B, int64_t ldb, float be, void *C, int64_t ldc) noexcept nogil:
    """gemmkit_bf16gemm or gemmkit_hgemm (16-bit patterns), once for every caller. Returns the status."""
    if bf16:
        return gemmkit_bf16gemm(ta, tb, M, N, K, al, <const uint16_t *>A, lda, <const uint16_t *>B, ldb, be,
                                <uint16_t *>C, ldc)
    return gemmkit_hgemm(ta, tb, M, N, K, al, <const uint16_t *>A, lda, <const uint16_t *>B, ldb, be,
                         <uint16_t *>C, ldc)


# ---- scipy.linalg.blas-style gemm: the common case without Python-level overhead ----------------------

cdef inline int _row_major(cnp.ndarray x, Py_ssize_t isz, char **ptr, int64_t *ld) noexcept:
    """How the core reads a 2-D array in place: 0 as it is (rows contiguous), 1 as its transpose
    (columns contiguous), -1 not at all (no unit-stride axis, or empty). Sets the data pointer and ld."""
    cdef Py_ssize_t r = cnp.PyArray_DIMS(x)[0], c = cnp.PyArray_DIMS(x)[1]
    cdef Py_ssize_t s0 = cnp.PyArray_STRIDES(x)[0], s1 = cnp.PyArray_STRIDES(x)[1]
    ptr[0] = <char *>cnp.PyArray_DATA(x)
    if r == 0 or c == 0:
        return -1
    if (c == 1 or s1 == isz) and (r == 1 or (s0 > 0 and s0 % isz == 0 and s0 // isz >= c)):
        ld[0] = s0 // isz if r > 1 else c
        return 0
    if (r == 1 or s0 == isz) and (c == 1 or (s1 > 0 and s1 % isz == 0 and s1 // isz >= r)):
        ld[0] = s1 // isz if c > 1 else r
        return 1
    return -1


cdef inline char _blas_flag(int trans, int flipped, bint cplx) noexcept:
    """The core's trans flag that reads op(x)^T from the row-major view R of x (R = x, or x^T when
    flipped): op = x: x^T; op = x^T: x; op = x^H: conj(x), i.e. R^H or, unflipped, 'R' (conj, no trans)."""
    if trans == 2 and not cplx:
        trans = 1
    if trans == 0:
        return b'N' if flipped else b'T'
    if trans == 1:
        return b'T' if flipped else b'N'
    return b'C' if flipped else b'R'


cdef inline bint _product_in_place(cnp.ndarray A, cnp.ndarray B, bint ta, bint tb, int64_t *m, int64_t *n,
                                  int64_t *k, char **pa, int64_t *lda, int *fa, char **pb, int64_t *ldb,
                                  int *fb) noexcept:
    """For op(A) op(B) of 2-D arrays (op = transpose when ta / tb): M, N, K, and how the core reads each
    operand in place (_row_major). False when the inner sizes differ, the product is empty or an operand
    cannot be read in place: the fast paths leave those calls to their general paths."""
    cdef Py_ssize_t isz = cnp.PyArray_ITEMSIZE(A)
    m[0] = cnp.PyArray_DIMS(A)[1 if ta else 0]
    k[0] = cnp.PyArray_DIMS(A)[0 if ta else 1]
    n[0] = cnp.PyArray_DIMS(B)[0 if tb else 1]
    if cnp.PyArray_DIMS(B)[1 if tb else 0] != k[0] or m[0] == 0 or n[0] == 0 or k[0] == 0:
        return False
    fa[0] = _row_major(A, isz, pa, lda)
    fb[0] = _row_major(B, isz, pb, ldb)
    return fa[0] >= 0 and fb[0] >= 0


cdef inline int _plain_number(object x, bint cplx, double complex *out) except -1:
    """1 and *out = x for a Python float or int (or complex when cplx), read directly (a conversion to
    complex would look for __complex__ first; an int past the double range raises SciPy's
    OverflowError); 0 for any other object (the general path converts it)."""
    if type(x) is float:
        out[0] = PyFloat_AS_DOUBLE(x)
    elif type(x) is int:
        out[0] = PyLong_AsDouble(x)
    elif cplx and type(x) is complex:
        out[0] = x
    else:
        return 0
    return 1


cpdef object blas_gemm_fast(int typenum, alpha, a, b, beta, c, trans_a, trans_b, overwrite_c):
    """gemmkit.blas's <prefix>gemm for the common case: NumPy arrays of the routine's dtype with a
    unit-stride axis, plain Python scalars and flags, c None or a Fortran-contiguous writable c of the
    right shape with overwrite_c. Returns None (nothing done) for anything else: the caller then takes
    its general path, which does SciPy's conversions and checks."""
    cdef bint cplx = typenum == cnp.NPY_COMPLEX64 or typenum == cnp.NPY_COMPLEX128
    if type(a) is not np.ndarray or type(b) is not np.ndarray or type(trans_a) is not int or type(trans_b) is not int:
        return None
    cdef cnp.ndarray A = a, B = b, C
    if (cnp.PyArray_NDIM(A) != 2 or cnp.PyArray_NDIM(B) != 2 or cnp.PyArray_TYPE(A) != typenum
            or cnp.PyArray_TYPE(B) != typenum or not cnp.PyArray_ISNOTSWAPPED(A) or not cnp.PyArray_ISNOTSWAPPED(B)
            or not cnp.PyArray_ISALIGNED(A) or not cnp.PyArray_ISALIGNED(B)):
        return None
    if not (0 <= trans_a <= 2 and 0 <= trans_b <= 2):
        return None
    # an overwrite_c past C int: the general path raises SciPy's OverflowError
    if type(overwrite_c) is not bool and (type(overwrite_c) is not int
                                          or not -2147483648 <= overwrite_c <= 2147483647):
        return None
    cdef double complex al, be = 0
    if not _plain_number(alpha, cplx, &al) or (beta is not None and not _plain_number(beta, cplx, &be)):
        return None
    cdef int ta = trans_a, tb = trans_b
    cdef int64_t m, n, k, lda, ldb
    cdef char *pa
    cdef char *pb
    cdef int fa, fb
    if not _product_in_place(A, B, ta != 0, tb != 0, &m, &n, &k, &pa, &lda, &fa, &pb, &ldb, &fb):
        return None
    # SciPy rounds alpha/beta to single precision for s and c; near that range's end (overflow to inf)
    # the general path does it
    if (typenum == cnp.NPY_FLOAT32 or typenum == cnp.NPY_COMPLEX64) and not (
            abs(al.real) < 3.0e38 and abs(al.imag) < 3.0e38 and abs(be.real) < 3.0e38 and abs(be.imag) < 3.0e38):
        return None
    cdef cnp.npy_intp dims[2]
    if c is None:
        if not (be.real - be.real == 0 and be.imag - be.imag == 0):  # beta not finite: nan * 0 (general path)
            return None
        dims[0] = m
        dims[1] = n
        C = cnp.PyArray_EMPTY(2, dims, typenum, 1)
        be = 0
    elif (overwrite_c and type(c) is np.ndarray and cnp.PyArray_NDIM(<cnp.ndarray>c) == 2
          and cnp.PyArray_TYPE(<cnp.ndarray>c) == typenum and cnp.PyArray_DIMS(<cnp.ndarray>c)[0] == m
          and cnp.PyArray_DIMS(<cnp.ndarray>c)[1] == n and cnp.PyArray_IS_F_CONTIGUOUS(<cnp.ndarray>c)
          and cnp.PyArray_ISWRITEABLE(<cnp.ndarray>c) and cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>c)
          and cnp.PyArray_ISALIGNED(<cnp.ndarray>c)):
        C = c
    else:
        return None
    # Fortran-ordered C read row-major is C^T (n x m): C^T = op(b)^T op(a)^T
    cdef char fla = _blas_flag(ta, fa, cplx), flb = _blas_flag(tb, fb, cplx)
    cdef char *pc = <char *>cnp.PyArray_DATA(C)
    cdef int64_t ldc = m
    cdef int st
    cdef int kind = (KIND_S if typenum == cnp.NPY_FLOAT32 else KIND_D if typenum == cnp.NPY_FLOAT64
                     else KIND_C if typenum == cnp.NPY_COMPLEX64 else KIND_Z)
    if <double>m * <double>n * <double>k > 32768.0:  # release the GIL past ~32^3 (a tiny call keeps it)
        with nogil:
            st = _call_float_gemm(kind, flb, fla, n, m, k, al, pb, ldb, 0, pa, lda, 0, be, pc, ldc, 0, 1)
    else:
        st = _call_float_gemm(kind, flb, fla, n, m, k, al, pb, ldb, 0, pa, lda, 0, be, pc, ldc, 0, 1)
    if st != 0:
        _raise_status(st, "gemm")
    return C


# ---- gemmkit.matmul: the common 1-D / 2-D case without Python-level overhead ----------------------------

cdef int _bfloat16_typenum = -1  # ml_dtypes registers bfloat16 at run time (a number from NPY_USERDEF = 256 up): its number, once seen


cdef inline bint _is_bfloat16(cnp.ndarray x, int typenum):
    """Whether x holds ml_dtypes.bfloat16 (its type number cached on first sight)."""
    global _bfloat16_typenum
    if typenum == _bfloat16_typenum:
        return True
    if _bfloat16_typenum == -1 and typenum >= 256 and x.dtype.name == "bfloat16":
        _bfloat16_typenum = typenum
        return True
    return False


cdef inline bint _disjoint(char *p, int64_t rows, int64_t cols, int64_t ld, Py_ssize_t isz, char *q,
                           int64_t qrows, int64_t qcols, int64_t qld, Py_ssize_t qisz) noexcept:
    """Whether two row-major spans (rows x cols of isz bytes, rows ld apart, non-empty) share no byte."""
    cdef char *p_end = p + ((rows - 1) * ld + cols) * isz
    cdef char *q_end = q + ((qrows - 1) * qld + qcols) * qisz
    return p_end <= q or q_end <= p


cdef inline int _vector_or_matrix(cnp.ndarray x, bint is_a, Py_ssize_t isz, char **ptr, int64_t *rows,
                                  int64_t *cols, int64_t *ld) noexcept:
    """A 1-D or 2-D operand of matmul as the core reads it in place: as a rows x cols row-major matrix,
    returning 0 (read as it is) or 1 (read as its transpose, rows/cols/ld those of the transpose), or
    -1 (not in place, or empty). A 1-D a is a 1 x K row, a 1-D b a K x 1 column (a strided vector is a
    K x 1 column with ld = its stride, read transposed for a)."""
    cdef int flip
    cdef Py_ssize_t n, s
    if cnp.PyArray_NDIM(x) == 2:
        flip = _row_major(x, isz, ptr, ld)
        rows[0] = cnp.PyArray_DIMS(x)[1 if flip else 0]
        cols[0] = cnp.PyArray_DIMS(x)[0 if flip else 1]
        return flip
    n = cnp.PyArray_DIMS(x)[0]
    s = cnp.PyArray_STRIDES(x)[0]
    ptr[0] = <char *>cnp.PyArray_DATA(x)
    if n == 0 or (n > 1 and (s <= 0 or s % isz != 0)):
        return -1
    s = s // isz if n > 1 else 1
    if is_a:  # 1 x K: contiguous row, or the transpose of a K x 1 column of stride s
        if s == 1:
            rows[0] = 1; cols[0] = n; ld[0] = n
            return 0
        rows[0] = n; cols[0] = 1; ld[0] = s
        return 1
    rows[0] = n; cols[0] = 1; ld[0] = s  # K x 1 column
    return 0


cdef inline bint _stack_row_major(cnp.ndarray x, Py_ssize_t isz, int64_t *ld, int64_t *stride) noexcept:
    """Whether a 3-D array is a stack of row-major matrices the core reads in place (unit stride along
    rows, rows at least a row apart, matrices a positive whole number of elements apart); sets ld and the
    batch stride in elements."""
    cdef Py_ssize_t r = cnp.PyArray_DIMS(x)[1], c = cnp.PyArray_DIMS(x)[2]
    cdef Py_ssize_t s0 = cnp.PyArray_STRIDES(x)[0], s1 = cnp.PyArray_STRIDES(x)[1], s2 = cnp.PyArray_STRIDES(x)[2]
    if not (c == 1 or s2 == isz) or not (r == 1 or (s1 > 0 and s1 % isz == 0 and s1 // isz >= c)):
        return False
    if s0 <= 0 or s0 % isz:
        return False
    ld[0] = s1 // isz if r > 1 else c
    stride[0] = s0 // isz
    return True


cdef object _stack_matmul_fast(cnp.ndarray A, cnp.ndarray B, out, int typenum):
    """matmul_fast for two 3-D stacks of the same length of row-major float32/float64/complex64/complex128
    matrices (no broadcasting), out None or such a stack disjoint from both: one strided-batch core call,
    no Python-level work (a stack of 32^3 products spent 34 us a call in the general path's checks).
    None for anything else."""
    if (cnp.PyArray_TYPE(B) != typenum or not (typenum == cnp.NPY_FLOAT32 or typenum == cnp.NPY_FLOAT64
            or typenum == cnp.NPY_COMPLEX64 or typenum == cnp.NPY_COMPLEX128)
            or not cnp.PyArray_ISNOTSWAPPED(A) or not cnp.PyArray_ISNOTSWAPPED(B)
            or not cnp.PyArray_ISALIGNED(A) or not cnp.PyArray_ISALIGNED(B)):
        return None
    cdef cnp.npy_intp *da = cnp.PyArray_DIMS(A)
    cdef cnp.npy_intp *db = cnp.PyArray_DIMS(B)
    cdef int64_t batch = da[0], m = da[1], k = da[2], n = db[2]
    if db[0] != batch or db[1] != k or batch < 1 or m == 0 or n == 0 or k == 0:
        return None
    cdef Py_ssize_t isz = cnp.PyArray_ITEMSIZE(A)
    cdef int64_t lda, sa, ldb, sb, ldc, sc
    if not (_stack_row_major(A, isz, &lda, &sa) and _stack_row_major(B, isz, &ldb, &sb)):
        return None
    cdef cnp.ndarray C
    cdef cnp.npy_intp dims[3]
    dims[0] = batch; dims[1] = m; dims[2] = n
    if out is None:
        C = cnp.PyArray_EMPTY(3, dims, typenum, 0)
    else:
        if (type(out) is not np.ndarray or cnp.PyArray_NDIM(<cnp.ndarray>out) != 3
                or cnp.PyArray_TYPE(<cnp.ndarray>out) != typenum
                or cnp.PyArray_DIMS(<cnp.ndarray>out)[0] != batch or cnp.PyArray_DIMS(<cnp.ndarray>out)[1] != m
                or cnp.PyArray_DIMS(<cnp.ndarray>out)[2] != n
                or not cnp.PyArray_ISWRITEABLE(<cnp.ndarray>out) or not cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>out)
                or not cnp.PyArray_ISALIGNED(<cnp.ndarray>out)):
            return None
        C = out
    if not _stack_row_major(C, isz, &ldc, &sc) or sc < (m - 1) * ldc + n:
        return None  # C's matrices would overlap (or it is not read in place): the general path decides
    cdef char *pa = <char *>cnp.PyArray_DATA(A)
    cdef char *pb = <char *>cnp.PyArray_DATA(B)
    cdef char *pc = <char *>cnp.PyArray_DATA(C)
    # the stacks' whole spans (first to last element) must not meet: the core reads A and B while writing C
    cdef char *c_end = pc + ((batch - 1) * sc + (m - 1) * ldc + n) * isz
    if out is not None and not ((c_end <= pa or pa + ((batch - 1) * sa + (m - 1) * lda + k) * isz <= pc)
                                and (c_end <= pb or pb + ((batch - 1) * sb + (k - 1) * ldb + n) * isz <= pc)):
        return None
    cdef int kind = (KIND_S if typenum == cnp.NPY_FLOAT32 else KIND_D if typenum == cnp.NPY_FLOAT64
                     else KIND_C if typenum == cnp.NPY_COMPLEX64 else KIND_Z)
    cdef int st
    with nogil:
        st = _call_float_gemm(kind, b'N', b'N', m, n, k, 1.0, pa, lda, sa, pb, ldb, sb, 0.0, pc, ldc, sc, batch)
    if st != 0:
        _raise_status(st, "matmul")
    return C


cpdef object matmul_fast(a, b, out):
    """gemmkit.matmul for the common cases: two 3-D stacks (_stack_matmul_fast), or NumPy arrays a and b of
    one dtype (float32, float64, complex64, complex128, float16, or bfloat16 giving float32), each 1-D or 2-D (not
    both 1-D), read in place (a unit-stride axis), non-empty, and out None or a writable array of the
    result's shape and dtype with a unit-stride axis that shares no memory with a or b. Returns the result,
    or None (nothing done) for anything else: the caller's general path then applies NumPy's rules,
    conversions and checks."""
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        return None
    cdef cnp.ndarray A = a, B = b, C
    cdef int typenum = cnp.PyArray_TYPE(A)
    cdef int nda = cnp.PyArray_NDIM(A), ndb = cnp.PyArray_NDIM(B)
    if nda == 3 and ndb == 3:
        return _stack_matmul_fast(A, B, out, typenum)
    if (cnp.PyArray_TYPE(B) != typenum or not (typenum == cnp.NPY_FLOAT32 or typenum == cnp.NPY_FLOAT64
            or typenum == cnp.NPY_COMPLEX64 or typenum == cnp.NPY_COMPLEX128 or typenum == cnp.NPY_FLOAT16
            or _is_bfloat16(A, typenum))
            or nda < 1 or nda > 2 or ndb < 1 or ndb > 2 or (nda == 1 and ndb == 1)
            or not cnp.PyArray_ISNOTSWAPPED(A) or not cnp.PyArray_ISNOTSWAPPED(B)
            or not cnp.PyArray_ISALIGNED(A) or not cnp.PyArray_ISALIGNED(B)):
        return None
    cdef bint bf16 = typenum == _bfloat16_typenum
    cdef int c_typenum = cnp.NPY_FLOAT32 if bf16 else typenum  # bfloat16 operands: a float32 product
    cdef Py_ssize_t isz = cnp.PyArray_ITEMSIZE(A), c_isz = 4 if bf16 else isz
    cdef char *pa
    cdef char *pb
    cdef char *pc
    cdef int64_t ra, ca, lda, rb, cb, ldb, rc, cc, ldc
    cdef int fa = _vector_or_matrix(A, True, isz, &pa, &ra, &ca, &lda)
    cdef int fb = _vector_or_matrix(B, False, isz, &pb, &rb, &cb, &ldb)
    if fa < 0 or fb < 0:
        return None
    cdef int64_t m = ca if fa else ra, k = ra if fa else ca
    cdef int64_t kb = cb if fb else rb, n = rb if fb else cb
    if kb != k:
        return None  # the general path names the mismatch
    cdef cnp.npy_intp dims[2]
    cdef int nd = 2
    if nda == 1:
        dims[0] = n; nd = 1
    elif ndb == 1:
        dims[0] = m; nd = 1
    else:
        dims[0] = m; dims[1] = n
    cdef int fc = 0
    if out is None:
        C = cnp.PyArray_EMPTY(nd, dims, c_typenum, 0)
        pc = <char *>cnp.PyArray_DATA(C)
        ldc = n
    else:
        if (type(out) is not np.ndarray or cnp.PyArray_NDIM(<cnp.ndarray>out) != nd
                or cnp.PyArray_TYPE(<cnp.ndarray>out) != c_typenum or cnp.PyArray_DIMS(<cnp.ndarray>out)[0] != dims[0]
                or (nd == 2 and cnp.PyArray_DIMS(<cnp.ndarray>out)[1] != dims[1])
                or not cnp.PyArray_ISWRITEABLE(<cnp.ndarray>out) or not cnp.PyArray_ISNOTSWAPPED(<cnp.ndarray>out)
                or not cnp.PyArray_ISALIGNED(<cnp.ndarray>out)):
            return None
        C = out
        if nd == 2:
            fc = _row_major(C, c_isz, &pc, &ldc)
        else:  # a row (1-D @ 2-D) or a column (2-D @ 1-D) of the m x n product
            fc = _vector_or_matrix(C, nda == 1, c_isz, &pc, &rc, &cc, &ldc)
        if fc < 0:
            return None
        rc = n if fc else m
        cc = m if fc else n
        if not (_disjoint(pc, rc, cc, ldc, c_isz, pa, ra, ca, lda, isz)
                and _disjoint(pc, rc, cc, ldc, c_isz, pb, rb, cb, ldb, isz)):
            return None
    cdef char ta = b'T' if fa else b'N', tb = b'T' if fb else b'N'
    cdef int kind = (KIND_S if typenum == cnp.NPY_FLOAT32 else KIND_D if typenum == cnp.NPY_FLOAT64
                     else KIND_C if typenum == cnp.NPY_COMPLEX64 else KIND_Z if typenum == cnp.NPY_COMPLEX128
                     else KIND_H if typenum == cnp.NPY_FLOAT16 else KIND_BF16)
    cdef int st
    if fc:  # C stored transposed: C^T = op(B)^T op(A)^T
        ta, tb = (b'N' if fb else b'T'), (b'N' if fa else b'T')
        pa, pb = pb, pa
        lda, ldb = ldb, lda
        m, n = n, m
    with nogil:
        st = _call_float_gemm(kind, ta, tb, m, n, k, 1.0, pa, lda, 0, pb, ldb, 0, 0.0, pc, ldc, 0, 1)
    if st != 0:
        _raise_status(st, "matmul")
    return C


# ---- gemmkit.onnx.gemm: the common cases without Python-level overhead ----------------------------------


cpdef object onnx_gemm_fast(A, B, C, alpha, beta, transA, transB, int opset=13):
    """gemmkit.onnx.gemm (opset >= 11, no broadcast attribute) for the common case: NumPy arrays A and B of
    one type (float32, float64, float16, int32, int64, uint32, uint64; bfloat16 from opset 13), 2-D, read in
    place, non-empty product; C None, a contiguous
    (N,) or (1, N) row or a C-contiguous (M, N) of that type; alpha and beta Python floats within float32's
    range; transA and transB Python ints. Returns Y, or None (nothing done) for anything else: the caller's
    general path then checks and converts. C is copied into Y (data movement), the core scales and adds."""
    if (type(A) is not np.ndarray or type(B) is not np.ndarray or type(alpha) is not float
            or type(beta) is not float or type(transA) is not int or type(transB) is not int
            or not (transA == 0 or transA == 1) or not (transB == 0 or transB == 1)):  # others: refused there
        return None
    cdef cnp.ndarray a = A, b = B, c, y
    cdef int typenum = cnp.PyArray_TYPE(a)
    if (cnp.PyArray_TYPE(b) != typenum or not (typenum == cnp.NPY_FLOAT32 or typenum == cnp.NPY_FLOAT64
            or typenum == cnp.NPY_FLOAT16 or typenum == cnp.NPY_INT32 or typenum == cnp.NPY_INT64
            or typenum == cnp.NPY_UINT32 or typenum == cnp.NPY_UINT64 or (opset >= 13 and _is_bfloat16(a, typenum)))
            or cnp.PyArray_NDIM(a) != 2 or cnp.PyArray_NDIM(b) != 2
            or not cnp.PyArray_ISNOTSWAPPED(a) or not cnp.PyArray_ISNOTSWAPPED(b)
            or not cnp.PyArray_ISALIGNED(a) or not cnp.PyArray_ISALIGNED(b)):
        return None
    if not (abs(<double>alpha) <= 3.4e38 and abs(<double>beta) <= 3.4e38):
        return None  # ONNX rounds the attributes to float32: overflow and NaN on the general path
    cdef double al = <float><double>alpha, be = <float><double>beta
    cdef bint ta_ = transA != 0, tb_ = transB != 0
    cdef Py_ssize_t isz = cnp.PyArray_ITEMSIZE(a)
    cdef int64_t m, n, k, lda, ldb, i
    cdef char *pa
    cdef char *pb
    cdef int fa, fb
    if not _product_in_place(a, b, ta_, tb_, &m, &n, &k, &pa, &lda, &fa, &pb, &ldb, &fb):
        return None
    cdef bint row = False  # C is one row broadcast over Y's rows
    if C is None:
        be = 0
    elif be == 0:
        return None  # C unused, but its shape is still checked (the general path)
    else:
        if type(C) is not np.ndarray:
            return None
        c = C
        if (cnp.PyArray_TYPE(c) != typenum or not cnp.PyArray_ISNOTSWAPPED(c) or not cnp.PyArray_ISALIGNED(c)
                or not cnp.PyArray_IS_C_CONTIGUOUS(c)):
            return None
        if cnp.PyArray_NDIM(c) == 1 and cnp.PyArray_DIMS(c)[0] == n:
            row = True
        elif cnp.PyArray_NDIM(c) == 2 and cnp.PyArray_DIMS(c)[1] == n and cnp.PyArray_DIMS(c)[0] in (1, m):
            row = cnp.PyArray_DIMS(c)[0] == 1 and m > 1
        else:
            return None
    cdef cnp.npy_intp dims[2]
    dims[0] = m
    dims[1] = n
    y = cnp.PyArray_EMPTY(2, dims, typenum, 0)
    cdef char *py = <char *>cnp.PyArray_DATA(y)
    cdef char *pc
    cdef size_t row_bytes = <size_t>n * <size_t>isz
    if be != 0:
        pc = <char *>cnp.PyArray_DATA(c)
        if row:
            for i in range(m):
                memcpy(py + i * row_bytes, pc, row_bytes)
        else:
            memcpy(py, pc, row_bytes * <size_t>m)
    cdef char fla = b'T' if ta_ != (fa == 1) else b'N', flb = b'T' if tb_ != (fb == 1) else b'N'
    cdef int st
    with nogil:
        if typenum == cnp.NPY_FLOAT16 or typenum == _bfloat16_typenum:
            st = _call_half_gemm(typenum != cnp.NPY_FLOAT16, fla, flb, m, n, k, <float>al, pa, lda, pb, ldb,
                                 <float>be, py, n)
        elif (typenum == cnp.NPY_INT32 or typenum == cnp.NPY_INT64 or typenum == cnp.NPY_UINT32
              or typenum == cnp.NPY_UINT64):
            st = _call_wrap_gemm(typenum, fla, flb, m, n, k, al, pa, lda, pb, ldb, be, py, n)
        else:
            st = _call_float_gemm(KIND_S if typenum == cnp.NPY_FLOAT32 else KIND_D, fla, flb, m, n, k, al, pa, lda,
                                  0, pb, ldb, 0, be, py, n, 0, 1)
    if st != 0:
        _raise_status(st, "gemm")
    return y


# The general paths of gemmkit.blas (SciPy's conversions), registered by gemmkit.blas: prefix -> function.
blas_general = {}


def blas_sgemm(alpha, a, b, beta=0.0, c=None, trans_a=0, trans_b=0, overwrite_c=0):
    r = blas_gemm_fast(cnp.NPY_FLOAT32, alpha, a, b, beta, c, trans_a, trans_b, overwrite_c)
    return r if r is not None else blas_general["s"](alpha, a, b, beta, c, trans_a, trans_b, overwrite_c)


def blas_dgemm(alpha, a, b, beta=0.0, c=None, trans_a=0, trans_b=0, overwrite_c=0):
    r = blas_gemm_fast(cnp.NPY_FLOAT64, alpha, a, b, beta, c, trans_a, trans_b, overwrite_c)
    return r if r is not None else blas_general["d"](alpha, a, b, beta, c, trans_a, trans_b, overwrite_c)


def blas_cgemm(alpha, a, b, beta=0.0, c=None, trans_a=0, trans_b=0, overwrite_c=0):
    r = blas_gemm_fast(cnp.NPY_COMPLEX64, alpha, a, b, beta, c, trans_a, trans_b, overwrite_c)
    return r if r is not None else blas_general["c"](alpha, a, b, beta, c, trans_a, trans_b, overwrite_c)


def blas_zgemm(alpha, a, b, beta=0.0, c=None, trans_a=0, trans_b=0, overwrite_c=0):
    r = blas_gemm_fast(cnp.NPY_COMPLEX128, alpha, a, b, beta, c, trans_a, trans_b, overwrite_c)
    return r if r is not None else blas_general["z"](alpha, a, b, beta, c, trans_a, trans_b, overwrite_c)


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


cdef object _gemm_i8(str fn, bint a_signed, transa, transb, offsetc, M_, N_, K_, alpha_, A, lda_, ao, B,
                     ldb_, bo, beta_, C, ldc_, co):
    cdef char ta = _trans_flag(transa, "transa"), tb = _trans_flag(transb, "transb")
    cdef char oc = _offsetc_flag(offsetc)
    cdef int64_t M, N, K, lda, ldb, ldc
    M, N, K, lda, ldb, ldc = _sizes(ta, tb, M_, N_, K_, lda_, ldb_, ldc_)
    cdef float alpha = _real_arg(alpha_, "alpha", True), beta = _real_arg(beta_, "beta", True)
    lo, hi = (-128, 127) if a_signed else (0, 255)
    if _is_bool(ao) or not isinstance(ao, (int, np.integer)) or not lo <= ao <= hi:
        raise ValueError(f"ao must be an integer in [{lo}, {hi}], got {ao!r}")
    if _is_bool(bo) or not isinstance(bo, (int, np.integer)) or not -128 <= bo <= 127:
        raise ValueError(f"bo must be an integer in [-128, 127], got {bo!r}")
    co_arr = _offset_vector(co, oc, M, N)
    cdef _Operand a = _Operand(), b = _Operand(), c = _Operand(), o = _Operand()
    _acquire_abc(a, b, c, A, B, C, "int8" if a_signed else "uint8", "int8", "int32", ta, tb, M, N, K, lda, ldb, ldc,
                 alpha != 0.0)
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


def gemm_u8s8s32(transa, transb, offsetc, M, N, K, alpha, A, lda, ao, B, ldb, bo, beta, C, ldc, co):
    """C := alpha * (op(A) - ao) @ (op(B) - bo) + beta * C + co, exact int8 sums, row-major, in place.

    A is uint8, B int8, C int32 (oneDNN's ``dnnl_gemm_u8s8s32``). The integer sums are exact on every kernel path
    (no 16-bit saturation). With alpha = 1 and beta in {0, 1} the result is the exact integer, saturated to
    int32; other alpha / beta are applied in double precision, rounded half to even and saturated. With K = 0
    the result is beta * C + co.

    Parameters
    ----------
    transa, transb : str
        ``'N'`` or ``'T'`` (either case).
    offsetc : str
        How ``co`` is added: ``'F'`` (``co[0]`` to every element), ``'C'`` (``co[i]`` to row i: M values) or
        ``'R'`` (``co[j]`` to column j: N values).
    M, N, K : int
        op(A) is M x K, op(B) K x N, C M x N.
    alpha, beta : float
    lda, ldb, ldc : int
        Leading dimensions (row strides, in elements).
    A : buffer of uint8
    B : buffer of int8
        1-D or 2-D buffers, as for :func:`sgemm`.
    ao, bo : int
        Zero points of A and B, in their element type's range.
    C : writable buffer of int32
    co : array_like of int32
        The offsets; 1 (``'F'``), M (``'C'``) or N (``'R'``) values.

    Returns
    -------
    C
        The same object, updated.

    Raises
    ------
    ValueError
        A bad size, leading dimension, flag, zero point or offset length, naming the argument; C untouched.
    TypeError
        A buffer of another dtype.

    Examples
    --------
    >>> import numpy as np, gemmkit
    >>> A, B = np.full((2, 4), 200, np.uint8), np.full((4, 3), -100, np.int8)
    >>> C, co = np.zeros((2, 3), np.int32), np.int32([0, 1, 2])      # 'R': co[j] per column
    >>> gemmkit.gemm_u8s8s32('N', 'N', 'R', 2, 3, 4, 1.0, A, 4, 0, B, 3, 0, 0.0, C, 3, co)
    array([[-80000, -79999, -79998],
           [-80000, -79999, -79998]], dtype=int32)
    """
    return _gemm_i8("gemm_u8s8s32", False, transa, transb, offsetc, M, N, K, alpha, A, lda, ao, B,
                    ldb, bo, beta, C, ldc, co)


def gemm_s8s8s32(transa, transb, offsetc, M, N, K, alpha, A, lda, ao, B, ldb, bo, beta, C, ldc, co):
    """C := alpha * (op(A) - ao) @ (op(B) - bo) + beta * C + co, exact int8 sums, row-major, in place.

    A is int8, B int8, C int32 (oneDNN's ``dnnl_gemm_s8s8s32``). The integer sums are exact on every kernel path
    (no 16-bit saturation). With alpha = 1 and beta in {0, 1} the result is the exact integer, saturated to
    int32; other alpha / beta are applied in double precision, rounded half to even and saturated. With K = 0
    the result is beta * C + co.

    Parameters
    ----------
    transa, transb : str
        ``'N'`` or ``'T'`` (either case).
    offsetc : str
        How ``co`` is added: ``'F'`` (``co[0]`` to every element), ``'C'`` (``co[i]`` to row i: M values) or
        ``'R'`` (``co[j]`` to column j: N values).
    M, N, K : int
        op(A) is M x K, op(B) K x N, C M x N.
    alpha, beta : float
    lda, ldb, ldc : int
        Leading dimensions (row strides, in elements).
    A : buffer of int8
    B : buffer of int8
        1-D or 2-D buffers, as for :func:`sgemm`.
    ao, bo : int
        Zero points of A and B, in their element type's range.
    C : writable buffer of int32
    co : array_like of int32
        The offsets; 1 (``'F'``), M (``'C'``) or N (``'R'``) values.

    Returns
    -------
    C
        The same object, updated.

    Raises
    ------
    ValueError
        A bad size, leading dimension, flag, zero point or offset length, naming the argument; C untouched.
    TypeError
        A buffer of another dtype.

    Examples
    --------
    >>> import numpy as np, gemmkit
    >>> A, B = np.full((2, 4), -100, np.int8), np.full((4, 3), -100, np.int8)
    >>> C, co = np.zeros((2, 3), np.int32), np.int32([0, 1, 2])      # 'R': co[j] per column
    >>> gemmkit.gemm_s8s8s32('N', 'N', 'R', 2, 3, 4, 1.0, A, 4, 0, B, 3, 0, 0.0, C, 3, co)
    array([[40000, 40001, 40002],
           [40000, 40001, 40002]], dtype=int32)
    """
    return _gemm_i8("gemm_s8s8s32", True, transa, transb, offsetc, M, N, K, alpha, A, lda, ao, B,
                    ldb, bo, beta, C, ldc, co)


# ---- per-token quantized int8 product with float output ------------------------------------------

# out_type name -> (C's GEMMKIT_OUT_* code, buffer formats C may have: the type itself or its raw bits)
_PER_TOKEN_OUT = {"float32": (GEMMKIT_OUT_FLOAT32, (b"f",)), "float16": (GEMMKIT_OUT_FLOAT16, (b"e", b"H")),
                  "bfloat16": (GEMMKIT_OUT_BFLOAT16, (b"H",))}


cdef class _Span(_Operand):
    """A buffer read as flat memory from its first element: the core addresses elements by offsets
    (batch stride, leading dimension), all of which must lie in the buffer's span."""

    cdef int acquire_span(self, object obj, str name, str what, tuple formats, Py_ssize_t itemsize, int64_t need,
                          bint writable) except -1:
        self.get_buffer(obj, name, what, writable)
        cdef bytes f = self.view.format if self.view.format != NULL else b"B"
        if f[:1] in (b"@", b"=", b"<", b"|"):
            f = f[1:]
        if f not in formats or self.view.itemsize != itemsize:
            raise TypeError(f"{name} must be a {what} array or buffer, got format {f.decode()!r} "
                            f"(itemsize {self.view.itemsize})")
        cdef int64_t span = 1
        cdef int d
        for d in range(self.view.ndim):
            if self.view.shape[d] == 0:
                span = 0
                break
            if self.view.strides[d] < 0:
                raise ValueError(f"{name} must not have negative strides")
        if span:
            span = itemsize
            for d in range(self.view.ndim):
                span += (self.view.shape[d] - 1) * self.view.strides[d]
        if <object>need * <object>itemsize > <object>span:  # Python ints: no overflow
            raise ValueError(f"{name} is too small: its span holds {span // itemsize} elements, "
                             f"{need} are addressed")
        return 0


cdef int64_t _extent(int64_t batch, int64_t stride, int64_t rows, int64_t cols, int64_t ld, str name) except -1:
    """Elements from the first one up to the last addressed: (batch-1)*stride + (rows-1)*ld + cols."""
    if batch == 0 or rows == 0 or cols == 0:
        return 0
    # Python ints: no overflow (int64_t operands alone would be multiplied in C and could wrap around)
    cdef object need = (<object>batch - 1) * <object>stride + (<object>rows - 1) * <object>ld + <object>cols
    cdef str ld_name = "ld" + name.lower() if name in ("A", "B", "C") else "ld"  # the argument's name
    if need > INT64_MAX:
        raise ValueError(f"{name}'s extent (batch-1)*stride + (rows-1)*{ld_name} + cols = ({batch}-1)*{stride} + "
                         f"({rows}-1)*{ld} + {cols} overflows 64-bit integers ({ld_name}={ld})")
    return need


cdef object _per_token(transa, transb, layout_c, out_type, int64_t batch, int64_t M, int64_t N, int64_t K, A,
                       int64_t lda, int64_t stride_a, B, int64_t ldb, int64_t stride_b, packed, deq_scale,
                       token_scale, int64_t stride_token_scale, bias, C, int64_t ldc, int64_t stride_c):
    """Both per-token entries; `packed` (a packed weight, or None) stands in for B with layout_c 'R'."""
    cdef char ta = _trans_flag(transa, "transa"), tb = _trans_flag(transb, "transb")
    if not isinstance(layout_c, str) or layout_c not in ("R", "C"):
        raise ValueError(f"layout_c must be 'R' or 'C', got {layout_c!r}")
    if out_type not in _PER_TOKEN_OUT:
        raise ValueError(f"out_type must be one of {', '.join(_PER_TOKEN_OUT)}, got {out_type!r}")
    code, c_formats = _PER_TOKEN_OUT[out_type]
    cdef bint c_rows = layout_c == "R"
    if batch < 0:
        raise ValueError(f"batch must be >= 0, got {batch}")
    for value, what in ((stride_a, "stride_a"), (stride_b, "stride_b"), (stride_c, "stride_c"),
                        (stride_token_scale, "stride_token_scale")):
        if value < 0:
            raise ValueError(f"{what} must be >= 0, got {value}")
    if c_rows:
        _check_dims_lds(ta, tb, M, N, K, lda, ldb, ldc)
    else:  # C^T (N x M, row-major) = op(B)^T op(A)^T
        _check_dims_lds(ta, tb, M, N, K, lda, ldb, max(1, N))
        if ldc < max(1, M):
            raise ValueError(f"ldc={ldc} must be >= {max(1, M)} (max(1, M) for layout_c='C')")
    cdef bint work = batch > 0 and M > 0 and N > 0
    cdef bint reads_ab = work and K > 0
    if work and batch > 1 and stride_c == 0:
        raise ValueError("stride_c must be > 0 when batch > 1 (the results would overlap)")
    cdef int64_t nb = batch if work else 0
    cdef int64_t packed_bytes = 0
    cdef _Span a = _Span(), b = _Span(), c = _Span(), ds = _Span(), ts = _Span(), bs = _Span()
    a.acquire_span(A, "A", "int8", (b"b",), 1, _extent(nb if reads_ab else 0, stride_a, K if _is_t(ta) else M,
                                                  M if _is_t(ta) else K, lda, "A"), False)
    if packed is None:
        b.acquire_span(B, "B", "int8", (b"b",), 1, _extent(nb if reads_ab else 0, stride_b, N if _is_t(tb) else K,
                                                      K if _is_t(tb) else N, ldb, "B"), False)
    else:
        packed_bytes = gemmkit_s8s8_packed_weight_size(N, K) if reads_ab else 0
        b.acquire_span(packed, "packed_weight", "uint8", (b"B",), 1, packed_bytes, False)
    ds.acquire_span(deq_scale, "deq_scale", "float32", (b"f",), 4, N if work else 0, False)
    ts.acquire_span(token_scale, "token_scale", "float32", (b"f",), 4,
               _extent(nb, stride_token_scale, 1, M, 1, "token_scale"), False)
    if bias is not None:
        bs.acquire_span(bias, "bias", "float32", (b"f",), 4, N if work else 0, False)
    c.acquire_span(C, "C", out_type + (" (or uint16 bits)" if out_type != "float32" else ""), c_formats,
              4 if out_type == "float32" else 2,
              _extent(nb, stride_c, M if c_rows else N, N if c_rows else M, ldc, "C"), True)
    cdef int st
    cdef char lc = b'R' if c_rows else b'C'
    cdef int oc = code
    cdef const float *bias_ptr = <const float *>bs.ptr if bias is not None else NULL
    if packed is None:
        with nogil:
            st = gemmkit_gemm_s8s8_per_token(ta, tb, lc, oc, batch, M, N, K, <const int8_t *>a.ptr, lda, stride_a,
                                             <const int8_t *>b.ptr, ldb, stride_b, <const float *>ds.ptr,
                                             <const float *>ts.ptr, stride_token_scale, bias_ptr, c.ptr, ldc,
                                             stride_c)
    else:
        with nogil:
            st = gemmkit_gemm_s8s8_per_token_packed(ta, oc, batch, M, N, K, <const int8_t *>a.ptr, lda, stride_a,
                                                    b.ptr, packed_bytes, <const float *>ds.ptr,
                                                    <const float *>ts.ptr, stride_token_scale, bias_ptr, c.ptr,
                                                    ldc, stride_c)
        if st == 2:
            raise ValueError("packed_weight was not packed for this kernel path and these N, K "
                             "(s8s8_pack_weight under the same kernel path)")
    _raise_status(st, "gemm_s8s8_per_token")
    return C


def gemm_s8s8_per_token(transa, transb, layout_c, out_type, int64_t batch, int64_t M, int64_t N, int64_t K,
                        A, int64_t lda, int64_t stride_a, B, int64_t ldb, int64_t stride_b, deq_scale,
                        token_scale, int64_t stride_token_scale, bias, C, int64_t ldc, int64_t stride_c):
    """C_b[i][j] := float32(float32(acc) * deq_scale[j]) * token_scale_b[i] (+ bias[j]), rounded to
    nearest even into out_type ("float32", "float16", "bfloat16"), acc = the exact sum of
    op(A_b)[i][k] * op(B_b)[k][j] (int8 x int8) for b < batch; X_b at X + b * stride_x (elements).
    layout_c 'R': C_b[i][j] at i * ldc + j, 'C': at i + j * ldc. A, B int8; scales and bias float32
    (bias may be None); C float32, or float16 / uint16 bits for 16-bit outputs. Buffers of any
    dimension are read as flat memory from their first element. Returns C."""
    return _per_token(transa, transb, layout_c, out_type, batch, M, N, K, A, lda, stride_a, B, ldb, stride_b,
                      None, deq_scale, token_scale, stride_token_scale, bias, C, ldc, stride_c)


def per_token_scale_int32(out_type, acc, deq_scale, token_scale, bias, C):
    """C := float32(float32(acc) * deq_scale[j]) * token_scale[i] (+ bias[j]) rounded into out_type, for
    exact int32 sums acc (M x N, unit stride along rows): the epilogue of gemm_s8s8_per_token alone, bit
    for bit. C: (M, N) with unit stride along rows, float32 or 16-bit as gemm_s8s8_per_token takes it."""
    if out_type not in _PER_TOKEN_OUT:
        raise ValueError(f"out_type must be one of {', '.join(_PER_TOKEN_OUT)}, got {out_type!r}")
    code, c_formats = _PER_TOKEN_OUT[out_type]
    if not isinstance(acc, np.ndarray) or acc.ndim != 2 or acc.dtype != np.int32:
        raise TypeError("acc must be a 2-D int32 array")
    cdef int64_t M = acc.shape[0], N = acc.shape[1]
    if not isinstance(C, np.ndarray) or C.shape != (M, N):
        raise ValueError(f"C must be an array of shape {(M, N)}")
    for name, x in (("acc", acc), ("C", C)):
        if N > 1 and M > 0 and x.strides[1] != x.itemsize:
            raise ValueError(f"{name} must have unit stride along its rows")
        if M > 1 and N > 0 and (x.strides[0] <= 0 or x.strides[0] % x.itemsize or x.strides[0] // x.itemsize < N):
            raise ValueError(f"{name}'s rows must be at least a row apart")
    cdef int64_t lda = acc.strides[0] // 4 if M > 1 else max(1, N)
    cdef int64_t ldc = C.strides[0] // C.itemsize if M > 1 else max(1, N)
    cdef _Span a = _Span(), ds = _Span(), ts = _Span(), bs = _Span(), c = _Span()
    a.acquire_span(acc, "acc", "int32", (b"i", b"l"), 4, _extent(1, 0, M, N, lda, "acc"), False)
    ds.acquire_span(deq_scale, "deq_scale", "float32", (b"f",), 4, N, False)
    ts.acquire_span(token_scale, "token_scale", "float32", (b"f",), 4, M, False)
    if bias is not None:
        bs.acquire_span(bias, "bias", "float32", (b"f",), 4, N, False)
    c.acquire_span(C, "C", out_type, c_formats, 4 if code == GEMMKIT_OUT_FLOAT32 else 2,
                   _extent(1, 0, M, N, ldc, "C"), True)
    cdef int st
    cdef int ot = code
    with nogil:
        st = gemmkit_per_token_scale_int32(ot, M, N, <const int32_t *>a.ptr, lda, <const float *>ds.ptr,
                                           <const float *>ts.ptr, <const float *>(bs.ptr if bias is not None else NULL),
                                           c.ptr, ldc)
    _raise_status(st, "per_token_scale_int32")
    return C


def s8s8_reads_weight_in_place(transb, int64_t M, int64_t K):
    """True when the int8 kernel path in use reads op(B) in place (no packing) for M rows and depth K, and
    that is faster than op(B)'s packed form: pass the weight itself then."""
    return gemmkit_s8s8_reads_weight_in_place(_trans_flag(transb, "transb"), M, K) != 0


def s8s8_pack_weight(transb, int64_t N, int64_t K, B, int64_t ldb):
    """op(B) (K x N int8, row-major with ldb; transb 'T': B is N x K) packed for the int8 kernel path in
    use, as a new uint8 array for gemm_s8s8_per_token_packed; None when K is beyond what is packed (or
    N or K is 0): pass the weight itself then."""
    cdef char tb = _trans_flag(transb, "transb")
    if N < 0 or K < 0:
        raise ValueError(f"N and K must be >= 0, got N={N}, K={K}")
    cdef int64_t need = max(1, K if _is_t(tb) else N)
    if ldb < need:
        raise ValueError(f"ldb={ldb} must be >= {need}")
    cdef int64_t nbytes = gemmkit_s8s8_packed_weight_size(N, K)
    if nbytes == 0:
        return None
    cdef _Span b = _Span(), d = _Span()
    b.acquire_span(B, "B", "int8", (b"b",), 1, _extent(1, 0, N if _is_t(tb) else K, K if _is_t(tb) else N, ldb, "B"),
              False)
    packed = np.empty(nbytes, np.uint8)
    d.acquire_span(packed, "packed", "uint8", (b"B",), 1, nbytes, True)
    cdef int st
    with nogil:
        st = gemmkit_s8s8_pack_weight(tb, N, K, <const int8_t *>b.ptr, ldb, d.ptr, nbytes)
    _raise_status(st, "s8s8_pack_weight")
    return packed


def gemm_s8s8_per_token_packed(transa, out_type, int64_t batch, int64_t M, int64_t N, int64_t K, A, int64_t lda,
                               int64_t stride_a, packed_weight, deq_scale, token_scale, int64_t stride_token_scale,
                               bias, C, int64_t ldc, int64_t stride_c):
    """gemm_s8s8_per_token with layout_c 'R' and a weight from s8s8_pack_weight (same N, K and kernel path,
    else ValueError) shared by the batch. Returns C."""
    return _per_token(transa, "N", "R", out_type, batch, M, N, K, A, lda, stride_a, None, max(1, N), 0,
                      packed_weight, deq_scale, token_scale, stride_token_scale, bias, C, ldc, stride_c)


# ---- configuration ----------------------------------------------------------------------------

def get_num_threads():
    """The number of threads gemmkit's calls use.

    Returns
    -------
    int
        The value of :func:`set_num_threads`, else ``GEMMKIT_NUM_THREADS``, else the number of CPUs this
        process may run on (its affinity mask).

    Examples
    --------
    >>> import gemmkit
    >>> gemmkit.get_num_threads() >= 1
    True
    """
    return gemmkit_get_num_threads()


def set_num_threads(n):
    """Threads per call from now on (a Python or NumPy integer; 0 or less: the default, from
    GEMMKIT_NUM_THREADS or the CPUs this process may use; capped at the pool's maximum)."""
    cdef int64_t v = _int_arg(n, "n")
    if v > 2**31 - 1 or v < -2**31:
        raise ValueError(f"n={v} is out of range for a thread count")
    gemmkit_set_num_threads(<int>v)


def get_thread_limit():
    """The calling thread's cap on threads per call (0: none; see set_thread_limit)."""
    return gemmkit_get_thread_limit()


def set_thread_limit(n):
    """Caps the threads of the calls made from the calling thread (n <= 0: no cap); other threads and
    the process-wide count (set_num_threads) are unchanged. Returns the previous cap."""
    cdef int64_t v = _int_arg(n, "n")
    if v > 2**31 - 1 or v < -2**31:
        raise ValueError(f"n={v} is out of range for a thread count")
    cdef int previous = gemmkit_get_thread_limit()
    gemmkit_set_thread_limit(<int>v)
    return previous


def cpu_features():
    cdef uint32_t f = gemmkit_cpu_features()
    return {name: bool(f & bit) for name, bit in CPU_FEATURE_BITS.items()}


def arch_supported(name):
    """Whether this CPU and build can run kernel path `name` (does not change the path in use)."""
    cdef bytes b = str(name).encode()
    return gemmkit_arch_supported(b) == 1


def set_arch(name):
    """Force a kernel path ('generic', 'avx2', 'avx_vnni', 'avx512', 'avx512_vnni', 'neon', 'dotprod', 'i8mm'); None = best."""
    cdef bytes b = (name or "").encode()
    cdef int st = gemmkit_set_arch(b)
    if st == 2:
        raise ValueError(f"unknown kernel path {name!r}; expected one of {', '.join(ARCHS)}")
    if st == 3:
        raise RuntimeError(f"kernel path {name!r} is not supported by this CPU or this build")


def get_arch():
    return gemmkit_get_arch().decode()


CPU_VENDORS = {0: "other", 1: "AMD", 2: "Intel"}


def _feature_names(uint32_t bits):
    return [name for name, bit in CPU_FEATURE_BITS.items() if bits & bit]


def configs():
    """Every configuration of the registry, in the order dispatch tries them: kernel path, the
    microarchitecture its constants are tuned for ("any": untuned), the CPU features it needs and whether
    this CPU has them. None is selected by this call."""
    cdef const char *arch
    cdef const char *uarch
    cdef uint32_t needs, have = gemmkit_cpu_features()
    out = []
    for i in range(gemmkit_config_count()):
        if gemmkit_config_at(i, &arch, &uarch, &needs) != 0:
            raise RuntimeError(f"gemmkit_config_at({i}) failed")
        out.append({"arch": arch.decode(), "uarch": uarch.decode(), "needs": _feature_names(needs),
                    "runnable": (needs & have) == needs})
    return out


def config_fields(int i):
    """Every field of configuration i (configs() order) as {name: text}: kernels by name ("-": none, complex
    products then run by 1m on the real kernel), blocks as comma-separated numbers, the small-problem
    thresholds as "small.<name>"."""
    cdef char buf[4096]
    if gemmkit_config_describe(i, buf, sizeof(buf)) != 0:
        raise IndexError(f"no configuration {i}")
    return dict(line.split("=", 1) for line in buf.decode().splitlines())


def config_for_cpu(vendor, family, model, features, uarch=None):
    """(arch, uarch) of the configuration dispatch picks for a CPU: vendor "AMD", "Intel" or "other",
    display family and model, feature names (as cpu_features() keys), and GEMMKIT_UARCH's value (None:
    unset). Pure: this CPU and the environment play no part."""
    cdef const char *arch_out
    cdef const char *uarch_out
    cdef uint32_t bits = 0
    vendors = {v: k for k, v in CPU_VENDORS.items()}
    if vendor not in vendors:
        raise ValueError(f"vendor must be one of {', '.join(vendors)}, got {vendor!r}")
    for name in features:
        if name not in CPU_FEATURE_BITS:
            raise ValueError(f"unknown CPU feature {name!r}; expected some of {', '.join(CPU_FEATURE_BITS)}")
        bits |= CPU_FEATURE_BITS[name]
    cdef int64_t fam = _int_arg(family, "family"), mod = _int_arg(model, "model")
    if not (0 <= fam <= 0xfff and 0 <= mod <= 0xfff):
        raise ValueError(f"family {family!r} and model {model!r} must be in 0 .. 0xfff")
    cdef bytes force = (uarch or "").encode()
    if gemmkit_config_for_cpu(vendors[vendor], <uint32_t>fam, <uint32_t>mod, bits, force, &arch_out,
                              &uarch_out) != 0:
        raise RuntimeError("gemmkit_config_for_cpu failed")
    return arch_out.decode(), uarch_out.decode()


def cpu_identity():
    """This CPU as dispatch sees it: {"vendor": "AMD" | "Intel" | "other", "family": int, "model": int}."""
    cdef uint32_t vendor = 0, family = 0, model = 0
    gemmkit_cpu_identity(&vendor, &family, &model)
    return {"vendor": CPU_VENDORS.get(vendor, "other"), "family": family, "model": model}


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
    cdef int max_m = 0, max_n = 0, pf = 0
    gemmkit_gemv_info(&max_m, &max_n, &pf)
    out["gemv"] = {"max_M": max_m, "max_N": max_n, "prefetch_bytes": pf}
    return out


# ---- quantized elementwise add (csrc/qadd.c; the NumPy front end is gemmkit/_quantized_add.py) ----

cdef class _StridedView:
    """A buffer over the output's shape: its first element and its strides in elements (0 = repeated)."""
    cdef Py_buffer view
    cdef bint held
    cdef int64_t strides[32]

    def __dealloc__(self):
        if self.held:
            PyBuffer_Release(&self.view)

    cdef int acquire(self, object obj, str name, tuple dtypes, tuple shape, bint writable) except -1:
        cdef int flags = PyBUF_STRIDES | PyBUF_FORMAT
        if writable:
            flags |= PyBUF_WRITABLE
        try:
            PyObject_GetBuffer(obj, &self.view, flags)
        except (BufferError, ValueError, TypeError) as e:
            raise TypeError(f"{name} must be a{' writable' if writable else ''} array ({e})") from None
        self.held = True
        got = _dtype_of(self.view.format, self.view.itemsize)
        if got not in dtypes:
            raise TypeError(f"{name} must have dtype {' or '.join(dtypes)}, got {got}")
        if self.view.ndim != len(shape) or self.view.ndim > GEMMKIT_QADD_MAX_DIMS:
            raise ValueError(f"{name} must have {len(shape)} dimensions (at most {GEMMKIT_QADD_MAX_DIMS})")
        cdef int d
        for d in range(self.view.ndim):
            if self.view.shape[d] != shape[d]:
                raise ValueError(f"{name} has shape {tuple(self.view.shape[i] for i in range(self.view.ndim))}, "
                                 f"expected {shape}")
            if self.view.strides[d] % self.view.itemsize != 0:
                raise ValueError(f"{name}: stride {self.view.strides[d]} bytes is not a whole number of elements")
            self.strides[d] = self.view.strides[d] // self.view.itemsize
        return 0


_QADD_FORMULAS = {"directml": GEMMKIT_QADD_DIRECTML, "onnxruntime": GEMMKIT_QADD_ONNXRUNTIME}
QADD_MAX_DIMS = GEMMKIT_QADD_MAX_DIMS  # dimensions quantized_add takes


def quantized_add_strided(str formula, tuple shape, a, a_scale, a_zero_point, b, b_scale, b_zero_point, out,
                          out_scale, out_zero_point):
    """out := quantized a + b (csrc/include/gemmkit.h). a, b and out are arrays of exactly `shape`
    (broadcast views with 0 strides are how broadcasting is passed), uint8 or int8. A scale is a float
    (one float32 value) or a float32 array of `shape`; a zero point None (0), an int of its tensor's
    range, or an array of `shape` and its tensor's dtype. out is written in place; the arithmetic
    happens in C with the GIL released."""
    if formula not in _QADD_FORMULAS:
        raise ValueError(f"formula must be one of {', '.join(map(repr, _QADD_FORMULAS))}, got {formula!r}")
    cdef int ndim = len(shape)
    if ndim > GEMMKIT_QADD_MAX_DIMS:
        raise ValueError(f"at most {GEMMKIT_QADD_MAX_DIMS} dimensions are supported, got {ndim}")
    cdef int64_t c_shape[32]
    cdef int d
    for d in range(ndim):
        c_shape[d] = shape[d]
    q8 = ("uint8", "int8")
    cdef _StridedView va = _StridedView(), vb = _StridedView(), vo = _StridedView()
    va.acquire(a, "a", q8, shape, False)
    vb.acquire(b, "b", q8, shape, False)
    vo.acquire(out, "out", q8, shape, True)
    cdef gemmkit_qtensor_t t[3]
    cdef float scale_value[3]
    cdef int8_t zp_value[3]
    cdef tuple views = (va, vb, vo)
    cdef list held = []   # the parameter views, alive until the call returns
    names = ("a", "b", "out")
    scales = (a_scale, b_scale, out_scale)
    zps = (a_zero_point, b_zero_point, out_zero_point)
    cdef int i
    cdef _StridedView v
    cdef str tdtype
    for i in range(3):
        v = views[i]
        tdtype = _dtype_of(v.view.format, 1)
        t[i].data = v.view.buf
        t[i].type = GEMMKIT_QTYPE_S8 if tdtype == "int8" else GEMMKIT_QTYPE_U8
        t[i].strides = v.strides
        if isinstance(scales[i], float):
            scale_value[i] = <float>scales[i]
            t[i].scale = &scale_value[i]
            t[i].scale_strides = NULL
        else:
            v = _StridedView()
            v.acquire(scales[i], names[i] + "_scale", ("float32",), shape, False)
            held.append(v)
            t[i].scale = <const float *>v.view.buf
            t[i].scale_strides = v.strides
        zp = zps[i]
        t[i].zero_point_strides = NULL
        if zp is None:
            t[i].zero_point = NULL
        elif isinstance(zp, int):
            if not ((-128 if tdtype == "int8" else 0) <= zp <= (127 if tdtype == "int8" else 255)):
                raise ValueError(f"{names[i]}_zero_point={zp} is out of range for {tdtype}")
            zp_value[i] = <int8_t>(zp if zp < 128 else zp - 256)
            t[i].zero_point = &zp_value[i]
        else:
            v = _StridedView()
            v.acquire(zp, names[i] + "_zero_point", (tdtype,), shape, False)
            held.append(v)
            t[i].zero_point = v.view.buf
            t[i].zero_point_strides = v.strides
    cdef gemmkit_qadd_formula_t f = _QADD_FORMULAS[formula]
    cdef int st
    with nogil:
        st = gemmkit_quantized_add(f, ndim, c_shape, &t[0], &t[1], &t[2])
    if st == 2:
        raise ValueError("quantized_add: invalid arguments (a scale that is 0, NaN or Inf, or strided scales or "
                         "zero points with formula='onnxruntime')")
    _raise_status(st, "quantized_add")
    return out


# The common call in one step: same-shape C-contiguous uint8/int8 arrays (no overlap with out= other
# than being it), Python float scales, zero points None / int / a NumPy uint8 or int8 scalar. Anything
# else, and anything invalid, returns None and gemmkit/_quantized_add.py takes its full path (which
# raises the errors); a result is then the same bytes, by the same C call.
cdef inline bint _qadd_one_scale(object s, float *value):
    if type(s) is not float:
        return False
    cdef double d = s
    cdef float f = <float>d
    if f != f or isinf(f) or f == 0:
        return False
    value[0] = f
    return True


cdef inline bint _qadd_one_zero_point(object z, int typenum, int8_t *value):
    cdef long v
    if z is None:
        value[0] = 0
        return True
    if type(z) is int:
        if not (-128 <= z <= 127 if typenum == cnp.NPY_INT8 else 0 <= z <= 255):
            return False
        v = z
    elif type(z) is (_NP_INT8 if typenum == cnp.NPY_INT8 else _NP_UINT8):
        v = int(z)
    else:
        return False
    value[0] = <int8_t>(v if v < 128 else v - 256)
    return True


cdef inline bint _qadd_overlaps(cnp.ndarray x, cnp.ndarray y, Py_ssize_t n):
    cdef char *p = <char *>cnp.PyArray_DATA(x)
    cdef char *q = <char *>cnp.PyArray_DATA(y)
    return p < q + n and q < p + n


_NP_UINT8, _NP_INT8 = np.uint8, np.int8


def quantized_add_common(formula, a, a_scale, a_zero_point, b, b_scale, b_zero_point, out, out_scale,
                         out_zero_point):
    """out (a new array when None) := quantized a + b for the common call described above, or None
    when the call is not that one (nothing is written then)."""
    cdef gemmkit_qadd_formula_t f
    if type(formula) is not str:
        return None
    if formula == "directml":
        f = GEMMKIT_QADD_DIRECTML
    elif formula == "onnxruntime":
        f = GEMMKIT_QADD_ONNXRUNTIME
    else:
        return None
    if type(a) is not np.ndarray or type(b) is not np.ndarray:
        return None
    cdef cnp.ndarray A = a, B = b, C
    cdef int ta = cnp.PyArray_TYPE(A), tb = cnp.PyArray_TYPE(B), tc
    cdef int ndim = cnp.PyArray_NDIM(A), d
    if ((ta != cnp.NPY_UINT8 and ta != cnp.NPY_INT8) or (tb != cnp.NPY_UINT8 and tb != cnp.NPY_INT8)
            or cnp.PyArray_NDIM(B) != ndim or ndim > GEMMKIT_QADD_MAX_DIMS
            or not cnp.PyArray_IS_C_CONTIGUOUS(A) or not cnp.PyArray_IS_C_CONTIGUOUS(B)):
        return None
    cdef cnp.npy_intp *dims = cnp.PyArray_DIMS(A)
    cdef int64_t shape[32]
    cdef int64_t strides[32]
    cdef Py_ssize_t n = 1
    for d in range(ndim):
        if cnp.PyArray_DIMS(B)[d] != dims[d]:
            return None
        shape[d] = dims[d]
        n *= dims[d]
    if n == 0:
        return None
    for d in range(ndim - 1, -1, -1):  # C order, in elements of one byte
        strides[d] = 1 if d == ndim - 1 else strides[d + 1] * shape[d + 1]
    if out_zero_point is None or type(out_zero_point) is int:
        tc = ta
    elif type(out_zero_point) is _NP_UINT8:
        tc = cnp.NPY_UINT8
    elif type(out_zero_point) is _NP_INT8:
        tc = cnp.NPY_INT8
    else:
        return None
    cdef float scale[3]
    cdef int8_t zp[3]
    if not (_qadd_one_scale(a_scale, &scale[0]) and _qadd_one_scale(b_scale, &scale[1])
            and _qadd_one_scale(out_scale, &scale[2]) and _qadd_one_zero_point(a_zero_point, ta, &zp[0])
            and _qadd_one_zero_point(b_zero_point, tb, &zp[1]) and _qadd_one_zero_point(out_zero_point, tc, &zp[2])):
        return None
    if out is None:
        C = cnp.PyArray_EMPTY(ndim, dims, tc, 0)
    else:
        if type(out) is not np.ndarray:
            return None
        C = out
        if (cnp.PyArray_TYPE(C) != tc or cnp.PyArray_NDIM(C) != ndim or not cnp.PyArray_IS_C_CONTIGUOUS(C)
                or not cnp.PyArray_ISWRITEABLE(C)):
            return None
        for d in range(ndim):
            if cnp.PyArray_DIMS(C)[d] != dims[d]:
                return None
        if ((_qadd_overlaps(C, A, n) and cnp.PyArray_DATA(C) != cnp.PyArray_DATA(A))
                or (_qadd_overlaps(C, B, n) and cnp.PyArray_DATA(C) != cnp.PyArray_DATA(B))):
            return None
    cdef gemmkit_qtensor_t t[3]
    cdef int types[3]
    t[0].data = cnp.PyArray_DATA(A)
    t[1].data = cnp.PyArray_DATA(B)
    t[2].data = cnp.PyArray_DATA(C)
    types[0], types[1], types[2] = ta, tb, tc
    for d in range(3):
        t[d].type = GEMMKIT_QTYPE_S8 if types[d] == cnp.NPY_INT8 else GEMMKIT_QTYPE_U8
        t[d].strides = strides
        t[d].scale = &scale[d]
        t[d].scale_strides = NULL
        t[d].zero_point = &zp[d]
        t[d].zero_point_strides = NULL
    cdef int st
    if n >= 65536:
        with nogil:
            st = gemmkit_quantized_add(f, ndim, shape, &t[0], &t[1], &t[2])
    else:
        st = gemmkit_quantized_add(f, ndim, shape, &t[0], &t[1], &t[2])
    return C if st == 0 else None


# ==== issue 29: per-token activation quantization (gemmkit.quant.quantize_per_token, Int8Linear) ====
# A separate block: its C declarations are here rather than in _core.pxd.

cdef extern from "include/gemmkit.h" nogil:
    gemmkit_status_t gemmkit_quantize_per_token(int in_type, int64_t M, int64_t K, const void *x, int64_t ldx,
                                                const float *smooth, int smooth_mode, int8_t *q, int64_t ldq,
                                                float *scale)
    const char *gemmkit_quantize_kernel_name()

_QUANT_IN = {"float32": (GEMMKIT_OUT_FLOAT32, (b"f",), 4), "float16": (GEMMKIT_OUT_FLOAT16, (b"e", b"H"), 2),
             "bfloat16": (GEMMKIT_OUT_BFLOAT16, (b"H",), 2)}
_SMOOTH_MODES = {"divide": 0, "multiply": 1}


def quantize_kernel_name():
    """The per-token quantize kernel of the path in use."""
    return gemmkit_quantize_kernel_name().decode()


def quantize_per_token_rows(in_type, int64_t M, int64_t K, x, int64_t ldx, smooth, smooth_mode, q, int64_t ldq,
                            scale):
    """For each row i < M of x (K contiguous values of in_type "float32", "float16" or "bfloat16" -- the
    16-bit ones as uint16 bits -- at x + i * ldx elements): scale[i] = max|x'| / 127 and q[i] (int8, at
    q + i * ldq) = round_half_even(clamp(x' / scale[i], -127, 127)), x' = x / smooth (smooth_mode
    "divide") or x * smooth ("multiply"), smooth None or K float32 (gemmkit_quantize_per_token). Returns q."""
    if in_type not in _QUANT_IN:
        raise ValueError(f"in_type must be one of {', '.join(_QUANT_IN)}, got {in_type!r}")
    if smooth_mode not in _SMOOTH_MODES:
        raise ValueError(f"smooth_mode must be 'divide' or 'multiply', got {smooth_mode!r}")
    code, formats, isz = _QUANT_IN[in_type]
    if M < 0 or K < 0:
        raise ValueError(f"M and K must be >= 0, got M={M}, K={K}")
    if M > 1 and (ldx < K or ldq < K):
        raise ValueError(f"ldx={ldx} and ldq={ldq} must be >= K={K}")
    cdef int64_t mm = M if K > 0 else 0
    cdef _Span a = _Span(), s = _Span(), o = _Span(), sc = _Span()
    a.acquire_span(x, "x", in_type + (" (or uint16 bits)" if isz == 2 else ""), formats, isz,
                   _extent(1, 0, mm, K, ldx, "x"), False)
    if smooth is not None:
        s.acquire_span(smooth, "smooth", "float32", (b"f",), 4, K if mm else 0, False)
    o.acquire_span(q, "q", "int8", (b"b",), 1, _extent(1, 0, mm, K, ldq, "q"), True)
    sc.acquire_span(scale, "scale", "float32", (b"f",), 4, M, True)
    cdef int st, ic = code, mode = _SMOOTH_MODES[smooth_mode]
    cdef const float *sp = <const float *>s.ptr if smooth is not None else NULL
    if M * K >= 32768:
        with nogil:
            st = gemmkit_quantize_per_token(ic, M, K, a.ptr, ldx, sp, mode, <int8_t *>o.ptr, ldq, <float *>sc.ptr)
    else:
        st = gemmkit_quantize_per_token(ic, M, K, a.ptr, ldx, sp, mode, <int8_t *>o.ptr, ldq, <float *>sc.ptr)
    _raise_status(st, "quantize_per_token")
    return q


from libc.stdlib cimport malloc, free


cdef int _quant_in_code(object x, int64_t *M, int64_t *K) except -1:
    """The in_type code of x (0: not an ndarray this fast path takes: C-contiguous, aligned, native, ndim >= 1,
    float32 / float16 / bfloat16, no empty axis) and its tokens M x K along the last axis."""
    if type(x) is not np.ndarray:
        return 0
    cdef cnp.ndarray X = x
    cdef int nd = cnp.PyArray_NDIM(X), t = cnp.PyArray_TYPE(X), code, d
    if (nd < 1 or not cnp.PyArray_IS_C_CONTIGUOUS(X) or not cnp.PyArray_ISALIGNED(X)
            or not cnp.PyArray_ISNOTSWAPPED(X)):
        return 0
    if t == cnp.NPY_FLOAT32:
        code = GEMMKIT_OUT_FLOAT32
    elif t == cnp.NPY_FLOAT16:
        code = GEMMKIT_OUT_FLOAT16
    elif _is_bfloat16(X, t):
        code = GEMMKIT_OUT_BFLOAT16
    else:
        return 0
    K[0] = cnp.PyArray_DIMS(X)[nd - 1]
    M[0] = 1
    for d in range(nd - 1):
        M[0] *= cnp.PyArray_DIMS(X)[d]
    if M[0] == 0 or K[0] == 0:
        return 0
    return code


def quantize_fast(x, smooth, int mode):
    """quantize_per_token_rows along x's last axis into new arrays: (q of x's shape, scale of its leading
    shape), for a C-contiguous float x (see _quant_in_code); None for any other x (take the general path).
    smooth: None or a C-contiguous float32 array of K values (the caller checked it)."""
    cdef int64_t M = 0, K = 0
    cdef int code = _quant_in_code(x, &M, &K)
    if code == 0:
        return None
    cdef cnp.ndarray X = x, Sm
    cdef const float *sp = NULL
    if smooth is not None:
        Sm = smooth
        if cnp.PyArray_SIZE(Sm) != K or cnp.PyArray_TYPE(Sm) != cnp.NPY_FLOAT32 or not cnp.PyArray_IS_C_CONTIGUOUS(Sm):
            raise ValueError(f"smooth must be a C-contiguous float32 array of {K} values")
        sp = <const float *>cnp.PyArray_DATA(Sm)
    cdef int nd = cnp.PyArray_NDIM(X)
    cdef cnp.ndarray Q = cnp.PyArray_EMPTY(nd, cnp.PyArray_DIMS(X), cnp.NPY_INT8, 0)
    cdef cnp.ndarray S = cnp.PyArray_EMPTY(nd - 1, cnp.PyArray_DIMS(X), cnp.NPY_FLOAT32, 0)
    cdef const void *px = cnp.PyArray_DATA(X)
    cdef int8_t *pq = <int8_t *>cnp.PyArray_DATA(Q)
    cdef float *ps = <float *>cnp.PyArray_DATA(S)
    cdef int st
    if M * K >= 32768:
        with nogil:
            st = gemmkit_quantize_per_token(code, M, K, px, K, sp, mode, pq, K, ps)
    else:
        st = gemmkit_quantize_per_token(code, M, K, px, K, sp, mode, pq, K, ps)
    _raise_status(st, "quantize_per_token")
    return Q, S


def int8_linear_fast(x, smooth, int64_t N, weight_q, packed, w_scale, bias, out, int out_code):
    """Int8Linear's call in one pass through the core, the GIL released: x's tokens (last axis, K values,
    a C-contiguous float x as quantize_fast takes; None for any other x) quantized per token (divided by
    smooth when given) into a temporary, then gemm_s8s8_per_token with weight_q (N x K int8, C-contiguous),
    or gemm_s8s8_per_token_packed with `packed` (s8s8_pack_weight(T) of weight_q for the path in use, or
    None), w_scale and bias (N float32, bias None or C-contiguous), into out: a C-contiguous array of
    x's leading shape x N in out_code's type (1 float32, 2 float16, 3 bfloat16), checked by the caller.
    Returns out."""
    cdef int64_t M = 0, K = 0
    cdef int code = _quant_in_code(x, &M, &K)
    if code == 0 or N <= 0:
        return None
    cdef cnp.ndarray X = x, W = weight_q, WS = w_scale, C = out, B, Sm, P
    if (cnp.PyArray_TYPE(W) != cnp.NPY_INT8 or not cnp.PyArray_IS_C_CONTIGUOUS(W) or cnp.PyArray_NDIM(W) != 2
            or cnp.PyArray_DIMS(W)[0] != N or cnp.PyArray_DIMS(W)[1] != K):
        raise ValueError(f"weight_q must be a C-contiguous int8 array of shape ({N}, {K})")
    if cnp.PyArray_TYPE(WS) != cnp.NPY_FLOAT32 or cnp.PyArray_SIZE(WS) != N or not cnp.PyArray_IS_C_CONTIGUOUS(WS):
        raise ValueError(f"w_scale must be a C-contiguous float32 array of {N} values")
    cdef Py_ssize_t osz = 4 if out_code == GEMMKIT_OUT_FLOAT32 else 2
    if (out_code < 1 or out_code > 3 or not cnp.PyArray_IS_C_CONTIGUOUS(C) or not cnp.PyArray_ISWRITEABLE(C)
            or cnp.PyArray_ITEMSIZE(C) != osz or cnp.PyArray_SIZE(C) != M * N):
        raise ValueError("out must be a writable C-contiguous array of the output type with M x N elements")
    cdef const float *pb = NULL
    cdef const float *sp = NULL
    cdef const void *pk = NULL
    cdef int64_t pk_bytes = 0
    if bias is not None:
        B = bias
        if cnp.PyArray_TYPE(B) != cnp.NPY_FLOAT32 or cnp.PyArray_SIZE(B) != N or not cnp.PyArray_IS_C_CONTIGUOUS(B):
            raise ValueError(f"bias must be a C-contiguous float32 array of {N} values")
        pb = <const float *>cnp.PyArray_DATA(B)
    if smooth is not None:
        Sm = smooth
        if cnp.PyArray_SIZE(Sm) != K or cnp.PyArray_TYPE(Sm) != cnp.NPY_FLOAT32 or not cnp.PyArray_IS_C_CONTIGUOUS(Sm):
            raise ValueError(f"smooth must be a C-contiguous float32 array of {K} values")
        sp = <const float *>cnp.PyArray_DATA(Sm)
    if packed is not None:
        P = packed
        pk_bytes = gemmkit_s8s8_packed_weight_size(N, K)
        if cnp.PyArray_TYPE(P) != cnp.NPY_UINT8 or cnp.PyArray_SIZE(P) != pk_bytes or not cnp.PyArray_IS_C_CONTIGUOUS(P):
            raise ValueError("packed must be s8s8_pack_weight's array for this weight")
        pk = cnp.PyArray_DATA(P)
    if np.may_share_memory(out, x):
        raise ValueError("out must not overlap x")
    cdef const void *px = cnp.PyArray_DATA(X)
    cdef const int8_t *pw = <const int8_t *>cnp.PyArray_DATA(W)
    cdef const float *pws = <const float *>cnp.PyArray_DATA(WS)
    cdef void *pc = cnp.PyArray_DATA(C)
    cdef int8_t *q = <int8_t *>malloc(<size_t>(M * K + 4 * M + 64))
    if q == NULL:
        raise MemoryError()
    cdef float *s = <float *>(<char *>q + ((M * K + 63) // 64) * 64)
    cdef int st, oc = out_code
    with nogil:
        st = gemmkit_quantize_per_token(code, M, K, px, K, sp, 0, q, K, s)
        if st == 0:
            if pk == NULL or gemmkit_s8s8_reads_weight_in_place(b'T', M, K):
                st = gemmkit_gemm_s8s8_per_token(b'N', b'T', b'R', oc, 1, M, N, K, q, K, 0, pw, K, 0, pws, s, 0, pb,
                                                 pc, N, 0)
            else:
                st = gemmkit_gemm_s8s8_per_token_packed(b'N', oc, 1, M, N, K, q, K, 0, pk, pk_bytes, pws, s, 0, pb,
                                                        pc, N, 0)
    free(q)
    if st == 2 and pk != NULL:
        raise ValueError("packed was not packed for this kernel path and these N, K")
    _raise_status(st, "int8_linear")
    return out
# ==== end of issue 29 block ====

# ---- cache hierarchy, analytical blocking model, tuning overrides (issue 26: csrc/cache_info.c,
# csrc/blocking_model.c, csrc/tuning.c; the tuning file is read by gemmkit/_tune.py) ----

PARAM_SOURCES = {0: "path table", 1: "hand config", 2: "model", 3: "tuned"}
_CACHE_KEYS = ("L1d", "L2", "L3")


def cache_hierarchy():
    """This CPU's caches as read at run time: {"source": "cpuid" | "sysfs" | "sysctl" | "none",
    "L1d" / "L2" / "L3": {"size", "ways", "line", "sharing"}} (size 0: unknown)."""
    cdef gemmkit_cache_level_t lv[3]
    cdef const char *src = NULL
    gemmkit_cache_hierarchy(lv, &src)
    out = {"source": src.decode() if src != NULL else "none"}
    for i in range(3):
        out[_CACHE_KEYS[i]] = {"size": lv[i].size, "ways": lv[i].ways, "line": lv[i].line, "sharing": lv[i].sharing}
    return out


cdef int _levels_from(object caches, gemmkit_cache_level_t *lv) except -1:
    for i in range(3):
        d = caches.get(_CACHE_KEYS[i]) or {}
        lv[i].size = _int_arg(d.get("size", 0), f"caches[{_CACHE_KEYS[i]!r}]['size']")
        lv[i].ways = _int_arg(d.get("ways", 0), f"caches[{_CACHE_KEYS[i]!r}]['ways']")
        lv[i].line = _int_arg(d.get("line", 64), f"caches[{_CACHE_KEYS[i]!r}]['line']")
        lv[i].sharing = _int_arg(d.get("sharing", 1), f"caches[{_CACHE_KEYS[i]!r}]['sharing']")
    return 0


def model_blocks(caches, int mr, int nr, int elem, bint complex_native=False, int64_t fallback_nc=0):
    """The analytical model's (MC, KC, NC) for an MR x NR kernel of `elem`-byte values on a cache hierarchy
    given as cache_hierarchy() returns it; None when L1 or L2 is unknown. Pure (this CPU plays no part)."""
    cdef gemmkit_cache_level_t lv[3]
    cdef int64_t out[3]
    _levels_from(caches, lv)
    cdef int st = gemmkit_model_real_blocks(lv, mr, nr, elem, complex_native, fallback_nc, out)
    if st == 2:
        raise ValueError(f"model_blocks: mr={mr}, nr={nr}, elem={elem} is not a kernel shape")
    return (out[0], out[1], out[2]) if st == 0 else None


def model_int8_blocks(caches, int mr, int nr, int elem):
    """The model's int8 (KB, A block bytes, B block bytes) for an MR x NR kernel of `elem`-byte packed
    values; None when L1 or L2 is unknown."""
    cdef gemmkit_cache_level_t lv[3]
    cdef int64_t out[3]
    _levels_from(caches, lv)
    cdef int st = gemmkit_model_int8_blocks(lv, mr, nr, elem, out)
    if st == 2:
        raise ValueError(f"model_int8_blocks: mr={mr}, nr={nr}, elem={elem} is not a kernel shape")
    return (out[0], out[1], out[2]) if st == 0 else None


def param_names():
    """Names of the parameters a tuning may set (gemmkit_param_name)."""
    return [gemmkit_param_name(i).decode() for i in range(gemmkit_param_count())]


def params():
    """The configuration in use, parameter by parameter: {name: (value, source)}, source one of
    PARAM_SOURCES' values ("path table", "hand config", "model", "tuned")."""
    cdef double v = 0
    cdef int src = 0
    out = {}
    for name in param_names():
        if gemmkit_param_get(name.encode(), &v, &src) != 0:
            raise RuntimeError(f"gemmkit_param_get({name!r}) failed")
        out[name] = (int(v) if v == int(v) else v, PARAM_SOURCES.get(src, "?"))
    return out


def tuning_set(arch, name, value):
    """One override of kernel path `arch` through the C entry that checks it. Returns None when accepted,
    else the reason (the value was not applied)."""
    if not isinstance(arch, str) or not isinstance(name, str):
        return "arch and name must be strings"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        return f"{name}: {value!r} is not a number"
    cdef double v
    try:
        v = float(value)
    except OverflowError:
        return f"{name}: {value!r} is out of range"
    cdef int st = gemmkit_tuning_set(arch.encode(), name.encode(), v)
    if st == 0:
        return None
    if st == 3:
        return f"{name}: kernel path {arch!r} does not run here"
    return f"{name}={value!r} is out of range for kernel path {arch!r} (or not a known parameter)"


def tuning_clear():
    """Drops every override."""
    gemmkit_tuning_clear()


def blocking_model(mode=None):
    """Where the blockings come from: 0 the tables and hand configs only, 1 (default) the model where no
    hand config applies, 2 the model everywhere. Returns the previous mode (None: only asks)."""
    if mode is None:
        return gemmkit_blocking_model(-1)
    if mode not in (0, 1, 2):
        raise ValueError(f"mode must be 0, 1 or 2, got {mode!r}")
    return gemmkit_blocking_model(int(mode))
