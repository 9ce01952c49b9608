/* The real-domain GEMM driver, written once for every type that runs on a float or double
 * microkernel (sgemm, dgemm, and cgemm / zgemm by 1m): thread split, shared packed B, Goto loops, edges. */
#include <string.h>
#include "driver.h"

typedef struct {
    const gk_real_problem_t *p;
    int direct_a, direct_b;  /* no-pack path: read the operand in place (layouts the kernel streams) */
    int64_t kc;              /* k block: the config's, or small.skinny_kc for skinny M */
    int tm, tn;              /* thread grid planned for the requested thread count */
    void *shared_b;          /* tn == 1: the threads pack one B block together into this buffer */
    gk_barrier_t barrier;
    int failed;
} real_job_t;

/* How the threads of a call share the packed B block (NULL: each packs its own). */
typedef struct {
    int tid, nthreads;
} real_share_t;

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

#define AT(ptr, off) ((const char *)(ptr) + (size_t)(off) * (size_t)es)

/* The Goto/BLIS loop nest over C[m0:m1, n0:n1] with this thread's packing buffers. On the no-pack
 * path (small real problems) full tiles read B in place when it is not transposed and A in place when
 * it is (the layouts the microkernel can stream); only edge panels are packed (zero-padded). */
static int real_block(real_job_t *job, int64_t m0, int64_t m1, int64_t n0, int64_t n1, const real_share_t *share) {
    const gk_real_problem_t *p = job->p;
    const gk_real_kernel_t *kern = p->kern;
    const int es = kern->elem;
    const int mr = kern->mr, nr = kern->nr;
    const int direct_a = job->direct_a, direct_b = job->direct_b;
    const int64_t MC = p->blocks.mc, NC = p->blocks.nc, KC = job->kc;
    const int64_t K = p->K;
    const int64_t kc_max = GK_MIN(KC, K);
    const int64_t mc_max = direct_a ? mr : GK_MIN(MC, (m1 - m0 + mr - 1) / mr * mr);
    const int64_t nc_max = direct_b ? nr : GK_MIN(NC, (n1 - n0 + nr - 1) / nr * nr);
    char *abuf = (char *)gk_thread_workspace(0, (size_t)es * (size_t)(mc_max * kc_max));
    char *bbuf = share ? (char *)job->shared_b : (char *)gk_thread_workspace(1, (size_t)es * (size_t)(nc_max * kc_max));
    /* Shared B: a thread without its A buffer still packs and meets every barrier, or the others
     * would wait forever; it reports the failure at the end. */
    /* A C of another type than the kernel's (float16, bfloat16): the block [m0, m1) x [jc, jc + nc) is
     * computed into a float buffer (rows cb_ld apart) and narrowed once after the k loop. */
    const int convert_c = p->type->store_c != NULL;
    const int64_t cb_ld = nc_max;
    float *cbuf = convert_c ? (float *)gk_thread_workspace(2, sizeof(float) * (size_t)((m1 - m0) * cb_ld + 1)) : NULL;
    const int ok = abuf != NULL && bbuf != NULL && (!convert_c || cbuf != NULL);
    if (!ok && !share) return -1;
    GK_ALIGN64 double tile[32 * 32];
    const gk_real_scalar_t beta_acc = es == 4 ? (gk_real_scalar_t){.f = 1.0f} : (gk_real_scalar_t){.d = 1.0};
    const gk_real_scalar_t zero = {.d = 0.0};

    for (int64_t jc = n0; jc < n1; jc += NC) {
        const int64_t nc = GK_MIN(NC, n1 - jc);
        const int64_t nc_full = nc / nr * nr;
        /* where the kernel writes C[i][j]: base + ((i - c_i0) * c_ld + j - c_j0) elements */
        char *c_base = convert_c ? (char *)cbuf : (char *)p->C;
        const int64_t c_ld = convert_c ? cb_ld : p->ldc, c_i0 = convert_c ? m0 : 0, c_j0 = convert_c ? jc : 0;
        if (convert_c && ok && p->beta.f != 0.0f) p->type->load_c(p, m0, jc, m1 - m0, nc, cbuf, cb_ld);
        for (int64_t pc = 0; pc < K; pc += KC) {
            const int64_t kc = GK_MIN(KC, K - pc);
            const gk_real_scalar_t *beta = pc == 0 ? &p->beta : &beta_acc;
            /* B in place (direct_b: plain real B): element (k, j) at B + k * ldb + j */
            const char *Bp = AT(p->B, pc * p->ldb + jc);
            if (share) {
                /* Each thread packs a share of the block's NR panels, then all wait for the block. */
                int64_t q0, q1;
                gk_split_range((nc + nr - 1) / nr, 1, share->nthreads, share->tid, &q0, &q1);
                if (q0 < q1) {
                    const int64_t j0 = q0 * nr, w = GK_MIN(nc, q1 * nr) - j0;
                    p->type->pack_b(p, pc, jc + j0, kc, w, bbuf + (size_t)(j0 * kc) * es);
                }
                gk_barrier_wait(&job->barrier);
            } else if (!direct_b) {
                p->type->pack_b(p, pc, jc, kc, nc, bbuf);
            } else if (nc_full < nc) {
                p->type->pack_b(p, pc, jc + nc_full, kc, nc - nc_full, bbuf);
            }
            for (int64_t ic = m0; ok && ic < m1; ic += MC) {
                const int64_t mc = GK_MIN(MC, m1 - ic);
                const int64_t mc_full = mc / mr * mr;
                /* A in place (direct_a: transposed real A): element (i, k) at A + k * lda + i */
                const char *Ap = AT(p->A, pc * p->lda + ic);
                if (!direct_a) p->type->pack_a(p, ic, pc, mc, kc, abuf);
                else if (mc_full < mc) p->type->pack_a(p, ic + mc_full, pc, mc - mc_full, kc, abuf);
                for (int64_t jr = 0; jr < nc; jr += nr) {
                    const int64_t nb = GK_MIN((int64_t)nr, nc - jr);
                    const void *bp = direct_b ? (nb == nr ? (const void *)AT(Bp, jr) : bbuf) : bbuf + (size_t)(jr * kc) * es;
                    const int64_t rsb = direct_b && nb == nr ? p->ldb : nr;
                    for (int64_t ir = 0; ir < mc; ir += mr) {
                        const int64_t mb = GK_MIN((int64_t)mr, mc - ir);
                        const void *ap = direct_a ? (mb == mr ? (const void *)AT(Ap, ir) : abuf) : abuf + (size_t)(ir * kc) * es;
                        const int64_t rsa = direct_a && mb == mr ? p->lda : mr;
                        void *c = c_base + (size_t)((ic + ir - c_i0) * c_ld + jc + jr - c_j0) * es;
                        if (mb == mr && nb == nr) {
                            kern->ukernel(kc, ap, rsa, bp, rsb, c, c_ld, &p->alpha, beta);
                        } else if (nb == nr && kern->ukernel_rows) { /* fewer rows: kernel for mb rows */
                            kern->ukernel_rows[mb](kc, ap, rsa, bp, rsb, c, c_ld, &p->alpha, beta);
                        } else {
                            kern->ukernel(kc, ap, rsa, bp, rsb, tile, nr, &p->alpha, &zero);
                            merge_edge_tile(es, mb, nb, tile, nr, c, c_ld, beta);
                        }
                    }
                }
            }
            if (share) gk_barrier_wait(&job->barrier); /* the block is read until all are done */
        }
        if (convert_c && ok) p->type->store_c(p, m0, jc, m1 - m0, nc, cbuf, cb_ld);
    }
    return ok ? 0 : -1;
}

