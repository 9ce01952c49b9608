/* The tiny-product kernel (sides <= GK_TINY_MAX, GK_TINY_DIRECT_MAX with a plain A): the whole product in
 * one pass with no tiles, plain C in fixed-width chunks (64 or 32 bytes) the ISA file's flags vectorise. */
/* The including file defines: T, TINY_FN; optionally GK_TINY_SUMS6(K, a, lda, b, ldb, c, ldc), a k loop
 * over 6 rows of a plain A and GK_TINY_W columns of b read in place, the sums stored into 6 rows ldc apart,
 * and optionally GK_TINY_SUMS5, the same over 5 rows; optionally (x86) GK_TINY_SUMS6_NT (and _SUMS5_NT
 * with SUMS5), the same with the stores non-temporal (rows 32-byte aligned; the template fences them), used
 * for streamed batches; optionally
 * GK_TINY_COPY_BT(B, ldb, K, N, NP, dst), B^T (N rows of K, ldb apart) into K rows of NP, zero past N; and
 * optionally GK_TINY_MASKED(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc) with GK_TINY_MASKED_W: the whole of
 * a plain product by masked loops, nothing copied (every plain product, but in a streamed batch only those
 * whose N is not a multiple of GK_TINY_MASKED_W). */
#include <math.h>
#define GK_TINY_CAT_(a, b) a##b
#define GK_TINY_CAT(a, b) GK_TINY_CAT_(a, b)
#define GK_TINY_ROWS 4
#define GK_TINY_W ((int)(64 / sizeof(T))) /* columns per chunk: 16 floats or 8 doubles, two ymm (or one zmm) */
/* Copies and zero fills here are a few dozen bytes: GCC's loop-to-memcpy/memset rewriting turned them into
 * `rep movs` / `rep stos` (tens of cycles to start each), a quarter of a 24^3 product's time. */
/* fp-contract: the vector sums below are written a * b + v, fused into one FMA as the scalar loop's fma() */
#if defined(__GNUC__) && !defined(__clang__)
#define GK_TINY_INLINE_COPIES __attribute__((optimize("no-tree-loop-distribute-patterns", "fp-contract=fast")))
#else
#define GK_TINY_INLINE_COPIES
#endif
/* acc += x * y, fused where the file is compiled for FMA (ISO C mode does not contract a * b + c) */
#if defined(__FMA__) || defined(__AVX512F__)
#define GK_TINY_MADD(acc, x, y) ((acc) = _Generic((acc), float: fmaf, default: fma)((x), (y), (acc)))
#else
#define GK_TINY_MADD(acc, x, y) ((acc) += (x) * (y))
#endif

/* Rows i .. i+R-1 of C (R <= GK_TINY_ROWS, a constant at each call): R independent GK_TINY_W-wide sums
 * per chunk of columns, so the multiply-adds of one k do not wait on each other's latency (one 8-wide
 * row at a time ran a single dependent chain, about a fifth of the FMA throughput). b: op(B), K rows
 * NP apart, each at least N rounded up to W long. */
#define GK_TINY_WIDE_MAX 2 /* the most vector sums per row in the GCC-vector rows below (32-byte vectors) */
#if defined(__GNUC__)
/* Half chunks' sums as 32-byte GCC vectors: the plain loop below was left scalar by
 * GCC's vectoriser for half chunks (8 floats in an AVX-512 file: 16 scalar FMAs and spills per k). */
