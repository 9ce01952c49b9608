/* A few rows of x against a bfloat16 W on AVX512_BF16's vdpbf16ps, W read as it lies: x W^T (`pair_dots`: both along
 * k) and x W (`pair_rows`: W's rows paired); float sums, a block of W or a pass of x with a subnormal runs exact. */
#include "../kernel.h"
#if GEMMKIT_X86 && defined(GEMMKIT_HAVE_AVX512_BF16)
#include <immintrin.h>
#include <string.h>
#include "bf16_zmm_store.h"

#define DT_MM 8     /* rows of x per register tile: 8 x 3 sums, 3 vectors of W, 1 of x */
#define DT_JJ 3     /* rows of W per register tile */
#define DT_MAX_M 16 /* rows of x per pass over W */
#define DT_JB 6     /* rows of W per block: the chunk of x serves them from L1, each row read in long runs */
#define DT_KC 1024  /* values of k per chunk: x's chunk of a pass (up to 32 KiB), the block's rows (12 KiB), sums */

/* The lanes (32 values) of a k step below k - p: all, or a tail's mask (an odd K's last pair half read). */
static GK_FORCEINLINE __mmask32 step_mask(int64_t left) {
    return left >= 32 ? (__mmask32)0xffffffffu : (__mmask32)((1u << left) - 1u);
}

/* Any subnormal among rows rows x kc values at X (rows ld apart). */
static int any_subnormal(int rows, int64_t kc, const uint16_t *X, int64_t ld) {
    __mmask32 any = 0;
    for (int r = 0; r < rows; r++) {
        const uint16_t *row = X + r * ld;
        for (int64_t p = 0; p < kc; p += 32)
            any |= bf16_subnormal_lanes(_mm512_maskz_loadu_epi16(step_mask(kc - p), row + p));
    }
    return any != 0;
}

/* The next block of S requested into L2 while this one computes, in its memory order (row after row), a share of its
 * lines per chunk: one long run that memory and the prefetchers stream at their rate, where the block's own rows read
 * side by side would be 12 short ones. */
typedef struct {
    const uint16_t *row; /* the next block's row being requested */
    int64_t rows_left, p, k, lds, per_chunk;
} ahead_t;

static void ahead_start(ahead_t *a, const uint16_t *next, int64_t rows, int64_t k, int64_t lds) {
    a->row = next;
    a->rows_left = rows;
    a->p = 0;
    a->k = k;
    a->lds = lds;
    const int64_t lines = rows * ((k + 31) / 32), chunks = (k + DT_KC - 1) / DT_KC;
    a->per_chunk = (lines + chunks - 1) / chunks;
}

static void ahead_step(ahead_t *a) {
    for (int64_t n = a->per_chunk; n > 0 && a->rows_left > 0; n--) {
        GK_PREFETCH_L2(a->row + a->p);
        a->p += 32;
        if (a->p >= a->k) {
            a->p = 0;
            a->row += a->lds;
            a->rows_left--;
        }
    }
}

/* One k step's exact sums: the pairs' values widened to float (a bfloat16 is a float's upper half), two FMAs. */
static GK_FORCEINLINE __m512 dot_exact(__m512 acc, __m512i x, __m512i s) {
    const __m512i hi = _mm512_set1_epi32((int)0xffff0000u);
    acc = _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_slli_epi32(x, 16)), _mm512_castsi512_ps(_mm512_slli_epi32(s, 16)),
                          acc);
    return _mm512_fmadd_ps(_mm512_castsi512_ps(_mm512_and_si512(x, hi)), _mm512_castsi512_ps(_mm512_and_si512(s, hi)),
                           acc);
}

/* One k step of a tile: jj vectors of S (tested for subnormals into *any when check), each row of x against them;
 * masked: a tail's step, its lanes under m (a masked load issues at a fraction of a plain one's rate). */
static GK_FORCEINLINE void tile_step(const int mm, const int jj, const int check, const int masked, __mmask32 m,
                                     const uint16_t *x, int64_t ldx, const uint16_t *S, int64_t lds,
                                     __m512 a[DT_MM][DT_JJ], __mmask32 *any) {
    __m512bh s[DT_JJ];
#pragma GCC unroll 3
    for (int q = 0; q < jj; q++) {
        const __m512i v = masked ? _mm512_maskz_loadu_epi16(m, S + q * lds) : _mm512_loadu_si512(S + q * lds);
        if (check) *any |= bf16_subnormal_lanes(v);
        s[q] = (__m512bh)v;
    }
#pragma GCC unroll 8
    for (int i = 0; i < mm; i++) {
        const __m512i v = masked ? _mm512_maskz_loadu_epi16(m, x + i * ldx) : _mm512_loadu_si512(x + i * ldx);
#pragma GCC unroll 3
        for (int q = 0; q < jj; q++) a[i][q] = _mm512_dpbf16_ps(a[i][q], (__m512bh)v, s[q]);
    }
}

