/* fp32 packing: copies a KC-deep block of op(A) into MR-row micro-panels and of op(B) into
 * NR-column micro-panels (k-major, zero-padded at the edges) so the microkernels stream them. */
#include <string.h>
#include "pack.h"

/* op(A)[i][k] = transa ? A[k*lda + i] : A[i*lda + k]; panel p holds rows [p*mr, p*mr+mr). */
void pack_a_f32(int transa, const float *A, int64_t lda, int64_t mc, int64_t kc, int mr,
                float *GK_RESTRICT dst) {
    for (int64_t i0 = 0; i0 < mc; i0 += mr) {
        int64_t mb = GK_MIN((int64_t)mr, mc - i0);
        if (!transa) {
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
    for (int64_t j0 = 0; j0 < nc; j0 += nr) {
        int64_t nb = GK_MIN((int64_t)nr, nc - j0);
        if (!transb) {
            if (nb == nr) {
                for (int64_t k = 0; k < kc; k++) memcpy(dst + k * nr, B + k * ldb + j0, sizeof(float) * nr);
            } else {
                for (int64_t k = 0; k < kc; k++) {
                    const float *src = B + k * ldb + j0;
                    float *d = dst + k * nr;
                    int64_t j = 0;
                    for (; j < nb; j++) d[j] = src[j];
                    for (; j < nr; j++) d[j] = 0.0f;
                }
            }
        } else {
            for (int64_t j = 0; j < nb; j++) {
                const float *src = B + (j0 + j) * ldb;
                for (int64_t k = 0; k < kc; k++) dst[k * nr + j] = src[k];
            }
            for (int64_t j = nb; j < nr; j++)
                for (int64_t k = 0; k < kc; k++) dst[k * nr + j] = 0.0f;
        }
        dst += (int64_t)nr * kc;
    }
}
