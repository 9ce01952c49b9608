/* The analytical blocking model (Low, Igual, Smith, Quintana-Orti, "Analytical Modeling Is Enough for
 * High-Performance BLIS", ACM TOMS 2016): MC, KC, NC from the cache hierarchy; pure, no CPU queried. */
#include <math.h>
#include "tuning.h"

/* Sets of a cache level (size / (ways * line)); 0 when the level is unknown or inconsistent. */
static int64_t sets_of(const gk_cache_level_t *c) {
    if (c->size <= 0 || c->ways <= 0 || c->line <= 0) return 0;
    const int64_t s = c->size / (c->ways * c->line);
    return s > 0 ? s : 0;
}

/* This core's part of a shared level, as a cache of the same ways and line: size / cores sharing it
 * (Apple's L2 of a cluster, every L3). */
static gk_cache_level_t core_share(const gk_cache_level_t *c) {
    gk_cache_level_t s = *c;
    if (s.sharing > 1) s.size = s.size / s.sharing;
    return s;
}

static int64_t ceil_div(int64_t a, int64_t b) { return (a + b - 1) / b; }

/* C_Ac: the L2 ways (of the share l2, N2 sets) the A block may take beside a B micro-panel of b_bytes
 * passing through: W2 - 1 - C_Bc, at most a quarter of the ways (the third departure below), at least 1. */
static int64_t a_block_ways(const gk_cache_level_t *l2, int64_t N2, int64_t b_bytes) {
    const int64_t cbc = ceil_div(b_bytes, N2 * l2->line);
    return GK_MAX((int64_t)1, GK_MIN(l2->ways - 1 - cbc, l2->ways / 4));
}

