/* The GEMV kernels (a matrix S streamed once, in place, against one or two short vectors x), written once
 * and instantiated for float and double by every ISA's kernel file (and the portable one, on scalars). */
/* The including file defines: T, GEMV_ROWS_FN, GEMV_DOTS_FN and, for vectors, VL (lanes) and VOP (the x86
 * files: V and VOP(op) name the intrinsics); without VOP the kernels run on scalars (the portable files;
 * the compiler may vectorise them). S may hold a narrower storage type widened as it is read (float16 /
 * bfloat16 bits for float sums): GV_S_T, GV_LOAD_S(p) (VL values from p widened to a vector) and GV_S_VAL(v)
 * (one value widened); by default S holds T. GV_MANY_ROWS 1 (the including file) adds the many-rows kernels
 * below: gemv_dots and gemv_rows then take 3 rows of x or more in one pass over S.
 *
 * gemv_rows: y[i][j] = alpha * sum_l x[i][l] S[l][j] + beta * y[i][j]  (S: k rows of n, lds apart)
 * gemv_dots: y[i][j] = alpha * sum_l x[i][l] S[j][l] + beta * y[i][j]  (S: n rows of k, lds apart)
 * x: m rows of k contiguous values, ldx apart; y[i][j] at y + i * rsy + j * csy; beta == 0: y not read.
 * Both stream S in cache-line steps from several rows at once (independent streams for the memory
 * system, independent sums for the FMA pipes); pf > 0 requests every stream's line pf elements ahead. */
#if !defined(VOP)
#define VL 1
#define GV T
#define GV_LOAD(p) (*(p))
#define GV_SET1(x) (x)
#define GV_ZERO() ((T)0)
#define GV_FMA(a, b, c) ((a) * (b) + (c))
#define GV_ADD(a, b) ((a) + (b))
#define GV_STORE(p, v) (*(p) = (v))
#else
#define GV V
#define GV_LOAD(p) VOP(loadu)(p)
#define GV_SET1(x) VOP(set1)(x)
#define GV_ZERO() VOP(setzero)()
#define GV_FMA(a, b, c) VOP(fmadd)(a, b, c)
#define GV_ADD(a, b) VOP(add)(a, b)
#define GV_STORE(p, v) VOP(storeu)(p, v)
#endif
#ifndef GV_S_T
#define GV_S_T T
#define GV_LOAD_S(p) GV_LOAD(p)
#define GV_S_VAL(v) (v)
#endif
#ifndef GV_MANY_ROWS
#define GV_MANY_ROWS 0
#endif
#define GV_CAT_(a, b) a##b
#define GV_CAT(a, b) GV_CAT_(a, b)
#define GV_LINE ((int64_t)(64 / sizeof(GV_S_T)))   /* elements of S per cache line */
#define GV_PER_LINE ((int)(GV_LINE / VL))      /* vectors per cache line */
/* gemv_rows: the sums of a block of y, in L1 / L2. 32 KiB (4096 floats of one row, 2048 of two) streams S in longer
 * contiguous runs than 16 KiB; 64 KiB gained no more (see docs/decisions.md, GV_ACC_BYTES). */
#define GV_ACC_BYTES (32 << 10)
/* GV_SPREAD (the including file; 0 by default): an S of GK_GEMV_SPREAD_MIN_BYTES or more streams as 4 long runs, one
 * per quarter of its rows (gemv_rows) or of its columns' rows (gemv_dots), not 4-8 adjacent rows at a time: near a
 * plain 4-stream read's rate (see docs/decisions.md, GV_SPREAD). */
#ifndef GV_SPREAD
#define GV_SPREAD 0
#endif

/* The sum of one vector's lanes. */
static GK_FORCEINLINE T GV_CAT(GEMV_DOTS_FN, _hsum)(GV v) {
    T t[VL], s = (T)0;
    GV_STORE(t, v);
    for (int l = 0; l < VL; l++) s += t[l];
    return s;
}