/* sums[i * DT_JB + q] += x[i][0:kc] . S[q][0:kc] (16 lanes of pair sums each) for mm rows of x, jj rows of S;
 * check: S's values tested as they are loaded, and on a subnormal the sums left as they were (returns 1). */
static GK_FORCEINLINE int tile(const int mm, const int jj, const int check, int64_t kc, const uint16_t *x,
                               int64_t ldx, const uint16_t *S, int64_t lds, __m512 *sums) {
    __m512 a[DT_MM][DT_JJ];
#pragma GCC unroll 8
    for (int i = 0; i < mm; i++)
#pragma GCC unroll 3
        for (int q = 0; q < jj; q++) a[i][q] = sums[i * DT_JB + q];
    __mmask32 any = 0;
    int64_t p = 0;
    for (; p + 32 <= kc; p += 32) tile_step(mm, jj, check, 0, 0, x + p, ldx, S + p, lds, a, &any);
    if (p < kc) tile_step(mm, jj, check, 1, step_mask(kc - p), x + p, ldx, S + p, lds, a, &any);
    if (check && any) return 1;
#pragma GCC unroll 8
    for (int i = 0; i < mm; i++)
#pragma GCC unroll 3
        for (int q = 0; q < jj; q++) sums[i * DT_JB + q] = a[i][q];
    return 0;
}

static int tile_any(int mm, int jj, int check, int64_t kc, const uint16_t *x, int64_t ldx, const uint16_t *S,
                    int64_t lds, __m512 *sums) {
#define DT_CASE(R)                                                                                     \
    case R:                                                                                            \
        if (check) return jj == 3 ? tile(R, 3, 1, kc, x, ldx, S, lds, sums)                           \
                          : jj == 2 ? tile(R, 2, 1, kc, x, ldx, S, lds, sums)                          \
                                    : tile(R, 1, 1, kc, x, ldx, S, lds, sums);                         \
        return jj == 3 ? tile(R, 3, 0, kc, x, ldx, S, lds, sums)                                       \
               : jj == 2 ? tile(R, 2, 0, kc, x, ldx, S, lds, sums)                                      \
                         : tile(R, 1, 0, kc, x, ldx, S, lds, sums);
    switch (mm) {
        DT_CASE(1) DT_CASE(2) DT_CASE(3) DT_CASE(4) DT_CASE(5) DT_CASE(6) DT_CASE(7) DT_CASE(8)
        default: return 0;
    }
#undef DT_CASE
}

/* The same sums for mb rows of x against jb rows of S with every value widened exactly (subnormals honoured). */
static void block_exact(int mb, int jb, int64_t kc, const uint16_t *x, int64_t ldx, const uint16_t *S, int64_t lds,
                        __m512 *sums) {
    for (int i = 0; i < mb; i++)
        for (int q = 0; q < jb; q++) {
            __m512 a = sums[i * DT_JB + q];
            for (int64_t p = 0; p < kc; p += 32) {
                const __mmask32 m = step_mask(kc - p);
                a = dot_exact(a, _mm512_maskz_loadu_epi16(m, x + i * ldx + p),
                              _mm512_maskz_loadu_epi16(m, S + q * lds + p));
            }
            sums[i * DT_JB + q] = a;
        }
}

/* y[i][j] = alpha x[i] . S[j] + beta y[i][j] (beta 0: y not read) for m rows of x (k bfloat16 values, ldx apart)
 * and n rows of S (lds apart); pf > 0: S's next block requested ahead (ahead_t). */
