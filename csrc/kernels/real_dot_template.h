/* The dot path (kernel.h gk_dot_fn) and few-columns loops (gk_cols_fn) written once for the x86 vector ISAs and both
 * real types: blocks of sums along k, their reduction and store left to the including ISA header. */
/* The including header (real_zmm_dot.h, real_ymm_dot.h) defines, besides T, V, VL, VOP, DOT_FN and COLS_FN:
 *   DT_ROWS, DT_COLS     rows of A and columns of C in a dot block (DT_ROWS 2 or 4, DT_COLS 4)
 *   DT_CV                vectors of C's rows in a `cols` block (2 or 4)
 *   DT_MASK_T, DT_TAIL_MASK(n), DT_MASKLOAD(mask, p)   the first n (1..VL) lanes of a vector, and a load of them
 *   DT_IN_REGISTER(v)    keeps a loaded vector in a register (GCC otherwise folds the load into each of its FMAs:
 *                        A's 4 rows loaded 3 times a step in a 4 x 3 block, 19 loads for 12 FMAs)
 *   DT_STORE             its function (mm, nj, V s[DT_ROWS][DT_COLS], alpha, beta, C, ldc): C = alpha sums + beta C
 *   DT_SHORT_COLS        optional: its function (n, m, k, alpha, A, lda, B, ldb, beta, C, ldc) for few columns with
 *                        sums shorter than a vector (k < VL, m >= VL, lda <= INT32_MAX / VL)
 * (undefined again at the end of this file), and may call <DOT_FN>_dt_tile_to_c (below) after including it.
 * Two walks over C in DOT_FN:
 *  - few columns (n <= DT_COLS: op(B)'s columns, gathered or a B^T in place, against many rows of A): row blocks
 *    outer, every column at once, so A streams once;
 *  - otherwise (few rows of A against a long B^T): column blocks outer, row blocks inner, so B streams once and
 *    A's rows (few) stay in L1. */

#define DT_CAT_(a, b) a##b
#define DT_CAT(a, b) DT_CAT_(a, b)
#define DT_FN(name) DT_CAT(DOT_FN, _dt_##name)

/* C[0:mm][0:nj] = alpha A[0:mm] . B[0:nj] + beta C, sums along k VL values at a time (a masked tail); the streamed
 * operand (B's rows when pf_b, else A's) prefetched 16 vectors ahead. */
static GK_FORCEINLINE void DT_FN(block)(const int mm, const int nj, int64_t k, T alpha, const T *A, int64_t lda,
                                        const T *B, int64_t ldb, T beta, T *C, int64_t ldc, const int pf_b) {
    V s[DT_ROWS][DT_COLS];
#pragma GCC unroll 4
    for (int i = 0; i < DT_ROWS; i++)
#pragma GCC unroll 4
        for (int j = 0; j < DT_COLS; j++) s[i][j] = VOP(setzero)();
    int64_t p = 0;
    for (; p + VL <= k; p += VL) {
        V bv[DT_COLS], av[DT_ROWS];
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) {
            bv[j] = VOP(loadu)(B + j * ldb + p);
            DT_IN_REGISTER(bv[j]);
            if (pf_b) _mm_prefetch((const char *)(B + j * ldb + p + 16 * VL), _MM_HINT_T0);
        }
#pragma GCC unroll 4
        for (int i = 0; i < mm; i++) {
            av[i] = VOP(loadu)(A + i * lda + p);
            DT_IN_REGISTER(av[i]);
            if (!pf_b) _mm_prefetch((const char *)(A + i * lda + p + 16 * VL), _MM_HINT_T0);
        }
#pragma GCC unroll 4
        for (int i = 0; i < mm; i++)
#pragma GCC unroll 4
            for (int j = 0; j < nj; j++) s[i][j] = VOP(fmadd)(av[i], bv[j], s[i][j]);
    }
    if (p < k) {
        const DT_MASK_T mask = DT_TAIL_MASK(k - p);
        V bv[DT_COLS], av[DT_ROWS];
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) bv[j] = DT_MASKLOAD(mask, B + j * ldb + p);
#pragma GCC unroll 4
        for (int i = 0; i < mm; i++) av[i] = DT_MASKLOAD(mask, A + i * lda + p);
