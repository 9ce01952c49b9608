/* float16 and bfloat16 <-> float32 rows in portable C (values as their uint16_t bits): widening is exact
 * (a NaN made quiet, as F16C does); narrowing is gemmkit_internal.h's, rounding once to nearest-even. */
#ifndef GEMMKIT_HALF_H
#define GEMMKIT_HALF_H
#include <stdint.h>
#include <string.h>
#include "gemmkit_internal.h"

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
