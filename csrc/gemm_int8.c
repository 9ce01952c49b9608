/* The int8 family on the driver skeleton (u8s8s32, s8s8s32, after the frontend's checks): packers with
 * row/column sums, zero points applied by compensation in the microkernel's exact epilogue, the dot path. */
#include <string.h>
#include "int8_problem.h"
#include "pack.h"

/* Blocking of the NC x K panels of B and MC x K panels of A for a given packed depth kp. */
static void int8_block_sizes(const int8_job_t *job, int64_t kp, int nchunks_gt1, int64_t *MC, int64_t *NC) {
    const gk_int8_kernel_t *kern = job->kern;
    const gk_int8_blocks_t *b = job->blocks;
    const int mr = kern->mr, nr = kern->nr, es = kern->elem_size;
    /* Cache blocks scaled to the panel depth: A block ~ L2 budget, B block ~ share of L3. */
    *MC = GK_MAX((int64_t)mr, GK_MIN(b->mc, b->l2_bytes / (kp * es) / mr * mr));
    *NC = GK_MAX((int64_t)nr, GK_MIN(b->nc, b->l3_bytes / (kp * es) / nr * nr));
    if (nchunks_gt1) *NC = GK_MIN(*NC, (int64_t)GK_MAX(nr, 256 / nr * nr)); /* bound the int64 sums */
}

/* Which epilogue the tiles of this block may use (see gk_int8_epilogue_t). */
static int epilogue_mode(const int8_job_t *job, const int8_terms_t *rows, const int8_terms_t *cols) {
    if (job->alpha != 1.0 || (job->beta != 0.0 && job->beta != 1.0)) return GK_EP_DOUBLE;
    const int64_t s_max = job->K * 255 * 128; /* |sum_k a' b| with a' in [0, 255], b in [-128, 127] */
    if (job->beta == 0.0 && s_max + rows->max_abs + cols->max_abs <= (int64_t)INT32_MAX) return GK_EP_INT32;
    return GK_EP_INT64;
}

/* B block [kc x nc] into NR panels with column sums: the kernel's own packer when it has one. */
static void pack_b_block(const int8_job_t *job, const int8_t *Bp, int64_t kc, int64_t nc, uint8_t *dst,
                         int32_t *colsum) {
    const gk_int8_kernel_t *kern = job->kern;
    if (!job->transb && kern->pack_b_kmajor) kern->pack_b_kmajor(Bp, job->ldb, kc, nc, dst, colsum);
    else if (job->transb && kern->pack_b_kcontig) kern->pack_b_kcontig(Bp, job->ldb, kc, nc, dst, colsum);
    else gk_pack_b_int8(job->transb, Bp, job->ldb, kc, nc, kern->nr, kern->kgroup, kern->elem_size, dst, colsum);
}

/* ---- the hooks of the driver skeleton ------------------------------------------------------------
 * The k step is one exact chunk (kern->k_chunk). K within one chunk (the common case): full-K panels, one
 * microkernel call per tile with the epilogue fused. Longer K: each chunk's raw int32 tile sums are added
 * into an int64 block of C per thread (exact), and the scalar epilogue runs after the last chunk. */

/* A thread's state: sums and epilogue terms of its blocks, carved from its workspace. */
typedef struct {
    int32_t *rowsum;      /* the packed A block's row sums (mc_max) */
    int64_t *rs64;        /* row sums over K: of the A block (one chunk), of the thread's rows (longer K) */
    int64_t *cs64;        /* column sums over K of the B block */
    int8_terms_t rows, cols;
    int64_t *acc;         /* longer K: the exact sums of the thread's rows x the B block (rows nc_max apart) */
    int32_t *acc_tiles;   /* one chunk: the raw sums of an MR-row panel's tiles within a k block */
} int8_thread_t;