static void real_task(void *ctx, int tid, int nthreads) {
    real_job_t *job = (real_job_t *)ctx;
    if (nthreads == 1) { /* all the work on this thread */
        if (real_block(job, 0, job->p->M, 0, job->p->N, NULL) != 0) job->failed = 1;
        return;
    }
    int64_t m0, m1, n0, n1;
    const real_share_t share = {tid, nthreads};
    if (gk_thread_block(job->p->M, job->p->N, job->p->kern->mr, job->p->kern->nr, job->tm, job->tn,
                        job->shared_b != NULL, tid, nthreads, &m0, &m1, &n0, &n1) &&
        real_block(job, m0, m1, n0, n1, job->shared_b ? &share : NULL) != 0)
        job->failed = 1;
}

/* Threads worth using for an M x N x K product: about one per 2^19 multiply-adds (~2.5 us of one
 * AVX-512 core), so 128^3 sgemm splits (1.6-1.7x on 2 threads) and 96^3 does not. */
int gk_threads_for(int64_t M, int64_t N, int64_t K) {
    double macs = (double)M * (double)N * (double)K;
    int n = gk_num_threads();
    double per_thread = 1 << 19;
    if (macs < 2.0 * per_thread) return 1;
    int want = (int)(macs / per_thread);
    return GK_MAX(1, GK_MIN(n, want));
}

