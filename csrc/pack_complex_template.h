/* The complex packers (1m and native-kernel A and B), written once and instantiated for float and double
 * by pack_complex.c (T = real element type, SFX = name suffix); the formats are described in pack.h. */

/* The general A panels of both formats: alpha * op(A) (alpha NULL: 1), conjugated when sign is -1, element x
 * of the panel at k as re at d[2 * k * mr + xs * x] and im io further (1m: xs 1, io mr, the real and imaginary
 * rows; native: xs 2, io 1, (re, im) pairs); rows past mc zero. */
static void GK_CAT(pack_a_scaled_, SFX)(int transa, T sign, const T *alpha, const T *A, int64_t lda, int64_t mc,
                                        int64_t kc, int mr, int xs, int io, T *GK_RESTRICT dst) {
    for (int64_t i0 = 0; i0 < mc; i0 += mr) {
        const int64_t w = GK_MIN((int64_t)mr, mc - i0);
        T *d = dst + i0 * 2 * kc;
        for (int64_t k = 0; k < kc; k++) {
            T *GK_RESTRICT dk = d + 2 * k * mr;
            for (int64_t x = 0; x < w; x++) {
                const T *s = transa ? A + 2 * (k * lda + i0 + x) : A + 2 * ((i0 + x) * lda + k);
                T re = s[0], im = sign * s[1];
                if (alpha) {
                    const T r = alpha[0] * re - alpha[1] * im;
                    im = alpha[0] * im + alpha[1] * re;
                    re = r;
                }
                dk[xs * x] = re;
                dk[xs * x + io] = im;
            }
            for (int64_t x = w; x < mr; x++) dk[xs * x] = dk[xs * x + io] = (T)0;
        }
    }
}

void GK_CAT(gk_pack_a_1m_, SFX)(int transa, int conja, const T *alpha, const T *A, int64_t lda, int64_t mc,
                             int64_t kc, int mr, T *GK_RESTRICT dst) {
    if (!transa && !conja && alpha == NULL) { /* rows of A are already (re, im) pairs along k */
        GK_CAT(gk_pack_a_, SFX)(0, A, 2 * lda, mc, 2 * kc, mr, dst);
        return;
    }
    GK_CAT(pack_a_scaled_, SFX)(transa, conja ? (T)-1 : (T)1, alpha, A, lda, mc, kc, mr, 1, mr, dst);
}

/* The panels of a plain B (rows of (re, im) pairs along k) from column j0, w of the panel's nr / 2
 * complex columns: [re, s*im] and [-s*im, re] per pair, zero past w. Inlined where w, nr and the sign
 * are constants (full panels), so the pair loop unrolls into straight vector code. */
static GK_FORCEINLINE void GK_CAT(pack_b_1m_plain_, SFX)(const T *B, int64_t ldb, int64_t kc, int64_t j0, int64_t w,
                                                         int nr, T sign, T *dst) {
    for (int64_t k = 0; k < kc; k++) {
        const T *GK_RESTRICT s = B + 2 * (k * ldb + j0);
        T *GK_RESTRICT d0 = dst + 2 * k * nr, *GK_RESTRICT d1 = d0 + nr;
        if (k + 4 < kc) GK_PREFETCH(s + 8 * ldb);
        for (int64_t x = 0; x < 2 * w; x += 2) {
            const T re = s[x], im = sign * s[x + 1];
            d0[x] = re;
            d0[x + 1] = im;
            d1[x] = -im;
            d1[x + 1] = re;
        }
        for (int64_t x = 2 * w; x < nr; x++) d0[x] = d1[x] = (T)0;
    }
}

