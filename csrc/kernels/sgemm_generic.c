/* Portable C sgemm microkernel (4 x 16) and its blocking table: the path for non-x86 builds and for
 * x86 CPUs without AVX2; written so compilers auto-vectorise the 16-wide row updates. */
#include "../gemmkit_internal.h"

#define MR 4
#define NR 16

static void ukernel_sgemm_generic_4x16(int64_t kc, const float *GK_RESTRICT a, int64_t rsa, const float *GK_RESTRICT b,
                                       int64_t rsb, float *GK_RESTRICT c, int64_t ldc, float alpha, float beta) {
    float acc[MR][NR] = {{0}};
    for (int64_t k = 0; k < kc; k++) {
        const float *bk = b + k * rsb;
        const float *ak = a + k * rsa;
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < NR; j++) acc[i][j] += ak[i] * bk[j];
    }
    for (int i = 0; i < MR; i++) {
        float *ci = c + i * ldc;
        if (beta == 0.0f) for (int j = 0; j < NR; j++) ci[j] = alpha * acc[i][j];
        else for (int j = 0; j < NR; j++) ci[j] = alpha * acc[i][j] + beta * ci[j];
    }
}

const gk_sgemm_kernel_t gk_sgemm_kernel_generic = {
    "ukernel_sgemm_generic_4x16", MR, NR, /*mc*/ 128, /*kc*/ 256, /*nc*/ 2048,
    ukernel_sgemm_generic_4x16, NULL, NULL,
};
