/* Configuration of the AMX path (Xeon Sapphire Rapids, Emerald Rapids and later): the AVX-512 VNNI path with
 * the AMX int8 kernel (32 x 32 tiles of tdpbusd); float products as there. */
#include "common.h"
#if GEMMKIT_X86 && defined(GEMMKIT_HAVE_AMX)

const gk_config_t gk_config_avx512_amx = {
    GK_CONFIG_AVX512_BASE, .arch = "avx512_amx",
    .needs = GEMMKIT_CPU_AVX512 | GEMMKIT_CPU_AVX512_VNNI | GEMMKIT_CPU_AMX_INT8,
    .int8 = &gk_int8_kernel_amx,
    .int8_blocks = {.mc = 256, .nc = 4096, .kb = 1024, .l2_bytes = 512 << 10, .l3_bytes = 4 << 20,
                    .dot_max_m = 16, .kmajor_max_m = 16},
};
#endif
