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

int gk_pack_a_bf16_pairs(int transa, const uint16_t *A, int64_t lda, int64_t mc, int64_t kp, int64_t kvals, int mr,
                         int group, uint32_t *GK_RESTRICT dst) {
    /* op(A)[i][k] at A[i * lda + k] (plain) or A[k * lda + i] (transposed) */
    const int64_t rs = transa ? 1 : lda, ks = transa ? lda : 1;
    const int64_t groups = kp / group;
    int sub = 0;
    kvals = GK_MAX((int64_t)0, GK_MIN(kvals, 2 * kp));
    for (int64_t i0 = 0; i0 < mc; i0 += mr) {
        uint32_t *panel = dst + i0 * kp;
        const int rows = (int)GK_MIN((int64_t)mr, mc - i0);
        if (transa) { /* k-major source: whole rows of A (k) read in turn, pairs of rows interleaved */
            for (int64_t q = 0; q < kp; q++) {
                uint32_t *out = panel + (q / group) * mr * group + q % group;
                const uint16_t *lo = A + 2 * q * ks + i0 * rs, *hi = lo + ks;
                const int have_lo = 2 * q < kvals, have_hi = 2 * q + 1 < kvals;
                int r = 0;
                for (; r < rows; r++) {
                    const uint16_t a = have_lo ? lo[r] : 0, b = have_hi ? hi[r] : 0;
                    sub |= BF16_SUBNORMAL(a) | BF16_SUBNORMAL(b);
                    out[r * group] = pair_of(a, b);
                }
                for (; r < mr; r++) out[r * group] = 0;
            }
        } else {
            int r0 = 0;
#if GK_PACK_BF16_SSE
            if (group == 1) { /* four rows at a time, their whole pairs transposed into the panel's k steps */
                const int64_t n = GK_MIN(kp, kvals / 2) / 4 * 4;
                for (; n > 0 && r0 + 4 <= rows; r0 += 4) {
                    const uint16_t *const rr[4] = {A + (i0 + r0) * rs, A + (i0 + r0 + 1) * rs, A + (i0 + r0 + 2) * rs,
                                                   A + (i0 + r0 + 3) * rs};
                    sub |= sse_transpose_rows4(rr, n, panel + r0, mr);
                    for (int j = 0; j < 4; j++)
                        sub |= row_pairs(rr[j] + 2 * n, ks, kp - n, kvals - 2 * n, panel + n * mr + r0 + j, mr);
                }
            }
#endif
            for (int r = r0; r < mr; r++) {
                if (r >= rows) {
                    for (int64_t g = 0; g < groups; g++) memset(panel + (g * mr + r) * group, 0, 4 * (size_t)group);
                    continue;
                }
                const uint16_t *src = A + (i0 + r) * rs;
                if (group == 1) {
                    sub |= row_pairs(src, ks, kp, kvals, panel + r, mr);
                } else {
                    for (int64_t g = 0; g < groups; g++)
                        sub |= row_pairs(src + 2 * g * group * ks, ks, group, kvals - 2 * g * group,
                                         panel + (g * mr + r) * group, 1);
                }
            }
        }
    }
    return sub;
}

int gk_pack_b_bf16_pairs(int transb, const uint16_t *B, int64_t ldb, int64_t kp, int64_t kvals, int64_t nc, int nr,
                         int group, uint32_t *GK_RESTRICT dst) {
    /* op(B)[k][j] at B[k * ldb + j] (plain) or B[j * ldb + k] (transposed); pair q of column c of a panel at
     * ((q / group) * nr + c) * group + q % group */
    const int64_t ks = transb ? 1 : ldb, cs = transb ? ldb : 1;
    int sub = 0;
    group = GK_MAX(1, group);
    kvals = GK_MAX((int64_t)0, GK_MIN(kvals, 2 * kp));
    for (int64_t j0 = 0; j0 < nc; j0 += nr) {
        uint32_t *panel = dst + j0 * kp;
        const int cols = (int)GK_MIN((int64_t)nr, nc - j0);
        if (transb) { /* each column of op(B) is a row of B, contiguous in k */
            int c0 = 0;
#if GK_PACK_BF16_SSE
            if (group == 1) { /* four columns at a time, their whole pairs transposed into the panel's k rows */
                const int64_t n = GK_MIN(kp, kvals / 2) / 4 * 4;
                for (; n > 0 && c0 + 4 <= cols; c0 += 4) {
                    const uint16_t *const rr[4] = {B + (j0 + c0) * cs, B + (j0 + c0 + 1) * cs, B + (j0 + c0 + 2) * cs,
                                                   B + (j0 + c0 + 3) * cs};
                    sub |= sse_transpose_rows4(rr, n, panel + c0, nr);
                    for (int j = 0; j < 4; j++)
                        sub |= row_pairs(rr[j] + 2 * n, ks, kp - n, kvals - 2 * n, panel + n * nr + c0 + j, nr);
                }
            }
#endif
            for (int c = c0; c < cols; c++) {
                const uint16_t *src = B + (j0 + c) * cs;
                if (group == 1) {
                    sub |= row_pairs(src, ks, kp, kvals, panel + c, nr);
                } else {
                    for (int64_t g = 0; g < kp / group; g++)
                        sub |= row_pairs(src + 2 * g * group * ks, ks, group, kvals - 2 * g * group,
                                         panel + (g * nr + c) * group, 1);
                }
            }
            for (int c = cols; c < nr; c++)
                for (int64_t q = 0; q < kp; q++) panel[((q / group) * nr + c) * group + q % group] = 0;
        } else { /* rows 2q and 2q + 1 of B interleaved */
            for (int64_t q = 0; q < kp; q++) {
                uint32_t *out = panel + (q / group) * nr * group + q % group;
                const uint16_t *lo = B + 2 * q * ks + j0 * cs, *hi = lo + ks;
                const int have_lo = 2 * q < kvals, have_hi = 2 * q + 1 < kvals;
                unsigned s = 0;
                int c = 0;
                if (have_hi) {
#if GK_PACK_BF16_SSE
                    if (group == 1) { /* 8 columns at a time: two rows' values interleaved into pairs */
                        __m128i acc = _mm_setzero_si128();
                        for (; c + 8 <= cols; c += 8) {
                            const __m128i l = _mm_loadu_si128((const __m128i *)(lo + c));
                            const __m128i h = _mm_loadu_si128((const __m128i *)(hi + c));
                            sse_subnormals(l, &acc);
                            sse_subnormals(h, &acc);
                            _mm_storeu_si128((__m128i *)(out + c), _mm_unpacklo_epi16(l, h));
                            _mm_storeu_si128((__m128i *)(out + c + 4), _mm_unpackhi_epi16(l, h));
                        }
                        s |= (unsigned)(_mm_movemask_epi8(acc) != 0);
                    }
#endif
                    for (; c < cols; c++) {
                        s |= BF16_SUBNORMAL(lo[c]) | BF16_SUBNORMAL(hi[c]);
                        out[c * group] = pair_of(lo[c], hi[c]);
                    }
                } else if (have_lo) {
                    for (; c < cols; c++) {
                        s |= BF16_SUBNORMAL(lo[c]);
                        out[c * group] = pair_of(lo[c], 0);
                    }
                }
                for (; c < nr; c++) out[c * group] = 0;
                sub |= (int)s;
            }
        }
    }
    return sub;
}
