/* The AVX-512 data movement of the bfloat16 pair kernels (AVX512_BF16's and AMX-BF16's, kernel.h gk_bf16_moves_t):
 * packers testing for subnormals as they load, the scan of rows read in place, a bfloat16 C's rows narrowed. */
#include "../kernel.h"
#if GEMMKIT_X86
#include <immintrin.h>
#include "../pack.h"
#include "bf16_zmm_store.h"

/* The mask of the first n of 32 lanes (n <= 0: none). */
static GK_FORCEINLINE __mmask32 first_lanes(int64_t n) {
    return n >= 32 ? (__mmask32)0xffffffffu : n > 0 ? (__mmask32)((1u << n) - 1u) : (__mmask32)0;
}

/* ---- k-contiguous rows (op(A) plain, op(B) transposed) into pair panels of one pair per group ---------------- */

/* out[j] lane i = r[i] lane j: a 16 x 16 transpose of 32-bit pairs (pairs within 128-bit lanes, then the lanes). */
static GK_FORCEINLINE void transpose16(__m512i r[16]) {
    __m512i t[16];
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++) {
        t[2 * k] = _mm512_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm512_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) { /* u[4k + e]: rows 4k..4k+3 at column e of each 128-bit lane */
        r[4 * k] = _mm512_unpacklo_epi64(t[4 * k], t[4 * k + 2]);
        r[4 * k + 1] = _mm512_unpackhi_epi64(t[4 * k], t[4 * k + 2]);
        r[4 * k + 2] = _mm512_unpacklo_epi64(t[4 * k + 1], t[4 * k + 3]);
        r[4 * k + 3] = _mm512_unpackhi_epi64(t[4 * k + 1], t[4 * k + 3]);
    }
#pragma GCC unroll 4
    for (int e = 0; e < 4; e++) {
        const __m512i v0 = _mm512_shuffle_i32x4(r[e], r[4 + e], 0x88), v1 = _mm512_shuffle_i32x4(r[e], r[4 + e], 0xdd);
        const __m512i w0 = _mm512_shuffle_i32x4(r[8 + e], r[12 + e], 0x88),
                      w1 = _mm512_shuffle_i32x4(r[8 + e], r[12 + e], 0xdd);
        t[e] = _mm512_shuffle_i32x4(v0, w0, 0x88);
        t[8 + e] = _mm512_shuffle_i32x4(v0, w0, 0xdd);
        t[4 + e] = _mm512_shuffle_i32x4(v1, w1, 0x88);
        t[12 + e] = _mm512_shuffle_i32x4(v1, w1, 0xdd);
    }
#pragma GCC unroll 16
    for (int j = 0; j < 16; j++) r[j] = t[j];
}

/* gk_pack_*_bf16_pairs' k-contiguous case with one pair per group (pack.h): 16 rows x 16 pairs per step, loaded
 * whole (a block's last values under a mask), tested for subnormals, transposed; returns the OR of the tests. */
static int pairs_kcontig_avx512(const uint16_t *src, int64_t ld, int64_t n, int pw, int64_t kp, int64_t kvals,
                                uint32_t *GK_RESTRICT dst) {
    __mmask32 any = 0;
    kvals = GK_MAX((int64_t)0, GK_MIN(kvals, 2 * kp));
    for (int64_t x0 = 0; x0 < n; x0 += pw) {
        const int w = (int)GK_MIN((int64_t)pw, n - x0);
        uint32_t *panel = dst + x0 * kp;
        for (int r0 = 0; r0 < pw; r0 += 16) {
            const int lanes = GK_MIN(16, pw - r0), real = GK_MAX(0, GK_MIN(16, w - r0));
            const __mmask16 store = (__mmask16)((1u << lanes) - 1u);
            const uint16_t *rows = src + (x0 + r0) * ld;
            for (int64_t q0 = 0; q0 < kp; q0 += 16) {
                const int64_t left = kvals - 2 * q0;
                const __mmask32 m = first_lanes(left);
                __m512i r[16];
#pragma GCC unroll 16
                for (int i = 0; i < 16; i++) {
                    if (i >= real) r[i] = _mm512_setzero_si512();
                    else if (left >= 32) r[i] = _mm512_loadu_si512(rows + i * ld + 2 * q0);
                    else r[i] = _mm512_maskz_loadu_epi16(m, rows + i * ld + 2 * q0);
                    any |= bf16_subnormal_lanes(r[i]);
                }
                transpose16(r);
                const int64_t nq = GK_MIN((int64_t)16, kp - q0);
                uint32_t *out = panel + q0 * pw + r0;
                if (lanes == 16)
                    for (int64_t j = 0; j < nq; j++) _mm512_storeu_si512(out + j * pw, r[j]);
                else
                    for (int64_t j = 0; j < nq; j++) _mm512_mask_storeu_epi32(out + j * pw, store, r[j]);
            }
        }
    }
    return any != 0;
}

