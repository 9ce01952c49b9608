/* AVX2 + FMA dgemm microkernel (6 x 8: 12 ymm accumulators) with 1..5-row variants for edge row panels,
 * the dot path and few-columns loops (real_ymm_dot.h), and on its k loop the native zgemm kernel (3 x 4 complex);
 * compiled alone with -mavx2 -mfma. */
#include "../kernel.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define MR 6
#define NR 8

#define T double
#define V __m256d
#define VSUF pd
#define VBCAST _mm256_broadcast_sd
#define ES 8
#define X "d"
#define VL 4
#define TILE_FN dgemm_tile_avx2
#include "real_ymm_template.h"

GK_YMM_ROWS_KERNEL(ukernel_dgemm_avx2_1x8, 1)
GK_YMM_ROWS_KERNEL(ukernel_dgemm_avx2_2x8, 2)
GK_YMM_ROWS_KERNEL(ukernel_dgemm_avx2_3x8, 3)
GK_YMM_ROWS_KERNEL(ukernel_dgemm_avx2_4x8, 4)
GK_YMM_ROWS_KERNEL(ukernel_dgemm_avx2_5x8, 5)
GK_YMM_ROWS_KERNEL(ukernel_dgemm_avx2_6x8, 6)

static const gk_ukernel_fn rows_kernels[MR] = {
    NULL, ukernel_dgemm_avx2_1x8, ukernel_dgemm_avx2_2x8, ukernel_dgemm_avx2_3x8, ukernel_dgemm_avx2_4x8,
    ukernel_dgemm_avx2_5x8,
};

/* B^T into the tiny kernel's K rows of NP doubles (zero past N): 4 x 4 blocks through in-register
 * transposes, the edges scalar. */
static void tiny_copy_bt_dgemm_avx2(const double *B, int64_t ldb, int64_t K, int64_t N, int64_t NP, double *dst) {
    int64_t j0 = 0;
    for (; j0 + 4 <= N; j0 += 4) {
        int64_t k0 = 0;
        for (; k0 + 4 <= K; k0 += 4) {
            const __m256d r0 = _mm256_loadu_pd(B + j0 * ldb + k0), r1 = _mm256_loadu_pd(B + (j0 + 1) * ldb + k0),
                          r2 = _mm256_loadu_pd(B + (j0 + 2) * ldb + k0), r3 = _mm256_loadu_pd(B + (j0 + 3) * ldb + k0);
            const __m256d t0 = _mm256_unpacklo_pd(r0, r1), t1 = _mm256_unpackhi_pd(r0, r1),
                          t2 = _mm256_unpacklo_pd(r2, r3), t3 = _mm256_unpackhi_pd(r2, r3);
            _mm256_storeu_pd(dst + k0 * NP + j0, _mm256_permute2f128_pd(t0, t2, 0x20));
            _mm256_storeu_pd(dst + (k0 + 1) * NP + j0, _mm256_permute2f128_pd(t1, t3, 0x20));
            _mm256_storeu_pd(dst + (k0 + 2) * NP + j0, _mm256_permute2f128_pd(t0, t2, 0x31));
            _mm256_storeu_pd(dst + (k0 + 3) * NP + j0, _mm256_permute2f128_pd(t1, t3, 0x31));
        }
        for (; k0 < K; k0++)
            for (int i = 0; i < 4; i++) dst[k0 * NP + j0 + i] = B[(j0 + i) * ldb + k0];
    }
    for (int64_t k = 0; k < K; k++) {
        for (int64_t j = j0; j < N; j++) dst[k * NP + j] = B[j * ldb + k];
        for (int64_t j = N; j < NP; j++) dst[k * NP + j] = 0.0;
    }
}

#define TINY_FN tiny_dgemm_avx2
#define TINY_COMPLEX_FN tiny_zgemm_avx2
#define GK_TINY_COPY_BT tiny_copy_bt_dgemm_avx2
#if defined(GK_YMM_ASM)
#define GK_TINY_SUMS6 dgemm_tile_avx2_sums_direct_asm
#define GK_TINY_SUMS6_NT dgemm_tile_avx2_sums_direct_nt_asm
#define GK_TINY_SUMS5 dgemm_tile_avx2_sums5_direct_asm
#define GK_TINY_SUMS5_NT dgemm_tile_avx2_sums5_direct_nt_asm
#endif
#include "real_tiny_template.h"
#undef TINY_FN
#undef TINY_COMPLEX_FN

void gk_tiny_dgemm_avx2(int64_t M, int64_t N, int64_t K, const void *alpha, const void *A, int64_t lda, int transa,
                        const void *B, int64_t ldb, int transb, const void *beta, void *C, int64_t ldc,
                        const gk_tiny_stream_t *stream) {
    tiny_dgemm_avx2(M, N, K, alpha, A, lda, transa, B, ldb, transb, beta, C, ldc, stream);
}

#define DOT_FN dgemm_dot_avx2
#define COLS_FN dgemm_cols_avx2
#include "real_ymm_dot.h"
#undef DOT_FN
#undef COLS_FN

#define PLAIN_FN dgemm_plain_avx2
#include "real_ymm_plain.h"
#undef PLAIN_FN

#define GEMV_ROWS_FN gemv_rows_dgemm_avx2
#define GEMV_DOTS_FN gemv_dots_dgemm_avx2
#define GV_SPREAD 1
#include "real_gemv_template.h"

GK_ASSERT_REAL_TILE(MR, NR, 8);
const gk_real_kernel_t gk_dgemm_kernel_avx2 = {
    "ukernel_dgemm_avx2_6x8", 8, MR, NR, ukernel_dgemm_avx2_6x8, rows_kernels, dgemm_dot_avx2, tiny_dgemm_avx2, tiny_zgemm_avx2,
    gemv_rows_dgemm_avx2, gemv_dots_dgemm_avx2, .cols = dgemm_cols_avx2, .cols_rows = dgemm_cols_avx2_rows,
    .plain = dgemm_plain_avx2, .plain_group_cols = dgemm_plain_avx2_group_cols,
};

#define CX_TILE_FN zgemm_tile_avx2
#include "complex_ymm_template.h"

GK_YMM_CX_KERNEL_TABLE(zgemm, 4, tiny_zgemm_avx2)
#endif
