/* AArch64 NEON dgemm microkernel (8 x 6: 24 accumulators, FMLA by element) with 1..7-row variants for edge
 * row panels (real_neon_tile.h), the GEMV kernels on NEON vectors and the tiny kernels (6- and 5-row in-place k
 * loops: real_neon_tiny.h); Advanced SIMD is baseline on AArch64, so this file needs no ISA flag. */
#include "../kernel.h"
#if GEMMKIT_ARM
#include <arm_neon.h>

#define T double
#define MR 8
#define NR 6

#define NTT_V float64x2_t
#define NTT_SUF f64
#include "real_neon_tile.h"

/* The full tile and its first 1..7 rows (edge row panels, skinny M), straight into C: one body. */
GK_NEON_ROWS_KERNELS(ukernel_dgemm_neon, 6)

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
    "ukernel_dgemm_neon_8x6", 8, MR, NR, ukernel_dgemm_neon_8x6, rows_kernels, NULL, tiny_dgemm_neon, tiny_zgemm_neon,
    gemv_rows_dgemm_neon, gemv_dots_dgemm_neon,
};
#endif
