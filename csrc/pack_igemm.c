/* int8 packing: op(A) into MR-row and op(B) into NR-column micro-panels with k interleaved in groups
 * (4 bytes for VNNI, 2 int16 for the widening kernels), computing row/column sums on the way. */
#include <string.h>
#include "pack.h"

static inline void put(void *dst, int64_t idx, int elem_size, int v) {
    if (elem_size == 1) ((uint8_t *)dst)[idx] = (uint8_t)v;
    else ((int16_t *)dst)[idx] = (int16_t)v;
}

void pack_a_i8(int transa, const uint8_t *A, int64_t lda, int64_t mc, int64_t kc, int mr, int kgroup,
               int elem_size, int flip, void *GK_RESTRICT dst, int32_t *GK_RESTRICT rowsum) {
    const int64_t kp = (kc + kgroup - 1) / kgroup * kgroup;
    const uint8_t x = flip ? 0x80 : 0x00;
    uint8_t *d8 = (uint8_t *)dst;
    for (int64_t i0 = 0; i0 < mc; i0 += mr) {
        int64_t mb = GK_MIN((int64_t)mr, mc - i0);
        void *panel = d8 + (size_t)(i0 * kp) * elem_size;
        if (!transa && kgroup == 4 && elem_size == 1 && kc % 4 == 0) {
            /* Fast path: each row's 4 consecutive k are one dword of the group. */
            uint32_t *p32 = (uint32_t *)panel;
            const uint32_t x4 = flip ? 0x80808080u : 0u;
            for (int64_t i = 0; i < mr; i++) {
                int32_t s = 0;
                if (i < mb) {
                    const uint8_t *src = A + (i0 + i) * lda;
                    for (int64_t g = 0; g < kp / 4; g++) {
                        uint32_t w;
                        memcpy(&w, src + 4 * g, 4);
                        w ^= x4;
                        p32[g * mr + i] = w;
                        s += (int32_t)(w & 0xff) + (int32_t)((w >> 8) & 0xff) + (int32_t)((w >> 16) & 0xff) +
                             (int32_t)(w >> 24);
                    }
                    rowsum[i0 + i] = s;
                } else {
                    for (int64_t g = 0; g < kp / 4; g++) p32[g * mr + i] = 0;
                }
            }
            continue;
        }
        for (int64_t i = 0; i < mr; i++) {
            int32_t s = 0;
            for (int64_t k = 0; k < kp; k++) {
                int v = 0;
                if (i < mb && k < kc) {
                    v = (uint8_t)((transa ? A[k * lda + i0 + i] : A[(i0 + i) * lda + k]) ^ x);
                    s += v;
                }
                put(panel, (k / kgroup) * mr * kgroup + i * kgroup + k % kgroup, elem_size, v);
            }
            if (i < mb) rowsum[i0 + i] = s;
        }
    }
}

void pack_b_i8(int transb, const int8_t *B, int64_t ldb, int64_t kc, int64_t nc, int nr, int kgroup,
               int elem_size, void *GK_RESTRICT dst, int32_t *GK_RESTRICT colsum) {
    const int64_t kp = (kc + kgroup - 1) / kgroup * kgroup;
    uint8_t *d8 = (uint8_t *)dst;
    for (int64_t j0 = 0; j0 < nc; j0 += nr) {
        int64_t nb = GK_MIN((int64_t)nr, nc - j0);
        void *panel = d8 + (size_t)(j0 * kp) * elem_size;
        for (int64_t j = 0; j < nb; j++) colsum[j0 + j] = 0;
        if (!transb) {
            /* Rows of B are contiguous along j: walk k outer, j inner. */
            for (int64_t k = 0; k < kp; k++) {
                const int8_t *src = B + k * ldb + j0;
                int64_t base = (k / kgroup) * nr * kgroup + k % kgroup;
                if (k < kc) {
                    for (int64_t j = 0; j < nb; j++) {
                        int v = src[j];
                        colsum[j0 + j] += v;
                        put(panel, base + j * kgroup, elem_size, v);
                    }
                    for (int64_t j = nb; j < nr; j++) put(panel, base + j * kgroup, elem_size, 0);
                } else {
                    for (int64_t j = 0; j < nr; j++) put(panel, base + j * kgroup, elem_size, 0);
                }
            }
        } else {
            for (int64_t j = 0; j < nr; j++) {
                const int8_t *src = B + (j0 + j) * ldb;
                int32_t s = 0;
                for (int64_t k = 0; k < kp; k++) {
                    int v = (j < nb && k < kc) ? src[k] : 0;
                    s += v;
                    put(panel, (k / kgroup) * nr * kgroup + j * kgroup + k % kgroup, elem_size, v);
                }
                if (j < nb) colsum[j0 + j] = s;
            }
        }
    }
}
