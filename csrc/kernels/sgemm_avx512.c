/* AVX-512F sgemm microkernel (12 x 32: 24 zmm accumulators) and its blocking table; this file
 * alone is compiled with AVX-512 flags and runs only when dispatch found AVX-512 with OS zmm state. */
#include "../gemmkit_internal.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define MR 12
#define NV 2 /* zmm vectors per row of the tile */
#define NR (16 * NV)

/* The accumulator array stays in registers only while every loop over it is fully unrolled. */
static void ukernel_sgemm_avx512_12x32(int64_t kc, const float *GK_RESTRICT a, int64_t rsa, const float *GK_RESTRICT b,
                                       int64_t rsb, float *GK_RESTRICT c, int64_t ldc, float alpha, float beta) {
    __m512 acc[MR][NV];
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) acc[i][v] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
        __m512 bv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) bv[v] = _mm512_loadu_ps(b + 16 * v);
#pragma GCC unroll 16
        for (int i = 0; i < MR; i++) {
            __m512 x = _mm512_set1_ps(a[i]);
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) acc[i][v] = _mm512_fmadd_ps(x, bv[v], acc[i][v]);
        }
        a += rsa;
        b += rsb;
    }
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    if (beta == 0.0f) {
#pragma GCC unroll 16
        for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) _mm512_storeu_ps(c + i * ldc + 16 * v, _mm512_mul_ps(va, acc[i][v]));
    } else {
#pragma GCC unroll 16
        for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) {
                float *cp = c + i * ldc + 16 * v;
                _mm512_storeu_ps(cp, _mm512_fmadd_ps(vb, _mm512_loadu_ps(cp), _mm512_mul_ps(va, acc[i][v])));
            }
    }
}

const gk_sgemm_kernel_t gk_sgemm_kernel_avx512 = {
    "ukernel_sgemm_avx512_12x32", MR, NR, /*mc*/ 12 * 10, /*kc*/ 512, /*nc*/ 4096,
    ukernel_sgemm_avx512_12x32,
};
#endif
