/* AArch64 NEON sgemm microkernel (8 x 12: 24 accumulators, FMLA by element) with 1..7-row variants for edge
 * row panels (real_neon_tile.h), the GEMV kernels on NEON vectors and the tiny kernels (6- and 5-row in-place k
 * loops: real_neon_tiny.h); Advanced SIMD is baseline on AArch64, so this file needs no ISA flag. */
#include "../kernel.h"
#if GEMMKIT_ARM
#include <arm_neon.h>

#define T float
#define MR 8
#define NR 12

#define NTT_V float32x4_t
#define NTT_SUF f32
#include "real_neon_tile.h"

/* The full tile and its first 1..7 rows (edge row panels, skinny M), straight into C: one body. */
GK_NEON_ROWS_KERNELS(ukernel_sgemm_neon, 12)

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
    "ukernel_sgemm_neon_8x12", 4, MR, NR, ukernel_sgemm_neon_8x12, rows_kernels, NULL, tiny_sgemm_neon, tiny_cgemm_neon,
    gemv_rows_sgemm_neon, gemv_dots_sgemm_neon,
};
#endif
