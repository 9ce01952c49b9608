/* AVX2 + FMA sgemm microkernel (6 x 16: 12 ymm accumulators) with 1..5-row variants for edge row panels,
 * the dot path and few-columns loops (real_ymm_dot.h), and on its k loop the native cgemm kernel (3 x 8 complex);
 * compiled alone with -mavx2 -mfma. */
#include "../kernel.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define MR 6
#define NR 16

#define T float
#define V __m256
#define VSUF ps
#define VBCAST _mm256_broadcast_ss
#define ES 4
#define X "s"
#define VL 8
#define TILE_FN sgemm_tile_avx2
#include "real_ymm_template.h"

GK_YMM_ROWS_KERNEL(ukernel_sgemm_avx2_1x16, 1)
GK_YMM_ROWS_KERNEL(ukernel_sgemm_avx2_2x16, 2)
GK_YMM_ROWS_KERNEL(ukernel_sgemm_avx2_3x16, 3)
GK_YMM_ROWS_KERNEL(ukernel_sgemm_avx2_4x16, 4)
GK_YMM_ROWS_KERNEL(ukernel_sgemm_avx2_5x16, 5)
GK_YMM_ROWS_KERNEL(ukernel_sgemm_avx2_6x16, 6)

static const gk_ukernel_fn rows_kernels[MR] = {
    NULL, ukernel_sgemm_avx2_1x16, ukernel_sgemm_avx2_2x16, ukernel_sgemm_avx2_3x16, ukernel_sgemm_avx2_4x16,
    ukernel_sgemm_avx2_5x16,
};

/* B^T into the tiny kernel's K rows of NP floats (zero past N): 8 x 8 blocks through in-register transposes, the
 * edges scalar (an element-by-element copy had taken a third of a small product's time). */
static void tiny_copy_bt_sgemm_avx2(const float *B, int64_t ldb, int64_t K, int64_t N, int64_t NP, float *dst) {
    int64_t j0 = 0;
    for (; j0 + 8 <= N; j0 += 8) {
        int64_t k0 = 0;
        for (; k0 + 8 <= K; k0 += 8) {
            __m256 r[8], t[8], u[8];
            for (int i = 0; i < 8; i++) r[i] = _mm256_loadu_ps(B + (j0 + i) * ldb + k0);
            for (int i = 0; i < 8; i += 2) {
                t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);
                t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);
            }
            for (int h = 0; h < 8; h += 4) {
                u[h] = _mm256_shuffle_ps(t[h], t[h + 2], 0x44);
                u[h + 1] = _mm256_shuffle_ps(t[h], t[h + 2], 0xEE);
                u[h + 2] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0x44);
                u[h + 3] = _mm256_shuffle_ps(t[h + 1], t[h + 3], 0xEE);
            }
            for (int i = 0; i < 4; i++) {
                _mm256_storeu_ps(dst + (k0 + i) * NP + j0, _mm256_permute2f128_ps(u[i], u[i + 4], 0x20));
                _mm256_storeu_ps(dst + (k0 + i + 4) * NP + j0, _mm256_permute2f128_ps(u[i], u[i + 4], 0x31));
            }
        }
        for (; k0 < K; k0++)
            for (int i = 0; i < 8; i++) dst[k0 * NP + j0 + i] = B[(j0 + i) * ldb + k0];
    }
    for (int64_t k = 0; k < K; k++) {
        for (int64_t j = j0; j < N; j++) dst[k * NP + j] = B[j * ldb + k];
        for (int64_t j = N; j < NP; j++) dst[k * NP + j] = 0.0f;
    }
}

#define TINY_FN tiny_sgemm_avx2
#define TINY_COMPLEX_FN tiny_cgemm_avx2
#define GK_TINY_COPY_BT tiny_copy_bt_sgemm_avx2
#if defined(GK_YMM_ASM)
#define GK_TINY_SUMS6 sgemm_tile_avx2_sums_direct_asm
#define GK_TINY_SUMS6_NT sgemm_tile_avx2_sums_direct_nt_asm
#define GK_TINY_SUMS5 sgemm_tile_avx2_sums5_direct_asm
#define GK_TINY_SUMS5_NT sgemm_tile_avx2_sums5_direct_nt_asm
#endif
#include "real_tiny_template.h"
#undef TINY_FN
#undef TINY_COMPLEX_FN

void gk_tiny_sgemm_avx2(int64_t M, int64_t N, int64_t K, const void *alpha, const void *A, int64_t lda, int transa,
                        const void *B, int64_t ldb, int transb, const void *beta, void *C, int64_t ldc,
                        const gk_tiny_stream_t *stream) {
    tiny_sgemm_avx2(M, N, K, alpha, A, lda, transa, B, ldb, transb, beta, C, ldc, stream);
}

#define DOT_FN sgemm_dot_avx2
#define COLS_FN sgemm_cols_avx2
#include "real_ymm_dot.h"
#undef DOT_FN
#undef COLS_FN

#define PLAIN_FN sgemm_plain_avx2
#include "real_ymm_plain.h"
#undef PLAIN_FN

#define GEMV_ROWS_FN gemv_rows_sgemm_avx2
#define GEMV_DOTS_FN gemv_dots_sgemm_avx2
#define GV_SPREAD 1
#include "real_gemv_template.h"

GK_ASSERT_REAL_TILE(MR, NR, 4);
const gk_real_kernel_t gk_sgemm_kernel_avx2 = {
    "ukernel_sgemm_avx2_6x16", 4, MR, NR, ukernel_sgemm_avx2_6x16, rows_kernels, sgemm_dot_avx2, tiny_sgemm_avx2, tiny_cgemm_avx2,
    gemv_rows_sgemm_avx2, gemv_dots_sgemm_avx2, .cols = sgemm_cols_avx2, .cols_rows = sgemm_cols_avx2_rows,
    .plain = sgemm_plain_avx2, .plain_group_cols = sgemm_plain_avx2_group_cols,
};

#define CX_TILE_FN cgemm_tile_avx2
#include "complex_ymm_template.h"

GK_YMM_CX_KERNEL_TABLE(cgemm, 8, tiny_cgemm_avx2)
#endif
