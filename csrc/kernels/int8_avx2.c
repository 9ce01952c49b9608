/* AVX2 int8 path without VNNI: the 6 x 16 microkernel (bytes widened to int16 pairs, vpmaddwd, which
 * cannot saturate, so sums stay exact), its B packers and the few-row paths that read B in place. */
#include "../kernel.h"
#if GEMMKIT_X86
#define MR 6
#define NV 2
#define KG 2
#define ES 2
#define I8_STEP(acc, x, b) _mm256_add_epi32(acc, _mm256_madd_epi16(x, b))
#define I8_KERNEL_NAME ukernel_i8_avx2_6x16
#include "int8_ymm_template.h"

/* Packed layout (KG = 2, ES = 2): a panel of NR = 16 columns holds, per pair of k, 64 bytes: column x's
 * (B[2g][x], B[2g+1][x]) as two int16 at [g * 64 + 4 * x]; k past kc and columns past the width are 0. */

/* The first n (0..16) bytes at p, zeros after them. */
static inline __m128i load_bytes16(const int8_t *p, int64_t n) {
    if (n >= 16) return _mm_loadu_si128((const __m128i *)p);
    int8_t t[16] = {0};
    if (n > 0) memcpy(t, p, (size_t)n);
    return _mm_loadu_si128((const __m128i *)t);
}

/* Rows k and k+1 of a k-major source (16 columns each) as the two int16-pair vectors of a group:
 * columns 0-7 in lo, 8-15 in hi. */
static inline void pair_rows(__m128i r0, __m128i r1, __m256i *lo, __m256i *hi) {
    *lo = _mm256_cvtepi8_epi16(_mm_unpacklo_epi8(r0, r1));
    *hi = _mm256_cvtepi8_epi16(_mm_unpackhi_epi8(r0, r1));
}

/* Sums of 8 columns from int16 lanes (column x's two k values side by side) into colsum[0:8]. */
static inline void add_colsums8(int32_t *colsum, __m256i s16) {
    const __m256i s = _mm256_madd_epi16(s16, _mm256_set1_epi16(1));
    _mm256_storeu_si256((__m256i *)colsum, _mm256_add_epi32(_mm256_loadu_si256((const __m256i *)colsum), s));
}

/* Plain B (k-major, rows ldb apart) into the panels above, with column sums: k in blocks of
 * PACK_KMAJOR_PAIRS pairs, each block's rows walked once across all panels (their lines stay in L1 from
 * one panel to the next), each panel's groups of the block written as one run. The int16 column sums of
 * a block (at most 2 * 128 * 32 per lane) are widened once per block. */
#define PACK_KMAJOR_PAIRS 32
static void pack_b_kmajor_avx2(const int8_t *B, int64_t ldb, int64_t kc, int64_t width, uint8_t *GK_RESTRICT dst,
                               int32_t *GK_RESTRICT colsum) {
    const int64_t groups = (kc + 1) / 2, panels = (width + NR - 1) / NR;
    const size_t panel_bytes = (size_t)groups * 4 * NR;
    for (int64_t j = 0; j < panels * NR; j++) colsum[j] = 0;
    for (int64_t g0 = 0; g0 < groups; g0 += PACK_KMAJOR_PAIRS) {
        const int64_t g1 = GK_MIN(groups, g0 + PACK_KMAJOR_PAIRS);
        for (int64_t p = 0; p < panels; p++) {
            const int64_t x0 = p * NR, w = GK_MIN((int64_t)NR, width - x0);
            __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
            uint8_t *d = dst + p * panel_bytes + (size_t)g0 * 4 * NR;
            for (int64_t g = g0; g < g1; g++, d += 4 * NR) {
                const int8_t *r = B + 2 * g * ldb + x0;
                const int has_odd = 2 * g + 1 < kc;
                if ((x0 & 63) == 0) {
                    GK_PREFETCH(r + 256);
                    if (has_odd) GK_PREFETCH(r + ldb + 256);
                }
                __m256i lo, hi;
                pair_rows(load_bytes16(r, w), has_odd ? load_bytes16(r + ldb, w) : _mm_setzero_si128(), &lo, &hi);
                _mm256_storeu_si256((__m256i *)d, lo);
                _mm256_storeu_si256((__m256i *)(d + 32), hi);
                s0 = _mm256_add_epi16(s0, lo);
                s1 = _mm256_add_epi16(s1, hi);
            }
            add_colsums8(colsum + x0, s0);
            add_colsums8(colsum + x0 + 8, s1);
        }
    }
}

