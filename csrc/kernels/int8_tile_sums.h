/* The int8 k loop shared by the 256- and 512-bit kernel templates: MR x 2 accumulators in named
 * variables, raw sums to the aligned tile s, and C's rows prefetched before the tile's last k groups. */
/* The including template defines MR, NR, KG, ES, I8_STEP and the vector ops on I8_VEC (I8_LANES int32):
 * I8_ZERO(), I8_LOAD(p), I8_STORE(p, v), I8_BCAST(w). GCC keeps arrays of vectors in memory, hence the
 * named variables c<i>0, c<i>1. */
#ifndef GEMMKIT_IGEMM_TILE_SUMS_H
#define GEMMKIT_IGEMM_TILE_SUMS_H

#define I8_PASTE2(a, b) a##b
#define I8_PASTE(a, b) I8_PASTE2(a, b)
#if MR == 12
#define I8_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#define INT8_PARTIAL_ROWS(X) X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11)
#elif MR == 6
#define I8_ROWS(X) X(0) X(1) X(2) X(3) X(4) X(5)
#define INT8_PARTIAL_ROWS(X) X(1) X(2) X(3) X(4) X(5)
#else
#error "unsupported MR"
#endif

#define I8_DECL(i)                                                                                   \
    I8_VEC c##i##0 = accumulate ? I8_LOAD(s + (i) * NR) : I8_ZERO();                                 \
    I8_VEC c##i##1 = accumulate ? I8_LOAD(s + (i) * NR + I8_LANES) : I8_ZERO();
#define I8_ROW(i)                                                                                    \
    {                                                                                                \
        int32_t w;                                                                                   \
        memcpy(&w, a + (KG * ES) * (i), 4);                                                          \
        const I8_VEC x = I8_BCAST(w);                                                                \
        c##i##0 = I8_STEP(c##i##0, x, b0);                                                           \
        c##i##1 = I8_STEP(c##i##1, x, b1);                                                           \
    }
#define I8_SAVE(i) I8_STORE(s + (i) * NR, c##i##0); I8_STORE(s + (i) * NR + I8_LANES, c##i##1);
/* the GK_EP_INT32 epilogue in registers: C row i = sums + row_i32[i] + col_i32[0:NR) */
#define I8_PUT(i)                                                                                    \
    {                                                                                                \
        const I8_VEC r = I8_BCAST(row_i32[i]);                                                       \
        I8_STORE(cdst + (i) * ldc, I8_ADD(I8_ADD(c##i##0, r), col0));                               \
        I8_STORE(cdst + (i) * ldc + I8_LANES, I8_ADD(I8_ADD(c##i##1, r), col1));                    \
    }
#define I8_LOOP(count)                                                                               \
    for (int64_t g = 0; g < (count); g++) {                                                          \
        const I8_VEC b0 = I8_LOAD(b), b1 = I8_LOAD(b + I8_LANES * 4);                                \
        I8_ROWS(I8_ROW)                                                                              \
        a += MR * KG * ES;                                                                           \
        b += NR * KG * ES;                                                                           \
    }

/* c != NULL (the call that finishes the tile): its C rows (ldc_bytes apart, NR elements each) are prefetched into L1
 * I8_PF_C_GROUPS k groups before the end, for the epilogue that follows (see docs/decisions.md, I8_PF_C_GROUPS). */
#ifndef I8_PF_C_GROUPS
#define I8_PF_C_GROUPS 64
#endif
/* cdst != NULL (int32 C, ldc elements apart, with the GK_EP_INT32 terms row_i32 / col_i32): the sums finished in
 * registers and stored to C instead of s (no round trip through the tile; see docs/decisions.md, int8_tile_sums:
 * cdst). */
static inline void int8_tile_sums(int64_t kgroups, const uint8_t *GK_RESTRICT a, const uint8_t *GK_RESTRICT b,
                                int32_t *GK_RESTRICT s, int accumulate, const void *c, int64_t ldc_bytes,
                                int32_t *cdst, int64_t ldc, const int32_t *row_i32, const int32_t *col_i32) {
    I8_ROWS(I8_DECL)
    const int64_t tail = c != NULL ? GK_MIN(kgroups, (int64_t)I8_PF_C_GROUPS) : 0;
    I8_LOOP(kgroups - tail)
    if (c != NULL) {
        for (int i = 0; i < MR; i++)
            for (int x = 0; x < NR; x += 16) GK_PREFETCH((const char *)c + i * ldc_bytes + 4 * x);
        I8_LOOP(tail)
    }
    if (cdst != NULL) {
        const I8_VEC col0 = I8_LOAD(col_i32), col1 = I8_LOAD(col_i32 + I8_LANES);
        I8_ROWS(I8_PUT)
        return;
    }
    I8_ROWS(I8_SAVE)
}
#undef I8_PUT
#undef I8_LOOP

/* Sums of the first m (< MR) rows: an accumulator array, fully unrolled for each constant m. */
static GK_FORCEINLINE void int8_tile_sums_rows(const int m, int64_t kgroups, const uint8_t *GK_RESTRICT a,
                                             const uint8_t *GK_RESTRICT b, int32_t *GK_RESTRICT s, int accumulate) {
    I8_VEC acc[MR][2];
#pragma GCC unroll 16
    for (int i = 0; i < m; i++) {
        acc[i][0] = accumulate ? I8_LOAD(s + i * NR) : I8_ZERO();
        acc[i][1] = accumulate ? I8_LOAD(s + i * NR + I8_LANES) : I8_ZERO();
    }
    for (int64_t g = 0; g < kgroups; g++) {
        const I8_VEC b0 = I8_LOAD(b), b1 = I8_LOAD(b + I8_LANES * 4);
#pragma GCC unroll 16
        for (int i = 0; i < m; i++) {
            int32_t w;
            memcpy(&w, a + (KG * ES) * i, 4);
            const I8_VEC x = I8_BCAST(w);
            acc[i][0] = I8_STEP(acc[i][0], x, b0);
            acc[i][1] = I8_STEP(acc[i][1], x, b1);
        }
        a += MR * KG * ES;
        b += NR * KG * ES;
    }
#pragma GCC unroll 16
    for (int i = 0; i < m; i++) {
        I8_STORE(s + i * NR, acc[i][0]);
        I8_STORE(s + i * NR + I8_LANES, acc[i][1]);
    }
}

#endif /* GEMMKIT_IGEMM_TILE_SUMS_H */
