/* The middle-end's small-problem paths, outside the packed driver: few rows of C against a B that
 * is streamed in place (dot-product kernels for B^T, a GEMV for plain B), N split among threads. */
#include <string.h>
#include "driver.h"

/* Few rows of C: N is split among threads and each thread streams its columns of B in place, with
 * no packing (which would copy all of B for a handful of rows). Two kernels serve it:
 *  - B transposed (rows contiguous in k), M <= small.dot_max_m: the ISA's dot-product kernel;
 *  - B plain, M <= small.gemv_max_m: a GEMV streaming B row after row (fully contiguous, so the
 *    prefetchers run at memory bandwidth) into C rows that stay in L1, 8 rows of B per pass. Portable
 *    C: the loop is memory bound, SSE2 is plenty. */
#define GK_SGEMV_PF 512

typedef struct {
    const gk_real_kernel_t *kern;
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
        job->kern->dot(job->M, j1 - j0, job->K, &job->alpha, job->A, job->rsa, job->B + j0 * job->ldb, job->ldb,
                       &job->beta, job->C + j0, job->ldc);
    else
        sgemv_columns(job, j0, j1 - j0);
}

int gk_sgemm_few_rows(const gk_real_problem_t *p, gemmkit_status_t *st) {
    const gk_real_kernel_t *kern = p->kern;
    const int64_t M = p->M, N = p->N, K = p->K, lda = p->lda;
    const int use_dot = p->transb && M <= p->small->dot_max_m && kern->dot != NULL;
    if (!use_dot && !(!p->transb && M <= p->small->gemv_max_m)) return 0;
    const float *A = (const float *)p->A;
    sgemm_rows_job_t job = {kern, use_dot, M, N, K, p->alpha.f, p->beta.f, A, p->transa ? 1 : lda,
                            p->transa ? lda : 1, (const float *)p->B, p->ldb, (float *)p->C, p->ldc};
    *st = gemmkit_success;
    if (use_dot && p->transa) { /* the dot kernel wants A's rows contiguous: copy op(A) (M x K, small) */
        float *a = (float *)gk_thread_workspace(0, sizeof(float) * (size_t)(M * K));
        if (!a) { *st = gemmkit_out_of_memory; return 1; }
        for (int64_t k = 0; k < K; k++)
            for (int64_t i = 0; i < M; i++) a[i * K + k] = A[k * lda + i];
        job.A = a;
        job.rsa = K;
        job.csa = 1;
    }
    gk_parallel_run(sgemm_rows_task, &job, p->threads ? p->threads : gk_threads_for(M, N, K));
    gk_thread_workspace_trim();
    return 1;
}
