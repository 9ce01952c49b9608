/* float16 on the float kernels with AArch64 Advanced SIMD (baseline: no ISA flag): packers that widen 8 values
 * per FCVTL / FCVTL2, and C blocks narrowed by FCVTN / FCVTN2, rounding to nearest-even (the default FPCR mode). */
#include "../driver.h"
#include "../pack.h"
#include "../convert.h"

#if GEMMKIT_ARM
#include <arm_neon.h>

/* The widening is exact; scalar tails go through the portable converters, which give the same bits (a NaN
 * made quiet, its payload kept, as FCVTL does with FPCR.DN clear). */
static inline void f16_row_to_f32_neon(const uint16_t *src, int64_t n, float *dst) {
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        const float16x8_t h = vreinterpretq_f16_u16(vld1q_u16(src + j));
        vst1q_f32(dst + j, vcvt_f32_f16(vget_low_f16(h)));
        vst1q_f32(dst + j + 4, vcvt_high_f32_f16(h));
    }
    if (j + 4 <= n) {
        vst1q_f32(dst + j, vcvt_f32_f16(vreinterpret_f16_u16(vld1_u16(src + j))));
        j += 4;
    }
    for (; j < n; j++) dst[j] = gk_f16_to_f32(src[j]);
}

/* IEEE round to nearest-even (FPCR.RMode 0), float16 subnormals kept (FPCR.FZ16 clear), overflow to
 * infinity: bit for bit gk_float_to_float16_bits for every non-NaN float. */
static inline void f32_row_to_f16_neon(const float *src, int64_t n, uint16_t *dst) {
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        const float16x4_t lo = vcvt_f16_f32(vld1q_f32(src + j));
        vst1q_u16(dst + j, vreinterpretq_u16_f16(vcvt_high_f16_f32(lo, vld1q_f32(src + j + 4))));
    }
    if (j + 4 <= n) {
        vst1_u16(dst + j, vreinterpret_u16_f16(vcvt_f16_f32(vld1q_f32(src + j))));
        j += 4;
    }
    for (; j < n; j++) dst[j] = gk_float_to_float16_bits(src[j]);
}

#define T float
#define SFX f16_neon
#define TS uint16_t
#define GK_PACK_LOAD(x) gk_f16_to_f32(x)
#define GK_PACK_ROW(dst, src, n) f16_row_to_f32_neon((src), (n), (dst))
#include "../pack_real_template.h"
#undef T
#undef SFX

GK_REAL_PACKERS(f16_neon, uint16_t, float)
GK_HALF_C_CONVERTERS(f16_neon, f16_row_to_f32_neon, f32_row_to_f16_neon)
const gk_real_type_t gk_type_hgemm_neon = {"hgemm_neon", 0, pack_a_f16_neon_block, pack_b_f16_neon_block, gk_half_gemv,
                                           load_c_f16_neon, store_c_f16_neon, GK_WIDENED_F16,
                                           f16_row_to_f32_neon};
#endif
