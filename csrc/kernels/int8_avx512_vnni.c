/* AVX-512 VNNI int8: 12 x 32 microkernel (vpdpbusd over 4-byte k groups), B packer, dot path for few
 * rows x B^T, blocking table; vpdpbusd does not saturate and the kc bound keeps int32 sums exact. */
#include "../kernel.h"
#include "dot_walk.h"
#if GEMMKIT_X86
#define MR 12
#define NV 2
#define KG 4
#define ES 1
#define I8_STEP(acc, x, b) _mm512_dpbusd_epi32(acc, x, b)
#define I8_KERNEL_NAME ukernel_i8_avx512_vnni_12x32
#include "int8_zmm_template.h"

/* Plain B (k-major, rows ldb apart) into 32-column panels of `groups` 4-byte k groups (>= kc / 4: the
 * AMX kernel's panels are 64 k deep), reading each row once front to back; column sums by vpdpbusd with a
 * vector of ones. Tails are masked loads (nothing is read past a row's `width` bytes), zero rows past kc. */
#ifndef PACK_PF_GROUPS
#define PACK_PF_GROUPS 8
#endif
void gk_int8_pack_b_kmajor_zmm(const int8_t *B, int64_t ldb, int64_t kc, int64_t groups, int64_t width,
                               uint8_t *GK_RESTRICT dst, int32_t *GK_RESTRICT colsum) {
    const int64_t kgroups = (kc + 3) / 4, panels = (width + NR - 1) / NR;
    const size_t panel_bytes = (size_t)groups * 4 * NR;
    const __m256i ones = _mm256_set1_epi8(1);
    for (int64_t j = 0; j < panels * NR; j++) colsum[j] = 0;
    for (int64_t g = 0; g < groups; g++) {
        const int8_t *rows[4];
        for (int q = 0; q < 4; q++) rows[q] = 4 * g + q < kc ? B + (4 * g + q) * ldb : NULL;
        const int64_t gpf = GK_MIN(g + PACK_PF_GROUPS, kgroups - 1); /* rows a few groups ahead */
        for (int64_t p = 0; p < panels; p++) {
            const int64_t x0 = p * NR, w = GK_MIN((int64_t)NR, width - x0);
            if ((x0 & 63) == 0 && g < kgroups)
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
static void pack_b_avx512_vnni_k4(const int8_t *B, int64_t ldb, int64_t kc, int64_t width,
                                  uint8_t *GK_RESTRICT dst, int32_t *GK_RESTRICT colsum) {
    gk_int8_pack_b_kmajor_zmm(B, ldb, kc, (kc + 3) / 4, width, dst, colsum);
}

/* 16 rows x 16 dwords -> 16 columns x 16 dwords in place: r[c] becomes dword c of every row
 * (unpack 32-bit, unpack 64-bit, then two 128-bit lane shuffles). */
static GK_FORCEINLINE void transpose_16x16_epi32(__m512i r[16]) {
    __m512i t[16], u[16];
    for (int i = 0; i < 8; i++) {
        t[2 * i] = _mm512_unpacklo_epi32(r[2 * i], r[2 * i + 1]);
        t[2 * i + 1] = _mm512_unpackhi_epi32(r[2 * i], r[2 * i + 1]);
    }
    for (int i = 0; i < 4; i++) { /* u[4i + c], lane L: dword 4L + c of rows 4i..4i+3 */
        u[4 * i + 0] = _mm512_unpacklo_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 1] = _mm512_unpackhi_epi64(t[4 * i], t[4 * i + 2]);
        u[4 * i + 2] = _mm512_unpacklo_epi64(t[4 * i + 1], t[4 * i + 3]);
        u[4 * i + 3] = _mm512_unpackhi_epi64(t[4 * i + 1], t[4 * i + 3]);
    }
    for (int c = 0; c < 4; c++) {
        const __m512i alo = _mm512_shuffle_i32x4(u[c], u[4 + c], 0x44), ahi = _mm512_shuffle_i32x4(u[c], u[4 + c], 0xEE);
        const __m512i blo = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0x44), bhi = _mm512_shuffle_i32x4(u[8 + c], u[12 + c], 0xEE);
        r[c] = _mm512_shuffle_i32x4(alo, blo, 0x88);
        r[4 + c] = _mm512_shuffle_i32x4(alo, blo, 0xDD);
        r[8 + c] = _mm512_shuffle_i32x4(ahi, bhi, 0x88);
        r[12 + c] = _mm512_shuffle_i32x4(ahi, bhi, 0xDD);
    }
}

/* Transposed B (column x of op(B) is source row x, contiguous in k) into 32-column panels of `groups` 4-byte
 * k groups (as gk_int8_pack_b_kmajor_zmm): 64 bytes of k from each of the 32 rows, two 16 x 16 dword
 * transposes, and each k group's 128 bytes go out whole (the portable 4-row packer revisits every group 8
 * times). Column sums by vpdpbusd with ones; masked loads at the k tail and zero rows past `width` read
 * nothing extra. */
#define PACK_KCONTIG_PF 512 /* bytes ahead in each source row */
void gk_int8_pack_b_kcontig_zmm(const int8_t *B, int64_t ldb, int64_t kc, int64_t groups, int64_t width,
                                uint8_t *GK_RESTRICT dst, int32_t *GK_RESTRICT colsum) {
    const int64_t panels = (width + NR - 1) / NR;
    const size_t panel_bytes = (size_t)groups * 4 * NR;
    const __m512i ones = _mm512_set1_epi8(1);
    for (int64_t p = 0; p < panels; p++) {
        const int64_t x0 = p * NR, w = GK_MIN((int64_t)NR, width - x0);
        uint8_t *d = dst + p * panel_bytes;
        __m512i cs[2] = {_mm512_setzero_si512(), _mm512_setzero_si512()};
        for (int64_t k = 0; k < 4 * groups; k += 64) {
            const __mmask64 m = kc - k >= 64 ? ~(__mmask64)0 : kc <= k ? 0 : (((__mmask64)1 << (kc - k)) - 1);
            const int64_t gn = GK_MIN((int64_t)16, groups - k / 4);
            for (int h = 0; h < 2; h++) {
                __m512i r[16];
                for (int i = 0; i < 16; i++) {
                    const int64_t x = 16 * h + i;
                    if (x < w) {
                        const int8_t *row = B + (x0 + x) * ldb + k;
                        _mm_prefetch((const char *)(row + PACK_KCONTIG_PF), _MM_HINT_T0);
                        r[i] = m ? _mm512_maskz_loadu_epi8(m, row) : _mm512_setzero_si512();
                    } else {
                        r[i] = _mm512_setzero_si512();
                    }
                }
                transpose_16x16_epi32(r);
                for (int64_t g = 0; g < gn; g++) {
                    _mm512_storeu_si512((void *)(d + (k / 4 + g) * 4 * NR + 64 * h), r[g]);
                    cs[h] = _mm512_dpbusd_epi32(cs[h], ones, r[g]);
                }
            }
        }
        _mm512_storeu_si512((void *)(colsum + x0), cs[0]);
        _mm512_storeu_si512((void *)(colsum + x0 + 16), cs[1]);
    }
}

static void pack_b_kcontig_avx512_vnni_k4(const int8_t *B, int64_t ldb, int64_t kc, int64_t width,
                                          uint8_t *GK_RESTRICT dst, int32_t *GK_RESTRICT colsum) {
    gk_int8_pack_b_kcontig_zmm(B, ldb, kc, (kc + 3) / 4, width, dst, colsum);
}

/* Raw sums S[i][j] = A'[i][:] . B[j][:] for the first m (<= 4) rows and nj (<= 4) columns, 64 k at a
 * time (masked tail), and B's column sums when `colsums`. */
static GK_FORCEINLINE void int8_dot_block(const int m, const int nj, int64_t k, const uint8_t *A, int64_t lda,
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
        int8_dot_block(mm, nj, k, A + i * lda, lda, xr, B + j * ldb, ldb, S + i * n + j, n, colsum + j, i == 0); \
        break;

void gk_int8_dot_avx512_vnni(int64_t m, int64_t n, int64_t k, const uint8_t *A, int64_t lda, uint8_t xr,
                               const int8_t *B, int64_t ldb, int32_t *GK_RESTRICT S, int32_t *GK_RESTRICT colsum) {
    GK_DOT_WALK(m, n, DOT_ROWS);
}
#undef DOT_ROWS

/* kc: 65536 * 255 * 128 < 2^31, so 16384 leaves ample margin. */
GK_ASSERT_INT8_TILE(MR, NR);
const gk_int8_kernel_t gk_int8_kernel_avx512_vnni = {
    "ukernel_i8_avx512_vnni_12x32", MR, NR, KG, ES, GK_INT8_K_CHUNK,
    I8_KERNEL_NAME, pack_b_avx512_vnni_k4, gk_int8_dot_avx512_vnni, ukernel_i8_avx512_vnni_12x32_rows,
    pack_b_kcontig_avx512_vnni_k4, NULL, ukernel_i8_avx512_vnni_12x32_panels,
};
#endif
