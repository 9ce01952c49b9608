/* Configuration of the AVX2 + FMA path (Haswell and later, AMD Zen 1-3): the 256-bit kernels and their
 * blocking (A block in a 512 KiB L2, B block in a share of L3); int8 widens bytes to int16 (exact). */
#include "common.h"
#if GEMMKIT_X86

const gk_config_t gk_config_avx2 = {
    .arch = "avx2", .uarch = "any", .needs = GEMMKIT_CPU_AVX2, .cpu_match = NULL,
    .sgemm = &gk_sgemm_kernel_avx2, .dgemm = &gk_dgemm_kernel_avx2, .int8 = &gk_i8_kernel_avx2,
    .sgemm_blocks = GK_SGEMM_AVX2_BLOCKS,
    .dgemm_blocks = GK_DGEMM_AVX2_BLOCKS,
    .cgemm_blocks = GK_SGEMM_AVX2_BLOCKS,
    .zgemm_blocks = GK_DGEMM_AVX2_BLOCKS,
    .int8_blocks = GK_INT8_AVX2_BLOCKS,
    .small = GK_SMALL_DEFAULTS,
    .qadd = &gk_qadd_kernel_avx2,
};
#endif