/* The model for one micro-kernel. Notation of the paper: W ways, N sets, C line bytes of a level; S the
 * bytes of one B value (one column of a k step of the B micro-panel: nr * S bytes per k), S_A the bytes
 * of one A value (S for real kernels, 2 S for a native complex kernel whose MR rows are (re, im) pairs).
 * The loop order is BLIS's (csrc/gemm_real.c real_macro: jr outside ir): the kc x nr B micro-panel stays
 * in L1 while the mr x kc A micro-panels stream through it from L2; the mc x kc A block stays in L2; the
 * kc x nc B block in L3.
 *   L1:  C_Ar / C_Br = (mr S_A) / (nr S), C_Ar + C_Br <= W1 - 1 (one way for the C tile / streaming) ->
 *        C_Br = floor((W1 - 1) / (1 + mr S_A / (nr S))), kc = C_Br N1 C1 / (nr S)   (rounded down to 8)
 *   L2:  (this core's share) C_Bc = ceil(nr kc S / (N2 C2)) ways hold the B micro-panel passing through,
 *        C_Ac = min(W2 - 1 - C_Bc, W2 / 4) -> mc = C_Ac N2 C2 / (kc S_A)             (rounded down to mr)
 *   L3:  this core's share of L3 (size / cores sharing it), C_A3 = ceil(mc kc S_A / (N3 C3)),
 *        C_B3 = W3 - 1 - C_A3 -> nc = C_B3 N3 C3 / (kc S), and the B block at most GK_MODEL_B_BLOCK_MAX
 *        bytes (the workspace a thread keeps, threading.c)                           (rounded down to nr)
 *        One departure from the paper: C_B3 >= floor((W3 - 1) / 2). Today's L3s (Zen, Skylake-SP and
 *        later) are victim caches that need not hold the A block living in L2, and with a per-core share
 *        of 1.4-1.9 MiB (Intel) the paper's C_A3 would leave B one way (Sapphire Rapids: nc 128).
 * A second departure: kc >= GK_MODEL_KC_MIN_BYTES / S_A (float 512, double 256 k steps). Each k block
 * reads and writes C once more; the paper's L1 rule gives the wide AVX-512 micro-panels short k blocks
 * (Zen 4 sgemm 12 x 32: kc 160) that C's traffic then slows: Zen 4, sgemm 1024^3, 1 thread, A blocks of
 * about the same bytes, kc 160 / 256 / 320 / 512: 100.6 / 103.3 / 104.5 / 106.5 GFLOP/s, dgemm kc 128 /
 * 256 / 512: 41 / 43.6 / 44.8 (the B micro-panel then streams from L2, which feeds it: Zen 2's and
 * Zen 5's hand configs had found k blocks of 512 floats too). For the AVX-512 tiles (a real kernel reading
 * GK_MODEL_WIDE_B_STEP = 128 bytes of B a k step or more: 24 zmm accumulators, 1.5 KiB of C read and written per
 * k block against 12 cycles a k step) at least GK_MODEL_WIDE_KC_MIN = 512 k steps, doubles too: Emerald Rapids,
 * 1 thread, one process, 21 rounds alternated, median of the per-round ratios, dgemm 12 x 16 k blocks 256 (mc 252)
 * -> 512 (mc 120, the quarter below): 512^3 1.03, 1024^3 1.01, 2048^3 1.05, 3000 x 1000 x 2000 1.03, 128 x 4096^2
 * 1.02, 140 x 2048^2 1.07 (three earlier runs of 11-15 rounds: 1.01-1.06 at 512-2048); 384 and 768 measured
 * between. The AVX2 6 x 16 / 6 x 8 tiles keep 2 KiB (doubles at 512 there: 0.97-1.00), and so do the native
 * complex kernels (cgemm 1024 reals and zgemm 512-768: 0.90-1.01).
 * A third departure: the A block takes at most a quarter of the L2 ways (C_Ac <= W2 / 4). With k blocks of
 * 2 KiB the B micro-panel (32-64 KiB) streams from L2 beside A, with the lines the prefetchers bring and C's;
 * the paper's W2 - 1 - C_Bc ways measured slower on every core at hand, and a quarter is what the hand
 * configs had found (Zen 4 and Zen 5 mc 120, Zen 2 72: the model now gives 120, 120, 60). Emerald Rapids
 * (Xeon family 6 model 207, L2 2 MiB 16-way, KVM guest, 1 thread pinned, one process, every candidate
 * interleaved with NumPy; gemmkit / NumPy by mc, k blocks 512 float / 256 double, nc 2048): sgemm 2048^3
 * mc 240 1.08, 384 1.06, 480 0.95, 888 (the paper's) 0.93; dgemm 2048^3 240 0.87, 384 0.94, 888 0.84;
 * dgemm 1024^3 240 0.90, 480 0.86, 888 0.85; sgemm 1024^3 flat (0.99-1.03). The quarter gives 252 there.
 * Zen 4 dgemm 1024^3: mc 96-240 1.00-1.03, 384 0.99, 888 0.96.
 * A missing level (size 0) leaves its block at the fallback given. Returns 1 when L1 and L2 were known. */
