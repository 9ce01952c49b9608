/* AVX2 + FMA kernel of gemmkit_quantized_add: qadd_simd_template.h over ymm vectors, 32 bytes of each
 * operand per step as four 8-lane float vectors. */
#include "../qadd.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define QV_LANES 8
#define QV_F __m256
#define QV_I __m256i
#define QV_LOADU_I(p) _mm256_loadu_si256((const __m256i *)(p))
#define QV_STOREU_I(p, v) _mm256_storeu_si256((__m256i *)(p), (v))
#define QV_STREAM_I(p, v) _mm256_stream_si256((__m256i *)(p), (v))
#define QV_STREAM_FENCE() _mm_sfence()
#define QV_SET1_F _mm256_set1_ps
#define QV_SET1_I8 _mm256_set1_epi8
#define QV_SET1_I16 _mm256_set1_epi16
#define QV_XOR_I _mm256_xor_si256
#define QV_AND_I _mm256_and_si256
#define QV_UNPACKLO8 _mm256_unpacklo_epi8
#define QV_UNPACKHI8 _mm256_unpackhi_epi8
#define QV_UNPACKLO16 _mm256_unpacklo_epi16
#define QV_UNPACKHI16 _mm256_unpackhi_epi16
#define QV_PACKS32 _mm256_packs_epi32
#define QV_ADDS16 _mm256_adds_epi16
#define QV_PACKUS16 _mm256_packus_epi16
#define QV_SLLI16(x, k) _mm256_slli_epi16((x), (k))
#define QV_MULHRS16 _mm256_mulhrs_epi16
#define QV_SRA16 _mm256_sra_epi16
#define QV_CAST_I2F _mm256_castsi256_ps
#define QV_CVT_F2I _mm256_cvtps_epi32
#define QV_SUB_F _mm256_sub_ps
#define QV_ADD_F _mm256_add_ps
#define QV_MUL_F _mm256_mul_ps
#define QV_DIV_F _mm256_div_ps
#define QV_MIN_F _mm256_min_ps
#define QV_FMA _mm256_fmadd_ps
#define QV_NAME qadd_run_avx2
#include "qadd_simd_template.h"

const gk_qadd_kernel_t gk_qadd_kernel_avx2 = {"qadd_avx2_32bytes", qadd_run_avx2, 1};
#endif