/* y block of mm (1, 2) rows and nb columns from its sums acc (rows `lda` apart). */
static GK_FORCEINLINE void GV_CAT(GEMV_ROWS_FN, _store)(const int mm, int64_t nb, const T *acc, int64_t lda,
                                                            T alpha, T beta, T *y, int64_t rsy, int64_t csy) {
    for (int i = 0; i < mm; i++) {
        T *yi = y + i * rsy;
        if (beta == (T)0) for (int64_t j = 0; j < nb; j++) yi[j * csy] = alpha * acc[i * lda + j];
        else for (int64_t j = 0; j < nb; j++) yi[j * csy] = alpha * acc[i * lda + j] + beta * yi[j * csy];
    }
}

/* acc[i][0:nb] += sum_{q < RP} x[i][q step] S[q step][0:nb] for mm rows: RP rows of S, `step` rows apart,
 * stream together, one cache line of each per step. */
static GK_FORCEINLINE void GV_CAT(GEMV_ROWS_FN, _pass)(const int mm, const int RP, int64_t nb, const T *x,
                                                           int64_t ldx, const GV_S_T *S, int64_t lds, T *acc,
                                                           int64_t lda, int64_t pf, int64_t step) {
    GV xv[2][8];
    const GV_S_T *s[8];
#pragma GCC unroll 8
    for (int q = 0; q < RP; q++) {
        s[q] = S + q * step * lds;
#pragma GCC unroll 2
        for (int i = 0; i < mm; i++) xv[i][q] = GV_SET1(x[i * ldx + q * step]);
    }
    const int64_t nl = nb / GV_LINE * GV_LINE;
    int64_t j = 0;
    for (; j < nl; j += GV_LINE) {
        if (pf > 0) {
#pragma GCC unroll 8
            for (int q = 0; q < RP; q++) GK_PREFETCH(s[q] + j + pf);
        }
#pragma GCC unroll 16
        for (int v = 0; v < GV_PER_LINE; v++) {
            const int64_t jv = j + v * VL;
            GV b[8];
#pragma GCC unroll 8
            for (int q = 0; q < RP; q++) b[q] = GV_LOAD_S(s[q] + jv);
#pragma GCC unroll 2
            for (int i = 0; i < mm; i++) {
                /* two partial sums: half the dependent chain */
                GV a0 = GV_LOAD(acc + i * lda + jv), a1 = GV_ZERO();
#pragma GCC unroll 8
                for (int q = 0; q < RP; q += 2) {
                    a0 = GV_FMA(xv[i][q], b[q], a0);
                    if (q + 1 < RP) a1 = GV_FMA(xv[i][q + 1], b[q + 1], a1);
                }
                GV_STORE(acc + i * lda + jv, GV_ADD(a0, a1));
            }
        }
    }
    for (; j < nb; j++)
#pragma GCC unroll 2
        for (int i = 0; i < mm; i++) {
            T t = (T)0;
#pragma GCC unroll 8
            for (int q = 0; q < RP; q++) t += x[i * ldx + q * step] * GV_S_VAL(s[q][j]);
            acc[i * lda + j] += t;
        }
}

/* mm (1, 2) rows of y over columns [0, n): column blocks whose sums fit GV_ACC_BYTES, each streaming all k rows of S,
 * 8 rows per pass for one vector, 4 for two (their 8 broadcasts stay in registers; 8 rows were no faster for two
 * vectors). */
