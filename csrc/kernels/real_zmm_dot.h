/* The AVX-512 dot path (kernel.h gk_dot_fn) for float and double, C = alpha A B^T + beta C with both operands
 * contiguous in k, in blocks of up to 4 x 4 sums reduced together; and few columns against a transposed A (gk_cols_fn). */
/* The including file defines T, V, VSUF, VL (16 floats or 8 doubles a vector), DOT_FN and COLS_FN, and includes
 * real_zmm_template.h first (VOP). This header gives real_dot_template.h its 4 x 4 blocks' reduction and store and
 * its short sums (few columns, k < VL: rows fill the lanes). */

#define ZD_MAX 4 /* rows and columns of a block */
#define ZD_CAT_(a, b) a##b
#define ZD_CAT(a, b) ZD_CAT_(a, b)
#define ZD_FN(name) ZD_CAT(DOT_FN, _##name)
#if defined(__GNUC__) /* (real_dot_template.h's DT_IN_REGISTER) */
#define ZD_IN_REGISTER(v) __asm__("" : "+v"(v))
#else
#define ZD_IN_REGISTER(v) ((void)0)
#endif

#if VL == 16
/* Lanes of the mm x nj sums in one vector: z[4 i + j] = sum of s[i][j] (s[i][j] for i >= mm or j >= nj are
 * zero). A tree of shuffles and adds (45 operations for the 16 sums, where one reduction each takes 8-9):
 * 128-bit halves of pairs, then quarters, then within the 128-bit lanes. */
static GK_FORCEINLINE __m512 ZD_FN(reduce)(__m512 s[ZD_MAX][ZD_MAX]) {
    __m512 w[8], x[4];
#pragma GCC unroll 8
    for (int p = 0; p < 8; p++) { /* v_{4c + l} = s[l][c]: pairs (v_2p, v_2p+1) */
        const __m512 a = s[(2 * p) % 4][(2 * p) / 4], b = s[(2 * p + 1) % 4][(2 * p + 1) / 4];
        w[p] = _mm512_add_ps(_mm512_shuffle_f32x4(a, b, 0x44), _mm512_shuffle_f32x4(a, b, 0xEE));
    }
#pragma GCC unroll 4
    for (int q = 0; q < 4; q++) /* lane l of x[q]: v_{4q + l}, 4 partial sums */
        x[q] = _mm512_add_ps(_mm512_shuffle_f32x4(w[2 * q], w[2 * q + 1], 0x88),
                             _mm512_shuffle_f32x4(w[2 * q], w[2 * q + 1], 0xDD));
    const __m512 y0 = _mm512_add_ps(_mm512_shuffle_ps(x[0], x[1], 0x44), _mm512_shuffle_ps(x[0], x[1], 0xEE));
    const __m512 y1 = _mm512_add_ps(_mm512_shuffle_ps(x[2], x[3], 0x44), _mm512_shuffle_ps(x[2], x[3], 0xEE));
    /* lane l: v_l, v_{4+l}, v_{8+l}, v_{12+l} = s[l][0..3] */
    return _mm512_add_ps(_mm512_shuffle_ps(y0, y1, 0x88), _mm512_shuffle_ps(y0, y1, 0xDD));
}

/* C[i][0:nj] from lane i of z (alpha and beta applied; beta == 0: C not read). */
#define ZD_STORE_ROW(i)                                                                                         \
    if ((i) < mm) {                                                                                             \
        T *c = C + (i) * ldc;                                                                                   \
        __m128 v = _mm_mul_ps(va, _mm512_extractf32x4_ps(z, (i)));                                             \
        if (beta != (T)0) v = _mm_fmadd_ps(vb, _mm_maskz_loadu_ps(cmask, c), v);                               \
        _mm_mask_storeu_ps(c, cmask, v);                                                                        \
    }
