/* float16 on the float kernels with F16C (compiled with AVX2 + F16C flags only): packers that widen 8
 * values per vcvtph2ps, and C blocks narrowed by vcvtps2ph, rounding to nearest-even. */
#include <immintrin.h>
#include "../driver.h"
#include "../pack.h"

#if GEMMKIT_X86
static inline void f16_row_to_f32_f16c(const uint16_t *src, int64_t n, float *dst) {
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        _mm256_storeu_ps(dst + j, _mm256_cvtph_ps(_mm_loadu_si128((const __m128i *)(src + j))));
    for (; j < n; j++) dst[j] = _cvtsh_ss(src[j]);
}

static inline void f32_row_to_f16_f16c(const float *src, int64_t n, uint16_t *dst) {
    int64_t j = 0;
    for (; j + 8 <= n; j += 8)
        _mm_storeu_si128((__m128i *)(dst + j),
                         _mm256_cvtps_ph(_mm256_loadu_ps(src + j), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
    for (; j < n; j++) dst[j] = (uint16_t)_cvtss_sh(src[j], _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
}

#define T float
#define SFX f16_f16c
#define TS uint16_t
#define GK_PACK_LOAD(x) _cvtsh_ss(x)
#define GK_PACK_ROW(dst, src, n) f16_row_to_f32_f16c((src), (n), (dst))
#include "../pack_real_template.h"
#undef T
#undef SFX

GK_REAL_PACKERS(f16_f16c, uint16_t, float)
GK_HALF_C_CONVERTERS(f16_f16c, f16_row_to_f32_f16c, f32_row_to_f16_f16c)
const gk_real_type_t gk_type_hgemm_f16c = {"hgemm_f16c", 0, pack_a_f16_f16c_block, pack_b_f16_f16c_block, gk_half_gemv,
                                           load_c_f16_f16c, store_c_f16_f16c, GK_WIDENED_F16,
                                           f16_row_to_f32_f16c};
#endif