static GK_FORCEINLINE void GV_CAT(GEMV_ROWS_FN, _block)(const int mm, int64_t n, int64_t k, const T *x,
                                                            int64_t ldx, const GV_S_T *S, int64_t lds, T alpha,
                                                            T beta, T *y, int64_t rsy, int64_t csy, int64_t pf) {
    GK_ALIGN64 T acc[GV_ACC_BYTES / sizeof(T)];
    const int64_t nb_max = (int64_t)(GV_ACC_BYTES / sizeof(T)) / mm / GV_LINE * GV_LINE;
    for (int64_t j0 = 0; j0 < n; j0 += nb_max) {
        const int64_t nb = GK_MIN(nb_max, n - j0);
        memset(acc, 0, sizeof(T) * (size_t)(mm * nb));
        const GV_S_T *Sj = S + j0;
        int64_t l = 0;
#if GV_SPREAD
        if (nb == n && (double)k * (double)lds * sizeof(GV_S_T) >= GK_GEMV_SPREAD_MIN_BYTES) {
            /* 4 streams over the 4 quarters of S's rows (rows l, l + k/4, ...): each then reads on along
             * its quarter, where 4-8 adjacent rows at a time restart every stream every row */
            const int64_t span = k / 4;
            for (; l < span; l++) GV_CAT(GEMV_ROWS_FN, _pass)(mm, 4, nb, x + l, ldx, Sj + l * lds, lds, acc, nb, pf, span);
            l = 4 * span;
        }
#endif
        if (mm == 1)
            for (; l + 8 <= k; l += 8) GV_CAT(GEMV_ROWS_FN, _pass)(1, 8, nb, x + l, ldx, Sj + l * lds, lds, acc, nb, pf, 1);
        for (; l + 4 <= k; l += 4) GV_CAT(GEMV_ROWS_FN, _pass)(mm, 4, nb, x + l, ldx, Sj + l * lds, lds, acc, nb, pf, 1);
        for (; l < k; l++) GV_CAT(GEMV_ROWS_FN, _pass)(mm, 1, nb, x + l, ldx, Sj + l * lds, lds, acc, nb, 0, 1);
        GV_CAT(GEMV_ROWS_FN, _store)(mm, nb, acc, nb, alpha, beta, y + j0 * csy, rsy, csy);
    }
}

#if GV_MANY_ROWS
/* ---- Many rows of x (3 or more) in one pass over S: register tiles of up to GV_MR_MM rows of x, each value
 * of S widened once per tile and used by every row of it; the rows of a pass (up to GV_MR_MAX) re-read only
 * the tile's small block of S, from L1, never S from memory again. */
#define GV_MR_MM 6     /* rows per tile: 6 x 2 vector sums, 2 vectors of S, 1 of x (15 of 16 ymm) */
#define GV_MR_MAX 16   /* rows per pass over S: their sums and x's chunk stay in L1 */
#ifndef GV_MD_KC
#define GV_MD_KC 256   /* gemv_dots: k per chunk (x's chunk of the pass's rows and JB rows of S in L1) */
#endif
#ifndef GV_MD_JB
#define GV_MD_JB 8     /* gemv_dots: S rows per block, streamed side by side */
#endif
#ifndef GV_MR_KB
#define GV_MR_KB 16    /* gemv_rows: S rows per k block, streamed side by side along a block of columns */
#endif
#ifndef GV_MR_ACC_BYTES
#define GV_MR_ACC_BYTES (64 << 10) /* gemv_rows: the sums of a pass (rows x a block of columns), in L2 */
#endif