#pragma GCC unroll 4
        for (int i = 0; i < mm; i++)
#pragma GCC unroll 4
            for (int j = 0; j < nj; j++) s[i][j] = VOP(fmadd)(av[i], bv[j], s[i][j]);
    }
    DT_STORE(mm, nj, s, alpha, beta, C, ldc);
}

#define DT_BLOCK(mm, nj, pf_b)                                                                                  \
    case mm:                                                                                                    \
        DT_FN(block)(mm, nj, k, alpha, A + i * lda, lda, B + j * ldb, ldb, beta, C + i * ldc + j, ldc, pf_b);   \
        break;
#if DT_ROWS == 4
#define DT_BLOCKS(nj, pf_b) DT_BLOCK(1, nj, pf_b) DT_BLOCK(2, nj, pf_b) DT_BLOCK(3, nj, pf_b) DT_BLOCK(4, nj, pf_b)
#else
#define DT_BLOCKS(nj, pf_b) DT_BLOCK(1, nj, pf_b) DT_BLOCK(2, nj, pf_b)
#endif
#define DT_NJ(nj, pf_b)                                                                                         \
    case nj:                                                                                                    \
        switch (GK_MIN((int64_t)DT_ROWS, m - i)) { DT_BLOCKS(nj, pf_b) }                                        \
        break;

