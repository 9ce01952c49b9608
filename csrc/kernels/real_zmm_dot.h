/* The AVX-512 dot path (kernel.h gk_dot_fn) for float and double, C = alpha A B^T + beta C with both operands contiguous
 * in k in blocks of up to 4 x 4 sums reduced together; and few columns of C against a transposed A (gk_cols_fn). */
/* The including file defines T, V, VSUF, VL (16 floats or 8 doubles a vector), DOT_FN and COLS_FN, and includes
 * real_zmm_template.h first (VOP). Two walks over C:
 *  - few columns (n <= 4: op(B)'s columns, gathered or a B^T in place, against many rows of A): row blocks of 4
 *    outer, every column at once, so A streams once;
 *  - otherwise (few rows of A against a long B^T): column blocks of 4 outer, row blocks of 4 inner, so B streams
 *    once and A's rows (few) stay in L1. */

#define ZD_MAX 4 /* rows and columns of a block */
#define ZD_CAT_(a, b) a##b
#define ZD_CAT(a, b) ZD_CAT_(a, b)
#define ZD_FN(name) ZD_CAT(DOT_FN, _##name)
/* A loaded vector kept in a register: GCC otherwise folds the load into each of its FMAs (A's 4 rows loaded 3 times
 * a step in a 4 x 3 block: 19 loads for 12 FMAs) */
#if defined(__GNUC__)
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

/* C[0:mm][0:nj] = alpha A[0:mm] . B[0:nj] + beta C, sums along k, VL values at a time (a masked tail); the
 * operand named by `pf` (A's rows or B's rows, the one streamed from memory) is prefetched 16 vectors ahead. */
static GK_FORCEINLINE void ZD_FN(block)(const int mm, const int nj, int64_t k, T alpha, const T *A, int64_t lda,
                                        const T *B, int64_t ldb, T beta, T *C, int64_t ldc, const int pf_b) {
    V s[ZD_MAX][ZD_MAX];
#pragma GCC unroll 4
    for (int i = 0; i < ZD_MAX; i++)
#pragma GCC unroll 4
        for (int j = 0; j < ZD_MAX; j++) s[i][j] = VOP(setzero)();
    int64_t p = 0;
    for (; p + VL <= k; p += VL) {
        V bv[ZD_MAX], av[ZD_MAX];
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) {
            bv[j] = VOP(loadu)(B + j * ldb + p);
            ZD_IN_REGISTER(bv[j]);
            if (pf_b) _mm_prefetch((const char *)(B + j * ldb + p + 16 * VL), _MM_HINT_T0);
        }
#pragma GCC unroll 4
        for (int i = 0; i < mm; i++) {
            av[i] = VOP(loadu)(A + i * lda + p);
            ZD_IN_REGISTER(av[i]);
            if (!pf_b) _mm_prefetch((const char *)(A + i * lda + p + 16 * VL), _MM_HINT_T0);
        }
#pragma GCC unroll 4
        for (int i = 0; i < mm; i++)
#pragma GCC unroll 4
            for (int j = 0; j < nj; j++) s[i][j] = VOP(fmadd)(av[i], bv[j], s[i][j]);
    }
    if (p < k) {
#if VL == 16
        const __mmask16 mask = (__mmask16)((1u << (k - p)) - 1u);
#else
        const __mmask8 mask = (__mmask8)((1u << (k - p)) - 1u);
#endif
        V bv[ZD_MAX], av[ZD_MAX];
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) bv[j] = VOP(maskz_loadu)(mask, B + j * ldb + p);
#pragma GCC unroll 4
        for (int i = 0; i < mm; i++) av[i] = VOP(maskz_loadu)(mask, A + i * lda + p);
#pragma GCC unroll 4
        for (int i = 0; i < mm; i++)
#pragma GCC unroll 4
            for (int j = 0; j < nj; j++) s[i][j] = VOP(fmadd)(av[i], bv[j], s[i][j]);
    }
    ZD_FN(store)(mm, nj, s, alpha, beta, C, ldc);
}