/* sums[i * GV_MD_JB + q] (vector sums) += x[i][0:kc] . S[q][0:kc] for mm rows of x, jj (1, 2) rows of S. */
static GK_FORCEINLINE void GV_CAT(GEMV_DOTS_FN, _tile)(const int mm, const int jj, int64_t kc, const T *x,
                                                           int64_t ldx, const GV_S_T *S, int64_t lds, GV *sums) {
    GV a[GV_MR_MM][2];
#pragma GCC unroll 6
    for (int i = 0; i < mm; i++)
#pragma GCC unroll 2
        for (int q = 0; q < jj; q++) a[i][q] = sums[i * GV_MD_JB + q];
    for (int64_t p = 0; p < kc; p += VL) {
        const GV s0 = GV_LOAD_S(S + p), s1 = jj > 1 ? GV_LOAD_S(S + lds + p) : s0;
#pragma GCC unroll 6
        for (int i = 0; i < mm; i++) {
            const GV xv = GV_LOAD(x + i * ldx + p);
            a[i][0] = GV_FMA(xv, s0, a[i][0]);
            if (jj > 1) a[i][1] = GV_FMA(xv, s1, a[i][1]);
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < mm; i++)
#pragma GCC unroll 2
        for (int q = 0; q < jj; q++) sums[i * GV_MD_JB + q] = a[i][q];
}

static void GV_CAT(GEMV_DOTS_FN, _tile_any)(int mm, int jj, int64_t kc, const T *x, int64_t ldx, const GV_S_T *S,
                                                int64_t lds, GV *sums) {
#define GV_MD_CASE(R)                                                                                  \
    case R:                                                                                            \
        if (jj > 1) GV_CAT(GEMV_DOTS_FN, _tile)(R, 2, kc, x, ldx, S, lds, sums);                       \
        else GV_CAT(GEMV_DOTS_FN, _tile)(R, 1, kc, x, ldx, S, lds, sums);                              \
        break;
    switch (mm) {
        GV_MD_CASE(1) GV_MD_CASE(2) GV_MD_CASE(3) GV_MD_CASE(4) GV_MD_CASE(5) GV_MD_CASE(6)
        default: break;
    }
#undef GV_MD_CASE
}

/* gemv_dots on m >= 3 rows: blocks of GV_MD_JB rows of S in k chunks, every row of a pass (in groups of near-equal
 * size: a group of one or two would leave the FMA chains of too few sums waiting) against each chunk. */
static void GV_CAT(GEMV_DOTS_FN, _many)(int64_t m, int64_t n, int64_t k, const T *x, int64_t ldx, const GV_S_T *S,
                                            int64_t lds, T alpha, T beta, T *y, int64_t rsy, int64_t csy, int64_t pf) {
    GV sums[GV_MR_MAX * GV_MD_JB];
    const int64_t kv = k / VL * VL;
    for (int64_t i0 = 0; i0 < m; i0 += GV_MR_MAX) {
        const int mb = (int)GK_MIN((int64_t)GV_MR_MAX, m - i0);
        const int ng = (mb + GV_MR_MM - 1) / GV_MR_MM;
        const T *xb = x + i0 * ldx;
        for (int64_t j0 = 0; j0 < n; j0 += GV_MD_JB) {
            const int jb = (int)GK_MIN((int64_t)GV_MD_JB, n - j0);
            const GV_S_T *Sb = S + j0 * lds;
            for (int e = 0; e < mb * GV_MD_JB; e++) sums[e] = GV_ZERO();
            for (int64_t p0 = 0; p0 < kv; p0 += GV_MD_KC) {
                const int64_t kc = GK_MIN((int64_t)GV_MD_KC, kv - p0);
                if (pf > 0)
                    for (int q = 0; q < jb; q++)
                        for (int64_t l = 0; l < kc; l += GV_LINE) GK_PREFETCH(Sb + q * lds + p0 + l + pf);
                for (int g = 0; g < ng; g++) {
                    const int r0 = g * mb / ng, mm = (g + 1) * mb / ng - r0;
                    for (int q = 0; q < jb; q += 2)
                        GV_CAT(GEMV_DOTS_FN, _tile_any)(mm, jb - q >= 2 ? 2 : 1, kc, xb + r0 * ldx + p0, ldx,
                                                        Sb + q * lds + p0, lds, sums + r0 * GV_MD_JB + q);
                }
            }
            for (int i = 0; i < mb; i++)
                for (int q = 0; q < jb; q++) {
                    T t = kv > 0 ? GV_CAT(GEMV_DOTS_FN, _hsum)(sums[i * GV_MD_JB + q]) : (T)0;
                    for (int64_t r = kv; r < k; r++) t += xb[i * ldx + r] * GV_S_VAL(Sb[q * lds + r]);
                    T *yq = y + (i0 + i) * rsy + (j0 + q) * csy;
                    *yq = beta == (T)0 ? alpha * t : alpha * t + beta * *yq;
                }
        }
    }
}

/* acc[i][0 : nv VL] (rows lda apart) = (first ? 0 : acc) + sum_{l < kb} x[i][l] S[l][0 : nv VL], mm rows, nv (1, 2)
 * vectors of columns. */
static GK_FORCEINLINE void GV_CAT(GEMV_ROWS_FN, _tile)(const int mm, const int nv, int64_t kb, const T *x,
                                                           int64_t ldx, const GV_S_T *S, int64_t lds, T *acc,
                                                           int64_t lda, int first) {
    GV a[GV_MR_MM][2];
#pragma GCC unroll 6
    for (int i = 0; i < mm; i++)
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++) a[i][v] = first ? GV_ZERO() : GV_LOAD(acc + i * lda + v * VL);
    for (int64_t l = 0; l < kb; l++) {
        const GV_S_T *s = S + l * lds;
        const GV s0 = GV_LOAD_S(s), s1 = nv > 1 ? GV_LOAD_S(s + VL) : s0;
#pragma GCC unroll 6
        for (int i = 0; i < mm; i++) {
            const GV xb = GV_SET1(x[i * ldx + l]);
            a[i][0] = GV_FMA(xb, s0, a[i][0]);
            if (nv > 1) a[i][1] = GV_FMA(xb, s1, a[i][1]);
        }
    }
#pragma GCC unroll 6
    for (int i = 0; i < mm; i++)
#pragma GCC unroll 2
        for (int v = 0; v < nv; v++) GV_STORE(acc + i * lda + v * VL, a[i][v]);
}