int gk_model_blocks(const gk_cache_info_t *ci, int mr, int nr, int elem, int complex_native, gk_blocks_t *out) {
    if (!ci || !out || mr <= 0 || nr <= 0 || elem <= 0) return 0;
    const int64_t S = elem, SA = complex_native ? 2 * (int64_t)elem : elem, kmul = complex_native ? 2 : 1;
    const gk_cache_level_t l2 = core_share(&ci->l2);
    const int64_t N1 = sets_of(&ci->l1), N2 = sets_of(&l2);
    if (N1 == 0 || N2 == 0 || ci->l1.ways < 2 || l2.ways < 3) return 0;
    /* L1: kc (in k steps of the kernel; complex: complex depth) */
    int64_t cbr = (int64_t)((double)(ci->l1.ways - 1) / (1.0 + (double)(mr * SA) / (double)(nr * S)));
    if (cbr < 1) cbr = 1;
    int64_t kc = cbr * N1 * ci->l1.line / (nr * S);
    kc = GK_MAX((int64_t)8, kc / 8 * 8);
    kc = GK_MAX(kc, (int64_t)GK_MODEL_KC_MIN_BYTES / SA / 8 * 8);
    if (!complex_native && nr * S >= GK_MODEL_WIDE_B_STEP) kc = GK_MAX(kc, (int64_t)GK_MODEL_WIDE_KC_MIN);
    kc = GK_MIN(kc, (int64_t)GK_TUNE_KC_MAX / kmul);
    /* L2: mc */
    const int64_t cac = a_block_ways(&l2, N2, nr * kc * S);
    int64_t mc = cac * N2 * l2.line / (kc * SA);
    mc = GK_MAX((int64_t)mr, GK_MIN(mc, (int64_t)GK_TUNE_MC_MAX) / mr * mr);
    /* L3: nc (real-domain columns for a native complex kernel: its B panel holds nr reals per k) */
    int64_t nc = out->nc;
    const gk_cache_level_t l3 = core_share(&ci->l3);
    const int64_t N3 = sets_of(&l3);
    if (N3 > 0 && l3.ways >= 3) {
        const int64_t ca3 = ceil_div(mc * kc * SA, N3 * l3.line);
        const int64_t cb3 = GK_MAX((l3.ways - 1) / 2, l3.ways - 1 - ca3);
        int64_t bytes = GK_MIN(cb3 * N3 * l3.line, (int64_t)GK_MODEL_B_BLOCK_MAX);
        nc = bytes / (kc * S);
        nc = GK_MAX((int64_t)nr, GK_MIN(nc, (int64_t)GK_TUNE_NC_MAX) / nr * nr);
    }
    out->mc = mc;
    out->kc = kc * kmul;
    out->nc = nc;
    return 1;
}

/* int8: the k block kb = GK_MODEL_INT8_KB k steps (its kb x nr B sub-panel streams from L2, as the float
 * kernels' at the k floor: the paper's L1 rule, kb 640 on Zen 4 and 1024 on Emerald Rapids, lost to 4096 on
 * both: Zen 4 gemm_u8s8s32 2048^3 379-382 -> 409-413 GOP/s (config/zen4.c); Emerald Rapids, interleaved,
 * 2048^3 311 -> 318-324, 1024^3 282-287 -> 300-302); the A block budget l2_bytes = C_Ac ways of L2 (C_Ac =
 * min(W2 - 1 - C_Bc, W2 / 4) as above); the B block budget l3_bytes = the L3 ways of this core's share less
 * one for A, at most GK_MODEL_B_BLOCK_MAX. The caps mc / nc, the k chunk and the few-row limits stay the
 * configuration's. Returns 1 when L1 and L2 were known. */
int gk_model_int8_blocks(const gk_cache_info_t *ci, int mr, int nr, int elem, gk_int8_blocks_t *io) {
    if (!ci || !io || mr <= 0 || nr <= 0 || elem <= 0) return 0;
    const gk_cache_level_t l2 = core_share(&ci->l2);
    const int64_t N1 = sets_of(&ci->l1), N2 = sets_of(&l2);
    if (N1 == 0 || N2 == 0 || ci->l1.ways < 2 || l2.ways < 3) return 0;
    const int64_t kb = GK_MODEL_INT8_KB;
    const int64_t cac = a_block_ways(&l2, N2, (int64_t)nr * kb * elem);
    io->kb = kb;
    io->l2_bytes = GK_MIN((int64_t)GK_MODEL_B_BLOCK_MAX, cac * N2 * l2.line);
    const gk_cache_level_t l3 = core_share(&ci->l3);
    const int64_t N3 = sets_of(&l3);
    if (N3 > 0 && l3.ways >= 3)
        io->l3_bytes = GK_MIN((int64_t)GK_MODEL_B_BLOCK_MAX, (l3.ways - 2) * N3 * l3.line);
    return 1;
}