/* 8 x 8 transpose of 32-bit elements in place: r[c] becomes element c of every row. */
static GK_FORCEINLINE void transpose_8x8_epi32(__m256i r[8]) {
    __m256i t[8], u[8];
    for (int i = 0; i < 4; i++) {
        t[2 * i] = _mm256_unpacklo_epi32(r[2 * i], r[2 * i + 1]);     /* e0 e0' e1 e1' | e4 e4' e5 e5' */
        t[2 * i + 1] = _mm256_unpackhi_epi32(r[2 * i], r[2 * i + 1]); /* e2 e2' e3 e3' | e6 e6' e7 e7' */
    }
    for (int h = 0; h < 2; h++) { /* rows 4h..4h+3 */
        u[4 * h + 0] = _mm256_unpacklo_epi64(t[4 * h], t[4 * h + 2]);     /* e0 | e4 */
        u[4 * h + 1] = _mm256_unpackhi_epi64(t[4 * h], t[4 * h + 2]);     /* e1 | e5 */
        u[4 * h + 2] = _mm256_unpacklo_epi64(t[4 * h + 1], t[4 * h + 3]); /* e2 | e6 */
        u[4 * h + 3] = _mm256_unpackhi_epi64(t[4 * h + 1], t[4 * h + 3]); /* e3 | e7 */
    }
    for (int c = 0; c < 4; c++) {
        r[c] = _mm256_permute2x128_si256(u[c], u[4 + c], 0x20);
        r[c + 4] = _mm256_permute2x128_si256(u[c], u[4 + c], 0x31);
    }
}

/* Transposed B (column x of op(B) is source row x, contiguous in k) into the panels above, with column
 * sums: 16 k of each of the panel's 16 rows at a time, widened to int16 (8 pairs per row), two 8 x 8
 * transposes of the pairs, and each of the 8 groups goes out whole (64 bytes). Int16 column sums are
 * widened every 16 steps (128 values per lane at most). */
#define PACK_KCONTIG_PF 256 /* bytes ahead in each source row */
static void pack_b_kcontig_avx2(const int8_t *B, int64_t ldb, int64_t kc, int64_t width, uint8_t *GK_RESTRICT dst,
                                int32_t *GK_RESTRICT colsum) {
    const int64_t groups = (kc + 1) / 2, panels = (width + NR - 1) / NR;
    const size_t panel_bytes = (size_t)groups * 4 * NR;
    for (int64_t p = 0; p < panels; p++) {
        const int64_t x0 = p * NR, w = GK_MIN((int64_t)NR, width - x0);
        uint8_t *d = dst + p * panel_bytes;
        for (int x = 0; x < NR; x++) colsum[x0 + x] = 0;
        __m256i s16[2] = {_mm256_setzero_si256(), _mm256_setzero_si256()};
        for (int64_t k = 0, step = 1; k < kc; k += 16, step++) {
            const int64_t gn = GK_MIN((int64_t)8, groups - k / 2);
            for (int h = 0; h < 2; h++) {
                __m256i r[8];
                for (int i = 0; i < 8; i++) {
                    const int64_t x = 8 * h + i;
                    if (x < w) {
                        const int8_t *row = B + (x0 + x) * ldb + k;
                        if ((k & 63) == 0) GK_PREFETCH(row + PACK_KCONTIG_PF);
                        r[i] = _mm256_cvtepi8_epi16(load_bytes16(row, kc - k));
                    } else {
                        r[i] = _mm256_setzero_si256();
                    }
                }
                transpose_8x8_epi32(r);
                for (int64_t g = 0; g < gn; g++) {
                    _mm256_storeu_si256((__m256i *)(d + (k / 2 + g) * 4 * NR + 32 * h), r[g]);
                    s16[h] = _mm256_add_epi16(s16[h], r[g]);
                }
            }
            if (step % 16 == 0 || k + 16 >= kc) {
                for (int h = 0; h < 2; h++) {
                    add_colsums8(colsum + x0 + 8 * h, s16[h]);
                    s16[h] = _mm256_setzero_si256();
                }
            }
        }
    }
}

