/* int8 packing: op(A) into MR-row and op(B) into NR-column micro-panels with k interleaved in groups
 * (4 bytes for VNNI / SDOT, 8 for the i8mm kernel, 2 int16 for the widening kernels), computing row/column sums on the way. */
#include <string.h>
#include "pack.h"
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define GK_PACK_SSE 1
#endif

/* Both operands reduce to one of two source shapes for a panel `pw` wide (MR rows of A' or NR columns
 * of B), of which `w` are real (the rest zero):
 *   k-major:     element (k, x) at src[k * ld + x]  (A transposed, B plain)
 *   k-contiguous: element (k, x) at src[x * ld + k] (A plain, B transposed)
 * The packed panel holds element (k, x) at [(k / kg) * pw * kg + x * kg + k % kg], k zero-padded to a
 * multiple of kg. xr is XORed into every byte (0x80 turns s8 A into u8 A' = A + 128); sums[x] gets the
 * sum over k of the packed values (signed bytes for B, unsigned for A'). */

static inline int val(uint8_t byte, uint8_t xr, int is_signed) {
    uint8_t v = (uint8_t)(byte ^ xr);
    return is_signed ? (int)(int8_t)v : (int)v;
}

static void sums_kmajor(const uint8_t *src, int64_t ld, int64_t kc, int64_t w, uint8_t xr, int is_signed,
                        int32_t *GK_RESTRICT sums) {
    for (int64_t x = 0; x < w; x++) sums[x] = 0;
    for (int64_t k = 0; k < kc; k++) {
        const uint8_t *row = src + k * ld;
        if (is_signed) for (int64_t x = 0; x < w; x++) sums[x] += (int8_t)(row[x] ^ xr);
        else for (int64_t x = 0; x < w; x++) sums[x] += (uint8_t)(row[x] ^ xr);
    }
}

#if GK_PACK_SSE
/* 16 x 16 bytes transposed in registers: four rounds of interleaving row i with row i + 8. */
static inline void transpose_16x16_epi8(__m128i r[16]) {
    for (int round = 0; round < 4; round++) {
        __m128i t[16];
        for (int i = 0; i < 8; i++) {
            t[2 * i] = _mm_unpacklo_epi8(r[i], r[i + 8]);
            t[2 * i + 1] = _mm_unpackhi_epi8(r[i], r[i + 8]);
        }
        for (int i = 0; i < 16; i++) r[i] = t[i];
    }
}
#endif

/* One k-group of one panel from k-major rows (rows[q] NULL past kc): w real columns of pw. */
static void pack_kmajor_group(const uint8_t *const rows[64], int64_t w, int pw, int kg, int es, uint8_t xr,
                              int is_signed, uint8_t *GK_RESTRICT dst) {
    if (es == 1 && kg == 4) {
        uint8_t *d = dst;
        int64_t x = 0;
#if GK_PACK_SSE
        if (rows[3] != NULL) {
            const __m128i vx = _mm_set1_epi8((char)xr);
            for (; x + 16 <= w; x += 16) {
                __m128i r0 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(rows[0] + x)), vx);
                __m128i r1 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(rows[1] + x)), vx);
                __m128i r2 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(rows[2] + x)), vx);
                __m128i r3 = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(rows[3] + x)), vx);
                __m128i p01l = _mm_unpacklo_epi8(r0, r1), p01h = _mm_unpackhi_epi8(r0, r1);
                __m128i p23l = _mm_unpacklo_epi8(r2, r3), p23h = _mm_unpackhi_epi8(r2, r3);
                _mm_storeu_si128((__m128i *)(d + 4 * x), _mm_unpacklo_epi16(p01l, p23l));
                _mm_storeu_si128((__m128i *)(d + 4 * x + 16), _mm_unpackhi_epi16(p01l, p23l));
                _mm_storeu_si128((__m128i *)(d + 4 * x + 32), _mm_unpacklo_epi16(p01h, p23h));
                _mm_storeu_si128((__m128i *)(d + 4 * x + 48), _mm_unpackhi_epi16(p01h, p23h));
            }
        }
