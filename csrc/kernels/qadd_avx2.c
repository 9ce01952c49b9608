/* AVX2 + FMA kernel of gemmkit_quantized_add: qadd_simd_template.h over 8-lane ymm vectors (bytes
 * widened to int32, float32 arithmetic, packed back with saturating packs of values already clamped). */
#include "../gemmkit_internal.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define QV_LANES 8
#define QV_F __m256
#define QV_I __m256i
#define QV_LOAD_BYTES(p) _mm256_cvtepu8_epi32(_mm_loadl_epi64((const __m128i *)(p)))
static inline void qadd_avx2_store8(uint8_t *p, __m256i v) {
    const __m128i w = _mm_packus_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    _mm_storel_epi64((__m128i *)p, _mm_packus_epi16(w, w));
}
#define QV_STORE_BYTES(p, v) qadd_avx2_store8((p), (v))
#define QV_SET1_F _mm256_set1_ps
#define QV_SET1_I _mm256_set1_epi32
#define QV_ADD_I _mm256_add_epi32
#define QV_SUB_I _mm256_sub_epi32
#define QV_XOR_I _mm256_xor_si256
#define QV_MAX_I _mm256_max_epi32
#define QV_MIN_I _mm256_min_epi32
#define QV_CVT_I2F _mm256_cvtepi32_ps
#define QV_CVT_F2I _mm256_cvtps_epi32
#define QV_ADD_F _mm256_add_ps
#define QV_MUL_F _mm256_mul_ps
#define QV_DIV_F _mm256_div_ps
#define QV_MAX_F _mm256_max_ps
#define QV_MIN_F _mm256_min_ps
#define QV_FMA _mm256_fmadd_ps
#define QV_NAME qadd_run_avx2
#include "qadd_simd_template.h"

const gk_qadd_kernel_t gk_qadd_kernel_avx2 = {"qadd_avx2_8lanes", qadd_run_avx2};
#endif
