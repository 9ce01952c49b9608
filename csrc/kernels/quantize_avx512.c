/* AVX-512 (F/BW/DQ/VL) kernel of gemmkit_quantize_per_token: each token's offset reciprocal fma with a tie test,
 * the max of |x'| of four tokens read side by side (from memory), or of the next token in the same loop (cached). */
#include "quantize_scalar.h"
#if GEMMKIT_X86
#include <float.h>
#include <immintrin.h>

/* 16 values of x (type GEMMKIT_OUT_*) from element k, the lanes outside m zero. */
static GK_FORCEINLINE __m512 qz_load16(int type, const void *x, int64_t k, __mmask16 m) {
    if (type == GEMMKIT_OUT_FLOAT32) return _mm512_maskz_loadu_ps(m, (const float *)x + k);
    const __m256i h = _mm256_maskz_loadu_epi16(m, (const uint16_t *)x + k);
    if (type == GEMMKIT_OUT_FLOAT16) return _mm512_cvtph_ps(h);
    return _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_cvtepu16_epi32(h), 16));
}

static GK_FORCEINLINE __m512 qz_smooth16(__m512 v, const float *smooth, int mode, int64_t k, __mmask16 m) {
    if (!smooth) return v;
    /* absent lanes of a tail divide by 1 (never 0 / 0) */
    const __m512 s = _mm512_mask_loadu_ps(_mm512_set1_ps(1.0f), m, smooth + k);
    return mode == GEMMKIT_SMOOTH_MULTIPLY ? _mm512_mul_ps(v, s) : _mm512_div_ps(v, s);
}

static GK_FORCEINLINE __m512 qz_value16(int type, const void *x, const float *smooth, int mode, int64_t k,
                                        __mmask16 m) {
    return qz_smooth16(qz_load16(type, x, k, m), smooth, mode, k, m);
}

static GK_FORCEINLINE __mmask16 qz_tail_mask(int64_t n) {
    return n >= 16 ? (__mmask16)0xffff : (__mmask16)((1u << n) - 1u);
}

/* The slow lane: round_half_even(clamp(v / scale, -127, 127)) by the IEEE division. */
static GK_FORCEINLINE __m512i qz_divide16(__m512 v, __m512 vs) {
    return _mm512_cvtps_epi32(
        _mm512_min_ps(_mm512_max_ps(_mm512_div_ps(v, vs), _mm512_set1_ps(-127.0f)), _mm512_set1_ps(127.0f)));
}

/* Fast lane of 16 values, offset: y = fma(v, 1 / scale, QZ_OFS) with QZ_OFS = 384 + 1/2 + d (d = 2^-14) puts
 * t = v / scale + 1/2 + d in [256, 512), where a float's low 15 bits are its fraction (ulp 2^-15). Lanes whose
 * fraction is below 2d (bits 2-14 clear: one vptestnmd; about one value in 8192) are near a tie and set
 * *near; elsewhere floor(y) - 384 (vcvttps2dq; the caller subtracts the 384) is round_half_even(float32(x' /
 * scale)): y is within e = 2^-16 (the fma's rounding) + 127 * 2^-24 (the reciprocal's) + 2^-18 (the
 * quotient's own rounding) < 2.7e-5 < d of fl(x' / scale) + QZ_OFS, so a fraction of y in [2d, 1) leaves that
 * sum minus d strictly between floor(y) and floor(y) + 1: no tie, and round half up = half even = floor(y) -
 * 384. (|x'| <= max|x'| keeps the quotient <= 127 (1 + 2^-23): no clamp is needed on this lane.) */
#define QZ_OFS (384.5f + 0x1p-14f)
#define QZ_NEAR_BITS 0x7ffc
static GK_FORCEINLINE __m512i qz_fast16(__m512 v, __m512 vinv, __mmask16 *near) {
    const __m512 y = _mm512_fmadd_ps(v, vinv, _mm512_set1_ps(QZ_OFS));
    *near = _mm512_testn_epi32_mask(_mm512_castps_si512(y), _mm512_set1_epi32(QZ_NEAR_BITS));
    return _mm512_cvttps_epi32(y);
}

/* max |x'| bits (as quantize_scalar.h's gk_qz_abs_bits) of the n <= 4 tokens at x[0..n), each of K values,
 * into amax[0..n): the tokens are read side by side, four streams, as the hardware prefetchers like best. */
static GK_FORCEINLINE void qz_amax_rows(int type, int n, const void *const *x, int64_t K, const float *smooth,
                                        int mode, uint32_t *amax) {
    const __m512i absmask = _mm512_set1_epi32(0x7fffffff);
    __m512i m[4];
    const void *r[4];
    for (int t = 0; t < 4; t++) {
        m[t] = _mm512_setzero_si512();
        r[t] = x[t < n ? t : 0]; /* absent tokens re-read the first: same lines, harmless */
    }
    for (int64_t k = 0; k < K; k += 16) {
        const __mmask16 msk = qz_tail_mask(K - k);
        for (int t = 0; t < 4; t++)
            m[t] = _mm512_max_epi32(
                m[t], _mm512_and_si512(_mm512_castps_si512(qz_value16(type, r[t], smooth, mode, k, msk)), absmask));
    }
    for (int t = 0; t < n; t++) amax[t] = (uint32_t)_mm512_reduce_max_epi32(m[t]);
}

