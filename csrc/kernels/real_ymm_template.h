/* The 256-bit real microkernel body for the first m rows of an MR x (2 vectors) tile, written once and
 * instantiated by the AVX2 kernel files (dgemm 6 x 8 doubles). */
/* The including file defines: T, V (__m256 / __m256d), VSUF (ps / pd), VBCAST (_mm256_broadcast_ss / _sd),
 * MR, VL (lanes), TILE_FN. */
#define GK_YMM_CAT_(a, b) a##b
#define GK_YMM_CAT(a, b) GK_YMM_CAT_(a, b)
#define VOP(op) GK_YMM_CAT(_mm256_##op##_, VSUF)

/* m is a constant in every caller: the loops unroll and the 2m accumulators stay in registers; k is
 * unrolled by 4 with the A micro-panel prefetched a few cache lines ahead. */
static GK_FORCEINLINE void TILE_FN(const int m, int64_t kc, const T *GK_RESTRICT a, int64_t rsa,
                                   const T *GK_RESTRICT b, int64_t rsb, T *GK_RESTRICT c, int64_t ldc, T alpha,
                                   T beta) {
    V acc[MR][2];
#pragma GCC unroll 8
    for (int i = 0; i < m; i++) acc[i][0] = acc[i][1] = VOP(setzero)();
#define GK_YMM_KSTEP                                                                                 \
    do {                                                                                             \
        const V b0 = VOP(loadu)(b), b1 = VOP(loadu)(b + VL);                                         \
        _Pragma("GCC unroll 8") for (int i = 0; i < m; i++) {                                        \
            const V x = VBCAST(a + i);                                                              \
            acc[i][0] = VOP(fmadd)(x, b0, acc[i][0]);                                                \
            acc[i][1] = VOP(fmadd)(x, b1, acc[i][1]);                                                \
        }                                                                                            \
        a += rsa;                                                                                    \
        b += rsb;                                                                                    \
    } while (0)
    int64_t k = 0;
    for (; k + 4 <= kc; k += 4) {
        _mm_prefetch((const char *)(a + 8 * rsa), _MM_HINT_T0);
        GK_YMM_KSTEP; GK_YMM_KSTEP; GK_YMM_KSTEP; GK_YMM_KSTEP;
    }
    for (; k < kc; k++) GK_YMM_KSTEP;
#undef GK_YMM_KSTEP
    const V va = VOP(set1)(alpha), vb = VOP(set1)(beta);
#pragma GCC unroll 8
    for (int i = 0; i < m; i++) {
        T *ci = c + i * ldc;
        V o0 = VOP(mul)(va, acc[i][0]), o1 = VOP(mul)(va, acc[i][1]);
        if (beta != (T)0) {
            o0 = VOP(fmadd)(vb, VOP(loadu)(ci), o0);
            o1 = VOP(fmadd)(vb, VOP(loadu)(ci + VL), o1);
        }
        VOP(storeu)(ci, o0);
        VOP(storeu)(ci + VL, o1);
    }
}

#define GK_YMM_ROWS_KERNEL(NAME, m)                                                                  \
    static void NAME(int64_t kc, const void *GK_RESTRICT a, int64_t rsa, const void *GK_RESTRICT b,  \
                     int64_t rsb, void *GK_RESTRICT c, int64_t ldc, const void *alpha, const void *beta) { \
        TILE_FN(m, kc, (const T *)a, rsa, (const T *)b, rsb, (T *)c, ldc, *(const T *)alpha,          \
                *(const T *)beta);                                                                   \
    }
