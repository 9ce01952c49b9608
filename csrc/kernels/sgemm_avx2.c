/* AVX2 + FMA sgemm microkernel (6 x 16: 12 ymm accumulators) with 1..5-row variants for edge row panels,
 * and on its k loop the native cgemm kernel (3 x 8 complex); compiled alone with -mavx2 -mfma. */
#include "../gemmkit_internal.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define MR 6
#define NR 16

#define T float
#define V __m256
#define VSUF ps
#define VBCAST _mm256_broadcast_ss
#define ES 4
#define X "s"
#define VL 8
#define TILE_FN sgemm_tile_avx2
#include "real_ymm_template.h"

GK_YMM_ROWS_KERNEL(ukernel_sgemm_avx2_1x16, 1)
GK_YMM_ROWS_KERNEL(ukernel_sgemm_avx2_2x16, 2)
GK_YMM_ROWS_KERNEL(ukernel_sgemm_avx2_3x16, 3)
GK_YMM_ROWS_KERNEL(ukernel_sgemm_avx2_4x16, 4)
GK_YMM_ROWS_KERNEL(ukernel_sgemm_avx2_5x16, 5)
GK_YMM_ROWS_KERNEL(ukernel_sgemm_avx2_6x16, 6)

static const gk_ukernel_fn rows_kernels[MR] = {
    NULL, ukernel_sgemm_avx2_1x16, ukernel_sgemm_avx2_2x16, ukernel_sgemm_avx2_3x16, ukernel_sgemm_avx2_4x16,
    ukernel_sgemm_avx2_5x16,
};

#define TINY_FN tiny_sgemm_avx2
#define TINY_COMPLEX_FN tiny_cgemm_avx2
#if defined(GK_YMM_ASM)
#define GK_TINY_SUMS6 sgemm_tile_avx2_sums_direct_asm
#define GK_TINY_SUMS6_C sgemm_tile_avx2_sums_direct_to_c_asm
#define GK_TINY_SUMS6_C_NT sgemm_tile_avx2_sums_direct_to_c_nt_asm
#endif
#include "real_tiny_template.h"
#undef GK_TINY_SUMS6
#undef GK_TINY_SUMS6_C
#undef GK_TINY_SUMS6_C_NT
#undef TINY_FN
#undef TINY_COMPLEX_FN

#define GEMV_ROWS_FN gemv_rows_sgemm_avx2
#define GEMV_DOTS_FN gemv_dots_sgemm_avx2
#include "real_gemv_template.h"

const gk_real_kernel_t gk_sgemm_kernel_avx2 = {
    "ukernel_sgemm_avx2_6x16", 4, MR, NR, ukernel_sgemm_avx2_6x16, rows_kernels, NULL, tiny_sgemm_avx2, tiny_cgemm_avx2,
    gemv_rows_sgemm_avx2, gemv_dots_sgemm_avx2,
};

#define CX_TILE_FN cgemm_tile_avx2
#include "complex_ymm_template.h"

GK_YMM_CX_KERNEL_TABLE(cgemm, 8, tiny_cgemm_avx2)
#endif
