/* AVX-512 (F/BW/VL) kernel of gemmkit_quantize_per_token: one token, 16 lanes a step, tails by masks;
 * the max of |x'| as integer bits (vpmaxsd), IEEE vdivps, vcvtps2dq (nearest even), vpmovsdb. */
#include "quantize_scalar.h"
#if GEMMKIT_X86
#include <float.h>
#include <immintrin.h>

static GK_FORCEINLINE __m512 qz_smooth16(__m512 v, const float *smooth, int mode, int64_t k, __mmask16 m) {
    if (!smooth) return v;
    /* absent lanes of a tail divide by 1 (never 0 / 0) */
    const __m512 s = _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, smooth + k);
    return mode == GEMMKIT_SMOOTH_MULTIPLY ? _mm512_mul_ps(v, s) : _mm512_div_ps(v, s);
}

/* round_half_even(clamp(v / scale, -127, 127)) as int32, bit for bit (quantize_scalar.h: with a normal
 * scale, the reciprocal's product away from rounding ties, rounded by the conversion itself; |v| <= max
 * keeps that product below 127.5, so no clamp is needed there). */
static GK_FORCEINLINE __m512i qz_round16(__m512 v, __m512 vs, __m512 vinv, int fast) {
    if (fast) {
        const __m512 t = _mm512_mul_ps(v, vinv);
        const __m512i i = _mm512_cvtps_epi32(t);
        const __m512 d = _mm512_castsi512_ps(_mm512_and_si512(
            _mm512_castps_si512(_mm512_sub_ps(t, _mm512_cvtepi32_ps(i))), _mm512_set1_epi32(0x7fffffff)));
        if (!_mm512_cmp_ps_mask(d, _mm512_set1_ps(GK_QZ_NEAR_TIE), _CMP_GT_OQ)) return i;
    }
    return _mm512_cvtps_epi32(
        _mm512_min_ps(_mm512_max_ps(_mm512_div_ps(v, vs), _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f)));
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
        const __m512 vs = _mm512_set1_ps(scale);                                                     \
        const int fast = scale >= FLT_MIN;                                                           \
        const __m512 vinv = _mm512_set1_ps(fast ? 1.0f / scale : 0.0f);                              \
        /* 64 values a step, narrowed by vpackssdw / vpacksswb and one dword permute into a plain 64-byte \
         * store (a vpmovsdb to memory is slow on Zen 4) */                                          \
        const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15); \
        for (k = 0; k + 64 <= K; k += 64) {                                                          \
            __m512i r[4];                                                                            \
            for (int u = 0; u < 4; u++) {                                                            \
                const __m512 v = qz_smooth16(LOAD(x, k + 16 * u, 0xffff), smooth, mode, k + 16 * u, 0xffff); \
                r[u] = qz_round16(v, vs, vinv, fast);                                                \
            }                                                                                        \
            const __m512i b = _mm512_packs_epi16(_mm512_packs_epi32(r[0], r[1]), _mm512_packs_epi32(r[2], r[3])); \
            _mm512_storeu_si512((void *)(q + k), _mm512_permutexvar_epi32(order, b));               \
        }                                                                                            \
        for (; k < K; k += 16) {                                                                     \
            const __mmask16 m = K - k >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << (K - k)) - 1u); \
            const __m512 v = qz_smooth16(LOAD(x, k, m), smooth, mode, k, m);                         \
            const __m128i b = _mm512_cvtsepi32_epi8(qz_round16(v, vs, vinv, fast));                  \
            if (m == 0xffff) _mm_storeu_si128((__m128i *)(q + k), b);                                \
            else _mm_mask_storeu_epi8(q + k, m, b);                                                  \
        }                                                                                            \
    }

QZ_AVX512(qz_avx512_f32, QZ_LOAD_F32)
QZ_AVX512(qz_avx512_f16, QZ_LOAD_F16)
QZ_AVX512(qz_avx512_bf16, QZ_LOAD_BF16)

const gk_quant_kernel_t gk_quant_kernel_avx512 = {"quantize_avx512_16lanes",
                                                  {qz_avx512_f32, qz_avx512_f16, qz_avx512_bf16}};
#endif
