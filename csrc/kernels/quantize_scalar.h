/* Scalar pieces of the per-token quantizer (include/gemmkit.h gives the formula): loading one value of
 * each input type, the |x| bits whose integer max is the float max, the scale, one quantized value. */
#ifndef GEMMKIT_QUANTIZE_SCALAR_H
#define GEMMKIT_QUANTIZE_SCALAR_H
#include "../convert.h"
#include "../quantize.h"

/* x' of one element: widened exactly, then smoothed (one IEEE division or multiplication). */
static inline float gk_qz_smooth(float v, const float *smooth, int mode, int64_t k) {
    if (!smooth) return v;
    return mode == GEMMKIT_SMOOTH_MULTIPLY ? v * smooth[k] : v / smooth[k];
}

/* |v| as bits: for non-negative floats integer order is float order, and an infinity (0x7f800000) or a
 * NaN (above it) is larger than every finite value, so the max of these bits finds both. */
static inline uint32_t gk_qz_abs_bits(float v) {
    uint32_t u;
    memcpy(&u, &v, 4);
    return u & 0x7fffffffu;
}

/* The token's scale from the max of its |x'| bits: amax / 127, or NaN for a non-finite amax. */
static inline float gk_qz_scale(uint32_t amax_bits) {
    if (amax_bits >= 0x7f800000u) return NAN;
    float amax;
    memcpy(&amax, &amax_bits, 4);
    return amax / 127.0f;
}

/* One quantized value (scale > 0 and finite, v finite): round half to even of the clamped quotient. */
static inline int8_t gk_qz_one(float v, float scale) {
    float t = v / scale;
    t = t < -127.0f ? -127.0f : t;
    t = t > 127.0f ? 127.0f : t;
    return (int8_t)(int32_t)nearbyintf(t);
}

#endif
