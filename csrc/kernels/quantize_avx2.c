/* AVX2 (+ F16C) kernel of gemmkit_quantize_per_token: tokens four at a time (the max of |x'| over the four read
 * side by side), 8 lanes a step, quantize_avx512.c's offset reciprocal with its tie test, scalar tails. */
#include "quantize_scalar.h"
#if GEMMKIT_X86
#include <float.h>
#include <immintrin.h>

/* 8 values of x (type GEMMKIT_OUT_*) from element k, and one value (the scalar tails). */
static GK_FORCEINLINE __m256 qz_load8(int type, const void *x, int64_t k) {
    if (type == GEMMKIT_OUT_FLOAT32) return _mm256_loadu_ps((const float *)x + k);
    const __m128i h = _mm_loadu_si128((const __m128i *)((const uint16_t *)x + k));
    if (type == GEMMKIT_OUT_FLOAT16) return _mm256_cvtph_ps(h);
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(h), 16));
}

static GK_FORCEINLINE float qz_load1(int type, const void *x, int64_t k) {
    if (type == GEMMKIT_OUT_FLOAT32) return ((const float *)x)[k];
    const uint16_t h = ((const uint16_t *)x)[k];
    return type == GEMMKIT_OUT_FLOAT16 ? gk_f16_to_f32(h) : gk_bf16_to_f32(h);
}

static GK_FORCEINLINE __m256 qz_value8(int type, const void *x, const float *smooth, int mode, int64_t k) {
    const __m256 v = qz_load8(type, x, k);
    if (!smooth) return v;
    const __m256 s = _mm256_loadu_ps(smooth + k);
    return mode == GEMMKIT_SMOOTH_MULTIPLY ? _mm256_mul_ps(v, s) : _mm256_div_ps(v, s);
}

static GK_FORCEINLINE __m256i qz_divide8(__m256 v, __m256 vs) {
    return _mm256_cvtps_epi32(
        _mm256_min_ps(_mm256_max_ps(_mm256_div_ps(v, vs), _mm256_set1_ps(-127.0f)), _mm256_set1_ps(127.0f)));
}

/* quantize_avx512.c's qz_fast16 on 8 lanes (the proof is there): floor(fma(v, 1 / scale, QZ_OFS)) as int32,
 * 384 above the quantized value, and in *near all ones in the lanes within 2^-13 of a tie. */
#define QZ_OFS (384.5f + 0x1p-14f)
#define QZ_NEAR_BITS 0x7ffc
static GK_FORCEINLINE __m256i qz_fast8(__m256 v, __m256 vinv, __m256i *near) {
    const __m256 y = _mm256_fmadd_ps(v, vinv, _mm256_set1_ps(QZ_OFS));
    *near = _mm256_cmpeq_epi32(_mm256_and_si256(_mm256_castps_si256(y), _mm256_set1_epi32(QZ_NEAR_BITS)),
                               _mm256_setzero_si256());
    return _mm256_cvttps_epi32(y);
}

/* max |x'| bits of the n <= 4 tokens at x[0..n), read side by side (four memory streams). */
static GK_FORCEINLINE void qz_amax_rows(int type, int n, const void *const *x, int64_t K, const float *smooth,
                                        int mode, uint32_t *amax) {
    const __m256i absmask = _mm256_set1_epi32(0x7fffffff);
    __m256i m[4];
    const void *r[4];
    for (int t = 0; t < 4; t++) {
        m[t] = _mm256_setzero_si256();
        r[t] = x[t < n ? t : 0]; /* absent tokens re-read the first: same lines, harmless */
    }
    int64_t k = 0;
    for (; k + 8 <= K; k += 8)
        for (int t = 0; t < 4; t++)
            m[t] = _mm256_max_epi32(
                m[t], _mm256_and_si256(_mm256_castps_si256(qz_value8(type, r[t], smooth, mode, k)), absmask));
    for (int t = 0; t < n; t++) {
        __m128i h = _mm_max_epi32(_mm256_castsi256_si128(m[t]), _mm256_extracti128_si256(m[t], 1));
        h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0x4e));
        h = _mm_max_epi32(h, _mm_shuffle_epi32(h, 0xb1));
        uint32_t a = (uint32_t)_mm_cvtsi128_si32(h);
        for (int64_t j = k; j < K; j++) {
            const uint32_t b = gk_qz_abs_bits(gk_qz_smooth(qz_load1(type, r[t], j), smooth, mode, j));
            a = b > a ? b : a;
        }
        amax[t] = a;
    }
}

/* One token's bytes from its scale (> 0, finite): 32 values a step narrowed by packs and one dword permute,
 * one tie test per 32 values (a group with a near tie divided whole; a subnormal scale divides all), then
 * 8 at a time, then scalar. */
static GK_FORCEINLINE void qz_quantize_token(int type, int64_t K, const void *x, const float *smooth, int mode,
                                             float scale, int8_t *q) {
    const __m256 vs = _mm256_set1_ps(scale);
    const int fast = scale >= FLT_MIN;
    const __m256 vinv = _mm256_set1_ps(fast ? 1.0f / scale : 0.0f);
    const __m256i order = _mm256_setr_epi32(0, 4, 1, 5, 2, 6, 3, 7);
    int64_t k = 0;
    for (; k + 32 <= K; k += 32) {
        __m256 v[4];
        __m256i r[4], near[4], lo, hi;
        for (int u = 0; u < 4; u++) v[u] = qz_value8(type, x, smooth, mode, k + 8 * u);
        if (fast) {
            for (int u = 0; u < 4; u++) r[u] = qz_fast8(v[u], vinv, &near[u]);
            const __m256i any = _mm256_or_si256(_mm256_or_si256(near[0], near[1]), _mm256_or_si256(near[2], near[3]));
            if (_mm256_testz_si256(any, any)) {
                const __m256i o = _mm256_set1_epi16(384);
                lo = _mm256_sub_epi16(_mm256_packs_epi32(r[0], r[1]), o);
                hi = _mm256_sub_epi16(_mm256_packs_epi32(r[2], r[3]), o);
                _mm256_storeu_si256((__m256i *)(q + k), _mm256_permutevar8x32_epi32(_mm256_packs_epi16(lo, hi), order));
                continue;
            }
        }
        for (int u = 0; u < 4; u++) r[u] = qz_divide8(v[u], vs);
        lo = _mm256_packs_epi32(r[0], r[1]);
        hi = _mm256_packs_epi32(r[2], r[3]);
        _mm256_storeu_si256((__m256i *)(q + k), _mm256_permutevar8x32_epi32(_mm256_packs_epi16(lo, hi), order));
    }
    for (; k + 8 <= K; k += 8) {
        const __m256 v = qz_value8(type, x, smooth, mode, k);
        __m256i r = _mm256_setzero_si256(), near = _mm256_set1_epi32(-1);
        if (fast) r = _mm256_sub_epi32(qz_fast8(v, vinv, &near), _mm256_set1_epi32(384));
        if (!_mm256_testz_si256(near, near)) r = qz_divide8(v, vs);
        const __m128i w = _mm_packs_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
        _mm_storel_epi64((__m128i *)(q + k), _mm_packs_epi16(w, w));
    }
    for (; k < K; k++) q[k] = gk_qz_one(gk_qz_smooth(qz_load1(type, x, k), smooth, mode, k), scale);
}

#include "quantize_rows.h"

GK_QZ_KERNEL_TABLE(gk_quant_kernel_avx2, "quantize_avx2_8lanes")
#endif
