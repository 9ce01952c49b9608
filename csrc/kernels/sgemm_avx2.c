/* AVX2 + FMA sgemm microkernel (6 x 16: 12 ymm accumulators); this file alone is compiled with
 * -mavx2 -mfma (/arch:AVX2) and runs only when dispatch found AVX2 + FMA. */
#include "../gemmkit_internal.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define MR 6
#define NR 16

static void ukernel_sgemm_avx2_6x16(int64_t kc, const void *GK_RESTRICT av, int64_t rsa, const void *GK_RESTRICT bv,
                                    int64_t rsb, void *GK_RESTRICT cv, int64_t ldc, const void *alpha_p,
                                    const void *beta_p) {
    const float *a = (const float *)av, *b = (const float *)bv;
    float *c = (float *)cv;
    const float alpha = *(const float *)alpha_p, beta = *(const float *)beta_p;
    __m256 c00 = _mm256_setzero_ps(), c01 = _mm256_setzero_ps(), c10 = _mm256_setzero_ps(),
           c11 = _mm256_setzero_ps(), c20 = _mm256_setzero_ps(), c21 = _mm256_setzero_ps(),
           c30 = _mm256_setzero_ps(), c31 = _mm256_setzero_ps(), c40 = _mm256_setzero_ps(),
           c41 = _mm256_setzero_ps(), c50 = _mm256_setzero_ps(), c51 = _mm256_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
        __m256 b0 = _mm256_loadu_ps(b), b1 = _mm256_loadu_ps(b + 8);
        __m256 x;
        x = _mm256_broadcast_ss(a + 0); c00 = _mm256_fmadd_ps(x, b0, c00); c01 = _mm256_fmadd_ps(x, b1, c01);
        x = _mm256_broadcast_ss(a + 1); c10 = _mm256_fmadd_ps(x, b0, c10); c11 = _mm256_fmadd_ps(x, b1, c11);
        x = _mm256_broadcast_ss(a + 2); c20 = _mm256_fmadd_ps(x, b0, c20); c21 = _mm256_fmadd_ps(x, b1, c21);
        x = _mm256_broadcast_ss(a + 3); c30 = _mm256_fmadd_ps(x, b0, c30); c31 = _mm256_fmadd_ps(x, b1, c31);
        x = _mm256_broadcast_ss(a + 4); c40 = _mm256_fmadd_ps(x, b0, c40); c41 = _mm256_fmadd_ps(x, b1, c41);
        x = _mm256_broadcast_ss(a + 5); c50 = _mm256_fmadd_ps(x, b0, c50); c51 = _mm256_fmadd_ps(x, b1, c51);
        a += rsa;
        b += rsb;
    }
    const __m256 va = _mm256_set1_ps(alpha), vb = _mm256_set1_ps(beta);
#define STORE_ROW(i, r0, r1)                                                                         \
    do {                                                                                             \
        float *ci = c + (i) * ldc;                                                                   \
        __m256 o0 = _mm256_mul_ps(va, r0), o1 = _mm256_mul_ps(va, r1);                               \
        if (beta != 0.0f) {                                                                          \
            o0 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci), o0);                                       \
            o1 = _mm256_fmadd_ps(vb, _mm256_loadu_ps(ci + 8), o1);                                   \
        }                                                                                            \
        _mm256_storeu_ps(ci, o0);                                                                    \
        _mm256_storeu_ps(ci + 8, o1);                                                                \
    } while (0)
    STORE_ROW(0, c00, c01); STORE_ROW(1, c10, c11); STORE_ROW(2, c20, c21);
    STORE_ROW(3, c30, c31); STORE_ROW(4, c40, c41); STORE_ROW(5, c50, c51);
#undef STORE_ROW
}

const gk_real_kernel_t gk_sgemm_kernel_avx2 = {
    "ukernel_sgemm_avx2_6x16", 4, MR, NR, ukernel_sgemm_avx2_6x16, NULL, NULL,
};
#endif
