/* Integer GEMM with wrap-around arithmetic (int32, int64, uint32, uint64) and ONNX's float64 scaling: the
 * portable build of wrap_template.h, the thread split, and the choice of the AVX2 build where it runs. */
#include <string.h>
#include "driver.h"

#define GK_WRAP_ISA generic
#include "wrap_template.h"

typedef struct {
    const gk_wrap_problem_t *p;
    const gk_wrap_kernels_t *kernels;
    int tm, tn;
    int failed;
} wrap_job_t;

static void wrap_task(void *ctx, int tid, int nthreads) {
    wrap_job_t *job = (wrap_job_t *)ctx;
    const gk_wrap_problem_t *p = job->p;
    int64_t m0 = 0, m1 = p->M, n0 = 0, n1 = p->N;
    if (nthreads > 1 &&
        !gk_thread_block(p->M, p->N, GK_WRAP_MR, GK_WRAP_NR32, job->tm, job->tn, 0, tid, nthreads, &m0, &m1, &n0, &n1))
        return;
    if (job->kernels->block[p->type](p, m0, m1, n0, n1) != 0) job->failed = 1;
}

gemmkit_status_t gk_wrap_gemm(const gk_wrap_problem_t *p) {
    wrap_job_t job = {p, gk_config()->wrap, 1, 1, 0};
    /* integer multiply-adds cost about as much as float ones here: the float threshold */
    const int nthreads = gk_threads_for(p->M, p->N, GK_MAX(p->K, (int64_t)1));
    gk_partition_2d(p->M, p->N, GK_WRAP_MR, GK_WRAP_NR32, nthreads, &job.tm, &job.tn);
    gk_parallel_run(wrap_task, &job, job.tm * job.tn);
    return job.failed ? gemmkit_out_of_memory : gemmkit_success;
}
