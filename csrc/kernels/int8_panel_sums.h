/* Few-row int8 sums over several packed B panels side by side (the per-token / GEMV-like shapes, M <= 4):
 * each k group reads one 2-vector slice of every panel, so the weight streams as several sequential streams. */
/* Included at the end of a 512-bit template (after int8_tile_sums.h), or by the AMX kernel, which define MR, NR,
 * KG, ES, I8_STEP, I8_VEC, I8_LANES, I8_LOAD, I8_STORE, I8_BCAST, I8_ZERO and I8_KERNEL_NAME. A packed group is
 * KG * ES / 4 steps of 4 bytes (one for VNNI's groups, 16 for AMX's rows of 64 k: row i's step q at
 * a + KG * ES * i + 4 * q, B's at b + NR * 4 * q). Raw int32 sums only (exact within the kernel's k_chunk):
 * panel p's m rows go to s + p * m * NR, NR apart; the caller runs the epilogue. */
#ifndef I8_PANEL_PF
#define I8_PANEL_PF 0 /* software prefetch distance per stream, bytes (0: none) */
#endif
#define I8_GROUP_STEPS (KG * ES / 4)

static GK_FORCEINLINE void int8_panels_body(const int m, const int np, int64_t kgroups, const uint8_t *GK_RESTRICT a,
                                            const uint8_t *GK_RESTRICT b, size_t panel_bytes, int32_t *GK_RESTRICT s) {
    I8_VEC acc[4][4][2];
#pragma GCC unroll 4
    for (int i = 0; i < m; i++)
#pragma GCC unroll 4
        for (int p = 0; p < np; p++) acc[i][p][0] = acc[i][p][1] = I8_ZERO();
    for (int64_t g = 0; g < kgroups; g++) {
        for (int q = 0; q < I8_GROUP_STEPS; q++) {
            I8_VEC b0[4], b1[4];
#pragma GCC unroll 4
            for (int p = 0; p < np; p++) {
                b0[p] = I8_LOAD(b + p * panel_bytes + NR * 4 * q);
                b1[p] = I8_LOAD(b + p * panel_bytes + NR * 4 * q + I8_LANES * 4);
#if I8_PANEL_PF > 0
                if ((g & 1) == 0) GK_PREFETCH(b + p * panel_bytes + I8_PANEL_PF);
#endif
            }
#pragma GCC unroll 4
            for (int i = 0; i < m; i++) {
                int32_t w;
                memcpy(&w, a + (KG * ES) * i + 4 * q, 4);
                const I8_VEC x = I8_BCAST(w);
#pragma GCC unroll 4
                for (int p = 0; p < np; p++) {
                    acc[i][p][0] = I8_STEP(acc[i][p][0], x, b0[p]);
                    acc[i][p][1] = I8_STEP(acc[i][p][1], x, b1[p]);
                }
            }
        }
        a += MR * KG * ES;
        b += NR * KG * ES;
    }
#pragma GCC unroll 4
    for (int p = 0; p < np; p++)
#pragma GCC unroll 4
        for (int i = 0; i < m; i++) {
            I8_STORE(s + (p * m + i) * NR, acc[i][p][0]);
            I8_STORE(s + (p * m + i) * NR + I8_LANES, acc[i][p][1]);
        }
}

/* Up to 4 rows (m) of the packed A panel a against np (1..4) consecutive NR panels of packed B (panel_bytes
 * apart) over kgroups: 4 panels at a time for 1-2 rows, 2 for 3-4 rows (the accumulators fit the 32
 * registers), then the rest. */
static void I8_PASTE(I8_KERNEL_NAME, _panels)(int m, int np, int64_t kgroups, const uint8_t *GK_RESTRICT a,
                                              const uint8_t *GK_RESTRICT b, size_t panel_bytes, int32_t *GK_RESTRICT s) {
    const int step = m <= 2 ? 4 : 2;
    while (np > 0) {
        const int n = np >= step ? step : np >= 2 ? 2 : 1;
#define I8_PANELS_CASE(mm, nn) \
    else if (m == mm && n == nn) int8_panels_body(mm, nn, kgroups, a, b, panel_bytes, s);
        if (0) {
        }
        I8_PANELS_CASE(1, 4) I8_PANELS_CASE(1, 2) I8_PANELS_CASE(1, 1)
        I8_PANELS_CASE(2, 4) I8_PANELS_CASE(2, 2) I8_PANELS_CASE(2, 1)
        I8_PANELS_CASE(3, 2) I8_PANELS_CASE(3, 1)
        I8_PANELS_CASE(4, 2) I8_PANELS_CASE(4, 1)
#undef I8_PANELS_CASE
        b += n * panel_bytes;
        s += n * m * NR;
        np -= n;
    }
}
