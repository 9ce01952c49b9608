/* The exact epilogue of the 512-bit int8 kernels (VNNI, AVX-512BW widening, AMX): an MR x NR tile's raw int32
 * sums (rows NR apart) to C, <kernel>_finish(m, ...), and their vector ops; the includer defines NV, I8_KERNEL_NAME. */
#ifndef GEMMKIT_INT8_ZMM_EPILOGUE_H
#define GEMMKIT_INT8_ZMM_EPILOGUE_H
#include <immintrin.h>
#include "../kernel.h"
#include "../convert.h"

#define NR (16 * NV)
/* the 512-bit vector ops of the shared int8 bodies (int8_tile_sums.h, int8_panel_sums.h) */
#define I8_VEC __m512i
#define I8_LANES 16
#define I8_ZERO() _mm512_setzero_si512()
#define I8_LOAD(p) _mm512_loadu_si512((const void *)(p))
#define I8_STORE(p, v) _mm512_storeu_si512((void *)(p), (v))
#define I8_BCAST(w) _mm512_set1_epi32(w)
#define I8_ADD(x, y) _mm512_add_epi32(x, y)
#ifndef I8_PASTE
#define I8_PASTE2(a, b) a##b
#define I8_PASTE(a, b) I8_PASTE2(a, b)
#endif

/* S (16 int32 sums of row i) -> C[0:16] through the exact double-precision epilogue. */
static inline void int8_zmm_store16(int32_t *c, __m512i s, __m512d rc, const double *cc, const double *ca,
                                  __m512d ra, int has_ra, __m512d va, __m512d vb, int use_beta) {
    const __m512d lo_lim = _mm512_set1_pd(-2147483648.0), hi_lim = _mm512_set1_pd(2147483647.0);
    __m512d d[2];
    d[0] = _mm512_cvtepi32_pd(_mm512_castsi512_si256(s));
    d[1] = _mm512_cvtepi32_pd(_mm512_extracti64x4_epi64(s, 1));
    __m256i cvals[2];
    if (use_beta) {
        __m512i cv = _mm512_loadu_si512((const void *)c);
        cvals[0] = _mm512_castsi512_si256(cv);
        cvals[1] = _mm512_extracti64x4_epi64(cv, 1);
    }
    __m256i out[2];
    for (int h = 0; h < 2; h++) {
        __m512d acc = _mm512_add_pd(_mm512_add_pd(d[h], rc), _mm512_loadu_pd(cc + 8 * h));
        __m512d v = _mm512_mul_pd(va, acc);
        if (use_beta) v = _mm512_add_pd(v, _mm512_mul_pd(vb, _mm512_cvtepi32_pd(cvals[h])));
        if (has_ra) v = _mm512_add_pd(v, ra);
        if (ca) v = _mm512_add_pd(v, _mm512_loadu_pd(ca + 8 * h));
        v = _mm512_roundscale_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        v = _mm512_min_pd(_mm512_max_pd(v, lo_lim), hi_lim);
        out[h] = _mm512_cvtpd_epi32(v);
    }
    _mm512_storeu_si512((void *)c, _mm512_inserti64x4(_mm512_castsi256_si512(out[0]), out[1], 1));
}

/* float32 -> 16 bfloat16, round to nearest even on the bits (gk_float_to_bfloat16_bits, 16 lanes). */
static inline __m256i zmm_to_bfloat16(__m512 f) {
    const __m512i x = _mm512_castps_si512(f);
    const __m512i lsb = _mm512_and_si512(_mm512_srli_epi32(x, 16), _mm512_set1_epi32(1));
    __m512i r = _mm512_add_epi32(_mm512_add_epi32(x, _mm512_set1_epi32(0x7fff)), lsb);
    const __mmask16 nan = _mm512_cmp_ps_mask(f, f, _CMP_UNORD_Q);
    r = _mm512_mask_blend_epi32(nan, r, _mm512_or_si512(x, _mm512_set1_epi32(0x00400000)));
    return _mm512_cvtepi32_epi16(_mm512_srli_epi32(r, 16));
}

/* The float epilogue (gk_int8_epilogue_t, GK_EP_INT32 sums) of the first m rows: y = float32(acc) * first
 * * second (+ bias), stored as ep->dst. */