static int64_t int8_packed_depth(const int8_job_t *job, int64_t kc) {
    const int kg = job->kern->kgroup;
    return (kc + kg - 1) / kg * kg;
}

/* A packed B block: the column sums (the column block's worth, 64-byte aligned), then the NR panels. */
static size_t int8_colsum_bytes(const int8_job_t *job) { return gk_align64(sizeof(int32_t) * (size_t)job->nc); }

static size_t int8_a_bytes(const void *ctx, int64_t mc, int64_t kc) {
    const int8_job_t *job = (const int8_job_t *)ctx;
    return (size_t)(mc * int8_packed_depth(job, kc) * job->kern->elem_size) + 64;
}
static size_t int8_b_bytes(const void *ctx, int64_t nc, int64_t kc) {
    const int8_job_t *job = (const int8_job_t *)ctx;
    if (job->packed_b) return 64; /* read from the prepacked weight */
    return int8_colsum_bytes(job) + (size_t)(nc * int8_packed_depth(job, kc) * job->kern->elem_size);
}

static void *carve(uint8_t **cursor, size_t bytes) {
    void *p = *cursor;
    *cursor += gk_align64(bytes);
    return p;
}

static int int8_thread_begin(void *ctx, gk_loop_thread_t *t) {
    const int8_job_t *job = (const int8_job_t *)ctx;
    const int64_t mc = t->mc_max, nc = t->nc_max, rows = t->m1 - t->m0;
    const int chunks = job->K > job->kern->k_chunk;
    const size_t per_col = sizeof(int32_t) + sizeof(int64_t) + 2 * sizeof(double) + sizeof(int64_t) + sizeof(int32_t);
    const size_t bytes = gk_align64(sizeof(int8_thread_t)) + (size_t)(mc + nc) * per_col + sizeof(int32_t) * (size_t)mc +
                         sizeof(int64_t) * (size_t)(chunks ? rows : mc) + sizeof(int32_t) * (size_t)(mc * job->kern->nr) +
                         (chunks ? sizeof(int64_t) * (size_t)(rows * nc) : 0) + 16 * 64;
    uint8_t *ws = (uint8_t *)gk_thread_workspace(GK_WS_STATE, bytes);
    if (!ws) return 0;
    int8_thread_t *st = (int8_thread_t *)carve(&ws, sizeof(int8_thread_t));
    st->rowsum = (int32_t *)carve(&ws, sizeof(int32_t) * (size_t)mc);
    st->rs64 = (int64_t *)carve(&ws, sizeof(int64_t) * (size_t)(chunks ? rows : mc));
    st->cs64 = (int64_t *)carve(&ws, sizeof(int64_t) * (size_t)nc);
    int8_terms_t *terms[2] = {&st->rows, &st->cols};
    for (int r = 0; r < 2; r++) {
        const size_t n = (size_t)(r == 0 ? mc : nc);
        terms[r]->comp = (double *)carve(&ws, sizeof(double) * n);
        terms[r]->add = (double *)carve(&ws, sizeof(double) * n);
        terms[r]->sum64 = (int64_t *)carve(&ws, sizeof(int64_t) * n);
        terms[r]->sum32 = (int32_t *)carve(&ws, sizeof(int32_t) * n);
    }
    st->acc = chunks ? (int64_t *)carve(&ws, sizeof(int64_t) * (size_t)(rows * nc)) : NULL;
    st->acc_tiles = (int32_t *)carve(&ws, sizeof(int32_t) * (size_t)(mc * job->kern->nr));
    t->state = st;
    return 1;
}

static void int8_pack_b(void *ctx, int64_t k0, int64_t kc, int64_t jc, int64_t nc, int64_t j0, int64_t w, void *blk) {
    const int8_job_t *job = (const int8_job_t *)ctx;
    (void)nc;
    if (job->packed_b) return;
    const int8_t *Bp = job->transb ? job->B + (jc + j0) * job->ldb + k0 : job->B + k0 * job->ldb + jc + j0;
    uint8_t *panels = (uint8_t *)blk + int8_colsum_bytes(job);
    pack_b_block(job, Bp, kc, w, panels + (size_t)(j0 * int8_packed_depth(job, kc) * job->kern->elem_size),
                 (int32_t *)blk + j0);
}

