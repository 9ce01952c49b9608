/* Portable kernel of gemmkit_quantize_per_token: one token in two passes over x (the max of |x'|, then
 * the quotients), scalar C in the formula's order (the SIMD kernels give the same bytes). */
#include "quantize_scalar.h"

#define QZ_GENERIC(NAME, LOAD, ELEM)                                                                           \
    static void NAME##_token(int64_t K, const void *xv, const float *smooth, int mode, int8_t *q, float *scale_out) { \
        uint32_t amax = 0;                                                                                  \
        for (int64_t k = 0; k < K; k++) {                                                                   \
            const uint32_t a = gk_qz_abs_bits(gk_qz_smooth(LOAD(xv, k), smooth, mode, k));                 \
            amax = a > amax ? a : amax;                                                                     \
        }                                                                                                   \
        const float scale = gk_qz_scale(amax);                                                              \
        *scale_out = scale;                                                                                 \
        if (!(scale > 0.0f)) { /* zeros, an underflowing scale, or NaN / Inf */                             \
            memset(q, 0, (size_t)K);                                                                        \
            return;                                                                                         \
        }                                                                                                   \
        for (int64_t k = 0; k < K; k++) q[k] = gk_qz_one(gk_qz_smooth(LOAD(xv, k), smooth, mode, k), scale); \
    }                                                                                                       \
    static void NAME(int64_t M, int64_t K, const void *x, int64_t ldx, const float *smooth, int mode, int8_t *q, \
                     int64_t ldq, float *scale) {                                                           \
        for (int64_t i = 0; i < M; i++) NAME##_token(K, (const ELEM *)x + i * ldx, smooth, mode, q + i * ldq, scale + i); \
    }

#define QZ_LOAD_F32(p, k) (((const float *)(p))[k])
#define QZ_LOAD_F16(p, k) gk_f16_to_f32(((const uint16_t *)(p))[k])
#define QZ_LOAD_BF16(p, k) gk_bf16_to_f32(((const uint16_t *)(p))[k])
QZ_GENERIC(qz_generic_f32, QZ_LOAD_F32, float)
QZ_GENERIC(qz_generic_f16, QZ_LOAD_F16, uint16_t)
QZ_GENERIC(qz_generic_bf16, QZ_LOAD_BF16, uint16_t)

const gk_quant_kernel_t gk_quant_kernel_generic = {"quantize_generic", {qz_generic_f32, qz_generic_f16, qz_generic_bf16}};
