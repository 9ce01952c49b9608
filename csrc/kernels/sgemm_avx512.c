/* AVX-512F sgemm: 12 x 32 microkernel (24 zmm accumulators) with 1..11-row variants and a dot path for
 * few rows x B^T; compiled with AVX-512 flags, run only where dispatch found AVX-512. */
#include "../gemmkit_internal.h"
#include "dot_walk.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define MR 12
#define NV 2 /* zmm vectors per row of the tile */
#define NR (16 * NV)
#define PF_COLS 128 /* rows kernels with m <= 4: prefetch B this many columns ahead (4 panels) */

#define T float
#define V __m512
#define VSUF ps
#define VL 16
#define TILE_FN sgemm_tile_avx512
#include "real_zmm_template.h"

#define DEFINE_ROWS_KERNEL(m) GK_ZMM_ROWS_KERNEL(ukernel_sgemm_avx512_##m##x32, m)
DEFINE_ROWS_KERNEL(1) DEFINE_ROWS_KERNEL(2) DEFINE_ROWS_KERNEL(3) DEFINE_ROWS_KERNEL(4)
DEFINE_ROWS_KERNEL(5) DEFINE_ROWS_KERNEL(6) DEFINE_ROWS_KERNEL(7) DEFINE_ROWS_KERNEL(8)
DEFINE_ROWS_KERNEL(9) DEFINE_ROWS_KERNEL(10) DEFINE_ROWS_KERNEL(11)

#if defined(__GNUC__) && !defined(GK_NO_INLINE_ASM)
#define GK_SGEMM_ASM 1
/* The packed 12 x 32 k loop in inline assembly. With intrinsics GCC spills a B vector to the stack as
 * soon as anything else (C addresses, prefetches) competes for registers: 10-20 % at large sizes.
 * zmm0..23 accumulate (row i in zmm 2i and 2i+1), zmm24/25 hold B's 32 columns of one k, zmm26/27
 * alternate as A's broadcasts; four k per iteration. A streams from L2 and is prefetched
 * SGEMM_PF_A bytes (16 k) ahead; the B micro-panel is reused across the A panels and stays near. */
#define SGEMM_PF_A 768
#define GK_STR2(x) #x
#define GK_STR(x) GK_STR2(x)
#define SGEMM_ROW(i, r0, r1, bc, ao)                                                                 \
    "vbroadcastss " #ao "+4*" #i "(%[a]), %%zmm" #bc "\n\t"                                          \
    "vfmadd231ps %%zmm24, %%zmm" #bc ", %%zmm" #r0 "\n\t"                                             \
    "vfmadd231ps %%zmm25, %%zmm" #bc ", %%zmm" #r1 "\n\t"
#define SGEMM_KSTEP(ao, bo)                                                                          \
    "vmovups " #bo "(%[b]), %%zmm24\n\t"                                                             \
    "vmovups " #bo "+64(%[b]), %%zmm25\n\t"                                                          \
    SGEMM_ROW(0, 0, 1, 26, ao) SGEMM_ROW(1, 2, 3, 27, ao) SGEMM_ROW(2, 4, 5, 26, ao)                 \
    SGEMM_ROW(3, 6, 7, 27, ao) SGEMM_ROW(4, 8, 9, 26, ao) SGEMM_ROW(5, 10, 11, 27, ao)               \
    SGEMM_ROW(6, 12, 13, 26, ao) SGEMM_ROW(7, 14, 15, 27, ao) SGEMM_ROW(8, 16, 17, 26, ao)           \
    SGEMM_ROW(9, 18, 19, 27, ao) SGEMM_ROW(10, 20, 21, 26, ao) SGEMM_ROW(11, 22, 23, 27, ao)
/* Four k steps; the A stream is prefetched SGEMM_PF_A bytes ahead (into the next micro-panel, which the
 * driver's next call reads, near the end). */
#define SGEMM_K4                                                                                     \
    "prefetcht0 " GK_STR(SGEMM_PF_A) "(%[a])\n\t"                                                   \
    SGEMM_KSTEP(0, 0)                                                                                \
    "prefetcht0 " GK_STR(SGEMM_PF_A) "+64(%[a])\n\t"                                                \
    SGEMM_KSTEP(48, 128)                                                                             \
    "prefetcht0 " GK_STR(SGEMM_PF_A) "+128(%[a])\n\t"                                               \
    SGEMM_KSTEP(96, 256)                                                                             \
    SGEMM_KSTEP(144, 384)                                                                            \
    "add $192, %[a]\n\t"                                                                            \
    "add $512, %[b]\n\t"
