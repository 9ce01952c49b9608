/* AVX2 int8 microkernel without VNNI (6 x 16): bytes are widened to int16 while packing and
 * multiplied with vpmaddwd, which cannot saturate (unlike vpmaddubsw), so sums stay exact. */
#include "../gemmkit_internal.h"
#if GEMMKIT_X86
#define MR 6
#define NV 2
#define KG 2
#define ES 2
#define I8_STEP(acc, x, b) _mm256_add_epi32(acc, _mm256_madd_epi16(x, b))
#define I8_KERNEL_NAME ukernel_i8_avx2_6x16
#include "int8_ymm_template.h"

const gk_i8_kernel_t gk_i8_kernel_avx2 = {
    "ukernel_i8_avx2_6x16", MR, NR, KG, ES, /*k_exact*/ 16384,
    I8_KERNEL_NAME, NULL, NULL, ukernel_i8_avx2_6x16_rows,
};
#endif
