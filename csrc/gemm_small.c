/* The middle-end's small-problem paths outside the packed loops: tiny products computed whole, and few rows
 * or few columns of C against a matrix streamed once in place (GEMV / dot kernels, columns split among threads). */
#include <string.h>
#include "driver.h"

/* Which kernel streams the big operand S (no packing: packing would copy all of it for a handful of uses):
 *  - few rows (M <= small.gemv_max_m): S = B. A plain B streams row after row (gemv_rows, C's rows as
 *    the sums); a transposed B row by row as dot products (gemv_dots), or, up to small.dot_max_m rows,
 *    by the kernel's own dot path where it has one (AVX-512 sgemm);
 *  - few columns (N <= small.gemv_max_n): the same on C^T = op(B)^T op(A)^T, S = A: a plain A by dot
 *    products, a transposed A row after row; C^T is written through its strides.
 * The vectors x (rows of op(A), or columns of op(B)) are read in place when contiguous in k, else copied
 * (m * k values, small next to S). */
typedef struct {
    gk_gemv_fn gemv;            /* NULL: the kernel's dot path (kern->dot) */
    gk_dot_fn dot;
    int dots;                   /* S's rows are the output's columns (gemv_dots, dot) */
    int es;
    int64_t m, n, k;
    gk_real_scalar_t alpha, beta;
    const char *x; int64_t ldx;
    const char *S; int64_t lds;
    char *y; int64_t rsy, csy;
    int64_t pf;                 /* prefetch distance, elements */
} gemv_job_t;

static void gemv_task(void *ctx, int tid, int nthreads) {
    const gemv_job_t *job = (const gemv_job_t *)ctx;
    int64_t j0, j1;
    /* columns of the output in whole cache lines of S's rows (gemv_rows) */
    gk_split_range(job->n, 64 / job->es, nthreads, tid, &j0, &j1);
    if (j0 >= j1) return;
    const size_t es = (size_t)job->es;
    const char *S = job->S + (size_t)(job->dots ? j0 * job->lds : j0) * es;
    char *y = job->y + (size_t)(j0 * job->csy) * es;
    if (job->gemv)
        job->gemv(job->m, j1 - j0, job->k, &job->alpha, job->x, job->ldx, S, job->lds, &job->beta, y, job->rsy,
                  job->csy, job->pf);
    else
        job->dot(job->m, j1 - j0, job->k, &job->alpha, job->x, job->ldx, S, job->lds, &job->beta, y, job->rsy);
}

/* x[i][l] = X[i * rs + l * cs] (m x k) into a contiguous buffer of the calling thread; NULL when out of
 * memory. */
static const char *gather_vectors(int es, int64_t m, int64_t k, const void *X, int64_t rs, int64_t cs) {
    char *x = (char *)gk_thread_workspace(0, (size_t)es * (size_t)(m * k));
    if (!x) return NULL;
    for (int64_t i = 0; i < m; i++) {
        if (es == 4) {
            const float *src = (const float *)X + i * rs;
            float *dst = (float *)x + i * k;
            for (int64_t l = 0; l < k; l++) dst[l] = src[l * cs];
        } else {
            const double *src = (const double *)X + i * rs;
            double *dst = (double *)x + i * k;
            for (int64_t l = 0; l < k; l++) dst[l] = src[l * cs];
        }
    }
    return x;
}

int gk_real_gemv(const gk_real_problem_t *p, gemmkit_status_t *st) {
    const gk_real_kernel_t *kern = p->kern;
    const gk_small_t *sm = p->small;
    const int64_t M = p->M, N = p->N, K = p->K;
    const int es = kern->elem;
    gemv_job_t job;
    memset(&job, 0, sizeof(job));
    job.es = es;
    job.k = K;
    job.alpha = p->alpha;
    job.beta = p->beta;
    job.pf = sm->gemv_pf_bytes / es;
    job.y = (char *)p->C;
    const void *xsrc;
    int64_t x_rs, x_cs;              /* the vectors x[i][l] at xsrc + i * x_rs + l * x_cs */
    if (p->transb && kern->dot && M <= sm->dot_max_m) {
        job.dot = kern->dot;
        job.dots = 1;
    } else if (M <= sm->gemv_max_m && kern->gemv_rows) {
        job.gemv = p->transb ? kern->gemv_dots : kern->gemv_rows;
        job.dots = p->transb;
    } else if (N <= sm->gemv_max_n && kern->gemv_rows) {
        job.gemv = p->transa ? kern->gemv_rows : kern->gemv_dots;
        job.dots = !p->transa;
    } else {
        return 0;
    }
    if (job.dot || M <= sm->gemv_max_m) { /* few rows: S = op(B), x = rows of op(A), y = C */
        job.m = M; job.n = N;
        job.S = (const char *)p->B; job.lds = p->ldb;
        job.rsy = p->ldc; job.csy = 1;
        xsrc = p->A;
        x_rs = p->transa ? 1 : p->lda;
        x_cs = p->transa ? p->lda : 1;
    } else {                             /* few columns: S = op(A), x = columns of op(B), y = C^T */
        job.m = N; job.n = M;
        job.S = (const char *)p->A; job.lds = p->lda;
        job.rsy = 1; job.csy = p->ldc;
        xsrc = p->B;
        x_rs = p->transb ? p->ldb : 1;
        x_cs = p->transb ? 1 : p->ldb;
    }
    *st = gemmkit_success;
    if (x_cs == 1 || K == 1) {
        job.x = (const char *)xsrc;
        job.ldx = x_rs;
    } else {
        job.x = gather_vectors(es, job.m, K, xsrc, x_rs, x_cs);
        job.ldx = K;
        if (!job.x) { *st = gemmkit_out_of_memory; return 1; }
    }
    gk_parallel_run(gemv_task, &job, p->threads ? p->threads : gk_threads_for(M, N, K));
    gk_thread_workspace_trim();
    return 1;
}

/* ---- tiny products ---------------------------------------------------------------------------- */

/* Whether p is a real product the kernel's `tiny` computes whole (no packing, no threads). */
int gk_real_tiny_fits(const gk_real_problem_t *p) {
    return p->kern->tiny && !p->type->complex_1m && !p->type->widened && !p->type->store_c && p->M <= GK_TINY_MAX &&
           p->N <= GK_TINY_MAX && p->K <= GK_TINY_MAX &&
           (double)p->M * (double)p->N * (double)p->K <= p->small->tiny_max_macs;
}

/* A complex product small enough for the kernel's `tiny_complex` (counted in complex multiply-adds; real
 * domain: N, K and C's ld doubled). */
static int real_tiny_complex_fits(const gk_real_problem_t *p) {
    return p->kern->tiny_complex && p->type->complex_1m && !p->type->store_c && p->M <= GK_TINY_MAX &&
           p->N <= 2 * GK_TINY_MAX && p->K <= 2 * GK_TINY_MAX &&
           (double)p->M * (double)(p->N / 2) * (double)(p->K / 2) <= p->small->tiny_complex_max_macs;
}

int gk_real_tiny(const gk_real_problem_t *p) {
    if (gk_real_tiny_fits(p)) {
        p->kern->tiny(p->M, p->N, p->K, &p->alpha, p->A, p->lda, p->transa, p->B, p->ldb, p->transb, &p->beta,
                      p->C, p->ldc);
        return 1;
    }
    if (!real_tiny_complex_fits(p)) return 0;
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
    return 1;
}
