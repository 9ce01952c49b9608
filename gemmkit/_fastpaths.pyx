# cython: language_level=3
"""The front ends' fast paths (gemmkit.blas, gemmkit.matmul, gemmkit.onnx.gemm, quantized add, Int8Linear):
each takes its front end's common call straight to the C core, or returns None for the general path.

This module reaches C only through `cimport gemmkit._core` (its `cdef ... nogil` calls, gemmkit/_core.pxd):
it links no C source of its own, so one thread pool and one dispatch state exist, those of gemmkit._core.
It knows the front ends' rules (SciPy's, NumPy's matmul, ONNX's C broadcast) but never calls a front end."""

from libc.stdint cimport int64_t, int8_t
from libc.math cimport isinf
from libc.string cimport memcpy
from libc.stdlib cimport malloc, free
from cpython.float cimport PyFloat_AS_DOUBLE
from cpython.long cimport PyLong_AsDouble

import numpy as np
cimport numpy as cnp

from gemmkit._core cimport (gemm_nogil, gemm_int_nogil, int_type_of, raise_status, is_bfloat16,
                            quantized_add_nogil, quantize_per_token_nogil, per_token_nogil, per_token_packed_nogil,
                            reads_weight_in_place_nogil, gemmkit_qtensor_t, gemmkit_qadd_formula_t,
                            GEMMKIT_QADD_DIRECTML, GEMMKIT_QADD_ONNXRUNTIME, GEMMKIT_QADD_MAX_DIMS,
                            GEMMKIT_QTYPE_S8, GEMMKIT_QTYPE_U8, GEMMKIT_OUT_FLOAT32, GEMMKIT_OUT_FLOAT16,
                            GEMMKIT_OUT_BFLOAT16)

cnp.import_array()


# ---- operands read in place (every GEMM fast path) --------------------------------------------------

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


# ---- gemmkit.blas (scipy.linalg.blas.<s|d|c|z>gemm) ------------------------------------------------

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
    if <double>m * <double>n * <double>k > 32768.0:  # release the GIL past ~32^3 (a tiny call keeps it)
        with nogil:
            st = gemm_nogil(typenum, typenum, flb, fla, n, m, k, al, pb, ldb, 0, pa, lda, 0, be, pc, ldc, 0, 1)
    else:
        st = gemm_nogil(typenum, typenum, flb, fla, n, m, k, al, pb, ldb, 0, pa, lda, 0, be, pc, ldc, 0, 1)
    if st != 0:
        raise_status(st, "gemm")
    return C


# ---- gemmkit.matmul: 1-D / 2-D operands, and two 3-D stacks ----------------------------------------

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
    cdef int st
    with nogil:
        st = gemm_nogil(typenum, typenum, b'N', b'N', m, n, k, 1.0, pa, lda, sa, pb, ldb, sb, 0.0, pc, ldc, sc, batch)
    if st != 0:
        raise_status(st, "matmul")
    return C


