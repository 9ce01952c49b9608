/* AArch64 FEAT_BF16 (Neoverse V1 / N2 / V2, Graviton 3 / 4, Apple M2 and later): an 8 x 8 bfloat16 pair kernel on
 * BFMMLA (a 2 x 4 by 4 x 2 bfloat16 block into 2 x 2 float sums), panels in groups of 2 k pairs per row and column. */
#include "../kernel.h"
#if GEMMKIT_ARM
#include <arm_neon.h>
#include "../convert.h"

#define MR 8
#define NR 8
#define KG 2 /* k pairs per row of A's groups and per column of B's: BFMMLA's 4 values */

/* Per group, rows 2p, 2p + 1 of A are the 16 bytes at 16 p and columns 2q, 2q + 1 of B those at 16 q: each BFMMLA
 * operand one load. Accumulator m<p><q>: rows 2p, 2p + 1 by columns 2q, 2q + 1, as [r0c0, r0c1, r1c0, r1c1]. Without
 * FEAT_EBF16 the sums of a BFMMLA are unfused and round to odd, subnormal inputs and results flushed (the packers
 * report subnormal inputs: ukernel_exact below). */
#define M_COLS(X, p) X(p, 0) X(p, 1) X(p, 2) X(p, 3)
#define M_ALL(X) M_COLS(X, 0) M_COLS(X, 1) M_COLS(X, 2) M_COLS(X, 3)
#define M_DECL(p, q) float32x4_t m##p##q = vdupq_n_f32(0.0f);
#define M_STEP(p, q) m##p##q = vbfmmlaq_f32(m##p##q, x##p, y##q);

/* rows r, r + 1 of C (r = 2p) from their row pair's four column-pair sums: alpha * sums + beta * C */
static GK_FORCEINLINE void m_store(float *GK_RESTRICT c, int64_t ldc, float32x4_t c0, float32x4_t c1, float32x4_t c2,
                                   float32x4_t c3, float32x4_t va, float be) {
    const float64x2_t d0 = vreinterpretq_f64_f32(c0), d1 = vreinterpretq_f64_f32(c1);
    const float64x2_t d2 = vreinterpretq_f64_f32(c2), d3 = vreinterpretq_f64_f32(c3);
    float32x4_t r00 = vmulq_f32(va, vreinterpretq_f32_f64(vzip1q_f64(d0, d1)));
    float32x4_t r01 = vmulq_f32(va, vreinterpretq_f32_f64(vzip1q_f64(d2, d3)));
    float32x4_t r10 = vmulq_f32(va, vreinterpretq_f32_f64(vzip2q_f64(d0, d1)));
    float32x4_t r11 = vmulq_f32(va, vreinterpretq_f32_f64(vzip2q_f64(d2, d3)));
    if (be != 0.0f) { /* beta == 0: C is not read */
        r00 = vfmaq_n_f32(r00, vld1q_f32(c), be);
        r01 = vfmaq_n_f32(r01, vld1q_f32(c + 4), be);
        r10 = vfmaq_n_f32(r10, vld1q_f32(c + ldc), be);
        r11 = vfmaq_n_f32(r11, vld1q_f32(c + ldc + 4), be);
    }
    vst1q_f32(c, r00);
    vst1q_f32(c + 4, r01);
    vst1q_f32(c + ldc, r10);
    vst1q_f32(c + ldc + 4, r11);
}

static void ukernel_bf16_bfmmla_8x8(int64_t kc, const void *GK_RESTRICT av, int64_t rsa, const void *GK_RESTRICT bv,
                                    int64_t rsb, void *GK_RESTRICT cv, int64_t ldc, const void *alpha,
                                    const void *beta) {
    const bfloat16_t *a = (const bfloat16_t *)av, *b = (const bfloat16_t *)bv;
    float *c = (float *)cv;
    (void)rsa, (void)rsb;
    M_ALL(M_DECL)
    for (int64_t g = 0; g < kc / KG; g++) {
        const bfloat16x8_t x0 = vld1q_bf16(a), x1 = vld1q_bf16(a + 8), x2 = vld1q_bf16(a + 16), x3 = vld1q_bf16(a + 24);
        const bfloat16x8_t y0 = vld1q_bf16(b), y1 = vld1q_bf16(b + 8), y2 = vld1q_bf16(b + 16), y3 = vld1q_bf16(b + 24);
        M_ALL(M_STEP)
        a += MR * KG * 2;
        b += NR * KG * 2;
    }
    const float32x4_t va = vdupq_n_f32(*(const float *)alpha);
    const float be = *(const float *)beta;
    m_store(c, ldc, m00, m01, m02, m03, va, be);
    m_store(c + 2 * ldc, ldc, m10, m11, m12, m13, va, be);
    m_store(c + 4 * ldc, ldc, m20, m21, m22, m23, va, be);
    m_store(c + 6 * ldc, ldc, m30, m31, m32, m33, va, be);
}

#define BP_MR MR
#define BP_NR NR
#define BP_GROUP KG
#define BP_BGROUP KG
#define BP_NAME ukernel_bf16_bfmmla_8x8_exact
#include "bf16_pair_exact_template.h"

GK_ASSERT_REAL_TILE(MR, NR, 4);
const gk_real_kernel_t gk_bf16_kernel_bfmmla = {
    .name = "ukernel_bf16_bfmmla_8x8", .elem = 4, .mr = MR, .nr = NR, .ukernel = ukernel_bf16_bfmmla_8x8,
    .k_pair_group = KG, .b_pair_group = KG, .ukernel_exact = ukernel_bf16_bfmmla_8x8_exact,
};
#endif
