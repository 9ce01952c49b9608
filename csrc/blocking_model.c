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
 * reads and writes C once more; the paper's L1 rule gives the wide AVX-512 micro-panels short k blocks that
 * C's traffic then slows (the B micro-panel then streams from L2, which feeds it; the hand configs had found
 * k blocks of 512 floats too: docs/decisions.md, GK_MODEL_KC_MIN_BYTES). For the AVX-512 tiles (a
 * real kernel reading GK_MODEL_WIDE_B_STEP = 128 bytes of B a k step or more: 24 zmm accumulators, 1.5 KiB of
 * C read and written per k block against 12 cycles a k step) at least GK_MODEL_WIDE_KC_MIN = 512 k steps,
 * doubles too. The AVX2 6 x 16 / 6 x 8 tiles keep 2 KiB, and so do the native complex kernels (see
 * docs/decisions.md, GK_MODEL_KC_MIN_BYTES / GK_MODEL_WIDE_KC_MIN).
 * A third departure: the A block takes at most a quarter of the L2 ways (C_Ac <= W2 / 4). With k blocks of
 * 2 KiB the B micro-panel (32-64 KiB) streams from L2 beside A, with the lines the prefetchers bring and C's;
 * the paper's W2 - 1 - C_Bc ways measured slower on every core at hand, and a quarter is what the hand
 * configs had found (see docs/decisions.md, C_Ac <= W2 / 4).
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

/* int8: the k block kb = GK_MODEL_INT8_KB k steps (its kb x nr B sub-panel streams from L2, as the float kernels' at
 * the k floor: the paper's L1 rule lost to the whole depth on the cores measured; see docs/decisions.md,
 * GK_MODEL_INT8_KB); the A block budget l2_bytes = C_Ac ways of L2 (C_Ac = min(W2 - 1 - C_Bc, W2 / 4) as above); the
 * B block budget l3_bytes = the L3 ways of this core's share less one for A, at most GK_MODEL_B_BLOCK_MAX. The caps
 * mc / nc, the k chunk and the few-row limits stay the configuration's. Returns 1 when L1 and L2 were known. */
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
 * doubles in three quarters of L1 (32 KiB: n = 55, where the measured turn was; docs/decisions.md). */
double gk_model_direct_b_macs(const gk_cache_info_t *ci) {
    if (!ci || ci->l1.size <= 0) return 0.0;
    const double n = floor(sqrt((double)ci->l1.size * 0.75 / 8.0));
    return n * n * n;
}

/* Whether this core's share of L2 is 2 MiB or more (the server cores with large private L2s): the two routing rules
 * below take the values measured on such a core there (docs/decisions.md). */
static int l2_share_2mib(const gk_cache_info_t *ci) { return core_share(&ci->l2).size >= ((int64_t)2 << 20); }

/* Few rows of C against a plain B read in place (16 k deep at a time, C's rows summed again every 16 k) for up to the
 * table's number of MR-row panels where this core's L2 share is 2 MiB or more, else one panel (more rows pack B).
 * Between two k blocks the panels' rows of C and B's 16-deep block stay in L2: at N = 4096 floats three 12-row panels
 * and the block take 832 KiB (three 6-row ones 544 KiB), half of a 2 MiB L2 or less, against one panel's 448 / 352
 * KiB (see docs/decisions.md, gk_model_direct_row_panels). 0 when L2 is unknown. */
int gk_model_direct_row_panels(const gk_cache_info_t *ci, int table_panels) {
    if (!ci || ci->l2.size <= 0 || table_panels <= 0) return 0;
    return l2_share_2mib(ci) ? table_panels : 1;
}

/* Few rows of C packed (one block of MC rows a thread, B not shared): B packed a group of NR panels at a time by the
 * macro-kernel into one reused buffer (csrc/gemm_real.c) where this core's L2 share is 2 MiB or more, B's whole block
 * first elsewhere (0: the wide blocks measured on a 1 MiB L2; groups not measured there). A group is
 * GK_MODEL_B_GROUP_BYTES of each B row, in panels of panel_row_bytes (a panel's row: NR values of the kernel; the
 * float and double kernels of one path have the same: 128 bytes on AVX-512, 64 on AVX2 and the generic path, 48 on
 * NEON): a few hundred bytes of each row keep the reads long and the buffer in L2 (see docs/decisions.md,
 * gk_model_b_group_panels). -1 when L2 is unknown. */
int gk_model_b_group_panels(const gk_cache_info_t *ci, int panel_row_bytes) {
    if (!ci || ci->l2.size <= 0 || panel_row_bytes <= 0) return -1;
    return l2_share_2mib(ci) ? GK_MAX(1, GK_MIN(GK_TUNE_B_GROUP_MAX, GK_MODEL_B_GROUP_BYTES / panel_row_bytes)) : 0;
}

/* A transposed A in the plain loops is copied in strips first past a walk of 2 MiB of pages (512) per row block where
 * this core's L2 share is 2 MiB or more, past the table's (8 MiB) elsewhere (csrc/gemm_small.c): a larger L2 hides
 * fewer of the walk's TLB misses behind its reuse (see docs/decisions.md, gk_model_ta_strips_min_walk). 0 when L2 is
 * unknown. */
double gk_model_ta_strips_min_walk(const gk_cache_info_t *ci, double table_walk) {
    if (!ci || ci->l2.size <= 0 || !(table_walk > 0)) return 0.0;
    return l2_share_2mib(ci) ? GK_MIN(table_walk, (double)(2 << 20)) : table_walk;
}