/* ---- few rows of C, B read in place (the driver's dot paths; raw sums of A' = A ^ xr as u8) ---------- */

static inline int32_t hsum8(__m256i v) {
    __m128i s = _mm_add_epi32(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0x4e));
    s = _mm_add_epi32(s, _mm_shuffle_epi32(s, 0xb1));
    return _mm_cvtsi128_si32(s);
}

/* One 16-k step of a dot block: rows of A' at a (lda apart), rows of B at b (ldb apart). */
#define DOT_STEP(a, lda, b, ldb)                                                                      \
    do {                                                                                              \
        __m256i av[2];                                                                                \
        _Pragma("GCC unroll 2") for (int i = 0; i < mm; i++)                                          \
            av[i] = _mm256_cvtepu8_epi16(_mm_xor_si128(_mm_loadu_si128((const __m128i *)((a) + i * (lda))), vx)); \
        _Pragma("GCC unroll 4") for (int j = 0; j < nj; j++) {                                        \
            const __m256i bv = _mm256_cvtepi8_epi16(_mm_loadu_si128((const __m128i *)((b) + j * (ldb)))); \
            if (colsums) cs16[j] = _mm256_add_epi16(cs16[j], bv);                                     \
            _Pragma("GCC unroll 2") for (int i = 0; i < mm; i++)                                      \
                acc[i][j] = _mm256_add_epi32(acc[i][j], _mm256_madd_epi16(av[i], bv));                \
        }                                                                                             \
    } while (0)

/* Transposed B: S[i][j] (row stride lds) = A'[i][:] . B[j][:] for mm (1, 2) rows and nj (1, 4) columns,
 * 16 k at a time widened to int16 (vpmaddwd, exact); with `colsums` B's column sums added to colsum[]
 * (int16 lanes, widened every DOT_SUM_K k: at most 256 values of |b| <= 128 per lane). The k tail goes
 * through zero-padded copies (A' padded after the XOR). */
#define DOT_SUM_K 4096
#define DOT_PF 1024 /* bytes ahead in each row of B */
static GK_FORCEINLINE void dot_block_avx2(const int mm, const int nj, int64_t k, const uint8_t *A, int64_t lda,
                                          uint8_t xr, const int8_t *B, int64_t ldb, int32_t *S, int64_t lds,
                                          int32_t *colsum, const int colsums) {
    const __m128i vx = _mm_set1_epi8((char)xr);
    const __m256i ones = _mm256_set1_epi16(1);
    __m256i acc[2][4], cs16[4];
#pragma GCC unroll 4
    for (int j = 0; j < nj; j++) {
        cs16[j] = _mm256_setzero_si256();
#pragma GCC unroll 2
        for (int i = 0; i < mm; i++) acc[i][j] = _mm256_setzero_si256();
    }
    const int64_t kfull = k / 16 * 16;
    for (int64_t c0 = 0; c0 < k; c0 += DOT_SUM_K) {
        const int64_t c1 = GK_MIN(kfull, c0 + DOT_SUM_K);
        for (int64_t p = c0; p < c1; p += 16) {
            if ((p & 63) == 0)
                for (int j = 0; j < nj; j++) GK_PREFETCH(B + j * ldb + p + DOT_PF);
            DOT_STEP(A + p, lda, B + p, ldb);
        }
        if (c0 + DOT_SUM_K >= k && kfull < k) { /* the tail, zero-padded */
            GK_ALIGN64 uint8_t at[2][16];
            GK_ALIGN64 int8_t bt[4][16];
            memset(at, (int)xr, sizeof at); /* XORed with xr in the step: 0 */
            memset(bt, 0, sizeof bt);
            for (int i = 0; i < mm; i++) memcpy(at[i], A + i * lda + kfull, (size_t)(k - kfull));
            for (int j = 0; j < nj; j++) memcpy(bt[j], B + j * ldb + kfull, (size_t)(k - kfull));
            DOT_STEP(at[0], 16, bt[0], 16);
        }
        if (colsums)
#pragma GCC unroll 4
            for (int j = 0; j < nj; j++) {
                colsum[j] += hsum8(_mm256_madd_epi16(cs16[j], ones));
                cs16[j] = _mm256_setzero_si256();
            }
    }
#pragma GCC unroll 4
    for (int j = 0; j < nj; j++)
#pragma GCC unroll 2
        for (int i = 0; i < mm; i++) S[i * lds + j] = hsum8(acc[i][j]);
}