/* A plain B read in place instead of packed while it fits in L1 with room for the rest: B of n x n
 * doubles in three quarters of L1 (32 KiB: n = 55; Zen 2 measured the turn at 56^3, config/zen2.c). */
double gk_model_direct_b_macs(const gk_cache_info_t *ci) {
    if (!ci || ci->l1.size <= 0) return 0.0;
    const double n = floor(sqrt((double)ci->l1.size * 0.75 / 8.0));
    return n * n * n;
}

/* Whether this core's share of L2 is 2 MiB or more (the Intel server cores measured, Emerald Rapids; Zen 2-5 have 0.5-1
 * MiB): the two routing rules below take their measured values there. */
static int l2_share_2mib(const gk_cache_info_t *ci) { return core_share(&ci->l2).size >= ((int64_t)2 << 20); }

/* Few rows of C against a plain B read in place (16 k deep at a time, C's rows summed again every 16 k) for up to
 * the table's number of MR-row panels where this core's L2 share is 2 MiB or more, else one panel (more rows pack B).
 * Between two k blocks the panels' rows of C and B's 16-deep block stay in L2: at N = 4096 floats three 12-row panels
 * and the block take 832 KiB (three 6-row ones 544 KiB), half of a 2 MiB L2 or less, against one panel's 448 / 352
 * KiB. Measured both ways, gemmkit.matmul / np.matmul, 1 thread, builds of one and three panels alternated:
 * Emerald Rapids (Xeon family 6 model 207, L2 2 MiB 16-way) kept three, avx2 path float32 16 x 4096^2 1.15-1.30 with
 * three -> 0.76-0.83 with one, 12 x 4096^2 1.38-1.43 -> 0.83-0.85, float64 16 x 2048^2 0.62-0.74 -> 0.52-0.56 (the
 * AVX-512 table likewise: csrc/config/common.h); Zen 4 (L2 1 MiB 8-way) wanted one on both paths (avx2 float32 12 x
 * 4096^2 33 -> 49 GFLOP/s, float64 16 x 2048^2 16-17 -> 26-28; AVX-512: csrc/config/zen4.c). 0 when L2 is unknown. */
int gk_model_direct_row_panels(const gk_cache_info_t *ci, int table_panels) {
    if (!ci || ci->l2.size <= 0 || table_panels <= 0) return 0;
    return l2_share_2mib(ci) ? table_panels : 1;
}

/* Few rows of C packed (one block of MC rows a thread, B not shared): B packed a group of NR panels at a time by the
 * macro-kernel into one reused buffer (csrc/gemm_real.c) where this core's L2 share is 2 MiB or more, B's whole block
 * first elsewhere (0: the wide blocks measured on Zen 4, L2 1 MiB; groups not measured there). A group is
 * GK_MODEL_B_GROUP_BYTES of each B row, in panels of panel_row_bytes (a panel's row: NR values of the kernel; the
 * float and double kernels of one path have the same: 128 bytes on AVX-512, 64 on AVX2 and the generic path, 48 on
 * NEON). Emerald Rapids (Xeon family 6 model 207, L2 2 MiB 16-way), 1 thread, builds with groups / without in one
 * process, 15 rounds alternated, best round / median (AVX-512, groups of 8 panels): float32 128 x 4096^2 1.07-1.11 /
 * 1.06-1.07, 96 x 8192 x 2048 1.16 / 1.11, 64 x 4096^2 1.13 / 1.02, 128 x 1024^2 1.06 / 1.06; float64 128 x 4096^2
 * 1.08 / 0.97, 100 x 1024^2 1.06 / 1.10. The group by bytes, the same VM, one process, 11 rounds alternated, median of
 * the per-round ratios, groups of 1 KiB / 512 bytes (AVX2: 16 / 8 panels): float32 64 x 4096^2 1.13, 128 x 4096^2
 * 1.05, 200 x 4096^2 1.12, 32 x 4096^2 1.21, 96 x 8192 x 2048 1.05, 128 x 1024^2 1.05; float64 64 x 4096^2 1.12,
 * 128 x 4096^2 1.09, 24 x 4096^2 1.27, 100 x 2048^2 1.07, 128 x 1024^2 1.02; 2 threads float32 128 x 4096^2 1.06,
 * float64 64 x 4096^2 1.15 (MKL's AVX2 code 1.03-1.22x ahead before, level to 1.11 after); 2 KiB / 4 KiB: float32 64
 * x 4096^2 1.11 / 1.04, float64 1.12 / 1.05. AVX-512, 1 KiB / 2 KiB / 4 KiB (8 / 16 / 32 panels): float32 64 x 4096^2
 * 1.00 / 0.96 / 0.98, 128 x 4096^2 1.00 / 1.01 / 0.98, float64 64 x 4096^2 1.00 / 0.98 / 0.93. -1 when L2 is
 * unknown. */
