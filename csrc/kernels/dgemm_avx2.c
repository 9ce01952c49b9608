/* AVX2 + FMA dgemm microkernel (6 x 8: 12 ymm accumulators) with 1..5-row variants for edge row panels,
 * and on its k loop the native zgemm kernel (3 x 4 complex); compiled alone with -mavx2 -mfma. */
#include "../gemmkit_internal.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define MR 6
#define NR 8

#define T double
#define V __m256d
#define VSUF pd
#define VBCAST _mm256_broadcast_sd
#define ES 8
#define X "d"
#define VL 4
#define TILE_FN dgemm_tile_avx2
#include "real_ymm_template.h"

GK_YMM_ROWS_KERNEL(ukernel_dgemm_avx2_1x8, 1)
GK_YMM_ROWS_KERNEL(ukernel_dgemm_avx2_2x8, 2)
GK_YMM_ROWS_KERNEL(ukernel_dgemm_avx2_3x8, 3)
GK_YMM_ROWS_KERNEL(ukernel_dgemm_avx2_4x8, 4)
GK_YMM_ROWS_KERNEL(ukernel_dgemm_avx2_5x8, 5)
GK_YMM_ROWS_KERNEL(ukernel_dgemm_avx2_6x8, 6)

static const gk_ukernel_fn rows_kernels[MR] = {
    NULL, ukernel_dgemm_avx2_1x8, ukernel_dgemm_avx2_2x8, ukernel_dgemm_avx2_3x8, ukernel_dgemm_avx2_4x8,
    ukernel_dgemm_avx2_5x8,
};

#define TINY_FN tiny_dgemm_avx2
#define TINY_COMPLEX_FN tiny_zgemm_avx2
#if defined(GK_YMM_ASM)
#define GK_TINY_SUMS6 dgemm_tile_avx2_sums_direct_asm
#define GK_TINY_SUMS6_C dgemm_tile_avx2_sums_direct_to_c_asm
#define GK_TINY_SUMS6_C_NT dgemm_tile_avx2_sums_direct_to_c_nt_asm
#endif
#include "real_tiny_template.h"
#undef GK_TINY_SUMS6
#undef GK_TINY_SUMS6_C
#undef GK_TINY_SUMS6_C_NT
#undef TINY_FN
#undef TINY_COMPLEX_FN

#define GEMV_ROWS_FN gemv_rows_dgemm_avx2
#define GEMV_DOTS_FN gemv_dots_dgemm_avx2
#include "real_gemv_template.h"

const gk_real_kernel_t gk_dgemm_kernel_avx2 = {
    "ukernel_dgemm_avx2_6x8", 8, MR, NR, ukernel_dgemm_avx2_6x8, rows_kernels, NULL, tiny_dgemm_avx2, tiny_zgemm_avx2,
    gemv_rows_dgemm_avx2, gemv_dots_dgemm_avx2,
};

#define CX_TILE_FN zgemm_tile_avx2
#include "complex_ymm_template.h"

GK_YMM_CX_KERNEL_TABLE(zgemm, 4, tiny_zgemm_avx2)
#endif