/* The block's column sums added up over K; after the last chunk, the column terms of the epilogue. */
static const void *int8_b_ready(void *ctx, gk_loop_thread_t *t, int64_t k0, int64_t kc, int64_t jc, int64_t nc,
                              const void *blk) {
    const int8_job_t *job = (const int8_job_t *)ctx;
    int8_thread_t *st = (int8_thread_t *)t->state;
    const int32_t *colsum = job->packed_b ? job->packed_colsum + jc : (const int32_t *)blk;
    const uint8_t *panels = job->packed_b ? job->packed_b + (size_t)(jc * int8_packed_depth(job, kc) * job->kern->elem_size)
                                          : (const uint8_t *)blk + int8_colsum_bytes(job);
    for (int64_t j = 0; j < nc; j++) st->cs64[j] = (k0 == 0 ? 0 : st->cs64[j]) + colsum[j];
    if (k0 + kc >= job->K) gk_int8_col_terms(job, jc, nc, st->cs64, &st->cols);
    return panels;
}

static void int8_pack_a(void *ctx, gk_loop_thread_t *t, int64_t ic, int64_t k0, int64_t mc, int64_t kc, void *dst) {
    const int8_job_t *job = (const int8_job_t *)ctx;
    const gk_int8_kernel_t *kern = job->kern;
    int8_thread_t *st = (int8_thread_t *)t->state;
    const uint8_t *Ap = job->transa ? job->A + k0 * job->lda + ic : job->A + ic * job->lda + k0;
    gk_pack_a_int8(job->transa, Ap, job->lda, mc, kc, kern->mr, kern->kgroup, kern->elem_size, job->flip_a,
              (uint8_t *)dst, st->rowsum);
    int64_t *rs = job->K > kern->k_chunk ? st->rs64 + (ic - t->m0) : st->rs64;
    for (int64_t i = 0; i < mc; i++) rs[i] = (k0 == 0 ? 0 : rs[i]) + st->rowsum[i];
}

/* One chunk of at most GK_INT8_PANEL_ROWS rows (one short row panel; the weight is read once, which the
 * product is bound by): the whole depth over 4 column panels at a time read side by side (kern->panel_sums),
 * then each panel's epilogue: the row kernel's own with zero k groups for a full tile, else the scalar one.
 * The int32 sums are those of the tile path (exact integers in another order): the same bytes. */
static void int8_few_rows_one_chunk(const int8_job_t *job, int8_thread_t *st, int64_t ic, int64_t jc, int64_t mc, int64_t nc,
                                  int64_t kgroups, int mode, const uint8_t *abuf, const uint8_t *bbuf) {
    const gk_int8_kernel_t *kern = job->kern;
    const int nr = kern->nr, es = kern->elem_size;
    const size_t panel_bytes = (size_t)(kgroups * kern->kgroup * nr) * es;
    GK_ALIGN64 int32_t sums[4 * GK_INT8_PANEL_ROWS * 64];
    GK_ALIGN64 int64_t tile64[GK_INT8_PANEL_ROWS * 64];
    for (int64_t jr = 0; jr < nc; jr += 4 * (int64_t)nr) {
        const int np = (int)GK_MIN((int64_t)4, (nc - jr + nr - 1) / nr);
        kern->panel_sums((int)mc, np, kgroups, abuf, bbuf + (size_t)jr * (panel_bytes / (size_t)nr), panel_bytes, sums);
        for (int p = 0; p < np; p++) {
            const int64_t j = jr + (int64_t)p * nr, nb = GK_MIN((int64_t)nr, nc - j);
            int32_t *s = sums + (size_t)p * (size_t)mc * (size_t)nr;
            void *c = gk_int8_c_at(job, ic, jc + j);
            const gk_int8_epilogue_t ep = gk_int8_tile_epilogue(job, &st->rows, 0, &st->cols, j, ic, jc + j, mode);
            const gk_int8_ukernel_fn fn = mc == kern->mr ? kern->ukernel : kern->ukernel_rows ? kern->ukernel_rows[mc] : NULL;
            if (nb == nr && fn && (job->dst == GK_DST_INT32 || mode == GK_EP_INT32)) {
                fn(0, abuf, bbuf, s, 1, c, job->ldc, &ep);
            } else {
                for (int64_t i = 0; i < mc; i++)
                    for (int64_t x = 0; x < nr; x++) tile64[i * nr + x] = s[i * nr + x];
                gk_int8_epilogue_scalar(mc, nb, tile64, nr, c, job->ldc, &ep);
            }
        }
    }
}

