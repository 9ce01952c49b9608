/* AArch64 NEON dgemm microkernel (8 x 6: 24 accumulators, FMLA by element) with the GEMV kernels on NEON vectors
 * and the tiny kernels (6- and 5-row in-place k loops: real_neon_tiny.h); Advanced SIMD is baseline on AArch64,
 * so this file needs no ISA flag. */
#include "../kernel.h"
#if GEMMKIT_ARM
#include <arm_neon.h>

#define T double
#define MR 8
#define NR 6

/* Rows: (row, A vector, lane); per k the 8 values of A are a0 .. a3, two rows each. */
#define D_ROWS(X) X(0, a0, 0) X(1, a0, 1) X(2, a1, 0) X(3, a1, 1) X(4, a2, 0) X(5, a2, 1) X(6, a3, 0) X(7, a3, 1)
#define D_DECL(i, av, l) float64x2_t c##i##0 = vdupq_n_f64(0.), c##i##1 = c##i##0, c##i##2 = c##i##0;
#define D_FMA(i, av, l)                                                                              \
    c##i##0 = vfmaq_laneq_f64(c##i##0, b0, av, l);                                                   \
    c##i##1 = vfmaq_laneq_f64(c##i##1, b1, av, l);                                                   \
    c##i##2 = vfmaq_laneq_f64(c##i##2, b2, av, l);
#define D_STORE(i, av, l)                                                                            \
    {                                                                                                \
        double *ci = c + (i) * ldc;                                                                  \
        if (beta == 0.) {                                                                            \
            vst1q_f64(ci, vmulq_n_f64(c##i##0, alpha));                                              \
            vst1q_f64(ci + 2, vmulq_n_f64(c##i##1, alpha));                                          \
            vst1q_f64(ci + 4, vmulq_n_f64(c##i##2, alpha));                                          \
        } else {                                                                                     \
            vst1q_f64(ci, vaddq_f64(vmulq_n_f64(c##i##0, alpha), vmulq_n_f64(vld1q_f64(ci), beta)));         \
            vst1q_f64(ci + 2, vaddq_f64(vmulq_n_f64(c##i##1, alpha), vmulq_n_f64(vld1q_f64(ci + 2), beta))); \
            vst1q_f64(ci + 4, vaddq_f64(vmulq_n_f64(c##i##2, alpha), vmulq_n_f64(vld1q_f64(ci + 4), beta))); \
        }                                                                                            \
    }

static void ukernel_dgemm_neon_8x6(int64_t kc, const void *GK_RESTRICT av, int64_t rsa, const void *GK_RESTRICT bv,
                                   int64_t rsb, void *GK_RESTRICT cv, int64_t ldc, const void *alpha_p,
                                   const void *beta_p) {
    const double *a = (const double *)av, *b = (const double *)bv;
    double *c = (double *)cv;
    const double alpha = *(const double *)alpha_p, beta = *(const double *)beta_p;
    D_ROWS(D_DECL)
    for (int64_t k = 0; k < kc; k++) {
        const float64x2_t a0 = vld1q_f64(a), a1 = vld1q_f64(a + 2), a2 = vld1q_f64(a + 4), a3 = vld1q_f64(a + 6);
        const float64x2_t b0 = vld1q_f64(b), b1 = vld1q_f64(b + 2), b2 = vld1q_f64(b + 4);
        D_ROWS(D_FMA)
        a += rsa;
        b += rsb;
    }
    D_ROWS(D_STORE)
}

#define TINY_FN tiny_dgemm_neon
#define TINY_COMPLEX_FN tiny_zgemm_neon
#define NTQ_V float64x2_t
#define NTQ_SUF f64
#include "real_neon_tiny.h"
#include "real_tiny_template.h"
#undef NTQ_V
#undef NTQ_SUF
#undef TINY_FN
#undef TINY_COMPLEX_FN

/* GEMV on 2-lane Advanced SIMD vectors (the template's VOP names these; FMLA rounds once). */
static inline float64x2_t gv_neon_loadu(const double *p) { return vld1q_f64(p); }
static inline float64x2_t gv_neon_set1(double x) { return vdupq_n_f64(x); }
static inline float64x2_t gv_neon_setzero(void) { return vdupq_n_f64(0); }
static inline float64x2_t gv_neon_fmadd(float64x2_t a, float64x2_t b, float64x2_t c) { return vfmaq_f64(c, a, b); }
static inline float64x2_t gv_neon_add(float64x2_t a, float64x2_t b) { return vaddq_f64(a, b); }
static inline void gv_neon_storeu(double *p, float64x2_t v) { vst1q_f64(p, v); }
#define V float64x2_t
#define VL 2
#define VOP(op) gv_neon_##op
#define GEMV_ROWS_FN gemv_rows_dgemm_neon
#define GEMV_DOTS_FN gemv_dots_dgemm_neon
#include "real_gemv_template.h"
#undef VOP
#undef VL
#undef V

GK_ASSERT_REAL_TILE(MR, NR, 8);
const gk_real_kernel_t gk_dgemm_kernel_neon = {
    "ukernel_dgemm_neon_8x6", 8, MR, NR, ukernel_dgemm_neon_8x6, NULL, NULL, tiny_dgemm_neon, tiny_zgemm_neon,
    gemv_rows_dgemm_neon, gemv_dots_dgemm_neon,
};
#endif
