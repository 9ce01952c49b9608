/* Configuration of the AVX-VNNI path (Alder Lake and later without AVX-512): the AVX2 path's kernels
 * (real and native complex) and blocking with the 256-bit vpdpbusd int8 kernel. */
#include "common.h"
#if GEMMKIT_X86 && defined(GEMMKIT_HAVE_AVX_VNNI)

const gk_config_t gk_config_avx_vnni = {
    GK_CONFIG_AVX2_BASE, /* the AVX2 kernels (native complex ones included) and blocks, then: */
    .path = GK_PATH_avx_vnni, .needs = GEMMKIT_CPU_AVX2 | GEMMKIT_CPU_AVX_VNNI, .int8 = &gk_int8_kernel_avx_vnni,
    .int8_blocks = {.mc = 120, .nc = 4096, .kb = 512, .l2_bytes = 384 << 10, .l3_bytes = 4 << 20,
                    .dot_max_m = 16, .kmajor_max_m = 16},
};
#endif
