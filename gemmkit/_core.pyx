# cython: language_level=3
"""gemmkit's one module linking the C core (csrc/): the BLAS-style entries (oneDNN-like signatures), the
configuration queries, and the `cdef ... nogil` calls of gemmkit/_core.pxd that the front ends' fast paths
(gemmkit/_fastpaths.pyx) reach C by. Checks arguments and buffers (naming the argument at fault), then calls
gemmkit_* with the GIL released. No arithmetic on matrix data happens here; no front end is called from here."""

from cpython.buffer cimport (PyObject_GetBuffer, PyBuffer_Release, PyBUF_STRIDES, PyBUF_FORMAT,
                             PyBUF_WRITABLE)
from libc.stdint cimport int64_t, int32_t, uint8_t, int8_t, uint16_t, uint32_t, uint64_t, INT64_MAX
from libc.math cimport isinf
from libc.stdlib cimport calloc, free

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


# ---- the dtype table: every element type the core takes, keyed by NumPy type number -----------------

# NumPy type number -> the dtype's name (in messages). bfloat16 (ml_dtypes) has no fixed number: NumPy gives it
# one at run time (from NPY_USERDEF = 256 up), recorded here when first seen; buffers carry its uint16 bits.
DTYPE_NAMES = {cnp.NPY_FLOAT32: "float32", cnp.NPY_FLOAT64: "float64", cnp.NPY_COMPLEX64: "complex64",
               cnp.NPY_COMPLEX128: "complex128", cnp.NPY_FLOAT16: "float16", cnp.NPY_UINT16: "uint16",
               cnp.NPY_INT32: "int32", cnp.NPY_INT64: "int64", cnp.NPY_UINT32: "uint32", cnp.NPY_UINT64: "uint64",
               cnp.NPY_INT8: "int8", cnp.NPY_UINT8: "uint8", cnp.NPY_BOOL: "bool", cnp.NPY_INT16: "int16"}
cdef int _bfloat16_num = -1  # ml_dtypes.bfloat16's NumPy type number, once seen
cdef enum:
    BFLOAT16 = -2  # an entry's bfloat16 before its number is known (gemm_nogil takes the number itself)


cdef int _format_num(const char *fmt, Py_ssize_t itemsize) noexcept:
    """The NumPy type number of a buffer's struct format and item size (DTYPE_NAMES), or -1."""
    if fmt == NULL:
        return cnp.NPY_UINT8 if itemsize == 1 else -1  # no format: unsigned bytes
    cdef const char *f = fmt
    if f[0] == b'@' or f[0] == b'=' or f[0] == b'<' or f[0] == b'|':
        f += 1
    cdef char t = f[0]
    if t == b'Z':
        if f[1] == 0 or f[2] != 0:
            return -1
        if f[1] == b'f' and itemsize == 8:
            return cnp.NPY_COMPLEX64
        if f[1] == b'd' and itemsize == 16:
            return cnp.NPY_COMPLEX128
        return -1
    if t == 0 or f[1] != 0:
        return -1
    if itemsize == 1:
        return (cnp.NPY_INT8 if t == b'b' else cnp.NPY_UINT8 if t == b'B' else cnp.NPY_BOOL if t == b'?'
                else -1)
    if itemsize == 2:
        return (cnp.NPY_FLOAT16 if t == b'e' else cnp.NPY_UINT16 if t == b'H' else cnp.NPY_INT16 if t == b'h'
                else -1)
    if itemsize == 4:
        return (cnp.NPY_FLOAT32 if t == b'f' else cnp.NPY_INT32 if t == b'i' or t == b'l'
                else cnp.NPY_UINT32 if t == b'I' or t == b'L' else -1)
    if itemsize == 8:
        return (cnp.NPY_FLOAT64 if t == b'd' else cnp.NPY_INT64 if t == b'q' or t == b'l'
                else cnp.NPY_UINT64 if t == b'Q' or t == b'L' else -1)
    return -1


cdef str _dtype_of(const char *fmt, Py_ssize_t itemsize):
    """A buffer's dtype name, for messages."""
    cdef int num = _format_num(fmt, itemsize)
    if num >= 0:
        return DTYPE_NAMES[num]
    return f"format {fmt.decode() if fmt != NULL else 'B'!r} (itemsize {itemsize})"


cdef str _what(object what):
    """A dtype's name from its NumPy type number, or `what` itself (a description)."""
    return DTYPE_NAMES[what] if type(what) is int else what


cdef bint is_bfloat16(cnp.ndarray x, int typenum):
    """Whether x (of NumPy type number typenum) holds ml_dtypes.bfloat16 (its number recorded on first sight)."""
    global _bfloat16_num
    if typenum == _bfloat16_num:
        return True
    if _bfloat16_num == -1 and typenum >= 256 and x.dtype.name == "bfloat16":
        _bfloat16_num = typenum
        return True
    return False


cdef object _bfloat16_bits(object x, str name):
    """A bfloat16 NumPy array (ml_dtypes) as its uint16 bits (a view; NumPy exports no buffer for it)."""
    dt = getattr(x, "dtype", None)
    if getattr(dt, "name", None) != "bfloat16" or not isinstance(x, np.ndarray):
        got = dt if dt is not None else type(x).__name__
        raise TypeError(f"{name} must be a bfloat16 NumPy array (ml_dtypes.bfloat16), got {got}")
    is_bfloat16(x, dt.num)
    return x.view(np.uint16)


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


cdef enum:
    _PACK_ATTEMPTS = 100  # s8s8_pack_weight: enough for any run of path switches but a pathological one
    _MAX_NDIM = 64  # the most dimensions a buffer may have (PyBUF_MAX_NDIM)


# ---- the buffer class --------------------------------------------------------------------------