static void GV_CAT(GEMV_ROWS_FN, _tile_any)(int mm, int nv, int64_t kb, const T *x, int64_t ldx, const GV_S_T *S,
                                                int64_t lds, T *acc, int64_t lda, int first) {
#define GV_MR_CASE(R)                                                                                  \
    case R:                                                                                            \
        if (nv > 1) GV_CAT(GEMV_ROWS_FN, _tile)(R, 2, kb, x, ldx, S, lds, acc, lda, first);            \
        else GV_CAT(GEMV_ROWS_FN, _tile)(R, 1, kb, x, ldx, S, lds, acc, lda, first);                   \
        break;
    switch (mm) {
        GV_MR_CASE(1) GV_MR_CASE(2) GV_MR_CASE(3) GV_MR_CASE(4) GV_MR_CASE(5) GV_MR_CASE(6)
        default: break;
    }
#undef GV_MR_CASE
}

/* gemv_rows on m >= 3 rows: the sums of a pass over a block of columns in acc, S's rows GV_MR_KB at a time along the
 * block, each 2-vector strip of them against every group of rows while it is in L1. */
static void GV_CAT(GEMV_ROWS_FN, _many)(int64_t m, int64_t n, int64_t k, const T *x, int64_t ldx, const GV_S_T *S,
                                            int64_t lds, T alpha, T beta, T *y, int64_t rsy, int64_t csy, int64_t pf) {
    GK_ALIGN64 T acc[GV_MR_ACC_BYTES / sizeof(T)];
    for (int64_t i0 = 0; i0 < m; i0 += GV_MR_MAX) {
        const int mb = (int)GK_MIN((int64_t)GV_MR_MAX, m - i0);
        const int ng = (mb + GV_MR_MM - 1) / GV_MR_MM;
        const T *xb = x + i0 * ldx;
        const int64_t nb_max = (int64_t)(GV_MR_ACC_BYTES / sizeof(T)) / mb / GV_LINE * GV_LINE;
        for (int64_t j0 = 0; j0 < n; j0 += nb_max) {
            const int64_t nb = GK_MIN(nb_max, n - j0), n2 = nb / (2 * VL) * (2 * VL), n1 = nb / VL * VL;
            const GV_S_T *Sj = S + j0;
            for (int64_t l0 = 0; l0 < k; l0 += GV_MR_KB) {
                const int64_t kb = GK_MIN((int64_t)GV_MR_KB, k - l0);
                const GV_S_T *Sl = Sj + l0 * lds;
                const int first = l0 == 0;
                for (int64_t c = 0; c < n1; c += 2 * VL) {
                    const int nv = c < n2 ? 2 : 1;
                    if (pf > 0 && c % GV_LINE == 0)
                        for (int64_t l = 0; l < kb; l++) GK_PREFETCH(Sl + l * lds + c + pf);
                    for (int g = 0; g < ng; g++) {
                        const int r0 = g * mb / ng, mm = (g + 1) * mb / ng - r0;
                        GV_CAT(GEMV_ROWS_FN, _tile_any)(mm, nv, kb, xb + r0 * ldx + l0, ldx, Sl + c, lds,
                                                        acc + r0 * nb + c, nb, first);
                    }
                }
            }
            for (int i = 0; i < mb; i++) /* the columns past the last whole vector */
                for (int64_t j = n1; j < nb; j++) {
                    T t = (T)0;
                    for (int64_t l = 0; l < k; l++) t += xb[i * ldx + l] * GV_S_VAL(Sj[l * lds + j]);
                    acc[i * nb + j] = t;
                }
            GV_CAT(GEMV_ROWS_FN, _store)(mb, nb, acc, nb, alpha, beta, y + i0 * rsy + j0 * csy, rsy, csy);
        }
    }
}
#undef GV_MR_MM
#undef GV_MR_MAX
#undef GV_MD_KC
#undef GV_MD_JB
#undef GV_MR_KB
#undef GV_MR_ACC_BYTES
#endif

