/* fp32 packing: copies a KC-deep block of op(A) into MR-row micro-panels and of op(B) into
 * NR-column micro-panels (k-major, zero-padded at the edges) so the microkernels stream them. */
#include <string.h>
#include "pack.h"
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define GK_PACK_SSE 1
#define gk_prefetch(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#elif defined(__GNUC__)
#define gk_prefetch(p) __builtin_prefetch(p)
#else
#define gk_prefetch(p) ((void)0)
#endif
#define GK_PACK_PF_ROWS 4 /* rows of B prefetched ahead while packing */

#if GK_PACK_SSE
/* Rows r..r+3 of a k-major micro-panel (row stride `mr` floats) from 4 rows contiguous in k (A, or
 * B^T), 4 k at a time through 4x4 in-register transposes; k tail copied scalar. */
static void pack_a_rows4_sse(const float *A, int64_t lda, int64_t kc, int mr, float *dst) {
    const float *r0 = A, *r1 = A + lda, *r2 = A + 2 * lda, *r3 = A + 3 * lda;
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4) {
        __m128 x0 = _mm_loadu_ps(r0 + k), x1 = _mm_loadu_ps(r1 + k), x2 = _mm_loadu_ps(r2 + k),
               x3 = _mm_loadu_ps(r3 + k);
        _MM_TRANSPOSE4_PS(x0, x1, x2, x3);
        _mm_storeu_ps(dst + (k + 0) * mr, x0);
        _mm_storeu_ps(dst + (k + 1) * mr, x1);
        _mm_storeu_ps(dst + (k + 2) * mr, x2);
        _mm_storeu_ps(dst + (k + 3) * mr, x3);
    }
    for (; k < kc; k++) {
        float *d = dst + k * mr;
        d[0] = r0[k]; d[1] = r1[k]; d[2] = r2[k]; d[3] = r3[k];
    }
}
#endif

/* op(A)[i][k] = transa ? A[k*lda + i] : A[i*lda + k]; panel p holds rows [p*mr, p*mr+mr). */
void pack_a_f32(int transa, const float *A, int64_t lda, int64_t mc, int64_t kc, int mr,
                float *GK_RESTRICT dst) {
    for (int64_t i0 = 0; i0 < mc; i0 += mr) {
        int64_t mb = GK_MIN((int64_t)mr, mc - i0);
        if (!transa) {
#if GK_PACK_SSE
            if (mb == mr && mr % 4 == 0) {
                for (int i = 0; i < mr; i += 4) pack_a_rows4_sse(A + (i0 + i) * lda, lda, kc, mr, dst + i);
                dst += (int64_t)mr * kc;
                continue;
            }
#endif
            for (int64_t i = 0; i < mb; i++) {
                const float *src = A + (i0 + i) * lda;
                for (int64_t k = 0; k < kc; k++) dst[k * mr + i] = src[k];
            }
            for (int64_t i = mb; i < mr; i++)
                for (int64_t k = 0; k < kc; k++) dst[k * mr + i] = 0.0f;
        } else {
            for (int64_t k = 0; k < kc; k++) {
                const float *src = A + k * lda + i0;
                float *d = dst + k * mr;
                int64_t i = 0;
                for (; i < mb; i++) d[i] = src[i];
                for (; i < mr; i++) d[i] = 0.0f;
            }
        }
        dst += (int64_t)mr * kc;
    }
}

/* op(B)[k][j] = transb ? B[j*ldb + k] : B[k*ldb + j]; panel p holds columns [p*nr, p*nr+nr). */
void pack_b_f32(int transb, const float *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                float *GK_RESTRICT dst) {
    const int64_t panels = (nc + nr - 1) / nr, nc_full = nc / nr * nr;
    if (!transb) {
        /* Rows outer: each row of the block is read once, front to back, with the row a few ahead
         * prefetched (a column-strip order would touch every row once per panel, latency bound). */
        for (int64_t k = 0; k < kc; k++) {
            const float *src = B + k * ldb;
            if (k + GK_PACK_PF_ROWS < kc)
                for (int64_t j = 0; j < nc; j += 16) gk_prefetch(src + GK_PACK_PF_ROWS * ldb + j);
            for (int64_t j0 = 0; j0 < nc_full; j0 += nr) memcpy(dst + j0 * kc + k * nr, src + j0, sizeof(float) * nr);
            if (nc_full < nc) {
                float *d = dst + nc_full * kc + k * nr;
                int64_t j = 0;
                for (; j < nc - nc_full; j++) d[j] = src[nc_full + j];
                for (; j < nr; j++) d[j] = 0.0f;
            }
        }
        return;
    }
    for (int64_t p = 0; p < panels; p++) {
        const int64_t j0 = p * nr, nb = GK_MIN((int64_t)nr, nc - j0);
        float *d = dst + j0 * kc;
#if GK_PACK_SSE
        if (nb == nr && nr % 4 == 0) { /* B^T rows are contiguous in k: same 4x4 transposes as A */
            for (int j = 0; j < nr; j += 4) pack_a_rows4_sse(B + (j0 + j) * ldb, ldb, kc, nr, d + j);
            continue;
        }
#endif
        for (int64_t j = 0; j < nb; j++) {
            const float *src = B + (j0 + j) * ldb;
            for (int64_t k = 0; k < kc; k++) d[k * nr + j] = src[k];
        }
        for (int64_t j = nb; j < nr; j++)
            for (int64_t k = 0; k < kc; k++) d[k * nr + j] = 0.0f;
    }
}
