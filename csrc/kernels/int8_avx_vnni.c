/* AVX-VNNI int8 microkernel (6 x 16, 256-bit vpdpbusd, Alder Lake and later) and its blocking table;
 * built only where the compiler knows -mavxvnni, selected only where CPUID reports AVX-VNNI. */
#include "../kernel.h"
#if GEMMKIT_X86
#define MR 6
#define NV 2
#define KG 4
#define ES 1
#define I8_STEP(acc, x, b) _mm256_dpbusd_avx_epi32(acc, x, b)
#define I8_KERNEL_NAME ukernel_i8_avx_vnni_6x16
#include "int8_ymm_template.h"

GK_ASSERT_INT8_TILE(MR, NR);
const gk_int8_kernel_t gk_int8_kernel_avx_vnni = {
    "ukernel_i8_avx_vnni_6x16", MR, NR, KG, ES, GK_INT8_K_CHUNK,
    I8_KERNEL_NAME, NULL, NULL, ukernel_i8_avx_vnni_6x16_rows,
};
#endif
