/* The AVX2 dot path (kernel.h gk_dot_fn) and few-columns loops (gk_cols_fn) for float and double: real_dot_template.h
 * on 16 ymm registers (blocks of 2 rows by up to 4 columns, tails by maskload / maskstore). */
/* The including file defines T, V, VSUF, VL (8 floats or 4 doubles a vector), DOT_FN and COLS_FN, and includes
 * real_ymm_template.h first (VOP). This header gives the template its 2 x 4 blocks' reduction and store. */

#define YD_ROWS 2 /* rows of A in a dot block (2 x 4 sums, 2 + 4 loaded vectors: 14 of the 16 registers) */
#define YD_COLS 4 /* columns of C in a block */
#define YD_CAT_(a, b) a##b
#define YD_CAT(a, b) YD_CAT_(a, b)
#define YD_FN(name) YD_CAT(DOT_FN, _##name)
#if defined(__GNUC__)
#define YD_IN_REGISTER(v) __asm__("" : "+x"(v))
#else
#define YD_IN_REGISTER(v) ((void)0)
#endif

#if VL == 8
/* C[i][0:nj] for the block's 2 rows from its 2 x 4 sums s[i][j]: a tree of 128-bit halves and horizontal adds
 * (v_{2t + i} = s[i][t]: row 0 in the low 128 bits of the result, row 1 in the high). */
static GK_FORCEINLINE void YD_FN(store)(const int mm, const int nj, V s[YD_ROWS][YD_COLS], T alpha, T beta, T *C,
                                        int64_t ldc) {
    V w[4];
#pragma GCC unroll 4
    for (int t = 0; t < 4; t++) /* low half: row 0's column t, high: row 1's */
        w[t] = _mm256_add_ps(_mm256_permute2f128_ps(s[0][t], s[1][t], 0x20),
                             _mm256_permute2f128_ps(s[0][t], s[1][t], 0x31));
    const V z = _mm256_hadd_ps(_mm256_hadd_ps(w[0], w[1]), _mm256_hadd_ps(w[2], w[3]));
    const __m128i cm = _mm256_castsi256_si128(GK_YMM_CAT(TILE_FN, _lane_mask)(nj));
    const __m128 va = _mm_set1_ps(alpha), vb = _mm_set1_ps(beta);
#pragma GCC unroll 2
    for (int i = 0; i < mm; i++) {
        __m128 v = _mm_mul_ps(va, i == 0 ? _mm256_castps256_ps128(z) : _mm256_extractf128_ps(z, 1));
        if (beta != (T)0) v = _mm_fmadd_ps(vb, _mm_maskload_ps(C + i * ldc, cm), v);
        if (nj == 4) _mm_storeu_ps(C + i * ldc, v);
        else _mm_maskstore_ps(C + i * ldc, cm, v);
    }
}
#else
/* The same for doubles: each row's 4 sums in one vector, pairs of columns (0, 2) and (1, 3) folded by halves, then
 * a horizontal add ([s0, s1, s2, s3] in order). */
static GK_FORCEINLINE void YD_FN(store)(const int mm, const int nj, V s[YD_ROWS][YD_COLS], T alpha, T beta, T *C,
                                        int64_t ldc) {
    const __m256i cm = GK_YMM_CAT(TILE_FN, _lane_mask)(nj);
    const V va = _mm256_set1_pd(alpha), vb = _mm256_set1_pd(beta);
#pragma GCC unroll 2
    for (int i = 0; i < mm; i++) {
        const V x = _mm256_add_pd(_mm256_permute2f128_pd(s[i][0], s[i][2], 0x20),
                                  _mm256_permute2f128_pd(s[i][0], s[i][2], 0x31));
        const V y = _mm256_add_pd(_mm256_permute2f128_pd(s[i][1], s[i][3], 0x20),
                                  _mm256_permute2f128_pd(s[i][1], s[i][3], 0x31));
        V v = _mm256_mul_pd(va, _mm256_hadd_pd(x, y));
        if (beta != (T)0) v = _mm256_fmadd_pd(vb, _mm256_maskload_pd(C + i * ldc, cm), v);
        if (nj == 4) _mm256_storeu_pd(C + i * ldc, v);
        else _mm256_maskstore_pd(C + i * ldc, cm, v);
    }
}
#endif

#define DT_ROWS YD_ROWS
#define DT_COLS YD_COLS
#define DT_CV 2 /* (2 x 4 sums, 2 loaded vectors, a broadcast) */
#define DT_MASK_T __m256i
#define DT_TAIL_MASK(n) GK_YMM_CAT(TILE_FN, _lane_mask)(n)
#define DT_MASKLOAD(mask, p) VOP(maskload)((p), (mask))
#define DT_IN_REGISTER(v) YD_IN_REGISTER(v)
#define DT_STORE YD_FN(store)
#include "real_dot_template.h"
#undef YD_ROWS
#undef YD_COLS
#undef YD_CAT
#undef YD_CAT_
#undef YD_FN
#undef YD_IN_REGISTER