/* One chunk: per NR column panel, k in blocks of kb, the B sub-panel (kb x NR) stays in L1 while every MR
 * row panel adds its sums to its own tile in acc_tiles; the last block finishes the tiles in the kernel
 * (full tiles, and edge row panels where it has a row-count variant) or in the scalar epilogue. */
static void int8_macro_one_chunk(const int8_job_t *job, int8_thread_t *st, int64_t ic, int64_t jc, int64_t mc, int64_t nc,
                               int64_t kc, const uint8_t *abuf, const uint8_t *bbuf) {
    const gk_int8_kernel_t *kern = job->kern;
    const int mr = kern->mr, nr = kern->nr, kg = kern->kgroup, es = kern->elem_size;
    const int64_t kp = int8_packed_depth(job, kc);
    GK_ALIGN64 int64_t tile64[GK_INT8_TILE_ELEMS];
    gk_int8_row_terms(job, ic, mc, st->rs64, &st->rows);
    const int mode = epilogue_mode(job, &st->rows, &st->cols);
    const int64_t kgroups = kp / kg, kb_groups = GK_MAX((int64_t)1, job->blocks->kb / kg);
    if (mc <= GK_INT8_PANEL_ROWS && kern->panel_sums && nr <= 64) {
        int8_few_rows_one_chunk(job, st, ic, jc, mc, nc, kgroups, mode, abuf, bbuf);
        return;
    }
    for (int64_t jr = 0; jr < nc; jr += nr) {
        const int64_t nb = GK_MIN((int64_t)nr, nc - jr);
        const uint8_t *bp = bbuf + (size_t)(jr * kp) * es;
        for (int64_t g0 = 0; g0 < kgroups; g0 += kb_groups) {
            const int64_t gn = GK_MIN(kb_groups, kgroups - g0);
            const int last = g0 + gn == kgroups;
            for (int64_t ir = 0; ir < mc; ir += mr) {
                const int64_t mb = GK_MIN((int64_t)mr, mc - ir);
                const uint8_t *ap = abuf + (size_t)(ir * kp + g0 * mr * kg) * es;
                int32_t *s_tile = st->acc_tiles + ir * nr;
                void *c = gk_int8_c_at(job, ic + ir, jc + jr);
                const gk_int8_ukernel_fn fn = mb == mr ? kern->ukernel : kern->ukernel_rows ? kern->ukernel_rows[mb] : kern->ukernel;
                const int full = nb == nr && (mb == mr || kern->ukernel_rows != NULL) &&
                                 (job->dst == GK_DST_INT32 || mode == GK_EP_INT32);
                const gk_int8_epilogue_t ep = gk_int8_tile_epilogue(job, &st->rows, ir, &st->cols, jr, ic + ir, jc + jr, mode);
                fn(gn, ap, bp + (size_t)(g0 * nr * kg) * es, s_tile, g0 > 0, c, job->ldc, last && full ? &ep : NULL);
                if (last && !full) {
                    for (int64_t x = 0; x < (int64_t)mr * nr; x++) tile64[x] = s_tile[x];
                    gk_int8_epilogue_scalar(mb, nb, tile64, nr, c, job->ldc, &ep);
                }
            }
        }
    }
}