/* Few columns and short sums (k < VL): VL rows of C at a time, A's k columns as vectors times a broadcast of op(B)'s
 * value each (a vector of one row's k values would be mostly empty; this fills every lane), C's columns as vectors:
 *  - dense A (lda == k <= ZD_SPLIT_MAX): the VL rows' k vectors loaded whole and split into columns in registers,
 *    each from pairs of vectors (two-source permutes, lanes merged by masks); else each column gathered (a gather
 *    runs at a fraction of that rate: Zen 4, float32 10000 x 2 x 2, 0.86x NumPy by gathers, 1.40 split);
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
/* A permutation from a list of vectors: lane t of the result is value g of the list (g < 2 VL pairs... ): pair g / 2VL,
 * index g % 2VL there; mask[p]: the lanes taken from pair p. */
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
    for (int p = 1; p < (nv + 1) / 2; p++) r = VOP(mask_mov)(r, pm->mask[p], ZD_PERMUTE2(v[2 * p], pm->idx[p], v[2 * p + 1]));
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
        for (int q = 0; q < nj; q++) { /* C's values q VL + t: row f / nj, column f % nj */
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
            for (int64_t r = 0; r < mb; r++) {
                T *c = C + (i + r) * ldc;
                if (beta == (T)0)
                    for (int j = 0; j < nj; j++) c[j] = t[j][r];
                else
                    for (int j = 0; j < nj; j++) c[j] = t[j][r] + beta * c[j];
            }
        }
    }
}

#define ZD_SHORT_K(kk)                                                                                          \
    case kk:                                                                                                    \
        ZD_FN(short_cols_k)(nj, kk, m, alpha, A, lda, B, ldb, beta, C, ldc);                                    \
        break;
static GK_FORCEINLINE void ZD_FN(short_cols)(const int nj, int64_t m, int64_t k, T alpha, const T *A, int64_t lda,
                                             const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
    switch (k) {
        ZD_SHORT_K(1) ZD_SHORT_K(2) ZD_SHORT_K(3) ZD_SHORT_K(4) ZD_SHORT_K(5) ZD_SHORT_K(6) ZD_SHORT_K(7)
#if VL == 16
        ZD_SHORT_K(8) ZD_SHORT_K(9) ZD_SHORT_K(10) ZD_SHORT_K(11) ZD_SHORT_K(12) ZD_SHORT_K(13) ZD_SHORT_K(14)
        ZD_SHORT_K(15)
#endif
    }
}
#undef ZD_SHORT_K
#undef ZD_IDX
#undef ZD_MASK
#undef ZD_GATHER
#undef ZD_ROW_INDEX
#undef ZD_PERMUTE2
#undef ZD_SPLIT_MAX

#define ZD_ROWS(mm, nj, pf_b)                                                                                   \
    case mm:                                                                                                    \
        ZD_FN(block)(mm, nj, k, alpha, A + i * lda, lda, B + j * ldb, ldb, beta, C + i * ldc + j, ldc, pf_b);   \
        break;
#define ZD_COLS(nj, pf_b)                                                                                       \
    case nj:                                                                                                    \
        switch (GK_MIN((int64_t)ZD_MAX, m - i)) { ZD_ROWS(1, nj, pf_b) ZD_ROWS(2, nj, pf_b) ZD_ROWS(3, nj, pf_b) \
                                                  ZD_ROWS(4, nj, pf_b) }                                        \
        break;

static void DOT_FN(int64_t m, int64_t n, int64_t k, const void *alpha_p, const void *Av, int64_t lda, const void *Bv,
                   int64_t ldb, const void *beta_p, void *Cv, int64_t ldc) {
    const T *A = (const T *)Av, *B = (const T *)Bv;
    T *C = (T *)Cv;
    const T alpha = *(const T *)alpha_p, beta = *(const T *)beta_p;
    if (n <= ZD_MAX && k < VL && m >= VL && lda <= INT32_MAX / VL) { /* few columns, short sums: A's columns */
        switch (n) {
        case 1: ZD_FN(short_cols)(1, m, k, alpha, A, lda, B, ldb, beta, C, ldc); break;
        case 2: ZD_FN(short_cols)(2, m, k, alpha, A, lda, B, ldb, beta, C, ldc); break;
        case 3: ZD_FN(short_cols)(3, m, k, alpha, A, lda, B, ldb, beta, C, ldc); break;
        default: ZD_FN(short_cols)(4, m, k, alpha, A, lda, B, ldb, beta, C, ldc); break;
        }
        return;
    }
    if (n <= ZD_MAX) { /* few columns: A streams */
        const int64_t j = 0;
        for (int64_t i = 0; i < m; i += ZD_MAX) switch (n) { ZD_COLS(1, 0) ZD_COLS(2, 0) ZD_COLS(3, 0) ZD_COLS(4, 0) }
        return;
    }
    for (int64_t j = 0; j < n; j += ZD_MAX) /* few rows: B streams */
        for (int64_t i = 0; i < m; i += ZD_MAX)
            switch (GK_MIN((int64_t)ZD_MAX, n - j)) { ZD_COLS(1, 1) ZD_COLS(2, 1) ZD_COLS(3, 1) ZD_COLS(4, 1) }
}

