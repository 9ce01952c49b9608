/* AArch64 FEAT_I8MM int8 microkernel (8 x 8, USMMLA on 2 x 8 by 8 x 2 tiles): unsigned A by signed B in one
 * instruction, exact, on the portable 4-byte k groups (two groups zipped into the 8-deep operand). */
#include "../kernel.h"
#if GEMMKIT_ARM
#include <arm_neon.h>

#define MR 8
#define NR 8
#define KG 4

/* Accumulator m<p><q>: rows 2p, 2p+1 by columns 2q, 2q+1, as [r0c0, r0c1, r1c0, r1c1]. Per pair of k groups
 * the 4-byte runs of two groups are interleaved by 32-bit zips: zip1(g0 rows 0-3, g1 rows 0-3) is rows 0 and
 * 1 with 8 k values each, the 2 x 8 operand of USMMLA. Sums are bounded by 255 * 128 * k (k <= 16384). */
#define M_COLS(X, p) X(p, 0) X(p, 1) X(p, 2) X(p, 3)
#define M_ALL(X) M_COLS(X, 0) M_COLS(X, 1) M_COLS(X, 2) M_COLS(X, 3)
#define M_DECL(p, q) int32x4_t m##p##q = vdupq_n_s32(0);
#define M_STEP(p, q) m##p##q = vusmmlaq_s32(m##p##q, x##p, y##q);

static GK_FORCEINLINE int32x4_t m_ld(const uint8_t *p) { return vreinterpretq_s32_u8(vld1q_u8(p)); }

#define M_PAIR(A0, A1, A0N, A1N, B0, B1, B0N, B1N)                                                     \
    {                                                                                                \
        const uint8x16_t x0 = vreinterpretq_u8_s32(vzip1q_s32(A0, A0N));                             \
        const uint8x16_t x1 = vreinterpretq_u8_s32(vzip2q_s32(A0, A0N));                             \
        const uint8x16_t x2 = vreinterpretq_u8_s32(vzip1q_s32(A1, A1N));                             \
        const uint8x16_t x3 = vreinterpretq_u8_s32(vzip2q_s32(A1, A1N));                             \
        const int8x16_t y0 = vreinterpretq_s8_s32(vzip1q_s32(B0, B0N));                              \
        const int8x16_t y1 = vreinterpretq_s8_s32(vzip2q_s32(B0, B0N));                              \
        const int8x16_t y2 = vreinterpretq_s8_s32(vzip1q_s32(B1, B1N));                              \
        const int8x16_t y3 = vreinterpretq_s8_s32(vzip2q_s32(B1, B1N));                              \
        M_ALL(M_STEP)                                                                                \
    }

static GK_FORCEINLINE void m_save(int32_t *GK_RESTRICT s, int accumulate, int32x4_t c0, int32x4_t c1, int32x4_t c2,
                                  int32x4_t c3) {
    /* rows r, r + 1 of the tile from the four column-pair accumulators of their row pair */
    const int64x2_t d0 = vreinterpretq_s64_s32(c0), d1 = vreinterpretq_s64_s32(c1);
    const int64x2_t d2 = vreinterpretq_s64_s32(c2), d3 = vreinterpretq_s64_s32(c3);
    int32x4_t r00 = vreinterpretq_s32_s64(vzip1q_s64(d0, d1)), r01 = vreinterpretq_s32_s64(vzip1q_s64(d2, d3));
    int32x4_t r10 = vreinterpretq_s32_s64(vzip2q_s64(d0, d1)), r11 = vreinterpretq_s32_s64(vzip2q_s64(d2, d3));
    if (accumulate) {
        r00 = vaddq_s32(r00, vld1q_s32(s));
        r01 = vaddq_s32(r01, vld1q_s32(s + 4));
        r10 = vaddq_s32(r10, vld1q_s32(s + NR));
        r11 = vaddq_s32(r11, vld1q_s32(s + NR + 4));
    }
    vst1q_s32(s, r00);
    vst1q_s32(s + 4, r01);
    vst1q_s32(s + NR, r10);
    vst1q_s32(s + NR + 4, r11);
}

static void tile_sums_i8mm(int64_t kgroups, const uint8_t *GK_RESTRICT a, const uint8_t *GK_RESTRICT b,
                           int32_t *GK_RESTRICT s, int accumulate) {
    M_ALL(M_DECL)
    int64_t g = 0;
    for (; g + 2 <= kgroups; g += 2) {
        M_PAIR(m_ld(a), m_ld(a + 16), m_ld(a + 32), m_ld(a + 48), m_ld(b), m_ld(b + 16), m_ld(b + 32), m_ld(b + 48))
        a += 2 * MR * KG;
        b += 2 * NR * KG;
    }
    if (g < kgroups) { /* an odd last group: its partner is zero */
        const int32x4_t z = vdupq_n_s32(0);
        M_PAIR(m_ld(a), m_ld(a + 16), z, z, m_ld(b), m_ld(b + 16), z, z)
    }
    m_save(s, accumulate, m00, m01, m02, m03);
    m_save(s + 2 * NR, accumulate, m10, m11, m12, m13);
    m_save(s + 4 * NR, accumulate, m20, m21, m22, m23);
    m_save(s + 6 * NR, accumulate, m30, m31, m32, m33);
}

static void ukernel_i8_i8mm_8x8(int64_t kgroups, const void *GK_RESTRICT a, const void *GK_RESTRICT b,
                                int32_t *GK_RESTRICT s, int accumulate, void *GK_RESTRICT c, int64_t ldc,
                                const gk_int8_epilogue_t *ep) {
    tile_sums_i8mm(kgroups, (const uint8_t *)a, (const uint8_t *)b, s, accumulate);
    if (ep == NULL) return;
    int64_t s64[MR * NR];
    for (int t = 0; t < MR * NR; t++) s64[t] = s[t];
    gk_int8_epilogue_scalar(MR, NR, s64, NR, c, ldc, ep);
}

GK_ASSERT_INT8_TILE(MR, NR);
const gk_int8_kernel_t gk_int8_kernel_i8mm = {
    "ukernel_i8_i8mm_8x8", MR, NR, KG, 1, GK_INT8_K_CHUNK,
    ukernel_i8_i8mm_8x8, NULL, NULL,
};
#endif
