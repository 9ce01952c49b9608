/* The real family on the driver skeleton: sgemm, dgemm, cgemm / zgemm (native or by 1m) and the 16-bit
 * types, on a float or double microkernel: its packers, its macro-kernel (edge tiles, no-pack paths), batches. */
#include <string.h>
#include "atomics.h"
#include "driver.h"
#include "pack.h"
#include "tuning.h"

typedef struct {
    const gk_real_problem_t *p;
    int direct_a, direct_b;  /* no-pack path: read the operand in place (layouts the kernel streams) */
    int convert_c;           /* C of another type than the kernel's: computed in a float buffer per thread */
} real_job_t;

#define AT(ptr, off) ((const char *)(ptr) + (size_t)(off) * (size_t)es)

/* C[m x n] = T + beta * C for an edge tile computed (alpha applied) into T (row stride ldt). */
static void merge_edge_tile(int es, int64_t m, int64_t n, const void *T, int64_t ldt, void *C, int64_t ldc,
                            const gk_real_scalar_t *beta) {
    for (int64_t i = 0; i < m; i++) {
        if (es == 4) {
            float *c = (float *)C + i * ldc;
            const float *t = (const float *)T + i * ldt;
            if (beta->f == 0.0f) for (int64_t j = 0; j < n; j++) c[j] = t[j];
            else for (int64_t j = 0; j < n; j++) c[j] = t[j] + beta->f * c[j];
        } else {
            double *c = (double *)C + i * ldc;
            const double *t = (const double *)T + i * ldt;
            if (beta->d == 0.0) for (int64_t j = 0; j < n; j++) c[j] = t[j];
            else for (int64_t j = 0; j < n; j++) c[j] = t[j] + beta->d * c[j];
        }
    }
}

/* A pair kernel's rows of A read in place, rows x values from A0 (lda apart), which no packer reads: a subnormal
 * among them sets the product's flag, as the packers do for theirs. */
static void scan_rows_in_place(const gk_real_problem_t *p, const void *A0, int64_t rows, int64_t values) {
    int (*const scan)(const uint16_t *, int64_t, int64_t, int64_t) =
        p->kern->moves ? p->kern->moves->rows_subnormal : gk_bf16_rows_subnormal;
    if (p->subnormal_seen && scan((const uint16_t *)A0, p->lda, rows, values))
        GK_STORE_RELAXED(p->subnormal_seen, 1);
}

/* Packed blocks: in place operands need one panel (their edge) only. */
static size_t real_a_bytes(const void *ctx, int64_t mc, int64_t kc) {
    const real_job_t *job = (const real_job_t *)ctx;
    const int64_t row = job->p->kern->a_rows ? GK_PAIR_ROW(kc) : kc; /* a pair kernel's rows are padded */
    return (size_t)job->p->kern->elem * (size_t)((job->direct_a ? job->p->kern->mr : mc) * row);
}
/* A packed B panel holds nr x kc elements, nr x kc / 2 for a native complex kernel (no 1m doubling). */
#define B_PANEL_KDIV(kern) ((kern)->complex_native ? 2 : 1)
static size_t real_b_bytes(const void *ctx, int64_t nc, int64_t kc) {
    const real_job_t *job = (const real_job_t *)ctx;
    const gk_real_kernel_t *kern = job->p->kern;
    return (size_t)kern->elem * (size_t)((job->direct_b ? kern->nr : nc) * kc / B_PANEL_KDIV(kern));
}

/* A C of another type (float16, bfloat16): the thread's rows [m0, m1) of a C block, rows nc_max apart. */
static int real_thread_begin(void *ctx, gk_loop_thread_t *t) {
    const real_job_t *job = (const real_job_t *)ctx;
    t->state = NULL;
    if (!job->convert_c) return 1;
    t->state = gk_thread_workspace(GK_WS_STATE, sizeof(float) * (size_t)((t->m1 - t->m0) * t->nc_max + 1));
    return t->state != NULL;
}

