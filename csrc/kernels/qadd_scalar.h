/* Per-element arithmetic of gemmkit_quantized_add's two formulas (see include/gemmkit.h), shared by
 * the portable kernel, the driver and the SIMD kernels' tails, so every path rounds the same way. */
#ifndef GEMMKIT_QADD_SCALAR_H
#define GEMMKIT_QADD_SCALAR_H
#include <math.h>
#include "../gemmkit_internal.h"

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

/* ONNX Runtime's value before rounding, for a run whose A (a_scalar) or else B (b_scalar) is one
 * value repeated: the repeated input is folded into the fixed part once per run. */
static inline float gk_qadd_ort_run_fixed(const gk_qadd_params_t *p, int a_scalar, int b_scalar, int32_t a0,
                                          int32_t b0) {
    if (a_scalar) return fmaf((float)a0, p->ra, p->fixed_scalar_a);
    if (b_scalar) return fmaf((float)b0, p->rb, p->fixed);
    return p->fixed;
}

static inline float gk_qadd_ort_value(const gk_qadd_params_t *p, int a_scalar, int b_scalar, float run_fixed,
                                      int32_t a, int32_t b) {
    if (a_scalar) return fmaf((float)b, p->rb, run_fixed);
    if (b_scalar) return fmaf((float)a, p->ra, run_fixed);
    return fmaf((float)a, p->ra, fmaf((float)b, p->rb, run_fixed));
}

/* One output of a contiguous-parameter run (the tails of the SIMD kernels use it). */
static inline int32_t gk_qadd_one(const gk_qadd_params_t *p, int a_scalar, int b_scalar, float run_fixed, int32_t a,
                                  int32_t b) {
    if (p->formula == GEMMKIT_QADD_ONNXRUNTIME)
        return gk_qadd_ort_finish(gk_qadd_ort_value(p, a_scalar, b_scalar, run_fixed, a, b), p->out_min, p->out_max);
    return gk_qadd_directml(a, b, p->a_scale, p->a_zp, p->b_scale, p->b_zp, p->out_scale, p->out_zp, p->out_min,
                            p->out_max);
}

#endif
