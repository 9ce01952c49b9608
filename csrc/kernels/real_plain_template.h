/* The plain loops (kernel.h gk_plain_fn; the AVX-512 tiny kernel's GK_TINY_MASKED): op(A), A plain or transposed,
 * times a plain B read in place, nothing packed or copied; written once for the zmm and ymm paths. */
/* The including header defines T, VL, PLAIN_FN (the gk_plain_fn's name; its helpers' prefix) and the ISA's operations
 * on a vector of VL values (PL_V) and a chunk's lane mask (PL_M): PL_MASK(n) (the first n lanes; n >= VL: all),
 * PL_ZERO(), PL_LOADU(p), PL_MASKZ_LOADU(m, p), PL_STOREU(p, v), PL_MASK_STOREU(p, m, v), PL_SET1(x), PL_FMADD(a, b,
 * c), PL_MUL(a, b); PL_RMAX (rows of a block of one or two chunks, or three with PL_R4MAX: 8 or 6), PL_R4MAX (rows of
 * a block of four chunks; 0: no such blocks), PL_HALF (1: it defined PLAIN_FN##_masked_<R>x0, R = 1..PL_RMAX, for a
 * last chunk of at most VL / 2 columns) and PL_WHOLE_LOADS (1: B's last chunk loaded whole in the k loop where the
 * group's columns allow, for an ISA whose masked loads cost more than plain ones: AVX2's maskload, and AVX-512's by a
 * little) and PL_NARROW_TRANSA (1: a transposed A's narrow products run their row blocks in one call too; ymm gains
 * by it, zmm loses). Optionally PL_DOT_TAIL: the kernel's dot path (a gk_dot_fn) for a last chunk of at most 4
 * columns (below). See docs/decisions.md, PL_WHOLE_LOADS and PL_NARROW_TRANSA. */
#define PL_CAT_(a, b) a##b
#define PL_CAT(a, b) PL_CAT_(a, b)
#define PL_FN(name) PL_CAT(PLAIN_FN, name)

/* R rows x C chunks of VL columns (constants at each call), the last chunk's columns masked (N - (C - 1) * VL of
 * them, up to VL): B read in place (a masked load touches no byte past N, so no zero-padded copy of B), alpha and beta
 * applied to the sums in registers and C written once, its last chunk by a masked store (C not read when beta is 0).
 * A's (r, k) at a + r * lda + k * csa. Where the chunked loops ran them, B was copied zero-padded and the last
 * chunk's sums went through a scratch tile: on Zen 4 a 12^3 float32 product took longer than a 16^3 one (figures:
 * docs/decisions.md, tiny_sgemm_avx512_ymm and tiny_dgemm_avx512_ymm). */
