/* The packed 12 x (2 zmm) real k loop in inline assembly and its 12-row microkernel, written once and
 * instantiated for float (12 x 32) by sgemm_avx512.c and double (12 x 16) by dgemm_avx512.c. */
/* With intrinsics GCC spills a B vector to the stack as soon as anything else (C addresses, prefetches)
 * competes for registers (dgemm: 12 FMAs a k step read their B operand from the stack, well short of the FMA
 * bound; see docs/decisions.md, real_zmm_asm.h). zmm0..23 accumulate (row i in zmm
 * 2i and 2i+1), zmm24/25 hold B's two vectors of one k, zmm26/27 alternate as A's broadcasts; four k per
 * iteration. A streams from L2 and is prefetched 16 k ahead; the B micro-panel is reused across the A
 * panels and stays near.
 * The including file defines (after real_zmm_template.h, with its T, V, VOP, MR = 12, NR, VL, TILE_FN):
 *   ZA_BCAST / ZA_FMA   the broadcast and FMA mnemonics ("vbroadcastss" / "vfmadd231ps", ...)
 *   ZA_ES               element bytes (4 or 8), ZA_AB: bytes of A per k step (MR * ZA_ES)
 *   ZA_PF_A_K4(n)       the A prefetches of the n-th k step of a four-step iteration (n = 0..3), at
 *                       ZA_PF_A bytes ahead: together one prefetch per 64 bytes of the 4 * ZA_AB read
 *   ZA_SUMS_FN, ZA_KERNEL_FN  the names of the sums function and the 12-row microkernel
 *   ZA_EMBED            optional: "1to16" / "1to8": each A value folded into its two FMAs as a broadcast
 *                       memory operand instead of one vbroadcast into zmm26/27 (14 -> 26 loads but 38 -> 26
 *                       uops a k step); the file is included once per variant */
#if MR != 12 || NV != 2
#error "real_zmm_asm.h is the 12 x (2 zmm) tile"
#endif
#define ZA_STR2(x) #x
#define ZA_STR(x) ZA_STR2(x)
#define ZA_PF(off) "prefetcht0 " ZA_STR(ZA_PF_A) "+" #off "(%[a])\n\t"
#undef ZA_ROW
#if defined(ZA_EMBED)
#define ZA_ROW(i, r0, r1, bc, ao)                                                                    \
    ZA_FMA " " ao "+" ZA_STR(ZA_ES) "*" #i "(%[a])%{" ZA_EMBED "%}, %%zmm24, %%zmm" #r0 "\n\t"         \
    ZA_FMA " " ao "+" ZA_STR(ZA_ES) "*" #i "(%[a])%{" ZA_EMBED "%}, %%zmm25, %%zmm" #r1 "\n\t"
#else
#define ZA_ROW(i, r0, r1, bc, ao)                                                                    \
    ZA_BCAST " " ao "+" ZA_STR(ZA_ES) "*" #i "(%[a]), %%zmm" #bc "\n\t"                                \
    ZA_FMA " %%zmm24, %%zmm" #bc ", %%zmm" #r0 "\n\t"                                                  \
    ZA_FMA " %%zmm25, %%zmm" #bc ", %%zmm" #r1 "\n\t"
#endif
/* One k step: A at byte offset ao (a string), B at byte offset bo. */
#define ZA_KSTEP(ao, bo)                                                                             \
    "vmovups " #bo "(%[b]), %%zmm24\n\t"                                                             \
    "vmovups " #bo "+64(%[b]), %%zmm25\n\t"                                                          \
    ZA_ROW(0, 0, 1, 26, ao) ZA_ROW(1, 2, 3, 27, ao) ZA_ROW(2, 4, 5, 26, ao)                          \
    ZA_ROW(3, 6, 7, 27, ao) ZA_ROW(4, 8, 9, 26, ao) ZA_ROW(5, 10, 11, 27, ao)                        \
    ZA_ROW(6, 12, 13, 26, ao) ZA_ROW(7, 14, 15, 27, ao) ZA_ROW(8, 16, 17, 26, ao)                    \
    ZA_ROW(9, 18, 19, 27, ao) ZA_ROW(10, 20, 21, 26, ao) ZA_ROW(11, 22, 23, 27, ao)
#define ZA_K4                                                                                        \
    ZA_PF_A_K4(0) ZA_KSTEP("0", 0)                                                                   \
    ZA_PF_A_K4(1) ZA_KSTEP(ZA_STR(ZA_AB), 128)                                                       \
    ZA_PF_A_K4(2) ZA_KSTEP(ZA_STR(ZA_AB) "*2", 256)                                                  \
    ZA_PF_A_K4(3) ZA_KSTEP(ZA_STR(ZA_AB) "*3", 384)                                                  \
    "add $" ZA_STR(ZA_AB) "*4, %[a]\n\t"                                                            \
    "add $512, %[b]\n\t"
#define ZA_ZERO(i) "vpxord %%zmm" #i ", %%zmm" #i ", %%zmm" #i "\n\t"
#define ZA_SAVE(i) "vmovaps %%zmm" #i ", 64*" #i "(%[s])\n\t"
#define ZA_ALL24(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) \
                    X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23)

