/* Portable C int8 microkernel (4 x 16, k in groups of 4 bytes) and its blocking table: exact int32
 * sums of u8 x s8 products, then the double-precision epilogue (compensation, alpha, beta, co). */
#include "../gemmkit_internal.h"

#define MR 4
#define NR 16
#define KG 4

static void tile_sums(int64_t kgroups, const void *GK_RESTRICT av, const void *GK_RESTRICT bv,
                      int32_t *GK_RESTRICT s, int accumulate) {
    const uint8_t *a = (const uint8_t *)av;
    const int8_t *b = (const int8_t *)bv;
    int32_t acc[MR][NR];
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR; j++) acc[i][j] = accumulate ? s[i * NR + j] : 0;
    for (int64_t g = 0; g < kgroups; g++) {
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < NR; j++) {
                int32_t t = 0;
                for (int q = 0; q < KG; q++) t += (int32_t)a[i * KG + q] * (int32_t)b[j * KG + q];
                acc[i][j] += t;
            }
        a += MR * KG;
        b += NR * KG;
    }
    for (int i = 0; i < MR; i++)
        for (int j = 0; j < NR; j++) s[i * NR + j] = acc[i][j];
}

static void ukernel_i8_generic_4x16(int64_t kgroups, const void *GK_RESTRICT a, const void *GK_RESTRICT b,
                                    int32_t *GK_RESTRICT s, int accumulate, int32_t *GK_RESTRICT c, int64_t ldc,
                                    const gk_i8_epilogue_t *ep) {
    tile_sums(kgroups, a, b, s, accumulate);
    if (ep == NULL) return;
    int64_t s64[MR * NR];
    for (int t = 0; t < MR * NR; t++) s64[t] = s[t];
    gk_i8_epilogue_scalar(MR, NR, s64, NR, c, ldc, ep);
}

const gk_i8_kernel_t gk_i8_kernel_generic = {
    "ukernel_i8_generic_4x16", MR, NR, KG, 1, /*mc*/ 128, /*kc*/ 16384, /*nc*/ 2048, /*kb*/ 1024,
    ukernel_i8_generic_4x16, NULL, NULL,
};
