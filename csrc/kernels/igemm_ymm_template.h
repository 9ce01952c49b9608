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

/* The k loop with MR x 2 accumulators in named variables (GCC keeps arrays of vectors in memory),
 * ending with all sums stored to the aligned tile s[MR][NR]. */
#define I8_DECL(i) __m256i c##i##0 = zero, c##i##1 = zero; if (accumulate) { c##i##0 = _mm256_loadu_si256((const __m256i *)(s + (i) * NR)); c##i##1 = _mm256_loadu_si256((const __m256i *)(s + (i) * NR + 8)); }
#define I8_ROW(i)                                                                                    \
    {                                                                                                \
        int32_t w;                                                                                   \
        memcpy(&w, a + (KG * ES) * (i), 4);                                                          \
        const __m256i x = _mm256_set1_epi32(w);                                                                 \
        c##i##0 = I8_STEP(c##i##0, x, b0);                                                           \
        c##i##1 = I8_STEP(c##i##1, x, b1);                                                           \
    }
#define I8_SAVE(i) _mm256_storeu_si256((__m256i *)(s + (i) * NR), c##i##0); _mm256_storeu_si256((__m256i *)(s + (i) * NR + 8), c##i##1);
#if MR == 12
#define I8_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#elif MR == 6
#define I8_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#else
#error "unsupported MR"
#endif

static inline void i8_tile_sums(int64_t kgroups, const uint8_t *GK_RESTRICT a, const uint8_t *GK_RESTRICT b,
                                int32_t *GK_RESTRICT s, int accumulate) {
    const __m256i zero = _mm256_setzero_si256();
    I8_ROWS(I8_DECL)
    for (int64_t g = 0; g < kgroups; g++) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)b), b1 = _mm256_loadu_si256((const __m256i *)(b + 32));
        I8_ROWS(I8_ROW)
        a += MR * KG * ES;
        b += NR * KG * ES;
    }
    I8_ROWS(I8_SAVE)
}

static void I8_KERNEL_NAME(int64_t kgroups, const void *GK_RESTRICT av, const void *GK_RESTRICT bv,
                           int32_t *GK_RESTRICT s, int accumulate, int32_t *GK_RESTRICT c, int64_t ldc,
                           const gk_i8_epilogue_t *ep) {
    i8_tile_sums(kgroups, (const uint8_t *)av, (const uint8_t *)bv, s, accumulate);
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
