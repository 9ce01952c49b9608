/* AVX-512 (F/BW) kernel of gemmkit_quantized_add: qadd_simd_template.h over zmm vectors, 64 bytes of
 * each operand per step as four 16-lane float vectors. */
#include "../qadd.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define QV_LANES 16
#define QV_F __m512
#define QV_I __m512i
#define QV_LOADU_I(p) _mm512_loadu_si512((const void *)(p))
#define QV_STOREU_I(p, v) _mm512_storeu_si512((void *)(p), (v))
#define QV_STREAM_I(p, v) _mm512_stream_si512((__m512i *)(p), (v))
#define QV_STREAM_FENCE() _mm_sfence()
#define QV_SET1_F _mm512_set1_ps
#define QV_SET1_I8 _mm512_set1_epi8
#define QV_SET1_I16 _mm512_set1_epi16
#define QV_XOR_I _mm512_xor_si512
#define QV_AND_I _mm512_and_si512
#define QV_UNPACKLO8 _mm512_unpacklo_epi8
#define QV_UNPACKHI8 _mm512_unpackhi_epi8
#define QV_UNPACKLO16 _mm512_unpacklo_epi16
#define QV_UNPACKHI16 _mm512_unpackhi_epi16
#define QV_PACKS32 _mm512_packs_epi32
#define QV_ADDS16 _mm512_adds_epi16
#define QV_PACKUS16 _mm512_packus_epi16
#define QV_SLLI16(x, k) _mm512_slli_epi16((x), (k))
#define QV_MULHRS16 _mm512_mulhrs_epi16
#define QV_SRA16 _mm512_sra_epi16
#define QV_CAST_I2F _mm512_castsi512_ps
#define QV_CVT_F2I _mm512_cvtps_epi32
#define QV_SUB_F _mm512_sub_ps
#define QV_ADD_F _mm512_add_ps
#define QV_MUL_F _mm512_mul_ps
#define QV_DIV_F _mm512_div_ps
#define QV_MIN_F _mm512_min_ps
#define QV_FMA _mm512_fmadd_ps
#define QV_NAME qadd_run_avx512
#include "qadd_simd_template.h"

const gk_qadd_kernel_t gk_qadd_kernel_avx512 = {"qadd_avx512_64bytes", qadd_run_avx512, 1};
#endif