/* One token's bytes q[0..K) from its scale (> 0, finite). 64 values a step, narrowed by vpackssdw / vpacksswb
 * and one dword permute into a plain 64-byte store (a vpmovsdb to memory is slow on Zen 4); one tie test per
 * 64 values, the rare group with a near tie divided whole; a subnormal scale divides every value. Where next
 * is given, the max |x'| bits of the K values there go to *next_amax, read in the same loop (the pipelined
 * rows of quantize_rows.h); qz_quantize_token is the same without. */
static GK_FORCEINLINE void qz_quantize_token_next(int type, int64_t K, const void *x, const float *smooth, int mode,
                                                  float scale, int8_t *q, const void *next, uint32_t *next_amax) {
    const __m512i absmask = _mm512_set1_epi32(0x7fffffff);
    __m512i m[4] = {_mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512(), _mm512_setzero_si512()};
#define QZ_NEXT_MAX(u, k, msk)                                                                                  \
    m[u] = _mm512_max_epi32(                                                                                    \
        m[u], _mm512_and_si512(_mm512_castps_si512(qz_value16(type, next, smooth, mode, k, msk)), absmask))
    const __m512 vs = _mm512_set1_ps(scale);
    const int fast = scale >= FLT_MIN;
    const __m512 vinv = _mm512_set1_ps(fast ? 1.0f / scale : 0.0f);
    const __m512i order = _mm512_setr_epi32(0, 4, 8, 12, 1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15);
    int64_t k = 0;
    for (; k + 64 <= K; k += 64) {
        __m512i r[4], lo, hi;
        __m512 v[4];
        __mmask16 near[4];
        if (next)
            for (int u = 0; u < 4; u++) QZ_NEXT_MAX(u, k + 16 * u, 0xffff);
        for (int u = 0; u < 4; u++) v[u] = qz_value16(type, x, smooth, mode, k + 16 * u, 0xffff);
        if (fast) {
            for (int u = 0; u < 4; u++) r[u] = qz_fast16(v[u], vinv, &near[u]);
            if ((near[0] | near[1] | near[2] | near[3]) == 0) {
                const __m512i o = _mm512_set1_epi16(384);
                lo = _mm512_sub_epi16(_mm512_packs_epi32(r[0], r[1]), o);
                hi = _mm512_sub_epi16(_mm512_packs_epi32(r[2], r[3]), o);
                _mm512_storeu_si512((void *)(q + k), _mm512_permutexvar_epi32(order, _mm512_packs_epi16(lo, hi)));
                continue;
            }
        }
        for (int u = 0; u < 4; u++) r[u] = qz_divide16(v[u], vs);
        lo = _mm512_packs_epi32(r[0], r[1]);
        hi = _mm512_packs_epi32(r[2], r[3]);
        _mm512_storeu_si512((void *)(q + k), _mm512_permutexvar_epi32(order, _mm512_packs_epi16(lo, hi)));
    }
    for (; k < K; k += 16) {
        const __mmask16 msk = qz_tail_mask(K - k);
        const __m512 v = qz_value16(type, x, smooth, mode, k, msk);
        __m512i r = _mm512_setzero_si512();
        __mmask16 near = 1;
        if (next) QZ_NEXT_MAX(0, k, msk);
        if (fast) {
            r = _mm512_sub_epi32(qz_fast16(v, vinv, &near), _mm512_set1_epi32(384));
            near &= msk;
        }
        if (near) r = qz_divide16(v, vs);
        _mm_mask_storeu_epi8(q + k, msk, _mm512_cvtsepi32_epi8(r));
    }
#undef QZ_NEXT_MAX
    if (next)
        *next_amax = (uint32_t)_mm512_reduce_max_epi32(
            _mm512_max_epi32(_mm512_max_epi32(m[0], m[1]), _mm512_max_epi32(m[2], m[3])));
}

static GK_FORCEINLINE void qz_quantize_token(int type, int64_t K, const void *x, const float *smooth, int mode,
                                             float scale, int8_t *q) {
    qz_quantize_token_next(type, K, x, smooth, mode, scale, q, NULL, NULL);
}

#define QZ_HAVE_TOKEN_NEXT 1 /* qz_quantize_token_next: quantize_rows.h's qz_rows_pipelined too */
#include "quantize_rows.h"

GK_QZ_KERNEL_TABLE(gk_quant_kernel_avx512, "quantize_avx512_16lanes")
#endif
