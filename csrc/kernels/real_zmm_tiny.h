/* The tiny path's in-place k loops on zmm (GK_TINY_SUMS6 / GK_TINY_SUMS5 of real_tiny_template.h): 6 or 5
 * rows of a plain A broadcast from memory against one zmm of b's row per k, and the masked loops of plain
 * products (GK_TINY_MASKED, and the kernel's `plain` entry). Included after T, V, VSUF, VL. */
#ifndef GEMMKIT_REAL_ZMM_TINY_H
#define GEMMKIT_REAL_ZMM_TINY_H
#define ZT_CAT_(a, b) a##b
#define ZT_CAT(a, b) ZT_CAT_(a, b)
#endif
#define ZT_OP(op) ZT_CAT(ZT_CAT(_mm512_, op), ZT_CAT(_, VSUF))

/* R rows (a constant at each call) x one zmm: c[r][0..VL) = sum_k a[r * lda + k] * b[k * ldb + 0..VL), the
 * FMAs in k order; nt: the rows stored past the caches in two 32-byte halves (rows 32-byte aligned). */
static GK_FORCEINLINE void ZT_CAT(TINY_FN, _zmm_sums)(const int R, const int nt, int64_t K, const T *a, int64_t lda,
                                                       const T *b, int64_t ldb, T *c, int64_t ldc) {
    V acc[6];
    for (int r = 0; r < R; r++) acc[r] = ZT_CAT(_mm512_setzero_, VSUF)();
    for (int64_t k = 0; k < K; k++) {
        const V bk = ZT_OP(loadu)(b + k * ldb);
        for (int r = 0; r < R; r++) acc[r] = ZT_OP(fmadd)(ZT_OP(set1)(a[r * lda + k]), bk, acc[r]);
    }
    for (int r = 0; r < R; r++) {
        if (nt) {
            const __m512i v = ZT_CAT(ZT_CAT(_mm512_cast, VSUF), _si512)(acc[r]);
            _mm256_stream_si256((__m256i *)(c + r * ldc), _mm512_castsi512_si256(v));
            _mm256_stream_si256((__m256i *)(c + r * ldc) + 1, _mm512_extracti64x4_epi64(v, 1));
        } else {
            ZT_OP(storeu)(c + r * ldc, acc[r]);
        }
    }
}

/* Out of line (GCC attribute): inlined into the tiny kernel, the loop ran out of registers and reloaded
 * its row offsets from the stack every k (float64 32^3 stacks at half speed). */
#define ZT_SUMS(NAME, R, NT)                                                                                  \
    static __attribute__((noinline)) void ZT_CAT(TINY_FN, NAME)(int64_t K, const T *a, int64_t lda, const T *b, int64_t ldb, T *c,       \
                                      int64_t ldc) {                                                          \
        ZT_CAT(TINY_FN, _zmm_sums)(R, NT, K, a, lda, b, ldb, c, ldc);                                         \
    }
ZT_SUMS(_sums6, 6, 0)
ZT_SUMS(_sums6_nt, 6, 1)
ZT_SUMS(_sums5, 5, 0)
ZT_SUMS(_sums5_nt, 5, 1)
#undef ZT_SUMS
/* Masked loops (GK_TINY_MASKED of real_tiny_template.h, gk_plain_fn): a plain A and B, N any width. R rows x C
 * zmm chunks of columns (constants at each call), the last chunk of a row masked: B read in
 * place (a masked load touches no byte past N, so no zero-padded copy of B), alpha and beta applied to the
 * sums in registers and C written once with a masked store (C not read when beta is 0). Where the chunked
 * loops ran them, B was copied zero-padded and the last chunk's sums went through a scratch tile: on Zen 4 a
 * 12^3 float32 product took longer than a 16^3 one (figures: sgemm_avx512.c, dgemm_avx512.c). */