/* ---- k-major rows (element (k, x) at src[k * ld + x]: op(A) transposed, op(B) plain) ----------------------- */

/* gk_pack_*_bf16_pairs' k-major case with one pair per group (pack.h): source rows 2q and 2q + 1 interleaved into
 * pair q of each panel's k step q, 32 columns a step (a panel's last columns under a mask), the rows read along
 * their length (one stream each, not a column block at a time); returns the OR of the subnormal tests. */
static int pairs_kmajor_avx512(const uint16_t *src, int64_t ld, int64_t n, int pw, int64_t kp, int64_t kvals,
                               uint32_t *GK_RESTRICT dst) {
    __mmask32 any = 0;
    kvals = GK_MAX((int64_t)0, GK_MIN(kvals, 2 * kp));
    /* the 64-bit lanes of the in-lane interleaves (columns 0-3, 8-11, ... and 4-7, 12-15, ...) put in column order */
    const __m512i first16 = _mm512_set_epi64(11, 10, 3, 2, 9, 8, 1, 0);
    const __m512i last16 = _mm512_set_epi64(15, 14, 7, 6, 13, 12, 5, 4);
    for (int64_t q = 0; q < kp; q++) { /* rows 2q and 2q + 1 read along, each panel's k step q written */
        const uint16_t *lo = src + 2 * q * ld, *hi = lo + ld; /* read only below kvals */
        const int have_lo = 2 * q < kvals, have_hi = 2 * q + 1 < kvals;
        for (int64_t x0 = 0; x0 < n; x0 += pw) {
            const int w = (int)GK_MIN((int64_t)pw, n - x0);
            uint32_t *out = dst + x0 * kp + q * pw;
            for (int c0 = 0; c0 < pw; c0 += 32) {
                const int real = GK_MAX(0, GK_MIN(32, w - c0)), lanes = GK_MIN(32, pw - c0);
                __m512i l = _mm512_setzero_si512(), h = _mm512_setzero_si512();
                if (real == 32) {
                    if (have_lo) l = _mm512_loadu_si512(lo + x0 + c0);
                    if (have_hi) h = _mm512_loadu_si512(hi + x0 + c0);
                } else if (real > 0) {
                    const __mmask32 m = first_lanes(real);
                    if (have_lo) l = _mm512_maskz_loadu_epi16(m, lo + x0 + c0);
                    if (have_hi) h = _mm512_maskz_loadu_epi16(m, hi + x0 + c0);
                }
                any |= bf16_subnormal_lanes(l) | bf16_subnormal_lanes(h);
                const __m512i u0 = _mm512_unpacklo_epi16(l, h), u1 = _mm512_unpackhi_epi16(l, h);
                const __m512i p0 = _mm512_permutex2var_epi64(u0, first16, u1);
                const __m512i p1 = _mm512_permutex2var_epi64(u0, last16, u1);
                if (lanes == 32) {
                    _mm512_storeu_si512(out + c0, p0);
                    _mm512_storeu_si512(out + c0 + 16, p1);
                } else {
                    const __mmask32 m = first_lanes(lanes);
                    _mm512_mask_storeu_epi32(out + c0, (__mmask16)m, p0);
                    if (lanes > 16) _mm512_mask_storeu_epi32(out + c0 + 16, (__mmask16)(m >> 16), p1);
                }
            }
        }
    }
    return any != 0;
}

/* ---- A's k-contiguous rows as rows of pairs (gk_real_kernel_t.a_rows) --------------------------------------- */