typedef T GK_TINY_CAT(TINY_FN, _v32) __attribute__((vector_size(32), aligned(sizeof(T))));
#define GK_TINY_VEC_ROWS(VT)                                                                         \
    do {                                                                                             \
        enum { VN = (int)(sizeof(VT) / sizeof(T)) };                                                 \
        const int nv = W / VN;                                                                       \
        for (int64_t j0 = 0; j0 < N; j0 += W) {                                                      \
            VT v[GK_TINY_ROWS * GK_TINY_WIDE_MAX];                                                                  \
            for (int q = 0; q < R * nv; q++) v[q] = (VT){0};                                         \
            for (int64_t k = 0; k < K; k++) {                                                        \
                const VT *bk = (const VT *)(b + k * NP + j0);                                        \
                const T *ak = a_rows + k * ks;                                                       \
                for (int r = 0; r < R; r++) {                                                        \
                    const T a = ak[r * rs];                                                          \
                    for (int q = 0; q < nv; q++) v[r * nv + q] += a * bk[q];                         \
                }                                                                                    \
            }                                                                                        \
            const int64_t w = N - j0 < W ? N - j0 : W;                                               \
            for (int r = 0; r < R; r++) {                                                            \
                T s[GK_TINY_WIDE_MAX * VN];                                                          \
                __builtin_memcpy(s, &v[r * nv], sizeof(VT) * (size_t)nv);                            \
                T *c = C + (i + r) * ldc + j0;                                                       \
                if (beta == (T)0) for (int64_t j = 0; j < w; j++) c[j] = alpha * s[j];               \
                else for (int64_t j = 0; j < w; j++) c[j] = alpha * s[j] + beta * c[j];              \
            }                                                                                        \
        }                                                                                            \
    } while (0)
#endif
static inline GK_TINY_INLINE_COPIES void GK_TINY_CAT(TINY_FN, _rows)(const int R, const int W, int64_t i, int64_t N, int64_t NP, int64_t K, T alpha,
                                               const T *A, int64_t lda, int transa, const T *b, T beta, T *C,
                                               int64_t ldc) {
    const int64_t rs = transa ? 1 : lda, ks = transa ? lda : 1; /* op(A)[i][k] = A[i * rs + k * ks] */
    const T *a_rows = A + i * rs;
#if defined(__GNUC__)
    /* half chunks only: whole ones the plain loop below vectorises as well or better (GCC vectors of whole chunks ran
     * slower) */
    if (W < GK_TINY_W && W % (int)(32 / sizeof(T)) == 0 && R * (W / (int)(32 / sizeof(T))) <= GK_TINY_ROWS * GK_TINY_WIDE_MAX) {
        GK_TINY_VEC_ROWS(GK_TINY_CAT(TINY_FN, _v32));
        return;
    }
#endif
    for (int64_t j0 = 0; j0 < N; j0 += W) {
        T v[GK_TINY_ROWS * GK_TINY_W]; /* R x W sums, R * W <= GK_TINY_ROWS * GK_TINY_W */
        for (int r = 0; r < R; r++)
            for (int j = 0; j < W; j++) v[r * W + j] = (T)0;
        for (int64_t k = 0; k < K; k++) {
            const T *GK_RESTRICT bk = b + k * NP + j0;
            const T *ak = a_rows + k * ks;
#pragma GCC unroll 4
            for (int r = 0; r < R; r++) {
                const T a = ak[r * rs];
#pragma GCC unroll 16
                for (int j = 0; j < W; j++) GK_TINY_MADD(v[r * W + j], a, bk[j]);
            }
        }
        const int64_t w = N - j0 < W ? N - j0 : W;
        for (int r = 0; r < R; r++) {
            T *c = C + (i + r) * ldc + j0;
            if (beta == (T)0) for (int64_t j = 0; j < w; j++) c[j] = alpha * v[r * W + j];
            else for (int64_t j = 0; j < w; j++) c[j] = alpha * v[r * W + j] + beta * c[j];
        }
    }
}

