/* AArch64 Advanced SIMD kernel of gemmkit_quantized_add: qadd_simd_template.h over 128-bit vectors, 16 bytes
 * of each operand per step as four 4-lane float vectors (Advanced SIMD is baseline: no ISA flag). */
#include "../qadd.h"
#if GEMMKIT_ARM
#include <arm_neon.h>
#include <stdint.h>

/* The template's x86-shaped primitives on NEON. Integer vectors are kept as uint8x16_t and reinterpreted
 * per operation; the SSE unpacks interleave the low / high halves: ZIP1 / ZIP2. */
typedef uint8x16_t qn_i;
static inline qn_i qn_set1_i8(char v) { return vdupq_n_u8((uint8_t)v); }
static inline qn_i qn_set1_i16(short v) { return vreinterpretq_u8_s16(vdupq_n_s16(v)); }
static inline qn_i qn_unpacklo16(qn_i a, qn_i b) {
    return vreinterpretq_u8_u16(vzip1q_u16(vreinterpretq_u16_u8(a), vreinterpretq_u16_u8(b)));
}
static inline qn_i qn_unpackhi16(qn_i a, qn_i b) {
    return vreinterpretq_u8_u16(vzip2q_u16(vreinterpretq_u16_u8(a), vreinterpretq_u16_u8(b)));
}
/* packssdw: int32 -> int16 with signed saturation, a's four then b's four */
static inline qn_i qn_packs32(qn_i a, qn_i b) {
    return vreinterpretq_u8_s16(vcombine_s16(vqmovn_s32(vreinterpretq_s32_u8(a)), vqmovn_s32(vreinterpretq_s32_u8(b))));
}
static inline qn_i qn_adds16(qn_i a, qn_i b) {
    return vreinterpretq_u8_s16(vqaddq_s16(vreinterpretq_s16_u8(a), vreinterpretq_s16_u8(b)));
}
/* packuswb: int16 -> uint8 with unsigned saturation */
static inline qn_i qn_packus16(qn_i a, qn_i b) {
    return vcombine_u8(vqmovun_s16(vreinterpretq_s16_u8(a)), vqmovun_s16(vreinterpretq_s16_u8(b)));
}
/* vpmulhrsw: (a * b + 2^14) >> 15. SQRDMULH gives sat((2ab + 2^15) >> 16), the same value except for
 * -32768 * -32768, which cannot occur here (one factor is a byte << 7, at most 32640). */
static inline qn_i qn_mulhrs16(qn_i a, qn_i b) {
    return vreinterpretq_u8_s16(vqrdmulhq_s16(vreinterpretq_s16_u8(a), vreinterpretq_s16_u8(b)));
}
/* arithmetic shift right by a count held as a negative left shift in every lane */
static inline qn_i qn_sra16(qn_i a, int16x8_t neg_count) {
    return vreinterpretq_u8_s16(vshlq_s16(vreinterpretq_s16_u8(a), neg_count));
}
/* cvtps2dq: round half to even; NaN and values outside [-2^31, 2^31) give INT32_MIN (FCVTNS saturates and
 * gives 0 for NaN, so those lanes are replaced) */
static inline qn_i qn_cvt_f2i(float32x4_t x) {
    const uint32x4_t in_range = vandq_u32(vcgeq_f32(x, vdupq_n_f32(-2147483648.0f)), vcltq_f32(x, vdupq_n_f32(2147483648.0f)));
    const int32x4_t r = vbslq_s32(in_range, vcvtnq_s32_f32(x), vdupq_n_s32(INT32_MIN));
    return vreinterpretq_u8_s32(r);
}
/* minps: x when x < y, else y (y when either is NaN) */
static inline float32x4_t qn_min_f(float32x4_t x, float32x4_t y) { return vbslq_f32(vcltq_f32(x, y), x, y); }

#define QV_LANES 4
#define QV_F float32x4_t
#define QV_I qn_i
#define QV_SHIFT_T int16x8_t
#define QV_SHIFT_COUNT(n) vdupq_n_s16((int16_t)-(n))
#define QV_LOADU_I(p) vld1q_u8((const uint8_t *)(p))
#define QV_STOREU_I(p, v) vst1q_u8((uint8_t *)(p), (v))
#define QV_STREAM_I(p, v) vst1q_u8((uint8_t *)(p), (v))
#define QV_STREAM_FENCE() ((void)0)
#define QV_SET1_F vdupq_n_f32
#define QV_SET1_I8 qn_set1_i8
#define QV_SET1_I16 qn_set1_i16
#define QV_XOR_I veorq_u8
#define QV_AND_I vandq_u8
#define QV_UNPACKLO8 vzip1q_u8
#define QV_UNPACKHI8 vzip2q_u8
#define QV_UNPACKLO16 qn_unpacklo16
#define QV_UNPACKHI16 qn_unpackhi16
#define QV_PACKS32 qn_packs32
#define QV_ADDS16 qn_adds16
#define QV_PACKUS16 qn_packus16
#define QV_SLLI16(x, k) vreinterpretq_u8_s16(vshlq_n_s16(vreinterpretq_s16_u8(x), (k)))
#define QV_MULHRS16 qn_mulhrs16
#define QV_SRA16 qn_sra16
#define QV_CAST_I2F vreinterpretq_f32_u8
#define QV_CVT_F2I qn_cvt_f2i
#define QV_SUB_F vsubq_f32
#define QV_ADD_F vaddq_f32
#define QV_MUL_F vmulq_f32
#define QV_DIV_F vdivq_f32
#define QV_MIN_F qn_min_f
#define QV_FMA(a, b, c) vfmaq_f32((c), (a), (b))
#define QV_NAME qadd_run_neon
#include "qadd_simd_template.h"

const gk_qadd_kernel_t gk_qadd_kernel_neon = {"qadd_neon_16bytes", qadd_run_neon, 1};
#endif
