/* fp32 packing: copies a KC-deep block of op(A) into MR-row micro-panels and of op(B) into
 * NR-column micro-panels (k-major, zero-padded at the edges) so the microkernels stream them. */
#include <string.h>
#include "pack.h"
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define GK_PACK_SSE 1
#endif
#define GK_PACK_PF_ROWS 4 /* source rows prefetched ahead while packing k-major blocks */

/* Both operands reduce to one of two source shapes for a block `width` wide (rows of op(A), columns of
 * op(B)), packed into panels of pw (element (k, x) of panel p at dst[p*pw*kc + k*pw + x % pw]):
 *   k-contiguous: element (k, x) at src[x * ld + k]  (A plain, B transposed)
 *   k-major:      element (k, x) at src[k * ld + x]  (A transposed, B plain) */

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

static void pack_block_kcontig(const float *src, int64_t ld, int64_t width, int64_t kc, int pw,
                               float *GK_RESTRICT dst) {
    for (int64_t x0 = 0; x0 < width; x0 += pw) {
        const int64_t w = GK_MIN((int64_t)pw, width - x0);
        float *d = dst + x0 * kc;
#if GK_PACK_SSE
        if (w == pw && pw % 4 == 0) {
            for (int x = 0; x < pw; x += 4) pack_rows4_sse(src + (x0 + x) * ld, ld, kc, pw, d + x);
            continue;
        }
#endif
        for (int64_t x = 0; x < w; x++) {
            const float *s = src + (x0 + x) * ld;
            for (int64_t k = 0; k < kc; k++) d[k * pw + x] = s[k];
        }
        for (int64_t x = w; x < pw; x++)
            for (int64_t k = 0; k < kc; k++) d[k * pw + x] = 0.0f;
    }
}

/* Rows outer: each source row of the block is read once, front to back, with a row a few ahead
 * prefetched (a panel-by-panel order would touch every row once per panel, latency bound). */
static void pack_block_kmajor(const float *src, int64_t ld, int64_t width, int64_t kc, int pw,
                              float *GK_RESTRICT dst) {
    const int64_t full = width / pw * pw;
    for (int64_t k = 0; k < kc; k++) {
        const float *s = src + k * ld;
        if (k + GK_PACK_PF_ROWS < kc)
            for (int64_t x = 0; x < width; x += 16) GK_PREFETCH(s + GK_PACK_PF_ROWS * ld + x);
        for (int64_t x0 = 0; x0 < full; x0 += pw) memcpy(dst + x0 * kc + k * pw, s + x0, sizeof(float) * pw);
        if (full < width) {
            float *d = dst + full * kc + k * pw;
            int64_t x = 0;
            for (; x < width - full; x++) d[x] = s[full + x];
            for (; x < pw; x++) d[x] = 0.0f;
        }
    }
}

/* op(A)[i][k] = transa ? A[k*lda + i] : A[i*lda + k]; panel p holds rows [p*mr, p*mr+mr). */
void pack_a_f32(int transa, const float *A, int64_t lda, int64_t mc, int64_t kc, int mr,
                float *GK_RESTRICT dst) {
    if (transa) pack_block_kmajor(A, lda, mc, kc, mr, dst);
    else pack_block_kcontig(A, lda, mc, kc, mr, dst);
}

/* op(B)[k][j] = transb ? B[j*ldb + k] : B[k*ldb + j]; panel p holds columns [p*nr, p*nr+nr). */
void pack_b_f32(int transb, const float *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                float *GK_RESTRICT dst) {
    if (transb) pack_block_kcontig(B, ldb, nc, kc, nr, dst);
    else pack_block_kmajor(B, ldb, nc, kc, nr, dst);
}