/* s[12][NR] (64-byte aligned) = A micro-panel (12 x kc, packed) times B micro-panel (kc x NR, packed), with C's
 * prefetches spread over the k loop, one row (two lines, ldc elements apart from c) per four-k iteration:
 *   - the first ahead_rows iterations start the rows two column panels on (c + 2 NR: the driver's jr loop reaches
 *     them after 2 MC / MR calls) towards L2;
 *   - ZA_PF_C_ROWS iterations, ending ZA_PF_C_LAST iterations before the end, bring this tile's 12 rows into L1
 *     for the epilogue that follows (a k block too short for them prefetches the rows left at once).
 * Issued as bursts they waited on the line fill buffers that A's and B's streams hold (see docs/decisions.md,
 * ZA_PF_C_ROWS). */
#define ZA_PF_C_ROWS 12
#define ZA_PF_C_LAST 4
#define ZA_PF_CROW "prefetcht0 (%[cp])\n\tprefetcht0 64(%[cp])\n\tadd %[ldcb], %[cp]\n\t"
#define ZA_PF_NROW "prefetcht1 (%[np])\n\tprefetcht1 64(%[np])\n\tadd %[ldcb], %[np]\n\t"
static void ZA_SUMS_FN(int64_t kc, const T *a, const T *b, T *s, const T *c, int64_t ldc, int64_t ahead_rows) {
    int64_t n4 = kc >> 2, rem = kc & 3;
    int64_t last = GK_MIN(n4, (int64_t)ZA_PF_C_LAST);
    n4 -= last;
    int64_t pf = GK_MIN(n4, (int64_t)ZA_PF_C_ROWS);
    n4 -= pf;
    int64_t burst = ZA_PF_C_ROWS - pf, head = GK_MIN(n4, ahead_rows);
    n4 -= head;
    const int64_t ldcb = ldc * ZA_ES;
    const T *cp = c, *np = c + 2 * NR;
    __asm__ volatile(
        ZA_ALL24(ZA_ZERO)
        "test %[head], %[head]\n\t"
        "jz 7f\n\t"
        ".p2align 5\n"
        "8:\n\t"
        ZA_K4
        ZA_PF_NROW
        "dec %[head]\n\t"
        "jnz 8b\n"
        "7:\n\t"
        "test %[n4], %[n4]\n\t"
        "jz 5f\n\t"
        ".p2align 5\n"
        "1:\n\t"
        ZA_K4
        "dec %[n4]\n\t"
        "jnz 1b\n"
        "5:\n\t"
        "test %[burst], %[burst]\n\t"
        "jz 9f\n"
        "10:\n\t"
        ZA_PF_CROW
        "dec %[burst]\n\t"
        "jnz 10b\n"
        "9:\n\t"
        "test %[pf], %[pf]\n\t"
        "jz 11f\n\t"
        ".p2align 5\n"
        "6:\n\t"
        ZA_K4
        ZA_PF_CROW
        "dec %[pf]\n\t"
        "jnz 6b\n"
        "11:\n\t"
        "test %[last], %[last]\n\t"
        "jz 2f\n\t"
        ".p2align 5\n"
        "12:\n\t"
        ZA_K4
        "dec %[last]\n\t"
        "jnz 12b\n"
        "2:\n\t"
        "test %[rem], %[rem]\n\t"
        "jz 4f\n"
        "3:\n\t"
        ZA_KSTEP("0", 0)
        "add $" ZA_STR(ZA_AB) ", %[a]\n\t"
        "add $128, %[b]\n\t"
        "dec %[rem]\n\t"
        "jnz 3b\n"
        "4:\n\t"
        ZA_ALL24(ZA_SAVE)
        : [a] "+r"(a), [b] "+r"(b), [n4] "+r"(n4), [rem] "+r"(rem), [head] "+r"(head), [burst] "+r"(burst),
          [pf] "+r"(pf), [last] "+r"(last), [cp] "+r"(cp), [np] "+r"(np)
        : [s] "r"(s), [ldcb] "r"(ldcb)
        : "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
          "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20",
          "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27");
}

static void ZA_KERNEL_FN(int64_t kc, const void *GK_RESTRICT av, int64_t rsa, const void *GK_RESTRICT bv,
                         int64_t rsb, void *GK_RESTRICT cv, int64_t ldc, const void *alpha_p,
                         const void *beta_p) {
    const T *a = (const T *)av, *b = (const T *)bv;
    T *c = (T *)cv;
    const T alpha = *(const T *)alpha_p, beta = *(const T *)beta_p;
    if (rsa != MR || rsb != NR) { /* an operand read in place (no-pack path): the strided body */
        TILE_FN(MR, kc, a, rsa, b, rsb, c, ldc, alpha, beta);
        return;
    }
    /* the sums also start these rows' C two column panels on towards L2 (a prefetch past the matrix end is harmless;
     * see docs/decisions.md, ZA_SUMS_FN) */
    GK_ALIGN64 T s[MR * NR];
    ZA_SUMS_FN(kc, a, b, s, c, ldc, MR);
    const V va = VOP(set1)(alpha), vb = VOP(set1)(beta);
    for (int i = 0; i < MR; i++)
        for (int v = 0; v < NV; v++) {
            T *cp = c + i * ldc + VL * v;
            const V x = VOP(mul)(va, VOP(load)(s + i * NR + VL * v));
            VOP(storeu)(cp, beta == (T)0 ? x : VOP(fmadd)(vb, VOP(loadu)(cp), x));
        }
}
