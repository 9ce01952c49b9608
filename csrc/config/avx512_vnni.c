/* Configuration of the AVX-512 VNNI path (Ice Lake / Sapphire Rapids, AMD Zen 4 / Zen 5): the 512-bit
 * float kernels and the vpdpbusd int8 kernel; tuned on a Zen 5 core. */
#include "common.h"
#if GEMMKIT_X86

const gk_config_t gk_config_avx512_vnni = {GK_CONFIG_AVX512_BASE, GK_AVX512_VNNI_KERNELS};
#endif