static GK_FORCEINLINE void ZD_FN(store)(const int mm, const int nj, __m512 s[ZD_MAX][ZD_MAX], T alpha, T beta,
                                        T *C, int64_t ldc) {
    const __m512 z = ZD_FN(reduce)(s);
    const __mmask8 cmask = (__mmask8)((1u << nj) - 1u);
    const __m128 va = _mm_set1_ps(alpha), vb = _mm_set1_ps(beta);
    ZD_STORE_ROW(0) ZD_STORE_ROW(1) ZD_STORE_ROW(2) ZD_STORE_ROW(3)
}
#else
/* Two columns' sums: z[2 i + j] = sum of s[i][c + j] (i < 4, j < 2), the same tree on 8-double vectors. */
static GK_FORCEINLINE __m512d ZD_FN(reduce)(__m512d s[ZD_MAX][ZD_MAX], const int c) {
    __m512d w[4];
#pragma GCC unroll 4
    for (int p = 0; p < 4; p++) { /* v_{4j + l} = s[l][c + j] */
        const __m512d a = s[(2 * p) % 4][c + (2 * p) / 4], b = s[(2 * p + 1) % 4][c + (2 * p + 1) / 4];
        w[p] = _mm512_add_pd(_mm512_shuffle_f64x2(a, b, 0x44), _mm512_shuffle_f64x2(a, b, 0xEE));
    }
    const __m512d x0 = _mm512_add_pd(_mm512_shuffle_f64x2(w[0], w[1], 0x88), _mm512_shuffle_f64x2(w[0], w[1], 0xDD));
    const __m512d x1 = _mm512_add_pd(_mm512_shuffle_f64x2(w[2], w[3], 0x88), _mm512_shuffle_f64x2(w[2], w[3], 0xDD));
    return _mm512_add_pd(_mm512_unpacklo_pd(x0, x1), _mm512_unpackhi_pd(x0, x1));
}

#define ZD_STORE_HALF(i, z, c0, mask)                                                                           \
    {                                                                                                           \
        T *c = C + (i) * ldc + (c0);                                                                            \
        __m128d v = _mm_mul_pd(va, _mm512_extractf64x2_pd((z), (i)));                                          \
        if (beta != (T)0) v = _mm_fmadd_pd(vb, _mm_maskz_loadu_pd((mask), c), v);                              \
        _mm_mask_storeu_pd(c, (mask), v);                                                                       \
    }
#define ZD_STORE_ROW(i)                                                                                         \
    if ((i) < mm) {                                                                                             \
        ZD_STORE_HALF(i, z01, 0, m01)                                                                           \
        if (nj > 2) ZD_STORE_HALF(i, z23, 2, m23)                                                               \
    }
static GK_FORCEINLINE void ZD_FN(store)(const int mm, const int nj, __m512d s[ZD_MAX][ZD_MAX], T alpha, T beta,
                                        T *C, int64_t ldc) {
    const __m512d z01 = ZD_FN(reduce)(s, 0);
    const __m512d z23 = nj > 2 ? ZD_FN(reduce)(s, 2) : z01;
    const __mmask8 m01 = (__mmask8)(nj >= 2 ? 3u : 1u), m23 = (__mmask8)(nj >= 4 ? 3u : 1u);
    const __m128d va = _mm_set1_pd(alpha), vb = _mm_set1_pd(beta);
    ZD_STORE_ROW(0) ZD_STORE_ROW(1) ZD_STORE_ROW(2) ZD_STORE_ROW(3)
}
#undef ZD_STORE_HALF
#endif
#undef ZD_STORE_ROW

/* Few columns and short sums (below, after the template, whose C tile store they share). */
static void ZD_FN(short_cols)(int64_t n, int64_t m, int64_t k, T alpha, const T *A, int64_t lda, const T *B,
                              int64_t ldb, T beta, T *C, int64_t ldc);

