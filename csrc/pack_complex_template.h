/* The complex packers (1m A and B, native-kernel B), written once and instantiated for float and double
 * by pack_complex.c (T = real element type, SFX = name suffix); the formats are described in pack.h. */

void GK_CAT(pack_a_1m_, SFX)(int transa, int conja, const T *alpha, const T *A, int64_t lda, int64_t mc,
                             int64_t kc, int mr, T *GK_RESTRICT dst) {
    if (!transa && !conja && alpha == NULL) { /* rows of A are already (re, im) pairs along k */
        GK_CAT(pack_a_, SFX)(0, A, 2 * lda, mc, 2 * kc, mr, dst);
        return;
    }
    const T sign = conja ? (T)-1 : (T)1;
    for (int64_t i0 = 0; i0 < mc; i0 += mr) {
        const int64_t w = GK_MIN((int64_t)mr, mc - i0);
        T *d = dst + i0 * 2 * kc;
        for (int64_t k = 0; k < kc; k++) {
            T *GK_RESTRICT d0 = d + 2 * k * mr, *GK_RESTRICT d1 = d0 + mr;
            for (int64_t x = 0; x < w; x++) {
                const T *s = transa ? A + 2 * (k * lda + i0 + x) : A + 2 * ((i0 + x) * lda + k);
                T re = s[0], im = sign * s[1];
                if (alpha) {
                    const T r = alpha[0] * re - alpha[1] * im;
                    im = alpha[0] * im + alpha[1] * re;
                    re = r;
                }
                d0[x] = re;
                d1[x] = im;
            }
            for (int64_t x = w; x < mr; x++) d0[x] = d1[x] = (T)0;
        }
    }
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

void GK_CAT(pack_b_1m_, SFX)(int transb, int conjb, const T *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
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

/* A full panel of a plain A (rows of (re, im) pairs along k): per k one pair from each of the panel's rows,
 * the next panel's rows prefetched (a row is too short a stream for the hardware prefetcher to ramp up).
 * Inlined with a constant mr, each k is mr fixed-size copies. */
static GK_FORCEINLINE void GK_CAT(pack_a_cx_plain_, SFX)(const T *A, int64_t lda, int64_t kc, int mr, int pf,
                                                         T *GK_RESTRICT d) {
    const int64_t line = 32 / (int64_t)sizeof(T); /* pairs per cache line */
    for (int64_t k = 0; k < kc; k++) {
        if (pf && k % line == 0)
            for (int x = 0; x < mr; x++) GK_PREFETCH(A + 2 * ((mr + x) * lda + k));
        for (int x = 0; x < mr; x++) memcpy(d + 2 * (k * mr + x), A + 2 * (x * lda + k), 2 * sizeof(T));
    }
}

/* A for a native complex kernel: per k the panel's mr elements of alpha * op(A) as (re, im) pairs. */
void GK_CAT(pack_a_cx_, SFX)(int transa, int conja, const T *alpha, const T *A, int64_t lda, int64_t mc,
                             int64_t kc, int mr, T *GK_RESTRICT dst) {
    const T sign = conja ? (T)-1 : (T)1;
    const int plain = !transa && !conja && alpha == NULL;
    for (int64_t i0 = 0; i0 < mc; i0 += mr) {
        const int64_t w = GK_MIN((int64_t)mr, mc - i0);
        T *d = dst + i0 * 2 * kc;
        if (plain && w == mr) {
            const int pf = i0 + 2 * mr <= mc;
            if (mr == 3) GK_CAT(pack_a_cx_plain_, SFX)(A + 2 * i0 * lda, lda, kc, 3, pf, d);
            else GK_CAT(pack_a_cx_plain_, SFX)(A + 2 * i0 * lda, lda, kc, mr, pf, d);
            continue;
        }
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
                dk[2 * x] = re;
                dk[2 * x + 1] = im;
            }
            for (int64_t x = 2 * w; x < 2 * mr; x++) dk[x] = (T)0;
        }
    }
}

/* A plain B's rows (already (re, im) pairs along j) into the panels, each row read once front to back, a
 * row 4 ahead prefetched; inlined with a constant nr, a full panel's row is a fixed-size copy. */
static GK_FORCEINLINE void GK_CAT(pack_b_cx_plain_, SFX)(const T *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                                                         T *GK_RESTRICT dst) {
    const int64_t hc = nr / 2, full = nc / hc * hc;
    for (int64_t k = 0; k < kc; k++) {
        const T *GK_RESTRICT s = B + 2 * k * ldb;
        if (k + 4 < kc)
            for (int64_t x = 0; x < 2 * nc; x += 64 / (int64_t)sizeof(T)) GK_PREFETCH(s + 8 * ldb + x);
        for (int64_t j0 = 0; j0 < full; j0 += hc) memcpy(dst + j0 * 2 * kc + k * nr, s + 2 * j0, nr * sizeof(T));
        if (full < nc) {
            T *GK_RESTRICT d = dst + full * 2 * kc + k * nr;
            int64_t x = 0;
            for (; x < 2 * (nc - full); x++) d[x] = s[2 * full + x];
            for (; x < nr; x++) d[x] = (T)0;
        }
    }
}

void GK_CAT(pack_b_cx_, SFX)(int transb, int conjb, const T *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                             T *GK_RESTRICT dst) {
    if (!transb && !conjb) {
        if (nr == 8) GK_CAT(pack_b_cx_plain_, SFX)(B, ldb, kc, nc, 8, dst);
        else if (nr == 16) GK_CAT(pack_b_cx_plain_, SFX)(B, ldb, kc, nc, 16, dst);
        else GK_CAT(pack_b_cx_plain_, SFX)(B, ldb, kc, nc, nr, dst);
        return;
    }
    const int64_t hc = nr / 2; /* complex columns per panel */
    const T sign = conjb ? (T)-1 : (T)1;
    for (int64_t j0 = 0; j0 < nc; j0 += hc) {
        const int64_t w = GK_MIN(hc, nc - j0);
        T *d = dst + j0 * 2 * kc; /* panel j0 / hc of nr x kc reals */
        for (int64_t k = 0; k < kc; k++) {
            T *GK_RESTRICT dk = d + k * nr;
            for (int64_t x = 0; x < w; x++) {
                const T *s = transb ? B + 2 * ((j0 + x) * ldb + k) : B + 2 * (k * ldb + j0 + x);
                dk[2 * x] = s[0];
                dk[2 * x + 1] = sign * s[1];
            }
            for (int64_t x = 2 * w; x < nr; x++) dk[x] = (T)0;
        }
    }
}
