/* Real-domain packing (float and double): copies a KC-deep block of op(A) into MR-row micro-panels and
 * of op(B) into NR-column micro-panels (k-major, zero-padded at the edges) so the microkernels stream them. */
#include <string.h>
#include "pack.h"
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define GK_PACK_SSE 1
#endif

#if GK_PACK_SSE
/* Columns 0..3 of a panel (row stride pw) from 4 sources contiguous in k, 4 k at a time through 4x4
 * in-register transposes; k tail copied scalar. The next 4 sources' lines are prefetched as these
 * go: each source row is a short stream (kc floats), too short for the hardware prefetcher to ramp up. */
static void pack_rows4_sse(const float *src, int64_t ld, int64_t kc, int pw, float *dst) {
    const float *r0 = src, *r1 = src + ld, *r2 = src + 2 * ld, *r3 = src + 3 * ld;
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4) {
        if ((k & 15) == 0)
            for (int q = 4; q < 8; q++) GK_PREFETCH(src + q * ld + k);
        __m128 x0 = _mm_loadu_ps(r0 + k), x1 = _mm_loadu_ps(r1 + k), x2 = _mm_loadu_ps(r2 + k),
               x3 = _mm_loadu_ps(r3 + k);
        _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
        _mm_storeu_ps(dst + (k + 0) * pw, x0);
        _mm_storeu_ps(dst + (k + 1) * pw, x1);
        _mm_storeu_ps(dst + (k + 2) * pw, x2);
        _mm_storeu_ps(dst + (k + 3) * pw, x3);
    }
    for (; k < kc; k++) {
        float *d = dst + k * pw;
        d[0] = r0[k]; d[1] = r1[k]; d[2] = r2[k]; d[3] = r3[k];
    }
}
#endif

#if GK_PACK_SSE
/* Columns 0..1 of a panel (row stride pw) from 2 float sources contiguous in k, 4 k at a time: the two
 * rows interleaved by unpacklo/hi, each k's pair stored as one 64-bit half (the 6-row AVX2 panel is
 * a 4-row transpose and this pair). */
static void pack_rows2_sse_f32(const float *src, int64_t ld, int64_t kc, int pw, float *dst) {
    const float *r0 = src, *r1 = src + ld;
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4) {
        const __m128 x0 = _mm_loadu_ps(r0 + k), x1 = _mm_loadu_ps(r1 + k);
        const __m128 lo = _mm_unpacklo_ps(x0, x1), hi = _mm_unpackhi_ps(x0, x1);
        _mm_storel_pi((__m64 *)(dst + (k + 0) * pw), lo);
        _mm_storeh_pi((__m64 *)(dst + (k + 1) * pw), lo);
        _mm_storel_pi((__m64 *)(dst + (k + 2) * pw), hi);
        _mm_storeh_pi((__m64 *)(dst + (k + 3) * pw), hi);
    }
    for (; k < kc; k++) {
        float *d = dst + k * pw;
        d[0] = r0[k]; d[1] = r1[k];
    }
}
#endif

#if GK_PACK_SSE
/* Columns 0..1 of a panel (row stride pw) from 2 sources contiguous in k, 2 k at a time through 2x2
 * in-register transposes, the next sources prefetched as for float; k tail copied scalar. */
static void pack_rows2_sse2(const double *src, int64_t ld, int64_t kc, int pw, double *dst) {
    const double *r0 = src, *r1 = src + ld;
    int64_t k = 0;
    for (; k + 2 <= kc; k += 2) {
        if ((k & 7) == 0)
            for (int q = 2; q < 4; q++) GK_PREFETCH(src + q * ld + k);
        __m128d x0 = _mm_loadu_pd(r0 + k), x1 = _mm_loadu_pd(r1 + k);
        _mm_storeu_pd(dst + (k + 0) * pw, _mm_unpacklo_pd(x0, x1));
        _mm_storeu_pd(dst + (k + 1) * pw, _mm_unpackhi_pd(x0, x1));
    }
    for (; k < kc; k++) {
        double *d = dst + k * pw;
        d[0] = r0[k]; d[1] = r1[k];
    }
}
#endif

#define GK_CAT_(a, b) a##b
#define GK_CAT(a, b) GK_CAT_(a, b)

#define T float
#define SFX f32
#if GK_PACK_SSE
#define ROWS_SIMD pack_rows4_sse
#define ROWS_SIMD_N 4
#define ROWS_SIMD_PAIR pack_rows2_sse_f32
#endif
#include "pack_real_template.h"
#undef T
#undef SFX
#undef ROWS_SIMD
#undef ROWS_SIMD_N
#undef ROWS_SIMD_PAIR

#define T double
#define SFX f64
#if GK_PACK_SSE
#define ROWS_SIMD pack_rows2_sse2
#define ROWS_SIMD_N 2
#endif
#include "pack_real_template.h"
#undef T
#undef SFX
#undef ROWS_SIMD
#undef ROWS_SIMD_N

/* float16 and bfloat16 (their uint16_t bits) widened to float while packing, for the float kernels. */
#include "convert.h"
#define T float
#define SFX f16
#define TS uint16_t
#define GK_PACK_LOAD(x) gk_f16_to_f32(x)
#define GK_PACK_ROW(dst, src, n) gk_f16_row_to_f32((src), (n), (dst))
#include "pack_real_template.h"
#undef T
#undef SFX

#define T float
#define SFX bf16
#define TS uint16_t
#define GK_PACK_LOAD(x) gk_bf16_to_f32(x)
#define GK_PACK_ROW(dst, src, n) gk_bf16_row_to_f32((src), (n), (dst))
#include "pack_real_template.h"
#undef T
#undef SFX