#endif
        for (; x < w; x++)
            for (int q = 0; q < 4; q++) d[4 * x + q] = rows[q] ? (uint8_t)(rows[q][x] ^ xr) : 0;
        memset(d + 4 * w, 0, (size_t)(pw - w) * 4);
#if GK_PACK_SSE
    } else if (es == 1 && kg % 16 == 0) { /* AMX's rows of 64 k: 16 x 16 byte transposes */
        const __m128i vx = _mm_set1_epi8((char)xr), zero = _mm_setzero_si128();
        int64_t x = 0;
        for (; x + 16 <= w; x += 16)
            for (int q0 = 0; q0 < kg; q0 += 16) {
                __m128i r[16];
                for (int j = 0; j < 16; j++)
                    r[j] = rows[q0 + j] ? _mm_xor_si128(_mm_loadu_si128((const __m128i *)(rows[q0 + j] + x)), vx) : zero;
                transpose_16x16_epi8(r);
                for (int j = 0; j < 16; j++) _mm_storeu_si128((__m128i *)(dst + (x + j) * kg + q0), r[j]);
            }
        for (; x < pw; x++)
            for (int q = 0; q < kg; q++) dst[x * kg + q] = (x < w && rows[q]) ? (uint8_t)(rows[q][x] ^ xr) : 0;
#endif
    } else if (es == 2 && kg == 2) { /* widened int16 pairs for the vpmaddwd kernels */
        int16_t *d = (int16_t *)dst;
        for (int q = 0; q < 2; q++) {
            const uint8_t *r = rows[q];
            if (!r) { for (int64_t x = 0; x < pw; x++) d[2 * x + q] = 0; continue; }
            if (is_signed) for (int64_t x = 0; x < w; x++) d[2 * x + q] = (int8_t)(r[x] ^ xr);
            else for (int64_t x = 0; x < w; x++) d[2 * x + q] = (uint8_t)(r[x] ^ xr);
            for (int64_t x = w; x < pw; x++) d[2 * x + q] = 0;
        }
    } else {
        for (int64_t x = 0; x < pw; x++)
            for (int q = 0; q < kg; q++) {
                int v = (x < w && rows[q]) ? val(rows[q][x], xr, is_signed) : 0;
                if (es == 1) dst[x * kg + q] = (uint8_t)v;
                else ((int16_t *)dst)[x * kg + q] = (int16_t)v;
            }
    }
}

/* A whole block of k-major source, `width` columns, into consecutive panels of pw: k groups outer,
 * so every source row is read once, front to back (streaming), whatever the panel width. */
static void pack_kmajor(const uint8_t *src, int64_t ld, int64_t kc, int64_t width, int pw, int kg, int es,
                        uint8_t xr, int is_signed, uint8_t *GK_RESTRICT dst, int32_t *GK_RESTRICT sums) {
    sums_kmajor(src, ld, kc, width, xr, is_signed, sums);
    const int64_t groups = (kc + kg - 1) / kg;
    const size_t panel_bytes = (size_t)(groups * kg * pw) * es, group_bytes = (size_t)(kg * pw) * es;
    for (int64_t g = 0; g < groups; g++) {
        const uint8_t *rows[64] = {NULL}; /* kg <= 64 */
        for (int q = 0; q < kg; q++) rows[q] = g * kg + q < kc ? src + (g * kg + q) * ld : NULL;
        for (int64_t x0 = 0, p = 0; x0 < width; x0 += pw, p++) {
            const uint8_t *prow[64];
            for (int q = 0; q < kg; q++) prow[q] = rows[q] ? rows[q] + x0 : NULL;
            pack_kmajor_group(prow, GK_MIN((int64_t)pw, width - x0), pw, kg, es, xr, is_signed,
                              dst + p * panel_bytes + g * group_bytes);
        }
    }
}

#if GK_PACK_SSE
/* Rows x..x+3 (all real), k in [k0, k1) (multiples of 16), 4-byte groups: 16 bytes of each row at a
 * time, a 4x4 dword transpose, so each group's 4 rows go out as one 16-byte store; the row sums (by
 * psadbw on the unsigned view; signed values: bytes ^ 0x80, less 128 per byte) are added to sum[]. */
