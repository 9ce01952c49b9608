/* Native 256-bit complex microkernels (zgemm 3 x 4, cgemm 3 x 8 complex) on the MR = 6 real k loop of
 * real_ymm_template.h, included after it by the AVX2 dgemm / sgemm kernel files. */
/* Panels (pack.h, native complex format): A holds per complex k the tile's 3 elements as (re, im) pairs
 * (6 values, as a real 6-row panel); B per complex k the tile's complex columns as (re, im) pairs
 * (2 vectors, as a real panel). The real loop's row sums are then, per complex row i and column pair,
 * s[2i] = (sum ar br, sum ar bi) and s[2i + 1] = (sum ai br, sum ai bi): C's row i is
 * addsub(s[2i], swap(s[2i + 1])) = (sum ar br - ai bi, sum ar bi + ai br). Conjugation and a complex alpha
 * are applied while packing, a complex beta by scaling C first, so the kernel takes a real alpha and beta.
 * The including file defines (besides real_ymm_template.h's) CX_TILE_FN. The kernels take kc in the
 * real domain (twice the complex depth), as the driver passes it. */
#if MR != 6
#error "the complex kernels run on the 6-row real k loop"
#endif

#if ES == 8
#define GK_CX_SWAP(x) _mm256_permute_pd((x), 0x5)
#else
#define GK_CX_SWAP(x) _mm256_permute_ps((x), 0xb1)
#endif

/* The tile's first m complex rows over kc complex k: C := alpha * A B + beta * C (beta 0: C not read). */
static GK_FORCEINLINE void CX_TILE_FN(const int m, int64_t kc, const T *GK_RESTRICT a, const T *GK_RESTRICT b,
                                      T *GK_RESTRICT c, int64_t ldc, T alpha, T beta) {
    __attribute__((aligned(32))) T s[6 * 2 * VL];
    GK_YMM_CAT(TILE_FN, _prefetch_c)(m, c, ldc); /* C's lines are wanted only after the k loop */
#if defined(GK_YMM_ASM)
    if (m == 3)
        GK_YMM_CAT(TILE_FN, _sums_asm)(kc, a, b, s);
    else /* an edge tile: only its 2m real rows (the asm loop always runs 6) */
#endif
        TILE_FN(2 * m, kc, a, 6, b, 2 * VL, s, 2 * VL, (T)1, (T)0);
    const V va = VOP(set1)(alpha), vb = VOP(set1)(beta);
    for (int i = 0; i < m; i++)
        for (int v = 0; v < 2; v++) {
            T *cp = c + i * ldc + VL * v;
            const V re = VOP(load)(s + (4 * i + v) * VL), im = VOP(load)(s + (4 * i + 2 + v) * VL);
            const V x = VOP(mul)(va, VOP(addsub)(re, GK_CX_SWAP(im)));
            VOP(storeu)(cp, beta == (T)0 ? x : VOP(fmadd)(vb, VOP(loadu)(cp), x));
        }
}

#if defined(GK_YMM_ASM)
/* The full 3-row tile in one asm block: C prefetched, the k loop, then per row (ymm 4i..4i+3) the
 * combine, alpha, beta (not read when zero) and the store straight from the registers. */
#if ES == 8
#define GK_CX_PERM "vpermilpd $0x5, "
#else
#define GK_CX_PERM "vpermilps $0xb1, "
#endif
#define GK_CX_COMBINE(r, i)                                                                          \
    GK_CX_PERM "%%ymm" #i ", %%ymm" #i "\n\t"                                                         \
    "vaddsubp" X " %%ymm" #i ", %%ymm" #r ", %%ymm" #r "\n\t"                                          \
    "vmulp" X " %%ymm12, %%ymm" #r ", %%ymm" #r "\n\t"
static void GK_YMM_CAT(CX_TILE_FN, _full_asm)(int64_t kc, const T *a, const T *b, T *c, int64_t ldc, T alpha,
                                              T beta) {
    int64_t n4 = kc >> 2, rem = kc & 3;
    const int64_t ldc_bytes = ldc * ES;
    const int64_t beta_zero = beta == (T)0;
    __asm__ volatile(
        "prefetcht0 (%[c])\n\t"
        "prefetcht0 63(%[c])\n\t"
        "prefetcht0 (%[c],%[ldc],1)\n\t"
        "prefetcht0 63(%[c],%[ldc],1)\n\t"
        "prefetcht0 (%[c],%[ldc],2)\n\t"
        "prefetcht0 63(%[c],%[ldc],2)\n\t"
        GK_YMM_K_LOOP
        "vbroadcasts" X " %[alpha], %%ymm12\n\t"
        GK_CX_COMBINE(0, 2) GK_CX_COMBINE(1, 3) GK_CX_COMBINE(4, 6) GK_CX_COMBINE(5, 7)
        GK_CX_COMBINE(8, 10) GK_CX_COMBINE(9, 11)
        "test %[bz], %[bz]\n\t"
        "jnz 5f\n\t"
        "vbroadcasts" X " %[beta], %%ymm13\n\t"
        GK_YMM_CBETA(, 0, 1, "(%[c])") GK_YMM_CBETA(, 4, 5, "(%[c],%[ldc],1)") GK_YMM_CBETA(, 8, 9, "(%[c],%[ldc],2)")
        "5:\n\t"
        GK_YMM_CSTORE("vmovup", 0, 1, "(%[c])") GK_YMM_CSTORE("vmovup", 4, 5, "(%[c],%[ldc],1)")
        GK_YMM_CSTORE("vmovup", 8, 9, "(%[c],%[ldc],2)")
        "vzeroupper\n\t"
        : [a] "+r"(a), [b] "+r"(b), [n4] "+r"(n4), [rem] "+r"(rem)
        : [c] "r"(c), [ldc] "r"(ldc_bytes), [bz] "r"(beta_zero), [alpha] "m"(alpha), [beta] "m"(beta)
        : GK_YMM_CLOBBERS);
}
#endif

