/* Body shared by the 256-bit int8 microkernels (AVX2 widening and AVX-VNNI): the including file
 * defines MR, NV, KG, ES, I8_STEP(acc, a_bcast, b) and the kernel names, then includes this. */
#include <immintrin.h>
#include <string.h>
#include "../kernel.h"
#include "../convert.h"

#define NR (8 * NV)

/* S (8 int32 sums of row i) -> C[0:8] through the exact double-precision epilogue. */
static inline void int8_ymm_store8(int32_t *c, __m256i s, __m256d rc, const double *cc, const double *ca,
                                 __m256d ra, int has_ra, __m256d va, __m256d vb, int use_beta) {
    const __m256d lo_lim = _mm256_set1_pd(-2147483648.0), hi_lim = _mm256_set1_pd(2147483647.0);
    __m128i cv[2];
    if (use_beta) {
        cv[0] = _mm_loadu_si128((const __m128i *)c);
        cv[1] = _mm_loadu_si128((const __m128i *)(c + 4));
    }
    __m128i out[2];
    for (int h = 0; h < 2; h++) {
        __m128i part = h == 0 ? _mm256_castsi256_si128(s) : _mm256_extracti128_si256(s, 1);
        __m256d acc = _mm256_add_pd(_mm256_add_pd(_mm256_cvtepi32_pd(part), rc), _mm256_loadu_pd(cc + 4 * h));
        __m256d v = _mm256_mul_pd(va, acc);
        if (use_beta) v = _mm256_add_pd(v, _mm256_mul_pd(vb, _mm256_cvtepi32_pd(cv[h])));
        if (has_ra) v = _mm256_add_pd(v, ra);
        if (ca) v = _mm256_add_pd(v, _mm256_loadu_pd(ca + 4 * h));
        v = _mm256_round_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
        v = _mm256_min_pd(_mm256_max_pd(v, lo_lim), hi_lim);
        out[h] = _mm256_cvtpd_epi32(v);
    }
    _mm256_storeu_si256((__m256i *)c, _mm256_set_m128i(out[1], out[0]));
}

#define I8_VEC __m256i
#define I8_LANES 8
#define I8_ZERO() _mm256_setzero_si256()
#define I8_LOAD(p) _mm256_loadu_si256((const __m256i *)(p))
#define I8_STORE(p, v) _mm256_storeu_si256((__m256i *)(p), (v))
#define I8_BCAST(w) _mm256_set1_epi32(w)
#define I8_ADD(x, y) _mm256_add_epi32(x, y)
#include "int8_tile_sums.h"

/* float32 -> 8 bfloat16, round to nearest even on the bits (gk_float_to_bfloat16_bits, 8 lanes). */
static inline __m128i ymm_to_bfloat16(__m256 f) {
    const __m256i x = _mm256_castps_si256(f);
    const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(x, 16), _mm256_set1_epi32(1));
    __m256i r = _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb);
    const __m256i nan = _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q));
    r = _mm256_blendv_epi8(r, _mm256_or_si256(x, _mm256_set1_epi32(0x00400000)), nan);
    r = _mm256_srli_epi32(r, 16);
    return _mm_packus_epi32(_mm256_castsi256_si128(r), _mm256_extracti128_si256(r, 1));
}

/* The float epilogue (gk_int8_epilogue_t, GK_EP_INT32 sums) of the first m rows: y = float32(acc) * first
 * * second (+ bias), stored as ep->dst (F16C for float16). */
