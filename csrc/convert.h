/* Element conversions in portable C, bit for bit what the SIMD paths give: float32 -> float16 / bfloat16
 * rounding once to nearest even, their exact widening (a NaN made quiet, as F16C does), rows of them, double -> int32. */
#ifndef GEMMKIT_CONVERT_H
#define GEMMKIT_CONVERT_H
#include <math.h>
#include "platform.h"

/* round half to even, saturated to int32 (NaN -> INT32_MIN, as the SIMD conversions give). */
static inline int32_t gk_round_sat_i32(double v) {
    if (!(v >= -2147483648.0)) return INT32_MIN;
    if (v >= 2147483647.0) return INT32_MAX;
    return (int32_t)nearbyint(v);
}

static inline uint32_t gk_float_bits(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

/* float32 -> bfloat16 bits, round to nearest even by integer arithmetic; a NaN stays a NaN, made quiet
 * (the SIMD epilogues compute exactly this). */
static inline uint16_t gk_float_to_bfloat16_bits(float f) {
    const uint32_t x = gk_float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x0040u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* float32 -> IEEE binary16 bits, round to nearest even (overflow to infinity, subnormals rounded); a NaN
 * becomes the quiet NaN with the top payload bits, as the F16C / AVX-512 conversion gives. */
static inline uint16_t gk_float_to_float16_bits(float f) {
    const uint32_t x = gk_float_bits(f), a = x & 0x7fffffffu;
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);   /* >= 65520 (or infinite): infinity */
    if (a >= 0x38800000u) {                                    /* a normal binary16: rebias 127 -> 15 */
        const uint32_t r = a - 0x38000000u;
        return (uint16_t)(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
    }
    if (a < 0x33000000u) return sign;                          /* below 2^-25: zero */
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;            /* subnormal: units of 2^-24 */
    const int shift = 126 - (int)(a >> 23);                    /* 14 .. 24 */
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
}

static inline float gk_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }

static inline float gk_f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) return gk_bits_f32(sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0u)); /* NaN quiet */
    if (exp != 0) return gk_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
    const float v = (float)man * 5.9604644775390625e-8f; /* subnormal: man * 2^-24, exact */
    return sign ? -v : v;
}

static inline float gk_bf16_to_f32(uint16_t b) { return gk_bits_f32((uint32_t)b << 16); }

/* Rows of n values: widen into float, or narrow from float. */
#define GK_DEFINE_HALF_ROWS(NAME, NARROW)                                                            \
    static inline void gk_##NAME##_row_to_f32(const uint16_t *src, int64_t n, float *dst) {         \
        for (int64_t j = 0; j < n; j++) dst[j] = gk_##NAME##_to_f32(src[j]);                         \
    }                                                                                                \
    static inline void gk_f32_row_to_##NAME(const float *src, int64_t n, uint16_t *dst) {           \
        for (int64_t j = 0; j < n; j++) dst[j] = NARROW(src[j]);                                     \
    }
GK_DEFINE_HALF_ROWS(f16, gk_float_to_float16_bits)
GK_DEFINE_HALF_ROWS(bf16, gk_float_to_bfloat16_bits)
#undef GK_DEFINE_HALF_ROWS

#endif
