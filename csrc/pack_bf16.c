/* bfloat16 operands into a pair kernel's panels (pack.h, gk_pack_*_bf16_pairs): pairs of k side by side as the
 * bfloat16 dot-product instructions read them, zero past the block's edges, subnormals reported as packed. */
#include <string.h>
#include "pack.h"
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define GK_PACK_BF16_SSE 1 /* x86-64's baseline: the hot loops 16 bytes at a time */
#else
#define GK_PACK_BF16_SSE 0
#endif

/* A value (its bits) is a subnormal: zero exponent, nonzero fraction; as x & 0x7fff in 1 .. 0x7f. */
#define BF16_SUBNORMAL(x) ((uint16_t)(((x) & 0x7fffu) - 1u) < 0x7fu)

static inline uint32_t pair_of(uint16_t lo, uint16_t hi) { return (uint32_t)lo | (uint32_t)hi << 16; }

#if GK_PACK_BF16_SSE
/* The subnormal test of eight values at once: zero exponent and nonzero fraction; lanes OR-ed into *acc. */
static inline void sse_subnormals(__m128i v, __m128i *acc) {
    const __m128i zero = _mm_setzero_si128();
    const __m128i exp_zero = _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16(0x7f80)), zero);
    const __m128i frac_zero = _mm_cmpeq_epi16(_mm_and_si128(v, _mm_set1_epi16(0x007f)), zero);
    *acc = _mm_or_si128(*acc, _mm_andnot_si128(frac_zero, exp_zero));
}

/* Four rows of contiguous pairs (k along each row) transposed into dst: pair q of row r at dst[q * stride + r],
 * for q < n (a multiple of 4), 4 x 4 pairs per step. */
static int sse_transpose_rows4(const uint16_t *const r[4], int64_t n, uint32_t *dst, int64_t stride) {
    __m128i acc = _mm_setzero_si128();
    for (int64_t q = 0; q < n; q += 4) {
        const __m128i v0 = _mm_loadu_si128((const __m128i *)(r[0] + 2 * q));
        const __m128i v1 = _mm_loadu_si128((const __m128i *)(r[1] + 2 * q));
        const __m128i v2 = _mm_loadu_si128((const __m128i *)(r[2] + 2 * q));
        const __m128i v3 = _mm_loadu_si128((const __m128i *)(r[3] + 2 * q));
        sse_subnormals(v0, &acc);
        sse_subnormals(v1, &acc);
        sse_subnormals(v2, &acc);
        sse_subnormals(v3, &acc);
        const __m128i t0 = _mm_unpacklo_epi32(v0, v1), t1 = _mm_unpacklo_epi32(v2, v3);
        const __m128i t2 = _mm_unpackhi_epi32(v0, v1), t3 = _mm_unpackhi_epi32(v2, v3);
        _mm_storeu_si128((__m128i *)(dst + q * stride), _mm_unpacklo_epi64(t0, t1));
        _mm_storeu_si128((__m128i *)(dst + (q + 1) * stride), _mm_unpackhi_epi64(t0, t1));
        _mm_storeu_si128((__m128i *)(dst + (q + 2) * stride), _mm_unpacklo_epi64(t2, t3));
        _mm_storeu_si128((__m128i *)(dst + (q + 3) * stride), _mm_unpackhi_epi64(t2, t3));
    }
    return _mm_movemask_epi8(acc) != 0;
}
#endif

/* One row of op(X) along k: `kp` pairs of the values at src[k * step] for k < kvals (zero past kvals) into
 * dst[q * stride]; returns the OR of the subnormal tests. */