cdef class _Buffer:
    """One buffer held for a call and checked as the core will read it, by one of four views: acquire (a
    row-major matrix of `rows` x `cols`, rows `ld` elements apart), acquire_span (flat memory from the first
    element), acquire_stack (a stack of row-major matrices in the last two axes) and acquire_strided (an
    array over an output's shape, strides in elements)."""
    cdef Py_buffer view
    cdef bint held
    cdef char *ptr
    cdef int64_t rows, cols, ld  # acquire_stack: each matrix's
    cdef int64_t *steps          # acquire_stack: batch axes' strides; acquire_strided: every axis's (elements)
    cdef Py_ssize_t *shape       # the view's, or own_shape where the exporter gave none (layout)
    cdef Py_ssize_t *strides     # the view's, or own_strides where the exporter gave none (layout)
    cdef Py_ssize_t own_shape[1]
    cdef Py_ssize_t own_strides[_MAX_NDIM]

    def __dealloc__(self):
        if self.held:
            PyBuffer_Release(&self.view)
        free(self.steps)

    cdef int layout(self, str name) except -1:
        """shape and strides of the view just held. NULL strides (ctypes leaves them NULL even when asked for
        them) mean C-contiguous, as NumPy reads them: computed from shape and itemsize. A NULL shape (a
        PyBUF_SIMPLE exporter) is one flat run of len bytes; anything else without a shape is refused."""
        cdef int nd = self.view.ndim, d
        cdef Py_ssize_t step
        if nd < 0 or nd > _MAX_NDIM:
            raise TypeError(f"{name}: a buffer of {nd} dimensions is not supported (at most {_MAX_NDIM})")
        self.shape, self.strides = self.view.shape, self.view.strides
        if self.shape == NULL and nd > 0:
            if nd != 1 or self.view.itemsize <= 0 or self.view.len % self.view.itemsize != 0:
                raise TypeError(f"{name} must be an array or buffer with a shape ({nd}-D without one)")
            self.own_shape[0] = self.view.len // self.view.itemsize
            self.shape = self.own_shape
        if self.strides == NULL and nd > 0:
            step = self.view.itemsize
            for d in range(nd - 1, -1, -1):
                self.own_strides[d] = step
                step *= self.shape[d]
            self.strides = self.own_strides
        return 0

    cdef int get_buffer(self, object obj, str name, object what, bint writable) except -1:
        """Holds obj's buffer (strides and format); TypeError/ValueError naming `name` if it has none. `what`:
        the expected dtype's NumPy type number, or a description (read for the messages only)."""
        cdef int flags = PyBUF_STRIDES | PyBUF_FORMAT
        if writable:
            flags |= PyBUF_WRITABLE
        if obj is None:
            raise TypeError(f"{name} must be a {_what(what)} array or buffer, got None")
        try:
            PyObject_GetBuffer(obj, &self.view, flags)
        except (BufferError, ValueError) as e:  # NumPy says ValueError for a read-only array
            if writable:
                try:
                    PyObject_GetBuffer(obj, &self.view, PyBUF_STRIDES | PyBUF_FORMAT)
                except Exception:
                    raise TypeError(f"{name} must be a writable {_what(what)} array or buffer ({e})") from e
                PyBuffer_Release(&self.view)
                raise ValueError(f"{name} is read-only: it must be writable") from e
            raise TypeError(f"{name} must be a {_what(what)} array or buffer ({e})") from e
        except TypeError as e:
            raise TypeError(f"{name} must be a {_what(what)} array or buffer, got {type(obj).__name__}") from e
        self.held = True
        self.layout(name)
        self.ptr = <char *>self.view.buf
        return 0

    cdef int acquire(self, object obj, str name, int num, int64_t rows, int64_t cols, int64_t ld,
                     bint writable) except -1:
        """A 1-D (flat) or 2-D buffer of dtype `num` holding a rows x cols row-major matrix, leading dimension ld."""
        self.get_buffer(obj, name, num, writable)
        if _format_num(self.view.format, self.view.itemsize) != num:
            raise TypeError(f"{name} must have dtype {DTYPE_NAMES[num]}, "
                            f"got {_dtype_of(self.view.format, self.view.itemsize)}")
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
            if self.strides[0] != isz and self.shape[0] > 1:
                raise ValueError(f"{name} must be contiguous: a 1-D {name} is read as a flat buffer")
            if self.shape[0] < need:
                raise ValueError(f"{name} is too small: {self.shape[0]} elements, but "
                                 f"{rows} x {cols} with {ld_name}={ld} needs {need}")
        elif self.view.ndim == 2:
            if self.shape[0] * self.shape[1] == 0:
                if need > 0:
                    raise ValueError(f"{name} is empty but {rows} x {cols} elements are needed")
            else:
                if self.shape[1] > 1 and self.strides[1] != isz:
                    raise ValueError(f"{name} must be contiguous along rows (unit column stride); "
                                     f"got strides {self.strides[0]}, {self.strides[1]} bytes")
                if self.shape[0] > 1 and (self.strides[0] <= 0 or self.strides[0] % isz != 0
                                               or self.strides[0] // isz != ld):
                    raise ValueError(
                        f"{name} rows are {self.strides[0] // isz} elements apart but "
                        f"{ld_name}={ld}: a 2-D {name} must have rows exactly {ld_name} elements apart "
                        f"(pass a 1-D flat buffer, or a C-ordered array X or X[:, :k] with {ld_name}=X.shape[1])")
                if self.shape[0] < rows or self.shape[1] < cols:
                    raise ValueError(f"{name} is too small: shape ({self.shape[0]}, "
                                     f"{self.shape[1]}), but {rows} x {cols} is needed")
        else:
            raise ValueError(f"{name} must be 1-D (flat buffer) or 2-D, got {self.view.ndim}-D")
        return 0

    cdef int acquire_span(self, object obj, str name, str what, tuple nums, int64_t need, bint writable) except -1:
        """A buffer of one of the dtypes `nums` read as flat memory from its first element: the core addresses
        `need` elements by offsets (batch stride, leading dimension), all of which must lie in its span."""
        self.get_buffer(obj, name, what, writable)
        cdef Py_ssize_t itemsize = self.view.itemsize
        cdef bytes f
        if _format_num(self.view.format, itemsize) not in nums:
            f = self.view.format if self.view.format != NULL else b"B"
            if f[:1] in (b"@", b"=", b"<", b"|"):
                f = f[1:]
            raise TypeError(f"{name} must be a {what} array or buffer, got format {f.decode()!r} "
                            f"(itemsize {itemsize})")
        cdef int64_t span = 1
        cdef int d
        for d in range(self.view.ndim):
            if self.shape[d] == 0:
                span = 0
                break
            if self.strides[d] < 0:
                raise ValueError(f"{name} must not have negative strides")
        if span:
            span = itemsize
            for d in range(self.view.ndim):
                span += (self.shape[d] - 1) * self.strides[d]
        if <object>need * <object>itemsize > <object>span:  # Python ints: no overflow
            raise ValueError(f"{name} is too small: its span holds {span // itemsize} elements, "
                             f"{need} are addressed")
        return 0

    cdef int acquire_stack(self, object obj, str name, int num, bint writable) except -1:
        """An N-D buffer (N >= 2) of dtype `num` seen as a stack of row-major matrices in its last two axes:
        rows `ld` elements apart, unit stride along a row; its batch axes' strides in elements (steps)."""
        cdef int flags = PyBUF_STRIDES | PyBUF_FORMAT | (PyBUF_WRITABLE if writable else 0)
        try:
            PyObject_GetBuffer(obj, &self.view, flags)
        except Exception as e:
            raise TypeError(f"{name} must be a {'writable ' if writable else ''}{DTYPE_NAMES[num]} array ({e})") from e
        self.held = True
        self.layout(name)
        if _format_num(self.view.format, self.view.itemsize) != num:
            raise TypeError(f"{name} must have dtype {DTYPE_NAMES[num]}, "
                            f"got {_dtype_of(self.view.format, self.view.itemsize)}")
        cdef int nd = self.view.ndim, d
        if nd < 2:
            raise ValueError(f"{name} must have at least 2 dimensions (a matrix or a stack), got {nd}-D")
        cdef Py_ssize_t isz = self.view.itemsize
        self.ptr = <char *>self.view.buf
        self.rows, self.cols = self.shape[nd - 2], self.shape[nd - 1]
        self.ld = max(1, self.cols)
        self.steps = <int64_t *>calloc(nd, sizeof(int64_t))
        if self.steps == NULL:
            raise MemoryError()
        for d in range(nd):
            if self.shape[d] == 0:
                return 0  # empty: nothing is read or written
        if self.cols > 1 and self.strides[nd - 1] != isz:
            raise ValueError(f"{name} must have unit stride along its last axis")
        if self.rows > 1 and self.strides[nd - 2] == 0 and not writable:
            self.ld = 0  # every row the same row (a broadcast operand): the core reads it with ld 0
        elif self.rows > 1:
            if (self.strides[nd - 2] <= 0 or self.strides[nd - 2] % isz != 0
                    or self.strides[nd - 2] // isz < self.cols):
                raise ValueError(f"{name}: rows must be at least a row apart, in whole elements "
                                 f"(row stride {self.strides[nd - 2]} bytes)")
            self.ld = self.strides[nd - 2] // isz
        for d in range(nd - 2):
            if self.shape[d] > 1:
                if self.strides[d] % isz != 0:
                    raise ValueError(f"{name}: matrices must be whole elements apart")
                self.steps[d] = self.strides[d] // isz
        return 0

    cdef list batch_sizes(self):
        """acquire_stack's batch axes' sizes."""
        return [self.shape[d] for d in range(self.view.ndim - 2)]

    cdef list batch_axes(self, list batch_shape, str name):
        """(size, stride) of each of the output's batch axes for this stack, broadcast NumPy's way:
        missing or size-1 axes have stride 0."""
        cdef int nb = self.view.ndim - 2
        cdef int lead = len(batch_shape) - nb
        if lead < 0:
            raise ValueError(f"{name} has more batch axes than the output")
        out = []
        for d, n in enumerate(batch_shape):
            if d < lead or self.shape[d - lead] == 1:
                out.append(0)
            elif self.shape[d - lead] == n:
                out.append(self.steps[d - lead])
            else:
                raise ValueError(f"{name}'s batch axes {tuple(self.batch_sizes())} do not broadcast to "
                                 f"{tuple(batch_shape)}")
        return out

    cdef int acquire_strided(self, object obj, str name, tuple nums, tuple shape, bint writable) except -1:
        """An array of one of the dtypes `nums` and exactly `shape` (0 strides: repeated), its strides in elements."""
        cdef int flags = PyBUF_STRIDES | PyBUF_FORMAT
        if writable:
            flags |= PyBUF_WRITABLE
        try:
            PyObject_GetBuffer(obj, &self.view, flags)
        except (BufferError, ValueError, TypeError) as e:
            raise TypeError(f"{name} must be a{' writable' if writable else ''} array ({e})") from e
        self.held = True
        self.layout(name)
        self.ptr = <char *>self.view.buf
        if _format_num(self.view.format, self.view.itemsize) not in nums:
            raise TypeError(f"{name} must have dtype {' or '.join(DTYPE_NAMES[n] for n in nums)}, "
                            f"got {_dtype_of(self.view.format, self.view.itemsize)}")
        if self.view.ndim != len(shape) or self.view.ndim > GEMMKIT_QADD_MAX_DIMS:
            raise ValueError(f"{name} must have {len(shape)} dimensions (at most {GEMMKIT_QADD_MAX_DIMS})")
        self.steps = <int64_t *>calloc(max(1, self.view.ndim), sizeof(int64_t))
        if self.steps == NULL:
            raise MemoryError()
        cdef int d
        for d in range(self.view.ndim):
            if self.shape[d] != shape[d]:
                raise ValueError(f"{name} has shape {tuple(self.shape[i] for i in range(self.view.ndim))}, "
                                 f"expected {shape}")
            if self.strides[d] % self.view.itemsize != 0:
                raise ValueError(f"{name}: stride {self.strides[d]} bytes is not a whole number of elements")
            self.steps[d] = self.strides[d] // self.view.itemsize
        return 0


cdef int raise_status(int st, str fn) except -1:
    """The Python exception of a gemmkit_status_t (nothing for 0)."""
    if st == 0:
        return 0
    if st == 1:
        raise MemoryError(f"{fn}: out of memory")
    if st == 2:
        raise ValueError(f"{fn}: invalid arguments")
    raise NotImplementedError(f"{fn}: unimplemented (status {st})")


# ---- the GEMMs' one call into C (plain entries, stacks and the fast paths alike) ---------------------

cdef int gemm_nogil(int ab_num, int c_num, char ta, char tb, int64_t M, int64_t N, int64_t K, double complex al,
                    const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb,
                    double complex be, void *C, int64_t ldc, int64_t sc, int64_t batch) noexcept nogil:
    """C[i] := alpha op(A[i]) op(B[i]) + beta C[i] for i < batch (X[i] at X + i * sx elements) by the operands'
    and C's NumPy type numbers: gemmkit_<s|d|c|z|h|bf16>gemm_batch, gemmkit_gemm_bf16bf16f32_batch (bfloat16
    operands, a float32 C), or gemmkit_gemm_<i32|i64|u32|u64> (one matrix only). alpha and beta are narrowed
    to the routine's scalar type here, once for every caller. Returns the status."""
    cdef gemmkit_complex64_t a64, b64
    cdef gemmkit_complex128_t a128, b128
    if ab_num == cnp.NPY_FLOAT32:
        return gemmkit_sgemm_batch(ta, tb, M, N, K, <float>al.real, <const float *>A, lda, sa, <const float *>B, ldb,
                                   sb, <float>be.real, <float *>C, ldc, sc, batch)
    if ab_num == cnp.NPY_FLOAT64:
        return gemmkit_dgemm_batch(ta, tb, M, N, K, al.real, <const double *>A, lda, sa, <const double *>B, ldb, sb,
                                   be.real, <double *>C, ldc, sc, batch)
    if ab_num == cnp.NPY_COMPLEX64:
        a64.re = <float>al.real; a64.im = <float>al.imag; b64.re = <float>be.real; b64.im = <float>be.imag
        return gemmkit_cgemm_batch(ta, tb, M, N, K, a64, <const gemmkit_complex64_t *>A, lda, sa,
                                   <const gemmkit_complex64_t *>B, ldb, sb, b64, <gemmkit_complex64_t *>C, ldc, sc,
                                   batch)
    if ab_num == cnp.NPY_COMPLEX128:
        a128.re = al.real; a128.im = al.imag; b128.re = be.real; b128.im = be.imag
        return gemmkit_zgemm_batch(ta, tb, M, N, K, a128, <const gemmkit_complex128_t *>A, lda, sa,
                                   <const gemmkit_complex128_t *>B, ldb, sb, b128, <gemmkit_complex128_t *>C, ldc,
                                   sc, batch)
    if ab_num == cnp.NPY_FLOAT16:
        return gemmkit_hgemm_batch(ta, tb, M, N, K, <float>al.real, <const uint16_t *>A, lda, sa,
                                   <const uint16_t *>B, ldb, sb, <float>be.real, <uint16_t *>C, ldc, sc, batch)
    if ab_num == _bfloat16_num and ab_num != -1:
        if c_num == cnp.NPY_FLOAT32:
            return gemmkit_gemm_bf16bf16f32_batch(ta, tb, M, N, K, <float>al.real, <const uint16_t *>A, lda, sa,
                                                  <const uint16_t *>B, ldb, sb, <float>be.real, <float *>C, ldc, sc,
                                                  batch)
        return gemmkit_bf16gemm_batch(ta, tb, M, N, K, <float>al.real, <const uint16_t *>A, lda, sa,
                                      <const uint16_t *>B, ldb, sb, <float>be.real, <uint16_t *>C, ldc, sc, batch)
    if batch != 1:
        return 3  # the wrap-around integers have no batch entry
    if ab_num == cnp.NPY_INT32 or ab_num == cnp.NPY_UINT32:
        if ab_num == cnp.NPY_INT32:
            return gemmkit_gemm_i32(ta, tb, M, N, K, al.real, <const int32_t *>A, lda, <const int32_t *>B, ldb,
                                    be.real, <int32_t *>C, ldc)
        return gemmkit_gemm_u32(ta, tb, M, N, K, al.real, <const uint32_t *>A, lda, <const uint32_t *>B, ldb, be.real,
                                <uint32_t *>C, ldc)
    if ab_num == cnp.NPY_INT64:
        return gemmkit_gemm_i64(ta, tb, M, N, K, al.real, <const int64_t *>A, lda, <const int64_t *>B, ldb, be.real,
                                <int64_t *>C, ldc)
    if ab_num == cnp.NPY_UINT64:
        return gemmkit_gemm_u64(ta, tb, M, N, K, al.real, <const uint64_t *>A, lda, <const uint64_t *>B, ldb, be.real,
                                <uint64_t *>C, ldc)
    return 2


# ---- plain GEMMs: float32, float64, complex64, complex128, float16, bfloat16, wrap-around integers --------

cdef (int64_t, int64_t, int64_t, int64_t, int64_t, int64_t) _sizes(char ta, char tb, M_, N_, K_, lda_, ldb_,
                                                                   ldc_) except *:
    """M, N, K and the leading dimensions as checked integers (the same rules for every GEMM family)."""
    cdef int64_t M = _int_arg(M_, "M"), N = _int_arg(N_, "N"), K = _int_arg(K_, "K")
    cdef int64_t lda = _int_arg(lda_, "lda"), ldb = _int_arg(ldb_, "ldb"), ldc = _int_arg(ldc_, "ldc")
    _check_dims_lds(ta, tb, M, N, K, lda, ldb, ldc)
    return M, N, K, lda, ldb, ldc


cdef int _acquire_abc(_Buffer a, _Buffer b, _Buffer c, A, B, C, int a_num, int b_num, int c_num, char ta, char tb,
                      int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc,
                      bint reads_ab) except -1:
    """A, B (read when reads_ab and there is a product) and C (written) held and checked for op(A) M x K,
    op(B) K x N, C M x N with their leading dimensions."""
    cdef bint work = M > 0 and N > 0
    reads_ab = reads_ab and work and K > 0
    a.acquire(A, "A", a_num, (K if _is_t(ta) else M) if reads_ab else 0,
              (M if _is_t(ta) else K) if reads_ab else 0, lda, False)
    b.acquire(B, "B", b_num, (N if _is_t(tb) else K) if reads_ab else 0,
              (K if _is_t(tb) else N) if reads_ab else 0, ldb, False)
    c.acquire(C, "C", c_num, M if work else 0, N if work else 0, ldc, True)
    return 0


cdef bint _ndarray_matrix(object X, int num, int64_t rows, int64_t cols, int64_t ld, bint writable,
                          char **ptr) noexcept:
    """The quick form of _Buffer.acquire for a NumPy array: True (and its data in *ptr) when X is an aligned,
    native ndarray of dtype num (writable when asked) that acquire would accept for a rows x cols matrix ld
    apart; False for anything else, which then goes through acquire (its checks and messages)."""
    if type(X) is not np.ndarray:
        return False
    cdef cnp.ndarray a = <cnp.ndarray>X
    if (cnp.PyArray_TYPE(a) != num or not cnp.PyArray_ISALIGNED(a) or not cnp.PyArray_ISNOTSWAPPED(a)
            or (writable and not cnp.PyArray_ISWRITEABLE(a))):
        return False
    cdef Py_ssize_t isz = cnp.PyArray_ITEMSIZE(a)
    cdef int nd = cnp.PyArray_NDIM(a)
    cdef const cnp.npy_intp *shape = cnp.PyArray_DIMS(a)
    cdef const cnp.npy_intp *strides = cnp.PyArray_STRIDES(a)
    cdef int64_t need = 0
    if rows > 0 and cols > 0:
        if rows > 1 and ld > (INT64_MAX - cols) // (rows - 1):
            return False
        need = (rows - 1) * ld + cols
    if nd == 1:
        if (shape[0] > 1 and strides[0] != isz) or shape[0] < need:
            return False
    elif nd == 2:
        if shape[0] * shape[1] == 0:
            if need > 0:
                return False
        elif ((shape[1] > 1 and strides[1] != isz) or (shape[0] > 1 and (strides[0] <= 0 or strides[0] % isz != 0
                                                                    or strides[0] // isz != ld))
              or shape[0] < rows or shape[1] < cols):
            return False
    else:
        return False
    ptr[0] = <char *>cnp.PyArray_DATA(a)
    return True


cdef bint _ndarray_abc(object A, object B, object C, int a_num, int b_num, int c_num, char ta, char tb,
                       int64_t M, int64_t N, int64_t K, int64_t lda, int64_t ldb, int64_t ldc, bint reads_ab,
                       char **pa, char **pb, char **pc) noexcept:
    """The quick form of _acquire_abc (reads_ab: there is a product and A, B are read): True with the three data
    pointers when A, B and C are NumPy arrays _ndarray_matrix takes; False sends them through _acquire_abc."""
    cdef bint work = M > 0 and N > 0
    return (_ndarray_matrix(C, c_num, M if work else 0, N if work else 0, ldc, True, pc)
            and _ndarray_matrix(A, a_num, ((K if _is_t(ta) else M) if reads_ab else 0),
                                ((M if _is_t(ta) else K) if reads_ab else 0), lda, False, pa)
            and _ndarray_matrix(B, b_num, ((N if _is_t(tb) else K) if reads_ab else 0),
                                ((K if _is_t(tb) else N) if reads_ab else 0), ldb, False, pb))


cdef object _gemm(str fn, int ab_num, int c_num, transa, transb, M_, N_, K_, alpha, A, lda_, B, ldb_, beta, C, ldc_):
    """Every plain GEMM entry: checks in oneDNN's order, buffers acquired, C computed in place by gemm_nogil.
    Complex types take 'C' / 'R' flags and complex scalars; float32, complex64 and the 16-bit types take
    scalars representable in float32; the wrap-around integers read A and B even when alpha = 0 (the
    product's float64 scaling gives NaN for an infinite alpha). ab_num BFLOAT16: A and B are bfloat16
    arrays (C too when c_num is BFLOAT16), passed as their bits."""
    cdef bint cplx = ab_num == cnp.NPY_COMPLEX64 or ab_num == cnp.NPY_COMPLEX128
    cdef bint wrap = (ab_num == cnp.NPY_INT32 or ab_num == cnp.NPY_INT64 or ab_num == cnp.NPY_UINT32
                      or ab_num == cnp.NPY_UINT64)
    cdef bint half = ab_num == cnp.NPY_FLOAT16 or ab_num == BFLOAT16
    cdef bint single = not (wrap or ab_num == cnp.NPY_FLOAT64 or ab_num == cnp.NPY_COMPLEX128)
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
    cdef int a_num = ab_num, c_buf = c_num  # the buffers' dtypes (bfloat16: its bits)
    cdef int st
    cdef bint work = M > 0 and N > 0
    cdef bint reads_ab = work and K > 0 and (wrap or ((<float>al.real != 0) if half else al != 0))
    cdef char *pa = NULL
    cdef char *pb = NULL
    cdef char *pc = NULL
    # NumPy arrays: no buffer protocol round trip (bfloat16 ones once ml_dtypes' type number is known)
    cdef int qa = _bfloat16_num if ab_num == BFLOAT16 else ab_num, qc = _bfloat16_num if c_num == BFLOAT16 else c_num
    if qa != -1 and _ndarray_abc(A, B, C, qa, qa, qc, ta, tb, M, N, K, lda, ldb, ldc, reads_ab, &pa, &pb, &pc):
        with nogil:
            st = gemm_nogil(qa, qc, ta, tb, M, N, K, al, pa, lda, 0, pb, ldb, 0, be, pc, ldc, 0, 1)
        raise_status(st, fn)
        return C
    C_bits = C
    if ab_num == BFLOAT16:
        A, B = _bfloat16_bits(A, "A"), _bfloat16_bits(B, "B")
        a_num, ab_num = cnp.NPY_UINT16, _bfloat16_num
        if c_num == BFLOAT16:
            C_bits = _bfloat16_bits(C, "C")
            c_buf, c_num = cnp.NPY_UINT16, _bfloat16_num
    cdef _Buffer a = _Buffer(), b = _Buffer(), c = _Buffer()
    _acquire_abc(a, b, c, A, B, C_bits, a_num, a_num, c_buf, ta, tb, M, N, K, lda, ldb, ldc,
                 wrap or ((<float>al.real != 0) if half else al != 0))
    with nogil:
        st = gemm_nogil(ab_num, c_num, ta, tb, M, N, K, al, a.ptr, lda, 0, b.ptr, ldb, 0, be, c.ptr, ldc, 0, 1)
    raise_status(st, fn)
    return C


cdef object _entry(str fn, int ab_num, int c_num, str doc):
    """The public plain entry `fn` for operands of type ab_num and a C of type c_num (see _gemm)."""
    def entry(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
        return _gemm(fn, ab_num, c_num, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)
    entry.__name__ = entry.__qualname__ = fn
    entry.__doc__ = doc
    return entry


# The docstrings of the float and 16-bit entries, from one template.
_GEMM_DOC = """{summary}

    Parameters
    ----------
    transa, transb : str
        ``'N'`` (op(X) = X) or ``'T'`` (op(X) = X^T), either case{conj}.
    M, N, K : int
        op(A) is M x K, op(B) K x N, C M x N. Python or NumPy integers (a float or a bool is a
        ``TypeError``).
    alpha, beta : {scalar}
        The scale factors; they must be representable in the routine's type. With ``beta = 0`` C is not read.
    A, B : buffer of {ab}
        A NumPy array or any buffer of that dtype: 1-D (flat memory, as the C API sees it) or 2-D with rows
        exactly ``lda`` / ``ldb`` elements apart and contiguous along rows. Read only.
    lda, ldb, ldc : int
        Leading dimensions (row strides, in elements) of the row-major A, B and C.
    C : writable buffer of {c}
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
{see_also}
    Examples
    --------
    >>> import numpy as np, gemmkit{imports}
{examples}
    """
_CONJ = "; also ``'C'`` (op(X) = X^H) and ``'R'`` (conj(X), no transpose)"
_SUMMARY = "C := alpha * op(A) @ op(B) + beta * C"
_FLOAT_DOCS = {  # name -> summary, conj, scalar, A and B's type, C's type, see also, imports, examples
        "sgemm": (f"{_SUMMARY}, row-major float32, in place (oneDNN's ``dnnl_sgemm``).", "", "float", "float32",
         "float32", "\n    See Also\n    --------\n    gemmkit.gemm : the same product on whole 2-D arrays, shapes "
         "taken from the arrays.\n", "", """\
    >>> A, B = np.ones((2, 4), np.float32), np.ones((3, 4), np.float32)
    >>> C = np.zeros((2, 3), np.float32)
    >>> gemmkit.sgemm('N', 'T', 2, 3, 4, 1.0, A, 4, B, 4, 0.0, C, 3)
    array([[4., 4., 4.],
           [4., 4., 4.]], dtype=float32)"""),
        "dgemm": (f"{_SUMMARY}, row-major float64, in place.", "", "float", "float64", "float64", "", "", """\
    >>> A = np.arange(6.0).reshape(2, 3); B = np.eye(3); C = np.ones((2, 3))
    >>> gemmkit.dgemm('N', 'N', 2, 3, 3, 2.0, A, 3, B, 3, 1.0, C, 3)
    array([[ 1.,  3.,  5.],
           [ 7.,  9., 11.]])"""),
        "cgemm": (f"{_SUMMARY}, row-major complex64, in place.", _CONJ, "complex", "complex64", "complex64", "", "", """\
    >>> A = np.array([[1j, 1]], np.complex64); C = np.zeros((1, 1), np.complex64)
    >>> gemmkit.cgemm('N', 'C', 1, 1, 2, 1.0, A, 2, A, 2, 0.0, C, 1)     # A @ A^H
    array([[2.+0.j]], dtype=complex64)"""),
        "zgemm": (f"{_SUMMARY}, row-major complex128, in place.", _CONJ, "complex", "complex128", "complex128", "", "",
         """\
    >>> A = np.array([[1 + 1j, 2]]); C = np.zeros((1, 1), complex)
    >>> gemmkit.zgemm('N', 'T', 1, 1, 2, 1j, A, 2, A, 2, 0.0, C, 1)      # 1j * A @ A^T
    array([[-2.+4.j]])"""),
        "hgemm": (f"""{_SUMMARY} for float16, in place: float32 arithmetic, one rounding.

    A and B are widened exactly to float32, the sums run in float32 and alpha * AB + beta * C is rounded once to
    nearest even into float16 (overflow gives +-inf).""", "", "float", "float16", "float16", "", "", """\
    >>> A = np.full((2, 2), 0.5, np.float16); C = np.zeros((2, 2), np.float16)
    >>> gemmkit.hgemm('N', 'N', 2, 2, 2, 1.0, A, 2, A, 2, 0.0, C, 2)
    array([[0.5, 0.5],
           [0.5, 0.5]], dtype=float16)"""),
        "bf16gemm": (f"""{_SUMMARY} for bfloat16 arrays (``ml_dtypes.bfloat16``), in place.

    Float32 sums, one rounding to nearest even into bfloat16. On the CPU's bfloat16 unit where the kernel path has
    one (AMX-BF16, AVX512_BF16; ``show_config()`` names it), else widened to float32 as :func:`hgemm`: every
    product of two bfloat16 values is exact in float32 and each sum rounds to nearest even; subnormal inputs are
    honoured on every path (a call that has one runs its tiles widened exactly), sums below FLT_MIN may flush to
    zero on the hardware paths (as in oneDNN and MKL). Within float32's error bound of the exact product, not
    bit-identical across paths.""", "", "float", "bfloat16",
         "bfloat16", "", ", ml_dtypes", """\
    >>> A = np.ones((2, 3), ml_dtypes.bfloat16); C = np.zeros((2, 2), ml_dtypes.bfloat16)
    >>> C = gemmkit.bf16gemm('N', 'T', 2, 2, 3, 1.0, A, 3, A, 3, 0.0, C, 2)
    >>> C.astype(np.float32)
    array([[3., 3.],
           [3., 3.]], dtype=float32)"""),
        "gemm_bf16bf16f32": (f"""{_SUMMARY} with bfloat16 A and B and a float32 C, in place.

    oneDNN's ``gemm_bf16bf16f32`` (and NumPy's bfloat16 matmul): the arithmetic of :func:`bf16gemm` (the CPU's
    bfloat16 unit where the path has one, subnormal inputs honoured), C float32 with no final rounding.""", "", "float", "bfloat16 (``ml_dtypes``)", "float32", "", ", ml_dtypes", """\
    >>> A = np.full((1, 4), 1.5, ml_dtypes.bfloat16); C = np.zeros((1, 1), np.float32)
    >>> gemmkit.gemm_bf16bf16f32('N', 'T', 1, 1, 4, 1.0, A, 4, A, 4, 0.0, C, 1)
    array([[9.]], dtype=float32)""")}


cdef str _float_doc(str fn):
    summary, conj, scalar, ab, c, see_also, imports, examples = _FLOAT_DOCS[fn]
    return _GEMM_DOC.format(summary=summary, conj=conj, scalar=scalar, ab=ab, c=c, see_also=see_also,
                            imports=imports, examples=examples)


sgemm, dgemm, cgemm, zgemm, hgemm = [_entry(fn, num, num, _float_doc(fn)) for fn, num in (
    ("sgemm", cnp.NPY_FLOAT32), ("dgemm", cnp.NPY_FLOAT64), ("cgemm", cnp.NPY_COMPLEX64),
    ("zgemm", cnp.NPY_COMPLEX128), ("hgemm", cnp.NPY_FLOAT16))]
bf16gemm = _entry("bf16gemm", BFLOAT16, BFLOAT16, _float_doc("bf16gemm"))
gemm_bf16bf16f32 = _entry("gemm_bf16bf16f32", BFLOAT16, cnp.NPY_FLOAT32, _float_doc("gemm_bf16bf16f32"))
# The wrap-around integers (ONNX's Gemm on int32, int64, uint32, uint64).
gemm_i32, gemm_i64, gemm_u32, gemm_u64 = [_entry(fn, num, num, doc) for fn, num, doc in (
    ("gemm_i32", cnp.NPY_INT32, """int32 Gemm as ONNX computes it: the product wraps modulo 2^32, alpha and beta
    scale it in float64, the result is truncated back (see gemmkit.h); C in place."""),
    ("gemm_i64", cnp.NPY_INT64, "int64 Gemm as ONNX computes it (as gemm_i32, modulo 2^64)."),
    ("gemm_u32", cnp.NPY_UINT32, "uint32 Gemm as ONNX computes it (as gemm_i32, unsigned)."),
    ("gemm_u64", cnp.NPY_UINT64, "uint64 Gemm as ONNX computes it (as gemm_i64, unsigned)."))]


# ---- stacks of matrices: gemm_batch ----------------------------------------------------------------

# The integer types and bool (gemm_int_nogil's, in NumPy's arithmetic) by dtype
_INT_NUMS = {np.dtype(t): np.dtype(t).num for t in (np.bool_, np.int8, np.uint8, np.int16, np.uint16, np.int32,
                                                     np.uint32, np.int64, np.uint64)}


cdef int int_type_of(int typenum) noexcept nogil:
    """gemm_int_nogil's type for a NumPy type number: bool and the integer types, -1 for none."""
    if typenum == cnp.NPY_BOOL: return GEMMKIT_INT_BOOL
    if typenum == cnp.NPY_INT8: return GEMMKIT_INT_S8
    if typenum == cnp.NPY_UINT8: return GEMMKIT_INT_U8
    if typenum == cnp.NPY_INT16: return GEMMKIT_INT_S16
    if typenum == cnp.NPY_UINT16: return GEMMKIT_INT_U16
    if typenum == cnp.NPY_INT32: return GEMMKIT_INT_S32
    if typenum == cnp.NPY_UINT32: return GEMMKIT_INT_U32
    if typenum == cnp.NPY_INT64: return GEMMKIT_INT_S64
    if typenum == cnp.NPY_UINT64: return GEMMKIT_INT_U64
    return -1


cdef int gemm_int_nogil(int int_type, char ta, char tb, int64_t M, int64_t N, int64_t K, int64_t alpha,
                        const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb, int64_t beta,
                        void *C, int64_t ldc, int64_t sc, int64_t batch) noexcept nogil:
    return gemmkit_gemm_int_batch(int_type, ta, tb, M, N, K, alpha, A, lda, sa, B, ldb, sb, beta, C, ldc, sc, batch)


cdef int64_t _modular_arg(object x, str name) except? -1:
    """An integer alpha / beta as the 64 bits that act modulo 2^bits (bools too: bool's truth values)."""
    if not isinstance(x, (int, np.integer, bool, np.bool_)):
        raise TypeError(f"{name} must be an integer for integer arrays, got {type(x).__name__}")
    cdef uint64_t u = <uint64_t>(int(x) & 0xFFFFFFFFFFFFFFFF)
    return <int64_t>u


cdef int _run_stack(int ab_num, int c_num, char ta, char tb, int64_t M, int64_t N, int64_t K, double complex al,
                    _Buffer a, int64_t sa, _Buffer b, int64_t sb, double complex be, _Buffer c, int64_t sc,
                    int64_t off_a, int64_t off_b, int64_t off_c, int64_t batch, int int_type=-1,
                    int64_t ali=0, int64_t bei=0) except -1:
    """One strided-batch call of the core on matrices starting off_* elements into each buffer (int_type >= 0:
    gemmkit_gemm_int_batch of that type with the integer factors ali, bei)."""
    cdef int st
    cdef const char *pa = a.ptr + off_a * a.view.itemsize
    cdef const char *pb = b.ptr + off_b * b.view.itemsize
    cdef char *pc = c.ptr + off_c * c.view.itemsize
    with nogil:
        if int_type >= 0:
            st = gemm_int_nogil(int_type, ta, tb, M, N, K, ali, pa, a.ld, sa, pb, b.ld, sb, bei, pc, c.ld, sc, batch)
        else:
            st = gemm_nogil(ab_num, c_num, ta, tb, M, N, K, al, pa, a.ld, sa, pb, b.ld, sb, be, pc, c.ld, sc, batch)
    return raise_status(st, "gemm_batch")


_BATCH_NUMS = {np.dtype(t): np.dtype(t).num for t in (np.float32, np.float64, np.complex64, np.complex128)}


def gemm_batch(transa, transb, alpha, A, B, beta, C):
    """C[i] := alpha * op(A[i]) @ op(B[i]) + beta * C[i] over the batch axes of C (all axes but the
    last two), A's and B's batch axes broadcast to them as NumPy does (missing or size 1: shared).
    One float or complex dtype, or 16-bit operands: float16 A and B with a float16 C, bfloat16 A and B
    (ml_dtypes) with a float32 C or a bfloat16 C (float32 sums rounded once; alpha and beta real), or one integer
    dtype or bool, in NumPy's modular
    arithmetic (gemmkit_gemm_int_batch; alpha and beta integers); each matrix with unit stride along its rows and
    rows at least a row apart (A and B may also have rows 0 apart: one row repeated, a broadcast operand,
    read with leading dimension 0); batch strides are anything. M, N from C, K from op(A). Batch axes that walk
    with one stride merge into one core call (threads spread small products whole); others loop here.
    Refuses an output whose matrices overlap. For the front ends (gemmkit.matmul, gemmkit.gemm)."""
    operands = getattr(getattr(A, "dtype", None), "name", None)
    if operands == "float16":
        return _gemm_stacks(cnp.NPY_FLOAT16, cnp.NPY_FLOAT16, cnp.NPY_FLOAT16, transa, transb, alpha, A, B, beta, C)
    if operands == "bfloat16":
        A, B = _bfloat16_bits(A, "A"), _bfloat16_bits(B, "B")
        if getattr(getattr(C, "dtype", None), "name", None) == "bfloat16":
            _gemm_stacks(_bfloat16_num, cnp.NPY_UINT16, _bfloat16_num, transa, transb, alpha, A, B, beta,
                         _bfloat16_bits(C, "C"), -1, cnp.NPY_UINT16)
            return C
        return _gemm_stacks(_bfloat16_num, cnp.NPY_UINT16, cnp.NPY_FLOAT32, transa, transb, alpha, A, B, beta, C)
    num = _BATCH_NUMS.get(getattr(C, "dtype", None))
    if num is None:
        num = _INT_NUMS.get(getattr(C, "dtype", None))
        if num is not None:
            return _gemm_stacks(num, num, num, transa, transb, alpha, A, B, beta, C, int_type_of(num))
        raise TypeError(f"C must be a float32, float64, complex64, complex128, integer or bool array, got "
                        f"{getattr(C, 'dtype', type(C).__name__)}")
    return _gemm_stacks(num, num, num, transa, transb, alpha, A, B, beta, C)


cdef object _gemm_stacks(int ab_num, int ab_buf, int c_num, transa, transb, alpha, A, B, beta, C, int int_type=-1,
                         int c_buf=-1):
    """gemm_batch's work: operands of type ab_num (held as ab_buf: bfloat16's bits), C of type c_num (held as c_buf
    where given); int_type >= 0: gemmkit_gemm_int_batch's type (integer alpha and beta)."""
    cdef bint cplx = ab_num == cnp.NPY_COMPLEX64 or ab_num == cnp.NPY_COMPLEX128
    cdef bint single = ab_num != cnp.NPY_FLOAT64 and ab_num != cnp.NPY_COMPLEX128
    cdef char ta = _trans_flag(transa, "transa", cplx), tb = _trans_flag(transb, "transb", cplx)
    cdef _Buffer a = _Buffer(), b = _Buffer(), c = _Buffer()
    c.acquire_stack(C, "C", c_num if c_buf < 0 else c_buf, True)
    a.acquire_stack(A, "A", ab_buf, False)
    b.acquire_stack(B, "B", ab_buf, False)
    cdef int64_t M = c.rows, N = c.cols
    cdef int64_t K = a.rows if _is_t(ta) else a.cols
    if (a.cols if _is_t(ta) else a.rows) != M:
        raise ValueError(f"A's matrices are {a.rows} x {a.cols}, which does not fit C's {M} x {N} "
                         f"with transa={chr(ta)!r}")
    if (b.cols if _is_t(tb) else b.rows) != K or (b.rows if _is_t(tb) else b.cols) != N:
        raise ValueError(f"B's matrices are {b.rows} x {b.cols}, which does not fit op(A) {M} x {K} "
                         f"and C {M} x {N} with transb={chr(tb)!r}")
    shape = c.batch_sizes()
    sa, sb, sc = a.batch_axes(shape, "A"), b.batch_axes(shape, "B"), [c.steps[d] for d in range(len(shape))]
    cdef double complex al = 0, be = 0
    cdef int64_t ali = 0, bei = 0
    if int_type >= 0:
        ali = _modular_arg(alpha, "alpha")
        bei = _modular_arg(beta, "beta")
    elif cplx:
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
        _run_stack(ab_num, c_num, ta, tb, M, N, K, al, a, ra, b, rb, be, c, rc, 0, 0, 0, run, int_type, ali, bei)
        return C
    outer = axes[:len(axes) - 1]
    for idx in np.ndindex(*[ax[0] for ax in outer]):
        off_a = sum(i * ax[1] for i, ax in zip(idx, outer))
        off_b = sum(i * ax[2] for i, ax in zip(idx, outer))
        off_c = sum(i * ax[3] for i, ax in zip(idx, outer))
        _run_stack(ab_num, c_num, ta, tb, M, N, K, al, a, ra, b, rb, be, c, rc, off_a, off_b, off_c, run, int_type,
                   ali, bei)
    return C


# ---- int8 products with zero points (oneDNN's gemm_u8s8s32, gemm_s8s8s32) ----------------------------

cdef object _offset_vector(object co, char oc, int64_t M, int64_t N):
    """co as a contiguous int32 NumPy array, its length checked against offsetc."""
    cdef int64_t need = 1 if oc == b'F' else (M if oc == b'C' else N)
    cdef cnp.ndarray nd
    if type(co) is np.ndarray:  # the usual call: already a contiguous int32 vector (no NumPy calls, ~2 us)
        nd = <cnp.ndarray>co
        if (cnp.PyArray_TYPE(nd) == cnp.NPY_INT32 and cnp.PyArray_NDIM(nd) == 1 and
                cnp.PyArray_IS_C_CONTIGUOUS(nd) and cnp.PyArray_DIM(nd, 0) >= need):
            return co
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


cdef object _gemm_int8(str fn, bint a_signed, transa, transb, offsetc, M_, N_, K_, alpha_, A, lda_, ao, B,
                       ldb_, bo, beta_, C, ldc_, co):
    cdef char ta = _trans_flag(transa, "transa"), tb = _trans_flag(transb, "transb")
    cdef char oc = _offsetc_flag(offsetc)
    cdef int64_t M, N, K, lda, ldb, ldc
    M, N, K, lda, ldb, ldc = _sizes(ta, tb, M_, N_, K_, lda_, ldb_, ldc_)
    cdef float alpha = _real_arg(alpha_, "alpha", True), beta = _real_arg(beta_, "beta", True)
    cdef int lo = -128 if a_signed else 0, hi = 127 if a_signed else 255
    if not (type(ao) is int and lo <= ao <= hi):  # (a Python int: the usual call, checked in C)
        if _is_bool(ao) or not isinstance(ao, (int, np.integer)) or not lo <= ao <= hi:
            raise ValueError(f"ao must be an integer in [{lo}, {hi}], got {ao!r}")
    if not (type(bo) is int and -128 <= bo <= 127):
        if _is_bool(bo) or not isinstance(bo, (int, np.integer)) or not -128 <= bo <= 127:
            raise ValueError(f"bo must be an integer in [-128, 127], got {bo!r}")
    co_arr = _offset_vector(co, oc, M, N)
    cdef int a_num = cnp.NPY_INT8 if a_signed else cnp.NPY_UINT8
    cdef bint reads_ab = M > 0 and N > 0 and K > 0 and alpha != 0.0
    cdef char *pa = NULL
    cdef char *pb = NULL
    cdef char *pc = NULL
    cdef _Buffer a, b, c, o
    if not _ndarray_abc(A, B, C, a_num, cnp.NPY_INT8, cnp.NPY_INT32, ta, tb, M, N, K, lda, ldb, ldc, reads_ab,
                        &pa, &pb, &pc):  # NumPy arrays: no buffer objects
        a, b, c = _Buffer(), _Buffer(), _Buffer()
        _acquire_abc(a, b, c, A, B, C, a_num, cnp.NPY_INT8, cnp.NPY_INT32, ta, tb, M, N, K, lda, ldb, ldc,
                     alpha != 0.0)
        pa, pb, pc = a.ptr, b.ptr, c.ptr
    cdef const int32_t *po = NULL
    if type(co_arr) is np.ndarray and cnp.PyArray_ISALIGNED(<cnp.ndarray>co_arr):
        po = <const int32_t *>cnp.PyArray_DATA(<cnp.ndarray>co_arr)  # contiguous int32 (_offset_vector)
    else:
        o = _Buffer()
        o.acquire(co_arr, "co", cnp.NPY_INT32, 0, 0, 1, False)
        po = <const int32_t *>o.ptr
    cdef int st
    cdef int ao_i = ao, bo_i = bo
    if a_signed:
        with nogil:
            st = gemmkit_gemm_s8s8s32(ta, tb, oc, M, N, K, alpha, <const int8_t *>pa, lda,
                                      <int8_t>ao_i, <const int8_t *>pb, ldb, <int8_t>bo_i, beta,
                                      <int32_t *>pc, ldc, po)
    else:
        with nogil:
            st = gemmkit_gemm_u8s8s32(ta, tb, oc, M, N, K, alpha, <const uint8_t *>pa, lda,
                                      <uint8_t>ao_i, <const int8_t *>pb, ldb, <int8_t>bo_i, beta,
                                      <int32_t *>pc, ldc, po)
    raise_status(st, fn)
    return C


def gemm_u8s8s32(transa, transb, offsetc, M, N, K, alpha, A, lda, ao, B, ldb, bo, beta, C, ldc, co):
    return _gemm_int8("gemm_u8s8s32", False, transa, transb, offsetc, M, N, K, alpha, A, lda, ao, B,
                      ldb, bo, beta, C, ldc, co)


def gemm_s8s8s32(transa, transb, offsetc, M, N, K, alpha, A, lda, ao, B, ldb, bo, beta, C, ldc, co):
    return _gemm_int8("gemm_s8s8s32", True, transa, transb, offsetc, M, N, K, alpha, A, lda, ao, B,
                      ldb, bo, beta, C, ldc, co)


# The docstrings of the two int8 entries, from one template.
_INT8_DOC = """C := alpha * (op(A) - ao) @ (op(B) - bo) + beta * C + co, exact int8 sums, row-major, in place.

    A is {a}, B int8, C int32 (oneDNN's ``dnnl_{fn}``). The integer sums are exact on every kernel path
    (no 16-bit saturation). With alpha = 1 and beta in {{0, 1}} the result is the exact integer, saturated to
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
    A : buffer of {a}
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
    >>> A, B = np.full((2, 4), {a_value}, np.{a}), np.full((4, 3), -100, np.int8)
    >>> C, co = np.zeros((2, 3), np.int32), np.int32([0, 1, 2])      # 'R': co[j] per column
    >>> gemmkit.{fn}('N', 'N', 'R', 2, 3, 4, 1.0, A, 4, 0, B, 3, 0, 0.0, C, 3, co)
    array([[{r0}, {r1}, {r2}],
           [{r0}, {r1}, {r2}]], dtype=int32)
    """
gemm_u8s8s32.__doc__ = _INT8_DOC.format(a="uint8", fn="gemm_u8s8s32", a_value=200, r0=-80000, r1=-79999, r2=-79998)
gemm_s8s8s32.__doc__ = _INT8_DOC.format(a="int8", fn="gemm_s8s8s32", a_value=-100, r0=40000, r1=40001, r2=40002)


# ---- per-token quantized int8 product with float output ------------------------------------------

# The buffers' dtypes (NumPy type numbers) of acquire_span.
_INT8, _UINT8, _INT32, _FLOAT32 = (cnp.NPY_INT8,), (cnp.NPY_UINT8,), (cnp.NPY_INT32,), (cnp.NPY_FLOAT32,)
# out_type name -> (C's GEMMKIT_OUT_* code, the dtypes C may have: the type itself or its raw bits)
_PER_TOKEN_OUT = {"float32": (GEMMKIT_OUT_FLOAT32, _FLOAT32),
                  "float16": (GEMMKIT_OUT_FLOAT16, (cnp.NPY_FLOAT16, cnp.NPY_UINT16)),
                  "bfloat16": (GEMMKIT_OUT_BFLOAT16, (cnp.NPY_UINT16,))}


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
    cdef _Buffer a = _Buffer(), b = _Buffer(), c = _Buffer(), ds = _Buffer(), ts = _Buffer(), bs = _Buffer()
    a.acquire_span(A, "A", "int8", _INT8, _extent(nb if reads_ab else 0, stride_a, K if _is_t(ta) else M,
                                                  M if _is_t(ta) else K, lda, "A"), False)
    if packed is None:
        b.acquire_span(B, "B", "int8", _INT8, _extent(nb if reads_ab else 0, stride_b, N if _is_t(tb) else K,
                                                      K if _is_t(tb) else N, ldb, "B"), False)
    else:
        packed_bytes = gemmkit_s8s8_packed_weight_size(N, K) if reads_ab else 0
        b.acquire_span(packed, "packed_weight", "uint8", _UINT8, packed_bytes, False)
    ds.acquire_span(deq_scale, "deq_scale", "float32", _FLOAT32, N if work else 0, False)
    ts.acquire_span(token_scale, "token_scale", "float32", _FLOAT32,
                    _extent(nb, stride_token_scale, 1, M, 1, "token_scale"), False)
    if bias is not None:
        bs.acquire_span(bias, "bias", "float32", _FLOAT32, N if work else 0, False)
    c.acquire_span(C, "C", out_type + (" (or uint16 bits)" if out_type != "float32" else ""), c_formats,
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
    raise_status(st, "gemm_s8s8_per_token")
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
    cdef _Buffer a = _Buffer(), ds = _Buffer(), ts = _Buffer(), bs = _Buffer(), c = _Buffer()
    a.acquire_span(acc, "acc", "int32", _INT32, _extent(1, 0, M, N, lda, "acc"), False)
    ds.acquire_span(deq_scale, "deq_scale", "float32", _FLOAT32, N, False)
    ts.acquire_span(token_scale, "token_scale", "float32", _FLOAT32, M, False)
    if bias is not None:
        bs.acquire_span(bias, "bias", "float32", _FLOAT32, N, False)
    c.acquire_span(C, "C", out_type, c_formats, _extent(1, 0, M, N, ldc, "C"), True)
    cdef int st
    cdef int ot = code
    with nogil:
        st = gemmkit_per_token_scale_int32(ot, M, N, <const int32_t *>a.ptr, lda, <const float *>ds.ptr,
                                           <const float *>ts.ptr, <const float *>(bs.ptr if bias is not None else NULL),
                                           c.ptr, ldc)
    raise_status(st, "per_token_scale_int32")
    return C


def s8s8_reads_weight_in_place(transb, int64_t M, int64_t K):
    """True when the int8 kernel path in use reads op(B) in place (no packing) for M rows and depth K, and
    that is faster than op(B)'s packed form: pass the weight itself then."""
    return gemmkit_s8s8_reads_weight_in_place(_trans_flag(transb, "transb"), M, K) != 0


def s8s8_pack_weight(transb, int64_t N, int64_t K, B, int64_t ldb):
    """op(B) (K x N int8, row-major with ldb; transb 'T': B is N x K) packed for the int8 kernel path in
    use, as a new uint8 array for gemm_s8s8_per_token_packed (s8s8_packed_weight_arch names its path);
    None when K is beyond what is packed (or N or K is 0): pass the weight itself then."""
    cdef char tb = _trans_flag(transb, "transb")
    if N < 0 or K < 0:
        raise ValueError(f"N and K must be >= 0, got N={N}, K={K}")
    cdef int64_t need = max(1, K if _is_t(tb) else N)
    if ldb < need:
        raise ValueError(f"ldb={ldb} must be >= {need}")
    cdef _Buffer b = _Buffer(), d
    cdef int64_t nbytes
    cdef int st = 2, attempt
    b.acquire_span(B, "B", "int8", _INT8, _extent(1, 0, N if _is_t(tb) else K, K if _is_t(tb) else N, ldb, "B"),
              False)
    # The size and the packing each read the kernel path in use; another thread's set_arch in between can
    # make the array too small for the path packed under (the arguments are checked above, so that is the
    # only refusal left): size and pack again, as the per-token product reads the weight again.
    for attempt in range(_PACK_ATTEMPTS):
        nbytes = gemmkit_s8s8_packed_weight_size(N, K)
        if nbytes == 0:
            return None
        packed = np.empty(nbytes, np.uint8)
        d = _Buffer()
        d.acquire_span(packed, "packed", "uint8", _UINT8, nbytes, True)
        with nogil:
            st = gemmkit_s8s8_pack_weight(tb, N, K, <const int8_t *>b.ptr, ldb, d.ptr, nbytes)
        if st != 2:
            break
    raise_status(st, "s8s8_pack_weight")
    return packed


def s8s8_packed_weight_arch(packed):
    """The kernel path a s8s8_pack_weight array was packed for (the one it is valid on), or None for
    anything else."""
    cdef _Buffer d = _Buffer()
    d.acquire_span(packed, "packed", "uint8", _UINT8, 0, False)
    cdef const char *name = gemmkit_s8s8_packed_weight_arch(d.ptr, d.view.len)
    return None if name == NULL else name.decode()


def gemm_s8s8_per_token_packed(transa, out_type, int64_t batch, int64_t M, int64_t N, int64_t K, A, int64_t lda,
                               int64_t stride_a, packed_weight, deq_scale, token_scale, int64_t stride_token_scale,
                               bias, C, int64_t ldc, int64_t stride_c):
    """gemm_s8s8_per_token with layout_c 'R' and a weight from s8s8_pack_weight (same N, K and kernel path,
    else ValueError) shared by the batch. Returns C."""
    return _per_token(transa, "N", "R", out_type, batch, M, N, K, A, lda, stride_a, None, max(1, N), 0,
                      packed_weight, deq_scale, token_scale, stride_token_scale, bias, C, ldc, stride_c)


# The per-token calls of the fast paths (gemmkit/_fastpaths.pyx), as gemmkit.h declares them.
cdef int per_token_nogil(char transa, char transb, char layout_c, int out_type, int64_t batch, int64_t M, int64_t N,
                         int64_t K, const int8_t *A, int64_t lda, int64_t stride_a, const int8_t *B, int64_t ldb,
                         int64_t stride_b, const float *deq_scale, const float *token_scale,
                         int64_t stride_token_scale, const float *bias, void *C, int64_t ldc,
                         int64_t stride_c) noexcept nogil:
    return gemmkit_gemm_s8s8_per_token(transa, transb, layout_c, out_type, batch, M, N, K, A, lda, stride_a, B, ldb,
                                       stride_b, deq_scale, token_scale, stride_token_scale, bias, C, ldc, stride_c)


cdef int per_token_packed_nogil(char transa, int out_type, int64_t batch, int64_t M, int64_t N, int64_t K,
                                const int8_t *A, int64_t lda, int64_t stride_a, const void *packed_weight,
                                int64_t packed_bytes, const float *deq_scale, const float *token_scale,
                                int64_t stride_token_scale, const float *bias, void *C, int64_t ldc,
                                int64_t stride_c) noexcept nogil:
    return gemmkit_gemm_s8s8_per_token_packed(transa, out_type, batch, M, N, K, A, lda, stride_a, packed_weight,
                                              packed_bytes, deq_scale, token_scale, stride_token_scale, bias, C, ldc,
                                              stride_c)


cdef int64_t packed_weight_size_nogil(int64_t N, int64_t K) noexcept nogil:
    return gemmkit_s8s8_packed_weight_size(N, K)


cdef int reads_weight_in_place_nogil(char transb, int64_t M, int64_t K) noexcept nogil:
    return gemmkit_s8s8_reads_weight_in_place(transb, M, K)


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


def parse_num_threads(text):
    """The thread count GEMMKIT_NUM_THREADS's text `text` (a str) gives, as the core reads it: a whole number
    from 1 to the pool's maximum, blanks around it allowed; 0 when it is no such number (then the default)."""
    if not isinstance(text, str):
        raise TypeError(f"text must be a str, got {type(text).__name__}")
    cdef bytes raw = text.encode("utf-8", "replace")
    if b"\0" in raw:
        return 0
    return gemmkit_parse_num_threads(raw)


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
    """Force a kernel path ('generic', 'avx2', 'avx_vnni', 'avx512', 'avx512_vnni', 'avx512_amx', 'neon', 'dotprod', 'i8mm');
    None = best."""
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
    for op in ("sgemm", "dgemm", "cgemm", "zgemm", "int8", "bf16"):
        if gemmkit_kernel_info(op.encode(), &k) != 0:
            raise RuntimeError(f"gemmkit_kernel_info({op!r}) failed")
        out["uarch"] = k.uarch.decode()
        if op == "int8":
            out[op] = {"kernel": k.kernel.decode(), "MR": k.mr, "NR": k.nr, "k_group": k.k_group,
                       "packed_bytes": k.elem, "MC": k.mc, "K_chunk": k.kc, "NC": k.nc, "KB": k.kb}
        elif op == "bf16":  # a pair kernel (k_group 2: KC in pairs), else the sgemm kernel bfloat16 is widened for
            out[op] = {"kernel": k.kernel.decode(), "MR": k.mr, "NR": k.nr, "k_group": k.k_group, "MC": k.mc,
                       "KC": k.kc, "NC": k.nc}
        else:
            out[op] = {"kernel": k.kernel.decode(), "MR": k.mr, "NR": k.nr, "MC": k.mc, "KC": k.kc, "NC": k.nc}
    # a K just past one of the int8 kernel's groups (to 1.5 groups) runs on this one (None: the int8 kernel)
    out["int8"]["short_k_kernel"] = (k.kernel.decode() if gemmkit_kernel_info(b"int8_short_k", &k) == 0 else None)
    cdef int max_m = 0, max_n = 0, pf = 0
    gemmkit_gemv_info(&max_m, &max_n, &pf)
    out["gemv"] = {"max_M": max_m, "max_N": max_n, "prefetch_bytes": pf}
    return out


# ---- quantized elementwise add (csrc/qadd.c; the NumPy front end is gemmkit/_quantized_add.py) ----

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
    q8 = (cnp.NPY_UINT8, cnp.NPY_INT8)
    cdef _Buffer va = _Buffer(), vb = _Buffer(), vo = _Buffer()
    va.acquire_strided(a, "a", q8, shape, False)
    vb.acquire_strided(b, "b", q8, shape, False)
    vo.acquire_strided(out, "out", q8, shape, True)
    cdef gemmkit_qtensor_t t[3]
    cdef float scale_value[3]
    cdef int8_t zp_value[3]
    cdef tuple views = (va, vb, vo)
    cdef list held = []   # the parameter views, alive until the call returns
    names = ("a", "b", "out")
    scales = (a_scale, b_scale, out_scale)
    zps = (a_zero_point, b_zero_point, out_zero_point)
    cdef int i
    cdef _Buffer v
    cdef int tnum
    for i in range(3):
        v = views[i]
        tnum = _format_num(v.view.format, 1)
        t[i].data = v.view.buf
        t[i].type = GEMMKIT_QTYPE_S8 if tnum == cnp.NPY_INT8 else GEMMKIT_QTYPE_U8
        t[i].strides = v.steps
        if isinstance(scales[i], float):
            scale_value[i] = <float>scales[i]
            t[i].scale = &scale_value[i]
            t[i].scale_strides = NULL
        else:
            v = _Buffer()
            v.acquire_strided(scales[i], names[i] + "_scale", _FLOAT32, shape, False)
            held.append(v)
            t[i].scale = <const float *>v.view.buf
            t[i].scale_strides = v.steps
        zp = zps[i]
        t[i].zero_point_strides = NULL
        if zp is None:
            t[i].zero_point = NULL
        elif isinstance(zp, int):
            if not ((-128 if tnum == cnp.NPY_INT8 else 0) <= zp <= (127 if tnum == cnp.NPY_INT8 else 255)):
                raise ValueError(f"{names[i]}_zero_point={zp} is out of range for {DTYPE_NAMES[tnum]}")
            zp_value[i] = <int8_t>(zp if zp < 128 else zp - 256)
            t[i].zero_point = &zp_value[i]
        else:
            v = _Buffer()
            v.acquire_strided(zp, names[i] + "_zero_point", (tnum,), shape, False)
            held.append(v)
            t[i].zero_point = v.view.buf
            t[i].zero_point_strides = v.steps
    cdef gemmkit_qadd_formula_t f = _QADD_FORMULAS[formula]
    cdef int st
    with nogil:
        st = gemmkit_quantized_add(f, ndim, c_shape, &t[0], &t[1], &t[2])
    if st == 2:
        raise ValueError("quantized_add: invalid arguments (a scale that is 0, NaN or Inf, or strided scales or "
                         "zero points with formula='onnxruntime')")
    raise_status(st, "quantized_add")
    return out


cdef int quantized_add_nogil(gemmkit_qadd_formula_t formula, int ndim, const int64_t *shape,
                             const gemmkit_qtensor_t *a, const gemmkit_qtensor_t *b,
                             const gemmkit_qtensor_t *out) noexcept nogil:
    """gemmkit_quantized_add, for the fast paths (gemmkit/_fastpaths.pyx)."""
    return gemmkit_quantized_add(formula, ndim, shape, a, b, out)


# ---- per-token activation quantization (gemmkit.quant.quantize_per_token, Int8Linear) ----------------

# in_type name -> (its GEMMKIT_OUT_* code, the dtypes x may have, their item size)
_QUANT_IN = {"float32": (GEMMKIT_OUT_FLOAT32, _FLOAT32, 4),
             "float16": (GEMMKIT_OUT_FLOAT16, (cnp.NPY_FLOAT16, cnp.NPY_UINT16), 2),
             "bfloat16": (GEMMKIT_OUT_BFLOAT16, (cnp.NPY_UINT16,), 2)}
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
    cdef _Buffer a = _Buffer(), s = _Buffer(), o = _Buffer(), sc = _Buffer()
    a.acquire_span(x, "x", in_type + (" (or uint16 bits)" if isz == 2 else ""), formats,
                   _extent(1, 0, mm, K, ldx, "x"), False)
    if smooth is not None:
        s.acquire_span(smooth, "smooth", "float32", _FLOAT32, K if mm else 0, False)
    o.acquire_span(q, "q", "int8", _INT8, _extent(1, 0, mm, K, ldq, "q"), True)
    sc.acquire_span(scale, "scale", "float32", _FLOAT32, M, True)
    cdef int st, ic = code, mode = _SMOOTH_MODES[smooth_mode]
    cdef const float *sp = <const float *>s.ptr if smooth is not None else NULL
    if M * K >= 32768:
        with nogil:
            st = gemmkit_quantize_per_token(ic, M, K, a.ptr, ldx, sp, mode, <int8_t *>o.ptr, ldq, <float *>sc.ptr)
    else:
        st = gemmkit_quantize_per_token(ic, M, K, a.ptr, ldx, sp, mode, <int8_t *>o.ptr, ldq, <float *>sc.ptr)
    raise_status(st, "quantize_per_token")
    return q


cdef int quantize_per_token_nogil(int in_type, int64_t M, int64_t K, const void *x, int64_t ldx, const float *smooth,
                                  int smooth_mode, int8_t *q, int64_t ldq, float *scale) noexcept nogil:
    """gemmkit_quantize_per_token, for the fast paths (gemmkit/_fastpaths.pyx)."""
    return gemmkit_quantize_per_token(in_type, M, K, x, ldx, smooth, smooth_mode, q, ldq, scale)


# ---- cache hierarchy, analytical blocking model, tuning overrides (csrc/cache_info.c,
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


def model_small_limits(caches, int table_row_panels, double table_walk):
    """The model's small-problem limits on a cache hierarchy: (small.direct_b_max_macs, small.direct_max_row_panels
    for a path table of `table_row_panels`, small.ta_strips_min_walk for a table of `table_walk` bytes), each None where
    the cache it needs (L1, L2) is unknown. Pure."""
    cdef gemmkit_cache_level_t lv[3]
    cdef double out[3]
    _levels_from(caches, lv)
    if gemmkit_model_small_limits(lv, table_row_panels, table_walk, out) != 0:
        raise ValueError(f"model_small_limits: table_row_panels={table_row_panels} (1 .. 8) or "
                         f"table_walk={table_walk} (> 0) is out of range")
    return (out[0] or None, int(out[1]) or None, out[2] or None)


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