static void int8_macro_block(void *ctx, gk_loop_thread_t *t, int64_t ic, int64_t jc, int64_t mc, int64_t nc,
                             int64_t kc, const void *a, const void *b, int first, int last) {
    const int8_job_t *job = (const int8_job_t *)ctx;
    const gk_int8_kernel_t *kern = job->kern;
    int8_thread_t *st = (int8_thread_t *)t->state;
    if (first && last) {
        int8_macro_one_chunk(job, st, ic, jc, mc, nc, kc, (const uint8_t *)a, (const uint8_t *)b);
        return;
    }
    const int mr = kern->mr, nr = kern->nr, es = kern->elem_size;
    const int64_t kp = int8_packed_depth(job, kc), ld = t->nc_max;
    int64_t *acc = st->acc + (ic - t->m0) * ld;
    GK_ALIGN64 int32_t tile[GK_INT8_TILE_ELEMS];
    if (first) for (int64_t i = 0; i < mc; i++) memset(acc + i * ld, 0, sizeof(int64_t) * (size_t)nc);
    for (int64_t jr = 0; jr < nc; jr += nr) {
        const int64_t nb = GK_MIN((int64_t)nr, nc - jr);
        for (int64_t ir = 0; ir < mc; ir += mr) {
            const int64_t mb = GK_MIN((int64_t)mr, mc - ir);
            kern->ukernel(kp / kern->kgroup, (const uint8_t *)a + (size_t)(ir * kp) * es,
                          (const uint8_t *)b + (size_t)(jr * kp) * es, tile, 0, NULL, 0, NULL);
            for (int64_t i = 0; i < mb; i++)
                for (int64_t j = 0; j < nb; j++) acc[(ir + i) * ld + jr + j] += tile[i * nr + j];
        }
    }
    if (!last) return;
    gk_int8_row_terms(job, ic, mc, st->rs64 + (ic - t->m0), &st->rows);
    const gk_int8_epilogue_t ep = gk_int8_tile_epilogue(job, &st->rows, 0, &st->cols, 0, ic, jc, GK_EP_DOUBLE);
    gk_int8_epilogue_scalar(mc, nc, acc, ld, gk_int8_c_at(job, ic, jc), job->ldc, &ep);
}

static void int8_macro(void *ctx, gk_loop_thread_t *t, int64_t ic, int64_t jc, int64_t k0, int64_t mc, int64_t nc,
                     int64_t kc, const void *a, const void *b, int first, int last) {
    const gk_int8_kernel_t *kern = ((const int8_job_t *)ctx)->kern;
    (void)k0;
    if (kern->block_begin) kern->block_begin();
    int8_macro_block(ctx, t, ic, jc, mc, nc, kc, a, b, first, last);
    if (kern->block_end) kern->block_end();
}

/* One matrix through the skeleton on `threads` threads. */
static gemmkit_status_t int8_loops(int8_job_t *job, int threads) {
    const gk_int8_kernel_t *kern = job->kern;
    const int64_t k_chunk = kern->k_chunk;
    if (job->K > k_chunk) job->packed_b = NULL; /* (never: weights are prepacked within one chunk) */
    int64_t MC, NC;
    int8_block_sizes(job, int8_packed_depth(job, GK_MIN(job->K, k_chunk)), job->K > k_chunk, &MC, &NC);
    job->nc = gk_loops_block_max(NC, kern->nr); /* the widest B block the loops hand over (column sums) */
    const gk_loops_t L = {
        .M = job->M, .N = job->N, .K = job->K, .mr = kern->mr, .nr = kern->nr, .mc = MC, .nc = NC, .kc = k_chunk,
        .threads = threads, .share_b = job->packed_b == NULL, .ctx = job,
        .a_bytes = int8_a_bytes, .b_bytes = int8_b_bytes, .thread_begin = int8_thread_begin,
        .pack_b = int8_pack_b, .b_ready = int8_b_ready, .pack_a = int8_pack_a, .macro = int8_macro,
    };
    return gk_loops_run(&L);
}