#define SGEMM_ZERO(i) "vpxord %%zmm" #i ", %%zmm" #i ", %%zmm" #i "\n\t"
#define SGEMM_SAVE(i) "vmovaps %%zmm" #i ", 64*" #i "(%[s])\n\t"
#define SGEMM_ALL24(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) \
                       X(14) X(15) X(16) X(17) X(18) X(19) X(20) X(21) X(22) X(23)

/* s[12][32] (64-byte aligned) = A micro-panel (12 x kc, packed) times B micro-panel (kc x 32, packed).
 * The C tile's 24 lines (rows ldc floats apart from c) are prefetched into L1 4 * SGEMM_PF_C_ITERS k
 * before the end, for the epilogue that follows (+2-3 % at 2048: C's loads no longer wait on L2). */
#define SGEMM_PF_C_ITERS 8
#define SGEMM_PF_CROW "prefetcht0 (%[cp])\n\tprefetcht0 64(%[cp])\n\tadd %[ldcb], %[cp]\n\t"
static void sgemm_sums_avx512_12x32(int64_t kc, const float *a, const float *b, float *s, const float *c, int64_t ldc) {
    int64_t n4 = kc >> 2, rem = kc & 3, tail = 0;
    const int64_t ldcb = ldc * 4;
    const float *cp = c;
    if (n4 > SGEMM_PF_C_ITERS) { tail = SGEMM_PF_C_ITERS; n4 -= SGEMM_PF_C_ITERS; } else { tail = n4; n4 = 0; }
    __asm__ volatile(
        SGEMM_ALL24(SGEMM_ZERO)
        "test %[n4], %[n4]\n\t"
        "jz 5f\n\t"
        ".p2align 5\n"
        "1:\n\t"
        SGEMM_K4
        "dec %[n4]\n\t"
        "jnz 1b\n"
        "5:\n\t"
        SGEMM_PF_CROW SGEMM_PF_CROW SGEMM_PF_CROW SGEMM_PF_CROW SGEMM_PF_CROW SGEMM_PF_CROW
        SGEMM_PF_CROW SGEMM_PF_CROW SGEMM_PF_CROW SGEMM_PF_CROW SGEMM_PF_CROW SGEMM_PF_CROW
        "test %[tail], %[tail]\n\t"
        "jz 2f\n\t"
        ".p2align 5\n"
        "6:\n\t"
        SGEMM_K4
        "dec %[tail]\n\t"
        "jnz 6b\n"
        "2:\n\t"
        "test %[rem], %[rem]\n\t"
        "jz 4f\n"
        "3:\n\t"
        SGEMM_KSTEP(0, 0)
        "add $48, %[a]\n\t"
        "add $128, %[b]\n\t"
        "dec %[rem]\n\t"
        "jnz 3b\n"
        "4:\n\t"
        SGEMM_ALL24(SGEMM_SAVE)
        : [a] "+r"(a), [b] "+r"(b), [n4] "+r"(n4), [rem] "+r"(rem), [tail] "+r"(tail), [cp] "+r"(cp)
        : [s] "r"(s), [ldcb] "r"(ldcb)
        : "memory", "cc", "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9",
          "xmm10", "xmm11", "xmm12", "xmm13", "xmm14", "xmm15", "xmm16", "xmm17", "xmm18", "xmm19", "xmm20",
          "xmm21", "xmm22", "xmm23", "xmm24", "xmm25", "xmm26", "xmm27");
}

static void ukernel_sgemm_avx512_12x32(int64_t kc, const void *GK_RESTRICT av, int64_t rsa,
                                       const void *GK_RESTRICT bv, int64_t rsb, void *GK_RESTRICT cv,
                                       int64_t ldc, const void *alpha_p, const void *beta_p) {
    const float *a = (const float *)av, *b = (const float *)bv;
    float *c = (float *)cv;
    const float alpha = *(const float *)alpha_p, beta = *(const float *)beta_p;
    if (rsa != MR || rsb != NR) { /* an operand read in place (no-pack path): the strided body */
        sgemm_tile_avx512(MR, kc, a, rsa, b, rsb, c, ldc, alpha, beta);
        return;
    }
    /* The driver's jr loop reaches these rows' C two column panels on (after 2 * MC / MR calls):
     * start that C on its way to L2 now (a prefetch past the matrix end is harmless). +10 % at 2048+. */
    for (int i = 0; i < MR; i++) {
        _mm_prefetch((const char *)(c + i * ldc + 2 * NR), _MM_HINT_T1);
        _mm_prefetch((const char *)(c + i * ldc + 2 * NR + 16), _MM_HINT_T1);
    }
    GK_ALIGN64 float s[MR * NR];
    sgemm_sums_avx512_12x32(kc, a, b, s, c, ldc);
    const __m512 va = _mm512_set1_ps(alpha), vb = _mm512_set1_ps(beta);
    for (int i = 0; i < MR; i++)
        for (int v = 0; v < NV; v++) {
            float *cp = c + i * ldc + 16 * v;
            const __m512 x = _mm512_mul_ps(va, _mm512_load_ps(s + i * NR + 16 * v));
            _mm512_storeu_ps(cp, beta == 0.0f ? x : _mm512_fmadd_ps(vb, _mm512_loadu_ps(cp), x));
        }
}
#else
DEFINE_ROWS_KERNEL(12)
#endif