cpdef object matmul_fast(a, b, out):
    """gemmkit.matmul for the common cases: two 3-D stacks (_stack_matmul_fast), or NumPy arrays a and b of
    one dtype (float32, float64, complex64, complex128, float16, bfloat16 giving float32, or an integer type or bool
    in NumPy's modular arithmetic), each 1-D or 2-D (not both 1-D), read in place (a unit-stride axis), non-empty,
    and out None or a writable array of the
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
    cdef int int_type = int_type_of(typenum)  # NumPy's modular integer and bool products (-1: none)
    if (cnp.PyArray_TYPE(B) != typenum or not (typenum == cnp.NPY_FLOAT32 or typenum == cnp.NPY_FLOAT64
            or typenum == cnp.NPY_COMPLEX64 or typenum == cnp.NPY_COMPLEX128 or typenum == cnp.NPY_FLOAT16
            or int_type >= 0 or is_bfloat16(A, typenum))
            or nda < 1 or nda > 2 or ndb < 1 or ndb > 2 or (nda == 1 and ndb == 1)
            or not cnp.PyArray_ISNOTSWAPPED(A) or not cnp.PyArray_ISNOTSWAPPED(B)
            or not cnp.PyArray_ISALIGNED(A) or not cnp.PyArray_ISALIGNED(B)):
        return None
    cdef bint bf16 = typenum >= 256  # a user type (NPY_USERDEF up): the only one taken is ml_dtypes.bfloat16
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
    cdef int st
    if fc:  # C stored transposed: C^T = op(B)^T op(A)^T
        ta, tb = (b'N' if fb else b'T'), (b'N' if fa else b'T')
        pa, pb = pb, pa
        lda, ldb = ldb, lda
        m, n = n, m
    with nogil:
        if int_type >= 0:
            st = gemm_int_nogil(int_type, ta, tb, m, n, k, 1, pa, lda, 0, pb, ldb, 0, 0, pc, ldc, 0, 1)
        else:
            st = gemm_nogil(typenum, c_typenum, ta, tb, m, n, k, 1.0, pa, lda, 0, pb, ldb, 0, 0.0, pc, ldc, 0, 1)
    if st != 0:
        raise_status(st, "matmul")
    return C

# ---- gemmkit.onnx.gemm --------------------------------------------------------------------------------

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
            or typenum == cnp.NPY_UINT32 or typenum == cnp.NPY_UINT64 or (opset >= 13 and is_bfloat16(a, typenum)))
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
        st = gemm_nogil(typenum, typenum, fla, flb, m, n, k, al, pa, lda, 0, pb, ldb, 0, be, py, n, 0, 1)
    if st != 0:
        raise_status(st, "gemm")
    return y


# ---- gemmkit.quantized_add: the common call in one step ----------------------------------------

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
            st = quantized_add_nogil(f, ndim, shape, &t[0], &t[1], &t[2])
    else:
        st = quantized_add_nogil(f, ndim, shape, &t[0], &t[1], &t[2])
    return C if st == 0 else None

# ---- gemmkit.quant: quantize_per_token and Int8Linear in one step ------------------------------

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
    elif is_bfloat16(X, t):
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


cdef bint _plain_out(object a, int typenum, int nd, const cnp.npy_intp *dims):
    """a is an ndarray of typenum, C-contiguous, aligned, native, writeable, of shape dims[0..nd)."""
    if type(a) is not np.ndarray:
        return False
    cdef cnp.ndarray A = a
    if (cnp.PyArray_TYPE(A) != typenum or cnp.PyArray_NDIM(A) != nd or not cnp.PyArray_IS_C_CONTIGUOUS(A)
            or not cnp.PyArray_ISALIGNED(A) or not cnp.PyArray_ISNOTSWAPPED(A) or not cnp.PyArray_ISWRITEABLE(A)):
        return False
    cdef int d
    for d in range(nd):
        if cnp.PyArray_DIMS(A)[d] != dims[d]:
            return False
    return True


cdef bint _apart(cnp.ndarray a, cnp.ndarray b):
    """The bytes of two non-empty C-contiguous arrays do not overlap."""
    cdef Py_ssize_t na = cnp.PyArray_NBYTES(a), nb = cnp.PyArray_NBYTES(b)
    return _disjoint(<char *>cnp.PyArray_DATA(a), 1, na, na, 1, <char *>cnp.PyArray_DATA(b), 1, nb, nb, 1)


def quantize_fast(x, smooth, int mode, out=None, scale_out=None):
    """quantize_per_token_rows along x's last axis: (q of x's shape, scale of its leading shape), into out /
    scale_out when given, else new arrays, for a C-contiguous float x (see _quant_in_code); None for any other
    x, or an out / scale_out that is not a plain C-contiguous writeable array of the right type and shape
    apart from x and each other (take the general path, which checks and copies). smooth: None or a
    C-contiguous float32 array of K values (the caller checked it)."""
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
    cdef cnp.ndarray Q, S
    if out is None:
        Q = cnp.PyArray_EMPTY(nd, cnp.PyArray_DIMS(X), cnp.NPY_INT8, 0)
    elif _plain_out(out, cnp.NPY_INT8, nd, cnp.PyArray_DIMS(X)) and _apart(out, X):
        Q = out
    else:
        return None
    if scale_out is None:
        S = cnp.PyArray_EMPTY(nd - 1, cnp.PyArray_DIMS(X), cnp.NPY_FLOAT32, 0)
    elif (_plain_out(scale_out, cnp.NPY_FLOAT32, nd - 1, cnp.PyArray_DIMS(X)) and _apart(scale_out, X)
          and _apart(scale_out, Q)):
        S = scale_out
    else:
        return None
    cdef const void *px = cnp.PyArray_DATA(X)
    cdef int8_t *pq = <int8_t *>cnp.PyArray_DATA(Q)
    cdef float *ps = <float *>cnp.PyArray_DATA(S)
    cdef int st
    if M * K >= 32768:
        with nogil:
            st = quantize_per_token_nogil(code, M, K, px, K, sp, mode, pq, K, ps)
    else:
        st = quantize_per_token_nogil(code, M, K, px, K, sp, mode, pq, K, ps)
    raise_status(st, "quantize_per_token")
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
        # its own size, not the path's: the core checks the panels against the path in use when it runs
        pk_bytes = cnp.PyArray_SIZE(P)
        if cnp.PyArray_TYPE(P) != cnp.NPY_UINT8 or not cnp.PyArray_IS_C_CONTIGUOUS(P):
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
        st = quantize_per_token_nogil(code, M, K, px, K, sp, 0, q, K, s)
        if st == 0:
            if pk == NULL or reads_weight_in_place_nogil(b'T', M, K):
                st = per_token_nogil(b'N', b'T', b'R', oc, 1, M, N, K, q, K, 0, pw, K, 0, pws, s, 0, pb, pc, N, 0)
            else:
                st = per_token_packed_nogil(b'N', oc, 1, M, N, K, q, K, 0, pk, pk_bytes, pws, s, 0, pb, pc, N, 0)
                if st == 2:  # refused before writing: another thread switched the path since the caller's check
                    st = per_token_nogil(b'N', b'T', b'R', oc, 1, M, N, K, q, K, 0, pw, K, 0, pws, s, 0, pb, pc, N,
                                         0)
    free(q)
    raise_status(st, "int8_linear")
    return out
