/* The driver skeleton, written once for every element family (real s/d/c/z/half in gemm_real.c, int8 in
 * gemm_int8.c): Goto/BLIS loops, thread split of C (never K), the shared packed B, batches of products. */
#include <string.h>
#include "driver.h"
#include "tuning.h"

typedef struct {
    const gk_loops_t *L;
    int tm, tn;
    void *shared_b;          /* row slices: the threads pack one B block together into this buffer */
    gk_barrier_t barrier;
    int failed;
} loops_job_t;

/* A cache block in whole micro-panels (the packers fill whole panels: a block of MC rows takes
 * ceil(MC / MR) * MR rows of buffer, so MC must be a multiple of MR for the buffer sized by it). */
static int64_t loops_block_size(int64_t block, int panel) { return GK_MAX((int64_t)panel, block / panel * panel); }

/* Columns (rows) of C one jc (ic) block may take: NC (MC), or a last block up to a quarter longer taken whole (BLIS's
 * maximum block sizes do the same): a sliver of a last block would pack all of the other operand again, and a split M
 * can lose the few-row path (csrc/gemm_real.c) (see docs/decisions.md, gk_loops_block_max). */
int64_t gk_loops_block_max(int64_t block, int panel) { return (block + block / 4 + panel - 1) / panel * panel; }
static int64_t loops_step(int64_t left, int64_t block, int panel) {
    return left <= gk_loops_block_max(block, panel) ? left : block;
}

/* The loops over this thread's block of C. With a shared B, a thread without its workspace still packs its
 * share and meets every barrier (else the others would wait forever); it reports the failure at the end. */
static int loops_block(loops_job_t *job, gk_loop_thread_t *t) {
    const gk_loops_t *L = job->L;
    const int mr = L->mr, nr = L->nr, share = job->shared_b != NULL && t->nthreads > 1;
    const int64_t MC = loops_block_size(L->mc, mr), NC = loops_block_size(L->nc, nr), KC = L->kc, K = L->K;
    const int64_t rows = t->m1 - t->m0, rows_max = gk_loops_block_max(MC, mr); /* rows_max: one block's, at most */
    t->mc_max = GK_MIN(rows_max, (rows + mr - 1) / mr * mr);
    t->nc_max = GK_MIN(gk_loops_block_max(NC, nr), (t->n1 - t->n0 + nr - 1) / nr * nr);
    const int64_t kc_max = GK_MIN(KC, K);
    void *abuf = gk_thread_workspace(GK_WS_A, L->a_bytes(L->ctx, t->mc_max, kc_max));
    void *bbuf = share ? job->shared_b : gk_thread_workspace(GK_WS_B, L->b_bytes(L->ctx, t->nc_max, kc_max));
    t->b_group = !share && L->b_group > 0 && rows <= rows_max ? L->b_group : 0;
    const int ok = abuf != NULL && bbuf != NULL && L->thread_begin(L->ctx, t);
    if (!ok && !share) return -1;
    for (int64_t jc = t->n0, nc; jc < t->n1; jc += nc) {
        nc = loops_step(t->n1 - jc, NC, nr);
        for (int64_t pc = 0; pc < K; pc += KC) {
            const int64_t kc = GK_MIN(KC, K - pc);
            if (share) { /* each thread packs a share of the block's NR panels, then all wait for the block */
                int64_t q0, q1;
                gk_split_range((nc + nr - 1) / nr, 1, t->nthreads, t->tid, &q0, &q1);
                if (q0 < q1) L->pack_b(L->ctx, pc, kc, jc, nc, q0 * nr, GK_MIN(nc, q1 * nr) - q0 * nr, bbuf);
                gk_barrier_wait(&job->barrier);
            } else if (!t->b_group) {
                L->pack_b(L->ctx, pc, kc, jc, nc, 0, nc, bbuf);
            }
            if (ok) {
                const void *bp = L->b_ready(L->ctx, t, pc, kc, jc, nc, bbuf);
                for (int64_t ic = t->m0, mc; ic < t->m1; ic += mc) {
                    mc = loops_step(t->m1 - ic, MC, mr);
                    L->pack_a(L->ctx, t, ic, pc, mc, kc, abuf);
                    L->macro(L->ctx, t, ic, jc, pc, mc, nc, kc, abuf, bp, pc == 0, pc + kc >= K);
                }
            }
            if (share) gk_barrier_wait(&job->barrier); /* the block is read until all are done */
        }
    }
    return ok ? 0 : -1;
}