void GK_CAT(gk_pack_b_1m_, SFX)(int transb, int conjb, const T *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                             T *GK_RESTRICT dst) {
    const int64_t hc = nr / 2; /* complex columns per panel */
    const T sign = conjb ? (T)-1 : (T)1;
    for (int64_t j0 = 0; j0 < nc; j0 += hc) {
        const int64_t w = GK_MIN(hc, nc - j0);
        T *d = dst + j0 * 4 * kc; /* panel j0 / hc of nr x 2kc reals */
        if (!transb) {
#define GK_PACK_B_1M_FULL(NR)                                                                         \
    if (w == hc && nr == (NR)) {                                                                      \
        if (conjb) GK_CAT(pack_b_1m_plain_, SFX)(B, ldb, kc, j0, (NR) / 2, (NR), (T)-1, d);            \
        else GK_CAT(pack_b_1m_plain_, SFX)(B, ldb, kc, j0, (NR) / 2, (NR), (T)1, d);                   \
        continue;                                                                                    \
    }
            GK_PACK_B_1M_FULL(8) GK_PACK_B_1M_FULL(16) GK_PACK_B_1M_FULL(32)
#undef GK_PACK_B_1M_FULL
            GK_CAT(pack_b_1m_plain_, SFX)(B, ldb, kc, j0, w, nr, sign, d);
            continue;
        }
        for (int64_t k = 0; k < kc; k++) {
            T *GK_RESTRICT d0 = d + 2 * k * nr, *GK_RESTRICT d1 = d0 + nr;
            for (int64_t x = 0; x < w; x++) {
                const T *s = B + 2 * ((j0 + x) * ldb + k);
                const T re = s[0], im = sign * s[1];
                d0[2 * x] = re;
                d0[2 * x + 1] = im;
                d1[2 * x] = -im;
                d1[2 * x + 1] = re;
            }
            for (int64_t x = 2 * w; x < nr; x++) d0[x] = d1[x] = (T)0;
        }
    }
}

/* The native complex panels (pack.h) of a block `width` wide (rows of op(A), columns of op(B)) in panels
 * of pw elements (pw pairs per k), conjugated when sign = -1; as the real packers, two source shapes:
 *   k-contiguous: element (k, x) at src + 2 (x ld + k)  (A plain, B transposed)
 *   k-major:      element (k, x) at src + 2 (k ld + x)  (A transposed, B plain)
 * Inlined with constant pw and sign, a panel's k step is a fixed-size (sign-flipping) copy. */
static GK_FORCEINLINE void GK_CAT(copy_pairs_, SFX)(T *GK_RESTRICT d, const T *GK_RESTRICT s, int64_t n, T sign) {
    if (sign == (T)1) { /* one block move (the pair loop is not always merged into one) */
        memcpy(d, s, (size_t)n * sizeof(T));
        return;
    }
    for (int64_t x = 0; x < n; x += 2) {
        d[x] = s[x];
        d[x + 1] = sign * s[x + 1];
    }
}

/* One panel of w <= pw sources contiguous in k (zero past w), per k one pair from each; the next panel's
 * sources prefetched when pf (each is too short a stream for the hardware prefetcher to ramp up). */
static GK_FORCEINLINE void GK_CAT(pack_cx_kcontig_, SFX)(const T *src, int64_t ld, int64_t kc, int64_t w, int pw,
                                                         int pf, T sign, T *GK_RESTRICT d) {
    const int64_t line = 32 / (int64_t)sizeof(T); /* pairs per cache line */
    for (int64_t k = 0; k < kc; k++) {
        if (pf && k % line == 0)
            for (int x = 0; x < pw; x++) GK_PREFETCH(src + 2 * ((pw + x) * ld + k));
        for (int64_t x = 0; x < w; x++) GK_CAT(copy_pairs_, SFX)(d + 2 * (k * pw + x), src + 2 * (x * ld + k), 2, sign);
        for (int64_t x = 2 * w; x < 2 * pw; x++) d[2 * k * pw + x] = (T)0;
    }
}

static GK_FORCEINLINE void GK_CAT(pack_cx_kcontig_block_, SFX)(const T *src, int64_t ld, int64_t width, int64_t kc,
                                                               int pw, T sign, T *GK_RESTRICT dst) {
    const int64_t full = width / pw * pw;
    for (int64_t x0 = 0; x0 < full; x0 += pw)
        GK_CAT(pack_cx_kcontig_, SFX)(src + 2 * x0 * ld, ld, kc, pw, pw, x0 + 2 * pw <= width, sign, dst + 2 * x0 * kc);
    if (full < width)
        GK_CAT(pack_cx_kcontig_, SFX)(src + 2 * full * ld, ld, kc, width - full, pw, 0, sign, dst + 2 * full * kc);
}

/* Rows of the source outer: each read once front to back, a row 4 ahead prefetched; a small block panel by
 * panel (as pack_block_kmajor in pack_real_template.h, same bound: the stores of a rows-outer pass land
 * 2 pw kc reals apart and collide in L1's sets; 64^3 zgemm packed B at 9 cycles per 64-byte row). */