#define DOT_CASE(mm, nj, sums)                                                                        \
    case mm:                                                                                          \
        dot_block_avx2(mm, nj, k, A + i * lda, lda, xr, B + j * ldb, ldb, S + i * n + j, n, colsum + j, sums); \
        break;
/* Columns 4 at a time (then singly), rows 2 at a time (column sums with the first rows). */
static void int8_dot_avx2(int64_t m, int64_t n, int64_t k, const uint8_t *A, int64_t lda, uint8_t xr,
                        const int8_t *B, int64_t ldb, int32_t *GK_RESTRICT S, int32_t *GK_RESTRICT colsum) {
    for (int64_t j = 0; j < n; j++) colsum[j] = 0;
    int64_t j = 0;
    for (; j + 4 <= n; j += 4)
        for (int64_t i = 0; i < m; i += 2) {
            if (i == 0) switch (GK_MIN((int64_t)2, m - i)) { DOT_CASE(1, 4, 1) DOT_CASE(2, 4, 1) }
            else switch (GK_MIN((int64_t)2, m - i)) { DOT_CASE(1, 4, 0) DOT_CASE(2, 4, 0) }
        }
    for (; j < n; j++)
        for (int64_t i = 0; i < m; i += 2)
            switch (GK_MIN((int64_t)2, m - i)) { DOT_CASE(1, 1, i == 0) DOT_CASE(2, 1, i == 0) }
}
#undef DOT_CASE
#undef DOT_STEP

/* Plain B (k-major), the dot_kmajor contract (signed A when xr = 0x80, column sums only when asked): k in blocks of
 * KMAJOR_PAIRS row pairs (8 rows of B streamed at once; fewer streams were slower), whose A values are first laid out
 * as int16 pairs (one vpbroadcastd each); per block, 16 columns at a time, rows of A 6 at a time: rows k, k+1 of B
 * interleaved and widened (the packed panel's group, built in registers), vpmaddwd into 6 x 2 accumulators, added to
 * S after the first block. Column sums in int16 lanes over a block (KMAJOR_PAIRS values per lane), widened per block
 * (see docs/decisions.md, KMAJOR_PAIRS). */
#define KMAJOR_PAIRS 4
#define KMAJOR_ROWS 6 /* rows of A per pass: 12 accumulators */
#define KMAJOR_MAX_M 32
/* The accumulators as they are after each step (GCC would otherwise reassociate the unrolled sums into
 * a tree of products, spilling them). */
