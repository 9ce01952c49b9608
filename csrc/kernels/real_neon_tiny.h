/* The tiny path's in-place k loops on NEON (GK_TINY_SUMS6 / GK_TINY_SUMS5 of real_tiny_template.h): 6 or 5 rows
 * of a plain A, one value per row and k, against b's 64-byte row (4 q registers). Included after T, TINY_FN,
 * NTQ_V (T's q register type) and NTQ_SUF (f32 / f64). */
#ifndef GEMMKIT_REAL_NEON_TINY_H
#define GEMMKIT_REAL_NEON_TINY_H
#define NTQ_CAT_(a, b) a##b
#define NTQ_CAT(a, b) NTQ_CAT_(a, b)
#endif
#define NTQ_OP(op) NTQ_CAT(op, NTQ_CAT(_, NTQ_SUF))
#define NTQ_L ((int)(16 / sizeof(T))) /* lanes of a q register */

/* R rows (a constant at each call) x 4 q: c[r][0..4 NTQ_L) = sum_k a[r * lda + k] * b[k * ldb + 0..4 NTQ_L),
 * one FMLA per (row, q, k) in k order: 24 (20) accumulators, the 6 (5) values of a (by element), b one q at a
 * time (b's 4 q at once and a's 6 values left 34 live registers: GCC kept two sums on the stack). */
static GK_FORCEINLINE void NTQ_CAT(TINY_FN, _neon_sums)(const int R, int64_t K, const T *a, int64_t lda,
                                                         const T *b, int64_t ldb, T *c, int64_t ldc) {
    NTQ_V acc[6][4];
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) acc[r][q] = NTQ_OP(vdupq_n)((T)0);
    for (int64_t k = 0; k < K; k++) {
        const T *bk = b + k * ldb;
        T ar[6];
#pragma GCC unroll 6
        for (int r = 0; r < R; r++) ar[r] = a[r * lda + k];
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) {
            const NTQ_V bq = NTQ_OP(vld1q)(bk + q * NTQ_L);
#pragma GCC unroll 6
            for (int r = 0; r < R; r++) acc[r][q] = NTQ_OP(vfmaq_n)(acc[r][q], bq, ar[r]);
        }
    }
#pragma GCC unroll 6
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int q = 0; q < 4; q++) NTQ_OP(vst1q)(c + r * ldc + q * NTQ_L, acc[r][q]);
}

/* Out of line, as the zmm loops (real_zmm_tiny.h): the big tiny function keeps its own registers. */
#define NTQ_SUMS(NAME, R)                                                                                    \
    static __attribute__((noinline, optimize("no-schedule-insns"))) void NTQ_CAT(TINY_FN, NAME)(int64_t K, const T *a, int64_t lda, const T *b, \
                                                                  int64_t ldb, T *c, int64_t ldc) {          \
        NTQ_CAT(TINY_FN, _neon_sums)(R, K, a, lda, b, ldb, c, ldc);                                          \
    }
NTQ_SUMS(_sums6, 6)
NTQ_SUMS(_sums5, 5)
#undef NTQ_SUMS
#undef NTQ_OP
#undef NTQ_L
#define GK_TINY_SUMS6 NTQ_CAT(TINY_FN, _sums6)
#define GK_TINY_SUMS5 NTQ_CAT(TINY_FN, _sums5)
