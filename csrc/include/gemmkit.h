/* gemmkit public C API: BLAS-like GEMM entry points mirroring oneDNN's dnnl_sgemm / dnnl_gemm_*s8s32
 * plus d/c/z GEMM; all matrices row-major, status codes equal oneDNN's dnnl_status_t values. */
#ifndef GEMMKIT_H
#define GEMMKIT_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define GEMMKIT_API __declspec(dllexport)
#else
#define GEMMKIT_API __attribute__((visibility("default")))
#endif

typedef enum {
    gemmkit_success = 0,            /* dnnl_success */
    gemmkit_out_of_memory = 1,      /* dnnl_out_of_memory */
    gemmkit_invalid_arguments = 2,  /* dnnl_invalid_arguments */
    gemmkit_unimplemented = 3       /* dnnl_unimplemented */
} gemmkit_status_t;

/* C := alpha * op(A) * op(B) + beta * C, op(X) = X or X^T, row-major. */
GEMMKIT_API gemmkit_status_t gemmkit_sgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
        float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
        int64_t ldc);

/* The same for double. */
GEMMKIT_API gemmkit_status_t gemmkit_dgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
        double alpha, const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
        int64_t ldc);

/* Complex values as C99/C++ lay them out: real part, then imaginary part. */
typedef struct { float re, im; } gemmkit_complex64_t;
typedef struct { double re, im; } gemmkit_complex128_t;

/* Complex GEMM: op(X) = X, X^T or X^H for trans 'N', 'T' or 'C' (either case); leading dimensions and
 * sizes count complex elements. */
GEMMKIT_API gemmkit_status_t gemmkit_cgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
        gemmkit_complex64_t alpha, const gemmkit_complex64_t *A, int64_t lda, const gemmkit_complex64_t *B,
        int64_t ldb, gemmkit_complex64_t beta, gemmkit_complex64_t *C, int64_t ldc);
GEMMKIT_API gemmkit_status_t gemmkit_zgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
        gemmkit_complex128_t alpha, const gemmkit_complex128_t *A, int64_t lda, const gemmkit_complex128_t *B,
        int64_t ldb, gemmkit_complex128_t beta, gemmkit_complex128_t *C, int64_t ldc);

/* float16 (IEEE binary16) and bfloat16 values, given as their bits. */
typedef uint16_t gemmkit_float16_t;
typedef uint16_t gemmkit_bfloat16_t;

/* C := alpha * op(A) * op(B) + beta * C for float16 (hgemm) and bfloat16 (bf16gemm): the operands are
 * widened exactly to float, the product and beta * C computed in float on the sgemm kernels, and the
 * result rounded once to nearest-even (overflow to infinity). */
GEMMKIT_API gemmkit_status_t gemmkit_hgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
        float alpha, const gemmkit_float16_t *A, int64_t lda, const gemmkit_float16_t *B, int64_t ldb,
        float beta, gemmkit_float16_t *C, int64_t ldc);
GEMMKIT_API gemmkit_status_t gemmkit_bf16gemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
        float alpha, const gemmkit_bfloat16_t *A, int64_t lda, const gemmkit_bfloat16_t *B, int64_t ldb,
        float beta, gemmkit_bfloat16_t *C, int64_t ldc);

/* Integer GEMM as ONNX's Gemm computes it (onnx.reference, bit for bit) for int32, int64, uint32 and uint64:
 * P = sum_k op(A)[i][k] * op(B)[k][j] wrapping modulo 2^bits (the type's own arithmetic), then in double
 * C := cvt(fl(fl(double(P) * alpha) + fl(double(C) * beta))), the beta term only when beta != 0 (C is not
 * read otherwise), cvt = truncation toward zero where the value fits, else what NumPy gives for one value on
 * x86-64 (INT_MIN bits; uint64: values >= 2^63 offset by 2^63; uint32: the low 32 bits of the int64
 * conversion; see README). With alpha = 1 and beta = 0, int32 and uint32 are the exact
 * wrapped product; 64-bit products pass through double (53-bit) there too. */
GEMMKIT_API gemmkit_status_t gemmkit_gemm_i32(char transa, char transb, int64_t M, int64_t N, int64_t K,
        double alpha, const int32_t *A, int64_t lda, const int32_t *B, int64_t ldb, double beta, int32_t *C,
        int64_t ldc);