static const gk_ukernel_fn rows_kernels[MR] = {
    NULL, ukernel_sgemm_avx512_1x32, ukernel_sgemm_avx512_2x32, ukernel_sgemm_avx512_3x32,
    ukernel_sgemm_avx512_4x32, ukernel_sgemm_avx512_5x32, ukernel_sgemm_avx512_6x32,
    ukernel_sgemm_avx512_7x32, ukernel_sgemm_avx512_8x32, ukernel_sgemm_avx512_9x32,
    ukernel_sgemm_avx512_10x32, ukernel_sgemm_avx512_11x32,
};

/* C[i][j..j+NJ) for the first m (<= 4) rows, as dot products along k: B's rows stream in place,
 * 16 k at a time (masked tail), into m x NJ vector sums reduced at the end. */
static GK_FORCEINLINE void sgemm_dot_block(const int m, const int nj, int64_t k, float alpha,
                                           const float *A, int64_t lda, const float *B, int64_t ldb,
                                           float beta, float *C, int64_t ldc) {
    __m512 acc[4][4];
#pragma GCC unroll 4
    for (int i = 0; i < m; i++)
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) acc[i][j] = _mm512_setzero_ps();
    int64_t p = 0;
    for (; p + 16 <= k; p += 16) {
        __m512 bv[4], av[4];
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) {
            bv[j] = _mm512_loadu_ps(B + j * ldb + p);
            _mm_prefetch((const char *)(B + j * ldb + p + 256), _MM_HINT_T0);
        }
#pragma GCC unroll 4
        for (int i = 0; i < m; i++) av[i] = _mm512_loadu_ps(A + i * lda + p);
#pragma GCC unroll 4
        for (int i = 0; i < m; i++)
#pragma GCC unroll 4
            for (int j = 0; j < nj; j++) acc[i][j] = _mm512_fmadd_ps(av[i], bv[j], acc[i][j]);
    }
    if (p < k) {
        const __mmask16 mask = (__mmask16)((1u << (k - p)) - 1u);
        __m512 bv[4], av[4];
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) bv[j] = _mm512_maskz_loadu_ps(mask, B + j * ldb + p);
#pragma GCC unroll 4
        for (int i = 0; i < m; i++) av[i] = _mm512_maskz_loadu_ps(mask, A + i * lda + p);
#pragma GCC unroll 4
        for (int i = 0; i < m; i++)
#pragma GCC unroll 4
            for (int j = 0; j < nj; j++) acc[i][j] = _mm512_fmadd_ps(av[i], bv[j], acc[i][j]);
    }
#pragma GCC unroll 4
    for (int i = 0; i < m; i++)
#pragma GCC unroll 4
        for (int j = 0; j < nj; j++) {
            float v = alpha * _mm512_reduce_add_ps(acc[i][j]);
            C[i * ldc + j] = beta == 0.0f ? v : v + beta * C[i * ldc + j];
        }
}

#define DOT_ROWS(mm, nj)                                                                             \
    case mm:                                                                                         \
        sgemm_dot_block(mm, nj, k, alpha, A + i * lda, lda, B + j * ldb, ldb, beta, C + i * ldc + j, ldc); \
        break;

static void sgemm_dot_avx512(int64_t m, int64_t n, int64_t k, const void *alpha_p, const void *Av, int64_t lda,
                             const void *Bv, int64_t ldb, const void *beta_p, void *Cv, int64_t ldc) {
    const float *A = (const float *)Av, *B = (const float *)Bv;
    float *C = (float *)Cv;
    const float alpha = *(const float *)alpha_p, beta = *(const float *)beta_p;
    GK_DOT_WALK(m, n, DOT_ROWS);
}
#undef DOT_ROWS

#define TINY_FN tiny_sgemm_avx512
#define TINY_COMPLEX_FN tiny_cgemm_avx512
#include "real_tiny_template.h"
#undef TINY_FN
#undef TINY_COMPLEX_FN

const gk_real_kernel_t gk_sgemm_kernel_avx512 = {
    "ukernel_sgemm_avx512_12x32", 4, MR, NR, ukernel_sgemm_avx512_12x32, rows_kernels, sgemm_dot_avx512, tiny_sgemm_avx512, tiny_cgemm_avx512,
};
#endif