static GK_TINY_INLINE_COPIES void TINY_FN(int64_t M, int64_t N, int64_t K, const void *alpha_p, const void *Av,
                                          int64_t lda, int transa, const void *Bv, int64_t ldb, int transb,
                                          const void *beta_p, void *Cv, int64_t ldc,
                                          const gk_tiny_stream_t *stream) {
    const T *A = (const T *)Av, *B = (const T *)Bv;
    T *C = (T *)Cv;
    const T alpha = *(const T *)alpha_p, beta = *(const T *)beta_p;
#if defined(GK_TINY_MASKED)
    /* the ISA's masked loops, B read in place: plain products, but those of a streamed batch (the next
     * product prefetched, C stored past the caches) only where N is not whole vectors */
    if (!transa && !transb && (N % GK_TINY_MASKED_W != 0 || !stream)) {
        GK_TINY_MASKED(M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
        return;
    }
#endif
    /* op(B) as K rows of NP (N rounded up to the chunk width W, zero-padded) contiguous values; W halved
     * for narrow products (N <= 8 floats / 4 doubles), where a full chunk would be half zeros */
    const int W = N > GK_TINY_W / 2 ? GK_TINY_W : GK_TINY_W / 2;
    int64_t NP = (N + W - 1) / W * W;
    GK_ALIGN64 T b_copy[GK_TINY_DIRECT_MAX * GK_TINY_DIRECT_MAX];
    const T *b = b_copy;
    if (!transb && NP == N) { /* whole chunks: B's rows are read in place */
        b = B;
        NP = ldb;
    } else if (transb) { /* B^T: the ISA's in-register transposes, else element by element */
#if defined(GK_TINY_COPY_BT)
        GK_TINY_COPY_BT(B, ldb, K, N, NP, b_copy);
#else
        for (int64_t k = 0; k < K; k++) {
            for (int64_t j = 0; j < N; j++) b_copy[k * NP + j] = B[j * ldb + k];
            for (int64_t j = N; j < NP; j++) b_copy[k * NP + j] = (T)0;
        }
#endif
    } else {
        for (int64_t k = 0; k < K; k++) {
            /* fixed-size chunks, the last one zero-padded element by element: a loop the compiler turns
             * into memcpy / memset calls cost more than the copy itself */
            T *bk = b_copy + k * NP;
            const T *src = B + k * ldb;
            int64_t j = 0;
            for (; j + W <= N; j += W)
                for (int q = 0; q < W; q++) bk[j + q] = src[j + q];
            if (j < NP)
                for (int q = 0; q < W; q++) bk[j + q] = j + q < N ? src[j + q] : (T)0;
        }
    }
    int64_t i6 = 0; /* rows done by the including ISA's 6- and 5-row k loops */
#if defined(GK_TINY_SUMS6)
    if (!transa && W == GK_TINY_W) { /* 6 (5) rows x one chunk at a time, A and b read in place */
        GK_ALIGN64 T s[6 * GK_TINY_W];
        /* 6-row blocks, then up to five 5-row ones where they leave no rows over (32 rows: 6 6 5 5 5 5, not
         * five 6-row blocks and 2 rows at half the FMA rate); m6 rows in 6-row blocks */
        int64_t n5 = 0;
#if defined(GK_TINY_SUMS5)
        while (n5 < 6 && (5 * n5 > M || (M - 5 * n5) % 6 != 0)) n5++;
        if (n5 == 6) n5 = 0;
#endif
        /* 8 and 9 rows go 4 + 4 (+ 1), not 6 + 2 (3), which measured slower; 7 rows keep 6 + 1 (see
         * docs/decisions.md, tiny row split) */
        const int64_t m6 = M == 8 || M == 9 ? 0 : (M - 5 * n5) / 6 * 6, rows = m6 + 5 * n5;
#if defined(GK_TINY_SUMS5)
#define GK_TINY_SUMS(R, ...) ((R) == 6 ? GK_TINY_SUMS6(__VA_ARGS__) : GK_TINY_SUMS5(__VA_ARGS__))
#else
#define GK_TINY_SUMS(R, ...) GK_TINY_SUMS6(__VA_ARGS__)
#endif
#if !defined(GK_TINY_SUMS6_NT)
#define GK_TINY_SUMS_NT GK_TINY_SUMS /* never called: nt is 0 */
#elif defined(GK_TINY_SUMS5)
#define GK_TINY_SUMS_NT(R, ...) ((R) == 6 ? GK_TINY_SUMS6_NT(__VA_ARGS__) : GK_TINY_SUMS5_NT(__VA_ARGS__))
#else
#define GK_TINY_SUMS_NT(R, ...) GK_TINY_SUMS6_NT(__VA_ARGS__)
#endif
        /* streamed (a batch from memory): the next product's A and B fetched a slice per block, so each
         * has arrived when its product starts (one burst of every line stalled the loop); C stored past
         * the caches where aligned */
        const char *pf_a = stream ? (const char *)stream->next_a : NULL;
        const char *pf_b = stream ? (const char *)stream->next_b : NULL;
        const int64_t blocks = (m6 / 6 + n5) * ((N + GK_TINY_W - 1) / GK_TINY_W);
        const int64_t a_step = pf_a && blocks ? (stream->a_bytes + 64 * blocks - 1) / (64 * blocks) * 64 : 0;
        const int64_t b_step = pf_b && blocks ? (stream->b_bytes + 64 * blocks - 1) / (64 * blocks) * 64 : 0;
#if defined(GK_TINY_SUMS6_NT)
        const int nt = stream && stream->nt_store && (uintptr_t)C % 32 == 0 && (ldc * (int64_t)sizeof(T)) % 32 == 0;
#else
        const int nt = 0;
#endif
        for (int R = 6; i6 < rows; i6 += R) {
            R = i6 < m6 ? 6 : 5;
            for (int64_t j0 = 0; j0 < N; j0 += GK_TINY_W) {
                for (int64_t q = 0; q < a_step; q += 64) GK_PREFETCH(pf_a + q);
                for (int64_t q = 0; q < b_step; q += 64) GK_PREFETCH(pf_b + q);
                pf_a += a_step;
                pf_b += b_step;
                const int64_t w = N - j0 < GK_TINY_W ? N - j0 : GK_TINY_W;
                T *c = C + i6 * ldc + j0;
                if (w == GK_TINY_W && alpha == (T)1 && beta == (T)0) { /* straight into C */
                    if (nt) GK_TINY_SUMS_NT(R, K, A + i6 * lda, lda, b + j0, NP, c, ldc);
                    else GK_TINY_SUMS(R, K, A + i6 * lda, lda, b + j0, NP, c, ldc);
                    continue;
                }
                GK_TINY_SUMS(R, K, A + i6 * lda, lda, b + j0, NP, s, GK_TINY_W);
                if (w == GK_TINY_W && beta == (T)0) {
                    for (int r = 0; r < R; r++)
                        for (int j = 0; j < GK_TINY_W; j++) c[r * ldc + j] = alpha * s[r * GK_TINY_W + j];
                } else if (w == GK_TINY_W) {
                    for (int r = 0; r < R; r++)
                        for (int j = 0; j < GK_TINY_W; j++)
                            c[r * ldc + j] = alpha * s[r * GK_TINY_W + j] + beta * c[r * ldc + j];
                } else {
                    for (int r = 0; r < R; r++)
                        for (int64_t j = 0; j < w; j++)
                            c[r * ldc + j] = beta == (T)0 ? alpha * s[r * GK_TINY_W + j]
                                                          : alpha * s[r * GK_TINY_W + j] + beta * c[r * ldc + j];
                }
            }
        }
#undef GK_TINY_SUMS
#undef GK_TINY_SUMS_NT
#if defined(GK_TINY_SUMS6_NT)
        if (nt) _mm_sfence(); /* the non-temporal stores ordered before whatever follows (another thread's read) */
#endif
    }
#endif
    /* R and W constants at every call, so each instance keeps its sums in registers; the last M % 4
     * rows go together (one row alone is one dependent chain), and 1 or 2 of them over two chunks at once
     * where N has whole pairs of chunks (2 rows x 2 chunks: 8 chains, where one chunk's 4 wait on the
     * FMA latency) */
#define GK_TINY_CALL(R, W) GK_TINY_CAT(TINY_FN, _rows)(R, W, i, N, NP, K, alpha, A, lda, transa, b, beta, C, ldc)
#define GK_TINY_ALL_ROWS(W)                                                                          \
    do {                                                                                             \
        int64_t i = i6;                                                                              \
        for (; i + GK_TINY_ROWS <= M; i += GK_TINY_ROWS) GK_TINY_CALL(GK_TINY_ROWS, W);              \
        if (M - i == 3) GK_TINY_CALL(3, W);                                                          \
        else if (M - i == 2 && N % (2 * (W)) == 0) GK_TINY_CALL(2, 2 * (W));                         \
        else if (M - i == 2) GK_TINY_CALL(2, W);                                                     \
        else if (M - i == 1 && N % (2 * (W)) == 0) GK_TINY_CALL(1, 2 * (W));                         \
        else if (M - i == 1) GK_TINY_CALL(1, W);                                                     \
    } while (0)
    if (W == GK_TINY_W) GK_TINY_ALL_ROWS(GK_TINY_W);
    else GK_TINY_ALL_ROWS(GK_TINY_W / 2);
#undef GK_TINY_ALL_ROWS
#undef GK_TINY_CALL
}

#ifdef TINY_COMPLEX_FN
/* Complex: op(B) split into real and imaginary planes of K rows x NP, so every row update is two
 * contiguous 8-wide multiply-adds per plane, vectorised as the real loop is. */
static void TINY_COMPLEX_FN(int64_t M, int64_t N, int64_t K, const void *alpha_p, const void *Av, int64_t lda,
                            int transa, int conja, const void *Bv, int64_t ldb, int transb, int conjb,
                            const void *beta_p, void *Cv, int64_t ldc) {
    const T *A = (const T *)Av, *B = (const T *)Bv;
    T *C = (T *)Cv;
    const T ar = ((const T *)alpha_p)[0], ai = ((const T *)alpha_p)[1], beta = *(const T *)beta_p;
    const T sa = conja ? (T)-1 : (T)1, sb = conjb ? (T)-1 : (T)1;
    const int64_t NP = (N + 7) & ~(int64_t)7;
    GK_ALIGN64 T bre[GK_TINY_MAX * GK_TINY_MAX], bim[GK_TINY_MAX * GK_TINY_MAX];
    for (int64_t k = 0; k < K; k++) {
        for (int64_t j = 0; j < N; j++) {
            const T *s = transb ? B + 2 * (j * ldb + k) : B + 2 * (k * ldb + j);
            bre[k * NP + j] = s[0];
            bim[k * NP + j] = sb * s[1];
        }
        for (int64_t j = N; j < NP; j++) bre[k * NP + j] = bim[k * NP + j] = (T)0;
    }
    for (int64_t i = 0; i < M; i++) {
        T *c = C + 2 * i * ldc;
        for (int64_t j0 = 0; j0 < NP; j0 += 8) {
            T vr[8] = {0, 0, 0, 0, 0, 0, 0, 0}, vi[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (int64_t k = 0; k < K; k++) {
                const T *s = transa ? A + 2 * (k * lda + i) : A + 2 * (i * lda + k);
                const T xr = s[0], xi = sa * s[1];
                const T *br = bre + k * NP + j0, *bi = bim + k * NP + j0;
                for (int j = 0; j < 8; j++) {
                    vr[j] += xr * br[j] - xi * bi[j];
                    vi[j] += xr * bi[j] + xi * br[j];
                }
            }
            const int64_t w = N - j0 < 8 ? N - j0 : 8;
            for (int64_t j = 0; j < w; j++) {
                T re = ar * vr[j] - ai * vi[j], im = ar * vi[j] + ai * vr[j];
                T *cj = c + 2 * (j0 + j);
                if (beta != (T)0) {
                    re += beta * cj[0];
                    im += beta * cj[1];
                }
                cj[0] = re;
                cj[1] = im;
            }
        }
    }
}
#endif

/* The including file's optional hooks are this template's alone: undefined here, so it need not. */
#undef GK_TINY_SUMS6
#undef GK_TINY_SUMS6_NT
#undef GK_TINY_SUMS5
#undef GK_TINY_SUMS5_NT
#undef GK_TINY_COPY_BT
#undef GK_TINY_MASKED
#undef GK_TINY_MASKED_W
