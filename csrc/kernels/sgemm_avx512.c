/* AVX-512F sgemm: 12 x 32 microkernel (24 zmm accumulators) with 1..11-row variants, a dot path for
 * few rows x B^T, and the blocking table; this file alone is compiled with AVX-512 flags. */
#include "../gemmkit_internal.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define MR 12
#define NV 2 /* zmm vectors per row of the tile */
#define NR (16 * NV)
#define PF_COLS 128 /* rows kernels with m <= 4: prefetch B this many columns ahead (4 panels) */

#if defined(_MSC_VER)
#define GK_FORCEINLINE __forceinline
#else
#define GK_FORCEINLINE inline __attribute__((always_inline))
#endif

/* The tile body for the first m rows; m is a constant in every caller, so the loops unroll fully
 * and the accumulator array stays in registers. */
static GK_FORCEINLINE void sgemm_tile_avx512(const int m, int64_t kc, const float *GK_RESTRICT a, int64_t rsa,
                                             const float *GK_RESTRICT b, int64_t rsb, float *GK_RESTRICT c,
                                             int64_t ldc, float alpha, float beta) {
    __m512 acc[MR][NV];
#pragma GCC unroll 16
    for (int i = 0; i < m; i++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) acc[i][v] = _mm512_setzero_ps();
    for (int64_t k = 0; k < kc; k++) {
        __m512 bv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) bv[v] = _mm512_loadu_ps(b + 16 * v);
        if (m <= 4) { /* few rows: streaming B in place is latency bound; fetch the next panel's lines */
            _mm_prefetch((const char *)(b + PF_COLS), _MM_HINT_T0);
            _mm_prefetch((const char *)(b + PF_COLS + 16), _MM_HINT_T0);
        }
#pragma GCC unroll 16
        for (int i = 0; i < m; i++) {
            __m512 x = _mm512_set1_ps(a[i]);
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) acc[i][v] = _mm512_fmadd_ps(x, bv[v], acc[i][v]);
        }
        a += rsa;
        b += rsb;
    }
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    if (beta == 0.0f) {
#pragma GCC unroll 16
        for (int i = 0; i < m; i++)
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) _mm512_storeu_ps(c + i * ldc + 16 * v, _mm512_mul_ps(va, acc[i][v]));
    } else {
#pragma GCC unroll 16
        for (int i = 0; i < m; i++)
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) {
                float *cp = c + i * ldc + 16 * v;
                _mm512_storeu_ps(cp, _mm512_fmadd_ps(vb, _mm512_loadu_ps(cp), _mm512_mul_ps(va, acc[i][v])));
            }
    }
}

#define DEFINE_ROWS_KERNEL(m)                                                                        \
    static void ukernel_sgemm_avx512_##m##x32(int64_t kc, const float *GK_RESTRICT a, int64_t rsa,   \
                                               const float *GK_RESTRICT b, int64_t rsb,              \
                                               float *GK_RESTRICT c, int64_t ldc, float alpha,       \
                                               float beta) {                                         \
        sgemm_tile_avx512(m, kc, a, rsa, b, rsb, c, ldc, alpha, beta);                               \
    }
DEFINE_ROWS_KERNEL(1) DEFINE_ROWS_KERNEL(2) DEFINE_ROWS_KERNEL(3) DEFINE_ROWS_KERNEL(4)
DEFINE_ROWS_KERNEL(5) DEFINE_ROWS_KERNEL(6) DEFINE_ROWS_KERNEL(7) DEFINE_ROWS_KERNEL(8)
DEFINE_ROWS_KERNEL(9) DEFINE_ROWS_KERNEL(10) DEFINE_ROWS_KERNEL(11) DEFINE_ROWS_KERNEL(12)

static const gk_sgemm_ukernel_fn rows_kernels[MR] = {
    NULL, ukernel_sgemm_avx512_1x32, ukernel_sgemm_avx512_2x32, ukernel_sgemm_avx512_3x32,
    ukernel_sgemm_avx512_4x32, ukernel_sgemm_avx512_5x32, ukernel_sgemm_avx512_6x32,
    ukernel_sgemm_avx512_7x32, ukernel_sgemm_avx512_8x32, ukernel_sgemm_avx512_9x32,
    ukernel_sgemm_avx512_10x32, ukernel_sgemm_avx512_11x32,
};

