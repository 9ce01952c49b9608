# gemmkit._core for Cython: the C API of gemmkit (csrc/include/gemmkit.h), which only _core.pyx calls (it alone
# links csrc/), and at the end the `cdef ... nogil` calls _core exports: the fast paths (_fastpaths.pyx) reach C
# through them alone (`from gemmkit._core cimport gemm_nogil`), so one thread pool and one dispatch state exist.
from libc.stdint cimport int64_t, int32_t, uint8_t, int8_t, uint16_t, uint32_t, uint64_t
cimport numpy as cnp

cdef extern from "include/gemmkit.h" nogil:
    ctypedef int gemmkit_status_t
    ctypedef struct gemmkit_complex64_t:
        float re
        float im
    ctypedef struct gemmkit_complex128_t:
        double re
        double im
    gemmkit_status_t gemmkit_sgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
            float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
            float *C, int64_t ldc)
    gemmkit_status_t gemmkit_dgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
            double alpha, const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
            double *C, int64_t ldc)
    gemmkit_status_t gemmkit_cgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
            gemmkit_complex64_t alpha, const gemmkit_complex64_t *A, int64_t lda,
            const gemmkit_complex64_t *B, int64_t ldb, gemmkit_complex64_t beta, gemmkit_complex64_t *C,
            int64_t ldc)
    gemmkit_status_t gemmkit_zgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
            gemmkit_complex128_t alpha, const gemmkit_complex128_t *A, int64_t lda,
            const gemmkit_complex128_t *B, int64_t ldb, gemmkit_complex128_t beta, gemmkit_complex128_t *C,
            int64_t ldc)
    ctypedef uint16_t gemmkit_float16_t
    ctypedef uint16_t gemmkit_bfloat16_t
    gemmkit_status_t gemmkit_hgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
            float alpha, const gemmkit_float16_t *A, int64_t lda, const gemmkit_float16_t *B, int64_t ldb,
            float beta, gemmkit_float16_t *C, int64_t ldc)
    gemmkit_status_t gemmkit_bf16gemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
            float alpha, const gemmkit_bfloat16_t *A, int64_t lda, const gemmkit_bfloat16_t *B, int64_t ldb,
            float beta, gemmkit_bfloat16_t *C, int64_t ldc)
    gemmkit_status_t gemmkit_gemm_bf16bf16f32(char transa, char transb, int64_t M, int64_t N, int64_t K,
            float alpha, const gemmkit_bfloat16_t *A, int64_t lda, const gemmkit_bfloat16_t *B, int64_t ldb,
            float beta, float *C, int64_t ldc)
    gemmkit_status_t gemmkit_gemm_i32(char transa, char transb, int64_t M, int64_t N, int64_t K,
            double alpha, const int32_t *A, int64_t lda, const int32_t *B, int64_t ldb, double beta,
            int32_t *C, int64_t ldc)
    gemmkit_status_t gemmkit_gemm_i64(char transa, char transb, int64_t M, int64_t N, int64_t K,
            double alpha, const int64_t *A, int64_t lda, const int64_t *B, int64_t ldb, double beta,
            int64_t *C, int64_t ldc)
    gemmkit_status_t gemmkit_gemm_u32(char transa, char transb, int64_t M, int64_t N, int64_t K,
            double alpha, const uint32_t *A, int64_t lda, const uint32_t *B, int64_t ldb, double beta,
            uint32_t *C, int64_t ldc)
    gemmkit_status_t gemmkit_gemm_u64(char transa, char transb, int64_t M, int64_t N, int64_t K,
            double alpha, const uint64_t *A, int64_t lda, const uint64_t *B, int64_t ldb, double beta,
            uint64_t *C, int64_t ldc)
    enum:
        GEMMKIT_INT_BOOL, GEMMKIT_INT_S8, GEMMKIT_INT_U8, GEMMKIT_INT_S16, GEMMKIT_INT_U16, GEMMKIT_INT_S32
        GEMMKIT_INT_U32, GEMMKIT_INT_S64, GEMMKIT_INT_U64
    gemmkit_status_t gemmkit_gemm_int_batch(int type, char transa, char transb, int64_t M, int64_t N, int64_t K,
            int64_t alpha, const void *A, int64_t lda, int64_t stride_a, const void *B, int64_t ldb,
            int64_t stride_b, int64_t beta, void *C, int64_t ldc, int64_t stride_c, int64_t batch)
    gemmkit_status_t gemmkit_sgemm_batch(char transa, char transb, int64_t M, int64_t N, int64_t K,
            float alpha, const float *A, int64_t lda, int64_t stride_a, const float *B, int64_t ldb,
            int64_t stride_b, float beta, float *C, int64_t ldc, int64_t stride_c, int64_t batch)
    gemmkit_status_t gemmkit_dgemm_batch(char transa, char transb, int64_t M, int64_t N, int64_t K,
            double alpha, const double *A, int64_t lda, int64_t stride_a, const double *B, int64_t ldb,
            int64_t stride_b, double beta, double *C, int64_t ldc, int64_t stride_c, int64_t batch)
    gemmkit_status_t gemmkit_cgemm_batch(char transa, char transb, int64_t M, int64_t N, int64_t K,
            gemmkit_complex64_t alpha, const gemmkit_complex64_t *A, int64_t lda, int64_t stride_a,
            const gemmkit_complex64_t *B, int64_t ldb, int64_t stride_b, gemmkit_complex64_t beta,
            gemmkit_complex64_t *C, int64_t ldc, int64_t stride_c, int64_t batch)
    gemmkit_status_t gemmkit_zgemm_batch(char transa, char transb, int64_t M, int64_t N, int64_t K,
            gemmkit_complex128_t alpha, const gemmkit_complex128_t *A, int64_t lda, int64_t stride_a,
            const gemmkit_complex128_t *B, int64_t ldb, int64_t stride_b, gemmkit_complex128_t beta,
            gemmkit_complex128_t *C, int64_t ldc, int64_t stride_c, int64_t batch)
    gemmkit_status_t gemmkit_hgemm_batch(char transa, char transb, int64_t M, int64_t N, int64_t K,
            float alpha, const gemmkit_float16_t *A, int64_t lda, int64_t stride_a, const gemmkit_float16_t *B,
            int64_t ldb, int64_t stride_b, float beta, gemmkit_float16_t *C, int64_t ldc, int64_t stride_c,
            int64_t batch)
    gemmkit_status_t gemmkit_bf16gemm_batch(char transa, char transb, int64_t M, int64_t N, int64_t K,
            float alpha, const gemmkit_bfloat16_t *A, int64_t lda, int64_t stride_a, const gemmkit_bfloat16_t *B,
            int64_t ldb, int64_t stride_b, float beta, gemmkit_bfloat16_t *C, int64_t ldc, int64_t stride_c,
            int64_t batch)
    gemmkit_status_t gemmkit_gemm_bf16bf16f32_batch(char transa, char transb, int64_t M, int64_t N, int64_t K,
            float alpha, const gemmkit_bfloat16_t *A, int64_t lda, int64_t stride_a, const gemmkit_bfloat16_t *B,
            int64_t ldb, int64_t stride_b, float beta, float *C, int64_t ldc, int64_t stride_c, int64_t batch)
    gemmkit_status_t gemmkit_gemm_u8s8s32(char transa, char transb, char offsetc, int64_t M,
            int64_t N, int64_t K, float alpha, const uint8_t *A, int64_t lda, uint8_t ao,
            const int8_t *B, int64_t ldb, int8_t bo, float beta, int32_t *C, int64_t ldc,
            const int32_t *co)
    gemmkit_status_t gemmkit_gemm_s8s8s32(char transa, char transb, char offsetc, int64_t M,
            int64_t N, int64_t K, float alpha, const int8_t *A, int64_t lda, int8_t ao,
            const int8_t *B, int64_t ldb, int8_t bo, float beta, int32_t *C, int64_t ldc,
            const int32_t *co)
    # ---- per-token quantized int8 product (gemmkit.quant.matmul_per_token) ----
    enum:
        GEMMKIT_OUT_FLOAT32
        GEMMKIT_OUT_FLOAT16
        GEMMKIT_OUT_BFLOAT16
    gemmkit_status_t gemmkit_gemm_s8s8_per_token(char transa, char transb, char layout_c, int out_type,
            int64_t batch, int64_t M, int64_t N, int64_t K, const int8_t *A, int64_t lda, int64_t stride_a,
            const int8_t *B, int64_t ldb, int64_t stride_b, const float *deq_scale, const float *token_scale,
            int64_t stride_token_scale, const float *bias, void *C, int64_t ldc, int64_t stride_c)
    int64_t gemmkit_s8s8_packed_weight_size(int64_t N, int64_t K)
    const char *gemmkit_s8s8_packed_weight_arch(const void *packed, int64_t packed_bytes)
    int gemmkit_s8s8_reads_weight_in_place(char transb, int64_t M, int64_t K)
    gemmkit_status_t gemmkit_s8s8_pack_weight(char transb, int64_t N, int64_t K, const int8_t *B, int64_t ldb,
            void *packed, int64_t packed_bytes)
    gemmkit_status_t gemmkit_gemm_s8s8_per_token_packed(char transa, int out_type, int64_t batch, int64_t M,
            int64_t N, int64_t K, const int8_t *A, int64_t lda, int64_t stride_a, const void *packed_weight,
            int64_t packed_bytes, const float *deq_scale, const float *token_scale, int64_t stride_token_scale,
            const float *bias, void *C, int64_t ldc, int64_t stride_c)
    gemmkit_status_t gemmkit_per_token_scale_int32(int out_type, int64_t M, int64_t N, const int32_t *acc,
            int64_t ld_acc, const float *deq_scale, const float *token_scale, const float *bias, void *C,
            int64_t ldc)
    # ---- per-token activation quantization (gemmkit.quant.quantize_per_token, Int8Linear) ----
    gemmkit_status_t gemmkit_quantize_per_token(int in_type, int64_t M, int64_t K, const void *x, int64_t ldx,
            const float *smooth, int smooth_mode, int8_t *q, int64_t ldq, float *scale)
    int gemmkit_get_num_threads()
    void gemmkit_set_num_threads(int n)
    void gemmkit_set_thread_limit(int n)
    int gemmkit_get_thread_limit()
    gemmkit_status_t gemmkit_set_arch(const char *name)
    const char *gemmkit_get_arch()
    uint32_t gemmkit_cpu_features()
    int gemmkit_arch_count()
    const char *gemmkit_arch_name(int i)
    int gemmkit_arch_supported(const char *name)

