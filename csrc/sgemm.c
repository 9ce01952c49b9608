/* sgemm frontend and driver: validates arguments as oneDNN does, handles the degenerate cases,
 * then splits C among threads and runs the Goto/BLIS NC -> KC -> MC -> NR -> MR loops per thread. */
#include <string.h>
#include "gemmkit_internal.h"
#include "pack.h"

typedef struct {
    const gk_sgemm_kernel_t *kern;
    int transa, transb;
    int64_t M, N, K;
    float alpha, beta;
    const float *A; int64_t lda;
    const float *B; int64_t ldb;
    float *C; int64_t ldc;
    int direct_a, direct_b;  /* no-pack path: read the operand in place (layouts the kernel streams) */
    int64_t kc;              /* k block: the kernel table's, or GK_SGEMM_SKINNY_KC for skinny M */
    int tm, tn;  /* thread grid planned for the requested thread count */
    float *shared_b;        /* tn == 1: the threads pack one B block together into this buffer */
    gk_barrier_t barrier;
    int failed;
} sgemm_job_t;

/* How the threads of a call share the packed B block (NULL: each packs its own). */
typedef struct {
    int tid, nthreads;
} sgemm_share_t;

/* Problems up to this many multiply-adds skip packing where they can: it costs more than it saves. */
#define GK_SGEMM_DIRECT_MAX_MACS (160.0 * 160.0 * 160.0)
/* Up to this many MR-row panels of C, a plain B is read in place at any size, in k blocks of
 * GK_SGEMM_SKINNY_KC rows: each kernel call then reads a few rows of B, continuing where the call for
 * the previous column panel stopped, so the rows stream (B is used too few times to pay for packing). */
#define GK_SGEMM_DIRECT_MAX_ROW_PANELS 4
#define GK_SGEMM_SKINNY_KC 16

/* C[m x n] = alpha * T + beta * C for an edge tile computed into T (row stride ldt). */
static void merge_edge_tile(int64_t m, int64_t n, const float *T, int64_t ldt, float *C, int64_t ldc,
                            float beta) {
    for (int64_t i = 0; i < m; i++) {
        float *c = C + i * ldc;
        const float *t = T + i * ldt;
        if (beta == 0.0f) for (int64_t j = 0; j < n; j++) c[j] = t[j];
        else for (int64_t j = 0; j < n; j++) c[j] = t[j] + beta * c[j];
    }
}

/* The Goto/BLIS loop nest over C[m0:m1, n0:n1] with this thread's packing buffers. On the no-pack
 * path (small problems) full tiles read B in place when it is not transposed and A in place when it
 * is (the layouts the microkernel can stream); only edge panels are packed (zero-padded). */
