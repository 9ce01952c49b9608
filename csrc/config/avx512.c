/* Configuration of the AVX-512 (F/BW/DQ/VL) path without VNNI (Skylake-SP): the 512-bit float kernels
 * and the exact int16-widening int8 kernel; blocking as measured on Zen 5 for the float kernels. */
#include "common.h"
#if GEMMKIT_X86

const gk_config_t gk_config_avx512 = {
    GK_CONFIG_AVX512_BASE,
    .int8_blocks = {.mc = 240, .nc = 4096, .kb = 256, .l2_bytes = 384 << 10, .l3_bytes = 4 << 20,
                    .dot_max_m = 16, .kmajor_max_m = 16},
};
#endif