/* C[i][j..j+NJ) for the first m (<= 4) rows, as dot products along k: B's rows stream in place,
 * 16 k at a time (masked tail), into m x NJ vector sums reduced at the end. */
static GK_FORCEINLINE void sgemm_dot_block(const int m, const int nj, int64_t k, float alpha,
                                           const float *A, int64_t lda, const float *B, int64_t ldb,
                                           float beta, float *C, int64_t ldc) {
    __m512 acc[4][4];
#pragma GCC unroll 4
    for (int i = 0; i < m; i++)
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) acc[i][j] = _mm512_setzero_ps();
    int64_t p = 0;
    for (; p + 16 <= k; p += 16) {
        __m512 bv[4], av[4];
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) {
            bv[j] = _mm512_loadu_ps(B + j * ldb + p);
            _mm_prefetch((const char *)(B + j * ldb + p + 256), _MM_HINT_T0);
        }
#pragma GCC unroll 4
        for (int i = 0; i < m; i++) av[i] = _mm512_loadu_ps(A + i * lda + p);
#pragma GCC unroll 4
        for (int i = 0; i < m; i++)
#pragma GCC unroll 4
            for (int j = 0; j < nj; j++) acc[i][j] = _mm512_fmadd_ps(av[i], bv[j], acc[i][j]);
    }
    if (p < k) {
        const __mmask16 mask = (__mmask16)((1u << (k - p)) - 1u);
        __m512 bv[4], av[4];
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) bv[j] = _mm512_maskz_loadu_ps(mask, B + j * ldb + p);
#pragma GCC unroll 4
        for (int i = 0; i < m; i++) av[i] = _mm512_maskz_loadu_ps(mask, A + i * lda + p);
#pragma GCC unroll 4
        for (int i = 0; i < m; i++)
#pragma GCC unroll 4
            for (int j = 0; j < nj; j++) acc[i][j] = _mm512_fmadd_ps(av[i], bv[j], acc[i][j]);
    }
#pragma GCC unroll 4
    for (int i = 0; i < m; i++)
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) {
            float v = alpha * _mm512_reduce_add_ps(acc[i][j]);
            C[i * ldc + j] = beta == 0.0f ? v : v + beta * C[i * ldc + j];
        }
}

#define DOT_ROWS(mm, nj)                                                                             \
    case mm:                                                                                         \
        sgemm_dot_block(mm, nj, k, alpha, A + i * lda, lda, B + j * ldb, ldb, beta, C + i * ldc + j, ldc); \
        break;

/* Column groups outer, row groups inner: the 4 rows of B in flight are read from memory once and
 * from cache for the other rows of A. */
static void sgemm_dot_avx512(int64_t m, int64_t n, int64_t k, float alpha, const float *A, int64_t lda,
                             const float *B, int64_t ldb, float beta, float *C, int64_t ldc) {
    int64_t j = 0;
    for (; j + 4 <= n; j += 4)
        for (int64_t i = 0; i < m; i += 4) switch (GK_MIN((int64_t)4, m - i)) {
            DOT_ROWS(1, 4) DOT_ROWS(2, 4) DOT_ROWS(3, 4) DOT_ROWS(4, 4)
        }
    for (; j < n; j++)
        for (int64_t i = 0; i < m; i += 4) switch (GK_MIN((int64_t)4, m - i)) {
            DOT_ROWS(1, 1) DOT_ROWS(2, 1) DOT_ROWS(3, 1) DOT_ROWS(4, 1)
        }
}
#undef DOT_ROWS

const gk_sgemm_kernel_t gk_sgemm_kernel_avx512 = {
    "ukernel_sgemm_avx512_12x32", MR, NR, /*mc*/ 12 * 10, /*kc*/ 512, /*nc*/ 4096,
    ukernel_sgemm_avx512_12x32, rows_kernels, sgemm_dot_avx512,
};
#endif
