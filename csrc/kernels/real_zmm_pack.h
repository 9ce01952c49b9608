/* The AVX-512 kernels' packing of a plain A (rows contiguous in k) of 8-byte values into their panels (kernel.h
 * pack_a_plain): dgemm's 12 rows of doubles, cgemm's 6 rows of (re, im) float pairs, by in-register transposes. */
/* The including file defines PK_FN (the function's name) and PK_ROWS (the panel's rows: 12 or 6). The portable
 * packers walk 2 double rows down all of k before the next two, storing 16 bytes a panel row apart (pack_real.c), or
 * copy one complex value at a time (pack_complex_template.h); here each 4 k of the panel's rows are transposed
 * together, 4 rows x 4 k in ymm (then 2 x 4), so a panel row's values are stored at once. sgemm and zgemm keep the
 * portable packers, which these orders did not beat (see docs/decisions.md, real_zmm_pack.h). */
#define PK_CAT_(a, b) a##b
#define PK_CAT(a, b) PK_CAT_(a, b)
#define PK_NAME(x) PK_CAT(PK_FN, x)

/* Rows s, s + ld, s + 2 ld, s + 3 ld at k .. k + 3 -> d + q * pw for q = 0..3 (strides in values) */
static GK_FORCEINLINE void PK_NAME(_t4)(const double *s, int64_t ld, double *d, int64_t pw) {
    const __m256d x0 = _mm256_loadu_pd(s), x1 = _mm256_loadu_pd(s + ld), x2 = _mm256_loadu_pd(s + 2 * ld),
                  x3 = _mm256_loadu_pd(s + 3 * ld);
    const __m256d t0 = _mm256_unpacklo_pd(x0, x1), t1 = _mm256_unpackhi_pd(x0, x1), t2 = _mm256_unpacklo_pd(x2, x3),
                  t3 = _mm256_unpackhi_pd(x2, x3);
    _mm256_storeu_pd(d, _mm256_permute2f128_pd(t0, t2, 0x20));
    _mm256_storeu_pd(d + pw, _mm256_permute2f128_pd(t1, t3, 0x20));
    _mm256_storeu_pd(d + 2 * pw, _mm256_permute2f128_pd(t0, t2, 0x31));
    _mm256_storeu_pd(d + 3 * pw, _mm256_permute2f128_pd(t1, t3, 0x31));
}

/* Rows s, s + ld at k .. k + 3 -> d + q * pw */
static GK_FORCEINLINE void PK_NAME(_t2)(const double *s, int64_t ld, double *d, int64_t pw) {
    const __m256d x0 = _mm256_loadu_pd(s), x1 = _mm256_loadu_pd(s + ld);
    const __m256d lo = _mm256_unpacklo_pd(x0, x1), hi = _mm256_unpackhi_pd(x0, x1); /* k 0, 2 / k 1, 3 */
    _mm_storeu_pd(d, _mm256_castpd256_pd128(lo));
    _mm_storeu_pd(d + pw, _mm256_castpd256_pd128(hi));
    _mm_storeu_pd(d + 2 * pw, _mm256_extractf128_pd(lo, 1));
    _mm_storeu_pd(d + 3 * pw, _mm256_extractf128_pd(hi, 1));
}

/* One panel: its first w rows (w <= PK_ROWS) from s, kc deep; rows w .. PK_ROWS - 1 zero. */
static GK_FORCEINLINE void PK_NAME(_panel)(const double *s, int64_t ld, int w, int64_t kc, double *GK_RESTRICT d) {
    const int w4 = w & ~3, w2 = w & ~1;
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4) {
        for (int x = 0; x < w4; x += 4) PK_NAME(_t4)(s + x * ld + k, ld, d + k * PK_ROWS + x, PK_ROWS);
        if (w2 > w4) PK_NAME(_t2)(s + w4 * ld + k, ld, d + k * PK_ROWS + w4, PK_ROWS);
    }
    /* the rest one value at a time, by memcpy: cgemm's are float pairs */
    for (; k < kc; k++)
        for (int x = 0; x < w2; x++) memcpy(d + k * PK_ROWS + x, s + x * ld + k, 8);
    if (w2 < PK_ROWS)
        for (k = 0; k < kc; k++)
            for (int x = w2; x < PK_ROWS; x++) {
                if (x < w) memcpy(d + k * PK_ROWS + x, s + x * ld + k, 8);
                else memset(d + k * PK_ROWS + x, 0, 8);
            }
}

/* mc rows of A (lda values apart: complex ones for cgemm), kc deep, into panels of PK_ROWS rows at dst */
static void PK_FN(const void *A_, int64_t lda, int64_t mc, int64_t kc, void *GK_RESTRICT dst_) {
    const double *A = (const double *)A_;
    double *dst = (double *)dst_;
    int64_t i0 = 0;
    for (; i0 + PK_ROWS <= mc; i0 += PK_ROWS) PK_NAME(_panel)(A + i0 * lda, lda, PK_ROWS, kc, dst + i0 * kc);
    if (i0 < mc) PK_NAME(_panel)(A + i0 * lda, lda, (int)(mc - i0), kc, dst + i0 * kc);
}

#undef PK_NAME
#undef PK_FN
#undef PK_ROWS
