/* AArch64 FEAT_DotProd int8 microkernel (8 x 12, k in groups of 4 bytes, SDOT by element), exact: the
 * unsigned A bytes are mapped onto the signed instruction as a - 128 and 128 * column sums of B added back. */
#include "../kernel.h"
#if GEMMKIT_ARM
#include <arm_neon.h>

#define MR 8
#define NR 12
#define KG 4

/* sum_k a[i][k] * b[k][j] with a unsigned = sum_k (a[i][k] - 128) * b[k][j] + 128 * sum_k b[k][j]: the first
 * sum by SDOT on a ^ 0x80 (= a - 128 as int8), the second as -(SDOT of b against the same 0x80 bytes, -128 as
 * int8), so one constant register serves both and the 24 + 3 accumulators, A, B and it fit the 32 registers.
 * Every partial sum is bounded by 128 * 128 * k (k <= k_chunk = 16384: 2^28), so nothing wraps. */
#define Q_ROWS(X) X(0, a0, 0) X(1, a0, 1) X(2, a0, 2) X(3, a0, 3) X(4, a1, 0) X(5, a1, 1) X(6, a1, 2) X(7, a1, 3)
#define Q_DECL(i, av, l) int32x4_t c##i##0 = vdupq_n_s32(0), c##i##1 = c##i##0, c##i##2 = c##i##0;
#define Q_SAVE(i, av, l)                                                                             \
    {                                                                                                \
        int32_t *si = s + (i) * NR;                                                                  \
        int32x4_t t0 = vsubq_s32(c##i##0, k0), t1 = vsubq_s32(c##i##1, k1), t2 = vsubq_s32(c##i##2, k2); \
        if (accumulate) {                                                                            \
            t0 = vaddq_s32(t0, vld1q_s32(si));                                                       \
            t1 = vaddq_s32(t1, vld1q_s32(si + 4));                                                   \
            t2 = vaddq_s32(t2, vld1q_s32(si + 8));                                                   \
        }                                                                                            \
        vst1q_s32(si, t0);                                                                           \
        vst1q_s32(si + 4, t1);                                                                       \
        vst1q_s32(si + 8, t2);                                                                       \
    }

#define Q_DOT(i, av, l)                                                                              \
    c##i##0 = vdotq_laneq_s32(c##i##0, b0, av, l);                                                   \
    c##i##1 = vdotq_laneq_s32(c##i##1, b1, av, l);                                                   \
    c##i##2 = vdotq_laneq_s32(c##i##2, b2, av, l);

static void tile_sums_dotprod(int64_t kgroups, const uint8_t *GK_RESTRICT a, const int8_t *GK_RESTRICT b,
                              int32_t *GK_RESTRICT s, int accumulate) {
    const int8x16_t m128 = vdupq_n_s8(-128); /* 0x80 bytes: the flip of A and -128 for the column sums */
    const int8_t *b_start = b;
    Q_ROWS(Q_DECL)
    /* the k loop: 24 SDOT, 2 EOR, 5 loads per group (the column sums apart, below: no spills) */
    for (int64_t g = 0; g < kgroups; g++) {
        const int8x16_t a0 = veorq_s8(vld1q_s8((const int8_t *)a), m128);
        const int8x16_t a1 = veorq_s8(vld1q_s8((const int8_t *)a + 16), m128);
        const int8x16_t b0 = vld1q_s8(b), b1 = vld1q_s8(b + 16), b2 = vld1q_s8(b + 32);
        Q_ROWS(Q_DOT)
        a += MR * KG;
        b += NR * KG;
    }
    /* -128 * column sums of the B panel (just read: in L1) */
    int32x4_t k0 = vdupq_n_s32(0), k1 = k0, k2 = k0;
    for (int64_t g = 0; g < kgroups; g++) {
        k0 = vdotq_s32(k0, vld1q_s8(b_start), m128);
        k1 = vdotq_s32(k1, vld1q_s8(b_start + 16), m128);
        k2 = vdotq_s32(k2, vld1q_s8(b_start + 32), m128);
        b_start += NR * KG;
    }
    Q_ROWS(Q_SAVE)
}

static void ukernel_i8_dotprod_8x12(int64_t kgroups, const void *GK_RESTRICT a, const void *GK_RESTRICT b,
                                    int32_t *GK_RESTRICT s, int accumulate, void *GK_RESTRICT c, int64_t ldc,
                                    const gk_int8_epilogue_t *ep) {
    tile_sums_dotprod(kgroups, (const uint8_t *)a, (const int8_t *)b, s, accumulate);
    if (ep == NULL) return;
    int64_t s64[MR * NR];
    for (int t = 0; t < MR * NR; t++) s64[t] = s[t];
    gk_int8_epilogue_scalar(MR, NR, s64, NR, c, ldc, ep);
}

GK_ASSERT_INT8_TILE(MR, NR);
const gk_int8_kernel_t gk_int8_kernel_dotprod = {
    "ukernel_i8_dotprod_8x12", MR, NR, KG, 1, GK_INT8_K_CHUNK,
    ukernel_i8_dotprod_8x12, NULL, NULL,
};
#endif
