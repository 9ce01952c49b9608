/* AVX-512BW int8 microkernel without VNNI (12 x 32): bytes are widened to int16 while packing and
 * multiplied with vpmaddwd, which cannot saturate (unlike vpmaddubsw), so sums stay exact. */
#include "../kernel.h"
#if GEMMKIT_X86
#define MR 12
#define NV 2
#define KG 2
#define ES 2
#define I8_STEP(acc, x, b) _mm512_add_epi32(acc, _mm512_madd_epi16(x, b))
#define I8_KERNEL_NAME ukernel_i8_avx512bw_12x32
#include "int8_zmm_template.h"

GK_ASSERT_INT8_TILE(MR, NR);
const gk_int8_kernel_t gk_int8_kernel_avx512 = {
    "ukernel_i8_avx512bw_12x32", MR, NR, KG, ES, GK_INT8_K_CHUNK,
    I8_KERNEL_NAME, NULL, NULL, ukernel_i8_avx512bw_12x32_rows, NULL, NULL, ukernel_i8_avx512bw_12x32_panels,
};
#endif
