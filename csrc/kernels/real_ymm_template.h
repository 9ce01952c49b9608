/* The 256-bit real microkernel body for the first m rows of an MR x (2 vectors) tile, written once and
 * instantiated by the AVX2 kernel files (dgemm 6 x 8 doubles). */
/* The including file defines: T, V (__m256 / __m256d), VSUF (ps / pd), VBCAST (_mm256_broadcast_ss / _sd),
 * MR, VL (lanes), TILE_FN. */
#define GK_YMM_CAT_(a, b) a##b
#define GK_YMM_CAT(a, b) GK_YMM_CAT_(a, b)
#define VOP(op) GK_YMM_CAT(_mm256_##op##_, VSUF)

/* Lane masks of the first n (0..VL) values, for maskload / maskstore (the dot path's and the plain loops' tails). */
static GK_FORCEINLINE __m256i GK_YMM_CAT(TILE_FN, _lane_mask)(int64_t n) {
    static const int32_t ones[16] = {-1, -1, -1, -1, -1, -1, -1, -1, 0, 0, 0, 0, 0, 0, 0, 0};
#if VL == 8
    return _mm256_loadu_si256((const __m256i *)(ones + 8 - n));
#else
    return _mm256_cvtepi32_epi64(_mm_loadu_si128((const __m128i *)(ones + 8 - n)));
#endif
}

/* The first m rows of a C tile (2 vectors each) fetched into L1 before the k loop, so that their misses overlap it:
 * C's rows lie ldc apart, in big problems a power of two of bytes that the hardware prefetchers do not follow (see
 * docs/decisions.md, _prefetch_c). Both ends of each row: an unaligned row straddles two lines. */
static GK_FORCEINLINE void GK_YMM_CAT(TILE_FN, _prefetch_c)(const int m, const T *c, int64_t ldc) {
#pragma GCC unroll 8
    for (int i = 0; i < m; i++) {
        _mm_prefetch((const char *)(c + i * ldc), _MM_HINT_T0);
        _mm_prefetch((const char *)(c + i * ldc + 2 * VL - 1), _MM_HINT_T0);
    }
}

/* m is a constant in every caller: the loops unroll and the 2m accumulators stay in registers; k is
 * unrolled by 4 with the A micro-panel prefetched a few cache lines ahead. */