#define DT_ROWS ZD_MAX
#define DT_COLS ZD_MAX
#define DT_CV ZD_MAX
#if VL == 16
#define DT_MASK_T __mmask16
#else
#define DT_MASK_T __mmask8
#endif
#define DT_TAIL_MASK(n) ((DT_MASK_T)((n) >= VL ? ~0u : (1u << (n)) - 1u))
#define DT_MASKLOAD(mask, p) VOP(maskz_loadu)((mask), (p))
#define DT_IN_REGISTER(v) ZD_IN_REGISTER(v)
#define DT_STORE ZD_FN(store)
#define DT_SHORT_COLS ZD_FN(short_cols)
#include "real_dot_template.h"

/* Few columns and short sums (k < VL): VL rows of C at a time, A's k columns as vectors times a broadcast of op(B)'s
 * value each (a vector of one row's k values would be mostly empty; this fills every lane), C's columns as vectors:
 *  - dense A (lda == k <= ZD_SPLIT_MAX): the VL rows' k vectors loaded whole and split into columns in registers,
 *    each from pairs of vectors (two-source permutes, lanes merged by masks); else each column gathered (a gather
 *    runs at a fraction of that rate; see docs/decisions.md, ZD_SPLIT_MAX);
 *  - dense C (ldc == n): the n column vectors merged into C's rows the same way and stored whole; else a tile. */
#define ZD_SPLIT_MAX 8
#if VL == 16
typedef int32_t ZD_FN(it);
#define ZD_MASK __mmask16
#define ZD_GATHER(mask, idx, base) _mm512_mask_i32gather_ps(_mm512_setzero_ps(), (mask), (idx), (base), 4)
#define ZD_PERMUTE2(a, idx, b) _mm512_permutex2var_ps((a), _mm512_load_si512((const void *)(idx)), (b))
#define ZD_ROW_INDEX(lda) _mm512_mullo_epi32(_mm512_set_epi32(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0), \
                                             _mm512_set1_epi32((int)(lda)))
#define ZD_IDX __m512i
#else
typedef int64_t ZD_FN(it);
#define ZD_MASK __mmask8
#define ZD_GATHER(mask, idx, base) _mm512_mask_i32gather_pd(_mm512_setzero_pd(), (mask), (idx), (base), 8)
#define ZD_PERMUTE2(a, idx, b) _mm512_permutex2var_pd((a), _mm512_load_si512((const void *)(idx)), (b))
#define ZD_ROW_INDEX(lda) _mm256_mullo_epi32(_mm256_set_epi32(7, 6, 5, 4, 3, 2, 1, 0), _mm256_set1_epi32((int)(lda)))
#define ZD_IDX __m256i
#endif
/* A permutation from a list of vectors: lane t of the result is value g of the list, taken from pair g / 2VL (vectors
 * 2p and 2p + 1) at index g % 2VL; mask[p]: the lanes taken from pair p. */
typedef struct {
    GK_ALIGN64 ZD_FN(it) idx[ZD_SPLIT_MAX / 2][VL];
    ZD_MASK mask[ZD_SPLIT_MAX / 2];
} ZD_FN(perm_t);

static void ZD_FN(perm_lane)(ZD_FN(perm_t) *pm, int t, int g) {
    pm->idx[g / (2 * VL)][t] = g % (2 * VL);
    pm->mask[g / (2 * VL)] |= (ZD_MASK)(1u << t);
}

/* The result of permutation pm over the vectors v[0..nv) (v[nv] a copy of v[nv - 1]), nv constant. */
static GK_FORCEINLINE V ZD_FN(permute)(const int nv, const V *v, const ZD_FN(perm_t) *pm) {
    if (nv == 1) return ZD_PERMUTE2(v[0], pm->idx[0], v[0]);
    V r = ZD_PERMUTE2(v[0], pm->idx[0], v[1]);
#pragma GCC unroll 4
    for (int p = 1; p < (nv + 1) / 2; p++)
        r = VOP(mask_mov)(r, pm->mask[p], ZD_PERMUTE2(v[2 * p], pm->idx[p], v[2 * p + 1]));
    return r;
}

