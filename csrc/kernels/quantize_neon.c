/* AArch64 Advanced SIMD kernel of gemmkit_quantize_per_token: tokens four at a time (quantize_rows.h), 4 float
 * lanes a vector, quantize_avx512.c's offset reciprocal with its tie test, scalar tails (NEON is baseline). */
#include "quantize_scalar.h"
#if GEMMKIT_ARM
#include <arm_neon.h>
#include <float.h>

/* 4 values of x (type GEMMKIT_OUT_*) from element k, widened exactly: float16 by FCVTL (ARMv8.0 baseline) on
 * the raw bits, bfloat16 by a 16-bit left shift; and one value (the scalar tails). */
static GK_FORCEINLINE float32x4_t qz_load4(int type, const void *x, int64_t k) {
    if (type == GEMMKIT_OUT_FLOAT32) return vld1q_f32((const float *)x + k);
    const uint16x4_t h = vld1_u16((const uint16_t *)x + k);
    if (type == GEMMKIT_OUT_FLOAT16) return vcvt_f32_f16(vreinterpret_f16_u16(h));
    return vreinterpretq_f32_u32(vshll_n_u16(h, 16));
}

static GK_FORCEINLINE float qz_load1(int type, const void *x, int64_t k) {
    if (type == GEMMKIT_OUT_FLOAT32) return ((const float *)x)[k];
    const uint16_t h = ((const uint16_t *)x)[k];
    return type == GEMMKIT_OUT_FLOAT16 ? gk_f16_to_f32(h) : gk_bf16_to_f32(h);
}

/* x' of 4 values: one IEEE division or multiplication by the smoothing vector, as gk_qz_smooth. */
static GK_FORCEINLINE float32x4_t qz_value4(int type, const void *x, const float *smooth, int mode, int64_t k) {
    const float32x4_t v = qz_load4(type, x, k);
    if (!smooth) return v;
    const float32x4_t s = vld1q_f32(smooth + k);
    return mode == GEMMKIT_SMOOTH_MULTIPLY ? vmulq_f32(v, s) : vdivq_f32(v, s);
}

/* |x'| bits of 4 values (gk_qz_abs_bits): their unsigned max is the float max, an Inf or NaN above all. */
static GK_FORCEINLINE uint32x4_t qz_abs_bits4(float32x4_t v) {
    return vandq_u32(vreinterpretq_u32_f32(v), vdupq_n_u32(0x7fffffffu));
}

/* The slow lane: round_half_even(clamp(v / scale, -127, 127)) by the IEEE division (FCVTNS: to nearest even). */
static GK_FORCEINLINE int32x4_t qz_divide4(float32x4_t v, float32x4_t vs) {
    const float32x4_t t = vminq_f32(vmaxq_f32(vdivq_f32(v, vs), vdupq_n_f32(-127.0f)), vdupq_n_f32(127.0f));
    return vcvtnq_s32_f32(t);
}

/* quantize_avx512.c's qz_fast16 on 4 lanes (the proof is there): y = fma(v, 1 / scale, QZ_OFS) in [256, 512),
 * floor(y) (FCVTZS truncates, y > 0) is 384 above the quantized value; *ok is all ones in the lanes NOT within
 * 2^-13 of a tie (a bit of the low 15 bits' 0x7ffc set), zero in those the caller must divide. */
#define QZ_OFS (384.5f + 0x1p-14f)
#define QZ_NEAR_BITS 0x7ffcu
static GK_FORCEINLINE uint32x4_t qz_fast4(float32x4_t v, float32x4_t vinv, uint32x4_t *ok) {
    const float32x4_t y = vfmaq_f32(vdupq_n_f32(QZ_OFS), v, vinv);
    *ok = vtstq_u32(vreinterpretq_u32_f32(y), vdupq_n_u32(QZ_NEAR_BITS));
    return vreinterpretq_u32_s32(vcvtq_s32_f32(y));
}

/* max |x'| bits of the n <= 4 tokens at x[0..n), read side by side (four memory streams), 8 values of each a
 * step in two accumulators, then 4, then scalar. */