# ---- quantized elementwise add (csrc/qadd.c) ----
cdef extern from "include/gemmkit.h" nogil:
    ctypedef int gemmkit_qtype_t
    ctypedef int gemmkit_qadd_formula_t
    int GEMMKIT_QTYPE_U8, GEMMKIT_QTYPE_S8, GEMMKIT_QADD_DIRECTML, GEMMKIT_QADD_ONNXRUNTIME
    int GEMMKIT_QADD_MAX_DIMS
    ctypedef struct gemmkit_qtensor_t:
        const void *data
        gemmkit_qtype_t type
        const int64_t *strides
        const float *scale
        const int64_t *scale_strides
        const void *zero_point
        const int64_t *zero_point_strides
    gemmkit_status_t gemmkit_quantized_add(gemmkit_qadd_formula_t formula, int ndim, const int64_t *shape,
            const gemmkit_qtensor_t *a, const gemmkit_qtensor_t *b, const gemmkit_qtensor_t *out)

# ---- introspection and tuning (include/gemmkit_introspect.h): configurations, kernels, caches, the blocking
# model, tuning overrides ----
cdef extern from "include/gemmkit_introspect.h" nogil:
    ctypedef struct gemmkit_kernel_info_t:
        const char *kernel
        const char *uarch
        int mr, nr, k_group, elem
        int64_t mc, kc, nc, kb
    gemmkit_status_t gemmkit_kernel_info(const char *op, gemmkit_kernel_info_t *info)
    const char *gemmkit_quantize_kernel_name()
    int gemmkit_parse_num_threads(const char *text)
    const char *gemmkit_cpu_feature_name(int i, uint32_t *bit)
    int gemmkit_config_count()
    gemmkit_status_t gemmkit_config_at(int i, const char **arch, const char **uarch, uint32_t *needs)
    gemmkit_status_t gemmkit_config_describe(int i, char *buf, size_t size)
    gemmkit_status_t gemmkit_config_for_cpu(uint32_t vendor, uint32_t family, uint32_t model, uint32_t features,
                                            const char *uarch, const char **arch, const char **uarch_out)
    void gemmkit_cpu_identity(uint32_t *vendor, uint32_t *family, uint32_t *model)
    void gemmkit_gemv_info(int *max_m, int *max_n, int *prefetch_bytes)
    ctypedef struct gemmkit_cache_level_t:
        int64_t size, ways, line, sharing
    gemmkit_status_t gemmkit_cache_hierarchy(gemmkit_cache_level_t *levels, const char **source)
    gemmkit_status_t gemmkit_model_real_blocks(const gemmkit_cache_level_t *levels, int mr, int nr, int elem,
                                               int complex_native, int64_t fallback_nc, int64_t *out)
    gemmkit_status_t gemmkit_model_int8_blocks(const gemmkit_cache_level_t *levels, int mr, int nr, int elem,
                                               int64_t *out)
    gemmkit_status_t gemmkit_model_small_limits(const gemmkit_cache_level_t *levels, int table_row_panels,
                                                double table_walk, double *out)
    gemmkit_status_t gemmkit_tuning_set(const char *arch, const char *name, double value)
    void gemmkit_tuning_clear()
    int gemmkit_blocking_model(int mode)
    int gemmkit_param_count()
    const char *gemmkit_param_name(int i)
    gemmkit_status_t gemmkit_param_get(const char *name, double *value, int *source)