static void pack_kcontig_rows4_k4(const uint8_t *src, int64_t ld, int64_t k0, int64_t k1, int pw, uint8_t xr,
                                  int is_signed, uint8_t *GK_RESTRICT dst, int64_t x, int64_t sum[4]) {
    const __m128i vx = _mm_set1_epi8((char)xr), vs = _mm_set1_epi8((char)(is_signed ? 0x80 : 0));
    const __m128i zero = _mm_setzero_si128();
    __m128i acc[4] = {zero, zero, zero, zero};
    for (int64_t k = k0; k < k1; k += 16) {
        if ((k & 63) == 0) /* these rows' next k block (the caller walks k in blocks of 256 bytes) */
            for (int q = 0; q < 4; q++) GK_PREFETCH(src + (x + q) * ld + k + 256);
        __m128i r[4];
        for (int q = 0; q < 4; q++) {
            r[q] = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(src + (x + q) * ld + k)), vx);
            acc[q] = _mm_add_epi64(acc[q], _mm_sad_epu8(_mm_xor_si128(r[q], vs), zero));
        }
        __m128 f0 = _mm_castsi128_ps(r[0]), f1 = _mm_castsi128_ps(r[1]), f2 = _mm_castsi128_ps(r[2]),
               f3 = _mm_castsi128_ps(r[3]);
        _MM_TRANSPOSE4_PS(f0, f1, f2, f3); /* f_g = group (k/4 + g) of rows x..x+3 */
        uint8_t *d = dst + ((k / 4) * pw + x) * 4;
        _mm_storeu_ps((float *)d, f0);
        _mm_storeu_ps((float *)(d + pw * 4), f1);
        _mm_storeu_ps((float *)(d + 2 * pw * 4), f2);
        _mm_storeu_ps((float *)(d + 3 * pw * 4), f3);
    }
    for (int q = 0; q < 4; q++) {
        int64_t lanes[2];
        memcpy(lanes, &acc[q], sizeof(lanes));
        sum[q] += lanes[0] + lanes[1] - (is_signed ? 128 * (k1 - k0) : 0);
    }
}
#endif

