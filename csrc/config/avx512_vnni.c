/* Configuration of the AVX-512 VNNI path (Ice Lake / Sapphire Rapids, AMD Zen 4 / Zen 5): the 512-bit
 * float kernels and the vpdpbusd int8 kernel; tuned on a Zen 5 core. */
#include "common.h"
#if GEMMKIT_X86

const gk_config_t gk_config_avx512_vnni = {
    GK_CONFIG_AVX512_BASE, .path = GK_PATH_avx512_vnni, .needs = GEMMKIT_CPU_AVX512 | GEMMKIT_CPU_AVX512_VNNI,
    .int8 = &gk_int8_kernel_avx512_vnni, GK_BF16_AVX512_KERNEL,
    .int8_blocks = {.mc = 240, .nc = 4096, .kb = 512, .l2_bytes = 384 << 10, .l3_bytes = 4 << 20,
                    .dot_max_m = 16, .kmajor_max_m = 16},
};
#endif