static int sgemm_block(sgemm_job_t *job, int64_t m0, int64_t m1, int64_t n0, int64_t n1,
                       const sgemm_share_t *share) {
    const gk_sgemm_kernel_t *kern = job->kern;
    const int mr = kern->mr, nr = kern->nr;
    const int direct_a = job->direct_a, direct_b = job->direct_b;
    const int64_t MC = kern->mc, NC = kern->nc, KC = job->kc;
    const int64_t K = job->K;
    const int64_t kc_max = GK_MIN(KC, K);
    const int64_t mc_max = direct_a ? mr : GK_MIN(MC, (m1 - m0 + mr - 1) / mr * mr);
    const int64_t nc_max = direct_b ? nr : GK_MIN(NC, (n1 - n0 + nr - 1) / nr * nr);
    float *abuf = (float *)gk_thread_workspace(0, sizeof(float) * (size_t)(mc_max * kc_max));
    float *bbuf = share ? job->shared_b : (float *)gk_thread_workspace(1, sizeof(float) * (size_t)(nc_max * kc_max));
    /* Shared B: a thread without its A buffer still packs and meets every barrier, or the others
     * would wait forever; it reports the failure at the end. */
    const int ok = abuf != NULL && bbuf != NULL;
    if (!ok && !share) return -1;
    GK_ALIGN64 float tile[32 * 64];

    for (int64_t jc = n0; jc < n1; jc += NC) {
        const int64_t nc = GK_MIN(NC, n1 - jc);
        const int64_t nc_full = nc / nr * nr;
        for (int64_t pc = 0; pc < K; pc += KC) {
            const int64_t kc = GK_MIN(KC, K - pc);
            const float beta = pc == 0 ? job->beta : 1.0f;
            const float *Bp = job->transb ? job->B + jc * job->ldb + pc : job->B + pc * job->ldb + jc;
            if (share) {
                /* Each thread packs a share of the block's NR panels, then all wait for the block. */
                int64_t p0, p1;
                gk_split_range((nc + nr - 1) / nr, 1, share->nthreads, share->tid, &p0, &p1);
                if (p0 < p1) {
                    int64_t j0 = p0 * nr, w = GK_MIN(nc, p1 * nr) - j0;
                    pack_b_f32(job->transb, job->transb ? Bp + j0 * job->ldb : Bp + j0, job->ldb, kc, w, nr,
                               bbuf + j0 * kc);
                }
                gk_barrier_wait(&job->barrier);
            } else if (!direct_b) {
                pack_b_f32(job->transb, Bp, job->ldb, kc, nc, nr, bbuf);
            } else if (nc_full < nc) {
                pack_b_f32(0, Bp + nc_full, job->ldb, kc, nc - nc_full, nr, bbuf);
            }
            for (int64_t ic = m0; ok && ic < m1; ic += MC) {
                const int64_t mc = GK_MIN(MC, m1 - ic);
                const int64_t mc_full = mc / mr * mr;
                const float *Ap = job->transa ? job->A + pc * job->lda + ic : job->A + ic * job->lda + pc;
                if (!direct_a) pack_a_f32(job->transa, Ap, job->lda, mc, kc, mr, abuf);
                else if (mc_full < mc) pack_a_f32(1, Ap + mc_full, job->lda, mc - mc_full, kc, mr, abuf);
                for (int64_t jr = 0; jr < nc; jr += nr) {
                    const int64_t nb = GK_MIN((int64_t)nr, nc - jr);
                    const float *bp = direct_b ? (nb == nr ? Bp + jr : bbuf) : bbuf + jr * kc;
                    const int64_t rsb = direct_b && nb == nr ? job->ldb : nr;
                    for (int64_t ir = 0; ir < mc; ir += mr) {
                        const int64_t mb = GK_MIN((int64_t)mr, mc - ir);
                        const float *ap = direct_a ? (mb == mr ? Ap + ir : abuf) : abuf + ir * kc;
                        const int64_t rsa = direct_a && mb == mr ? job->lda : mr;
                        float *c = job->C + (ic + ir) * job->ldc + jc + jr;
                        if (mb == mr && nb == nr) {
                            kern->ukernel(kc, ap, rsa, bp, rsb, c, job->ldc, job->alpha, beta);
                        } else if (nb == nr && kern->ukernel_rows) { /* fewer rows: kernel for mb rows */
                            kern->ukernel_rows[mb](kc, ap, rsa, bp, rsb, c, job->ldc, job->alpha, beta);
                        } else {
                            kern->ukernel(kc, ap, rsa, bp, rsb, tile, nr, job->alpha, 0.0f);
                            merge_edge_tile(mb, nb, tile, nr, c, job->ldc, beta);
                        }
                    }
                }
            }
            if (share) gk_barrier_wait(&job->barrier); /* the block is read until all are done */
        }
    }
    return ok ? 0 : -1;
}

static void sgemm_task(void *ctx, int tid, int nthreads) {
    sgemm_job_t *job = (sgemm_job_t *)ctx;
    if (nthreads == 1) { /* all the work on this thread */
        if (sgemm_block(job, 0, job->M, 0, job->N, NULL) != 0) job->failed = 1;
        return;
    }
    int64_t m0, m1, n0, n1;
    const sgemm_share_t share = {tid, nthreads};
    if (gk_thread_block(job->M, job->N, job->kern->mr, job->kern->nr, job->tm, job->tn, job->shared_b != NULL, tid,
                        nthreads, &m0, &m1, &n0, &n1) &&
        sgemm_block(job, m0, m1, n0, n1, job->shared_b ? &share : NULL) != 0)
        job->failed = 1;
}

/* Few rows of C: N is split among threads and each thread streams its columns of B in place, with
 * no packing (which would copy all of B for a handful of rows). Two kernels serve it:
 *  - B transposed (rows contiguous in k), M <= GK_SGEMM_DOT_MAX_M: the ISA's dot-product kernel;
 *  - B plain, M <= GK_SGEMV_MAX_M: a GEMV streaming B row after row (fully contiguous, so the
 *    prefetchers run at memory bandwidth) into C rows that stay in L1, 8 rows of B per pass. Portable
 *    C: the loop is memory bound, SSE2 is plenty. */
#define GK_SGEMM_DOT_MAX_M 16
#define GK_SGEMV_MAX_M 2
#define GK_SGEMV_PF 512

