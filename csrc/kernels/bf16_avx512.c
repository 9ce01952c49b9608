/* AVX512_BF16 (GEMMKIT_CPU_AVX512_BF16): a 12 x 32 bfloat16 pair kernel on vdpbf16ps (24 zmm sums, two zmm of B and a
 * broadcast pair of A per row and k pair), on the AVX-512 pair packers (bf16_moves_avx512.c). */
#include "../kernel.h"
#if GEMMKIT_X86 && defined(GEMMKIT_HAVE_AVX512_BF16)
#include <immintrin.h>
#include "../convert.h"
#include "bf16_zmm_store.h"

#define MR 12
#define NR 32

/* The sums of one k pair: vdpbf16ps adds a[2i]b[2i] and a[2i+1]b[2i+1] into float lane i, each sum rounded to
 * nearest even, bfloat16 subnormal inputs read as zero (the packers report those: ukernel_exact below). */
static void ukernel_bf16_avx512_12x32(int64_t kc, const void *GK_RESTRICT av, int64_t rsa, const void *GK_RESTRICT bv,
                                      int64_t rsb, void *GK_RESTRICT cv, int64_t ldc, const void *alpha,
                                      const void *beta) {
    const int32_t *a = (const int32_t *)av;
    const uint32_t *b = (const uint32_t *)bv;
    float *c = (float *)cv;
    (void)rsa, (void)rsb;
    __m512 acc[MR][2];
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t q = 0; q < kc; q++) {
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 16);
        _mm_prefetch((const char *)(b + 8 * NR), _MM_HINT_T0);
#pragma GCC unroll 12
        for (int i = 0; i < MR; i++) {
            const __m512bh ai = (__m512bh)_mm512_set1_epi32(a[i]);
            acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
            acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
        }
        a += MR;
        b += NR;
    }
    const __m512 va = _mm512_set1_ps(*(const float *)alpha);
    const float be = *(const float *)beta;
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) bf16_zmm_store_row32(c + i * ldc, acc[i][0], acc[i][1], va, be);
}

#define BP_MR MR
#define BP_NR NR
#define BP_GROUP 1
#define BP_NAME ukernel_bf16_avx512_12x32_exact
#include "bf16_pair_exact_template.h"

GK_ASSERT_REAL_TILE(MR, NR, 4);
const gk_real_kernel_t gk_bf16_kernel_avx512 = {
    .name = "ukernel_bf16_avx512_12x32", .elem = 4, .mr = MR, .nr = NR, .ukernel = ukernel_bf16_avx512_12x32,
    .k_pair_group = 1, .ukernel_exact = ukernel_bf16_avx512_12x32_exact, .pair_dots = gk_bf16_dots_avx512,
    .pair_rows = gk_bf16_rows_avx512,
    .moves = &gk_bf16_moves_avx512,
};
#endif