static GK_FORCEINLINE void ZD_FN(short_cols_k)(const int nj, const int kk, int64_t m, T alpha, const T *A,
                                               int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
    ZD_FN(perm_t) split[ZD_SPLIT_MAX], merge[ZD_MAX];
    const int dense_a = kk <= ZD_SPLIT_MAX && lda == kk, dense_c = ldc == nj;
    memset(split, 0, sizeof(split));
    memset(merge, 0, sizeof(merge));
    for (int t = 0; t < VL; t++) {
        if (dense_a)
            for (int l = 0; l < kk; l++) ZD_FN(perm_lane)(&split[l], t, t * kk + l); /* column l: A[t][l] */
        for (int q = 0; q < (dense_c ? nj : 0); q++) { /* C's values q VL + t: row f / nj, column f % nj */
            const int f = q * VL + t;
            ZD_FN(perm_lane)(&merge[q], t, (f % nj) * VL + f / nj);
        }
    }
    const ZD_IDX rows = ZD_ROW_INDEX(lda);
    const V va = VOP(set1)(alpha), vb = VOP(set1)(beta);
    for (int64_t i = 0; i < m; i += VL) {
        const int64_t mb = GK_MIN((int64_t)VL, m - i);
        const T *a = A + i * lda;
        V s[ZD_MAX + 1];
#pragma GCC unroll 4
        for (int j = 0; j < ZD_MAX; j++) s[j] = VOP(setzero)();
        V v[ZD_SPLIT_MAX + 1];
        if (dense_a) {
#pragma GCC unroll 8
            for (int q = 0; q < kk && q < ZD_SPLIT_MAX; q++) {
                const int64_t left = mb * kk - (int64_t)q * VL;
                v[q] = left >= VL ? VOP(loadu)(a + q * VL)
                                  : VOP(maskz_loadu)((ZD_MASK)(left > 0 ? (1u << left) - 1u : 0u), a + q * VL);
            }
            v[kk < ZD_SPLIT_MAX ? kk : ZD_SPLIT_MAX] = v[(kk < ZD_SPLIT_MAX ? kk : ZD_SPLIT_MAX) - 1];
        }
#if VL == 16
        if (nj == 1 && kk == 8 && dense_a) { /* one column of 8 terms: each row half a vector, summed by halves */
            const __m512 xp = _mm512_broadcast_f32x8(_mm256_loadu_ps(B));
            __m512 x[4]; /* 128-bit lane l of x[q]: row 4q + l, 4 partial sums */
#pragma GCC unroll 4
            for (int q = 0; q < 4; q++) {
                const __m512 a0 = _mm512_mul_ps(v[2 * q], xp), a1 = _mm512_mul_ps(v[2 * q + 1], xp);
                x[q] = _mm512_add_ps(_mm512_shuffle_f32x4(a0, a1, 0x88), _mm512_shuffle_f32x4(a0, a1, 0xDD));
            }
            const __m512 y0 = _mm512_add_ps(_mm512_shuffle_ps(x[0], x[1], 0x44), _mm512_shuffle_ps(x[0], x[1], 0xEE));
            const __m512 y1 = _mm512_add_ps(_mm512_shuffle_ps(x[2], x[3], 0x44), _mm512_shuffle_ps(x[2], x[3], 0xEE));
            const __m512 z = _mm512_add_ps(_mm512_shuffle_ps(y0, y1, 0x88), _mm512_shuffle_ps(y0, y1, 0xDD));
            /* z[4 l + c] = row 4c + l: back to row order */
            s[0] = _mm512_permutexvar_ps(_mm512_set_epi32(15, 11, 7, 3, 14, 10, 6, 2, 13, 9, 5, 1, 12, 8, 4, 0), z);
        } else
#endif
#pragma GCC unroll 16
        for (int l = 0; l < kk; l++) {
            const V av = dense_a ? ZD_FN(permute)(kk, v, &split[l])
                                 : ZD_GATHER((ZD_MASK)(mb >= VL ? ~0u : (1u << mb) - 1u), rows, a + l);
#pragma GCC unroll 4
            for (int j = 0; j < nj; j++) s[j] = VOP(fmadd)(av, VOP(set1)(B[j * ldb + l]), s[j]);
        }
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) s[j] = VOP(mul)(va, s[j]);
        s[nj] = s[nj - 1];
        if (dense_c) {
            T *c = C + i * ldc;
#pragma GCC unroll 4
            for (int q = 0; q < nj; q++) {
                const int64_t left = mb * nj - (int64_t)q * VL;
                if (left <= 0) break;
                const ZD_MASK cm = (ZD_MASK)(left >= VL ? ~0u : (1u << left) - 1u);
                V o = ZD_FN(permute)(nj, s, &merge[q]);
                if (beta != (T)0) o = VOP(fmadd)(vb, VOP(maskz_loadu)(cm, c + q * VL), o);
                VOP(mask_storeu)(c + q * VL, cm, o);
            }
        } else {
            GK_ALIGN64 T t[ZD_MAX][VL]; /* t[j][r] = C[i + r][j] */
#pragma GCC unroll 4
            for (int j = 0; j < nj; j++) VOP(store)(t[j], s[j]);
            ZD_FN(dt_tile_to_c)(nj, mb, t[0], VL, beta, C + i * ldc, ldc);
        }
    }
}