static void GEMV_ROWS_FN(int64_t m, int64_t n, int64_t k, const void *alpha_p, const void *xv, int64_t ldx,
                         const void *Sv, int64_t lds, const void *beta_p, void *yv, int64_t rsy, int64_t csy,
                         int64_t pf) {
    const T *x = (const T *)xv;
    const GV_S_T *S = (const GV_S_T *)Sv;
    T *y = (T *)yv;
    const T alpha = *(const T *)alpha_p, beta = *(const T *)beta_p;
#if GV_MANY_ROWS
    if (m >= 3) {
        GV_CAT(GEMV_ROWS_FN, _many)(m, n, k, x, ldx, S, lds, alpha, beta, y, rsy, csy, pf);
        return;
    }
#endif
    for (int64_t i = 0; i < m; i += 2) {
        if (m - i >= 2) GV_CAT(GEMV_ROWS_FN, _block)(2, n, k, x + i * ldx, ldx, S, lds, alpha, beta, y + i * rsy, rsy, csy, pf);
        else GV_CAT(GEMV_ROWS_FN, _block)(1, n, k, x + i * ldx, ldx, S, lds, alpha, beta, y + i * rsy, rsy, csy, pf);
    }
}

/* y[i][q step] for mm (1, 2) rows of x against JJ rows of S (`step` rows apart), as dot products along k:
 * the JJ rows stream together one cache line per step into mm x JJ vector sums, reduced at the end. */
static GK_FORCEINLINE void GV_CAT(GEMV_DOTS_FN, _block)(const int mm, const int JJ, int64_t k, const T *x,
                                                            int64_t ldx, const GV_S_T *S, int64_t lds, T alpha,
                                                            T beta, T *y, int64_t rsy, int64_t csy, int64_t pf,
                                                            int64_t step) {
    lds *= step;
    csy *= step;
    /* NA independent sums per dot product: one for blocks of 8 (8 chains already), four for 1 or 2 dot products,
     * which a single chain would hold to one FMA latency per vector */
    const int NA = mm * JJ <= 2 ? 4 : 1;
    const int SV = NA > GV_PER_LINE ? NA : GV_PER_LINE;   /* vectors per step: whole cache lines */
    GV acc[2][8][4];
#pragma GCC unroll 2
    for (int i = 0; i < mm; i++)
#pragma GCC unroll 8
        for (int q = 0; q < JJ; q++)
#pragma GCC unroll 4
            for (int a = 0; a < NA; a++) acc[i][q][a] = GV_ZERO();
    const int64_t ks = k / (SV * VL) * (SV * VL);
    int64_t p = 0;
    for (; p < ks; p += SV * VL) {
        if (pf > 0) {
#pragma GCC unroll 8
            for (int q = 0; q < JJ; q++)
                for (int l = 0; l < SV * VL; l += (int)GV_LINE) GK_PREFETCH(S + q * lds + p + l + pf);
        }
#pragma GCC unroll 16
        for (int u = 0; u < SV; u++) {
            const int64_t pv = p + u * VL;
            GV xr[2];
#pragma GCC unroll 2
            for (int i = 0; i < mm; i++) xr[i] = GV_LOAD(x + i * ldx + pv);
#pragma GCC unroll 8
            for (int q = 0; q < JJ; q++) {
                const GV b = GV_LOAD_S(S + q * lds + pv);
#pragma GCC unroll 2
                for (int i = 0; i < mm; i++) acc[i][q][u % NA] = GV_FMA(xr[i], b, acc[i][q][u % NA]);
            }
        }
    }
    for (; p + VL <= k; p += VL) {   /* the last whole vectors */
        GV xr[2];
#pragma GCC unroll 2
        for (int i = 0; i < mm; i++) xr[i] = GV_LOAD(x + i * ldx + p);
#pragma GCC unroll 8
        for (int q = 0; q < JJ; q++) {
            const GV b = GV_LOAD_S(S + q * lds + p);
#pragma GCC unroll 2
            for (int i = 0; i < mm; i++) acc[i][q][0] = GV_FMA(xr[i], b, acc[i][q][0]);
        }
    }
#pragma GCC unroll 2
    for (int i = 0; i < mm; i++)
#pragma GCC unroll 8
        for (int q = 0; q < JJ; q++) {
            GV sum = acc[i][q][0];
#pragma GCC unroll 4
            for (int a = 1; a < NA; a++) sum = GV_ADD(sum, acc[i][q][a]);
            T t = k >= VL ? GV_CAT(GEMV_DOTS_FN, _hsum)(sum) : (T)0;
            for (int64_t r = p; r < k; r++) t += x[i * ldx + r] * GV_S_VAL(S[q * lds + r]);
            T *yq = y + i * rsy + q * csy;
            *yq = beta == (T)0 ? alpha * t : alpha * t + beta * *yq;
        }
}