static void int8_ymm_finish_float(int m, const int32_t *GK_RESTRICT s, void *GK_RESTRICT c, int64_t ldc,
                                const gk_int8_epilogue_t *ep) {
    const int dst = ep->dst;
    for (int i = 0; i < m; i++) {
        const __m256i r = _mm256_set1_epi32(ep->row_i32[i]);
        const __m256 rs = _mm256_set1_ps(ep->row_scale[i]);
        const __m256 rb = _mm256_set1_ps(ep->row_bias ? ep->row_bias[i] : 0.0f);
        for (int v = 0; v < NV; v++) {
            __m256i x = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(s + i * NR + 8 * v)), r);
            x = _mm256_add_epi32(x, _mm256_loadu_si256((const __m256i *)(ep->col_i32 + 8 * v)));
            const __m256 cs = _mm256_loadu_ps(ep->col_scale + 8 * v);
            __m256 y = _mm256_mul_ps(_mm256_cvtepi32_ps(x), ep->row_scale_first ? rs : cs);
            y = _mm256_mul_ps(y, ep->row_scale_first ? cs : rs);
            if (ep->col_bias) y = _mm256_add_ps(y, _mm256_loadu_ps(ep->col_bias + 8 * v));
            else if (ep->row_bias) y = _mm256_add_ps(y, rb);
            const int64_t at = i * ldc + 8 * v;
            if (dst == GK_DST_FLOAT32) _mm256_storeu_ps((float *)c + at, y);
            else if (dst == GK_DST_FLOAT16)
                _mm_storeu_si128((__m128i *)((uint16_t *)c + at), _mm256_cvtps_ph(y, _MM_FROUND_TO_NEAREST_INT));
            else _mm_storeu_si128((__m128i *)((uint16_t *)c + at), ymm_to_bfloat16(y));
        }
    }
}

/* The epilogue for the first m rows of a tile whose raw sums are in s (see gk_int8_epilogue_t). */
static void I8_PASTE(I8_KERNEL_NAME, _finish)(const int m, const int32_t *GK_RESTRICT s, void *GK_RESTRICT cv,
                                               int64_t ldc, const gk_int8_epilogue_t *ep) {
    if (ep->dst != GK_DST_INT32) {
        int8_ymm_finish_float(m, s, cv, ldc, ep);
        return;
    }
    int32_t *c = (int32_t *)cv;
    if (ep->mode == GK_EP_INT32) { /* (GK_EP_INT64 takes the exact double path: AVX2 has no vpmovsqd) */
        for (int i = 0; i < m; i++) {
            const __m256i r = _mm256_set1_epi32(ep->row_i32[i]);
            for (int v = 0; v < NV; v++) {
                __m256i x = _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)(s + i * NR + 8 * v)), r);
                x = _mm256_add_epi32(x, _mm256_loadu_si256((const __m256i *)(ep->col_i32 + 8 * v)));
                _mm256_storeu_si256((__m256i *)(c + i * ldc + 8 * v), x);
            }
        }
        return;
    }
    const __m256d va = _mm256_set1_pd(ep->alpha), vb = _mm256_set1_pd(ep->beta);
    const int use_beta = ep->beta != 0.0, has_ra = ep->row_add != NULL;
    for (int i = 0; i < m; i++) {
        __m256d rc = _mm256_set1_pd(ep->row_comp[i]);
        __m256d ra = _mm256_set1_pd(has_ra ? ep->row_add[i] : 0.0);
        for (int v = 0; v < NV; v++)
            int8_ymm_store8(c + i * ldc + 8 * v, _mm256_loadu_si256((const __m256i *)(s + i * NR + 8 * v)), rc, ep->col_comp + 8 * v,
                          ep->col_add ? ep->col_add + 8 * v : NULL, ra, has_ra, va, vb, use_beta);
    }
}

static void I8_KERNEL_NAME(int64_t kgroups, const void *GK_RESTRICT av, const void *GK_RESTRICT bv,
                           int32_t *GK_RESTRICT s, int accumulate, void *GK_RESTRICT cv, int64_t ldc,
                           const gk_int8_epilogue_t *ep) {
    int8_tile_sums(kgroups, (const uint8_t *)av, (const uint8_t *)bv, s, accumulate, ep != NULL ? cv : NULL,
                 ep != NULL ? ldc * gk_dst_size(ep->dst) : 0, NULL, 0, NULL, NULL);
    if (ep != NULL) I8_PASTE(I8_KERNEL_NAME, _finish)(MR, s, cv, ldc, ep);
}

#include "int8_row_kernels.h"
