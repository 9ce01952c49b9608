/* The 512-bit real microkernel body for the first m rows of an MR x (16*NV floats | 8*NV doubles) tile,
 * written once and instantiated for float and double by sgemm_avx512.c and dgemm_avx512.c. */
/* The including file defines: T, V (__m512 / __m512d), VSUF (ps / pd), MR, NV, VL (lanes), PF_COLS,
 * TILE_FN (the function name). */
#define GK_ZMM_CAT_(a, b) a##b
#define GK_ZMM_CAT(a, b) GK_ZMM_CAT_(a, b)
#define VOP(op) GK_ZMM_CAT(_mm512_##op##_, VSUF)

/* The tile body for the first m rows; m is a constant in every caller, so the loops unroll fully
 * and the accumulator array stays in registers. */
static GK_FORCEINLINE void TILE_FN(const int m, int64_t kc, const T *GK_RESTRICT a, int64_t rsa,
                                   const T *GK_RESTRICT b, int64_t rsb, T *GK_RESTRICT c, int64_t ldc, T alpha,
                                   T beta) {
    V acc[MR][NV];
#pragma GCC unroll 16
    for (int i = 0; i < m; i++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) acc[i][v] = VOP(setzero)();
    /* C's rows (ldc apart: a stride the hardware prefetchers do not follow) fetched before the k loop,
     * as the AVX2 kernels do (unmeasured on AVX-512: no such machine yet) */
#pragma GCC unroll 16
    for (int i = 0; i < m; i++) {
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) _mm_prefetch((const char *)(c + i * ldc + VL * v), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + i * ldc + NV * VL - 1), _MM_HINT_T0);
    }
    for (int64_t k = 0; k < kc; k++) {
        V bv[NV];
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++) bv[v] = VOP(loadu)(b + VL * v);
        if (m <= 4) { /* few rows: streaming B in place is latency bound; fetch the next panel's lines */
            _mm_prefetch((const char *)(b + PF_COLS), _MM_HINT_T0);
            _mm_prefetch((const char *)(b + PF_COLS + VL), _MM_HINT_T0);
        }
#pragma GCC unroll 16
        for (int i = 0; i < m; i++) {
            V x = VOP(set1)(a[i]);
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) acc[i][v] = VOP(fmadd)(x, bv[v], acc[i][v]);
        }
        a += rsa;
        b += rsb;
    }
    const V va = VOP(set1)(alpha), vb = VOP(set1)(beta);
    if (beta == (T)0) {
#pragma GCC unroll 16
        for (int i = 0; i < m; i++)
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) VOP(storeu)(c + i * ldc + VL * v, VOP(mul)(va, acc[i][v]));
    } else {
#pragma GCC unroll 16
        for (int i = 0; i < m; i++)
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++) {
                T *cp = c + i * ldc + VL * v;
                VOP(storeu)(cp, VOP(fmadd)(vb, VOP(loadu)(cp), VOP(mul)(va, acc[i][v])));
            }
    }
}

/* ukernel_<op>_avx512_<m>x<NR>: the gk_ukernel_fn for the first m rows. */
#define GK_ZMM_ROWS_KERNEL(NAME, m)                                                                  \
    static void NAME(int64_t kc, const void *GK_RESTRICT a, int64_t rsa, const void *GK_RESTRICT b,  \
                     int64_t rsb, void *GK_RESTRICT c, int64_t ldc, const void *alpha, const void *beta) { \
        if (rsa == MR && rsb == NV * VL) /* packed panels: constant strides, a tighter k loop */          \
            TILE_FN(m, kc, (const T *)a, MR, (const T *)b, NV * VL, (T *)c, ldc, *(const T *)alpha,        \
                    *(const T *)beta);                                                               \
        else                                                                                         \
            TILE_FN(m, kc, (const T *)a, rsa, (const T *)b, rsb, (T *)c, ldc, *(const T *)alpha,      \
                    *(const T *)beta);                                                               \
    }

/* The kernel table of an AVX-512 real type OP (sgemm / dgemm; its functions named OP_dot_avx512,
 * tiny_OP_avx512_plain, ...) on one k loop variant: UKERNEL (named NAME), TINY its tiny kernel, CX_TINY the
 * tiny complex one, PACK_A its pack_a_plain (NULL: the portable packer). */
#define GK_ZMM_REAL_TABLE(OP, NAME, UKERNEL, TINY, CX_TINY, PACK_A)                                  \
    {                                                                                                \
        NAME, (int)sizeof(T), MR, NR, UKERNEL, rows_kernels, OP##_dot_avx512, TINY, CX_TINY,           \
        gemv_rows_##OP##_avx512, gemv_dots_##OP##_avx512, .plain = tiny_##OP##_avx512_plain,           \
        .plain_group_cols = tiny_##OP##_avx512_plain_group_cols, .cols = OP##_cols_avx512,             \
        .cols_rows = OP##_cols_avx512_rows, .dot_short_sums = 1, .dot_few_cols = 1,                    \
        .pack_a_plain = PACK_A,                                                                      \
    }