static void pack_kcontig(const uint8_t *src, int64_t ld, int64_t kc, int64_t w, int pw, int kg, int es,
                         uint8_t xr, int is_signed, uint8_t *GK_RESTRICT dst, int32_t *GK_RESTRICT sums) {
    const int64_t groups = (kc + kg - 1) / kg, kfull = kc / kg * kg;
    int64_t x_fast = 0, k16 = 0; /* rows [0, x_fast) have k in [0, k16) packed by the SSE path */
    /* rows [w, pw) pad the panel with zeros: the whole panel cleared in one write, then the rows [0, w) over it
     * (a few-row A panel, one row of twelve, was cleared group by group in 4-byte pieces: a third of a GEMV) */
    if (w < pw) memset(dst, 0, (size_t)(groups * pw * kg) * es);
#if GK_PACK_SSE
    if (es == 1 && kg == 4 && kc >= 16) {
        /* k in blocks of GK_PACK_KCONTIG_KB, all rows per block: the block's groups (KB / 4 x pw x 4
         * bytes) are completed in L1 by the 4-row steps instead of being revisited once per step. */
        enum { GK_PACK_KCONTIG_KB = 256 };
        int64_t s64[64] = {0};
        k16 = kc / 16 * 16;
        x_fast = pw <= 64 ? w / 4 * 4 : 0;
        for (int64_t kb = 0; kb < k16; kb += GK_PACK_KCONTIG_KB)
            for (int64_t x = 0; x < x_fast; x += 4)
                pack_kcontig_rows4_k4(src, ld, kb, GK_MIN(kb + GK_PACK_KCONTIG_KB, k16), pw, xr, is_signed, dst,
                                      x, s64 + x);
        for (int64_t x = 0; x < x_fast; x++) sums[x] = (int32_t)s64[x];
    }
#endif
    for (int64_t x = 0; x < w; x++) {
        const int64_t k0 = x < x_fast ? k16 : 0; /* where this row's scalar packing starts */
        const uint8_t *s = src + x * ld;
        int32_t sum = 0;
        if (es == 1 && kg == 4) {
            const uint32_t x4 = 0x01010101u * xr;
            if (k0 > 0) sum = sums[x];
            for (int64_t g = k0 / 4; g < kfull / 4; g++) {
                uint32_t v;
                memcpy(&v, s + 4 * g, 4);
                v ^= x4;
                memcpy(dst + (g * pw + x) * 4, &v, 4);
            }
            if (is_signed) for (int64_t k = k0; k < kfull; k++) sum += (int8_t)(s[k] ^ xr);
            else for (int64_t k = k0; k < kfull; k++) sum += (uint8_t)(s[k] ^ xr);
#if GK_PACK_SSE
        } else if (es == 1 && kg % 16 == 0) { /* AMX's rows of 64 k: 16 bytes at a time, sums by psadbw */
            const __m128i vx = _mm_set1_epi8((char)xr), vs = _mm_set1_epi8((char)(is_signed ? 0x80 : 0));
            const __m128i zero = _mm_setzero_si128();
            __m128i acc = zero;
            for (int64_t g = 0; g < kfull / kg; g++) {
                uint8_t *d = dst + (g * pw + x) * kg;
                for (int j = 0; j < kg; j += 16) {
                    const __m128i v = _mm_xor_si128(_mm_loadu_si128((const __m128i *)(s + g * kg + j)), vx);
                    _mm_storeu_si128((__m128i *)(d + j), v);
                    acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_xor_si128(v, vs), zero));
                }
            }
            int64_t lanes[2];
            memcpy(lanes, &acc, sizeof(lanes));
            sum = (int32_t)(lanes[0] + lanes[1] - (is_signed ? 128 * kfull : 0));
#endif
        } else if (es == 1 && kg % 8 == 0) { /* the 8-byte groups of the i8mm kernel */
            const uint64_t x8 = 0x0101010101010101ull * xr;
            for (int64_t g = 0; g < kfull / kg; g++)
                for (int j = 0; j < kg; j += 8) {
                    uint64_t v;
                    memcpy(&v, s + g * kg + j, 8);
                    v ^= x8;
                    memcpy(dst + (g * pw + x) * kg + j, &v, 8);
                }
            if (is_signed) for (int64_t k = 0; k < kfull; k++) sum += (int8_t)(s[k] ^ xr);
            else for (int64_t k = 0; k < kfull; k++) sum += (uint8_t)(s[k] ^ xr);
        } else if (es == 2 && kg == 2) {
            int16_t *d = (int16_t *)dst + 2 * x;
            for (int64_t g = 0; g < kfull / 2; g++) {
                int v0 = val(s[2 * g], xr, is_signed), v1 = val(s[2 * g + 1], xr, is_signed);
                d[g * pw * 2] = (int16_t)v0;
                d[g * pw * 2 + 1] = (int16_t)v1;
                sum += v0 + v1;
            }
        } else {
            for (int64_t k = 0; k < kfull; k++) {
                int v = val(s[k], xr, is_signed);
                sum += v;
                int64_t idx = (k / kg * pw + x) * kg + k % kg;
                if (es == 1) dst[idx] = (uint8_t)v;
                else ((int16_t *)dst)[idx] = (int16_t)v;
            }
        }
        if (es == 1 && kfull < kc) { /* partial last group: the row's kg bytes of it are contiguous, zero-padded */
            uint8_t *d = dst + (kfull / kg * pw + x) * kg;
            const int64_t n = kc - kfull;
#if GK_PACK_SSE
            if (kg % 16 == 0 && kg <= 64) { /* AMX: the group's bytes past K replaced by xr (packed as zero) */
                const __m128i vx = _mm_set1_epi8((char)xr), vs = _mm_set1_epi8((char)(is_signed ? 0x80 : 0));
                const __m128i lane = _mm_setr_epi8(0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15);
                /* read in place where the block's next row lies past the group (the bytes between are the caller's
                 * buffer), else from a copy: the copy cost a row as much again as its whole groups */
                const uint8_t *from = s + kfull;
                uint8_t t[64];
                if (!(x + 1 < w && kfull + kg <= ld + kc)) {
                    memset(t, 0, sizeof(t));
                    memcpy(t, s + kfull, (size_t)n);
                    from = t;
                }
                __m128i acc = _mm_setzero_si128();
                for (int j = 0; j < kg; j += 16) {
                    const __m128i keep = _mm_cmpgt_epi8(_mm_set1_epi8((char)(n - j)), lane);
                    const __m128i raw = _mm_loadu_si128((const __m128i *)(from + j));
                    const __m128i v =
                        _mm_xor_si128(_mm_or_si128(_mm_and_si128(keep, raw), _mm_andnot_si128(keep, vx)), vx);
                    _mm_storeu_si128((__m128i *)(d + j), v);
                    acc = _mm_add_epi64(acc, _mm_sad_epu8(_mm_xor_si128(v, vs), _mm_setzero_si128()));
                }
                int64_t lanes[2];
                memcpy(lanes, &acc, sizeof(lanes));
                sum += (int32_t)(lanes[0] + lanes[1] - (is_signed ? 128 * kg : 0));
            } else
#endif
            if (is_signed) for (int64_t k = 0; k < n; k++) sum += (int8_t)(d[k] = (uint8_t)(s[kfull + k] ^ xr));
            else for (int64_t k = 0; k < n; k++) sum += (d[k] = (uint8_t)(s[kfull + k] ^ xr));
            memset(d + n, 0, (size_t)(kg - n));
        }
        for (int64_t k = kfull; es != 1 && k < groups * kg; k++) { /* partial last group, zero-padded */
            int v = k < kc ? val(s[k], xr, is_signed) : 0;
            sum += v;
            ((int16_t *)dst)[(k / kg * pw + x) * kg + k % kg] = (int16_t)v;
        }
        sums[x] = sum;
    }
}