GEMMKIT_API gemmkit_status_t gemmkit_gemm_i64(char transa, char transb, int64_t M, int64_t N, int64_t K,
        double alpha, const int64_t *A, int64_t lda, const int64_t *B, int64_t ldb, double beta, int64_t *C,
        int64_t ldc);
GEMMKIT_API gemmkit_status_t gemmkit_gemm_u32(char transa, char transb, int64_t M, int64_t N, int64_t K,
        double alpha, const uint32_t *A, int64_t lda, const uint32_t *B, int64_t ldb, double beta, uint32_t *C,
        int64_t ldc);
GEMMKIT_API gemmkit_status_t gemmkit_gemm_u64(char transa, char transb, int64_t M, int64_t N, int64_t K,
        double alpha, const uint64_t *A, int64_t lda, const uint64_t *B, int64_t ldb, double beta, uint64_t *C,
        int64_t ldc);

/* C := alpha * (op(A) - ao) * (op(B) - bo) + beta * C + co, offsetc in F/C/R (fixed/column/row). */
GEMMKIT_API gemmkit_status_t gemmkit_gemm_u8s8s32(char transa, char transb, char offsetc, int64_t M,
        int64_t N, int64_t K, float alpha, const uint8_t *A, int64_t lda, uint8_t ao, const int8_t *B,
        int64_t ldb, int8_t bo, float beta, int32_t *C, int64_t ldc, const int32_t *co);

GEMMKIT_API gemmkit_status_t gemmkit_gemm_s8s8s32(char transa, char transb, char offsetc, int64_t M,
        int64_t N, int64_t K, float alpha, const int8_t *A, int64_t lda, int8_t ao, const int8_t *B,
        int64_t ldb, int8_t bo, float beta, int32_t *C, int64_t ldc, const int32_t *co);

/* Threads: default = CPUs this process may run on (or GEMMKIT_NUM_THREADS). */
GEMMKIT_API int gemmkit_get_num_threads(void);
GEMMKIT_API void gemmkit_set_num_threads(int n);

/* Kernel paths: "generic", "avx2", "avx_vnni", "avx512", "avx512_vnni". NULL or "" selects the best
 * path this CPU supports. Returns gemmkit_unimplemented if the CPU (or this build) lacks the path. */
GEMMKIT_API gemmkit_status_t gemmkit_set_arch(const char *name);
GEMMKIT_API const char *gemmkit_get_arch(void);
/* Bit set of GEMMKIT_CPU_* features detected by CPUID + XGETBV. */
GEMMKIT_API uint32_t gemmkit_cpu_features(void);
/* Kernel paths this build knows, i = 0 .. count-1, best first (NULL past the end); whether this CPU can
 * run one (1) or not (0; -1 for a name this build does not know). None of them changes the path in use. */
GEMMKIT_API int gemmkit_arch_count(void);
GEMMKIT_API const char *gemmkit_arch_name(int i);
GEMMKIT_API int gemmkit_arch_supported(const char *name);
/* CPU feature names and their GEMMKIT_CPU_* bits, i = 0 .. (NULL name past the end). */
GEMMKIT_API const char *gemmkit_cpu_feature_name(int i, uint32_t *bit);
/* What the configuration in use runs for one operation ("sgemm", "dgemm", "cgemm", "zgemm", "int8"):
 * kernel name, micro-tile, cache blocks (int8: kc = k per exact chunk, kb = k block in L1, k_group =
 * k values interleaved per packed group, elem = bytes per packed element), the tuning target. */
typedef struct {
    const char *kernel, *uarch;
    int mr, nr, k_group, elem;
    int64_t mc, kc, nc, kb;
} gemmkit_kernel_info_t;
GEMMKIT_API gemmkit_status_t gemmkit_kernel_info(const char *op, gemmkit_kernel_info_t *info);

#define GEMMKIT_CPU_AVX2        (1u << 0)  /* AVX2 + FMA + OS-saved ymm state */
#define GEMMKIT_CPU_AVX512      (1u << 1)  /* AVX-512 F/BW/DQ/VL + OS-saved zmm state */
#define GEMMKIT_CPU_AVX512_VNNI (1u << 2)
#define GEMMKIT_CPU_AVX_VNNI    (1u << 3)

#ifdef __cplusplus
}
#endif
#endif /* GEMMKIT_H */
