/* bfloat16 operands into a pair kernel's panels (pack.h, gk_pack_*_bf16_pairs): pairs of k side by side as the
 * bfloat16 dot-product instructions read them, zero past the block's edges, subnormals reported as packed. */
#include <string.h>
#include "pack.h"

/* A value (its bits) is a subnormal: zero exponent, nonzero fraction; as x & 0x7fff in 1 .. 0x7f. */
#define BF16_SUBNORMAL(x) ((uint16_t)(((x) & 0x7fffu) - 1u) < 0x7fu)

static inline uint32_t pair_of(uint16_t lo, uint16_t hi) { return (uint32_t)lo | (uint32_t)hi << 16; }

/* One row of op(X) along k: `kp` pairs of the values at src[k * step] for k < kvals (zero past kvals) into
 * dst[q * stride]; returns the OR of the subnormal tests. */
static int row_pairs(const uint16_t *src, int64_t step, int64_t kp, int64_t kvals, uint32_t *dst, int64_t stride) {
    unsigned sub = 0;
    if (kvals < 0) kvals = 0;
    const int64_t full = GK_MIN(kp, kvals / 2);
    if (step == 1) {
        for (int64_t q = 0; q < full; q++) {
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
            for (int r = 0; r < mr; r++) {
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
                         uint32_t *GK_RESTRICT dst) {
    /* op(B)[k][j] at B[k * ldb + j] (plain) or B[j * ldb + k] (transposed) */
    const int64_t ks = transb ? 1 : ldb, cs = transb ? ldb : 1;
    int sub = 0;
    kvals = GK_MAX((int64_t)0, GK_MIN(kvals, 2 * kp));
    for (int64_t j0 = 0; j0 < nc; j0 += nr) {
        uint32_t *panel = dst + j0 * kp;
        const int cols = (int)GK_MIN((int64_t)nr, nc - j0);
        if (transb) { /* each column of op(B) is a row of B, contiguous in k */
            for (int c = 0; c < cols; c++) sub |= row_pairs(B + (j0 + c) * cs, ks, kp, kvals, panel + c, nr);
            for (int c = cols; c < nr; c++)
                for (int64_t q = 0; q < kp; q++) panel[q * nr + c] = 0;
        } else { /* rows 2q and 2q + 1 of B interleaved */
            for (int64_t q = 0; q < kp; q++) {
                uint32_t *out = panel + q * nr;
                const uint16_t *lo = B + 2 * q * ks + j0 * cs, *hi = lo + ks;
                const int have_lo = 2 * q < kvals, have_hi = 2 * q + 1 < kvals;
                unsigned s = 0;
                int c = 0;
                if (have_hi) {
                    for (; c < cols; c++) {
                        s |= BF16_SUBNORMAL(lo[c]) | BF16_SUBNORMAL(hi[c]);
                        out[c] = pair_of(lo[c], hi[c]);
                    }
                } else if (have_lo) {
                    for (; c < cols; c++) {
                        s |= BF16_SUBNORMAL(lo[c]);
                        out[c] = pair_of(lo[c], 0);
                    }
                }
                for (; c < nr; c++) out[c] = 0;
                sub |= (int)s;
            }
        }
    }
    return sub;
}