/* The job for matrix b of the problem (pointers moved by the batch strides). */
static void int8_job_init(int8_job_t *job, const gk_int8_problem_t *p, int64_t b) {
    const gk_config_t *cfg = p->cfg ? p->cfg : gk_config();
    memset(job, 0, sizeof(*job));
    job->kern = gk_int8_kernel_for(cfg, p->K);
    job->blocks = &cfg->int8_blocks;
    job->transa = p->transa; job->transb = p->transb; job->flip_a = p->flip_a;
    job->M = p->M; job->N = p->N; job->K = p->K;
    job->alpha = p->alpha; job->beta = p->beta;
    job->A = p->A + b * p->stride_a; job->lda = p->lda; job->a_ofs = p->a_ofs;
    job->B = p->B + b * p->stride_b; job->ldb = p->ldb; job->bo = p->bo;
    job->c_size = gk_dst_size(p->dst);
    job->C = (char *)p->C + (size_t)(b * p->stride_c) * (size_t)job->c_size;
    job->ldc = p->ldc; job->offsetc = p->offsetc; job->co = p->co;
    job->dst = p->dst;
    job->packed_b = p->packed_b;
    job->packed_colsum = p->packed_colsum;
    if (p->dst != GK_DST_INT32) {
        job->row_scale = p->row_scale + b * p->stride_row_scale;
        job->col_scale = p->col_scale + b * p->stride_col_scale;
        job->row_scale_first = p->row_scale_first;
        job->row_bias = p->row_bias;
        job->col_bias = p->col_bias;
    }
}

/* Matrix b of the problem on `threads` threads (0: as many as it is worth; 1: the calling thread). */
static gemmkit_status_t int8_run_one(const gk_int8_problem_t *p, int64_t b, int threads) {
    int8_job_t job;
    int8_job_init(&job, p, b);
    if (gk_int8_dot_applies(&job)) return gk_int8_dot(&job, threads ? threads : gk_num_threads());
    return int8_loops(&job, threads ? threads : gk_threads_for(job.M, job.N, gk_int8_float_depth(job.K)));
}

static gemmkit_status_t int8_batch_item(void *ctx, int64_t b, int threads) {
    return int8_run_one((const gk_int8_problem_t *)ctx, b, threads);
}

gemmkit_status_t gk_int8_gemm(const gk_int8_problem_t *p) {
    const int64_t batch = p->batch > 1 ? p->batch : 1;
    if (batch == 1) return int8_run_one(p, 0, 0);
    /* Threads over batch x tiles: whole matrices per thread when there are at least as many matrices
     * as threads worth using (or one matrix is too small to split), else the matrices one after
     * another, each split among the threads. */
    const int per_matrix = gk_threads_for(p->M, p->N, gk_int8_float_depth(p->K));
    const int total = gk_threads_for(p->M * batch, p->N, gk_int8_float_depth(p->K));
    return gk_batch_run(batch, per_matrix <= 1 || batch >= total ? 1 : per_matrix, total, int8_batch_item, (void *)p);
}

/* ---- prepacked weights ---------------------------------------------------------------------------- */

/* Layout: this header (64 bytes), the column sums (int32, padded to whole panels, 64-byte aligned), then
 * the NR-column panels of the whole op(B) over kp = K rounded up to the k group, as pack_b_block writes
 * them for one block: the panels of columns [jc, jc + nc) of any block start at jc * kp elements. */
