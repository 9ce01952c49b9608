/* Configuration of the AVX-512 (F/BW/DQ/VL) path without VNNI (Skylake-SP): the 512-bit float kernels
 * and the exact int16-widening int8 kernel; blocking as measured on Zen 5 for the float kernels. */
#include "common.h"
#if GEMMKIT_X86

const gk_config_t gk_config_avx512 = {
    .arch = "avx512", .uarch = "any", .needs = GEMMKIT_CPU_AVX512, .cpu_match = NULL,
    GK_AVX512_FLOAT_KERNELS_AND_BLOCKS, .int8 = &gk_i8_kernel_avx512,
    .int8_blocks = {.mc = 240, .nc = 4096, .kb = 256, .l2_bytes = 384 << 10, .l3_bytes = 4 << 20,
                    .dot_max_m = 16, .kmajor_max_m = 16},
    .small = GK_SMALL_DEFAULTS,
};
#endif
