/* The GEMV kernels (a matrix S streamed once, in place, against one or two short vectors x), written once
 * and instantiated for float and double by every ISA's kernel file (and the portable one, on scalars). */
/* The including file defines: T, GEMV_ROWS_FN, GEMV_DOTS_FN and, for vectors, VL (lanes) and VOP (the x86
 * files: V and VOP(op) name the intrinsics); without VOP the kernels run on scalars (the portable files;
 * the compiler may vectorise them).
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
#define GV_CAT_(a, b) a##b
#define GV_CAT(a, b) GV_CAT_(a, b)
#define GV_LINE ((int64_t)(64 / sizeof(T)))   /* elements per cache line */
#define GV_PER_LINE ((int)(GV_LINE / VL))      /* vectors per cache line */
/* gemv_rows: the sums of a block of y, in L1 / L2. 32 KiB (4096 floats of one row, 2048 of two) streams S
 * in longer contiguous runs than 16 KiB: on Zen 2 at 4096^2 +6 % for one double vector, +10-13 % for two,
 * and no change at 1024^2 (L3-resident); 64 KiB gained no more. */
#define GV_ACC_BYTES (32 << 10)
/* GV_SPREAD (the including file; 0 by default): an S of GK_GEMV_SPREAD_MIN_BYTES or more streams as 4 long runs,
 * one per quarter of its rows (gemv_rows) or of its columns' rows (gemv_dots), not 4-8 adjacent rows at a
 * time: Zen 4, float32 4096^2 from memory, a C harness 20-22 -> 26 GB/s (a plain 4-stream read 26-27.5). */
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
                                                           int64_t ldx, const T *S, int64_t lds, T *acc,
                                                           int64_t lda, int64_t pf, int64_t step) {
    GV xv[2][8];
    const T *s[8];
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
            for (int q = 0; q < RP; q++) b[q] = GV_LOAD(s[q] + jv);
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
            for (int q = 0; q < RP; q++) t += x[i * ldx + q * step] * s[q][j];
            acc[i * lda + j] += t;
        }
}

/* mm (1, 2) rows of y over columns [0, n): column blocks whose sums fit GV_ACC_BYTES, each streaming all
 * k rows of S, 8 rows per pass for one vector, 4 for two (their 8 broadcasts stay in registers; 8 rows
 * measured no faster for two vectors on Zen 2, float32 up to 12 % slower at 1024^2). */
static GK_FORCEINLINE void GV_CAT(GEMV_ROWS_FN, _block)(const int mm, int64_t n, int64_t k, const T *x,
                                                            int64_t ldx, const T *S, int64_t lds, T alpha,
                                                            T beta, T *y, int64_t rsy, int64_t csy, int64_t pf) {
    GK_ALIGN64 T acc[GV_ACC_BYTES / sizeof(T)];
    const int64_t nb_max = (int64_t)(GV_ACC_BYTES / sizeof(T)) / mm / GV_LINE * GV_LINE;
    for (int64_t j0 = 0; j0 < n; j0 += nb_max) {
        const int64_t nb = GK_MIN(nb_max, n - j0);
        memset(acc, 0, sizeof(T) * (size_t)(mm * nb));
        const T *Sj = S + j0;
        int64_t l = 0;
#if GV_SPREAD
        if (nb == n && (double)k * (double)lds * sizeof(T) >= GK_GEMV_SPREAD_MIN_BYTES) {
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

static void GEMV_ROWS_FN(int64_t m, int64_t n, int64_t k, const void *alpha_p, const void *xv, int64_t ldx,
                         const void *Sv, int64_t lds, const void *beta_p, void *yv, int64_t rsy, int64_t csy,
                         int64_t pf) {
    const T *x = (const T *)xv, *S = (const T *)Sv;
    T *y = (T *)yv;
    const T alpha = *(const T *)alpha_p, beta = *(const T *)beta_p;
    for (int64_t i = 0; i < m; i += 2) {
        if (m - i >= 2) GV_CAT(GEMV_ROWS_FN, _block)(2, n, k, x + i * ldx, ldx, S, lds, alpha, beta, y + i * rsy, rsy, csy, pf);
        else GV_CAT(GEMV_ROWS_FN, _block)(1, n, k, x + i * ldx, ldx, S, lds, alpha, beta, y + i * rsy, rsy, csy, pf);
    }
}

/* y[i][q step] for mm (1, 2) rows of x against JJ rows of S (`step` rows apart), as dot products along k:
 * the JJ rows stream together one cache line per step into mm x JJ vector sums, reduced at the end. */
static GK_FORCEINLINE void GV_CAT(GEMV_DOTS_FN, _block)(const int mm, const int JJ, int64_t k, const T *x,
                                                            int64_t ldx, const T *S, int64_t lds, T alpha,
                                                            T beta, T *y, int64_t rsy, int64_t csy, int64_t pf,
                                                            int64_t step) {
    lds *= step;
    csy *= step;
    /* NA independent sums per dot product: one for blocks of 8 (8 chains already), four for 1 or 2 dot
     * products, which a single chain would hold to one FMA latency per vector (3 x 1 x 3000: 2x) */
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
                const GV b = GV_LOAD(S + q * lds + pv);
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
            const GV b = GV_LOAD(S + q * lds + p);
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
            for (int64_t r = p; r < k; r++) t += x[i * ldx + r] * S[q * lds + r];
            T *yq = y + i * rsy + q * csy;
            *yq = beta == (T)0 ? alpha * t : alpha * t + beta * *yq;
        }
}

static void GEMV_DOTS_FN(int64_t m, int64_t n, int64_t k, const void *alpha_p, const void *xv, int64_t ldx,
                         const void *Sv, int64_t lds, const void *beta_p, void *yv, int64_t rsy, int64_t csy,
                         int64_t pf) {
    const T *x = (const T *)xv, *S = (const T *)Sv;
    T *y = (T *)yv;
    const T alpha = *(const T *)alpha_p, beta = *(const T *)beta_p;
    for (int64_t i = 0; i < m; i += 2) {
        const T *xi = x + i * ldx;
        T *yi = y + i * rsy;
        int64_t j = 0;
#if GV_SPREAD
        if ((double)n * (double)lds * sizeof(T) >= GK_GEMV_SPREAD_MIN_BYTES) { /* rows j, j + n/4, ...: 4 long runs */
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