#define GK_INT8_PACKED_MAGIC 0x31304b5038534b47ull /* "GKS8PK01" */
typedef struct {
    uint64_t magic;
    const gk_int8_kernel_t *kern; /* the kernel it was packed for: compared, never followed */
    int64_t N, K, kp, bytes;
    int32_t nr, kgroup, elem_size;
    int32_t arch; /* the path packed under (csrc/paths.h; gemmkit_s8s8_packed_weight_arch names it) */
} packed_header_t;

static int64_t packed_layout(const gk_int8_kernel_t *kern, int64_t N, int64_t K, int64_t *kp, int64_t *panel_off) {
    if (N <= 0 || K <= 0 || K > kern->k_chunk) return 0;
    const int64_t panels = (N + kern->nr - 1) / kern->nr;
    *kp = (K + kern->kgroup - 1) / kern->kgroup * kern->kgroup;
    *panel_off = (int64_t)gk_align64(sizeof(packed_header_t)) + (int64_t)gk_align64(sizeof(int32_t) * (size_t)(panels * kern->nr));
    return *panel_off + panels * kern->nr * *kp * kern->elem_size;
}

int64_t gk_int8_packed_weight_size(int64_t N, int64_t K) {
    int64_t kp, off;
    return packed_layout(gk_int8_kernel_for(gk_config(), K), N, K, &kp, &off);
}

gemmkit_status_t gk_int8_pack_weight(int transb, int64_t N, int64_t K, const int8_t *B, int64_t ldb, void *dst,
                                     int64_t bytes) {
    const gk_config_t *cfg = gk_config();
    const gk_int8_kernel_t *kern = gk_int8_kernel_for(cfg, K);
    int64_t kp, off;
    const int64_t need = packed_layout(kern, N, K, &kp, &off);
    if (need == 0 || bytes < need || dst == NULL || B == NULL) return gemmkit_invalid_arguments;
    uint8_t *base = (uint8_t *)dst;
    memset(base, 0, (size_t)off); /* header and column sums; the packers write every byte of the panels */
    const int32_t arch = (int32_t)cfg->path;
    packed_header_t h = {GK_INT8_PACKED_MAGIC, kern, N, K, kp, need, kern->nr, kern->kgroup, kern->elem_size, arch};
    memcpy(base, &h, sizeof h);
    int8_job_t job;
    memset(&job, 0, sizeof(job));
    job.kern = kern;
    job.transb = transb;
    job.ldb = ldb;
    pack_b_block(&job, B, K, N, base + off, (int32_t *)(base + gk_align64(sizeof(packed_header_t))));
    return gemmkit_success;
}

const char *gk_int8_packed_weight_arch(const void *packed, int64_t bytes) {
    packed_header_t h;
    if (packed == NULL || bytes < (int64_t)sizeof h) return NULL;
    memcpy(&h, packed, sizeof h);
    if (h.magic != GK_INT8_PACKED_MAGIC || h.bytes > bytes || h.arch < 0 || h.arch >= GK_N_PATHS)
        return NULL;
    return gk_path_name(h.arch);
}

int gk_int8_packed_weight_view(const gk_int8_kernel_t *kern, const void *packed, int64_t bytes, int64_t N,
                               int64_t K, const uint8_t **panels, const int32_t **colsum) {
    int64_t kp, off;
    const int64_t need = packed_layout(kern, N, K, &kp, &off);
    packed_header_t h;
    if (need == 0 || packed == NULL || bytes < need) return 0;
    memcpy(&h, packed, sizeof h);
    if (h.magic != GK_INT8_PACKED_MAGIC || h.kern != kern || h.N != N || h.K != K || h.kp != kp || h.bytes != need)
        return 0;
    *colsum = (const int32_t *)((const uint8_t *)packed + gk_align64(sizeof(packed_header_t)));
    *panels = (const uint8_t *)packed + off;
    return 1;
}