#define ZD_SHORT_K(nj, kk)                                                                                      \
    case kk:                                                                                                    \
        ZD_FN(short_cols_k)(nj, kk, m, alpha, A, lda, B, ldb, beta, C, ldc);                                    \
        break;
#if VL == 16
#define ZD_SHORT_KS(nj)                                                                                         \
    ZD_SHORT_K(nj, 1) ZD_SHORT_K(nj, 2) ZD_SHORT_K(nj, 3) ZD_SHORT_K(nj, 4) ZD_SHORT_K(nj, 5) ZD_SHORT_K(nj, 6)      \
    ZD_SHORT_K(nj, 7) ZD_SHORT_K(nj, 8) ZD_SHORT_K(nj, 9) ZD_SHORT_K(nj, 10) ZD_SHORT_K(nj, 11) ZD_SHORT_K(nj, 12)   \
    ZD_SHORT_K(nj, 13) ZD_SHORT_K(nj, 14) ZD_SHORT_K(nj, 15)
#else
#define ZD_SHORT_KS(nj)                                                                                         \
    ZD_SHORT_K(nj, 1) ZD_SHORT_K(nj, 2) ZD_SHORT_K(nj, 3) ZD_SHORT_K(nj, 4) ZD_SHORT_K(nj, 5) ZD_SHORT_K(nj, 6)      \
    ZD_SHORT_K(nj, 7)
#endif
#define ZD_SHORT_N(nj)                                                                                          \
    case nj:                                                                                                    \
        switch (k) { ZD_SHORT_KS(nj) }                                                                          \
        break;
static void ZD_FN(short_cols)(int64_t n, int64_t m, int64_t k, T alpha, const T *A, int64_t lda, const T *B,
                              int64_t ldb, T beta, T *C, int64_t ldc) {
    switch (n) { ZD_SHORT_N(1) ZD_SHORT_N(2) ZD_SHORT_N(3) ZD_SHORT_N(4) }
}
#undef ZD_SHORT_N
#undef ZD_SHORT_KS
#undef ZD_SHORT_K
#undef ZD_IDX
#undef ZD_MASK
#undef ZD_GATHER
#undef ZD_ROW_INDEX
#undef ZD_PERMUTE2
#undef ZD_SPLIT_MAX
#undef ZD_FN
#undef ZD_CAT
#undef ZD_CAT_
#undef ZD_MAX
#undef ZD_IN_REGISTER