static void real_pack_b(void *ctx, int64_t k0, int64_t kc, int64_t jc, int64_t nc, int64_t j0, int64_t w, void *blk) {
    const real_job_t *job = (const real_job_t *)ctx;
    const gk_real_problem_t *p = job->p;
    const int nr = p->kern->nr, es = p->kern->elem;
    if (!job->direct_b) {
        p->type->pack_b(p, k0, jc + j0, kc, w, (char *)blk + (size_t)(j0 * kc / B_PANEL_KDIV(p->kern)) * es);
    } else if (nc % nr) { /* B in place: only the edge panel, zero-padded */
        const int64_t nc_full = nc / nr * nr;
        p->type->pack_b(p, k0, jc + nc_full, kc, nc - nc_full, blk);
    }
}

static const void *real_b_ready(void *ctx, gk_loop_thread_t *t, int64_t k0, int64_t kc, int64_t jc, int64_t nc,
                                const void *blk) {
    (void)ctx, (void)t, (void)k0, (void)kc, (void)jc, (void)nc;
    return blk;
}

static void real_pack_a(void *ctx, gk_loop_thread_t *t, int64_t ic, int64_t k0, int64_t mc, int64_t kc, void *dst) {
    const real_job_t *job = (const real_job_t *)ctx;
    const gk_real_problem_t *p = job->p;
    (void)t;
    if (!job->direct_a) {
        p->type->pack_a(p, ic, k0, mc, kc, dst);
    } else if (mc % p->kern->mr) { /* A in place: only the edge panel, zero-padded */
        const int64_t mc_full = mc / p->kern->mr * p->kern->mr;
        p->type->pack_a(p, ic + mc_full, k0, mc - mc_full, kc, dst);
    }
}

/* Where B is packed a group at a time (gk_loops_t.b_group), rows [r0, r1) of the next group's source (the next
 * columns of this block, else the first columns of the next k block) fetched towards L2 while this group's tiles run:
 * the group's packing had waited on memory (see docs/decisions.md, prefetch_b_group). Forced inline: GCC 12 drops the
 * call of a function that does nothing but prefetch (it counts it free of effects). */
static GK_FORCEINLINE void prefetch_b_group(const gk_real_problem_t *p, int64_t k0, int64_t kc, int64_t j0, int64_t w,
                                            int64_t r0, int64_t r1) {
    const int64_t es = p->kern->elem, seg = (p->transb ? kc : w) * es; /* bytes of one source row */
    for (int64_t r = r0; r < r1; r++) {
        const int64_t at = p->transb ? (j0 + r) * p->ldb + k0 : (k0 + r) * p->ldb + j0;
        const char *row = (const char *)p->B + (size_t)at * (size_t)es;
        for (int64_t off = 0; off < seg; off += 64) GK_PREFETCH_L2(row + off);
        GK_PREFETCH_L2(row + seg - 1);
    }
}

/* The NR / MR loops over one block. On the no-pack path full tiles read B in place when it is not
 * transposed and A in place when it is (the layouts the microkernel can stream); the packed buffers hold
 * only the edge panels. A converted C is widened into the thread's float buffer before the first k block
 * (when beta reads it) and narrowed, rounding once, after the last. */