static int row_pairs(const uint16_t *src, int64_t step, int64_t kp, int64_t kvals, uint32_t *dst, int64_t stride) {
    unsigned sub = 0;
    if (kvals < 0) kvals = 0;
    const int64_t full = GK_MIN(kp, kvals / 2);
    int64_t q0 = 0;
#if GK_PACK_BF16_SSE
    if (step == 1 && stride == 1) { /* a contiguous run of pairs: copied 4 at a time */
        __m128i acc = _mm_setzero_si128();
        for (; q0 + 4 <= full; q0 += 4) {
            const __m128i v = _mm_loadu_si128((const __m128i *)(src + 2 * q0));
            sse_subnormals(v, &acc);
            _mm_storeu_si128((__m128i *)(dst + q0), v);
        }
        sub |= (unsigned)(_mm_movemask_epi8(acc) != 0);
    }
#endif
    if (step == 1) {
        for (int64_t q = q0; q < full; q++) {
            const uint16_t lo = src[2 * q], hi = src[2 * q + 1];
            sub |= BF16_SUBNORMAL(lo) | BF16_SUBNORMAL(hi);
            dst[q * stride] = pair_of(lo, hi);
        }
    } else {
        for (int64_t q = 0; q < full; q++) {
            const uint16_t lo = src[2 * q * step], hi = src[(2 * q + 1) * step];
            sub |= BF16_SUBNORMAL(lo) | BF16_SUBNORMAL(hi);
            dst[q * stride] = pair_of(lo, hi);
        }
    }
    int64_t q = full;
    if (q < kp && 2 * q < kvals) { /* an odd K: the last pair's second value is zero */
        const uint16_t lo = src[2 * q * step];
        sub |= BF16_SUBNORMAL(lo);
        dst[q * stride] = pair_of(lo, 0);
        q++;
    }
    for (; q < kp; q++) dst[q * stride] = 0;
    return (int)sub;
}

/* A panel of pw rows (w real, the rest zero) from k-contiguous rows (row x at src + x * ld, k along it): op(A) plain,
 * op(B) transposed. Pair q of row x at ((q / group) * pw + x) * group + q % group. */
static int panel_kcontig(const uint16_t *src, int64_t ld, int w, int pw, int64_t kp, int64_t kvals, int group,
                         uint32_t *panel) {
    int sub = 0, x0 = 0;
#if GK_PACK_BF16_SSE
    if (group == 1) { /* four rows at a time, their whole pairs transposed into the panel's k steps */
        const int64_t n = GK_MIN(kp, kvals / 2) / 4 * 4;
        for (; n > 0 && x0 + 4 <= w; x0 += 4) {
            const uint16_t *const rr[4] = {src + x0 * ld, src + (x0 + 1) * ld, src + (x0 + 2) * ld, src + (x0 + 3) * ld};
            sub |= sse_transpose_rows4(rr, n, panel + x0, pw);
            for (int j = 0; j < 4; j++)
                sub |= row_pairs(rr[j] + 2 * n, 1, kp - n, kvals - 2 * n, panel + n * pw + x0 + j, pw);
        }
    }
#endif
    for (int x = x0; x < pw; x++) {
        if (x >= w) {
            for (int64_t g = 0; g < kp / group; g++) memset(panel + (g * pw + x) * group, 0, 4 * (size_t)group);
            continue;
        }
        const uint16_t *row = src + x * ld;
        if (group == 1) {
            sub |= row_pairs(row, 1, kp, kvals, panel + x, pw);
        } else {
            for (int64_t g = 0; g < kp / group; g++)
                sub |= row_pairs(row + 2 * g * group, 1, group, kvals - 2 * g * group, panel + (g * pw + x) * group,
                                 1);
        }
    }
    return sub;
}

/* The same panel from k-major rows (element (k, x) at src[k * ld + x]): op(A) transposed, op(B) plain; source rows
 * 2q and 2q + 1 interleaved into pair q. */
static int panel_kmajor(const uint16_t *src, int64_t ld, int w, int pw, int64_t kp, int64_t kvals, int group,
                        uint32_t *panel) {
    unsigned sub = 0;
#if GK_PACK_BF16_SSE
    __m128i acc = _mm_setzero_si128(); /* one test of the lanes for the whole panel */
#endif
    for (int64_t q = 0; q < kp; q++) {
        uint32_t *out = panel + (q / group) * pw * group + q % group;
        const uint16_t *lo = src + 2 * q * ld, *hi = lo + ld; /* read only below kvals */
        const int have_lo = 2 * q < kvals, have_hi = 2 * q + 1 < kvals;
        int x = 0;
        if (have_hi) {
#if GK_PACK_BF16_SSE
            if (group == 1) { /* 8 values at a time: two rows' values interleaved into pairs */
                for (; x + 8 <= w; x += 8) {
                    const __m128i l = _mm_loadu_si128((const __m128i *)(lo + x));
                    const __m128i h = _mm_loadu_si128((const __m128i *)(hi + x));
                    sse_subnormals(l, &acc);
                    sse_subnormals(h, &acc);
                    _mm_storeu_si128((__m128i *)(out + x), _mm_unpacklo_epi16(l, h));
                    _mm_storeu_si128((__m128i *)(out + x + 4), _mm_unpackhi_epi16(l, h));
                }
            }
#endif
            for (; x < w; x++) {
                sub |= BF16_SUBNORMAL(lo[x]) | BF16_SUBNORMAL(hi[x]);
                out[x * group] = pair_of(lo[x], hi[x]);
            }
        } else if (have_lo) { /* an odd K: the last pair's second value is zero */
            for (; x < w; x++) {
                sub |= BF16_SUBNORMAL(lo[x]);
                out[x * group] = pair_of(lo[x], 0);
            }
        }
        for (; x < pw; x++) out[x * group] = 0;
    }
#if GK_PACK_BF16_SSE
    sub |= (unsigned)(_mm_movemask_epi8(acc) != 0);
#endif
    return (int)sub;
}