#define ZT_RMAX 8 /* rows per block at most (one or two chunks) */
#define ZT_R4MAX 6 /* ... of four chunks: 24 sums, four of B, one of A in the 32 registers */
#define ZT_MASK_T ZT_CAT(ZT_MASK_, VSUF)
#define ZT_MASK_ps __mmask16
#define ZT_MASK_pd __mmask8
static GK_FORCEINLINE void ZT_CAT(TINY_FN, _masked_block)(const int R, const int C, int64_t N, int64_t K, T alpha,
                                                           const T *a, int64_t lda, int64_t csa, const T *b,
                                                           int64_t ldb, T beta, T *c, int64_t ldc) {
    ZT_MASK_T m[4];
#pragma GCC unroll 4
    for (int q = 0; q < C; q++) {
        const int64_t left = N - q * VL;
        m[q] = left >= VL ? (ZT_MASK_T)~0u : (ZT_MASK_T)((1u << left) - 1u);
    }
    /* one array per chunk (GCC left one 12-vector array in memory) */
    V acc0[ZT_RMAX], acc1[ZT_RMAX], acc2[ZT_RMAX], acc3[ZT_RMAX];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) acc0[r] = acc1[r] = acc2[r] = acc3[r] = ZT_CAT(_mm512_setzero_, VSUF)();
    for (int64_t k = 0; k < K; k++) {
        const T *bk = b + k * ldb, *ak = a + k * csa; /* A's (r, k) at a + r * lda + k * csa */
        const V b0 = ZT_OP(maskz_loadu)(m[0], bk);
        const V b1 = C >= 2 ? ZT_OP(maskz_loadu)(m[1], bk + VL) : b0;
        const V b2 = C >= 3 ? ZT_OP(maskz_loadu)(m[2], bk + 2 * VL) : b0;
        const V b3 = C >= 4 ? ZT_OP(maskz_loadu)(m[3], bk + 3 * VL) : b0;
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) {
            const V ar = ZT_OP(set1)(ak[r * lda]);
            acc0[r] = ZT_OP(fmadd)(ar, b0, acc0[r]);
            if (C >= 2) acc1[r] = ZT_OP(fmadd)(ar, b1, acc1[r]);
            if (C >= 3) acc2[r] = ZT_OP(fmadd)(ar, b2, acc2[r]);
            if (C >= 4) acc3[r] = ZT_OP(fmadd)(ar, b3, acc3[r]);
        }
    }
    const V va = ZT_OP(set1)(alpha), vb = ZT_OP(set1)(beta);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int q = 0; q < C; q++) {
            T *cq = c + r * ldc + q * VL;
            V v = ZT_OP(mul)(q == 0 ? acc0[r] : q == 1 ? acc1[r] : q == 2 ? acc2[r] : acc3[r], va);
            if (q < C - 1 || m[q] == (ZT_MASK_T)~0u) { /* whole chunks: plain loads and stores */
                if (beta != (T)0) v = ZT_OP(fmadd)(ZT_OP(loadu)(cq), vb, v);
                ZT_OP(storeu)(cq, v);
            } else {
                if (beta != (T)0) v = ZT_OP(fmadd)(ZT_OP(maskz_loadu)(m[q], cq), vb, v);
                ZT_OP(mask_storeu)(cq, m[q], v);
            }
        }
}
/* The same over one half-width (ymm, AVX-512VL) chunk: a last chunk of at most VL / 2 columns, at half the cost of
 * a zmm on Zen 4 (two 256-bit halves per zmm instruction): 100^3 products 96 of 104 columns computed useful,
 * not 96 of 112. */