static GK_FORCEINLINE void PL_FN(_masked_block)(const int R, const int C, int64_t N, int64_t K, T alpha, const T *a,
                                                int64_t lda, int64_t csa, const T *b, int64_t ldb, T beta, T *c,
                                                int64_t ldc) {
    const int64_t last = N - (int64_t)(C - 1) * VL; /* the last chunk's columns */
    const int last_whole = last >= VL;
    const PL_M m = PL_MASK(last);
    /* one array per chunk (GCC left one 12-vector array in memory) */
    PL_V acc0[8], acc1[8], acc2[8], acc3[8];
#pragma GCC unroll 8
    for (int r = 0; r < R; r++) acc0[r] = acc1[r] = acc2[r] = acc3[r] = PL_ZERO();
#define PL_KLOOP(MASKED)                                                                                        \
    for (int64_t k = 0; k < K; k++) {                                                                          \
        const T *bk = b + k * ldb, *ak = a + k * csa;                                                          \
        const PL_V b0 = PL_B(MASKED, 0), b1 = C >= 2 ? PL_B(MASKED, 1) : b0;                                   \
        const PL_V b2 = C >= 3 ? PL_B(MASKED, 2) : b0, b3 = C >= 4 ? PL_B(MASKED, 3) : b0;                     \
        _Pragma("GCC unroll 8") for (int r = 0; r < R; r++) {                                                  \
            const PL_V ar = PL_SET1(ak[r * lda]);                                                              \
            acc0[r] = PL_FMADD(ar, b0, acc0[r]);                                                               \
            if (C >= 2) acc1[r] = PL_FMADD(ar, b1, acc1[r]);                                                   \
            if (C >= 3) acc2[r] = PL_FMADD(ar, b2, acc2[r]);                                                   \
            if (C >= 4) acc3[r] = PL_FMADD(ar, b3, acc3[r]);                                                   \
        }                                                                                                      \
    }
#define PL_B(MASKED, q) (MASKED && (q) == C - 1 ? PL_MASKZ_LOADU(m, bk + (q) * VL) : PL_LOADU(bk + (q) * VL))
    if (PL_WHOLE_LOADS && last_whole) PL_KLOOP(0) else PL_KLOOP(1)
#undef PL_B
#undef PL_KLOOP
    const PL_V va = PL_SET1(alpha), vb = PL_SET1(beta);
#pragma GCC unroll 8
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int q = 0; q < C; q++) {
            T *cq = c + r * ldc + q * VL;
            PL_V v = PL_MUL(q == 0 ? acc0[r] : q == 1 ? acc1[r] : q == 2 ? acc2[r] : acc3[r], va);
            if (q < C - 1 || last_whole) { /* whole chunks: plain loads and stores */
                if (beta != (T)0) v = PL_FMADD(PL_LOADU(cq), vb, v);
                PL_STOREU(cq, v);
            } else {
                if (beta != (T)0) v = PL_FMADD(PL_MASKZ_LOADU(m, cq), vb, v);
                PL_MASK_STOREU(cq, m, v);
            }
        }
}
/* Out of line, one function per (R, C) (inlined into the driver, the loops ran out of registers): _masked_RxC one
 * group of C chunks (min(N, C * VL) columns, the number returned), _groups_RxC (C >= 2) every group the N columns
 * from b and c need while more than C - 1 chunks are left (the last group masked; the columns done returned). A call
 * per group costs narrow products much; where one group is all, the group loop's set-up costs more than a call, hence
 * both (see docs/decisions.md, PL_MASKED / PL_GROUPS). */
