/* The AVX-512 bfloat16 kernels' shared pieces (AVX512_BF16 and AMX-BF16): a row of 32 float sums stored into C, and
 * the subnormal test of 32 bfloat16 values the instructions would read as zero. */
#ifndef GEMMKIT_BF16_ZMM_STORE_H
#define GEMMKIT_BF16_ZMM_STORE_H
#include <immintrin.h>

/* C's row := alpha times the sums plus beta times C, C not read when beta is 0 (a NaN there must not survive). */
static GK_FORCEINLINE void bf16_zmm_store_row32(float *c, __m512 s0, __m512 s1, __m512 va, float be) {
    __m512 r0 = _mm512_mul_ps(va, s0), r1 = _mm512_mul_ps(va, s1);
    if (be != 0.0f) {
        const __m512 vb = _mm512_set1_ps(be);
        r0 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(c), r0);
        r1 = _mm512_fmadd_ps(vb, _mm512_loadu_ps(c + 16), r1);
    }
    _mm512_storeu_ps(c, r0);
    _mm512_storeu_ps(c + 16, r1);
}

/* Lanes of v (32 bfloat16 values) that are subnormal: zero exponent, nonzero fraction. */
static GK_FORCEINLINE __mmask32 bf16_subnormal_lanes(__m512i v) {
    return _mm512_mask_test_epi16_mask(_mm512_testn_epi16_mask(v, _mm512_set1_epi16(0x7f80)), v,
                                       _mm512_set1_epi16(0x007f));
}
#endif