static GK_FORCEINLINE void TILE_FN(const int m, int64_t kc, const T *GK_RESTRICT a, int64_t rsa,
                                   const T *GK_RESTRICT b, int64_t rsb, T *GK_RESTRICT c, int64_t ldc, T alpha,
                                   T beta) {
    /* Up to 3 rows, 2m FMA chains cannot cover the FMA latency (5 cycles, 2 pipes on Zen 2): even and odd
     * k then go to two sets of accumulators (an edge tile of 1-3 rows costs about half as much). */
    const int split = m <= 3;
    V acc[MR][2], acc2[MR][2];
    GK_YMM_CAT(TILE_FN, _prefetch_c)(m, c, ldc);
#pragma GCC unroll 8
    for (int i = 0; i < m; i++) acc[i][0] = acc[i][1] = acc2[i][0] = acc2[i][1] = VOP(setzero)();
#define GK_YMM_KSTEP(ACC)                                                                            \
    do {                                                                                             \
        const V b0 = VOP(loadu)(b), b1 = VOP(loadu)(b + VL);                                         \
        _Pragma("GCC unroll 8") for (int i = 0; i < m; i++) {                                        \
            const V x = VBCAST(a + i);                                                              \
            ACC[i][0] = VOP(fmadd)(x, b0, ACC[i][0]);                                                \
            ACC[i][1] = VOP(fmadd)(x, b1, ACC[i][1]);                                                \
        }                                                                                            \
        a += rsa;                                                                                    \
        b += rsb;                                                                                    \
    } while (0)
    int64_t k = 0;
    if (split) {
        for (; k + 4 <= kc; k += 4) {
            _mm_prefetch((const char *)(a + 8 * rsa), _MM_HINT_T0);
            GK_YMM_KSTEP(acc); GK_YMM_KSTEP(acc2); GK_YMM_KSTEP(acc); GK_YMM_KSTEP(acc2);
        }
#pragma GCC unroll 8
        for (int i = 0; i < m; i++) {
            acc[i][0] = VOP(add)(acc[i][0], acc2[i][0]);
            acc[i][1] = VOP(add)(acc[i][1], acc2[i][1]);
        }
    } else {
        for (; k + 4 <= kc; k += 4) {
            _mm_prefetch((const char *)(a + 8 * rsa), _MM_HINT_T0);
            GK_YMM_KSTEP(acc); GK_YMM_KSTEP(acc); GK_YMM_KSTEP(acc); GK_YMM_KSTEP(acc);
        }
    }
    for (; k < kc; k++) GK_YMM_KSTEP(acc);
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

#if defined(__GNUC__) && !defined(GK_NO_INLINE_ASM)
#define GK_YMM_ASM 1
/* The packed MR = 6 k loop in inline assembly (GCC keeps 12 accumulators + 2 B vectors + a broadcast in
 * 16 ymm registers only with spills and moves): ymm0..11 accumulate (row i in ymm 2i, 2i+1), ymm12/13
 * hold B's two vectors of one k, ymm14/15 alternate as A's broadcasts; four k per iteration, A
 * prefetched 8 k ahead. The sums land in s (6 x 2 vectors, 32-byte aligned). ES: element bytes,
 * X: "s" or "d" (the instruction suffix letter). */
#define GK_YMM_STR_(x) #x
#define GK_YMM_STR(x) GK_YMM_STR_(x)
#define GK_YMM_ROW(i, ra, rb, ao, bc)                                                                \
    "vbroadcasts" X " " GK_YMM_STR(ao) "+" GK_YMM_STR(ES) "*" #i "(%[a]), %%ymm" #bc "\n\t"              \
    "vfmadd231p" X " %%ymm12, %%ymm" #bc ", %%ymm" #ra "\n\t"                                         \
    "vfmadd231p" X " %%ymm13, %%ymm" #bc ", %%ymm" #rb "\n\t"
#define GK_YMM_KSTEP(ao, bo)                                                                         \
    "vmovup" X " " #bo "(%[b]), %%ymm12\n\t"                                                          \
    "vmovup" X " " #bo "+32(%[b]), %%ymm13\n\t"                                                       \
    GK_YMM_ROW(0, 0, 1, ao, 14) GK_YMM_ROW(1, 2, 3, ao, 15) GK_YMM_ROW(2, 4, 5, ao, 14)             \
    GK_YMM_ROW(3, 6, 7, ao, 15) GK_YMM_ROW(4, 8, 9, ao, 14) GK_YMM_ROW(5, 10, 11, ao, 15)
#define GK_YMM_ZERO(i) "vxorps %%ymm" #i ", %%ymm" #i ", %%ymm" #i "\n\t"
#define GK_YMM_SAVE(i) "vmovaps %%ymm" #i ", 32*" #i "(%[s])\n\t"
#define GK_YMM_ALL12(Z) Z(0) Z(1) Z(2) Z(3) Z(4) Z(5) Z(6) Z(7) Z(8) Z(9) Z(10) Z(11)
/* A k loop's skeleton: accumulators zeroed, BODY4 (four k, pointers advanced) n4 times, then BODY1 (one k)
 * rem times (operands n4, rem; labels 1-4). */
#define GK_YMM_LOOP_SKELETON(BODY4, BODY1)                                                           \
    GK_YMM_ALL12(GK_YMM_ZERO)                                                                        \
    "test %[n4], %[n4]\n\t"                                                                          \
    "jz 2f\n\t"                                                                                      \
    ".p2align 5\n"                                                                                   \
    "1:\n\t"                                                                                         \
    BODY4                                                                                            \
    "dec %[n4]\n\t"                                                                                  \
    "jnz 1b\n"                                                                                       \
    "2:\n\t"                                                                                         \
    "test %[rem], %[rem]\n\t"                                                                        \
    "jz 4f\n"                                                                                        \
    "3:\n\t"                                                                                         \
    BODY1                                                                                            \
    "dec %[rem]\n\t"                                                                                 \
    "jnz 3b\n"                                                                                       \
    "4:\n\t"
/* The k loop over packed panels (operands a, b, n4 = kc / 4, rem = kc % 4), shared by the real sums below
 * and the complex tile (complex_ymm_template.h). */
#define GK_YMM_K_LOOP                                                                                \
    GK_YMM_LOOP_SKELETON(                                                                            \
        "prefetcht0 " GK_YMM_STR(8 * 6 * ES) "(%[a])\n\t"                                            \
        GK_YMM_KSTEP(0, 0)                                                                           \
        GK_YMM_KSTEP(6 * ES, 64)                                                                     \
        "prefetcht0 " GK_YMM_STR(8 * 6 * ES + 64) "(%[a])\n\t"                                       \
        GK_YMM_KSTEP(12 * ES, 128)                                                                   \
        GK_YMM_KSTEP(18 * ES, 192)                                                                   \
        "add $" GK_YMM_STR(24 * ES) ", %[a]\n\t"                                                     \
        "add $256, %[b]\n\t",                                                                        \
        GK_YMM_KSTEP(0, 0)                                                                           \
        "add $" GK_YMM_STR(6 * ES) ", %[a]\n\t"                                                      \
        "add $64, %[b]\n\t")
#define GK_YMM_CLOBBERS                                                                              \
    "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", \
        "xmm11", "xmm12", "xmm13", "xmm14", "xmm15"
static void GK_YMM_CAT(TILE_FN, _sums_asm)(int64_t kc, const T *a, const T *b, T *s) {
    int64_t n4 = kc >> 2, rem = kc & 3;
    __asm__ volatile(
        GK_YMM_K_LOOP
        GK_YMM_ALL12(GK_YMM_SAVE)
        : [a] "+r"(a), [b] "+r"(b), [n4] "+r"(n4), [rem] "+r"(rem)
        : [s] "r"(s)
        : GK_YMM_CLOBBERS);
}

/* The same 6-row k loop on operands read in place (the tiny path: nothing packed): a plain A's rows lda
 * apart (broadcasts from a, a + lda, a + 2 lda and from a3 = a + 3 lda likewise), B's k rows ldb apart, two
 * vectors of each. */
#define GK_YMM_DROW(ra, rb, addr, bc)                                                                \
    "vbroadcasts" X " " addr ", %%ymm" #bc "\n\t"                                                     \
    "vfmadd231p" X " %%ymm12, %%ymm" #bc ", %%ymm" #ra "\n\t"                                         \
    "vfmadd231p" X " %%ymm13, %%ymm" #bc ", %%ymm" #rb "\n\t"
/* R = 6 rows, or 5 (the sixth row's instructions left out: its 10 chains still cover the FMA latency) */
#define GK_YMM_ROW6_IF_6(x) x
#define GK_YMM_ROW6_IF_5(x)
#define GK_YMM_ROW6_IF(R, x) GK_YMM_CAT(GK_YMM_ROW6_IF_, R)(x)
#define GK_YMM_DSTEP(ao, R)                                                                          \
    "vmovup" X " (%[b]), %%ymm12\n\t"                                                                \
    "vmovup" X " 32(%[b]), %%ymm13\n\t"                                                              \
    "add %[ldb], %[b]\n\t"                                                                           \
    GK_YMM_DROW(0, 1, GK_YMM_STR(ao) "(%[a])", 14)                                                   \
    GK_YMM_DROW(2, 3, GK_YMM_STR(ao) "(%[a],%[lda],1)", 15)                                          \
    GK_YMM_DROW(4, 5, GK_YMM_STR(ao) "(%[a],%[lda],2)", 14)                                          \
    GK_YMM_DROW(6, 7, GK_YMM_STR(ao) "(%[a3])", 15)                                                  \
    GK_YMM_DROW(8, 9, GK_YMM_STR(ao) "(%[a3],%[lda],1)", 14)                                         \
    GK_YMM_ROW6_IF(R, GK_YMM_DROW(10, 11, GK_YMM_STR(ao) "(%[a3],%[lda],2)", 15))
#define GK_YMM_DIRECT_K_LOOP(R)                                                                      \
    GK_YMM_LOOP_SKELETON(                                                                            \
        GK_YMM_DSTEP(0, R)                                                                           \
        GK_YMM_DSTEP(ES, R)                                                                          \
        GK_YMM_DSTEP(2 * ES, R)                                                                      \
        GK_YMM_DSTEP(3 * ES, R)                                                                      \
        "add $" GK_YMM_STR(4 * ES) ", %[a]\n\t"                                                     \
        "add $" GK_YMM_STR(4 * ES) ", %[a3]\n\t",                                                   \
        GK_YMM_DSTEP(0, R)                                                                           \
        "add $" GK_YMM_STR(ES) ", %[a]\n\t"                                                         \
        "add $" GK_YMM_STR(ES) ", %[a3]\n\t")
/* The epilogue on the 12 accumulators, row i in ymm 2i, 2i+1, over 6 (R) rows of C ldc apart (c, c3 = c +
 * 3 ldc): ROW(ARG, ra, rb, row address) for each. CSTORE stores a row (ST: the move's name), CMUL multiplies
 * it by alpha (ymm12), CBETA adds beta (ymm13) times C's old value. */
#define GK_YMM_C_ROWS_R(ROW, ARG, R)                                                                 \
    ROW(ARG, 0, 1, "(%[c])") ROW(ARG, 2, 3, "(%[c],%[ldc],1)") ROW(ARG, 4, 5, "(%[c],%[ldc],2)")      \
    ROW(ARG, 6, 7, "(%[c3])") ROW(ARG, 8, 9, "(%[c3],%[ldc],1)")                                       \
    GK_YMM_ROW6_IF(R, ROW(ARG, 10, 11, "(%[c3],%[ldc],2)"))
#define GK_YMM_C_ROWS(ROW, ARG) GK_YMM_C_ROWS_R(ROW, ARG, 6)
#define GK_YMM_CSTORE(ST, ra, rb, addr)                                                              \
    ST X " %%ymm" #ra ", " addr "\n\t"                                                                \
    ST X " %%ymm" #rb ", 32" addr "\n\t"
#define GK_YMM_CMUL(ARG, ra, rb, addr)                                                               \
    "vmulp" X " %%ymm12, %%ymm" #ra ", %%ymm" #ra "\n\t"                                               \
    "vmulp" X " %%ymm12, %%ymm" #rb ", %%ymm" #rb "\n\t"
#define GK_YMM_CBETA(ARG, ra, rb, addr)                                                              \
    "vfmadd231p" X " " addr ", %%ymm13, %%ymm" #ra "\n\t"                                             \
    "vfmadd231p" X " 32" addr ", %%ymm13, %%ymm" #rb "\n\t"
/* The sums stored into R rows ldc apart, two vectors each: straight into C where alpha is 1 and beta 0 (a
 * plain matmul), else into a buffer the caller scales; the _nt variants store past the caches (rows
 * 32-byte aligned; the caller fences). */
#define GK_YMM_DIRECT_SUMS(NAME, ST, R)                                                                \
    static GK_FORCEINLINE void GK_YMM_CAT(TILE_FN, NAME)(int64_t kc, const T *a, int64_t lda, const T *b, \
                                                         int64_t ldb, T *c, int64_t ldc) {           \
        const T *a3 = a + 3 * lda;                                                                   \
        T *c3 = c + 3 * ldc;                                                                         \
        const int64_t lda_bytes = lda * ES, ldb_bytes = ldb * ES, ldc_bytes = ldc * ES;              \
        int64_t n4 = kc >> 2, rem = kc & 3;                                                          \
        __asm__ volatile(GK_YMM_DIRECT_K_LOOP(R) GK_YMM_C_ROWS_R(GK_YMM_CSTORE, ST, R)              \
            : [a] "+r"(a), [a3] "+r"(a3), [b] "+r"(b), [n4] "+r"(n4), [rem] "+r"(rem)                \
            : [c] "r"(c), [c3] "r"(c3), [lda] "r"(lda_bytes), [ldb] "r"(ldb_bytes), [ldc] "r"(ldc_bytes) \
            : GK_YMM_CLOBBERS);                                                                      \
    }
GK_YMM_DIRECT_SUMS(_sums_direct_asm, "vmovup", 6)
GK_YMM_DIRECT_SUMS(_sums_direct_nt_asm, "vmovntp", 6)
GK_YMM_DIRECT_SUMS(_sums5_direct_asm, "vmovup", 5)
GK_YMM_DIRECT_SUMS(_sums5_direct_nt_asm, "vmovntp", 5)
#undef GK_YMM_DIRECT_SUMS
#undef GK_YMM_DIRECT_K_LOOP
#undef GK_YMM_DSTEP
#undef GK_YMM_DROW

/* The full packed 6-row tile in one asm block: C prefetched, the k loop, then alpha, beta (C not read when
 * it is zero) and the store straight from the accumulators. */
static void GK_YMM_CAT(TILE_FN, _full_asm)(int64_t kc, const T *a, const T *b, T *c, int64_t ldc, const T *alpha,
                                           const T *beta) {
    T *c3 = c + 3 * ldc;
    const int64_t ldc_bytes = ldc * ES, beta_zero = *beta == (T)0;
    int64_t n4 = kc >> 2, rem = kc & 3;
    GK_YMM_CAT(TILE_FN, _prefetch_c)(6, c, ldc);
    __asm__ volatile(GK_YMM_K_LOOP
        "vbroadcasts" X " (%[alpha]), %%ymm12\n\t"
        GK_YMM_C_ROWS(GK_YMM_CMUL, )
        "test %[bz], %[bz]\n\t"
        "jnz 5f\n\t"
        "vbroadcasts" X " (%[beta]), %%ymm13\n\t"
        GK_YMM_C_ROWS(GK_YMM_CBETA, )
        "5:\n\t"
        GK_YMM_C_ROWS(GK_YMM_CSTORE, "vmovup")
        : [a] "+r"(a), [b] "+r"(b), [n4] "+r"(n4), [rem] "+r"(rem)
        : [c] "r"(c), [c3] "r"(c3), [ldc] "r"(ldc_bytes), [bz] "r"(beta_zero), [alpha] "r"(alpha), [beta] "r"(beta)
        : GK_YMM_CLOBBERS);
}
#endif

#if defined(GK_YMM_ASM)
#define GK_YMM_FULL_ASM(m) ((m) == 6 && MR == 6)
#else
#define GK_YMM_FULL_ASM(m) 0
#endif

#define GK_YMM_ROWS_KERNEL(NAME, m)                                                                  \
    static void NAME(int64_t kc, const void *GK_RESTRICT a, int64_t rsa, const void *GK_RESTRICT b,  \
                     int64_t rsb, void *GK_RESTRICT c, int64_t ldc, const void *alpha, const void *beta) { \
        if (GK_YMM_FULL_ASM(m) && rsa == MR && rsb == 2 * VL) /* packed: the asm k loop */              \
            GK_YMM_CAT(TILE_FN, _full_asm)(kc, (const T *)a, (const T *)b, (T *)c, ldc, (const T *)alpha, \
                                            (const T *)beta);                                       \
        else if (rsa == MR && rsb == 2 * VL) /* packed panels: constant strides, a tighter k loop */  \
            TILE_FN(m, kc, (const T *)a, MR, (const T *)b, 2 * VL, (T *)c, ldc, *(const T *)alpha,  \
                    *(const T *)beta);                                                               \
        else                                                                                         \
            TILE_FN(m, kc, (const T *)a, rsa, (const T *)b, rsb, (T *)c, ldc, *(const T *)alpha,      \
                    *(const T *)beta);                                                               \
    }