typedef struct {
    const gk_sgemm_kernel_t *kern;
    int use_dot;
    int64_t M, N, K;
    float alpha, beta;
    const float *A; int64_t rsa, csa; /* op(A)[i][k] = A[i * rsa + k * csa] */
    const float *B; int64_t ldb;
    float *C; int64_t ldc;
} sgemm_rows_job_t;

static void sgemv_columns(const sgemm_rows_job_t *job, int64_t j0, int64_t n) {
    const int64_t K = job->K, sa = job->csa;
    for (int64_t i = 0; i < job->M; i++) {
        float *GK_RESTRICT c = job->C + i * job->ldc + j0;
        const float *a = job->A + i * job->rsa;
        if (job->beta == 0.0f) memset(c, 0, sizeof(float) * (size_t)n);
        else if (job->beta != 1.0f) for (int64_t j = 0; j < n; j++) c[j] *= job->beta;
        int64_t k = 0;
        for (; k + 8 <= K; k += 8) {
            float av[8];
            const float *bk[8];
            for (int q = 0; q < 8; q++) {
                av[q] = job->alpha * a[(k + q) * sa];
                bk[q] = job->B + (k + q) * job->ldb + j0;
            }
            int64_t j = 0;
            /* 64 columns at a time, the 8 rows' lines GK_SGEMV_PF floats ahead requested first: eight
             * streams from DRAM outrun the hardware prefetchers (+25 % at N = K = 4096). */
            for (; j + 64 <= n; j += 64) {
                for (int q = 0; q < 8; q++)
                    for (int l = 0; l < 4; l++) GK_PREFETCH(bk[q] + j + GK_SGEMV_PF + 16 * l);
                for (int64_t jj = j; jj < j + 64; jj++)
                    c[jj] += (av[0] * bk[0][jj] + av[1] * bk[1][jj] + av[2] * bk[2][jj] + av[3] * bk[3][jj]) +
                             (av[4] * bk[4][jj] + av[5] * bk[5][jj] + av[6] * bk[6][jj] + av[7] * bk[7][jj]);
            }
            for (; j < n; j++)
                c[j] += (av[0] * bk[0][j] + av[1] * bk[1][j] + av[2] * bk[2][j] + av[3] * bk[3][j]) +
                        (av[4] * bk[4][j] + av[5] * bk[5][j] + av[6] * bk[6][j] + av[7] * bk[7][j]);
        }
        for (; k < K; k++) {
            const float a0 = job->alpha * a[k * sa];
            const float *GK_RESTRICT b0 = job->B + k * job->ldb + j0;
            for (int64_t j = 0; j < n; j++) c[j] += a0 * b0[j];
        }
    }
}

static void sgemm_rows_task(void *ctx, int tid, int nthreads) {
    const sgemm_rows_job_t *job = (const sgemm_rows_job_t *)ctx;
    int64_t j0, j1;
    gk_split_range(job->N, 16, nthreads, tid, &j0, &j1);
    if (j0 >= j1) return;
    if (job->use_dot)
        job->kern->dot(job->M, j1 - j0, job->K, job->alpha, job->A, job->rsa, job->B + j0 * job->ldb, job->ldb,
                       job->beta, job->C + j0, job->ldc);
    else
        sgemv_columns(job, j0, j1 - j0);
}

/* Returns 1 and computes C when the few-rows path applies, 0 to fall through to the packed driver. */
static int sgemm_rows(const gk_sgemm_kernel_t *kern, int transa, int transb, int64_t M, int64_t N, int64_t K,
                      float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                      float *C, int64_t ldc, gemmkit_status_t *st) {
    const int use_dot = transb && M <= GK_SGEMM_DOT_MAX_M && kern->dot != NULL;
    if (!use_dot && !(!transb && M <= GK_SGEMV_MAX_M)) return 0;
    sgemm_rows_job_t job = {kern, use_dot, M, N, K, alpha, beta, A, transa ? 1 : lda, transa ? lda : 1,
                            B, ldb, C, ldc};
    *st = gemmkit_success;
    if (use_dot && transa) { /* the dot kernel wants A's rows contiguous: copy op(A) (M x K, small) */
        float *a = (float *)gk_thread_workspace(0, sizeof(float) * (size_t)(M * K));
        if (!a) { *st = gemmkit_out_of_memory; return 1; }
        for (int64_t k = 0; k < K; k++)
            for (int64_t i = 0; i < M; i++) a[i * K + k] = A[k * lda + i];
        job.A = a;
        job.rsa = K;
        job.csa = 1;
    }
    gk_parallel_run(sgemm_rows_task, &job, gk_threads_for(M, N, K));
    return 1;
}