static void real_macro(void *ctx, gk_loop_thread_t *t, int64_t ic, int64_t jc, int64_t k0, int64_t mc, int64_t nc,
                       int64_t kc, const void *abuf, const void *bbuf, int first, int last) {
    const real_job_t *job = (const real_job_t *)ctx;
    const gk_real_problem_t *p = job->p;
    const gk_real_kernel_t *kern = p->kern;
    const int es = kern->elem, mr = kern->mr, nr = kern->nr;
    const int direct_a = job->direct_a, direct_b = job->direct_b;
    GK_ALIGN64 double tile[GK_REAL_TILE_BYTES / sizeof(double)];
    const gk_real_scalar_t beta_acc = es == 4 ? (gk_real_scalar_t){.f = 1.0f} : (gk_real_scalar_t){.d = 1.0};
    const gk_real_scalar_t zero = {.d = 0.0};
    const gk_real_scalar_t *beta = first ? &p->beta : &beta_acc;
    /* where the kernel writes C[i][j]: base + ((i - c_i0) * c_ld + j - c_j0) elements */
    float *cbuf = (float *)t->state;
    char *c_base = job->convert_c ? (char *)cbuf : (char *)p->C;
    const int64_t c_ld = job->convert_c ? t->nc_max : p->ldc, c_i0 = job->convert_c ? t->m0 : 0;
    const int64_t c_j0 = job->convert_c ? jc : 0;
    if (job->convert_c && first && p->beta.f != 0.0f)
        p->type->load_c(p, ic, jc, mc, nc, cbuf + (ic - t->m0) * c_ld, c_ld);
    /* direct_a: (i, k) at A + k * lda + i (transposed A); a pair kernel's rows, pair k0 of row i at A + i * lda + 2 k0 */
    const int a_rows = kern->a_rows;
    const char *Ap = a_rows ? (const char *)p->A + (size_t)(ic * p->lda + 2 * k0) * 2 : AT(p->A, k0 * p->lda + ic);
    /* a pair kernel's A in place is read by no packer: its block is scanned for subnormals at its first use (this
     * thread's first column block), which also brings it into the cache for the tiles */
    if (direct_a && a_rows && jc == t->n0)
        scan_rows_in_place(p, Ap, mc / mr * mr, GK_MIN(2 * kc, p->k_values - 2 * k0));
    const char *Bp = AT(p->B, k0 * p->ldb + jc); /* direct_b (plain B): (k, j) at B + k * ldb + j */
    /* a pair kernel's tiles on the exact path once a packer met a subnormal: this thread's A block was packed before
     * this call, and B's before the block's barrier, so a flag unset here means no subnormal in either */
    const gk_ukernel_fn ukernel = p->subnormal_seen && GK_LOAD_RELAXED(p->subnormal_seen) ? kern->ukernel_exact
                                                                                          : kern->ukernel;
    const gk_ukernel_fn *ukernel_rows = ukernel == kern->ukernel ? kern->ukernel_rows : NULL;
    if (kern->block_begin) kern->block_begin();
    const int64_t group = t->b_group; /* B's panels packed here, group at a time (gk_loops_t.b_group) */
    /* the next group's source: k0, kc, first column, width; its rows, spread over this group's tile calls */
    int64_t nx_k0 = 0, nx_kc = 0, nx_j0 = 0, nx_w = 0, nx_rows = 0, nx_calls = 1, nx_call = 0;
    for (int64_t jr = 0; jr < nc; jr += nr) {
        const int64_t nb = GK_MIN((int64_t)nr, nc - jr);
        if (group && jr % (group * nr) == 0) {
            const int64_t w = GK_MIN(nc - jr, group * nr);
            p->type->pack_b(p, k0, jc + jr, kc, w, (void *)bbuf);
            nx_k0 = k0, nx_kc = kc, nx_j0 = jc + jr + w, nx_w = GK_MIN(nc - jr - w, group * nr);
            if (nx_w <= 0) nx_k0 = k0 + kc, nx_kc = GK_MIN(kc, p->K - k0 - kc), nx_j0 = jc, nx_w = GK_MIN(nc, group * nr);
            nx_rows = nx_kc > 0 ? (p->transb ? nx_w : nx_kc) : 0;
            nx_calls = (w + nr - 1) / nr * ((mc + mr - 1) / mr), nx_call = 0;
        }
        const void *bp = group      ? AT(bbuf, jr / nr % group * nr * kc / B_PANEL_KDIV(kern))
                         : direct_b ? (nb == nr ? (const void *)AT(Bp, jr) : bbuf)
                                    : AT(bbuf, jr * kc / B_PANEL_KDIV(kern));
        const int64_t rsb = direct_b && nb == nr ? p->ldb : nr;
        for (int64_t ir = 0; ir < mc; ir += mr) {
            const int64_t mb = GK_MIN((int64_t)mr, mc - ir);
            const int in_place = direct_a && mb == mr;
            const int64_t a_row = a_rows ? GK_PAIR_ROW(kc) : kc; /* a packed row's pairs (elements) */
            const void *ap = in_place ? (a_rows ? (const void *)(Ap + (size_t)(ir * p->lda) * 2) : AT(Ap, ir))
                                      : direct_a ? abuf : AT(abuf, ir * a_row);
            const int64_t rsa = a_rows ? (in_place ? 2 * p->lda : 4 * a_row) : in_place ? p->lda : mr;
            void *c = c_base + (size_t)((ic + ir - c_i0) * c_ld + jc + jr - c_j0) * es;
            if (nx_rows && nx_call < nx_calls) {
                prefetch_b_group(p, nx_k0, nx_kc, nx_j0, nx_w, nx_call * nx_rows / nx_calls,
                                 (nx_call + 1) * nx_rows / nx_calls);
                nx_call++;
            }
            if (mb == mr && nb == nr) {
                ukernel(kc, ap, rsa, bp, rsb, c, c_ld, &p->alpha, beta);
            } else if (nb == nr && ukernel_rows) { /* fewer rows: kernel for mb rows */
                ukernel_rows[mb](kc, ap, rsa, bp, rsb, c, c_ld, &p->alpha, beta);
            } else {
                ukernel(kc, ap, rsa, bp, rsb, tile, nr, &p->alpha, &zero);
                merge_edge_tile(es, mb, nb, tile, nr, c, c_ld, beta);
            }
        }
    }
    if (kern->block_end) kern->block_end();
    if (job->convert_c && last) p->type->store_c(p, ic, jc, mc, nc, cbuf + (ic - t->m0) * c_ld, c_ld);
}

