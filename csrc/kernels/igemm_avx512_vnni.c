/* AVX-512 VNNI int8: 12 x 32 microkernel (vpdpbusd over 4-byte k groups), B packer, dot path for few
 * rows x B^T, blocking table; vpdpbusd does not saturate and the kc bound keeps int32 sums exact. */
#include "../gemmkit_internal.h"
#if GEMMKIT_X86
#define MR 12
#define NV 2
#define KG 4
#define ES 1
#define I8_STEP(acc, x, b) _mm512_dpbusd_epi32(acc, x, b)
#define I8_KERNEL_NAME ukernel_i8_avx512_vnni_12x32
#include "igemm_zmm_template.h"

/* Plain B (k-major, rows ldb apart) into 32-column panels of 4-byte k groups, reading each row once
 * front to back; column sums by vpdpbusd with a vector of ones. Tails are masked loads (nothing is read
 * past a row's `width` bytes) and zero rows past kc. */
#ifndef PACK_PF_GROUPS
#define PACK_PF_GROUPS 8
#endif
static void pack_b_avx512_vnni_k4(const int8_t *B, int64_t ldb, int64_t kc, int64_t width,
                                  uint8_t *GK_RESTRICT dst, int32_t *GK_RESTRICT colsum) {
    const int64_t groups = (kc + 3) / 4, panels = (width + NR - 1) / NR;
    const size_t panel_bytes = (size_t)groups * 4 * NR;
    const __m256i ones = _mm256_set1_epi8(1);
    for (int64_t j = 0; j < panels * NR; j++) colsum[j] = 0;
    for (int64_t g = 0; g < groups; g++) {
        const int8_t *rows[4];
        for (int q = 0; q < 4; q++) rows[q] = 4 * g + q < kc ? B + (4 * g + q) * ldb : NULL;
        const int64_t gpf = GK_MIN(g + PACK_PF_GROUPS, groups - 1); /* rows a few groups ahead */
        for (int64_t p = 0; p < panels; p++) {
            const int64_t x0 = p * NR, w = GK_MIN((int64_t)NR, width - x0);
            if ((x0 & 63) == 0)
                for (int q = 0; q < 4; q++)
                    if (4 * gpf + q < kc) _mm_prefetch((const char *)(B + (4 * gpf + q) * ldb + x0), _MM_HINT_T0);
            const __mmask32 m = w == NR ? 0xffffffffu : (__mmask32)((1u << w) - 1u);
            __m256i r[4];
            for (int q = 0; q < 4; q++)
                r[q] = rows[q] ? _mm256_maskz_loadu_epi8(m, rows[q] + x0) : _mm256_setzero_si256();
            const __m256i t01l = _mm256_unpacklo_epi8(r[0], r[1]), t01h = _mm256_unpackhi_epi8(r[0], r[1]);
            const __m256i t23l = _mm256_unpacklo_epi8(r[2], r[3]), t23h = _mm256_unpackhi_epi8(r[2], r[3]);
            const __m256i q0 = _mm256_unpacklo_epi16(t01l, t23l), q1 = _mm256_unpackhi_epi16(t01l, t23l);
            const __m256i q2 = _mm256_unpacklo_epi16(t01h, t23h), q3 = _mm256_unpackhi_epi16(t01h, t23h);
            __m256i o[4];
            o[0] = _mm256_permute2x128_si256(q0, q1, 0x20); /* columns 0-7 */
            o[1] = _mm256_permute2x128_si256(q2, q3, 0x20); /* 8-15 */
            o[2] = _mm256_permute2x128_si256(q0, q1, 0x31); /* 16-23 */
            o[3] = _mm256_permute2x128_si256(q2, q3, 0x31); /* 24-31 */
            uint8_t *d = dst + p * panel_bytes + (size_t)g * 4 * NR;
            int32_t *cs = colsum + x0;
            for (int h = 0; h < 4; h++) {
                _mm256_storeu_si256((__m256i *)(d + 32 * h), o[h]);
                __m256i acc = _mm256_loadu_si256((const __m256i *)(cs + 8 * h));
                _mm256_storeu_si256((__m256i *)(cs + 8 * h), _mm256_dpbusd_epi32(acc, ones, o[h]));
            }
        }
    }
}


