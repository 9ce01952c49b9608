/* AVX-512 (F/BW) kernel of gemmkit_quantized_add: qadd_simd_template.h over 16-lane zmm vectors; bytes
 * are widened with vpmovzxbd and narrowed with vpmovusdb (values already clamped to 0..255). */
#include "../gemmkit_internal.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define QV_LANES 16
#define QV_F __m512
#define QV_I __m512i
#define QV_LOAD_BYTES(p) _mm512_cvtepu8_epi32(_mm_loadu_si128((const __m128i *)(p)))
#define QV_STORE_BYTES(p, v) _mm_storeu_si128((__m128i *)(p), _mm512_cvtusepi32_epi8(v))
#define QV_SET1_F _mm512_set1_ps
#define QV_SET1_I _mm512_set1_epi32
#define QV_ADD_I _mm512_add_epi32
#define QV_SUB_I _mm512_sub_epi32
#define QV_XOR_I _mm512_xor_si512
#define QV_MAX_I _mm512_max_epi32
#define QV_MIN_I _mm512_min_epi32
#define QV_CVT_I2F _mm512_cvtepi32_ps
#define QV_CVT_F2I _mm512_cvtps_epi32
#define QV_ADD_F _mm512_add_ps
#define QV_MUL_F _mm512_mul_ps
#define QV_DIV_F _mm512_div_ps
#define QV_MAX_F _mm512_max_ps
#define QV_MIN_F _mm512_min_ps
#define QV_FMA _mm512_fmadd_ps
#define QV_NAME qadd_run_avx512
#include "qadd_simd_template.h"

const gk_qadd_kernel_t gk_qadd_kernel_avx512 = {"qadd_avx512_16lanes", qadd_run_avx512};
#endif