#define ZT_HV ZT_CAT(ZT_HV_, VSUF)
#define ZT_HV_ps __m256
#define ZT_HV_pd __m256d
#define ZT_HOP(op) ZT_CAT(ZT_CAT(_mm256_, op), ZT_CAT(_, VSUF))
static GK_FORCEINLINE void ZT_CAT(TINY_FN, _masked_half)(const int R, int64_t N, int64_t K, T alpha, const T *a,
                                                          int64_t lda, int64_t csa, const T *b, int64_t ldb, T beta,
                                                          T *c, int64_t ldc) {
    const __mmask8 m = (__mmask8)((1u << N) - 1u); /* N <= VL / 2 */
    ZT_HV acc[ZT_RMAX];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) acc[r] = ZT_CAT(_mm256_setzero_, VSUF)();
    for (int64_t k = 0; k < K; k++) {
        const ZT_HV bk = ZT_HOP(maskz_loadu)(m, b + k * ldb);
#pragma GCC unroll 8
        for (int r = 0; r < R; r++) acc[r] = ZT_HOP(fmadd)(ZT_HOP(set1)(a[r * lda + k * csa]), bk, acc[r]);
    }
    const ZT_HV va = ZT_HOP(set1)(alpha), vb = ZT_HOP(set1)(beta);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) {
        ZT_HV v = ZT_HOP(mul)(acc[r], va);
        if (beta != (T)0) v = ZT_HOP(fmadd)(ZT_HOP(maskz_loadu)(m, c + r * ldc), vb, v);
        ZT_HOP(mask_storeu)(c + r * ldc, m, v);
    }
}
/* Out of line, one function per (R, C), as the sums above (C = 0: the half-width chunk). */
#define ZT_MASKED(R, C)                                                                                       \
    static __attribute__((noinline)) void ZT_CAT(TINY_FN, _masked_##R##x##C)(int64_t N, int64_t K, T alpha,    \
        const T *a, int64_t lda, int64_t csa, const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {           \
        ZT_CAT(TINY_FN, _masked_block)(R, C, N, K, alpha, a, lda, csa, b, ldb, beta, c, ldc);                 \
    }
#define ZT_MASKED_HALF(R)                                                                                     \
    static __attribute__((noinline)) void ZT_CAT(TINY_FN, _masked_##R##x0)(int64_t N, int64_t K, T alpha,       \
        const T *a, int64_t lda, int64_t csa, const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {           \
        ZT_CAT(TINY_FN, _masked_half)(R, N, K, alpha, a, lda, csa, b, ldb, beta, c, ldc);                     \
    }
ZT_MASKED_HALF(1) ZT_MASKED_HALF(2) ZT_MASKED_HALF(3) ZT_MASKED_HALF(4) ZT_MASKED_HALF(5) ZT_MASKED_HALF(6) ZT_MASKED_HALF(7) ZT_MASKED_HALF(8)
#undef ZT_MASKED_HALF
ZT_MASKED(1, 1) ZT_MASKED(2, 1) ZT_MASKED(3, 1) ZT_MASKED(4, 1) ZT_MASKED(5, 1) ZT_MASKED(6, 1) ZT_MASKED(7, 1) ZT_MASKED(8, 1)
ZT_MASKED(1, 2) ZT_MASKED(2, 2) ZT_MASKED(3, 2) ZT_MASKED(4, 2) ZT_MASKED(5, 2) ZT_MASKED(6, 2) ZT_MASKED(7, 2) ZT_MASKED(8, 2)
ZT_MASKED(1, 4) ZT_MASKED(2, 4) ZT_MASKED(3, 4) ZT_MASKED(4, 4) ZT_MASKED(5, 4) ZT_MASKED(6, 4)
#undef ZT_MASKED
/* The whole product by column groups: four chunks at a time while more than three are left, in rows of
 * ceil(M / 6) near-equal blocks (24 sums, one broadcast of A per four FMAs); then two chunks, one, or a half, in
 * ceil(M / 8) near-equal blocks (20 rows: 6 7 7, not 8 8 4, whose 4-row block waits on the FMA latency; 8-row
 * blocks ran 2-4 % faster than 6-row ones on Zen 4 at 65^3-200^3 for two chunks: fewer passes over B). */
static void ZT_CAT(TINY_FN, _masked_strided)(int64_t M, int64_t N, int64_t K, T alpha, const T *A, int64_t lda,
                                             int64_t csa, const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
    typedef void (*masked_fn)(int64_t, int64_t, T, const T *, int64_t, int64_t, const T *, int64_t, T, T *, int64_t);
    static const masked_fn fns[3][ZT_RMAX + 1] = {
        {NULL, ZT_CAT(TINY_FN, _masked_1x0), ZT_CAT(TINY_FN, _masked_2x0), ZT_CAT(TINY_FN, _masked_3x0),
         ZT_CAT(TINY_FN, _masked_4x0), ZT_CAT(TINY_FN, _masked_5x0), ZT_CAT(TINY_FN, _masked_6x0), ZT_CAT(TINY_FN, _masked_7x0), ZT_CAT(TINY_FN, _masked_8x0)},
        {NULL, ZT_CAT(TINY_FN, _masked_1x1), ZT_CAT(TINY_FN, _masked_2x1), ZT_CAT(TINY_FN, _masked_3x1),
         ZT_CAT(TINY_FN, _masked_4x1), ZT_CAT(TINY_FN, _masked_5x1), ZT_CAT(TINY_FN, _masked_6x1), ZT_CAT(TINY_FN, _masked_7x1), ZT_CAT(TINY_FN, _masked_8x1)},
        {NULL, ZT_CAT(TINY_FN, _masked_1x2), ZT_CAT(TINY_FN, _masked_2x2), ZT_CAT(TINY_FN, _masked_3x2),
         ZT_CAT(TINY_FN, _masked_4x2), ZT_CAT(TINY_FN, _masked_5x2), ZT_CAT(TINY_FN, _masked_6x2), ZT_CAT(TINY_FN, _masked_7x2), ZT_CAT(TINY_FN, _masked_8x2)}};
    static const masked_fn fns4[ZT_R4MAX + 1] = {NULL, ZT_CAT(TINY_FN, _masked_1x4), ZT_CAT(TINY_FN, _masked_2x4),
        ZT_CAT(TINY_FN, _masked_3x4), ZT_CAT(TINY_FN, _masked_4x4), ZT_CAT(TINY_FN, _masked_5x4), ZT_CAT(TINY_FN, _masked_6x4)};
    int64_t j0 = 0;
    if (N > 3 * VL) { /* groups of four chunks while more than three are left (the last one's tail masked) */
        const int64_t blocks = (M + ZT_R4MAX - 1) / ZT_R4MAX;
        j0 = ((N - 3 * VL - 1) / (4 * VL) + 1) * (4 * VL);
        for (int64_t bi = 0; bi < blocks; bi++) {
            const int64_t i0 = M * bi / blocks, rows = M * (bi + 1) / blocks - i0;
            for (int64_t j = 0; j < j0; j += 4 * VL)
                fns4[rows](N - j, K, alpha, A + i0 * lda, lda, csa, B + j, ldb, beta, C + i0 * ldc + j, ldc);
        }
    }
    const int64_t blocks = (M + ZT_RMAX - 1) / ZT_RMAX;
    for (int64_t bi = 0; bi < blocks; bi++) {
        const int64_t i0 = M * bi / blocks, rows = M * (bi + 1) / blocks - i0;
        for (int64_t j = j0; j < N; j += 2 * VL) {
            const int chunks = N - j > VL ? 2 : N - j > VL / 2 ? 1 : 0;
            fns[chunks][rows](N - j, K, alpha, A + i0 * lda, lda, csa, B + j, ldb, beta, C + i0 * ldc + j, ldc);
        }
    }
}
/* A plain A (rows lda apart, k contiguous). */
static void ZT_CAT(TINY_FN, _masked)(int64_t M, int64_t N, int64_t K, T alpha, const T *A, int64_t lda,
                                     const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
    ZT_CAT(TINY_FN, _masked_strided)(M, N, K, alpha, A, lda, 1, B, ldb, beta, C, ldc);
}
/* The kernel's `plain` entry (gk_plain_fn): any product of a plain B by the same loops, A plain or transposed
 * (broadcast from A^T's column: row r's k-th value at A + k * lda + r). */
static void ZT_CAT(TINY_FN, _plain)(int64_t M, int64_t N, int64_t K, const void *alpha, const void *A, int64_t lda,
                                    int transa, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc) {
    ZT_CAT(TINY_FN, _masked_strided)(M, N, K, *(const T *)alpha, (const T *)A, transa ? 1 : lda, transa ? lda : 1,
                                     (const T *)B, ldb, *(const T *)beta, (T *)C, ldc);
}
#undef ZT_OP
#undef ZT_HOP
#undef ZT_HV
#undef ZT_MASK_T
#define GK_TINY_MASKED_W VL
#define GK_TINY_MASKED ZT_CAT(TINY_FN, _masked)
#define GK_TINY_SUMS6 ZT_CAT(TINY_FN, _sums6)
#define GK_TINY_SUMS6_NT ZT_CAT(TINY_FN, _sums6_nt)
#define GK_TINY_SUMS5 ZT_CAT(TINY_FN, _sums5)
#define GK_TINY_SUMS5_NT ZT_CAT(TINY_FN, _sums5_nt)