void gk_bf16_dots_avx512(int64_t m, int64_t n, int64_t k, const void *alpha_p, const void *xv, int64_t ldx,
                         const void *Sv, int64_t lds, const void *beta_p, void *yv, int64_t rsy, int64_t csy,
                         int64_t pf) {
    const uint16_t *x = (const uint16_t *)xv, *S = (const uint16_t *)Sv;
    float *y = (float *)yv;
    const float alpha = *(const float *)alpha_p, beta = *(const float *)beta_p;
    __m512 sums[DT_MAX_M * DT_JB];
    for (int64_t i0 = 0; i0 < m; i0 += DT_MAX_M) {
        const int mb = (int)GK_MIN((int64_t)DT_MAX_M, m - i0);
        const int ng = (mb + DT_MM - 1) / DT_MM;
        const uint16_t *xb = x + i0 * ldx;
        const int x_exact = any_subnormal(mb, k, xb, ldx);
        for (int64_t j0 = 0; j0 < n; j0 += DT_JB) {
            const int jb = (int)GK_MIN((int64_t)DT_JB, n - j0);
            const uint16_t *Sb = S + j0 * lds;
            ahead_t ahead;
            ahead_start(&ahead, Sb + jb * lds, pf > 0 ? GK_MIN((int64_t)DT_JB, n - j0 - jb) : 0, k, lds);
            for (int e = 0; e < mb * DT_JB; e++) sums[e] = _mm512_setzero_ps();
            for (int64_t p0 = 0; p0 < k; p0 += DT_KC) {
                const int64_t kc = GK_MIN((int64_t)DT_KC, k - p0);
                ahead_step(&ahead);
                if (x_exact) {
                    block_exact(mb, jb, kc, xb + p0, ldx, Sb + p0, lds, sums);
                    continue;
                }
                /* the first group's tiles test S as they read it; a triple of rows with a subnormal runs exact */
                for (int q = 0; q < jb; q += DT_JJ) {
                    const int jj = (int)GK_MIN(DT_JJ, jb - q);
                    const int r1 = mb / ng;
                    if (tile_any(r1, jj, 1, kc, xb + p0, ldx, Sb + q * lds + p0, lds, sums + q)) {
                        block_exact(mb, jj, kc, xb + p0, ldx, Sb + q * lds + p0, lds, sums + q);
                        continue;
                    }
                    for (int g = 1; g < ng; g++) {
                        const int r0 = g * mb / ng, mm = (g + 1) * mb / ng - r0;
                        tile_any(mm, jj, 0, kc, xb + r0 * ldx + p0, ldx, Sb + q * lds + p0, lds, sums + r0 * DT_JB + q);
                    }
                }
            }
            for (int i = 0; i < mb; i++)
                for (int q = 0; q < jb; q++) {
                    const float t = alpha * _mm512_reduce_add_ps(sums[i * DT_JB + q]);
                    float *yq = y + (i0 + i) * rsy + (j0 + q) * csy;
                    *yq = beta == 0.0f ? t : t + beta * *yq;
                }
        }
    }
}

/* ---- x W: the rows of a plain W in pairs (`pair_rows`) --------------------------------------------------------- */

#define RW_MM 6      /* rows of x per register tile: 6 x 4 sums (64 columns), 4 vectors of W's pairs, 1 of x */
#define RW_NV 2      /* 32-column strips per tile */
#define RW_KP 16     /* pairs of k per visit of a strip: its 32 rows x 128 bytes stay in L1 for every group */
#define RW_NB 1024   /* columns per block: a pass's sums (16 rows) in L2 */

/* Rows s0 and s1 (s1 NULL: zero, an odd K's last row) over 32 columns as pairs: lo holds columns 0-3, 8-11, 16-19,
 * 24-27 (each 128-bit lane's first four), hi the others; their values tested for subnormals into *any. */
static GK_FORCEINLINE void row_pairs32(const uint16_t *s0, const uint16_t *s1, const int masked, __mmask32 m,
                                       const int check, __mmask32 *any, __m512i *lo, __m512i *hi) {
    const __m512i r0 = masked ? _mm512_maskz_loadu_epi16(m, s0) : _mm512_loadu_si512(s0);
    const __m512i r1 = !s1 ? _mm512_setzero_si512() : masked ? _mm512_maskz_loadu_epi16(m, s1) : _mm512_loadu_si512(s1);
    if (check) *any |= bf16_subnormal_lanes(r0) | bf16_subnormal_lanes(r1);
    *lo = _mm512_unpacklo_epi16(r0, r1);
    *hi = _mm512_unpackhi_epi16(r0, r1);
}

/* sums (rows ld floats apart, each 32-column strip as lo then hi) += x[i][2 q0 .. 2 (q0 + kp)) W[same rows][strips]
 * for mm rows of x and nv strips (the last one under m when masked); last: the last pair is K's odd value alone.
 * check: W tested, and on a subnormal the sums left as they were (returns 1); exact: every value widened. */