# ---- what _core.pyx exports to the fast paths (_fastpaths.pyx): its calls into C, the GIL not needed --------
# The GEMMs' one call: C[i] := alpha op(A[i]) op(B[i]) + beta C[i], by the operands' and C's NumPy type numbers
# (bfloat16: its run-time number, see is_bfloat16); returns the gemmkit_status_t.
cdef int gemm_nogil(int ab_num, int c_num, char ta, char tb, int64_t M, int64_t N, int64_t K, double complex al,
                    const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb,
                    double complex be, void *C, int64_t ldc, int64_t sc, int64_t batch) noexcept nogil
# The integer and bool GEMMs' one call (NumPy's modular arithmetic, gemmkit_gemm_int_batch): int_type from
# int_type_of, alpha and beta the 64 bits that act modulo 2^bits; returns the gemmkit_status_t.
cdef int gemm_int_nogil(int int_type, char ta, char tb, int64_t M, int64_t N, int64_t K, int64_t alpha,
                        const void *A, int64_t lda, int64_t sa, const void *B, int64_t ldb, int64_t sb, int64_t beta,
                        void *C, int64_t ldc, int64_t sc, int64_t batch) noexcept nogil
# gemm_int_nogil's int_type for a NumPy type number (bool and the integer types), -1 for none.
cdef int int_type_of(int typenum) noexcept nogil
# A status as the Python exception the entries raise (MemoryError, ValueError, NotImplementedError).
cdef int raise_status(int st, str fn) except -1
# Whether x (NumPy type number typenum) holds ml_dtypes.bfloat16; records bfloat16's number for gemm_nogil.
cdef bint is_bfloat16(cnp.ndarray x, int typenum)
cdef int quantized_add_nogil(gemmkit_qadd_formula_t formula, int ndim, const int64_t *shape,
                             const gemmkit_qtensor_t *a, const gemmkit_qtensor_t *b,
                             const gemmkit_qtensor_t *out) noexcept nogil
