/* The tiny path's in-place k loops on zmm (GK_TINY_SUMS6 / GK_TINY_SUMS5 of real_tiny_template.h): 6 or 5
 * rows of a plain A broadcast from memory against one zmm of b's row per k. Included after T, V, VSUF. */
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
#undef ZT_OP
#define GK_TINY_SUMS6 ZT_CAT(TINY_FN, _sums6)
#define GK_TINY_SUMS6_NT ZT_CAT(TINY_FN, _sums6_nt)
#define GK_TINY_SUMS5 ZT_CAT(TINY_FN, _sums5)
#define GK_TINY_SUMS5_NT ZT_CAT(TINY_FN, _sums5_nt)
