/* The real-domain block packers, written once and instantiated by pack_real.c (float, double, and float16 /
 * bfloat16 widened to float), kernels/half_avx2.c and kernels/half_neon.c (float16 by F16C / by FCVTL).
 * T = packed (kernel) element type,
 * SFX = name suffix, ROWS_SIMD = optional in-register transposing copy of ROWS_SIMD_N rows (ROWS_SIMD_PAIR: of
 * 2, for a panel width that is not a multiple of ROWS_SIMD_N); optional TS = the caller's
 * element type when it differs, with GK_PACK_LOAD(x) (one value to T) and GK_PACK_ROW(dst, src, n). */
#ifndef GK_CAT
#define GK_CAT_(a, b) a##b
#define GK_CAT(a, b) GK_CAT_(a, b)
#endif
#ifndef TS
#define TS T
#define GK_PACK_LOAD(x) (x)
#define GK_PACK_ROW(dst, src, n) memcpy((dst), (src), sizeof(T) * (size_t)(n))
#endif

/* Both operands reduce to one of two source shapes for a block `width` wide (rows of op(A), columns of
 * op(B)), packed into panels of pw (element (k, x) of panel p at dst[p*pw*kc + k*pw + x % pw]):
 *   k-contiguous: element (k, x) at src[x * ld + k]  (A plain, B transposed)
 *   k-major:      element (k, x) at src[k * ld + x]  (A transposed, B plain) */
static void GK_CAT(pack_block_kcontig_, SFX)(const TS *src, int64_t ld, int64_t width, int64_t kc, int pw,
                                              T *GK_RESTRICT dst) {
    for (int64_t x0 = 0; x0 < width; x0 += pw) {
        const int64_t w = GK_MIN((int64_t)pw, width - x0);
        T *d = dst + x0 * kc;
        int64_t x_done = 0; /* columns copied by the in-register transposes (an edge panel's too) */
#if defined(ROWS_SIMD)
        for (; x_done + ROWS_SIMD_N <= w; x_done += ROWS_SIMD_N)
            ROWS_SIMD(src + (x0 + x_done) * ld, ld, kc, pw, d + x_done);
#if defined(ROWS_SIMD_PAIR)
        for (; x_done + 2 <= w; x_done += 2) ROWS_SIMD_PAIR(src + (x0 + x_done) * ld, ld, kc, pw, d + x_done);
#endif
#endif
        for (int64_t x = x_done; x < w; x++) {
            const TS *s = src + (x0 + x) * ld;
            for (int64_t k = 0; k < kc; k++) d[k * pw + x] = GK_PACK_LOAD(s[k]);
        }
        for (int64_t x = w; x < pw; x++)
            for (int64_t k = 0; k < kc; k++) d[k * pw + x] = (T)0;
    }
}

/* A panel's row is copied as a constant size, inlined: B's of one or two cache lines (the AVX2 kernels' NR: 16
 * floats, 8 doubles; the AVX-512 ones': 32 floats, 16 doubles) and a transposed A's of MR values (12 on AVX-512, 6 on
 * AVX2: 24 to 96 bytes). A size known only at run time went through a libc memmove call per row (see
 * docs/decisions.md, GK_PACK_PANEL_ROW). */
#define GK_PACK_PANEL_ROW(dst, src, pw)                                                              \
    do {                                                                                             \
        switch ((pw) * sizeof(TS)) {                                                                 \
        case 24: GK_PACK_ROW((dst), (src), 24 / sizeof(TS)); break;                                  \
        case 32: GK_PACK_ROW((dst), (src), 32 / sizeof(TS)); break;                                  \
        case 48: GK_PACK_ROW((dst), (src), 48 / sizeof(TS)); break;                                  \
        case 64: GK_PACK_ROW((dst), (src), 64 / sizeof(TS)); break;                                  \
        case 96: GK_PACK_ROW((dst), (src), 96 / sizeof(TS)); break;                                  \
        case 128: GK_PACK_ROW((dst), (src), 128 / sizeof(TS)); break;                                \
        default: GK_PACK_ROW((dst), (src), (pw));                                                    \
        }                                                                                            \
    } while (0)

/* Rows outer: each source row of the block is read once, front to back (a panel-by-panel order would touch every row
 * once per panel, latency bound), left to the hardware prefetchers, which software prefetches only slowed (see
 * docs/decisions.md, pack_block_kmajor). A small block (GK_PACK_SMALL_BLOCK_BYTES: already in cache) goes panel by
 * panel instead: rows outer writes pw * kc elements apart, a power of two of bytes when kc is one, and those stores
 * collide in L1's sets. */
static void GK_CAT(pack_block_kmajor_, SFX)(const TS *src, int64_t ld, int64_t width, int64_t kc, int pw,
                                             T *GK_RESTRICT dst) {
    const int64_t full = width / pw * pw;
    const int small = kc * width * (int64_t)sizeof(TS) <= GK_PACK_SMALL_BLOCK_BYTES;
    if (small) /* the whole panels one after the other; the edge panel below */
        for (int64_t x0 = 0; x0 < full; x0 += pw)
            for (int64_t k = 0; k < kc; k++) GK_PACK_PANEL_ROW(dst + x0 * kc + k * pw, src + k * ld + x0, pw);
    for (int64_t k = 0; k < kc; k++) {
        const TS *s = src + k * ld;
        if (!small)
            for (int64_t x0 = 0; x0 < full; x0 += pw) GK_PACK_PANEL_ROW(dst + x0 * kc + k * pw, s + x0, pw);
        if (full < width) {
            T *d = dst + full * kc + k * pw;
            int64_t x = 0;
            for (; x < width - full; x++) d[x] = GK_PACK_LOAD(s[full + x]);
            for (; x < pw; x++) d[x] = (T)0;
        }
    }
}

/* op(A)[i][k] = transa ? A[k*lda + i] : A[i*lda + k]; panel p holds rows [p*mr, p*mr+mr). */
void GK_CAT(gk_pack_a_, SFX)(int transa, const TS *A, int64_t lda, int64_t mc, int64_t kc, int mr, T *GK_RESTRICT dst) {
    if (transa) GK_CAT(pack_block_kmajor_, SFX)(A, lda, mc, kc, mr, dst);
    else GK_CAT(pack_block_kcontig_, SFX)(A, lda, mc, kc, mr, dst);
}

/* op(B)[k][j] = transb ? B[j*ldb + k] : B[k*ldb + j]; panel p holds columns [p*nr, p*nr+nr). */
void GK_CAT(gk_pack_b_, SFX)(int transb, const TS *B, int64_t ldb, int64_t kc, int64_t nc, int nr, T *GK_RESTRICT dst) {
    if (transb) GK_CAT(pack_block_kcontig_, SFX)(B, ldb, nc, kc, nr, dst);
    else GK_CAT(pack_block_kmajor_, SFX)(B, ldb, nc, kc, nr, dst);
}

#undef GK_PACK_PANEL_ROW
#undef TS
#undef GK_PACK_LOAD
#undef GK_PACK_ROW
