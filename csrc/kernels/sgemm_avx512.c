/* AVX-512F sgemm microkernel (MR x 16*NV: MR*NV zmm accumulators) and its blocking table; this file
 * alone is compiled with AVX-512 flags and runs only when dispatch found AVX-512 with OS zmm state. */
#include "../gemmkit_internal.h"
#if GEMMKIT_X86
#include <immintrin.h>

#ifndef SG512_MR
#define SG512_MR 12
#endif
#ifndef SG512_NV
#define SG512_NV 2
#endif
#define SG512_NR_2 32
#define SG512_NR_3 48
#define SG512_NR_4 64
#define SG512_CAT(a, b) a##b
#define SG512_NRV(nv) SG512_CAT(SG512_NR_, nv)
#define SG512_NR SG512_NRV(SG512_NV)
#define MR SG512_MR
#define NV SG512_NV
#define NR (16 * NV)

#define GK_STR2(x) #x
#define GK_STR(x) GK_STR2(x)
#define KNAME "ukernel_sgemm_avx512_" GK_STR(SG512_MR) "x" GK_STR(SG512_NR)

static void ukernel_sgemm_avx512(int64_t kc, const float *GK_RESTRICT a, const float *GK_RESTRICT b,
                                 float *GK_RESTRICT c, int64_t ldc, float alpha, float beta) {
    __m512 acc[MR][NV];
#pragma GCC unroll 16
    for (int i = 0; i < MR; i++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) acc[i][v] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
        __m512 bv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) bv[v] = _mm512_loadu_ps(b + 16 * v);
        _mm_prefetch((const char *)(b + 8 * NR), _MM_HINT_T0);
#pragma GCC unroll 16
        for (int i = 0; i < MR; i++) {
            __m512 x = _mm512_set1_ps(a[i]);
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) acc[i][v] = _mm512_fmadd_ps(x, bv[v], acc[i][v]);
        }
        a += MR;
        b += NR;
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
    KNAME, MR, NR, /*mc*/ 12 * 20, /*kc*/ 384, /*nc*/ 4096,
    ukernel_sgemm_avx512,
};
#endif