/* C := beta * C over M x N (beta == 0 writes zeros without reading C). */
static void scale_c(int64_t M, int64_t N, float beta, float *C, int64_t ldc) {
    if (beta == 1.0f) return;
    for (int64_t i = 0; i < M; i++) {
        float *c = C + i * ldc;
        if (beta == 0.0f) memset(c, 0, sizeof(float) * (size_t)N);
        else for (int64_t j = 0; j < N; j++) c[j] *= beta;
    }
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

static int is_trans(char t) { return t == 'T' || t == 't'; }
static int is_notrans(char t) { return t == 'N' || t == 'n'; }

gemmkit_status_t gk_check_gemm_args(char transa, char transb, int64_t M, int64_t N, int64_t K,
                                    const void *A, int64_t lda, const void *B, int64_t ldb,
                                    const void *C, int64_t ldc) {
    if (!(is_trans(transa) || is_notrans(transa))) return gemmkit_invalid_arguments;
    if (!(is_trans(transb) || is_notrans(transb))) return gemmkit_invalid_arguments;
    if (M < 0 || N < 0 || K < 0) return gemmkit_invalid_arguments;
    if (lda < GK_MAX((int64_t)1, is_trans(transa) ? M : K)) return gemmkit_invalid_arguments;
    if (ldb < GK_MAX((int64_t)1, is_trans(transb) ? K : N)) return gemmkit_invalid_arguments;
    if (ldc < GK_MAX((int64_t)1, N)) return gemmkit_invalid_arguments;
    if (M > 0 && N > 0) {
        if (C == NULL) return gemmkit_invalid_arguments;
        if (K > 0 && (A == NULL || B == NULL)) return gemmkit_invalid_arguments;
    }
    return gemmkit_success;
}

gemmkit_status_t gemmkit_sgemm(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha,
                               const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                               float *C, int64_t ldc) {
    gemmkit_status_t st = gk_check_gemm_args(transa, transb, M, N, K, A, lda, B, ldb, C, ldc);
    if (st != gemmkit_success) return st;
    if (M == 0 || N == 0) return gemmkit_success;
    if (K == 0 || alpha == 0.0f) {
        scale_c(M, N, beta, C, ldc);
        return gemmkit_success;
    }
    const gk_sgemm_kernel_t *kern = gk_dispatch()->sgemm;
    if (sgemm_rows(kern, is_trans(transa), is_trans(transb), M, N, K, alpha, A, lda, B, ldb, beta, C, ldc, &st))
        return st;
    sgemm_job_t job;
    job.kern = kern;
    job.transa = is_trans(transa);
    job.transb = is_trans(transb);
    job.M = M; job.N = N; job.K = K;
    job.alpha = alpha; job.beta = beta;
    job.A = A; job.lda = lda; job.B = B; job.ldb = ldb; job.C = C; job.ldc = ldc;
    job.failed = 0;
    /* Small problems skip packing where they can. So do few rows of C against a plain B: packing B
     * would copy all of it for a handful of uses, while the kernel can stream it in place. */
    const int small = (double)M * (double)N * (double)K <= GK_SGEMM_DIRECT_MAX_MACS;
    job.direct_a = small && job.transa;
    job.direct_b = !job.transb && (small || M <= GK_SGEMM_DIRECT_MAX_ROW_PANELS * job.kern->mr);
    job.kc = job.direct_b && !small ? GK_SGEMM_SKINNY_KC : job.kern->kc;
    int nthreads = gk_threads_for(M, N, K);
    gk_partition_2d(M, N, job.kern->mr, job.kern->nr, nthreads, &job.tm, &job.tn);
    job.shared_b = NULL;
    if (job.tm > 1 && job.tn == 1 && !job.direct_b) {
        /* Row slices: one packed B block for all threads (less packing, one copy in L3). */
        const int64_t kc = GK_MIN(job.kc, K);
        const int64_t nc = GK_MIN(job.kern->nc, (N + job.kern->nr - 1) / job.kern->nr * job.kern->nr);
        job.shared_b = (float *)gk_thread_workspace(1, sizeof(float) * (size_t)(kc * nc));
        if (!job.shared_b) return gemmkit_out_of_memory;
        gk_barrier_init(&job.barrier, job.tm);
    }
    gk_parallel_run(sgemm_task, &job, job.tm * job.tn);
    return job.failed ? gemmkit_out_of_memory : gemmkit_success;
}