static GK_FORCEINLINE void qz_amax_rows(int type, int n, const void *const *x, int64_t K, const float *smooth,
                                        int mode, uint32_t *amax) {
    uint32x4_t m[4], m2[4];
    const void *r[4];
    for (int t = 0; t < 4; t++) {
        m[t] = m2[t] = vdupq_n_u32(0);
        r[t] = x[t < n ? t : 0]; /* absent tokens re-read the first: same lines, harmless */
    }
    int64_t k = 0;
    for (; k + 8 <= K; k += 8)
        for (int t = 0; t < 4; t++) {
            m[t] = vmaxq_u32(m[t], qz_abs_bits4(qz_value4(type, r[t], smooth, mode, k)));
            m2[t] = vmaxq_u32(m2[t], qz_abs_bits4(qz_value4(type, r[t], smooth, mode, k + 4)));
        }
    if (k + 4 <= K) {
        for (int t = 0; t < 4; t++) m[t] = vmaxq_u32(m[t], qz_abs_bits4(qz_value4(type, r[t], smooth, mode, k)));
        k += 4;
    }
    for (int t = 0; t < n; t++) {
        uint32_t a = vmaxvq_u32(vmaxq_u32(m[t], m2[t]));
        for (int64_t j = k; j < K; j++) {
            const uint32_t b = gk_qz_abs_bits(gk_qz_smooth(qz_load1(type, r[t], j), smooth, mode, j));
            a = b > a ? b : a;
        }
        amax[t] = a;
    }
}

/* 4 int32 results in [-127, 127] as 4 bytes at q. */
static GK_FORCEINLINE void qz_store4(int8_t *q, int32x4_t r) {
    const int16x4_t h = vmovn_s32(r);
    const uint32_t w = vget_lane_u32(vreinterpret_u32_s8(vmovn_s16(vcombine_s16(h, h))), 0);
    memcpy(q, &w, 4);
}

/* One token's bytes from its scale (> 0, finite): 16 values a step, one tie test per 16 (a group with a near tie
 * divided whole; a subnormal scale divides all), then 4 at a time, then scalar. */
static GK_FORCEINLINE void qz_quantize_token(int type, int64_t K, const void *x, const float *smooth, int mode,
                                             float scale, int8_t *q) {
    const float32x4_t vs = vdupq_n_f32(scale);
    const int fast = scale >= FLT_MIN;
    const float32x4_t vinv = vdupq_n_f32(fast ? 1.0f / scale : 0.0f);
    int64_t k = 0;
    for (; k + 16 <= K; k += 16) {
        float32x4_t v[4];
        for (int u = 0; u < 4; u++) v[u] = qz_value4(type, x, smooth, mode, k + 4 * u);
        if (fast) {
            uint32x4_t r[4], ok[4];
            for (int u = 0; u < 4; u++) r[u] = qz_fast4(v[u], vinv, &ok[u]);
            const uint32x4_t all = vandq_u32(vandq_u32(ok[0], ok[1]), vandq_u32(ok[2], ok[3]));
            if (vminvq_u32(all) != 0) {
                /* floor(y) in [257, 511]: the low byte of floor(y) - 384 is that of floor(y) + 128, i.e. the low
                 * byte of floor(y) with its top bit flipped; the two truncating narrows keep the low bytes. */
                const uint16x8_t lo = vmovn_high_u32(vmovn_u32(r[0]), r[1]);
                const uint16x8_t hi = vmovn_high_u32(vmovn_u32(r[2]), r[3]);
                const uint8x16_t b = veorq_u8(vmovn_high_u16(vmovn_u16(lo), hi), vdupq_n_u8(0x80));
                vst1q_s8(q + k, vreinterpretq_s8_u8(b));
                continue;
            }
        }
        int32x4_t d[4];
        for (int u = 0; u < 4; u++) d[u] = qz_divide4(v[u], vs);
        const int16x8_t lo = vcombine_s16(vqmovn_s32(d[0]), vqmovn_s32(d[1]));
        const int16x8_t hi = vcombine_s16(vqmovn_s32(d[2]), vqmovn_s32(d[3]));
        vst1q_s8(q + k, vcombine_s8(vqmovn_s16(lo), vqmovn_s16(hi)));
    }
    for (; k + 4 <= K; k += 4) {
        const float32x4_t v = qz_value4(type, x, smooth, mode, k);
        if (fast) {
            uint32x4_t ok;
            const uint32x4_t r = qz_fast4(v, vinv, &ok);
            if (vminvq_u32(ok) != 0) {
                qz_store4(q + k, vsubq_s32(vreinterpretq_s32_u32(r), vdupq_n_s32(384)));
                continue;
            }
        }
        qz_store4(q + k, qz_divide4(v, vs));
    }
    for (; k < K; k++) q[k] = gk_qz_one(gk_qz_smooth(qz_load1(type, x, k), smooth, mode, k), scale);
}

#include "quantize_rows.h"

GK_QZ_KERNEL_TABLE(gk_quant_kernel_neon, "quantize_neon_4lanes")
#endif