/* Every panel of a block of n rows (A's) or columns (B's) of op(X), pw wide, from k-major or k-contiguous rows. */
static int pack_panels(int kmajor, const uint16_t *X, int64_t ld, int64_t n, int pw, int64_t kp, int64_t kvals,
                       int group, uint32_t *GK_RESTRICT dst) {
    int sub = 0;
    group = GK_MAX(1, group);
    kvals = GK_MAX((int64_t)0, GK_MIN(kvals, 2 * kp));
    for (int64_t x0 = 0; x0 < n; x0 += pw) {
        const int w = (int)GK_MIN((int64_t)pw, n - x0);
        sub |= kmajor ? panel_kmajor(X + x0, ld, w, pw, kp, kvals, group, dst + x0 * kp)
                      : panel_kcontig(X + x0 * ld, ld, w, pw, kp, kvals, group, dst + x0 * kp);
    }
    return sub;
}

/* op(A)[i][k] at A[i * lda + k] (plain: k-contiguous) or A[k * lda + i] (transposed: k-major) */
int gk_pack_a_bf16_pairs(int transa, const uint16_t *A, int64_t lda, int64_t mc, int64_t kp, int64_t kvals, int mr,
                         int group, uint32_t *GK_RESTRICT dst) {
    return pack_panels(transa, A, lda, mc, mr, kp, kvals, group, dst);
}

/* op(B)[k][j] at B[k * ldb + j] (plain: k-major) or B[j * ldb + k] (transposed: k-contiguous) */
int gk_pack_b_bf16_pairs(int transb, const uint16_t *B, int64_t ldb, int64_t kp, int64_t kvals, int64_t nc, int nr,
                         int group, uint32_t *GK_RESTRICT dst) {
    return pack_panels(!transb, B, ldb, nc, nr, kp, kvals, group, dst);
}

int gk_bf16_rows_subnormal(const uint16_t *X, int64_t ld, int64_t rows, int64_t cols) {
    unsigned sub = 0;
#if GK_PACK_BF16_SSE
    __m128i acc = _mm_setzero_si128(); /* one test of the lanes for the whole block */
#endif
    for (int64_t r = 0; r < rows; r++) {
        const uint16_t *row = X + r * ld;
        int64_t j = 0;
#if GK_PACK_BF16_SSE
        for (; j + 8 <= cols; j += 8) sse_subnormals(_mm_loadu_si128((const __m128i *)(row + j)), &acc);
#endif
        for (; j < cols; j++) sub |= BF16_SUBNORMAL(row[j]);
    }
#if GK_PACK_BF16_SSE
    sub |= (unsigned)(_mm_movemask_epi8(acc) != 0);
#endif
    return (int)sub;
}

int gk_pack_a_bf16_rows(int transa, const uint16_t *A, int64_t lda, int64_t mc, int64_t kp, int64_t kvals, int mr,
                        uint32_t *GK_RESTRICT dst) {
    const int64_t stride = GK_PAIR_ROW(kp), rows = (mc + mr - 1) / mr * mr;
    kvals = GK_MAX((int64_t)0, GK_MIN(kvals, 2 * kp));
    int sub = 0;
    for (int64_t i = 0; i < mc; i++) /* op(A)'s row i: k along A's row (plain) or down its column (transposed) */
        sub |= row_pairs(transa ? A + i : A + i * lda, transa ? lda : 1, kp, kvals, dst + i * stride, 1);
    for (int64_t i = mc; i < rows; i++) memset(dst + i * stride, 0, 4 * (size_t)kp);
    return sub;
}