/* Few rows of C (M <= KC / 2) against a packed B: packing B, one pass over it from memory, is then a large part of
 * the time, and B's rows stream faster in longer pieces. So B blocks of rows up to 32 KiB wide, the k block shortened
 * to keep the block within GK_MODEL_B_BLOCK_MAX: C's extra passes (2 M / kc of B's traffic, from the caches) cost
 * less than they save while M <= KC / 2 (see docs/decisions.md, few_rows_blocks). */
/* Where the configuration packs B in groups (small.b_group_panels, csrc/blocking_model.c) and each thread's rows are
 * one block it packs B for alone, B is never a block: the macro-kernel packs the group just before its row panels
 * (gk_loops_t.b_group), reading B's rows in pieces of group * NR elements (the model's: 1 KiB) into a buffer the
 * stores find in L2. The k block is then at most small.b_group_kc, and the A block keeps its bytes (MC x KC) under the
 * shorter k block, so its rows double where KC is 512 (see docs/decisions.md, GK_B_GROUP_KC). Returns the group (0:
 * B's block packed whole). */
/* A pair kernel against few columns of B (up to this many panels): k blocks up to this many pairs, which keeps B's
 * panels (4 x 32 columns x 2048 pairs x 4 bytes) within half of L2 */
#define GK_BF16_FEW_COLS_PANELS 4
#define GK_BF16_FEW_COLS_KC_MAX 2048
static int few_rows_blocks(const gk_real_problem_t *p, int threads, int64_t *mc, int64_t *nc, int64_t *kc) {
    const int64_t es = p->kern->elem, nr = p->kern->nr;
    int tm, tn; /* the columns of one thread's block of C, as the driver will split them */
    gk_partition_2d(p->M, p->N, p->kern->mr, (int)nr, threads, &tm, &tn);
    const int64_t n_cols = (p->N + (int64_t)tn * nr - 1) / ((int64_t)tn * nr) * nr;
    const int64_t wide = GK_MIN(GK_MAX(*nc, (int64_t)(32 << 10) / es / nr * nr), n_cols);
    const int64_t mr = p->kern->mr, rows = ((p->M + tm - 1) / tm + mr - 1) / mr * mr; /* a thread's, at most */
    /* the A block's budget is bytes, MC x KC: the group's shorter k block holds more rows */
    const int64_t most_kc = p->small->b_group_kc > 0 ? p->small->b_group_kc : *kc; /* 0: the block's own */
    const int64_t group_kc = GK_MIN(*kc, most_kc), group_mc = GK_MAX(mr, *mc * *kc / group_kc / mr * mr);
    if (p->small->b_group_panels > 0 && !(tm > 1 && tn == 1) && rows <= gk_loops_block_max(group_mc, (int)mr)) {
        *nc = GK_MAX(*nc, wide);
        *kc = group_kc;
        *mc = group_mc;
        return p->small->b_group_panels;
    }
    if (wide <= *nc) return 0;
    *nc = wide;
    *kc = GK_MAX((int64_t)8, GK_MIN(*kc, GK_MODEL_B_BLOCK_MAX / (wide * es) / 8 * 8));
    return 0;
}