#undef ZD_ROWS
#undef ZD_COLS

#ifdef COLS_FN
/* Few columns of C against a transposed A (kernel.h gk_cols_fn): C[i][j] = alpha sum_l A[l][i] B[l rsb + j csb] +
 * beta C[i][j], j < n <= 4. Vectors along i: rv (<= 4) vectors of A's row l (the last one masked) times n broadcasts
 * of op(B) per step, the rv x n sums in registers over all of k, then written through a tile (C^T to C). */
static GK_FORCEINLINE void ZD_FN(cols_block)(const int rv, const int nj, int64_t mb, int64_t k, T alpha,
                                             const T *A, int64_t lda, const T *B, int64_t rsb, int64_t csb, T beta,
                                             T *C, int64_t ldc) {
    V s[ZD_MAX][ZD_MAX];
#pragma GCC unroll 4
    for (int r = 0; r < ZD_MAX; r++)
#pragma GCC unroll 4
        for (int j = 0; j < ZD_MAX; j++) s[r][j] = VOP(setzero)();
    const int64_t tail = mb - (int64_t)(rv - 1) * VL; /* values in the last vector, 1..VL */
#if VL == 16
    const __mmask16 mask = (__mmask16)(tail >= 16 ? 0xffffu : (1u << tail) - 1u);
#else
    const __mmask8 mask = (__mmask8)(tail >= 8 ? 0xffu : (1u << tail) - 1u);
#endif
    for (int64_t l = 0; l < k; l++) {
        const T *a = A + l * lda;
        const T *b = B + l * rsb;
        V av[ZD_MAX];
#pragma GCC unroll 4
        for (int r = 0; r < rv; r++) {
            av[r] = r + 1 < rv ? VOP(loadu)(a + r * VL) : VOP(maskz_loadu)(mask, a + r * VL);
            ZD_IN_REGISTER(av[r]);
        }
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) {
            const V bj = VOP(set1)(b[j * csb]);
#pragma GCC unroll 4
            for (int r = 0; r < rv; r++) s[r][j] = VOP(fmadd)(av[r], bj, s[r][j]);
        }
    }
    GK_ALIGN64 T t[ZD_MAX][ZD_MAX * VL]; /* t[j][i] = C[i][j] */
#pragma GCC unroll 4
    for (int j = 0; j < nj; j++)
#pragma GCC unroll 4
        for (int r = 0; r < rv; r++) VOP(store)(t[j] + r * VL, VOP(mul)(VOP(set1)(alpha), s[r][j]));
    for (int64_t i = 0; i < mb; i++) {
        T *c = C + i * ldc;
        if (beta == (T)0)
            for (int j = 0; j < nj; j++) c[j] = t[j][i];
        else
            for (int j = 0; j < nj; j++) c[j] = t[j][i] + beta * c[j];
    }
}

#define ZD_CB(rv, nj)                                                                                           \
    case rv:                                                                                                    \
        ZD_FN(cols_block)(rv, nj, mb, k, alpha, A + i, lda, B, rsb, csb, beta, C + i * ldc, ldc);              \
        break;
#define ZD_CN(nj)                                                                                               \
    case nj:                                                                                                    \
        switch ((mb + VL - 1) / VL) { ZD_CB(1, nj) ZD_CB(2, nj) ZD_CB(3, nj) ZD_CB(4, nj) }                      \
        break;
static void COLS_FN(int64_t m, int64_t n, int64_t k, const void *alpha_p, const void *Av, int64_t lda, const void *Bv,
                    int64_t rsb, int64_t csb, const void *beta_p, void *Cv, int64_t ldc) {
    const T *A = (const T *)Av, *B = (const T *)Bv;
    T *C = (T *)Cv;
    const T alpha = *(const T *)alpha_p, beta = *(const T *)beta_p;
    for (int64_t i = 0; i < m; i += ZD_MAX * VL) {
        const int64_t mb = GK_MIN((int64_t)ZD_MAX * VL, m - i);
        switch (n) { ZD_CN(1) ZD_CN(2) ZD_CN(3) ZD_CN(4) }
    }
}
#undef ZD_CB
#undef ZD_CN
#endif
#undef ZD_FN
#undef ZD_CAT
#undef ZD_CAT_
#undef ZD_MAX
#undef ZD_IN_REGISTER
