/* The integer GEMM with wrap-around arithmetic, written once and compiled per ISA (gemm_wrap.c: portable;
 * kernels/wrap_avx2.c: AVX2): 32-bit products on 16-bit limbs, 64-bit ones picked by the entries' range.
 * Needs GK_WRAP_ISA (name suffix). Optional, the ISA's replacements of the portable code: GK_WRAP_UKERNEL_LIMB
 * (the MR x NR32 limb tile), GK_WRAP_UKERNEL64 and GK_WRAP_UKERNEL64_NARROW (the MR x NR64 64-bit tiles, the
 * second for entries within int32), GK_WRAP_ROW_LIMB_I32 / _U32 / _I64 / _U64 (all four: the limb path's
 * conversion into C, see DEFINE_WRAP_EPILOGUE). Defines the table gk_wrap_kernels_<GK_WRAP_ISA>. */
#include <string.h>

#define GK_WRAP_CAT_(a, b) a##b
#define GK_WRAP_CAT(a, b) GK_WRAP_CAT_(a, b)
#define GK_WRAP_MR 4                 /* rows of C per register tile */
#define GK_WRAP_NR32 16              /* columns of C per 32-bit (limb) register tile */
#define GK_WRAP_NR64 8               /* columns of C per 64-bit register tile */
#define GK_WRAP_B_BYTES (512 << 10)  /* the packed op(B) block (K x nc) is kept near this size (L2) */

#if defined(__GNUC__) && !defined(__clang__)
/* fl(fl(P * alpha) + fl(C * beta)): three roundings, as NumPy computes it, never fused into an FMA */
#define GK_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#pragma STDC FP_CONTRACT OFF
#define GK_NO_FP_CONTRACT
#endif

/* float64 to integer as NumPy's astype converts one value on x86-64 (cvttsd2si and the sequences
 * compilers emit for unsigned targets): truncation toward zero when the value fits, else the "integer
 * indefinite" INT_MIN pattern (NaN too); uint64 offsets values >= 2^63 by 2^63; uint32 keeps the low
 * 32 bits of the int64 conversion (NumPy's vectorised loop differs there for values outside
 * (-2^31 - 1, 2^32), so onnx.reference's result depends on an element's place in the array). */