int gk_model_b_group_panels(const gk_cache_info_t *ci, int panel_row_bytes) {
    if (!ci || ci->l2.size <= 0 || panel_row_bytes <= 0) return -1;
    return l2_share_2mib(ci) ? GK_MAX(1, GK_MIN(GK_TUNE_B_GROUP_MAX, GK_MODEL_B_GROUP_BYTES / panel_row_bytes)) : 0;
}

/* A transposed A in the plain loops is copied in strips first past a walk of 2 MiB of pages (512) per row block where
 * this core's L2 share is 2 MiB or more, past the table's (8 MiB) elsewhere (csrc/gemm_small.c). Emerald Rapids
 * (Xeon family 6 model 207, L2 2 MiB 16-way), AVX-512 path, float32 TN, gemmkit.matmul / np.matmul, 1 thread, one
 * process, in place / strips / packed interleaved: 3000 x 64 x 1000 (walk 1000 pages) 0.73 / 0.90 / 0.78, 3000 x 48 x
 * 1500 0.49 / 0.83 / 0.75, 3000 x 32 x 1000 0.71 / 0.86 / 0.71, 3000 x 16 x 1000 0.73 / 0.74 / 0.43; on Zen 4 (L2 1 MiB)
 * in place won up to 1500 pages (AVX-512 3000 x 48 x 1500 1.20-1.25 in place, 1.00 by strips; 3000 x 16 x 1000 2.12 /
 * 1.01). Once the strips' copy inlined its rows (csrc/pack_real_template.h), in place / strips past 2 MiB: 256 x 16 x
 * 3000 (750 pages) 0.65 / 0.83, 256 x 32 x 2800 0.66 / 0.90, 1000 x 16 x 700 0.75 / 0.90, 2000 x 64 x 600 0.89 / 0.95,
 * 200 x 16 x 3000 (586 pages) 0.84 / 0.89; below it 1 MiB lost (1000 x 16 x 300 0.88 / 0.84) where 256 x 64 x 1500 gained
 * (0.84 / 0.96), 512 KiB lost 256 x 16 x 1000 (0.99 / 0.85). The avx2 path's loops (a walk per 16 columns) went the
 * other way with the copy a call per row (3000 x 48 x 1500 0.75 in place, 0.69 by strips); with it inlined they follow
 * (against OpenBLAS's Haswell kernels, in place / strips past 2 MiB: 256 x 32 x 2800 0.46 / 0.93, 256 x 16 x 3000 0.68 /
 * 0.94, 1000 x 16 x 700 0.86 / 0.93, 3000 x 48 x 1500 0.87 / 1.01-1.03, 3000 x 16 x 1000 level). 0 when L2 is unknown. */
double gk_model_ta_strips_min_walk(const gk_cache_info_t *ci, double table_walk) {
    if (!ci || ci->l2.size <= 0 || !(table_walk > 0)) return 0.0;
    return l2_share_2mib(ci) ? GK_MIN(table_walk, (double)(2 << 20)) : table_walk;
}