/* The k block for K terms: as many blocks as KC needs, of near-equal lengths (multiples of 8, at most KC), not full
 * blocks and a short last one that reads and writes all of C again for a fraction of the work (see docs/decisions.md,
 * balanced_kc). */
static int64_t balanced_kc(int64_t K, int64_t KC) {
    if (K <= KC) return KC;
    const int64_t blocks = (K + KC - 1) / KC;
    return GK_MIN(KC, ((K + blocks - 1) / blocks + 7) / 8 * 8);
}

/* A pair kernel's product of one tile (M <= MR, N <= NR, K up to GK_PAIR_TILE_MAX_K pairs) outside the loops: B's
 * panel packed on the stack, A's rows in place where they can be, one kernel call. Small bfloat16 products (stacks
 * of them above all) then cost a few hundred cycles beyond their tile, where the loops' set-up cost thousands.
 * A converted (bfloat16) or transposed C is moved through a float tile by the type's load_c / store_c. Returns 1 when
 * it computed the product. */
#define GK_PAIR_TILE_MAX_K 128
static int pair_one_tile(const gk_real_problem_t *p) {
    const gk_real_kernel_t *kern = p->kern;
    if (!kern->a_rows || p->M > kern->mr || p->N > kern->nr || p->K > GK_PAIR_TILE_MAX_K) return 0;
    const int mr = kern->mr, nr = kern->nr;
    if (mr > 32 || nr > 32) return 0; /* the buffers' tile */
    GK_ALIGN64 uint32_t bbuf[GK_PAIR_TILE_MAX_K * 32], abuf[32 * GK_PAIR_ROW(GK_PAIR_TILE_MAX_K)];
    GK_ALIGN64 float tile[32 * 32];
    p->type->pack_b(p, 0, 0, p->K, p->N, bbuf);
    const void *ap = abuf;
    int64_t rsa = 4 * GK_PAIR_ROW(p->K);
    if (!p->transa && p->M == mr && 2 * p->K == p->k_values) { /* A's rows in place, scanned as no packer reads them */
        ap = p->A;
        rsa = 2 * p->lda;
        scan_rows_in_place(p, p->A, p->M, p->k_values);
    } else {
        p->type->pack_a(p, 0, 0, p->M, p->K, abuf);
    }
    const gk_ukernel_fn ukernel = p->subnormal_seen && GK_LOAD_RELAXED(p->subnormal_seen) ? kern->ukernel_exact
                                                                                          : kern->ukernel;
    const gk_real_scalar_t zero = {.d = 0.0};
    if (kern->block_begin) kern->block_begin();
    if (p->type->store_c) {
        GK_ALIGN64 float c[32 * 32];
        ukernel(p->K, ap, rsa, bbuf, nr, tile, nr, &p->alpha, &zero);
        if (p->beta.f != 0.0f) { /* C's values added in float, the sum rounded once as it is stored */
            p->type->load_c(p, 0, 0, p->M, p->N, c, nr);
            merge_edge_tile(4, p->M, p->N, tile, nr, c, nr, &p->beta);
        }
        p->type->store_c(p, 0, 0, p->M, p->N, p->beta.f != 0.0f ? c : tile, nr);
    } else if (p->M == mr && p->N == nr) {
        ukernel(p->K, ap, rsa, bbuf, nr, p->C, p->ldc, &p->alpha, &p->beta);
    } else {
        ukernel(p->K, ap, rsa, bbuf, nr, tile, nr, &p->alpha, &zero);
        merge_edge_tile(4, p->M, p->N, tile, nr, p->C, p->ldc, &p->beta);
    }
    if (kern->block_end) kern->block_end();
    return 1;
}