void gk_pack_a_int8(int transa, const uint8_t *A, int64_t lda, int64_t mc, int64_t kc, int mr, int kgroup,
               int elem_size, int flip, void *GK_RESTRICT dst, int32_t *GK_RESTRICT rowsum) {
    const int64_t kp = (kc + kgroup - 1) / kgroup * kgroup;
    const uint8_t xr = flip ? 0x80 : 0x00;
    if (transa) { /* A^T stored k-major: the whole block in one streaming pass */
        pack_kmajor(A, lda, kc, mc, mr, kgroup, elem_size, xr, 0, (uint8_t *)dst, rowsum);
        return;
    }
    for (int64_t i0 = 0; i0 < mc; i0 += mr) {
        int64_t mb = GK_MIN((int64_t)mr, mc - i0);
        uint8_t *panel = (uint8_t *)dst + (size_t)(i0 * kp) * elem_size;
        pack_kcontig(A + i0 * lda, lda, kc, mb, mr, kgroup, elem_size, xr, 0, panel, rowsum + i0);
    }
}

void gk_pack_b_int8(int transb, const int8_t *B, int64_t ldb, int64_t kc, int64_t nc, int nr, int kgroup,
               int elem_size, void *GK_RESTRICT dst, int32_t *GK_RESTRICT colsum) {
    const int64_t kp = (kc + kgroup - 1) / kgroup * kgroup;
    const uint8_t *Bu = (const uint8_t *)B;
    if (!transb) { /* plain B is k-major: the whole block in one streaming pass */
        pack_kmajor(Bu, ldb, kc, nc, nr, kgroup, elem_size, 0, 1, (uint8_t *)dst, colsum);
        return;
    }
    for (int64_t j0 = 0; j0 < nc; j0 += nr) {
        int64_t nb = GK_MIN((int64_t)nr, nc - j0);
        uint8_t *panel = (uint8_t *)dst + (size_t)(j0 * kp) * elem_size;
        pack_kcontig(Bu + j0 * ldb, ldb, kc, nb, nr, kgroup, elem_size, 0, 1, panel, colsum + j0);
    }
}