/* Whether p is a real product the kernel's `tiny` computes whole (no packing, no threads). */
static int real_tiny_fits(const gk_real_problem_t *p) {
    return p->kern->tiny && !p->type->complex_1m && !p->type->widened && !p->type->store_c && p->M <= GK_TINY_MAX &&
           p->N <= GK_TINY_MAX && p->K <= GK_TINY_MAX &&
           (double)p->M * (double)p->N * (double)p->K <= p->small->tiny_max_macs;
}

gemmkit_status_t gk_real_gemm(const gk_real_problem_t *p) {
    gemmkit_status_t st;
    if (real_tiny_fits(p)) {
        p->kern->tiny(p->M, p->N, p->K, &p->alpha, p->A, p->lda, p->transa, p->B, p->ldb, p->transb, &p->beta,
                      p->C, p->ldc);
        return gemmkit_success;
    }
    if (p->kern->tiny_complex && p->type->complex_1m && !p->type->store_c && p->M <= GK_TINY_MAX &&
        p->N <= 2 * GK_TINY_MAX && p->K <= 2 * GK_TINY_MAX &&
        (double)p->M * (double)(p->N / 2) * (double)(p->K / 2) <= p->small->tiny_complex_max_macs) {
        /* complex, counted in complex multiply-adds (real domain: N, K and C's ld doubled) */
        union { float f[2]; double d[2]; } alpha2;
        if (p->kern->elem == 4) {
            alpha2.f[0] = p->alpha_fold ? ((const float *)p->alpha_fold)[0] : p->alpha.f;
            alpha2.f[1] = p->alpha_fold ? ((const float *)p->alpha_fold)[1] : 0.0f;
        } else {
            alpha2.d[0] = p->alpha_fold ? ((const double *)p->alpha_fold)[0] : p->alpha.d;
            alpha2.d[1] = p->alpha_fold ? ((const double *)p->alpha_fold)[1] : 0.0;
        }
        p->kern->tiny_complex(p->M, p->N / 2, p->K / 2, &alpha2, p->A, p->lda, p->transa, p->conja, p->B, p->ldb,
                              p->transb, p->conjb, &p->beta, p->C, p->ldc / 2);
        return gemmkit_success;
    }
    if (p->type->gemv_path && p->type->gemv_path(p, &st)) return st;
    real_job_t job;
    memset(&job, 0, sizeof(job));
    job.p = p;
    const int mr = p->kern->mr, nr = p->kern->nr, es = p->kern->elem;
    /* Small real problems skip packing where they can. So do few rows of C against a plain B: packing
     * B would copy all of it for a handful of uses, while the kernel can stream it in place. */
    /* the kernel's own type, A, B and C, in place */
    const int real = !p->type->complex_1m && !p->type->widened && p->type->store_c == NULL;
    const double macs = (double)p->M * (double)p->N * (double)p->K;
    const int small = macs <= p->small->direct_max_macs;
    job.direct_a = real && small && p->transa;
    const int small_b = job.direct_a ? small : macs <= p->small->direct_b_max_macs;
    job.direct_b = real && !p->transb && (small_b || p->M <= p->small->direct_max_row_panels * mr);
    job.kc = job.direct_b && !small_b ? p->small->skinny_kc : p->blocks.kc;
    /* complex: the real-domain macs count 4x the complex ones, but a complex multiply-add is 4 real */
    int nthreads = p->threads ? p->threads : gk_threads_for(p->M, p->N, p->K);
    gk_partition_2d(p->M, p->N, mr, nr, nthreads, &job.tm, &job.tn);
    job.shared_b = NULL;
    if (job.tm > 1 && job.tn == 1 && !job.direct_b) {
        /* Row slices: one packed B block for all threads (less packing, one copy in L3). */
        const int64_t kc = GK_MIN(job.kc, p->K);
        const int64_t nc = GK_MIN(p->blocks.nc, (p->N + nr - 1) / nr * nr);
        job.shared_b = gk_thread_workspace(1, (size_t)es * (size_t)(kc * nc));
        if (!job.shared_b) return gemmkit_out_of_memory;
        gk_barrier_init(&job.barrier, job.tm);
    }
    gk_parallel_run(real_task, &job, job.tm * job.tn);
    return job.failed ? gemmkit_out_of_memory : gemmkit_success;
}