static void DOT_FN(int64_t m, int64_t n, int64_t k, const void *alpha_p, const void *Av, int64_t lda, const void *Bv,
                   int64_t ldb, const void *beta_p, void *Cv, int64_t ldc) {
    const T *A = (const T *)Av, *B = (const T *)Bv;
    T *C = (T *)Cv;
    const T alpha = *(const T *)alpha_p, beta = *(const T *)beta_p;
#ifdef DT_SHORT_COLS
    if (n <= DT_COLS && k < VL && m >= VL && lda <= INT32_MAX / VL) {
        DT_SHORT_COLS(n, m, k, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
#endif
    if (n <= DT_COLS) { /* few columns: A streams */
        const int64_t j = 0;
        for (int64_t i = 0; i < m; i += DT_ROWS) switch (n) { DT_NJ(1, 0) DT_NJ(2, 0) DT_NJ(3, 0) DT_NJ(4, 0) }
        return;
    }
    for (int64_t j = 0; j < n; j += DT_COLS) /* few rows: B streams */
        for (int64_t i = 0; i < m; i += DT_ROWS)
            switch (GK_MIN((int64_t)DT_COLS, n - j)) { DT_NJ(1, 1) DT_NJ(2, 1) DT_NJ(3, 1) DT_NJ(4, 1) }
}
#undef DT_BLOCK
#undef DT_BLOCKS
#undef DT_NJ

/* C[i][0:nj] = t[j][i] (t's rows ldt apart) + beta C[i][0:nj] for i < mb: sums kept as C's columns, to C's rows
 * (beta == 0: C not read). */
static void DT_FN(tile_to_c)(int nj, int64_t mb, const T *t, int64_t ldt, T beta, T *C, int64_t ldc) {
    for (int64_t i = 0; i < mb; i++) {
        T *c = C + i * ldc;
        if (beta == (T)0)
            for (int j = 0; j < nj; j++) c[j] = t[j * ldt + i];
        else
            for (int j = 0; j < nj; j++) c[j] = t[j * ldt + i] + beta * c[j];
    }
}

/* Few columns of C against a transposed A (gk_cols_fn): C[i][j] = alpha sum_l A[l][i] B[l rsb + j csb] + beta C[i][j],
 * j < n <= 4. Vectors along i: rv (<= DT_CV) vectors of A's row l (the last one masked) times a broadcast of each of
 * op(B)'s nj values, the rv x nj sums in registers over all of k, then written through a tile (C^T to C). */
static GK_FORCEINLINE void DT_FN(cols_block)(const int rv, const int nj, int64_t mb, int64_t k, T alpha, const T *A,
                                             int64_t lda, const T *B, int64_t rsb, int64_t csb, T beta, T *C,
                                             int64_t ldc) {
    V s[DT_CV][4];
#pragma GCC unroll 4
    for (int r = 0; r < DT_CV; r++)
#pragma GCC unroll 4
        for (int j = 0; j < 4; j++) s[r][j] = VOP(setzero)();
    const DT_MASK_T mask = DT_TAIL_MASK(mb - (int64_t)(rv - 1) * VL); /* values in the last vector, 1..VL */
    for (int64_t l = 0; l < k; l++) {
        const T *a = A + l * lda;
        const T *b = B + l * rsb;
        V av[DT_CV];
#pragma GCC unroll 4
        for (int r = 0; r < rv; r++) {
            av[r] = r + 1 < rv ? VOP(loadu)(a + r * VL) : DT_MASKLOAD(mask, a + r * VL);
            DT_IN_REGISTER(av[r]);
        }
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) {
            const V bj = VOP(set1)(b[j * csb]);
#pragma GCC unroll 4
            for (int r = 0; r < rv; r++) s[r][j] = VOP(fmadd)(av[r], bj, s[r][j]);
        }
    }
    GK_ALIGN64 T t[4][DT_CV * VL]; /* t[j][i] = C[i][j] */
#pragma GCC unroll 4
    for (int j = 0; j < nj; j++)
#pragma GCC unroll 4
        for (int r = 0; r < rv; r++) VOP(store)(t[j] + r * VL, VOP(mul)(VOP(set1)(alpha), s[r][j]));
    /* (mb <= rv VL: the bound said for the compiler) */
    DT_FN(tile_to_c)(nj, GK_MIN(mb, (int64_t)rv * VL), t[0], DT_CV * VL, beta, C, ldc);
}

#define DT_CB(rv, nj)                                                                                           \
    case rv:                                                                                                    \
        DT_FN(cols_block)(rv, nj, mb, k, alpha, A + i, lda, B, rsb, csb, beta, C + i * ldc, ldc);              \
        break;
#if DT_CV == 4
#define DT_CBS(nj) DT_CB(1, nj) DT_CB(2, nj) DT_CB(3, nj) DT_CB(4, nj)
#else
#define DT_CBS(nj) DT_CB(1, nj) DT_CB(2, nj)
#endif
#define DT_CN(nj)                                                                                               \
    case nj:                                                                                                    \
        switch ((mb + VL - 1) / VL) { DT_CBS(nj) }                                                              \
        break;
static void COLS_FN(int64_t m, int64_t n, int64_t k, const void *alpha_p, const void *Av, int64_t lda, const void *Bv,
                    int64_t rsb, int64_t csb, const void *beta_p, void *Cv, int64_t ldc) {
    const T *A = (const T *)Av, *B = (const T *)Bv;
    T *C = (T *)Cv;
    const T alpha = *(const T *)alpha_p, beta = *(const T *)beta_p;
    for (int64_t i = 0; i < m; i += DT_CV * VL) {
        const int64_t mb = GK_MIN((int64_t)DT_CV * VL, m - i);
        switch (n) { DT_CN(1) DT_CN(2) DT_CN(3) DT_CN(4) }
    }
}
/* Rows of C one `cols` block sums (the width of the strip of A's rows it walks down all of k): the kernel table's
 * cols_rows. */
enum { DT_CAT(COLS_FN, _rows) = DT_CV * VL };
#undef DT_CB
#undef DT_CBS
#undef DT_CN
#undef DT_FN
#undef DT_CAT
#undef DT_CAT_
/* the including header's parameters */
#undef DT_ROWS
#undef DT_COLS
#undef DT_CV
#undef DT_MASK_T
#undef DT_TAIL_MASK
#undef DT_MASKLOAD
#undef DT_IN_REGISTER
#undef DT_STORE
#undef DT_SHORT_COLS