static void loops_task(void *ctx, int tid, int nthreads) {
    loops_job_t *job = (loops_job_t *)ctx;
    const gk_loops_t *L = job->L;
    gk_loop_thread_t t;
    memset(&t, 0, sizeof(t));
    t.tid = tid;
    t.nthreads = nthreads;
    if (nthreads == 1) { /* all the work on this thread (also when the pool was busy) */
        t.m1 = L->M;
        t.n1 = L->N;
        if (loops_block(job, &t) != 0) job->failed = 1;
        return;
    }
    if (gk_thread_block(L->M, L->N, L->mr, L->nr, job->tm, job->tn, job->shared_b != NULL, tid, nthreads, &t.m0,
                        &t.m1, &t.n0, &t.n1) &&
        loops_block(job, &t) != 0)
        job->failed = 1;
}

gemmkit_status_t gk_loops_run(const gk_loops_t *L) {
    loops_job_t job;
    memset(&job, 0, sizeof(job));
    job.L = L;
    gk_partition_2d(L->M, L->N, L->mr, L->nr, GK_MAX(1, L->threads), &job.tm, &job.tn);
    if (L->share_b && job.tm > 1 && job.tn == 1) {
        /* Row slices: one packed B block for all threads (less packing, one copy in L3). */
        const int64_t nc = GK_MIN(gk_loops_block_max(loops_block_size(L->nc, L->nr), L->nr), (L->N + L->nr - 1) / L->nr * L->nr);
        job.shared_b = gk_thread_workspace(GK_WS_B, L->b_bytes(L->ctx, nc, GK_MIN(L->kc, L->K)));
        if (!job.shared_b) return gemmkit_out_of_memory;
        gk_barrier_init(&job.barrier, job.tm);
    }
    gk_parallel_run(loops_task, &job, job.tm * job.tn);
    return job.failed ? gemmkit_out_of_memory : gemmkit_success;
}

/* Threads worth using for an M x N x K product: about one per 2^19 multiply-adds (a few microseconds of one AVX-512
 * core), so 128^3 sgemm splits and 96^3 does not; a tuning may move the 2^19 (threads.min_macs, csrc/tuning.c; see
 * docs/decisions.md, gk_threads_for). */
int gk_threads_for(int64_t M, int64_t N, int64_t K) {
    double macs = (double)M * (double)N * (double)K;
    int n = gk_num_threads();
    double per_thread = gk_thread_macs();
    if (macs < 2.0 * per_thread) return 1;
    int want = (int)(macs / per_thread);
    return GK_MAX(1, GK_MIN(n, want));
}

/* ---- batches ------------------------------------------------------------------------------------ */

typedef struct {
    int64_t batch;
    gemmkit_status_t (*item)(void *ctx, int64_t i, int threads);
    void *ctx;
    int failed;
} batch_job_t;

static void batch_task(void *ctx, int tid, int nthreads) {
    batch_job_t *job = (batch_job_t *)ctx;
    int64_t i0, i1;
    gk_split_range(job->batch, 1, nthreads, tid, &i0, &i1);
    for (int64_t i = i0; i < i1; i++)
        if (job->item(job->ctx, i, 1) != gemmkit_success) job->failed = 1;
}

gemmkit_status_t gk_batch_run(int64_t batch, int per_item, int spread,
                              gemmkit_status_t (*item)(void *ctx, int64_t i, int threads), void *ctx) {
    if (per_item > 1) {
        for (int64_t i = 0; i < batch; i++) {
            const gemmkit_status_t st = item(ctx, i, 0);
            if (st != gemmkit_success) return st;
        }
        return gemmkit_success;
    }
    batch_job_t job = {batch, item, ctx, 0};
    gk_parallel_run(batch_task, &job, (int)GK_MAX(1, GK_MIN((int64_t)spread, batch)));
    return job.failed ? gemmkit_out_of_memory : gemmkit_success;
}
