/* AVX-512 (F/BW/DQ/VL) kernel of gemmkit_quantize_per_token: one token, 16 lanes a step, tails by masks; the
 * max of |x'| as integer bits (vpmaxsd), then an offset reciprocal fma with a tie test (vdivps near ties). */
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

/* The slow lane of qz_round16: round_half_even(clamp(v / scale, -127, 127)) by the IEEE division. */
static GK_FORCEINLINE __m512i qz_divide16(__m512 v, __m512 vs) {
    return _mm512_cvtps_epi32(
        _mm512_min_ps(_mm512_max_ps(_mm512_div_ps(v, vs), _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f)));
}

/* Fast lane of 16 values, offset: y = fma(v, 1 / scale, QZ_OFS) with QZ_OFS = 384 + 1/2 + d (d = 2^-11) puts
 * t = v / scale + 1/2 + d in [256, 512), where a float's low 15 bits are its fraction (ulp 2^-15). Lanes whose
 * fraction is below 2d (bits 5-14 clear: one vptestnmd) are near a tie and set *near; elsewhere floor(y) - 384
 * (vcvttps2dq; the caller subtracts 384 after the first narrowing) is round_half_even(float32(x' / scale)):
 * y is within e = 2^-16 (the fma's rounding) + 127 * 2^-24 (the reciprocal's) + 2^-18 (the quotient's own
 * rounding) < 2.7e-5 < d of fl(x' / scale) + QZ_OFS, so a fraction of y in [2d, 1) leaves that sum minus d
 * strictly between floor(y) and floor(y) + 1: no tie, and round half up = half even = floor(y) - 384. */
#define QZ_OFS (384.5f + 0x1p-11f)
#define QZ_NEAR_BITS 0x7fe0
static GK_FORCEINLINE __m512i qz_fast16(__m512 v, __m512 vinv, __mmask16 *near) {
    const __m512 y = _mm512_fmadd_ps(v, vinv, _mm512_set1_ps(QZ_OFS));
    *near = _mm512_testn_epi32_mask(_mm512_castps_si512(y), _mm512_set1_epi32(QZ_NEAR_BITS));
    return _mm512_cvttps_epi32(y);
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
            __m512 v[4];                                                                             \
            __mmask16 near[4];                                                                       \
            for (int u = 0; u < 4; u++)                                                              \
                v[u] = qz_smooth16(LOAD(x, k + 16 * u, 0xffff), smooth, mode, k + 16 * u, 0xffff);   \
            __m512i lo, hi;                                                                          \
            if (fast) { /* one test per 64 values; the rare group with a near tie is divided whole */ \
                for (int u = 0; u < 4; u++) r[u] = qz_fast16(v[u], vinv, &near[u]);                  \
                if ((near[0] | near[1] | near[2] | near[3]) == 0) {                                  \
                    const __m512i o = _mm512_set1_epi16(384);                                        \
                    lo = _mm512_sub_epi16(_mm512_packs_epi32(r[0], r[1]), o);                        \
                    hi = _mm512_sub_epi16(_mm512_packs_epi32(r[2], r[3]), o);                        \
                } else {                                                                             \
                    for (int u = 0; u < 4; u++) r[u] = qz_divide16(v[u], vs);                        \
                    lo = _mm512_packs_epi32(r[0], r[1]);                                             \
                    hi = _mm512_packs_epi32(r[2], r[3]);                                             \
                }                                                                                    \
            } else {                                                                                 \
                for (int u = 0; u < 4; u++) r[u] = qz_divide16(v[u], vs);                            \
                lo = _mm512_packs_epi32(r[0], r[1]);                                                 \
                hi = _mm512_packs_epi32(r[2], r[3]);                                                 \
            }                                                                                        \
            const __m512i b = _mm512_packs_epi16(lo, hi);                                            \
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
