/* AVX2 (+ F16C) kernel of gemmkit_quantize_per_token: one token, 8 lanes a step and a scalar tail in the
 * same IEEE operations; the max of |x'| as integer bits (vpmaxsd), vdivps, vcvtps2dq (nearest even). */
#include "quantize_scalar.h"
#if GEMMKIT_X86
#include <float.h>
#include <immintrin.h>

static GK_FORCEINLINE __m256 qz_smooth8(__m256 v, const float *smooth, int mode, int64_t k) {
    if (!smooth) return v;
    const __m256 s = _mm256_loadu_ps(smooth + k);
    return mode == GEMMKIT_SMOOTH_MULTIPLY ? _mm256_mul_ps(v, s) : _mm256_div_ps(v, s);
}

#define QZ_LOAD_F32(p, k) _mm256_loadu_ps((const float *)(p) + (k))
#define QZ_LOAD_F16(p, k) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)((const uint16_t *)(p) + (k))))
#define QZ_LOAD_BF16(p, k)                                                                           \
    _mm256_castsi256_ps(_mm256_slli_epi32(                                                           \
        _mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)((const uint16_t *)(p) + (k)))), 16))
#define QZ_ONE_F32(p, k) (((const float *)(p))[k])
#define QZ_ONE_F16(p, k) gk_f16_to_f32(((const uint16_t *)(p))[k])
#define QZ_ONE_BF16(p, k) gk_bf16_to_f32(((const uint16_t *)(p))[k])

/* round_half_even(clamp(v / scale, -127, 127)) of 8 values as int32, bit for bit (see quantize_avx512.c's
 * qz_round16 and quantize_scalar.h); values in [-127, 127]: the narrowing packs never saturate. */
static GK_FORCEINLINE __m256i qz_round8(__m256 v, __m256 vs, __m256 vinv, int fast) {
    if (fast) {
        const __m256 t = _mm256_mul_ps(v, vinv);
        const __m256i i = _mm256_cvtps_epi32(t);
        const __m256 d = _mm256_and_ps(_mm256_sub_ps(t, _mm256_cvtepi32_ps(i)),
                                       _mm256_castsi256_ps(_mm256_set1_epi32(0x7fffffff)));
        if (!_mm256_movemask_ps(_mm256_cmp_ps(d, _mm256_set1_ps(GK_QZ_NEAR_TIE), _CMP_GT_OQ))) return i;
    }
    return _mm256_cvtps_epi32(
        _mm256_min_ps(_mm256_max_ps(_mm256_div_ps(v, vs), _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f)));
}

#define QZ_AVX2(NAME, LOAD, ONE)                                                                     \
    static void NAME(int64_t K, const void *x, const float *smooth, int mode, int8_t *q, float *scale_out) { \
        const __m256i absmask = _mm256_set1_epi32(0x7fffffff);                                       \
        __m256i m0 = _mm256_setzero_si256(), m1 = _mm256_setzero_si256();                            \
        int64_t k = 0;                                                                               \
        for (; k + 16 <= K; k += 16) {                                                               \
            const __m256 v0 = qz_smooth8(LOAD(x, k), smooth, mode, k);                               \
            const __m256 v1 = qz_smooth8(LOAD(x, k + 8), smooth, mode, k + 8);                       \
            m0 = _mm256_max_epi32(m0, _mm256_and_si256(_mm256_castps_si256(v0), absmask));           \
            m1 = _mm256_max_epi32(m1, _mm256_and_si256(_mm256_castps_si256(v1), absmask));           \
        }                                                                                            \
        for (; k + 8 <= K; k += 8) {                                                                 \
            const __m256 v = qz_smooth8(LOAD(x, k), smooth, mode, k);                                \
            m0 = _mm256_max_epi32(m0, _mm256_and_si256(_mm256_castps_si256(v), absmask));            \
        }                                                                                            \
        m0 = _mm256_max_epi32(m0, m1);                                                               \
        __m128i h = _mm_max_epi32(_mm256_castsi256_si128(m0), _mm256_extracti128_si256(m0, 1));     \
        h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0x4e));                                            \
        h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0xb1));                                            \
        uint32_t amax = (uint32_t)_mm_cvtsi128_si32(h);                                              \
        for (; k < K; k++) {                                                                         \
            const uint32_t a = gk_qz_abs_bits(gk_qz_smooth(ONE(x, k), smooth, mode, k));             \
            amax = a > amax ? a : amax;                                                              \
        }                                                                                            \
        const float scale = gk_qz_scale(amax);                                                       \
        *scale_out = scale;                                                                          \
        if (!(scale > 0.0f)) {                                                                       \
            memset(q, 0, (size_t)K);                                                                 \
            return;                                                                                  \
        }                                                                                            \
        const __m256 vs = _mm256_set1_ps(scale);                                                     \
        const int fast = scale >= FLT_MIN;                                                           \
        const __m256 vinv = _mm256_set1_ps(fast ? 1.0f / scale : 0.0f);                              \
        const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);                             \
        for (k = 0; k + 32 <= K; k += 32) {                                                          \
            const __m256i a = qz_round8(qz_smooth8(LOAD(x, k), smooth, mode, k), vs, vinv, fast);                \
            const __m256i b = qz_round8(qz_smooth8(LOAD(x, k + 8), smooth, mode, k + 8), vs, vinv, fast);        \
            const __m256i c = qz_round8(qz_smooth8(LOAD(x, k + 16), smooth, mode, k + 16), vs, vinv, fast);      \
            const __m256i d = qz_round8(qz_smooth8(LOAD(x, k + 24), smooth, mode, k + 24), vs, vinv, fast);      \
            const __m256i bytes = _mm256_packs_epi16(_mm256_packs_epi32(a, b), _mm256_packs_epi32(c, d)); \
            _mm256_storeu_si256((__m256i *)(q + k), _mm256_permutevar8x32_epi32(bytes, order));     \
        }                                                                                            \
        for (; k + 8 <= K; k += 8) {                                                                 \
            const __m256i a = qz_round8(qz_smooth8(LOAD(x, k), smooth, mode, k), vs, vinv, fast);                \
            const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(a), _mm256_extracti128_si256(a, 1)); \
            _mm_storel_epi64((__m128i *)(q + k), _mm_packs_epi16(w, w));                             \
        }                                                                                            \
        for (; k < K; k++) q[k] = gk_qz_one(gk_qz_smooth(ONE(x, k), smooth, mode, k), scale);        \
    }

QZ_AVX2(qz_avx2_f32, QZ_LOAD_F32, QZ_ONE_F32)
QZ_AVX2(qz_avx2_f16, QZ_LOAD_F16, QZ_ONE_F16)
QZ_AVX2(qz_avx2_bf16, QZ_LOAD_BF16, QZ_ONE_BF16)

const gk_quant_kernel_t gk_quant_kernel_avx2 = {"quantize_avx2_8lanes", {qz_avx2_f32, qz_avx2_f16, qz_avx2_bf16}};
#endif
