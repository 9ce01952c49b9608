/* The NEON real microkernel body for the first m rows of an 8 x (3 q registers) tile, written once for the sgemm
 * 8 x 12 and dgemm 8 x 6 kernels: the full tile (m = 8) and the 1..7-row kernels of edge row panels (into C). */
/* Included after T, NTT_V (T's q register type) and NTT_SUF (f32 / f64), with MR 8. Per k the 8 values of A lie
 * in q registers of L lanes (row i: register i / L, lane i % L: 2 of 4 floats, 4 of 2 doubles) and the row's 3 q
 * of B by element (FMLA, one rounding); the store is alpha * sum, then + beta * C unless beta == 0 (C not read).
 * Rows past m are left out at compile time (m a constant at every call): the same instructions per row as the
 * full tile, so an edge row's result is bit for bit the full tile's. */
#ifndef GEMMKIT_REAL_NEON_TILE_H
#define GEMMKIT_REAL_NEON_TILE_H
#define NTT_CAT_(a, b) a##b
#define NTT_CAT(a, b) NTT_CAT_(a, b)
#endif
#define NTT_OP(op) NTT_CAT(op, NTT_CAT(_, NTT_SUF))
#define NTT_L ((int)(16 / sizeof(T))) /* lanes of a q register */

#define NTT_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define NTT_DECL(i) NTT_V c##i##0 = NTT_OP(vdupq_n)((T)0), c##i##1 = c##i##0, c##i##2 = c##i##0;
#define NTT_FMA(i)                                                                                   \
    if ((i) < m) {                                                                                   \
        c##i##0 = NTT_OP(vfmaq_laneq)(c##i##0, b0, ar[(i) / NTT_L], (i) % NTT_L);                     \
        c##i##1 = NTT_OP(vfmaq_laneq)(c##i##1, b1, ar[(i) / NTT_L], (i) % NTT_L);                     \
        c##i##2 = NTT_OP(vfmaq_laneq)(c##i##2, b2, ar[(i) / NTT_L], (i) % NTT_L);                     \
    }
#define NTT_STORE(i)                                                                                 \
    if ((i) < m) {                                                                                   \
        T *ci = c + (i) * ldc;                                                                       \
        if (beta == (T)0) {                                                                          \
            NTT_OP(vst1q)(ci, NTT_OP(vmulq_n)(c##i##0, alpha));                                       \
            NTT_OP(vst1q)(ci + NTT_L, NTT_OP(vmulq_n)(c##i##1, alpha));                               \
            NTT_OP(vst1q)(ci + 2 * NTT_L, NTT_OP(vmulq_n)(c##i##2, alpha));                           \
        } else {                                                                                     \
            NTT_OP(vst1q)(ci, NTT_OP(vaddq)(NTT_OP(vmulq_n)(c##i##0, alpha),                          \
                                            NTT_OP(vmulq_n)(NTT_OP(vld1q)(ci), beta)));               \
            NTT_OP(vst1q)(ci + NTT_L, NTT_OP(vaddq)(NTT_OP(vmulq_n)(c##i##1, alpha),                  \
                                                    NTT_OP(vmulq_n)(NTT_OP(vld1q)(ci + NTT_L), beta))); \
            NTT_OP(vst1q)(ci + 2 * NTT_L,                                                            \
                          NTT_OP(vaddq)(NTT_OP(vmulq_n)(c##i##2, alpha),                              \
                                        NTT_OP(vmulq_n)(NTT_OP(vld1q)(ci + 2 * NTT_L), beta)));       \
        }                                                                                            \
    }

/* C[0:m, 0:3L] = alpha * A B + beta * C; a: MR values per k (a packed panel is zero-padded to MR rows), only
 * the q registers of A that hold the first m rows are loaded. */
static GK_FORCEINLINE void NTT_CAT(NTT_SUF, _neon_tile_rows)(const int m, int64_t kc, const T *GK_RESTRICT a,
                                                             int64_t rsa, const T *GK_RESTRICT b, int64_t rsb,
                                                             T *GK_RESTRICT c, int64_t ldc, T alpha, T beta) {
    NTT_ROWS(NTT_DECL)
    for (int64_t k = 0; k < kc; k++) {
        NTT_V ar[MR / NTT_L];
#pragma GCC unroll 4
        for (int q = 0; q < MR / NTT_L; q++)
            if (q * NTT_L < m) ar[q] = NTT_OP(vld1q)(a + q * NTT_L);
        const NTT_V b0 = NTT_OP(vld1q)(b), b1 = NTT_OP(vld1q)(b + NTT_L), b2 = NTT_OP(vld1q)(b + 2 * NTT_L);
        NTT_ROWS(NTT_FMA)
        a += rsa;
        b += rsb;
    }
    NTT_ROWS(NTT_STORE)
}

/* One kernel of the table (gk_ukernel_fn) for the first M rows: M = MR is the full tile. */
#define GK_NEON_ROWS_KERNEL(NAME, M)                                                                 \
    static void NAME(int64_t kc, const void *GK_RESTRICT av, int64_t rsa, const void *GK_RESTRICT bv, int64_t rsb, \
                     void *GK_RESTRICT cv, int64_t ldc, const void *alpha_p, const void *beta_p) {   \
        NTT_CAT(NTT_SUF, _neon_tile_rows)(M, kc, (const T *)av, rsa, (const T *)bv, rsb, (T *)cv, ldc,   \
                                          *(const T *)alpha_p, *(const T *)beta_p);                   \
    }
/* The full tile P_8xW and its first 1..7 rows P_1xW .. P_7xW (edge row panels, skinny M), and the kernel table's
 * `rows_kernels` of them (MR = 8). */
#define GK_NEON_ROWS_KERNELS(P, W)                                                                    \
    GK_NEON_ROWS_KERNEL(P##_1x##W, 1) GK_NEON_ROWS_KERNEL(P##_2x##W, 2) GK_NEON_ROWS_KERNEL(P##_3x##W, 3)   \
    GK_NEON_ROWS_KERNEL(P##_4x##W, 4) GK_NEON_ROWS_KERNEL(P##_5x##W, 5) GK_NEON_ROWS_KERNEL(P##_6x##W, 6)   \
    GK_NEON_ROWS_KERNEL(P##_7x##W, 7) GK_NEON_ROWS_KERNEL(P##_8x##W, 8)                               \
    static const gk_ukernel_fn rows_kernels[MR] = {NULL, P##_1x##W, P##_2x##W, P##_3x##W,              \
                                                   P##_4x##W, P##_5x##W, P##_6x##W, P##_7x##W};
