/* A bfloat16 pair kernel's tile on its own panels with every value widened to float exactly (subnormals kept):
 * the tile a pair kernel runs where the operands hold subnormals, and the whole of the portable pair kernel. */
/* The including file defines BP_MR, BP_NR, BP_GROUP (pairs per row of an A group: gk_real_kernel_t.k_pair_group),
 * optionally BP_BGROUP (per column of a B group: b_pair_group; 1 by default), BP_A_ROWS (1: A read as rows, rsa
 * bytes apart: gk_real_kernel_t.a_rows) and BP_NAME; the function has gk_ukernel_fn's signature (rsb unused: B is
 * always packed).
 * Sums are float32, in k order: each product of two bfloat16 values is exact in float32, so a multiply and an add
 * round once, as a fused multiply-add would. */
#include <string.h>
#ifndef BP_BGROUP
#define BP_BGROUP 1
#endif
#ifndef BP_A_ROWS
#define BP_A_ROWS 0
#endif

static void BP_NAME(int64_t kc, const void *GK_RESTRICT av, int64_t rsa, const void *GK_RESTRICT bv, int64_t rsb,
                    void *GK_RESTRICT cv, int64_t ldc, const void *alpha, const void *beta) {
    const uint32_t *a = (const uint32_t *)av, *b = (const uint32_t *)bv;
    float *c = (float *)cv;
    float acc[BP_MR][BP_NR];
    (void)rsb;
    memset(acc, 0, sizeof(acc));
    for (int64_t q = 0; q < kc; q++) {
        const uint32_t *ak = BP_A_ROWS ? a + q : a + (q / BP_GROUP) * BP_MR * BP_GROUP + q % BP_GROUP;
        const uint32_t *bk = b + (q / BP_BGROUP) * BP_NR * BP_BGROUP + q % BP_BGROUP;
        float blo[BP_NR], bhi[BP_NR];
        for (int j = 0; j < BP_NR; j++) {
            blo[j] = gk_bits_f32(bk[j * BP_BGROUP] << 16);
            bhi[j] = gk_bits_f32(bk[j * BP_BGROUP] & 0xffff0000u);
        }
        for (int i = 0; i < BP_MR; i++) {
            uint32_t ap;
            if (BP_A_ROWS) memcpy(&ap, (const char *)ak + i * rsa, 4); /* rows in place: 2-byte aligned */
            else ap = ak[i * BP_GROUP];
            const float alo = gk_bits_f32(ap << 16), ahi = gk_bits_f32(ap & 0xffff0000u);
            for (int j = 0; j < BP_NR; j++) {
                acc[i][j] += alo * blo[j];
                acc[i][j] += ahi * bhi[j];
            }
        }
    }
    const float al = *(const float *)alpha, be = *(const float *)beta;
    for (int i = 0; i < BP_MR; i++) {
        float *ci = c + i * ldc;
        if (be == 0.0f) for (int j = 0; j < BP_NR; j++) ci[j] = al * acc[i][j];
        else for (int j = 0; j < BP_NR; j++) ci[j] = al * acc[i][j] + be * ci[j];
    }
}
#undef BP_BGROUP
#undef BP_A_ROWS