gemmkit_status_t gk_real_gemm(const gk_real_problem_t *p) {
    gemmkit_status_t st;
    if (gk_real_tiny(p)) return gemmkit_success;
    if (pair_one_tile(p)) return gemmkit_success;
    if (p->type->gemv_path && p->type->gemv_path(p, &st)) return st;
    if (gk_real_plain(p)) return gemmkit_success;
    real_job_t job = {p, 0, 0, p->type->store_c != NULL};
    const int mr = p->kern->mr;
    /* Small real problems skip packing where they can (the kernel's own type, A, B and C, in place). So do
     * few rows of C against a plain B: packing B would copy all of it for a handful of uses, while the
     * kernel can stream it in place. */
    const int real = !p->type->is_complex && !p->type->widened && p->type->store_c == NULL;
    const double macs = (double)p->M * (double)p->N * (double)p->K;
    const int small = macs <= p->small->direct_max_macs;
    job.direct_a = real && small && p->transa;
    /* a pair kernel that reads A's rows takes them in place against one panel of B (each row read once: packing it
     * would double its traffic; with more panels the packed rows are the faster to reread) where K needs no zero pairs */
    if (p->kern->a_rows && !p->transa && 2 * p->K == p->k_values && p->N <= p->kern->nr) job.direct_a = 1;
    const int small_b = job.direct_a ? small : macs <= p->small->direct_b_max_macs;
    job.direct_b = real && !p->transb && (small_b || p->M <= p->small->direct_max_row_panels * mr);
    int64_t mc = p->blocks.mc, nc = p->blocks.nc, kc = job.direct_b && !small_b ? p->small->skinny_kc : p->blocks.kc;
    const int threads = p->threads ? p->threads : gk_threads_for(p->M, p->N, p->K);
    const int b_group = real && !job.direct_b && p->M <= kc / 2 ? few_rows_blocks(p, threads, &mc, &nc, &kc) : 0;
    if (!job.direct_b) kc = balanced_kc(p->K, kc);
    /* a pair kernel's A block keeps its bytes (MC x KC) under a shorter k: more rows where K is short */
    if (p->kern->a_rows && kc < p->blocks.kc) mc = GK_MAX((int64_t)mr, mc * p->blocks.kc / kc / mr * mr);
    /* A pair kernel's A rows against few columns of B: each row of A serves few tiles, so all of k at once (long
     * streams from memory, no pass of C per k block) in blocks of few rows; B's few panels then stay in L2 */
    if (p->kern->a_rows && p->N <= GK_BF16_FEW_COLS_PANELS * p->kern->nr) {
        kc = GK_MIN(p->K, (int64_t)GK_BF16_FEW_COLS_KC_MAX);
        mc = job.direct_a ? 2 * mr : mr;
    }
    /* a pair kernel's k blocks are whole groups: K is a multiple of the group (zero pairs padded), so is every block */
    const int64_t kg = GK_PAIR_K_MULTIPLE(p->kern);
    kc = (kc + kg - 1) / kg * kg;
    /* complex: the real-domain macs count 4x the complex ones, but a complex multiply-add is 4 real */
    const gk_loops_t L = {
        .M = p->M, .N = p->N, .K = p->K, .mr = mr, .nr = p->kern->nr,
        .mc = mc, .nc = nc, .kc = kc,
        .threads = threads, .share_b = !job.direct_b, .b_group = b_group, .ctx = &job,
        .a_bytes = real_a_bytes, .b_bytes = real_b_bytes, .thread_begin = real_thread_begin,
        .pack_b = real_pack_b, .b_ready = real_b_ready, .pack_a = real_pack_a, .macro = real_macro,
    };
    return gk_loops_run(&L);
}

/* ---- batches ------------------------------------------------------------------------------------ */

typedef struct {
    const gk_real_problem_t *p;
    size_t sa, sb, sc;       /* strides in bytes (as signed offsets, two's complement) */
    int tiny;                /* every product goes straight to the kernel's tiny path */
    int stream;              /* ... read from memory: each fetches the next one's operands (gk_tiny_stream_t) */
    int64_t batch, a_bytes, b_bytes;
    int64_t c_row_bytes;     /* bytes of a row of C */
} real_batch_t;

