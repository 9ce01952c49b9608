/* Configuration of the AVX-512 (F/BW/DQ/VL) path without VNNI (Skylake-SP): the 512-bit float kernels
 * and the exact int16-widening int8 kernel; blocking as measured on Zen 5 for the float kernels. */
#include "common.h"
#if GEMMKIT_X86

const gk_config_t gk_config_avx512 = {
    .arch = "avx512", .uarch = "any", .needs = GEMMKIT_CPU_AVX512, .cpu_match = NULL,
    .sgemm = &gk_sgemm_kernel_avx512, .dgemm = &gk_dgemm_kernel_avx512, .int8 = &gk_i8_kernel_avx512,
    .sgemm_blocks = GK_SGEMM_AVX512_BLOCKS,
    .dgemm_blocks = GK_DGEMM_AVX512_BLOCKS,
    .cgemm_blocks = GK_SGEMM_AVX512_BLOCKS,
    .zgemm_blocks = GK_DGEMM_AVX512_BLOCKS,
    .int8_blocks = {.mc = 240, .nc = 4096, .kb = 256, .l2_bytes = 384 << 10, .l3_bytes = 4 << 20,
                    .dot_max_m = 16, .kmajor_max_m = 16},
    .small = GK_SMALL_DEFAULTS,
    .qadd = &gk_qadd_kernel_avx512,
};
#endif
