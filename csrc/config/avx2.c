/* Configuration of the AVX2 + FMA path (Haswell and later, AMD Zen 1-3): the 256-bit kernels and their
 * blocking (A block in a 512 KiB L2, B block in a share of L3); int8 widens bytes to int16 (exact). */
#include "common.h"
#if GEMMKIT_X86

const gk_config_t gk_config_avx2 = {
    GK_CONFIG_AVX2_BASE,
};
#endif