static GK_FORCEINLINE int rows_tile(const int mm, const int nv, const int masked, const int check, const int exact,
                                    __mmask32 m, int64_t kp, int last, const uint16_t *x, int64_t ldx,
                                    const uint16_t *S, int64_t lds, float *sums, int64_t ld) {
    __m512 a[RW_MM][2 * RW_NV];
#pragma GCC unroll 6
    for (int i = 0; i < mm; i++)
#pragma GCC unroll 4
        for (int v = 0; v < 2 * nv; v++) a[i][v] = _mm512_loadu_ps(sums + i * ld + 16 * v);
    __mmask32 any = 0;
    for (int64_t p = 0; p < kp; p++) {
        const int odd = last && p == kp - 1;
        const uint16_t *s0 = S + 2 * p * lds;
        __m512i w[2 * RW_NV];
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++)
            row_pairs32(s0 + 32 * v, odd ? NULL : s0 + lds + 32 * v, masked && v == nv - 1, m, check, &any, &w[2 * v],
                        &w[2 * v + 1]);
#pragma GCC unroll 6
        for (int i = 0; i < mm; i++) {
            uint32_t pair;
            memcpy(&pair, x + i * ldx + 2 * p, 4);
            if (odd) pair &= 0xffffu; /* past K: not read as a value */
            const __m512i xp = _mm512_set1_epi32((int)pair);
#pragma GCC unroll 4
            for (int v = 0; v < 2 * nv; v++)
                a[i][v] = exact ? dot_exact(a[i][v], xp, w[v]) : _mm512_dpbf16_ps(a[i][v], (__m512bh)xp, (__m512bh)w[v]);
        }
    }
    if (check && any) return 1;
#pragma GCC unroll 6
    for (int i = 0; i < mm; i++)
#pragma GCC unroll 4
        for (int v = 0; v < 2 * nv; v++) _mm512_storeu_ps(sums + i * ld + 16 * v, a[i][v]);
    return 0;
}

static int rows_tile_any(int mm, int nv, int masked, int check, __mmask32 m, int64_t kp, int last, const uint16_t *x,
                         int64_t ldx, const uint16_t *S, int64_t lds, float *sums, int64_t ld) {
#define RW_CASE(R)                                                                                             \
    case R:                                                                                                    \
        if (nv == 2) return check ? rows_tile(R, 2, 0, 1, 0, m, kp, last, x, ldx, S, lds, sums, ld)           \
                                  : rows_tile(R, 2, 0, 0, 0, m, kp, last, x, ldx, S, lds, sums, ld);          \
        if (masked) return check ? rows_tile(R, 1, 1, 1, 0, m, kp, last, x, ldx, S, lds, sums, ld)            \
                                 : rows_tile(R, 1, 1, 0, 0, m, kp, last, x, ldx, S, lds, sums, ld);           \
        return check ? rows_tile(R, 1, 0, 1, 0, m, kp, last, x, ldx, S, lds, sums, ld)                        \
                     : rows_tile(R, 1, 0, 0, 0, m, kp, last, x, ldx, S, lds, sums, ld);
    switch (mm) {
        RW_CASE(1) RW_CASE(2) RW_CASE(3) RW_CASE(4) RW_CASE(5) RW_CASE(6)
        default: return 0;
    }
#undef RW_CASE
}

/* The same sums with every value widened exactly (subnormals honoured), a row of x at a time. */
static void rows_exact(int mb, int nv, int masked, __mmask32 m, int64_t kp, int last, const uint16_t *x, int64_t ldx,
                       const uint16_t *S, int64_t lds, float *sums, int64_t ld) {
    for (int i = 0; i < mb; i++) {
        if (nv == 2) rows_tile(1, 2, 0, 0, 1, m, kp, last, x + i * ldx, ldx, S, lds, sums + i * ld, ld);
        else if (masked) rows_tile(1, 1, 1, 0, 1, m, kp, last, x + i * ldx, ldx, S, lds, sums + i * ld, ld);
        else rows_tile(1, 1, 0, 0, 1, m, kp, last, x + i * ldx, ldx, S, lds, sums + i * ld, ld);
    }
}