#if defined(__GNUC__)
#define KMAJOR_KEEP(v) __asm__("" : "+x"(v))
#else
#define KMAJOR_KEEP(v) ((void)0)
#endif
static GK_FORCEINLINE void kmajor_block_avx2(const int mm, const int sums, const uint32_t *ap,
                                             const int8_t *B, int64_t ldb, int32_t *S, int64_t lds, int first,
                                             int32_t *colsum) {
    __m256i acc[KMAJOR_ROWS][2];
#pragma GCC unroll 6
    for (int i = 0; i < mm; i++) {
        acc[i][0] = first ? _mm256_setzero_si256() : _mm256_loadu_si256((const __m256i *)(S + i * lds));
        acc[i][1] = first ? _mm256_setzero_si256() : _mm256_loadu_si256((const __m256i *)(S + i * lds + 8));
    }
    __m256i s0 = _mm256_setzero_si256(), s1 = _mm256_setzero_si256();
#pragma GCC unroll 4
    for (int g = 0; g < KMAJOR_PAIRS; g++) {
        const int8_t *r = B + 2 * g * ldb;
        __m256i lo, hi;
        pair_rows(_mm_loadu_si128((const __m128i *)r), _mm_loadu_si128((const __m128i *)(r + ldb)), &lo, &hi);
        if (sums) {
            s0 = _mm256_add_epi16(s0, lo);
            s1 = _mm256_add_epi16(s1, hi);
        }
#pragma GCC unroll 6
        for (int i = 0; i < mm; i++) {
            const __m256i a = _mm256_set1_epi32((int)ap[i * KMAJOR_PAIRS + g]);
            acc[i][0] = _mm256_add_epi32(acc[i][0], _mm256_madd_epi16(a, lo));
            acc[i][1] = _mm256_add_epi32(acc[i][1], _mm256_madd_epi16(a, hi));
            KMAJOR_KEEP(acc[i][0]);
            KMAJOR_KEEP(acc[i][1]);
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < mm; i++) {
        _mm256_storeu_si256((__m256i *)(S + i * lds), acc[i][0]);
        _mm256_storeu_si256((__m256i *)(S + i * lds + 8), acc[i][1]);
    }
    if (sums) {
        add_colsums8(colsum, s0);
        add_colsums8(colsum + 8, s1);
    }
}

/* Rows of A [i, i + mm) over n (a multiple of 16) columns at B (ld ldb) into S (ld lds). */
static GK_FORCEINLINE void kmajor_rows_avx2(const int mm, const int sums, int64_t n, const uint32_t *ap,
                                            const int8_t *B, int64_t ldb, int32_t *S, int64_t lds, int first,
                                            int32_t *colsum) {
    for (int64_t j = 0; j < n; j += 16)
        kmajor_block_avx2(mm, sums, ap, B + j, ldb, S + j, lds, first, sums ? colsum + j : NULL);
}

/* All m rows of A over n (a multiple of 16) columns, rows KMAJOR_ROWS at a time (column sums with the
 * first); the column sums' row group at most 4 rows (its two int16 sums would not fit the registers). */
#define KMAJOR_GROUP(mm, sums)                                                                        \
    kmajor_rows_avx2(mm, sums, n, ap + i * KMAJOR_PAIRS, B, ldb, S + i * lds, lds, first, colsum)
static GK_FORCEINLINE void kmajor_all_rows_avx2(int64_t m, int64_t n, const uint32_t *ap,
                                                const int8_t *B, int64_t ldb, int32_t *S, int64_t lds, int first,
                                                int32_t *colsum) {
    for (int64_t i = 0, mm; i < m; i += mm) {
        const int sums = i == 0 && colsum != NULL;
        mm = GK_MIN((int64_t)(sums ? 4 : KMAJOR_ROWS), m - i);
        switch (mm + 8 * sums) {
        case 1: KMAJOR_GROUP(1, 0); break;
        case 2: KMAJOR_GROUP(2, 0); break;
        case 3: KMAJOR_GROUP(3, 0); break;
        case 4: KMAJOR_GROUP(4, 0); break;
        case 5: KMAJOR_GROUP(5, 0); break;
        case 6: KMAJOR_GROUP(6, 0); break;
        case 9: KMAJOR_GROUP(1, 1); break;
        case 10: KMAJOR_GROUP(2, 1); break;
        case 11: KMAJOR_GROUP(3, 1); break;
        default: KMAJOR_GROUP(4, 1); break;
        }
    }
}
#undef KMAJOR_GROUP

/* One k block (kb rows, zero-padded to 2 * KMAJOR_PAIRS) over the n columns: columns in chunks of
 * KMAJOR_CHUNK (the block's rows of a chunk stay in L1 for all row groups of A), the chunk after the
 * next prefetched; edge columns and short blocks through zero-padded copies. */
#define KMAJOR_CHUNK 256
#define KMAJOR_PF_CHUNKS 2 /* chunks ahead */
static GK_FORCEINLINE void kmajor_kblock_avx2(int64_t m, int64_t n, int64_t kb, const uint32_t *ap,
                                              const int8_t *B, int64_t ldb, int32_t *S, int first,
                                              int32_t *colsum) {
    GK_ALIGN64 int8_t bt[2 * KMAJOR_PAIRS * 16];
    GK_ALIGN64 int32_t st[KMAJOR_MAX_M * 16], ct[16];
    const int64_t nfull = kb == 2 * KMAJOR_PAIRS ? n / 16 * 16 : 0;
    for (int64_t jc = 0; jc < nfull; jc += KMAJOR_CHUNK) {
        const int64_t jn = GK_MIN((int64_t)KMAJOR_CHUNK, nfull - jc);
        for (int64_t r = 0; r < kb; r++)
            for (int64_t x = 0; x < KMAJOR_CHUNK; x += 64)
                GK_PREFETCH(B + r * ldb + jc + KMAJOR_PF_CHUNKS * KMAJOR_CHUNK + x);
        kmajor_all_rows_avx2(m, jn, ap, B + jc, ldb, S + jc, n, first, colsum ? colsum + jc : NULL);
    }
    for (int64_t j = nfull; j < n; j += 16) {
        const int64_t w = GK_MIN((int64_t)16, n - j);
        memset(bt, 0, sizeof bt);
        for (int64_t r = 0; r < kb; r++) memcpy(bt + r * 16, B + r * ldb + j, (size_t)w);
        for (int64_t i = 0; i < m; i++) memcpy(st + i * 16, S + i * n + j, sizeof(int32_t) * (size_t)w);
        memset(ct, 0, sizeof ct);
        kmajor_all_rows_avx2(m, 16, ap, bt, 16, st, 16, first, colsum ? ct : NULL);
        for (int64_t i = 0; i < m; i++) memcpy(S + i * n + j, st + i * 16, sizeof(int32_t) * (size_t)w);
        if (colsum)
            for (int64_t x = 0; x < w; x++) colsum[j + x] += ct[x];
    }
}

static void int8_dot_kmajor_avx2(int64_t m, int64_t n, int64_t k, const uint8_t *A, int64_t lda, uint8_t xr,
                               const int8_t *B, int64_t ldb, int32_t *GK_RESTRICT S, int32_t *GK_RESTRICT colsum) {
    GK_ALIGN64 uint32_t ap[KMAJOR_MAX_M * KMAJOR_PAIRS];
    if (colsum)
        for (int64_t j = 0; j < n; j++) colsum[j] = 0;
    for (int64_t k0 = 0; k0 < k; k0 += 2 * KMAJOR_PAIRS) {
        const int64_t kb = GK_MIN((int64_t)(2 * KMAJOR_PAIRS), k - k0);
        for (int64_t i = 0; i < m; i++)
            for (int64_t g = 0; g < KMAJOR_PAIRS; g++) { /* A's values (A' - 128 when xr = 0x80), 0 past kb */
                int32_t a[2];
                for (int q = 0; q < 2; q++) {
                    const int64_t kk = 2 * g + q;
                    const uint8_t v = kk < kb ? A[i * lda + k0 + kk] : 0;
                    a[q] = xr ? (int32_t)(int8_t)v : (int32_t)v;
                }
                ap[i * KMAJOR_PAIRS + g] = (uint32_t)(uint16_t)a[0] | (uint32_t)(uint16_t)a[1] << 16;
            }
        kmajor_kblock_avx2(m, n, kb, ap, B + k0 * ldb, ldb, S, k0 == 0, colsum);
    }
}

GK_ASSERT_INT8_TILE(MR, NR);
const gk_int8_kernel_t gk_int8_kernel_avx2 = {
    "ukernel_i8_avx2_6x16", MR, NR, KG, ES, GK_INT8_K_CHUNK,
    I8_KERNEL_NAME, pack_b_kmajor_avx2, int8_dot_avx2, ukernel_i8_avx2_6x16_rows, pack_b_kcontig_avx2,
    int8_dot_kmajor_avx2,
};
#endif
