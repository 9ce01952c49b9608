/* AArch64 NEON sgemm microkernel (8 x 12: 24 accumulators, FMLA by element) with the GEMV kernels on NEON vectors
 * and the tiny kernels (6- and 5-row in-place k loops: real_neon_tiny.h); Advanced SIMD is baseline on AArch64,
 * so this file needs no ISA flag. */
#include "../kernel.h"
#if GEMMKIT_ARM
#include <arm_neon.h>

#define T float
#define MR 8
#define NR 12

/* Rows: (row, A vector, lane); per k the 8 values of A are a0 = rows 0-3, a1 = rows 4-7. */
#define S_ROWS(X) X(0, a0, 0) X(1, a0, 1) X(2, a0, 2) X(3, a0, 3) X(4, a1, 0) X(5, a1, 1) X(6, a1, 2) X(7, a1, 3)
#define S_DECL(i, av, l) float32x4_t c##i##0 = vdupq_n_f32(0.f), c##i##1 = c##i##0, c##i##2 = c##i##0;
#define S_FMA(i, av, l)                                                                              \
    c##i##0 = vfmaq_laneq_f32(c##i##0, b0, av, l);                                                   \
    c##i##1 = vfmaq_laneq_f32(c##i##1, b1, av, l);                                                   \
    c##i##2 = vfmaq_laneq_f32(c##i##2, b2, av, l);
#define S_STORE(i, av, l)                                                                            \
    {                                                                                                \
        float *ci = c + (i) * ldc;                                                                   \
        if (beta == 0.f) {                                                                           \
            vst1q_f32(ci, vmulq_n_f32(c##i##0, alpha));                                              \
            vst1q_f32(ci + 4, vmulq_n_f32(c##i##1, alpha));                                          \
            vst1q_f32(ci + 8, vmulq_n_f32(c##i##2, alpha));                                          \
        } else {                                                                                     \
            vst1q_f32(ci, vaddq_f32(vmulq_n_f32(c##i##0, alpha), vmulq_n_f32(vld1q_f32(ci), beta)));         \
            vst1q_f32(ci + 4, vaddq_f32(vmulq_n_f32(c##i##1, alpha), vmulq_n_f32(vld1q_f32(ci + 4), beta))); \
            vst1q_f32(ci + 8, vaddq_f32(vmulq_n_f32(c##i##2, alpha), vmulq_n_f32(vld1q_f32(ci + 8), beta))); \
        }                                                                                            \
    }

static void ukernel_sgemm_neon_8x12(int64_t kc, const void *GK_RESTRICT av, int64_t rsa, const void *GK_RESTRICT bv,
                                    int64_t rsb, void *GK_RESTRICT cv, int64_t ldc, const void *alpha_p,
                                    const void *beta_p) {
    const float *a = (const float *)av, *b = (const float *)bv;
    float *c = (float *)cv;
    const float alpha = *(const float *)alpha_p, beta = *(const float *)beta_p;
    S_ROWS(S_DECL)
    for (int64_t k = 0; k < kc; k++) {
        const float32x4_t a0 = vld1q_f32(a), a1 = vld1q_f32(a + 4);
        const float32x4_t b0 = vld1q_f32(b), b1 = vld1q_f32(b + 4), b2 = vld1q_f32(b + 8);
        S_ROWS(S_FMA)
        a += rsa;
        b += rsb;
    }
    S_ROWS(S_STORE)
}

#define TINY_FN tiny_sgemm_neon
#define TINY_COMPLEX_FN tiny_cgemm_neon
#define NTQ_V float32x4_t
#define NTQ_SUF f32
#include "real_neon_tiny.h"
#include "real_tiny_template.h"
#undef NTQ_V
#undef NTQ_SUF
#undef TINY_FN
#undef TINY_COMPLEX_FN

/* GEMV on 4-lane Advanced SIMD vectors (the template's VOP names these; FMLA rounds once). */
static inline float32x4_t gv_neon_loadu(const float *p) { return vld1q_f32(p); }
static inline float32x4_t gv_neon_set1(float x) { return vdupq_n_f32(x); }
static inline float32x4_t gv_neon_setzero(void) { return vdupq_n_f32(0); }
static inline float32x4_t gv_neon_fmadd(float32x4_t a, float32x4_t b, float32x4_t c) { return vfmaq_f32(c, a, b); }
static inline float32x4_t gv_neon_add(float32x4_t a, float32x4_t b) { return vaddq_f32(a, b); }
static inline void gv_neon_storeu(float *p, float32x4_t v) { vst1q_f32(p, v); }
#define V float32x4_t
#define VL 4
#define VOP(op) gv_neon_##op
#define GEMV_ROWS_FN gemv_rows_sgemm_neon
#define GEMV_DOTS_FN gemv_dots_sgemm_neon
#include "real_gemv_template.h"
#undef VOP
#undef VL
#undef V

GK_ASSERT_REAL_TILE(MR, NR, 4);
const gk_real_kernel_t gk_sgemm_kernel_neon = {
    "ukernel_sgemm_neon_8x12", 4, MR, NR, ukernel_sgemm_neon_8x12, NULL, NULL, tiny_sgemm_neon, tiny_cgemm_neon,
    gemv_rows_sgemm_neon, gemv_dots_sgemm_neon,
};
#endif
