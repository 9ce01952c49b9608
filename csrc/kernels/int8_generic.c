/* Portable C int8 microkernel (4 x 16, k in groups of 4 bytes): exact int32 sums of u8 x s8 products,
 * and the portable epilogue (compensation, alpha, beta, co) that edge tiles and the dot path share. */
#include "../kernel.h"
#include "../convert.h"

#define MR 4
#define NR 16
#define KG 4

/* The epilogue's GK_EP_DOUBLE formula (int8_epilogue.h), elementwise, for every destination type:
 * the reference every SIMD epilogue agrees with bit for bit. */
void gk_int8_epilogue_scalar(int64_t m, int64_t n, const int64_t *S, int64_t lds, void *C, int64_t ldc,
                           const gk_int8_epilogue_t *ep) {
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++) {
            const double acc = (double)S[i * lds + j] + ep->row_comp[i] + ep->col_comp[j];
            if (ep->dst != GK_DST_INT32) {
                const float y = gk_int8_scaled_value((float)acc, ep, i, j); /* acc: an exact integer */
                if (ep->dst == GK_DST_FLOAT32) ((float *)C)[i * ldc + j] = y;
                else if (ep->dst == GK_DST_FLOAT16) ((uint16_t *)C)[i * ldc + j] = gk_float_to_float16_bits(y);
                else ((uint16_t *)C)[i * ldc + j] = gk_float_to_bfloat16_bits(y);
                continue;
            }
            int32_t *c = (int32_t *)C + i * ldc + j;
            double v = ep->alpha * acc;
            if (ep->beta != 0.0) v = v + ep->beta * (double)*c;
            if (ep->row_add) v = v + ep->row_add[i];
            if (ep->col_add) v = v + ep->col_add[j];
            *c = gk_round_sat_i32(v);
        }
}


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
                                    int32_t *GK_RESTRICT s, int accumulate, void *GK_RESTRICT c, int64_t ldc,
                                    const gk_int8_epilogue_t *ep) {
    tile_sums(kgroups, a, b, s, accumulate);
    if (ep == NULL) return;
    int64_t s64[MR * NR];
    for (int t = 0; t < MR * NR; t++) s64[t] = s[t];
    gk_int8_epilogue_scalar(MR, NR, s64, NR, c, ldc, ep);
}

GK_ASSERT_INT8_TILE(MR, NR);
const gk_int8_kernel_t gk_int8_kernel_generic = {
    "ukernel_i8_generic_4x16", MR, NR, KG, 1, GK_INT8_K_CHUNK,
    ukernel_i8_generic_4x16, NULL, NULL,
};