static void int8_zmm_finish_float(int m, const int32_t *GK_RESTRICT s, void *GK_RESTRICT c, int64_t ldc,
                                const gk_int8_epilogue_t *ep) {
    const int dst = ep->dst;
    for (int i = 0; i < m; i++) {
        const __m512i r = _mm512_set1_epi32(ep->row_i32[i]);
        const __m512 rs = _mm512_set1_ps(ep->row_scale[i]);
        const __m512 rb = _mm512_set1_ps(ep->row_bias ? ep->row_bias[i] : 0.0f);
        for (int v = 0; v < NV; v++) {
            __m512i x = _mm512_add_epi32(_mm512_loadu_si512((const void *)(s + i * NR + 16 * v)), r);
            x = _mm512_add_epi32(x, _mm512_loadu_si512((const void *)(ep->col_i32 + 16 * v)));
            const __m512 cs = _mm512_loadu_ps(ep->col_scale + 16 * v);
            __m512 y = _mm512_mul_ps(_mm512_cvtepi32_ps(x), ep->row_scale_first ? rs : cs);
            y = _mm512_mul_ps(y, ep->row_scale_first ? cs : rs);
            if (ep->col_bias) y = _mm512_add_ps(y, _mm512_loadu_ps(ep->col_bias + 16 * v));
            else if (ep->row_bias) y = _mm512_add_ps(y, rb);
            const int64_t at = i * ldc + 16 * v;
            if (dst == GK_DST_FLOAT32) _mm512_storeu_ps((float *)c + at, y);
            else if (dst == GK_DST_FLOAT16)
                _mm256_storeu_si256((__m256i *)((uint16_t *)c + at),
                                    _mm512_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
            else _mm256_storeu_si256((__m256i *)((uint16_t *)c + at), zmm_to_bfloat16(y));
        }
    }
}

/* The epilogue for the first m rows of a tile whose raw sums are in s (see gk_int8_epilogue_t). */
static void I8_PASTE(I8_KERNEL_NAME, _finish)(const int m, const int32_t *GK_RESTRICT s, void *GK_RESTRICT cv,
                                               int64_t ldc, const gk_int8_epilogue_t *ep) {
    if (ep->dst != GK_DST_INT32) {
        int8_zmm_finish_float(m, s, cv, ldc, ep);
        return;
    }
    int32_t *c = (int32_t *)cv;
    if (ep->mode == GK_EP_INT32) {
        for (int i = 0; i < m; i++) {
            const __m512i r = _mm512_set1_epi32(ep->row_i32[i]);
            for (int v = 0; v < NV; v++) {
                __m512i x = _mm512_add_epi32(_mm512_loadu_si512((const void *)(s + i * NR + 16 * v)), r);
                x = _mm512_add_epi32(x, _mm512_loadu_si512((const void *)(ep->col_i32 + 16 * v)));
                _mm512_storeu_si512((void *)(c + i * ldc + 16 * v), x);
            }
        }
        return;
    }
    if (ep->mode == GK_EP_INT64) {
        const int use_c = ep->beta != 0.0;
        for (int i = 0; i < m; i++) {
            const __m512i r = _mm512_set1_epi64(ep->row_int[i]);
            for (int v = 0; v < NV; v++) {
                const __m512i sv = _mm512_loadu_si512((const void *)(s + i * NR + 16 * v));
                const int64_t *col = ep->col_int + 16 * v;
                int32_t *cp = c + i * ldc + 16 * v;
                __m512i lo = _mm512_cvtepi32_epi64(_mm512_castsi512_si256(sv));
                __m512i hi = _mm512_cvtepi32_epi64(_mm512_extracti64x4_epi64(sv, 1));
                lo = _mm512_add_epi64(_mm512_add_epi64(lo, r), _mm512_loadu_si512((const void *)col));
                hi = _mm512_add_epi64(_mm512_add_epi64(hi, r), _mm512_loadu_si512((const void *)(col + 8)));
                if (use_c) {
                    lo = _mm512_add_epi64(lo, _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)cp)));
                    hi = _mm512_add_epi64(hi, _mm512_cvtepi32_epi64(_mm256_loadu_si256((const __m256i *)(cp + 8))));
                }
                _mm512_storeu_si512((void *)cp, _mm512_inserti64x4(_mm512_castsi256_si512(_mm512_cvtsepi64_epi32(lo)),
                                                                   _mm512_cvtsepi64_epi32(hi), 1));
            }
        }
        return;
    }
    const __m512d va = _mm512_set1_pd(ep->alpha), vb = _mm512_set1_pd(ep->beta);
    const int use_beta = ep->beta != 0.0, has_ra = ep->row_add != NULL;
    for (int i = 0; i < m; i++) {
        __m512d rc = _mm512_set1_pd(ep->row_comp[i]);
        __m512d ra = _mm512_set1_pd(has_ra ? ep->row_add[i] : 0.0);
        for (int v = 0; v < NV; v++)
            int8_zmm_store16(c + i * ldc + 16 * v, _mm512_loadu_si512((const void *)(s + i * NR + 16 * v)), rc, ep->col_comp + 16 * v,
                           ep->col_add ? ep->col_add + 16 * v : NULL, ra, has_ra, va, vb, use_beta);
    }
}

#endif