/* y[i][j] = alpha sum_l x[i][l] S[l][j] + beta y[i][j] (beta 0: y not read) for m rows of x (k bfloat16 values, ldx
 * apart) and S's k rows of n values (lds apart); pf unused (the rows of a strip are read in runs of 128 bytes). */
void gk_bf16_rows_avx512(int64_t m, int64_t n, int64_t k, const void *alpha_p, const void *xv, int64_t ldx,
                         const void *Sv, int64_t lds, const void *beta_p, void *yv, int64_t rsy, int64_t csy,
                         int64_t pf) {
    const uint16_t *x = (const uint16_t *)xv, *S = (const uint16_t *)Sv;
    float *y = (float *)yv;
    const float alpha = *(const float *)alpha_p, beta = *(const float *)beta_p;
    const int64_t kp_all = (k + 1) / 2;
    GK_ALIGN64 float sums[DT_MAX_M * RW_NB];
    /* lo / hi of a strip back to columns 0-15 and 16-31 */
    const __m512i idx0 = _mm512_setr_epi32(0, 1, 2, 3, 16, 17, 18, 19, 4, 5, 6, 7, 20, 21, 22, 23);
    const __m512i idx1 = _mm512_setr_epi32(8, 9, 10, 11, 24, 25, 26, 27, 12, 13, 14, 15, 28, 29, 30, 31);
    (void)pf;
    for (int64_t i0 = 0; i0 < m; i0 += DT_MAX_M) {
        const int mb = (int)GK_MIN((int64_t)DT_MAX_M, m - i0);
        const int ng = (mb + RW_MM - 1) / RW_MM;
        const uint16_t *xb = x + i0 * ldx;
        const int x_exact = any_subnormal(mb, k, xb, ldx);
        for (int64_t j0 = 0; j0 < n; j0 += RW_NB) {
            const int64_t nb = GK_MIN((int64_t)RW_NB, n - j0), ld = (nb + 31) / 32 * 32;
            memset(sums, 0, sizeof(float) * (size_t)(mb * ld));
            for (int64_t q0 = 0; q0 < kp_all; q0 += RW_KP) {
                const int64_t kp = GK_MIN((int64_t)RW_KP, kp_all - q0);
                const int last = q0 + kp == kp_all && (k & 1);
                const uint16_t *Sq = S + 2 * q0 * lds + j0;
                for (int64_t c = 0; c < nb; c += 32 * RW_NV) {
                    const int64_t w = GK_MIN((int64_t)(32 * RW_NV), nb - c);
                    /* two whole strips, else one strip at a time (the row's last one masked) */
                    for (int64_t c1 = c; c1 < c + w;) {
                        const int nv = c + w - c1 >= 64 ? 2 : 1, masked = c + w - c1 < 32;
                        const __mmask32 mk = masked ? (__mmask32)((1u << (c + w - c1)) - 1u) : ~(__mmask32)0;
                        float *sc = sums + c1;
                        const uint16_t *xq = xb + 2 * q0;
                        if (x_exact || rows_tile_any(mb / ng, nv, masked, 1, mk, kp, last, xq, ldx, Sq + c1, lds, sc,
                                                     ld)) {
                            rows_exact(mb, nv, masked, mk, kp, last, xq, ldx, Sq + c1, lds, sc, ld);
                        } else {
                            for (int g = 1; g < ng; g++) {
                                const int r0 = g * mb / ng, mm = (g + 1) * mb / ng - r0;
                                rows_tile_any(mm, nv, masked, 0, mk, kp, last, xq + r0 * ldx, ldx, Sq + c1, lds,
                                              sc + r0 * ld, ld);
                            }
                        }
                        c1 += 32 * nv;
                    }
                }
            }
            for (int i = 0; i < mb; i++)
                for (int64_t c = 0; c < nb; c += 32) {
                    GK_ALIGN64 float t[32];
                    const __m512 lo = _mm512_loadu_ps(sums + i * ld + c), hi = _mm512_loadu_ps(sums + i * ld + c + 16);
                    _mm512_store_ps(t, _mm512_permutex2var_ps(lo, idx0, hi));
                    _mm512_store_ps(t + 16, _mm512_permutex2var_ps(lo, idx1, hi));
                    for (int64_t j = 0; j < GK_MIN((int64_t)32, nb - c); j++) {
                        float *yq = y + (i0 + i) * rsy + (j0 + c + j) * csy;
                        *yq = beta == 0.0f ? alpha * t[j] : alpha * t[j] + beta * *yq;
                    }
                }
        }
    }
}
#endif