static void GEMV_DOTS_FN(int64_t m, int64_t n, int64_t k, const void *alpha_p, const void *xv, int64_t ldx,
                         const void *Sv, int64_t lds, const void *beta_p, void *yv, int64_t rsy, int64_t csy,
                         int64_t pf) {
    const T *x = (const T *)xv;
    const GV_S_T *S = (const GV_S_T *)Sv;
    T *y = (T *)yv;
    const T alpha = *(const T *)alpha_p, beta = *(const T *)beta_p;
#if GV_MANY_ROWS
    if (m >= 3) {
        GV_CAT(GEMV_DOTS_FN, _many)(m, n, k, x, ldx, S, lds, alpha, beta, y, rsy, csy, pf);
        return;
    }
#endif
    for (int64_t i = 0; i < m; i += 2) {
        const T *xi = x + i * ldx;
        T *yi = y + i * rsy;
        int64_t j = 0;
#if GV_SPREAD
        if ((double)n * (double)lds * sizeof(GV_S_T) >= GK_GEMV_SPREAD_MIN_BYTES) { /* rows j, j + n/4, ...: 4 long runs */
            const int64_t span = n / 4;
            if (m - i >= 2)
                for (; j < span; j++) GV_CAT(GEMV_DOTS_FN, _block)(2, 4, k, xi, ldx, S + j * lds, lds, alpha, beta, yi + j * csy, rsy, csy, pf, span);
            else
                for (; j < span; j++) GV_CAT(GEMV_DOTS_FN, _block)(1, 4, k, xi, ldx, S + j * lds, lds, alpha, beta, yi + j * csy, rsy, csy, pf, span);
            j = 4 * span;
        }
#endif
        if (m - i >= 2) {
            for (; j + 4 <= n; j += 4) GV_CAT(GEMV_DOTS_FN, _block)(2, 4, k, xi, ldx, S + j * lds, lds, alpha, beta, yi + j * csy, rsy, csy, pf, 1);
            for (; j < n; j++) GV_CAT(GEMV_DOTS_FN, _block)(2, 1, k, xi, ldx, S + j * lds, lds, alpha, beta, yi + j * csy, rsy, csy, 0, 1);
        } else {
            for (; j + 8 <= n; j += 8) GV_CAT(GEMV_DOTS_FN, _block)(1, 8, k, xi, ldx, S + j * lds, lds, alpha, beta, yi + j * csy, rsy, csy, pf, 1);
            for (; j < n; j++) GV_CAT(GEMV_DOTS_FN, _block)(1, 1, k, xi, ldx, S + j * lds, lds, alpha, beta, yi + j * csy, rsy, csy, 0, 1);
        }
    }
}

#undef GV_LINE
#undef GV_PER_LINE
#undef GV_ACC_BYTES
#undef GV_SPREAD
#undef GV_S_T
#undef GV_LOAD_S
#undef GV_S_VAL
#undef GV_MANY_ROWS
