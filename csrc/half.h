/* float16 and bfloat16 <-> float32 conversions in portable C (values as their uint16_t bits): widening
 * is exact; narrowing rounds once to nearest-even, overflows to infinity, and makes a NaN a quiet NaN. */
#ifndef GEMMKIT_HALF_H
#define GEMMKIT_HALF_H
#include <stdint.h>
#include <string.h>

static inline float gk_bits_f32(uint32_t u) { float f; memcpy(&f, &u, 4); return f; }
static inline uint32_t gk_f32_bits(float f) { uint32_t u; memcpy(&u, &f, 4); return u; }

static inline float gk_f16_to_f32(uint16_t h) {
    const uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1fu, man = h & 0x3ffu;
    if (exp == 0x1f) return gk_bits_f32(sign | 0x7f800000u | (man << 13) | (man ? 0x400000u : 0u)); /* NaN quiet */
    if (exp != 0) return gk_bits_f32(sign | ((exp + 112u) << 23) | (man << 13));
    const float v = (float)man * 5.9604644775390625e-8f; /* subnormal: man * 2^-24, exact */
    return sign ? -v : v;
}

static inline uint16_t gk_f32_to_f16(float f) {
    const uint32_t x = gk_f32_bits(f), sign = (x >> 16) & 0x8000u, ax = x & 0x7fffffffu;
    uint32_t h;
    if (ax > 0x7f800000u) h = 0x7e00u | ((ax >> 13) & 0x3ffu);    /* NaN: quiet, top payload bits kept */
    else if (ax >= 0x47800000u) h = 0x7c00u;                      /* >= 65536 and infinity */
    else if (ax < 0x38800000u) {                                  /* below 2^-14: subnormal or zero */
        /* adding 0.5 (ulp 2^-24) rounds |f| to a multiple of 2^-24 to nearest-even in float arithmetic */
        h = gk_f32_bits(gk_bits_f32(ax) + 0.5f) - 0x3f000000u;
    } else {                                                      /* normal: round at bit 13, rebias */
        h = (ax + 0xfffu + ((ax >> 13) & 1u) - 0x38000000u) >> 13; /* a carry into 31 gives infinity */
    }
    return (uint16_t)(h | sign);
}

static inline float gk_bf16_to_f32(uint16_t b) { return gk_bits_f32((uint32_t)b << 16); }

static inline uint16_t gk_f32_to_bf16(float f) {
    const uint32_t x = gk_f32_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x40u); /* NaN: quiet, sign kept */
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* Rows of n values: widen into float, or narrow from float. */
#define GK_DEFINE_HALF_ROWS(NAME)                                                                    \
    static inline void gk_##NAME##_row_to_f32(const uint16_t *src, int64_t n, float *dst) {         \
        for (int64_t j = 0; j < n; j++) dst[j] = gk_##NAME##_to_f32(src[j]);                         \
    }                                                                                                \
    static inline void gk_f32_row_to_##NAME(const float *src, int64_t n, uint16_t *dst) {           \
        for (int64_t j = 0; j < n; j++) dst[j] = gk_f32_to_##NAME(src[j]);                           \
    }
GK_DEFINE_HALF_ROWS(f16)
GK_DEFINE_HALF_ROWS(bf16)
#undef GK_DEFINE_HALF_ROWS

#endif