cdef int quantize_per_token_nogil(int in_type, int64_t M, int64_t K, const void *x, int64_t ldx, const float *smooth,
                                  int smooth_mode, int8_t *q, int64_t ldq, float *scale) noexcept nogil
cdef int per_token_nogil(char transa, char transb, char layout_c, int out_type, int64_t batch, int64_t M, int64_t N,
                         int64_t K, const int8_t *A, int64_t lda, int64_t stride_a, const int8_t *B, int64_t ldb,
                         int64_t stride_b, const float *deq_scale, const float *token_scale,
                         int64_t stride_token_scale, const float *bias, void *C, int64_t ldc,
                         int64_t stride_c) noexcept nogil
cdef int per_token_packed_nogil(char transa, int out_type, int64_t batch, int64_t M, int64_t N, int64_t K,
                                const int8_t *A, int64_t lda, int64_t stride_a, const void *packed_weight,
                                int64_t packed_bytes, const float *deq_scale, const float *token_scale,
                                int64_t stride_token_scale, const float *bias, void *C, int64_t ldc,
                                int64_t stride_c) noexcept nogil
cdef int64_t packed_weight_size_nogil(int64_t N, int64_t K) noexcept nogil
cdef int reads_weight_in_place_nogil(char transb, int64_t M, int64_t K) noexcept nogil