/* ---- batches ------------------------------------------------------------------------------------ */

typedef struct {
    const gk_real_problem_t *p;
    int64_t batch;
    size_t sa, sb, sc;       /* strides in bytes (as signed offsets, two's complement) */
    int tiny;                /* every product goes straight to the kernel's tiny path */
    int failed;
} real_batch_job_t;

/* Product i of the batch as a problem of its own, on `threads` threads. */
static gk_real_problem_t batch_item(const real_batch_job_t *job, int64_t i, int threads) {
    gk_real_problem_t q = *job->p;
    q.A = (const char *)q.A + (size_t)i * job->sa;
    q.B = (const char *)q.B + (size_t)i * job->sb;
    q.C = (char *)q.C + (size_t)i * job->sc;
    q.threads = threads;
    return q;
}

static void real_batch_task(void *ctx, int tid, int nthreads) {
    real_batch_job_t *job = (real_batch_job_t *)ctx;
    int64_t i0, i1;
    gk_split_range(job->batch, 1, nthreads, tid, &i0, &i1);
    if (job->tiny) { /* small products by the thousand: no per-product problem copy or path choice */
        const gk_real_problem_t *p = job->p;
        for (int64_t i = i0; i < i1; i++)
            p->kern->tiny(p->M, p->N, p->K, &p->alpha, (const char *)p->A + (size_t)i * job->sa, p->lda, p->transa,
                          (const char *)p->B + (size_t)i * job->sb, p->ldb, p->transb, &p->beta,
                          (char *)p->C + (size_t)i * job->sc, p->ldc);
        return;
    }
    for (int64_t i = i0; i < i1; i++) {
        const gk_real_problem_t q = batch_item(job, i, 1);
        if (gk_real_gemm(&q) != gemmkit_success) job->failed = 1;
    }
}

gemmkit_status_t gk_real_gemm_batch(const gk_real_problem_t *p, int64_t batch, int64_t stride_a,
                                    int64_t stride_b, int64_t stride_c) {
    const size_t es = (size_t)p->kern->elem * (p->type->complex_1m ? 2 : 1);
    real_batch_job_t job = {p, batch, (size_t)stride_a * es, (size_t)stride_b * es, (size_t)stride_c * es,
                            real_tiny_fits(p), 0};
    if (batch == 1) return gk_real_gemm(p);
    /* A product worth several threads gets them all, one product after the other; smaller ones go
     * whole to the threads, as many threads as the batch's total work is worth. */
    const double macs = (double)p->M * (double)p->N * (double)p->K;
    const int per_product = gk_threads_for(p->M, p->N, p->K);
    if (per_product > 1) {
        for (int64_t i = 0; i < batch; i++) {
            const gk_real_problem_t q = batch_item(&job, i, 0);
            const gemmkit_status_t st = gk_real_gemm(&q);
            if (st != gemmkit_success) return st;
        }
        return gemmkit_success;
    }
    const double total = macs * (double)batch;
    int nthreads = (int)GK_MIN((double)gk_num_threads(), GK_MIN((double)batch, total / (double)(1 << 18)));
    gk_parallel_run(real_batch_task, &job, GK_MAX(1, nthreads));
    return job.failed ? gemmkit_out_of_memory : gemmkit_success;
}
