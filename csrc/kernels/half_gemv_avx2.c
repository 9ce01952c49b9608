/* The GEMV kernels (real_gemv_template.h) on a bfloat16 or float16 S read in place and widened as read (AVX2 + F16C),
 * x and y float: few rows or columns of 16-bit products without a widened copy of their big operand. */
#include "../kernel.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define T float
#define V __m256
#define VOP(op) _mm256_##op##_ps
#define VL 8
#define GV_SPREAD 1
#define GV_MANY_ROWS 1

/* bfloat16: the float's upper half, so zero-extended and shifted left 16 (exact, subnormals and NaN kept) */
static GK_FORCEINLINE __m256 bf16x8_to_ps(const uint16_t *p) {
    return _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_cvtepu16_epi32(_mm_loadu_si128((const __m128i *)p)), 16));
}
static GK_FORCEINLINE float bf16_to_ps1(uint16_t v) {
    const uint32_t u = (uint32_t)v << 16;
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

#define GEMV_ROWS_FN gemv_rows_bf16_avx2
#define GEMV_DOTS_FN gemv_dots_bf16_avx2
#define GV_S_T uint16_t
#define GV_LOAD_S(p) bf16x8_to_ps(p)
#define GV_S_VAL(v) bf16_to_ps1(v)
#include "real_gemv_template.h"
#undef GEMV_ROWS_FN
#undef GEMV_DOTS_FN

#define GV_SPREAD 1
#define GV_MANY_ROWS 1
#define GEMV_ROWS_FN gemv_rows_f16_avx2
#define GEMV_DOTS_FN gemv_dots_f16_avx2
#define GV_S_T uint16_t
#define GV_LOAD_S(p) _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(p)))
#define GV_S_VAL(v) _cvtsh_ss(v)
#include "real_gemv_template.h"
#undef GEMV_ROWS_FN
#undef GEMV_DOTS_FN

const gk_half_gemv_t gk_half_gemv_avx2 = {gemv_rows_bf16_avx2, gemv_dots_bf16_avx2, gemv_rows_f16_avx2,
                                          gemv_dots_f16_avx2};
#endif