static GK_FORCEINLINE void GK_CAT(pack_cx_kmajor_block_, SFX)(const T *src, int64_t ld, int64_t width, int64_t kc,
                                                              int pw, T sign, T *GK_RESTRICT dst) {
    const int64_t full = width / pw * pw;
    const int small = kc * width * 2 * (int64_t)sizeof(T) <= GK_PACK_SMALL_BLOCK_BYTES;
    if (small) /* the whole panels one after the other; the edge panel below */
        for (int64_t x0 = 0; x0 < full; x0 += pw)
            for (int64_t k = 0; k < kc; k++)
                GK_CAT(copy_pairs_, SFX)(dst + 2 * (x0 * kc + k * pw), src + 2 * (k * ld + x0), 2 * pw, sign);
    for (int64_t k = 0; k < kc; k++) {
        const T *GK_RESTRICT s = src + 2 * k * ld;
        if (!small) {
            if (k + 4 < kc)
                for (int64_t x = 0; x < 2 * width; x += 64 / (int64_t)sizeof(T)) GK_PREFETCH(s + 8 * ld + x);
            for (int64_t x0 = 0; x0 < full; x0 += pw)
                GK_CAT(copy_pairs_, SFX)(dst + 2 * (x0 * kc + k * pw), s + 2 * x0, 2 * pw, sign);
        }
        if (full < width) {
            T *GK_RESTRICT d = dst + 2 * (full * kc + k * pw);
            GK_CAT(copy_pairs_, SFX)(d, s + 2 * full, 2 * (width - full), sign);
            for (int64_t x = 2 * (width - full); x < 2 * pw; x++) d[x] = (T)0;
        }
    }
}

/* F(..., pw, sign, ...) with the kernels' panel widths as constants (unrolled copies): the AVX2 kernels' 3 rows
 * and 4 / 8 columns, the AVX-512 ones' 6 rows and 8 / 16 columns. */
#define GK_CX_CONST_PW(F, src, ld, width, kc, PW, conj, dst)                                          \
    if ((conj)) F(src, ld, width, kc, PW, (T)-1, dst);                                               \
    else F(src, ld, width, kc, PW, (T)1, dst)
#define GK_CX_CONST(F, src, ld, width, kc, pw, conj, dst)                                            \
    do {                                                                                             \
        switch (pw) {                                                                                \
        case 3: GK_CX_CONST_PW(F, src, ld, width, kc, 3, conj, dst); break;                          \
        case 4: GK_CX_CONST_PW(F, src, ld, width, kc, 4, conj, dst); break;                          \
        case 6: GK_CX_CONST_PW(F, src, ld, width, kc, 6, conj, dst); break;                          \
        case 8: GK_CX_CONST_PW(F, src, ld, width, kc, 8, conj, dst); break;                          \
        case 16: GK_CX_CONST_PW(F, src, ld, width, kc, 16, conj, dst); break;                        \
        default: F(src, ld, width, kc, pw, (conj) ? (T)-1 : (T)1, dst);                              \
        }                                                                                            \
    } while (0)

/* A for a native complex kernel: per k the panel's mr elements of alpha * op(A) as (re, im) pairs. */
void GK_CAT(gk_pack_a_cx_, SFX)(int transa, int conja, const T *alpha, const T *A, int64_t lda, int64_t mc,
                             int64_t kc, int mr, T *GK_RESTRICT dst) {
    if (alpha == NULL) {
        if (transa) GK_CX_CONST(GK_CAT(pack_cx_kmajor_block_, SFX), A, lda, mc, kc, mr, conja, dst);
        else GK_CX_CONST(GK_CAT(pack_cx_kcontig_block_, SFX), A, lda, mc, kc, mr, conja, dst);
        return;
    }
    GK_CAT(pack_a_scaled_, SFX)(transa, conja ? (T)-1 : (T)1, alpha, A, lda, mc, kc, mr, 2, 1, dst);
}

/* B for a native complex kernel: panels of nr / 2 complex columns, per k the panel's op(B)[k][j] pairs. */
void GK_CAT(gk_pack_b_cx_, SFX)(int transb, int conjb, const T *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                             T *GK_RESTRICT dst) {
    if (transb) GK_CX_CONST(GK_CAT(pack_cx_kcontig_block_, SFX), B, ldb, nc, kc, nr / 2, conjb, dst);
    else GK_CX_CONST(GK_CAT(pack_cx_kmajor_block_, SFX), B, ldb, nc, kc, nr / 2, conjb, dst);
}