#if defined(GK_YMM_ASM)
#define GK_CX_TILE(m, ...) ((m) == 3 ? GK_YMM_CAT(CX_TILE_FN, _full_asm)(__VA_ARGS__) : CX_TILE_FN(m, __VA_ARGS__))
#else
#define GK_CX_TILE(m, ...) CX_TILE_FN(m, __VA_ARGS__)
#endif

/* The driver's kernel signature for m complex rows (the strides are always the packed panels'). */
#define GK_YMM_CX_KERNEL(NAME, m)                                                                    \
    static void NAME(int64_t kc, const void *GK_RESTRICT a, int64_t rsa, const void *GK_RESTRICT b,  \
                     int64_t rsb, void *GK_RESTRICT c, int64_t ldc, const void *alpha, const void *beta) { \
        (void)rsa;                                                                                   \
        (void)rsb;                                                                                   \
        GK_CX_TILE(m, kc / 2, (const T *)a, (const T *)b, (T *)c, ldc, *(const T *)alpha, *(const T *)beta); \
    }

#if ES == 8
/* pack_a_plain of the 3-row zgemm panels (per k the three rows' (re, im) pairs): per two k one 32-byte load from each
 * row and three 128-bit lane shuffles, where the portable packer moves six 16-byte pairs (a visible share of small
 * zgemm's time). One panel of w <= 3 rows (zero past w). */
static GK_FORCEINLINE void pack_a_plain_zgemm_panel(const double *r0, int64_t lda, int w, int64_t kc,
                                                    double *GK_RESTRICT d) {
    const double *r1 = r0 + 2 * lda, *r2 = r1 + 2 * lda;
    const __m256d zero = _mm256_setzero_pd();
    int64_t k = 0;
    for (; k + 2 <= kc; k += 2, d += 12) {
        const __m256d x0 = _mm256_loadu_pd(r0 + 2 * k), x1 = w > 1 ? _mm256_loadu_pd(r1 + 2 * k) : zero,
                      x2 = w > 2 ? _mm256_loadu_pd(r2 + 2 * k) : zero;
        _mm256_storeu_pd(d, _mm256_permute2f128_pd(x0, x1, 0x20));     /* r0[k]   r1[k]   */
        _mm256_storeu_pd(d + 4, _mm256_permute2f128_pd(x2, x0, 0x30)); /* r2[k]   r0[k+1] */
        _mm256_storeu_pd(d + 8, _mm256_permute2f128_pd(x1, x2, 0x31)); /* r1[k+1] r2[k+1] */
    }
    if (k < kc) {
        const __m128d z = _mm_setzero_pd();
        _mm_storeu_pd(d, _mm_loadu_pd(r0 + 2 * k));
        _mm_storeu_pd(d + 2, w > 1 ? _mm_loadu_pd(r1 + 2 * k) : z);
        _mm_storeu_pd(d + 4, w > 2 ? _mm_loadu_pd(r2 + 2 * k) : z);
    }
}

static void pack_a_plain_zgemm_avx2(const void *A_, int64_t lda, int64_t mc, int64_t kc, void *GK_RESTRICT dst_) {
    const double *A = (const double *)A_;
    double *GK_RESTRICT dst = (double *)dst_;
    int64_t i0 = 0;
    for (; i0 + 3 <= mc; i0 += 3) pack_a_plain_zgemm_panel(A + 2 * i0 * lda, lda, 3, kc, dst + 2 * i0 * kc);
    if (i0 < mc) pack_a_plain_zgemm_panel(A + 2 * i0 * lda, lda, (int)(mc - i0), kc, dst + 2 * i0 * kc);
}
#define GK_YMM_CX_PACK_A_PLAIN_zgemm pack_a_plain_zgemm_avx2
#endif
#define GK_YMM_CX_PACK_A_PLAIN_cgemm NULL

/* The kernel table of a native complex type: OP (cgemm / zgemm), W its complex columns (8 / 4), TINY its tiny
 * complex path; MR = 3 complex rows, NR reals (W complex columns) in the driver's real domain. */
#define GK_YMM_CX_KERNEL_TABLE(OP, W, TINY)                                                           \
    GK_YMM_CX_KERNEL(ukernel_##OP##_avx2_1x##W, 1)                                                   \
    GK_YMM_CX_KERNEL(ukernel_##OP##_avx2_2x##W, 2)                                                   \
    GK_YMM_CX_KERNEL(ukernel_##OP##_avx2_3x##W, 3)                                                   \
    static const gk_ukernel_fn OP##_rows_kernels[3] = {NULL, ukernel_##OP##_avx2_1x##W,             \
                                                       ukernel_##OP##_avx2_2x##W};                   \
    GK_ASSERT_REAL_TILE(3, NR, ES);                                                                  \
    const gk_real_kernel_t gk_##OP##_kernel_avx2 = {                                                 \
        "ukernel_" #OP "_avx2_3x" #W, ES, 3, NR, ukernel_##OP##_avx2_3x##W, OP##_rows_kernels, NULL, NULL, \
        TINY, NULL, NULL, 1, GK_YMM_CX_PACK_A_PLAIN_##OP,                                            \
    };
