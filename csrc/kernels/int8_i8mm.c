/* AArch64 FEAT_I8MM int8 microkernel (8 x 8, USMMLA on 2 x 8 by 8 x 2 tiles): unsigned A by signed B in one
 * instruction, exact, on panels packed in 8-byte k groups (each USMMLA operand one 16-byte load). */
#include "../kernel.h"
#if GEMMKIT_ARM
#include <arm_neon.h>

#define MR 8
#define NR 8
#define KG 8

/* Packed in 8-byte k groups (csrc/pack_int8.c): per group the 8 rows of A (8 columns of B) hold 8 bytes each,
 * so rows 2p, 2p + 1 are the 16 bytes at 16 p, USMMLA's 2 x 8 operand as loaded (no permute in the k loop).
 * Accumulator m<p><q>: rows 2p, 2p+1 by columns 2q, 2q+1, as [r0c0, r0c1, r1c0, r1c1]. Sums are bounded by
 * 255 * 128 * k (k <= 16384). */
#define M_COLS(X, p) X(p, 0) X(p, 1) X(p, 2) X(p, 3)
#define M_ALL(X) M_COLS(X, 0) M_COLS(X, 1) M_COLS(X, 2) M_COLS(X, 3)
#define M_DECL(p, q) int32x4_t m##p##q = vdupq_n_s32(0);
#define M_STEP(p, q) m##p##q = vusmmlaq_s32(m##p##q, x##p, y##q);

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

static void tile_sums_i8mm(int64_t kgroups, const uint8_t *GK_RESTRICT a, const int8_t *GK_RESTRICT b,
                           int32_t *GK_RESTRICT s, int accumulate) {
    M_ALL(M_DECL)
    /* the k loop: 16 USMMLA, 8 loads per group of 8 */
    for (int64_t g = 0; g < kgroups; g++) {
        const uint8x16_t x0 = vld1q_u8(a), x1 = vld1q_u8(a + 16), x2 = vld1q_u8(a + 32), x3 = vld1q_u8(a + 48);
        const int8x16_t y0 = vld1q_s8(b), y1 = vld1q_s8(b + 16), y2 = vld1q_s8(b + 32), y3 = vld1q_s8(b + 48);
        M_ALL(M_STEP)
        a += MR * KG;
        b += NR * KG;
    }
    m_save(s, accumulate, m00, m01, m02, m03);
    m_save(s + 2 * NR, accumulate, m10, m11, m12, m13);
    m_save(s + 4 * NR, accumulate, m20, m21, m22, m23);
    m_save(s + 6 * NR, accumulate, m30, m31, m32, m33);
}

static void ukernel_i8_i8mm_8x8(int64_t kgroups, const void *GK_RESTRICT a, const void *GK_RESTRICT b,
                                int32_t *GK_RESTRICT s, int accumulate, void *GK_RESTRICT c, int64_t ldc,
                                const gk_int8_epilogue_t *ep) {
    tile_sums_i8mm(kgroups, (const uint8_t *)a, (const int8_t *)b, s, accumulate);
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
