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
/* The plain loops (real_plain_template.h) on zmm: blocks of up to 8 rows by one or two chunks, 6 rows by four (24
 * sums, four of B, one of A in the 32 registers), a last chunk of at most VL / 2 columns on ymm (below). */
#define ZT_MASK_T ZT_CAT(ZT_MASK_, VSUF)
#define ZT_MASK_ps __mmask16
#define ZT_MASK_pd __mmask8
#define ZT_RMAX 8
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
#define ZT_MASKED_HALF(R)                                                                                     \
    static __attribute__((noinline)) int64_t ZT_CAT(TINY_FN, _plain_masked_##R##x0)(int64_t N, int64_t K,     \
        T alpha, const T *a, int64_t lda, int64_t csa, const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {   \
        ZT_CAT(TINY_FN, _masked_half)(R, N, K, alpha, a, lda, csa, b, ldb, beta, c, ldc);                     \
        return N;                                                                                             \
    }
ZT_MASKED_HALF(1) ZT_MASKED_HALF(2) ZT_MASKED_HALF(3) ZT_MASKED_HALF(4) ZT_MASKED_HALF(5) ZT_MASKED_HALF(6) ZT_MASKED_HALF(7) ZT_MASKED_HALF(8)
#undef ZT_MASKED_HALF
#define PL_V V
#define PL_M ZT_MASK_T
#define PL_MASK(n) ((n) >= VL ? (ZT_MASK_T)~0u : (ZT_MASK_T)((1u << (n)) - 1u))
#define PL_ZERO() ZT_CAT(_mm512_setzero_, VSUF)()
#define PL_LOADU(p) ZT_OP(loadu)(p)
#define PL_MASKZ_LOADU(m, p) ZT_OP(maskz_loadu)(m, p)
#define PL_STOREU(p, v) ZT_OP(storeu)(p, v)
#define PL_MASK_STOREU(p, m, v) ZT_OP(mask_storeu)(p, m, v)
#define PL_SET1(x) ZT_OP(set1)(x)
#define PL_FMADD(a, b, c) ZT_OP(fmadd)(a, b, c)
#define PL_MUL(a, b) ZT_OP(mul)(a, b)
#define PL_RMAX ZT_RMAX
#define PL_R4MAX 6
#define PL_HALF 1
#define PL_WHOLE_LOADS 1
#define PL_NARROW_TRANSA 0
#define PLAIN_FN ZT_CAT(TINY_FN, _plain)
#include "real_plain_template.h"
/* GK_TINY_MASKED: a plain A (rows lda apart, k contiguous). */
static void ZT_CAT(TINY_FN, _masked)(int64_t M, int64_t N, int64_t K, T alpha, const T *A, int64_t lda,
                                     const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
    ZT_CAT(PLAIN_FN, _strided)(M, N, K, alpha, A, lda, 1, B, ldb, beta, C, ldc);
}
#undef PLAIN_FN
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
