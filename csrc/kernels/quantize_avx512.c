/* AVX-512 (F/BW/VL) kernel of gemmkit_quantize_per_token: one token, 16 lanes a step, tails by masks;
 * the max of |x'| as integer bits (vpmaxsd), IEEE vdivps, vcvtps2dq (nearest even), vpmovsdb. */
#include "quantize_scalar.h"
#if GEMMKIT_X86
#include <immintrin.h>

static GK_FORCEINLINE __m512 qz_smooth16(__m512 v, const float *smooth, int mode, int64_t k, __mmask16 m) {
    if (!smooth) return v;
    /* absent lanes of a tail divide by 1 (never 0 / 0) */
    const __m512 s = _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, smooth + k);
    return mode == GEMMKIT_SMOOTH_MULTIPLY ? _mm512_mul_ps(v, s) : _mm512_div_ps(v, s);
}

#define QZ_LOAD_F32(p, k, m) _mm512_maskz_loadu_ps((m), (const float *)(p) + (k))
#define QZ_LOAD_F16(p, k, m) _mm512_cvtph_ps(_mm256_maskz_loadu_epi16((m), (const uint16_t *)(p) + (k)))
#define QZ_LOAD_BF16(p, k, m)                                                                        \
    _mm512_castsi512_ps(_mm512_slli_epi32(                                                           \
        _mm512_cvtepu16_epi32(_mm256_maskz_loadu_epi16((m), (const uint16_t *)(p) + (k))), 16))

#define QZ_AVX512(NAME, LOAD)                                                                        \
    static void NAME(int64_t K, const void *x, const float *smooth, int mode, int8_t *q, float *scale_out) { \
        const __m512i absmask = _mm512_set1_epi32(0x7fffffff);                                       \
        __m512i m0 = _mm512_setzero_si512(), m1 = _mm512_setzero_si512();                            \
        int64_t k = 0;                                                                               \
        for (; k + 32 <= K; k += 32) {                                                               \
            const __m512 v0 = qz_smooth16(LOAD(x, k, 0xffff), smooth, mode, k, 0xffff);              \
            const __m512 v1 = qz_smooth16(LOAD(x, k + 16, 0xffff), smooth, mode, k + 16, 0xffff);    \
            m0 = _mm512_max_epi32(m0, _mm512_and_si512(_mm512_castps_si512(v0), absmask));           \
            m1 = _mm512_max_epi32(m1, _mm512_and_si512(_mm512_castps_si512(v1), absmask));           \
        }                                                                                            \
        for (; k < K; k += 16) {                                                                     \
            const __mmask16 m = K - k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (K - k)) - 1u); \
            const __m512 v = qz_smooth16(LOAD(x, k, m), smooth, mode, k, m);                         \
            m0 = _mm512_max_epi32(m0, _mm512_and_si512(_mm512_castps_si512(v), absmask));            \
        }                                                                                            \
        const float scale = gk_qz_scale((uint32_t)_mm512_reduce_max_epi32(_mm512_max_epi32(m0, m1))); \
        *scale_out = scale;                                                                          \
        if (!(scale > 0.0f)) {                                                                       \
            memset(q, 0, (size_t)K);                                                                 \
            return;                                                                                  \
        }                                                                                            \
        const __m512 vs = _mm512_set1_ps(scale), lo = _mm512_set1_ps(-127.0f), hi = _mm512_set1_ps(127.0f); \
        for (k = 0; k < K; k += 16) {                                                                \
            const __mmask16 m = K - k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (K - k)) - 1u); \
            __m512 t = _mm512_div_ps(qz_smooth16(LOAD(x, k, m), smooth, mode, k, m), vs);            \
            t = _mm512_min_ps(_mm512_max_ps(t, lo), hi);                                             \
            _mm_mask_storeu_epi8(q + k, m, _mm512_cvtsepi32_epi8(_mm512_cvtps_epi32(t)));            \
        }                                                                                            \
    }

QZ_AVX512(qz_avx512_f32, QZ_LOAD_F32)
QZ_AVX512(qz_avx512_f16, QZ_LOAD_F16)
QZ_AVX512(qz_avx512_bf16, QZ_LOAD_BF16)

const gk_quant_kernel_t gk_quant_kernel_avx512 = {"quantize_avx512_16lanes",
                                                  {qz_avx512_f32, qz_avx512_f16, qz_avx512_bf16}};
#endif