#define PL_MASKED(R, C)                                                                                        \
    static __attribute__((noinline)) int64_t PL_FN(_masked_##R##x##C)(int64_t N, int64_t K, T alpha,           \
        const T *a, int64_t lda, int64_t csa, const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {            \
        PL_FN(_masked_block)(R, C, N, K, alpha, a, lda, csa, b, ldb, beta, c, ldc);                            \
        return N < C * VL ? N : C * VL;                                                                        \
    }
#define PL_GROUPS(R, C)                                                                                        \
    static __attribute__((noinline)) int64_t PL_FN(_groups_##R##x##C)(int64_t N, int64_t K, T alpha,           \
        const T *a, int64_t lda, int64_t csa, const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {            \
        int64_t j = 0;                                                                                         \
        do {                                                                                                   \
            PL_FN(_masked_block)(R, C, N - j, K, alpha, a, lda, csa, b + j, ldb, beta, c + j, ldc);            \
            j += C * VL;                                                                                       \
        } while (N - j > (C - 1) * VL);                                                                        \
        return j < N ? j : N;                                                                                  \
    }
#define PL_ROWS6(F, C) F(1, C) F(2, C) F(3, C) F(4, C) F(5, C) F(6, C)
#define PL_TABLE6(F, C) PL_FN(_##F##_1x##C), PL_FN(_##F##_2x##C), PL_FN(_##F##_3x##C), PL_FN(_##F##_4x##C), \
                        PL_FN(_##F##_5x##C), PL_FN(_##F##_6x##C)
#if PL_RMAX == 8 /* every row count of a block of one to three chunks: definitions, table */
#define PL_ROWS(F, C) PL_ROWS6(F, C) F(7, C) F(8, C)
#define PL_TABLE(F, C) PL_TABLE6(F, C), PL_FN(_##F##_7x##C), PL_FN(_##F##_8x##C)
#else
#define PL_ROWS(F, C) PL_ROWS6(F, C)
#define PL_TABLE(F, C) PL_TABLE6(F, C)
#endif
PL_ROWS(PL_MASKED, 1)
PL_ROWS(PL_MASKED, 2)
#if PL_R4MAX /* four chunks at a time while more than three are left: the groups of two never more than one */
PL_ROWS6(PL_MASKED, 4)
PL_ROWS6(PL_GROUPS, 4)
/* Three chunks left: one group of three in blocks of PL_RMAX rows (24 sums), not two chunks and then one, whose pass
 * spent a broadcast of A on each FMA and read A again (see docs/decisions.md, PL_MASKED(R, 3)). */
PL_ROWS(PL_MASKED, 3)
#else
PL_ROWS(PL_GROUPS, 2)
#endif
/* Narrow products (one group of one or two chunks a row block), M a multiple of R: every R-row block in one call, as
 * the groups above do for wide ones, saving a call per block (see docs/decisions.md, PL_ROW_BLOCKS). */
#define PL_ROW_BLOCKS(R, C)                                                                                    \
    static __attribute__((noinline)) void PL_FN(_row_blocks_##R##x##C)(int64_t M, int64_t N, int64_t K, T alpha, \
        const T *a, int64_t lda, int64_t csa, const T *b, int64_t ldb, T beta, T *c, int64_t ldc) {            \
        for (int64_t i = 0; i < M; i += R)                                                                     \
            PL_FN(_masked_block)(R, C, N, K, alpha, a + i * lda, lda, csa, b, ldb, beta, c + i * ldc, ldc);    \
    }
#define PL_ROW_BLOCKS_EXPANDED(R, C) PL_ROW_BLOCKS(R, C)
PL_ROW_BLOCKS_EXPANDED(PL_RMAX, 1)
PL_ROW_BLOCKS_EXPANDED(PL_RMAX, 2)
#if !PL_HALF /* no half-width chunk: a last chunk of any width is a masked whole one */
#define PL_CHUNKS(left) ((left) > VL ? 2 : 1)
#else
#define PL_CHUNKS(left) ((left) > VL ? 2 : (left) > VL / 2 ? 1 : 0)
#endif

#if defined(PL_DOT_TAIL)
/* A last chunk of at most 4 columns (one column block of the dot path: a quarter of a float32 vector, half a float64
 * one) against a plain A (k contiguous), K >= PL_DOT_TAIL_MIN_K: those columns by the dot path (4 x 4 blocks of sums
 * along k, every lane in use), B's few columns copied transposed PL_DOT_TAIL_KB terms at a time; the masked loops
 * spent a whole FMA on each row's few columns for every k. 5-8 columns lost, hence 4 (see docs/decisions.md,
 * PL_DOT_TAIL). */
#if !PL_R4MAX
#error "PL_DOT_TAIL's rule in _strided counts whole chunks in the groups of four"
#endif
#define PL_DOT_TAIL_KB 512
#define PL_DOT_TAIL_MIN_K 32 /* shorter sums do not pay for B's copied columns (docs/decisions.md, PL_DOT_TAIL_MIN_K) */
#define PL_DOT_TAIL_PAIR_MIN_K 64 /* after a pair of whole chunks (PL_FN(_strided)) */
static void PL_FN(_dot_tail)(int64_t M, int64_t n, int64_t K, T alpha, const T *A, int64_t lda, const T *B,
                             int64_t ldb, T beta, T *C, int64_t ldc) {
    T bt[4 * PL_DOT_TAIL_KB]; /* n x kb: B's columns as rows (n <= 4, one column block of the dot path) */
    const T one = (T)1;
    for (int64_t k0 = 0; k0 < K; k0 += PL_DOT_TAIL_KB) {
        const int64_t kb = K - k0 < PL_DOT_TAIL_KB ? K - k0 : PL_DOT_TAIL_KB;
        for (int64_t l = 0; l < kb; l++)
            for (int64_t j = 0; j < n; j++) bt[j * kb + l] = B[(k0 + l) * ldb + j];
        PL_DOT_TAIL(M, n, kb, &alpha, A + k0, lda, bt, kb, k0 == 0 ? &beta : &one, C, ldc);
    }
}
#endif

#if PL_R4MAX
/* Whether the groups of four chunks run one at a time down all the row blocks (its K x 4 VL strip of B staying in L1
 * while A's rows stream, the order of BLIS's loops) rather than every group along each row block (all of B read again
 * by each): for a plain A (csa 1) and more than one group, where B is past a 32 KiB L1 but within 256 KiB, a strip
 * within 32 KiB and sums of 64 terms or more; past those bounds columns outer lost (see docs/decisions.md,
 * _columns_outer). */
static inline int PL_FN(_columns_outer)(int64_t N, int64_t K, int64_t csa) {
    const int64_t b_bytes = K * N * (int64_t)sizeof(T), strip_bytes = K * 4 * VL * (int64_t)sizeof(T);
    return csa == 1 && N > 7 * VL && K >= 64 && b_bytes > 32 * 1024 && b_bytes <= 256 * 1024 &&
           strip_bytes <= 32 * 1024;
}
#endif

/* The whole product by column groups: with PL_R4MAX, four chunks at a time while more than three are left, in rows of
 * ceil(M / PL_R4MAX) near-equal blocks (24 sums, one broadcast of A per four FMAs); then (with PL_R4MAX) three
 * chunks, or two, one, or a half, in ceil(M / PL_RMAX) near-equal blocks (20 rows by 8: 6 7 7, not 8 8 4, whose 4-row
 * block waits on the FMA latency; 8-row blocks rather than 6 for two zmm chunks: fewer passes over B). */
static void PL_FN(_strided)(int64_t M, int64_t N, int64_t K, T alpha, const T *A, int64_t lda, int64_t csa,
                            const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {
#if defined(PL_DOT_TAIL)
    /* Only where the tail is a chunk of its own, after an even number of whole chunks: after an odd number it is the
     * masked last chunk of a group of four or two, and the whole chunks left would run in narrower groups. Where a
     * pair of whole chunks is left before the tail (N / VL = 2 mod 4), sums of fewer than PL_DOT_TAIL_PAIR_MIN_K
     * terms run pair and tail as one masked group of three (see docs/decisions.md, PL_DOT_TAIL_PAIR_MIN_K). */
    if (csa == 1 && N > VL && N % VL != 0 && N % VL <= 4 && N / VL % 2 == 0 && K >= PL_DOT_TAIL_MIN_K &&
        (N / VL % 4 == 0 || K >= PL_DOT_TAIL_PAIR_MIN_K)) {
        const int64_t tail = N % VL;
        PL_FN(_strided)(M, N - tail, K, alpha, A, lda, 1, B, ldb, beta, C, ldc); /* whole chunks: no tail again */
        PL_FN(_dot_tail)(M, tail, K, alpha, A, lda, B + (N - tail), ldb, beta, C + (N - tail), ldc);
        return;
    }
#endif
    typedef int64_t (*masked_fn)(int64_t, int64_t, T, const T *, int64_t, int64_t, const T *, int64_t, T, T *, int64_t);
    static const masked_fn fns[3][PL_RMAX + 1] = {
#if PL_HALF
        {NULL, PL_TABLE(masked, 0)},
#else
        {NULL},
#endif
        {NULL, PL_TABLE(masked, 1)},
        {NULL, PL_TABLE(masked, 2)}};
    int64_t j0 = 0;
#if !PL_R4MAX
    static const masked_fn groups2[PL_RMAX + 1] = {NULL, PL_TABLE(groups, 2)};
#else
    static const masked_fn fns3[PL_RMAX + 1] = {NULL, PL_TABLE(masked, 3)};
    static const masked_fn fns4[PL_R4MAX + 1] = {NULL, PL_TABLE6(masked, 4)};
    static const masked_fn groups4[PL_R4MAX + 1] = {NULL, PL_TABLE6(groups, 4)};
    if (PL_FN(_columns_outer)(N, K, csa)) { /* a group's strip of B down all the row blocks */
        const int64_t blocks = (M + PL_R4MAX - 1) / PL_R4MAX;
        do {
            for (int64_t bi = 0; bi < blocks; bi++) {
                const int64_t i0 = M * bi / blocks, rows = M * (bi + 1) / blocks - i0;
                fns4[rows](N - j0, K, alpha, A + i0 * lda, lda, 1, B + j0, ldb, beta, C + i0 * ldc + j0, ldc);
            }
            j0 += 4 * VL;
        } while (N - j0 > 3 * VL);
    } else if (N > 3 * VL) { /* groups of four chunks while more than three are left (the last one's tail masked) */
        const int64_t blocks = (M + PL_R4MAX - 1) / PL_R4MAX;
        for (int64_t bi = 0; bi < blocks; bi++) {
            const int64_t i0 = M * bi / blocks, rows = M * (bi + 1) / blocks - i0;
            j0 = (N > 7 * VL ? groups4 : fns4)[rows](N, K, alpha, A + i0 * lda, lda, csa, B, ldb, beta, C + i0 * ldc,
                                                     ldc);
        }
    }
#endif
    /* narrow: all but the last 1-2 blocks' rows */
    if (N <= 2 * VL && PL_CHUNKS(N) >= 1 && M >= 4 * PL_RMAX && (csa == 1 || PL_NARROW_TRANSA)) {
        typedef void (*row_blocks_fn)(int64_t, int64_t, int64_t, T, const T *, int64_t, int64_t, const T *, int64_t, T,
                                      T *, int64_t);
        static const row_blocks_fn row_blocks[2] = {PL_CAT(PL_FN(_row_blocks_), PL_CAT(PL_RMAX, x1)),
                                                    PL_CAT(PL_FN(_row_blocks_), PL_CAT(PL_RMAX, x2))};
        const int64_t whole = (M / PL_RMAX - 1) * PL_RMAX;
        row_blocks[PL_CHUNKS(N) - 1](whole, N, K, alpha, A, lda, csa, B, ldb, beta, C, ldc);
        A += whole * lda;
        C += whole * ldc;
        M -= whole;
    }
    const int64_t blocks = (M + PL_RMAX - 1) / PL_RMAX;
    for (int64_t bi = 0; bi < blocks; bi++) {
        const int64_t i0 = M * bi / blocks, rows = M * (bi + 1) / blocks - i0;
        for (int64_t j = j0; j < N;) {
            const int64_t left = N - j;
#if !PL_R4MAX
            const masked_fn fn = left > 3 * VL ? groups2[rows] : fns[PL_CHUNKS(left)][rows];
#else
            const masked_fn fn = left > 2 * VL ? fns3[rows] : fns[PL_CHUNKS(left)][rows];
#endif
            j += fn(left, K, alpha, A + i0 * lda, lda, csa, B + j, ldb, beta, C + i0 * ldc + j, ldc);
        }
    }
}
/* Columns of C one pass of a row block over A covers (its widest column group), for the kernel table's
 * plain_group_cols. */
enum { PL_CAT(PLAIN_FN, _group_cols) = (PL_R4MAX ? 4 : 2) * VL };
/* The kernel's `plain` entry (gk_plain_fn): any product of a plain B by the same loops, A plain or transposed
 * (broadcast from A^T's column: row r's k-th value at A + k * lda + r). */
static void PLAIN_FN(int64_t M, int64_t N, int64_t K, const void *alpha, const void *A, int64_t lda, int transa,
                     const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc) {
    PL_FN(_strided)(M, N, K, *(const T *)alpha, (const T *)A, transa ? 1 : lda, transa ? lda : 1, (const T *)B, ldb,
                    *(const T *)beta, (T *)C, ldc);
}
#undef PL_MASKED
#undef PL_GROUPS
#undef PL_ROW_BLOCKS
#undef PL_ROW_BLOCKS_EXPANDED
#undef PL_ROWS6
#undef PL_ROWS
#undef PL_V
#undef PL_M
#undef PL_MASK
#undef PL_ZERO
#undef PL_LOADU
#undef PL_MASKZ_LOADU
#undef PL_STOREU
#undef PL_MASK_STOREU
#undef PL_SET1
#undef PL_FMADD
#undef PL_MUL
#undef PL_RMAX
#undef PL_R4MAX
#undef PL_HALF
#undef PL_WHOLE_LOADS
#undef PL_NARROW_TRANSA
#undef PL_TABLE6
#undef PL_TABLE
#undef PL_CHUNKS
#undef PL_DOT_TAIL
