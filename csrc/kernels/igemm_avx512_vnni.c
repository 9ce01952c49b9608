/* AVX-512 VNNI int8 microkernel (12 x 32, vpdpbusd over 4-byte k groups) and its blocking table;
 * vpdpbusd does not saturate, and the k chunk bound (kc) keeps every int32 partial sum exact. */
#include "../gemmkit_internal.h"
#if GEMMKIT_X86
#define MR 12
#define NV 2
#define KG 4
#define ES 1
#define I8_STEP(acc, x, b) _mm512_dpbusd_epi32(acc, x, b)
#define I8_KERNEL_NAME ukernel_i8_avx512_vnni_12x32
#include "igemm_zmm_template.h"

/* kc: 65536 * 255 * 128 < 2^31, so 16384 leaves ample margin. */
const gk_i8_kernel_t gk_i8_kernel_avx512_vnni = {
    "ukernel_i8_avx512_vnni_12x32", MR, NR, KG, ES, /*mc*/ 240, /*kc*/ 16384, /*nc*/ 4096, /*kb*/ 512,
    I8_KERNEL_NAME,
};
#endif
