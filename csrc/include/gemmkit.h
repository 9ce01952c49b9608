/* gemmkit public C API: BLAS-like GEMM entry points mirroring oneDNN's dnnl_sgemm / dnnl_gemm_*s8s32.
 * All matrices are row-major; status codes equal oneDNN's dnnl_status_t values. */
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

#define GEMMKIT_CPU_AVX2        (1u << 0)  /* AVX2 + FMA + OS-saved ymm state */
#define GEMMKIT_CPU_AVX512      (1u << 1)  /* AVX-512 F/BW/DQ/VL + OS-saved zmm state */
#define GEMMKIT_CPU_AVX512_VNNI (1u << 2)
#define GEMMKIT_CPU_AVX_VNNI    (1u << 3)

#ifdef __cplusplus
}
#endif
#endif /* GEMMKIT_H */
