/* Native 512-bit complex microkernels (cgemm 6 x 16, zgemm 6 x 8 complex) on the 12-row real k loop of
 * real_zmm_template.h / real_zmm_asm.h, included after them by the AVX-512 sgemm / dgemm kernel files. */
/* Panels (pack.h, native complex format), as complex_ymm_template.h's: A holds per complex k the tile's 6
 * elements as (re, im) pairs (a real 12-row panel), B per complex k the tile's complex columns as (re, im)
 * pairs (2 zmm, a real panel). The real loop's row sums are then, per complex row i and column pair,
 * s[2i] = (sum ar br, sum ar bi) and s[2i + 1] = (sum ai br, sum ai bi), and C's row i is
 * s[2i] -+ swap(s[2i + 1]) (subtract in the even lanes, add in the odd: one fmaddsub). Conjugation and a
 * complex alpha are applied while packing, a complex beta by scaling C first: the kernel takes a real alpha
 * and beta. The including file defines CX_TILE_FN; the kernels take kc in the real domain (twice the complex
 * depth), as the driver passes it. */
#if MR != 12 || NV != 2
#error "the complex kernels run on the 12 x (2 zmm) real k loop"
#endif

#if VL == 8
#define GK_ZMM_CX_SWAP(x) _mm512_permute_pd((x), 0x55)
#else
#define GK_ZMM_CX_SWAP(x) _mm512_permute_ps((x), 0xb1)
#endif

/* The sums of the full 12 x NR real tile (real_zmm_asm.h's ZA_SUMS_FN, one per k loop variant); NULL where
 * the build has no asm loop. */
typedef void (*GK_ZMM_CAT(CX_TILE_FN, _sums_fn))(int64_t kc, const T *a, const T *b, T *s, const T *c, int64_t ldc,
                                                 int64_t ahead_rows);

/* The tile's first m complex rows over kc complex k: C := alpha * A B + beta * C (beta 0: C not read); the
 * full tile's sums by `sums` (a constant at each call). */
static GK_FORCEINLINE void CX_TILE_FN(const int m, int64_t kc, const T *GK_RESTRICT a, const T *GK_RESTRICT b,
                                      T *GK_RESTRICT c, int64_t ldc, T alpha, T beta,
                                      GK_ZMM_CAT(CX_TILE_FN, _sums_fn) sums) {
    GK_ALIGN64 T s[MR * NR];
    if (m == MR / 2 && sums) {
        /* it fetches 12 rows of C into L1 (this tile's 6 and the next tile's) and starts this tile's 6 rows two
         * column panels on (the driver's jr loop reaches them after 2 MC / MR calls) towards L2 */
        sums(kc, a, b, s, c, ldc, m);
    } else {
        TILE_FN(2 * m, kc, a, MR, b, NR, s, NR, (T)1, (T)0); /* an edge tile: only its 2m real rows */
    }
    const V va = VOP(set1)(alpha), vb = VOP(set1)(beta), one = VOP(set1)((T)1);
    for (int i = 0; i < m; i++)
        for (int v = 0; v < NV; v++) {
            T *cp = c + i * ldc + VL * v;
            const V re = VOP(load)(s + 2 * i * NR + VL * v), im = VOP(load)(s + (2 * i + 1) * NR + VL * v);
            const V x = VOP(mul)(va, VOP(fmaddsub)(one, re, GK_ZMM_CX_SWAP(im)));
            VOP(storeu)(cp, beta == (T)0 ? x : VOP(fmadd)(vb, VOP(loadu)(cp), x));
        }
}

/* The driver's kernel signature for m complex rows (the strides are always the packed panels'). */
#define GK_ZMM_CX_KERNEL(NAME, m, SUMS)                                                              \
    static void NAME(int64_t kc, const void *GK_RESTRICT a, int64_t rsa, const void *GK_RESTRICT b,  \
                     int64_t rsb, void *GK_RESTRICT c, int64_t ldc, const void *alpha, const void *beta) { \
        (void)rsa;                                                                                   \
        (void)rsb;                                                                                   \
        CX_TILE_FN(m, kc / 2, (const T *)a, (const T *)b, (T *)c, ldc, *(const T *)alpha, *(const T *)beta, SUMS); \
    }

/* The kernel tables of a native complex type: OP (cgemm / zgemm), W its complex columns (16 / 8), TINY its
 * tiny complex path, SUMS / SUMS_EMBED the full tile's sums by the two k loop variants (real_zmm_asm.h:
 * gk_OP_kernel_avx512 and gk_OP_kernel_avx512_embed, sharing the edge kernels), PACK_A its pack_a_plain (NULL:
 * the portable packer); MR / 2 = 6 complex rows, NR reals (W complex columns) in the driver's real domain. */
#define GK_ZMM_CX_KERNEL_TABLE(OP, W, TINY, SUMS, SUMS_EMBED, PACK_A)                                \
    GK_ZMM_CX_KERNEL(ukernel_##OP##_avx512_1x##W, 1, NULL)                                           \
    GK_ZMM_CX_KERNEL(ukernel_##OP##_avx512_2x##W, 2, NULL)                                           \
    GK_ZMM_CX_KERNEL(ukernel_##OP##_avx512_3x##W, 3, NULL)                                           \
    GK_ZMM_CX_KERNEL(ukernel_##OP##_avx512_4x##W, 4, NULL)                                           \
    GK_ZMM_CX_KERNEL(ukernel_##OP##_avx512_5x##W, 5, NULL)                                           \
    GK_ZMM_CX_KERNEL(ukernel_##OP##_avx512_6x##W, 6, SUMS)                                           \
    GK_ZMM_CX_KERNEL(ukernel_##OP##_avx512_6x##W##_embed, 6, SUMS_EMBED)                             \
    static const gk_ukernel_fn OP##_rows_kernels[6] = {                                              \
        NULL, ukernel_##OP##_avx512_1x##W, ukernel_##OP##_avx512_2x##W, ukernel_##OP##_avx512_3x##W,   \
        ukernel_##OP##_avx512_4x##W, ukernel_##OP##_avx512_5x##W};                                   \
    GK_ASSERT_REAL_TILE(6, NR, sizeof(T));                                                           \
    const gk_real_kernel_t gk_##OP##_kernel_avx512 = {                                               \
        "ukernel_" #OP "_avx512_6x" #W, (int)sizeof(T), 6, NR, ukernel_##OP##_avx512_6x##W, OP##_rows_kernels, \
        NULL, NULL, TINY, NULL, NULL, 1, PACK_A,                                                     \
    };                                                                                               \
    const gk_real_kernel_t gk_##OP##_kernel_avx512_embed = {                                         \
        "ukernel_" #OP "_avx512_6x" #W "_embed", (int)sizeof(T), 6, NR, ukernel_##OP##_avx512_6x##W##_embed, \
        OP##_rows_kernels, NULL, NULL, TINY, NULL, NULL, 1, PACK_A,                                  \
    };