static inline int32_t cvt_i32(double x) {
    return (x > -2147483649.0 && x < 2147483648.0) ? (int32_t)x : INT32_MIN;
}
static inline int64_t cvt_i64(double x) {
    return (x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? (int64_t)x : INT64_MIN;
}
static inline uint32_t cvt_u32(double x) { return (uint32_t)(uint64_t)cvt_i64(x); }
/* int16 products are NumPy's only (GK_WRAP_SCALE_MODULAR); this keeps the shared epilogue whole */
static inline int16_t cvt_i16(double x) { return (int16_t)cvt_i32(x); }
static inline uint64_t cvt_u64(double x) {
    return x >= 9223372036854775808.0 ? (uint64_t)cvt_i64(x - 9223372036854775808.0) ^ 0x8000000000000000u
                                      : (uint64_t)cvt_i64(x);
}

/* 32-bit products in 16-bit limbs. x = hi * 2^16 + lo (mod 2^32) with lo in [-2^15, 2^15) and hi taken
 * modulo 2^16 (both read as int16), so a * b = lo(a) lo(b) + ((hi(a) lo(b) + lo(a) hi(b)) << 16) modulo
 * 2^32: three 16 x 16-bit products, of which the cross ones only matter modulo 2^16. The packed panels
 * hold, per pair of k (k = 2q, 2q + 1, zero past K) and row (A) or column (B), one 32-bit word with the
 * two k's low limbs and one with their high limbs; a word pair's dot product (madd16, vpmaddwd) sums
 * the two k's products, exact modulo 2^32. Values within int16 have zero high limbs: a panel without any
 * skips its cross products. */
static inline uint32_t limb_lo(uint32_t x) { return x & 0xFFFFu; }
static inline uint32_t limb_hi(uint32_t x) { return ((x + 0x8000u) >> 16) & 0xFFFFu; }
/* x0 y0 + x1 y1 modulo 2^32, x and y each two int16 (low half first) */
static inline uint32_t madd16(uint32_t x, uint32_t y) {
    return (uint32_t)((int32_t)(int16_t)(x & 0xFFFFu) * (int32_t)(int16_t)(y & 0xFFFFu)) +
           (uint32_t)((int32_t)(int16_t)(x >> 16) * (int32_t)(int16_t)(y >> 16));
}

/* The portable limb tile: acc[MR][NR32] = A panel x B panel modulo 2^32 (Kp pairs of k; A panel: row r's
 * low-limb words at r * Kp, its high-limb ones at (MR + r) * Kp; B panel: pair q's NR32 low-limb words,
 * then its high-limb ones; hi_a / hi_b: whether the panel has nonzero high limbs). */
static inline void ukernel_limb(int64_t Kp, const uint32_t *GK_RESTRICT ap, const uint32_t *GK_RESTRICT bp,
                                int hi_a, int hi_b, uint32_t *GK_RESTRICT acc) {
    uint32_t lo[GK_WRAP_MR][GK_WRAP_NR32], cross[GK_WRAP_MR][GK_WRAP_NR32];
    memset(lo, 0, sizeof(lo));
    memset(cross, 0, sizeof(cross));
    for (int64_t q = 0; q < Kp; q++) {
        const uint32_t *b = bp + q * 2 * GK_WRAP_NR32;
        for (int r = 0; r < GK_WRAP_MR; r++) {
            const uint32_t al = ap[r * Kp + q], ah = hi_a ? ap[(GK_WRAP_MR + r) * Kp + q] : 0;
            for (int j = 0; j < GK_WRAP_NR32; j++) {
                lo[r][j] += madd16(al, b[j]);
                if (hi_a) cross[r][j] += madd16(ah, b[j]);
                if (hi_b) cross[r][j] += madd16(al, b[GK_WRAP_NR32 + j]); /* the highs, read only if any */
            }
        }
    }
    for (int r = 0; r < GK_WRAP_MR; r++)
        for (int j = 0; j < GK_WRAP_NR32; j++) acc[r * GK_WRAP_NR32 + j] = lo[r][j] + (cross[r][j] << 16);
}

/* The portable 64-bit register tile: acc = A panel (k-major, MR per k) x B panel (k-major, NR64 per k),
 * modulo 2^64 (unsigned: the same bits as int64's). */
static inline void ukernel_u64(int64_t K, const uint64_t *GK_RESTRICT ap, const uint64_t *GK_RESTRICT bp,
                               uint64_t *GK_RESTRICT acc) {
    uint64_t c[GK_WRAP_MR][GK_WRAP_NR64];
    memset(c, 0, sizeof(c));
    for (int64_t k = 0; k < K; k++) {
        const uint64_t *b = bp + k * GK_WRAP_NR64;
        for (int r = 0; r < GK_WRAP_MR; r++) {
            const uint64_t a = ap[k * GK_WRAP_MR + r];
            for (int j = 0; j < GK_WRAP_NR64; j++) c[r][j] += a * b[j];
        }
    }
    memcpy(acc, c, sizeof(c));
}

/* C[0:mr, 0:nb] := cvt(fl(fl(double(P) * alpha) + fl(double(C) * beta))), P the tile's sums (row stride
 * NR, of type ACC) read as T by SUM_AS_T. ROW(s, c, nb, alpha, beta), an ISA's vector code, converts a
 * row's leading entries and says how many (GK_WRAP_ROW_NONE: none); the loop here does the rest.
 * GK_WRAP_SCALE_MODULAR: C := alpha_int P + beta_int C in unsigned 64-bit arithmetic, truncated to T (the
 * low bits of a product or sum do not depend on the higher ones). */
#define GK_WRAP_ROW_NONE(s, c, nb, alpha, beta) 0
#define DEFINE_WRAP_EPILOGUE(NAME, SFX, T, ACC, NR, SUM_AS_T, ROW)                                      \
    GK_NO_FP_CONTRACT static void NAME(const gk_wrap_problem_t *p, const ACC *GK_RESTRICT acc, int64_t mr, \
                                       int64_t nb, T *GK_RESTRICT C) {                                \
        const double alpha = p->alpha, beta = p->beta;                                                \
        const int64_t ldc = p->ldc;                                                                   \
        if (p->scale == GK_WRAP_SCALE_MODULAR) {                                                      \
            const uint64_t ai = p->alpha_int, bi = p->beta_int;                                       \
            for (int64_t r = 0; r < mr; r++) {                                                        \
                T *GK_RESTRICT c = C + r * ldc;                                                       \
                const ACC *GK_RESTRICT s = acc + r * NR;                                              \
                if (bi == 0 && ai == 1)                                                               \
                    for (int64_t j = 0; j < nb; j++) c[j] = (T)SUM_AS_T(s[j]);                        \
                else if (bi == 0)                                                                     \
                    for (int64_t j = 0; j < nb; j++) c[j] = (T)(ai * (uint64_t)SUM_AS_T(s[j]));       \
                else                                                                                  \
                    for (int64_t j = 0; j < nb; j++)                                                  \
                        c[j] = (T)(ai * (uint64_t)SUM_AS_T(s[j]) + bi * (uint64_t)c[j]);              \
            }                                                                                         \
            return;                                                                                   \
        }                                                                                             \
        for (int64_t r = 0; r < mr; r++) {                                                            \
            T *GK_RESTRICT c = C + r * ldc;                                                           \
            const ACC *GK_RESTRICT s = acc + r * NR;                                                  \
            int64_t j = ROW(s, c, nb, alpha, beta);                                                   \
            if (beta != 0.0)                                                                          \
                for (; j < nb; j++) {                                                                 \
                    const double v = (double)SUM_AS_T(s[j]) * alpha, cb = (double)c[j] * beta;        \
                    c[j] = cvt_##SFX(v + cb);                                                         \
                }                                                                                     \
            else                                                                                      \
                for (; j < nb; j++) c[j] = cvt_##SFX((double)SUM_AS_T(s[j]) * alpha);                 \
        }                                                                                             \
    }
#define GK_SUM_BITS_I32(s) ((int32_t)(s))
#define GK_SUM_BITS_U32(s) ((uint32_t)(s))
#define GK_SUM_BITS_I16(s) ((int16_t)(s)) /* the low 16 bits of a sum modulo 2^32 */
#define GK_SUM_WIDEN_I64(s) ((int64_t)(int32_t)(s)) /* an exact sum within int32, widened */
#define GK_SUM_WIDEN_U64(s) ((uint64_t)(int64_t)(int32_t)(s))

/* The limb path for element type T (32-bit, or 64-bit whose sums fit int32: the low 32 bits of each
 * entry give its limbs), C's block [m0, m1) x [n0, n1). */
#define DEFINE_LIMB_BLOCK(SFX, T, SUM_AS_T, ROW, LOWS_ONLY)                                           \
    DEFINE_WRAP_EPILOGUE(limb_epilogue_##SFX, SFX, T, uint32_t, GK_WRAP_NR32, SUM_AS_T, ROW)          \
    /* n (<= W) lines i of X[k * sk + i * si], k < K, as limb words (zero past n and K): pair q of line i \
     * has its low-limb word at dst[q * qs + i * is], its high-limb one hs further; returns the OR of \
     * the high-limb words (LOWS_ONLY: entries within int16, no high-limb words written, 0 returned).  \
     * One loop order per unit stride (a constant 1 at the call), along it. */                          \
    static GK_FORCEINLINE uint32_t pack_limbs_##SFX(const T *GK_RESTRICT X, int64_t sk, int64_t si, int64_t K, \
                                                    int64_t n, int W, uint32_t *GK_RESTRICT dst, int64_t qs, \
                                                    int64_t is, int64_t hs) {                          \
        const int64_t Kp = (K + 1) / 2, K2 = K / 2;                                                   \
        uint32_t any_hi = 0;                                                                          \
        if (si == 1) {                                                                                \
            for (int64_t q = 0; q < Kp; q++) {                                                        \
                const T *GK_RESTRICT x0 = X + 2 * q * sk, *GK_RESTRICT x1 = x0 + sk;                  \
                uint32_t *GK_RESTRICT lo = dst + q * qs;                                              \
                for (int64_t i = 0; i < n; i++) {                                                     \
                    const uint32_t a = (uint32_t)x0[i], b = q < K2 ? (uint32_t)x1[i] : 0u;            \
                    lo[i * is] = limb_lo(a) | (limb_lo(b) << 16);                                     \
                    if (LOWS_ONLY) continue;                                                          \
                    const uint32_t h = limb_hi(a) | (limb_hi(b) << 16);                               \
                    lo[i * is + hs] = h;                                                              \
                    any_hi |= h;                                                                      \
                }                                                                                     \
                for (int64_t i = n; i < W; i++) lo[i * is] = lo[i * is + hs] = 0;                     \
            }                                                                                         \
            return any_hi;                                                                            \
        }                                                                                             \
        for (int64_t i = 0; i < W; i++) {                                                             \
            const T *GK_RESTRICT x = X + i * si;                                                      \
            uint32_t *GK_RESTRICT lo = dst + i * is, *GK_RESTRICT hi = lo + hs;                      \
            if (i >= n) {                                                                             \
                for (int64_t q = 0; q < Kp; q++) lo[q * qs] = hi[q * qs] = 0;                         \
                continue;                                                                             \
            }                                                                                         \
            for (int64_t q = 0; q < K2; q++) {                                                        \
                const uint32_t a = (uint32_t)x[2 * q * sk], b = (uint32_t)x[(2 * q + 1) * sk];        \
                lo[q * qs] = limb_lo(a) | (limb_lo(b) << 16);                                         \
                if (LOWS_ONLY) continue;                                                              \
                const uint32_t h = limb_hi(a) | (limb_hi(b) << 16);                                   \
                hi[q * qs] = h;                                                                       \
                any_hi |= h;                                                                          \
            }                                                                                         \
            if (K2 < Kp) {                                                                            \
                const uint32_t a = (uint32_t)x[2 * K2 * sk];                                          \
                lo[K2 * qs] = limb_lo(a);                                                             \
                hi[K2 * qs] = limb_hi(a);                                                             \
                any_hi |= LOWS_ONLY ? 0u : limb_hi(a);                                                \
            }                                                                                         \
        }                                                                                             \
        return any_hi;                                                                                \
    }                                                                                                 \
    static int limb_block_##SFX(const gk_wrap_problem_t *p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) { \
        enum { MR = GK_WRAP_MR, NR = GK_WRAP_NR32 };                                                  \
        const T *A = (const T *)p->A, *B = (const T *)p->B;                                           \
        const int64_t K = p->K, Kp = (K + 1) / 2, Kp1 = GK_MAX(Kp, (int64_t)1);                       \
        int64_t nc = GK_WRAP_B_BYTES / 4 / (2 * Kp1) / NR * NR;                                       \
        nc = GK_MAX((int64_t)NR, GK_MIN(nc, (n1 - n0 + NR - 1) / NR * NR));                           \
        uint32_t *bp = (uint32_t *)gk_thread_workspace(GK_WS_B, 4 * (size_t)(2 * Kp1 * nc + nc / NR)); \
        uint32_t *ap = (uint32_t *)gk_thread_workspace(GK_WS_A, 4 * (size_t)(2 * Kp1 * MR));           \
        if (!bp || !ap) return -1;                                                                    \
        uint32_t *b_hi = bp + 2 * Kp1 * nc; /* per panel: whether it has nonzero high limbs */        \
        GK_ALIGN64 uint32_t acc[MR * NR];                                                             \
        for (int64_t jc = n0; jc < n1; jc += nc) {                                                    \
            const int64_t w = GK_MIN(nc, n1 - jc);                                                    \
            for (int64_t j0 = 0; j0 < w; j0 += NR) { /* B panels: pair q, column j at q * 2NR + j */   \
                const int64_t nb = GK_MIN((int64_t)NR, w - j0), ldb = p->ldb;                         \
                uint32_t *d = bp + j0 * 2 * Kp;                                                       \
                const uint32_t any_hi =                                                               \
                    p->transb ? pack_limbs_##SFX(B + (jc + j0) * ldb, 1, ldb, K, nb, NR, d, 2 * NR, 1, NR) \
                              : pack_limbs_##SFX(B + jc + j0, ldb, 1, K, nb, NR, d, 2 * NR, 1, NR);       \
                b_hi[j0 / NR] = any_hi != 0;                                                          \
            }                                                                                         \
            for (int64_t i0 = m0; i0 < m1; i0 += MR) { /* A panel: row r's pairs at r * Kp (lows), then \
                                                          the highs from MR * Kp */                   \
                const int64_t mr = GK_MIN((int64_t)MR, m1 - i0), lda = p->lda;                        \
                const uint32_t a_hi =                                                                 \
                    p->transa ? pack_limbs_##SFX(A + i0, lda, 1, K, mr, MR, ap, 1, Kp, MR * Kp)         \
                              : pack_limbs_##SFX(A + i0 * lda, 1, lda, K, mr, MR, ap, 1, Kp, MR * Kp);  \
                for (int64_t j0 = 0; j0 < w; j0 += NR) {                                              \
                    GK_WRAP_UKERNEL_LIMB(Kp, ap, bp + j0 * 2 * Kp, a_hi != 0, (int)b_hi[j0 / NR], acc); \
                    limb_epilogue_##SFX(p, acc, mr, GK_MIN((int64_t)NR, w - j0),                      \
                                        (T *)p->C + i0 * p->ldc + jc + j0);                           \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
        return 0;                                                                                     \
    }

/* The 64-bit path: T summed as uint64 (the same bits modulo 2^64), NR64 columns per register tile; narrow:
 * every entry within int32 (GK_WRAP_UKERNEL64_NARROW's products). */
#define DEFINE_WIDE_BLOCK(SFX, T)                                                                     \
    DEFINE_WRAP_EPILOGUE(wide_epilogue_##SFX, SFX, T, uint64_t, GK_WRAP_NR64, (T), GK_WRAP_ROW_NONE)                 \
    static int wide_block_##SFX(const gk_wrap_problem_t *p, int64_t m0, int64_t m1, int64_t n0, int64_t n1,   \
                                int narrow) {                                                         \
        enum { MR = GK_WRAP_MR, NR = GK_WRAP_NR64 };                                                  \
        const uint64_t *A = (const uint64_t *)p->A, *B = (const uint64_t *)p->B;                      \
        const int64_t K = p->K, K1 = GK_MAX(K, (int64_t)1);                                            \
        int64_t nc = GK_WRAP_B_BYTES / 8 / K1 / NR * NR;                                              \
        nc = GK_MAX((int64_t)NR, GK_MIN(nc, (n1 - n0 + NR - 1) / NR * NR));                           \
        uint64_t *bp = (uint64_t *)gk_thread_workspace(GK_WS_B, 8 * (size_t)(K1 * nc));               \
        uint64_t *ap = (uint64_t *)gk_thread_workspace(GK_WS_A, 8 * (size_t)(K1 * MR));               \
        if (!bp || !ap) return -1;                                                                    \
        GK_ALIGN64 uint64_t acc[MR * NR];                                                             \
        for (int64_t jc = n0; jc < n1; jc += nc) {                                                    \
            const int64_t w = GK_MIN(nc, n1 - jc);                                                    \
            for (int64_t j0 = 0; j0 < w; j0 += NR) { /* NR-column panels, k-major, zero-padded */      \
                uint64_t *d = bp + j0 * K;                                                            \
                const int64_t nb = GK_MIN((int64_t)NR, w - j0);                                       \
                for (int64_t k = 0; k < K; k++) {                                                     \
                    int64_t j = 0;                                                                    \
                    for (; j < nb; j++)                                                               \
                        d[k * NR + j] = p->transb ? B[(jc + j0 + j) * p->ldb + k] : B[k * p->ldb + jc + j0 + j]; \
                    for (; j < NR; j++) d[k * NR + j] = 0;                                            \
                }                                                                                     \
            }                                                                                         \
            for (int64_t i0 = m0; i0 < m1; i0 += MR) {                                                \
                const int64_t mr = GK_MIN((int64_t)MR, m1 - i0);                                      \
                for (int64_t k = 0; k < K; k++) { /* MR rows, k-major, zero-padded */                  \
                    int r = 0;                                                                        \
                    for (; r < mr; r++)                                                               \
                        ap[k * MR + r] = p->transa ? A[k * p->lda + i0 + r] : A[(i0 + r) * p->lda + k]; \
                    for (; r < MR; r++) ap[k * MR + r] = 0;                                           \
                }                                                                                     \
                for (int64_t j0 = 0; j0 < w; j0 += NR) {                                              \
                    if (narrow) GK_WRAP_UKERNEL64_NARROW(K, ap, bp + j0 * K, acc);                    \
                    else GK_WRAP_UKERNEL64(K, ap, bp + j0 * K, acc);                                  \
                    wide_epilogue_##SFX(p, acc, mr, GK_MIN((int64_t)NR, w - j0), (T *)p->C + i0 * p->ldc + jc + j0); \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
        return 0;                                                                                     \
    }

/* The bits of the widest entry of a rows x cols region (row stride ld) of 64-bit entries, sign apart:
 * the least b with every x in [-2^b, 2^b) (x ^ (x << 1) has its top bit one above x ^ sign's). */
static int magnitude_bits(const uint64_t *X, int64_t rows, int64_t cols, int64_t ld) {
    uint64_t diff = 0;
    if (ld == cols) { /* contiguous: one run */
        cols *= rows;
        rows = 1;
    }
    for (int64_t i = 0; i < rows; i++) {
        const uint64_t *x = X + i * ld;
        for (int64_t j = 0; j < cols; j++) diff |= x[j] ^ (x[j] << 1);
    }
    int bits = 0;
    while (bits < 64 && (diff >> bits) > 1) bits++;
    return bits;
}

/* How op(A)[m0:m1, :] op(B)[:, n0:n1] (64-bit entries) is summed: GK_WRAP_LIMB where every partial sum
 * stays within int32 (entries within int16, K * 2^bits(A) * 2^bits(B) <= 2^30: the limb path's int32
 * sums are exact), GK_WRAP_NARROW where the entries are within int32 (each product is the signed 32 x
 * 32-bit one), else GK_WRAP_FULL. */
enum { GK_WRAP_LIMB, GK_WRAP_NARROW, GK_WRAP_FULL };
static int wrap_range(const gk_wrap_problem_t *p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    const uint64_t *A = (const uint64_t *)p->A, *B = (const uint64_t *)p->B;
    const int64_t K = p->K;
    if (K <= 0) return GK_WRAP_LIMB;
    int kbits = 0;
    while (kbits < 63 && ((int64_t)1 << kbits) < K) kbits++;
    const int ba = p->transa ? magnitude_bits(A + m0, K, m1 - m0, p->lda)
                             : magnitude_bits(A + m0 * p->lda, m1 - m0, K, p->lda);
    if (ba > 31) return GK_WRAP_FULL;
    const int bb = p->transb ? magnitude_bits(B + n0 * p->ldb, n1 - n0, K, p->ldb)
                             : magnitude_bits(B + n0, K, n1 - n0, p->ldb);
    if (bb > 31) return GK_WRAP_FULL;
    return ba <= 15 && bb <= 15 && ba + bb + kbits <= 30 ? GK_WRAP_LIMB : GK_WRAP_NARROW;
}

#ifndef GK_WRAP_UKERNEL_LIMB
#define GK_WRAP_UKERNEL_LIMB ukernel_limb
#endif
#ifndef GK_WRAP_UKERNEL64
#define GK_WRAP_UKERNEL64 ukernel_u64
#endif
#ifndef GK_WRAP_UKERNEL64_NARROW
#define GK_WRAP_UKERNEL64_NARROW ukernel_u64 /* the full products are the narrow ones */
#endif
#ifndef GK_WRAP_ROW_LIMB_I32
#define GK_WRAP_ROW_LIMB_I32 GK_WRAP_ROW_NONE
#define GK_WRAP_ROW_LIMB_U32 GK_WRAP_ROW_NONE
#define GK_WRAP_ROW_LIMB_I64 GK_WRAP_ROW_NONE
#define GK_WRAP_ROW_LIMB_U64 GK_WRAP_ROW_NONE
#endif
DEFINE_LIMB_BLOCK(i32, int32_t, GK_SUM_BITS_I32, GK_WRAP_ROW_LIMB_I32, 0)
DEFINE_LIMB_BLOCK(u32, uint32_t, GK_SUM_BITS_U32, GK_WRAP_ROW_LIMB_U32, 0)
DEFINE_LIMB_BLOCK(i64, int64_t, GK_SUM_WIDEN_I64, GK_WRAP_ROW_LIMB_I64, 1)
DEFINE_LIMB_BLOCK(u64, uint64_t, GK_SUM_WIDEN_U64, GK_WRAP_ROW_LIMB_U64, 1)
/* 16-bit entries are their own low limbs; the high limbs only reach bits 16 and up, which C drops */
DEFINE_LIMB_BLOCK(i16, int16_t, GK_SUM_BITS_I16, GK_WRAP_ROW_NONE, 1)
DEFINE_WIDE_BLOCK(i64, int64_t)
DEFINE_WIDE_BLOCK(u64, uint64_t)

static int block_i32(const gk_wrap_problem_t *p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    return limb_block_i32(p, m0, m1, n0, n1);
}
static int block_u32(const gk_wrap_problem_t *p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    return limb_block_u32(p, m0, m1, n0, n1);
}
/* 64-bit: by the entries' range (wrap_range) */
static int block_i64(const gk_wrap_problem_t *p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    const int range = wrap_range(p, m0, m1, n0, n1);
    return range == GK_WRAP_LIMB ? limb_block_i64(p, m0, m1, n0, n1)
                                 : wide_block_i64(p, m0, m1, n0, n1, range == GK_WRAP_NARROW);
}
static int block_u64(const gk_wrap_problem_t *p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    const int range = wrap_range(p, m0, m1, n0, n1);
    return range == GK_WRAP_LIMB ? limb_block_u64(p, m0, m1, n0, n1)
                                 : wide_block_u64(p, m0, m1, n0, n1, range == GK_WRAP_NARROW);
}

static int block_i16(const gk_wrap_problem_t *p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) {
    return limb_block_i16(p, m0, m1, n0, n1);
}

/* indexed by gk_wrap_type_t */
#define GK_WRAP_STR_(x) #x
#define GK_WRAP_STR(x) GK_WRAP_STR_(x)
const gk_wrap_kernels_t GK_WRAP_CAT(gk_wrap_kernels_, GK_WRAP_ISA) = {
    "wrap_" GK_WRAP_STR(GK_WRAP_ISA), {block_i32, block_u32, block_i64, block_u64, block_i16}};