/* Bytes a streamed product fetches of a rows x cols operand (op(X) transposed when trans) of es-byte
 * elements, ld apart: the span from its first element to its last, or 0 (nothing fetched) where gaps
 * between the rows make that span more than twice the elements' bytes. */
static int64_t real_fetch_bytes(int64_t rows, int64_t cols, int trans, int64_t ld, size_t es) {
    const int64_t r = trans ? cols : rows, c = trans ? rows : cols;
    const int64_t span = ((r - 1) * ld + c) * (int64_t)es;
    return span <= 2 * r * c * (int64_t)es ? span : 0;
}

/* Product i of the batch on `threads` threads; small products by the thousand go to the kernel's tiny
 * path without a problem copy or path choice. */
static gemmkit_status_t real_batch_item(void *ctx, int64_t i, int threads) {
    const real_batch_t *b = (const real_batch_t *)ctx;
    const gk_real_problem_t *p = b->p;
    const char *A = (const char *)p->A + (size_t)i * b->sa, *B = (const char *)p->B + (size_t)i * b->sb;
    char *C = (char *)p->C + (size_t)i * b->sc;
    if (b->tiny) {
        gk_tiny_stream_t st = {NULL, NULL, b->a_bytes, b->b_bytes, 1};
        if (b->stream && i + 1 < b->batch) {
            st.next_a = b->sa ? A + b->sa : NULL; /* a shared operand (stride 0) stays in cache */
            st.next_b = b->sb ? B + b->sb : NULL;
        }
        p->kern->tiny(p->M, p->N, p->K, &p->alpha, A, p->lda, p->transa, B, p->ldb, p->transb, &p->beta, C, p->ldc,
                      b->stream ? &st : NULL);
        return gemmkit_success;
    }
    gk_real_problem_t q = *p;
    q.A = A;
    q.B = B;
    q.C = C;
    q.threads = threads;
    return gk_real_gemm(&q);
}

gemmkit_status_t gk_real_gemm_batch(const gk_real_problem_t *p, int64_t batch, int64_t stride_a,
                                    int64_t stride_b, int64_t stride_c) {
    /* bytes of an element of A and B (16-bit where widened while packed), and of C (16-bit where converted) */
    const size_t es = p->type->widened ? 2 : (size_t)p->kern->elem * (p->type->is_complex ? 2 : 1);
    const size_t es_c = p->type->store_c && !p->type->c_float ? 2 : (size_t)p->kern->elem * (p->type->is_complex ? 2 : 1);
    real_batch_t b = {p, (size_t)stride_a * es, (size_t)stride_b * es, (size_t)stride_c * es_c, gk_real_tiny_fits(p), 0,
                      batch, real_fetch_bytes(p->M, p->K, p->transa, p->lda, es),
                      real_fetch_bytes(p->K, p->N, p->transb, p->ldb, es), p->N * (int64_t)es_c};
    if (batch == 1) return gk_real_gemm(p);
    const double bytes = (double)batch * (double)es *
                         ((double)p->M * (double)p->K + (double)p->K * (double)p->N + (double)p->M * (double)p->N);
    /* streamed only where C's rows are long enough and k deep enough (small.tiny_stream_min_row_bytes, _min_k: 4
     * lines, 32 steps): the fence after each product's non-temporal stores, and each block's fixed cost (a slice of
     * the next product fetched, six rows stored past the caches), need that much to pay (see docs/decisions.md,
     * b.stream) */
    b.stream = b.tiny && p->small->tiny_stream_min_bytes > 0 && bytes > p->small->tiny_stream_min_bytes &&
               b.c_row_bytes >= p->small->tiny_stream_min_row_bytes && p->K > p->small->tiny_stream_min_k;
    /* A product worth several threads gets them all, one product after the other; smaller ones go
     * whole to the threads, as many threads as the batch's total work is worth. */
    const double total = (double)p->M * (double)p->N * (double)p->K * (double)batch;
    const int spread = (int)GK_MIN((double)gk_num_threads(), total / GK_BATCH_MACS_PER_THREAD);
    return gk_batch_run(batch, gk_threads_for(p->M, p->N, p->K), spread, real_batch_item, &b);
}