/* Raw sums S[i][j] = A'[i][:] . B[j][:] for the first m (<= 4) rows and nj (<= 4) columns, 64 k at a
 * time (masked tail), and B's column sums when `colsums`. */
static GK_FORCEINLINE void i8_dot_block(const int m, const int nj, int64_t k, const uint8_t *A, int64_t lda,
                                        uint8_t xr, const int8_t *B, int64_t ldb, int32_t *S, int64_t lds,
                                        int32_t *colsum, int colsums) {
    const __m512i vx = _mm512_set1_epi8((char)xr), ones = _mm512_set1_epi8(1);
    __m512i acc[4][4], cs[4];
#pragma GCC unroll 4
    for (int j = 0; j < nj; j++) {
        cs[j] = _mm512_setzero_si512();
#pragma GCC unroll 4
        for (int i = 0; i < m; i++) acc[i][j] = _mm512_setzero_si512();
    }
    for (int64_t p = 0; p < k; p += 64) {
        const __mmask64 mask = k - p >= 64 ? ~(__mmask64)0 : (((__mmask64)1 << (k - p)) - 1);
        __m512i bv[4], av[4];
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) {
            bv[j] = _mm512_maskz_loadu_epi8(mask, B + j * ldb + p);
            _mm_prefetch((const char *)(B + j * ldb + p + 512), _MM_HINT_T0);
            if (colsums) cs[j] = _mm512_dpbusd_epi32(cs[j], ones, bv[j]);
        }
#pragma GCC unroll 4
        for (int i = 0; i < m; i++) /* flip, then zero the tail again (0 ^ 0x80 is not 0) */
            av[i] = _mm512_maskz_mov_epi8(mask, _mm512_xor_si512(_mm512_maskz_loadu_epi8(mask, A + i * lda + p), vx));
#pragma GCC unroll 4
        for (int i = 0; i < m; i++)
#pragma GCC unroll 4
            for (int j = 0; j < nj; j++) acc[i][j] = _mm512_dpbusd_epi32(acc[i][j], av[i], bv[j]);
    }
#pragma GCC unroll 4
    for (int j = 0; j < nj; j++) {
        if (colsums) colsum[j] = _mm512_reduce_add_epi32(cs[j]);
#pragma GCC unroll 4
        for (int i = 0; i < m; i++) S[i * lds + j] = _mm512_reduce_add_epi32(acc[i][j]);
    }
}

#define DOT_ROWS(mm, nj)                                                                             \
    case mm:                                                                                         \
        i8_dot_block(mm, nj, k, A + i * lda, lda, xr, B + j * ldb, ldb, S + i * n + j, n, colsum + j, i == 0); \
        break;

/* Column groups outer, row groups inner: 4 rows of B stream from memory once per column group. */
static void i8_dot_avx512_vnni(int64_t m, int64_t n, int64_t k, const uint8_t *A, int64_t lda, uint8_t xr,
                               const int8_t *B, int64_t ldb, int32_t *GK_RESTRICT S, int32_t *GK_RESTRICT colsum) {
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

/* kc: 65536 * 255 * 128 < 2^31, so 16384 leaves ample margin. */
const gk_i8_kernel_t gk_i8_kernel_avx512_vnni = {
    "ukernel_i8_avx512_vnni_12x32", MR, NR, KG, ES, /*mc*/ 240, /*kc*/ 16384, /*nc*/ 4096, /*kb*/ 512,
    I8_KERNEL_NAME, pack_b_avx512_vnni_k4, i8_dot_avx512_vnni, ukernel_i8_avx512_vnni_12x32_rows,
};
#endif