/* gk_pack_a_bf16_rows' plain case (pack.h): each row's kp pairs copied 16 a step (its last values under a mask, zero
 * past kvals), rows GK_PAIR_ROW(kp) pairs apart, the rows past mc up to a whole panel zero; returns the OR of the
 * subnormal tests. */
static int rows_kcontig_avx512(const uint16_t *src, int64_t ld, int64_t mc, int mr, int64_t kp, int64_t kvals,
                               uint32_t *GK_RESTRICT dst) {
    __mmask32 any = 0;
    const int64_t stride = GK_PAIR_ROW(kp), rows = (mc + mr - 1) / mr * mr;
    kvals = GK_MAX((int64_t)0, GK_MIN(kvals, 2 * kp));
    for (int64_t i = 0; i < rows; i++) {
        const uint16_t *row = src + (i < mc ? i : 0) * ld; /* read only below mc */
        uint32_t *out = dst + i * stride;
        for (int64_t q0 = 0; q0 < kp; q0 += 16) {
            const int64_t left = i < mc ? kvals - 2 * q0 : 0;
            __m512i v = _mm512_setzero_si512();
            if (left >= 32) v = _mm512_loadu_si512(row + 2 * q0);
            else if (left > 0) v = _mm512_maskz_loadu_epi16(first_lanes(left), row + 2 * q0);
            any |= bf16_subnormal_lanes(v);
            if (kp - q0 >= 16) _mm512_storeu_si512(out + q0, v);
            else _mm512_mask_storeu_epi32(out + q0, (__mmask16)first_lanes(kp - q0), v);
        }
    }
    return any != 0;
}

/* ---- rows read in place, and a bfloat16 C ------------------------------------------------------------------- */

/* gk_bf16_rows_subnormal (pack.h): whether any of rows x cols values (rows ld apart) is subnormal, 32 a step. */
static int rows_subnormal_avx512(const uint16_t *src, int64_t ld, int64_t rows, int64_t cols) {
    __mmask32 any = 0;
    for (int64_t r = 0; r < rows; r++) {
        const uint16_t *row = src + r * ld;
        int64_t j = 0;
        for (; j + 32 <= cols; j += 32) any |= bf16_subnormal_lanes(_mm512_loadu_si512(row + j));
        if (j < cols) any |= bf16_subnormal_lanes(_mm512_maskz_loadu_epi16(first_lanes(cols - j), row + j));
    }
    return any != 0;
}

/* gk_f32_row_to_bf16 (convert.h), 16 values a step: round to nearest even by integer arithmetic, a NaN made quiet. */
static void f32_row_to_bf16_avx512(const float *src, int64_t n, uint16_t *dst) {
    const __m512i round = _mm512_set1_epi32(0x7fff), one = _mm512_set1_epi32(1), quiet = _mm512_set1_epi32(0x40);
    const __m512i abs_mask = _mm512_set1_epi32(0x7fffffff), inf = _mm512_set1_epi32(0x7f800000);
    for (int64_t j = 0; j < n; j += 16) {
        const __mmask16 m = (__mmask16)first_lanes(GK_MIN((int64_t)16, n - j));
        const __m512i x = _mm512_maskz_loadu_epi32(m, src + j), hi = _mm512_srli_epi32(x, 16);
        const __m512i r = _mm512_srli_epi32(_mm512_add_epi32(_mm512_add_epi32(x, round), _mm512_and_si512(hi, one)), 16);
        const __mmask16 nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(x, abs_mask), inf);
        const __m512i v = _mm512_mask_or_epi32(r, nan, hi, quiet);
        if (m == 0xffff) _mm256_storeu_si256((__m256i *)(dst + j), _mm512_cvtepi32_epi16(v));
        else _mm512_mask_cvtepi32_storeu_epi16(dst + j, m, v);
    }
}

const gk_bf16_moves_t gk_bf16_moves_avx512 = {
    .pairs_kcontig = pairs_kcontig_avx512, .pairs_kmajor = pairs_kmajor_avx512, .rows_kcontig = rows_kcontig_avx512,
    .rows_subnormal = rows_subnormal_avx512, .f32_row_to_bf16 = f32_row_to_bf16_avx512,
};
#endif
