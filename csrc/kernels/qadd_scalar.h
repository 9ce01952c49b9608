/* Per-element arithmetic of gemmkit_quantized_add's two formulas (see include/gemmkit.h), shared by
 * the portable kernel, the driver and the SIMD kernels' tails, so every path rounds the same way. */
#ifndef GEMMKIT_QADD_SCALAR_H
#define GEMMKIT_QADD_SCALAR_H
#include <math.h>
#include "../convert.h"
#include "../qadd.h"

/* Each float32 step must be rounded on its own: no contraction of a * b + c into an fma (GCC's
 * -std=c11 already implies -ffp-contract=off; Clang needs the pragma). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#endif

/* |quotient| is clamped to this before rounding: it changes no result (outputs and zero points lie in
 * -128..255) and keeps the integer conversion in range; NaN becomes the low bound. */
#define GK_QADD_Q_LIMIT 1048576.0f

static inline int32_t gk_qadd_load(const void *p, int is_signed) {
    return is_signed ? (int32_t)*(const int8_t *)p : (int32_t)*(const uint8_t *)p;
}

static inline int32_t gk_qadd_clamp(int32_t v, int32_t lo, int32_t hi) { return v < lo ? lo : (v > hi ? hi : v); }

/* DirectML: clamp(round_half_even(((a - za) * sa + (b - zb) * sb) / sc) + zc), float32 throughout. */
static inline int32_t gk_qadd_directml(int32_t a, int32_t b, float sa, int32_t za, float sb, int32_t zb, float sc,
                                       int32_t zc, int32_t lo, int32_t hi) {
    const float av = (float)(a - za) * sa;
    const float bv = (float)(b - zb) * sb;
    const float sum = av + bv;
    float q = sum / sc;
    q = q > -GK_QADD_Q_LIMIT ? q : -GK_QADD_Q_LIMIT; /* (NaN -> low bound, as maxps) */
    q = q < GK_QADD_Q_LIMIT ? q : GK_QADD_Q_LIMIT;
    return gk_qadd_clamp((int32_t)nearbyintf(q) + zc, lo, hi);
}

/* ONNX Runtime's final step: round half to even into int32 (cvtps2dq: NaN or out of range gives
 * INT32_MIN), then saturate to the output type. */
static inline int32_t gk_qadd_ort_finish(float v, int32_t lo, int32_t hi) {
    if (!(v >= -2147483648.0f && v < 2147483648.0f)) return lo;
    return gk_qadd_clamp((int32_t)nearbyintf(v), lo, hi);
}

/* ONNX Runtime's value before rounding (see include/gemmkit.h). */
static inline float gk_qadd_ort_value(const gk_qadd_params_t *p, int32_t a, int32_t b) {
    if (p->ort_a_first) return fmaf((float)b, p->rb, fmaf((float)a, p->ra, p->ort_fixed));
    return fmaf((float)a, p->ra, fmaf((float)b, p->rb, p->ort_fixed));
}

/* One output from single-value parameters (the portable kernel and the SIMD kernels' tails). */
static inline int32_t gk_qadd_one(const gk_qadd_params_t *p, int32_t a, int32_t b) {
    if (p->formula == GEMMKIT_QADD_ONNXRUNTIME)
        return gk_qadd_ort_finish(gk_qadd_ort_value(p, a, b), p->out_min, p->out_max);
    return gk_qadd_directml(a, b, p->a_scale, p->a_zp, p->b_scale, p->b_zp, p->out_scale, p->out_zp, p->out_min,
                            p->out_max);
}

#endif
