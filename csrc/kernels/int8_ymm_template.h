/* Body shared by the 256-bit int8 microkernels (AVX2 widening and AVX-VNNI): the including file
 * defines MR, NV, KG, ES, I8_STEP(acc, a_bcast, b) and the kernel names, then includes this. */
#include <immintrin.h>
#include <string.h>
#include "../gemmkit_internal.h"

#define NR (8 * NV)

/* S (8 int32 sums of row i) -> C[0:8] through the exact double-precision epilogue. */
static inline void i8_ymm_store8(int32_t *c, __m256i s, __m256d rc, const double *cc, const double *ca,
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
#include "int8_tile_sums.h"

static void I8_KERNEL_NAME(int64_t kgroups, const void *GK_RESTRICT av, const void *GK_RESTRICT bv,
                           int32_t *GK_RESTRICT s, int accumulate, int32_t *GK_RESTRICT c, int64_t ldc,
                           const gk_i8_epilogue_t *ep) {
    i8_tile_sums(kgroups, (const uint8_t *)av, (const uint8_t *)bv, s, accumulate, ep != NULL ? c : NULL, ldc);
    if (ep == NULL) return;
    if (ep->mode == GK_EP_INT32) { /* (GK_EP_INT64 takes the exact double path: AVX2 has no vpmovsqd) */
        for (int i = 0; i < MR; i++) {
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
    for (int i = 0; i < MR; i++) {
        __m256d rc = _mm256_set1_pd(ep->row_comp[i]);
        __m256d ra = _mm256_set1_pd(has_ra ? ep->row_add[i] : 0.0);
        for (int v = 0; v < NV; v++)
            i8_ymm_store8(c + i * ldc + 8 * v, _mm256_loadu_si256((const __m256i *)(s + i * NR + 8 * v)), rc, ep->col_comp + 8 * v,
                          ep->col_add ? ep->col_add + 8 * v : NULL, ra, has_ra, va, vb, use_beta);
    }
}
