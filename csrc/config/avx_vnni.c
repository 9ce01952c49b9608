/* Configuration of the AVX-VNNI path (Alder Lake and later without AVX-512): the AVX2 float kernels
 * and the 256-bit vpdpbusd int8 kernel, with the AVX2 blocking. */
#include "common.h"
#if GEMMKIT_X86 && defined(GEMMKIT_HAVE_AVX_VNNI)

const gk_config_t gk_config_avx_vnni = {
    .arch = "avx_vnni", .uarch = "any", .needs = GEMMKIT_CPU_AVX2 | GEMMKIT_CPU_AVX_VNNI, .cpu_match = NULL,
    .sgemm = &gk_sgemm_kernel_avx2, .dgemm = &gk_dgemm_kernel_avx2, .int8 = &gk_i8_kernel_avx_vnni,
    .sgemm_blocks = GK_SGEMM_AVX2_BLOCKS,
    .dgemm_blocks = GK_DGEMM_AVX2_BLOCKS,
    .cgemm_blocks = GK_SGEMM_AVX2_BLOCKS,
    .zgemm_blocks = GK_DGEMM_AVX2_BLOCKS,
    .int8_blocks = {.mc = 120, .nc = 4096, .kb = 512, .l2_bytes = 384 << 10, .l3_bytes = 4 << 20,
                    .dot_max_m = 16, .kmajor_max_m = 16},
    .small = GK_SMALL_DEFAULTS,
    .qadd = &gk_qadd_kernel_avx2,
    .quant = &gk_quant_kernel_avx2,
};
#endif
