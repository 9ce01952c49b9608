/* Integer GEMM with wrap-around arithmetic (int32, int64, uint32, uint64) and ONNX's float64 scaling, in
 * portable C: op(B) packed k-major per column block, MR-row tiles accumulated modulo 2^bits, then scaled. */
#include <string.h>
#include "driver.h"

#if defined(__GNUC__) && !defined(__clang__)
/* fl(fl(P * alpha) + fl(C * beta)) is three roundings, as NumPy computes it: never fused into an FMA */
#define GK_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#pragma STDC FP_CONTRACT OFF
#define GK_NO_FP_CONTRACT
#endif

#define GK_WRAP_MR 4           /* rows of C per tile */
#define GK_WRAP_NC_MAX 256     /* columns per block: an MR x NC accumulator tile stays in L1 */
#define GK_WRAP_B_BYTES (1 << 20) /* the packed op(B) block (K x nc) is kept near this size (L2) */

/* float64 to integer as NumPy's astype converts one value on x86-64 (cvttsd2si and the sequences
 * compilers emit for unsigned targets): truncation toward zero when the value fits, else the "integer
 * indefinite" INT_MIN pattern (NaN too); uint64 offsets values >= 2^63 by 2^63; uint32 keeps the low
 * 32 bits of the int64 conversion (NumPy's vectorised loop differs there for values outside
 * (-2^31 - 1, 2^32), so onnx.reference's result depends on an element's place in the array). */
static inline int32_t cvt_i32(double x) {
    return (x > -2147483649.0 && x < 2147483648.0) ? (int32_t)x : INT32_MIN;
}
static inline int64_t cvt_i64(double x) {
    return (x >= -9223372036854775808.0 && x < 9223372036854775808.0) ? (int64_t)x : INT64_MIN;
}
static inline uint32_t cvt_u32(double x) { return (uint32_t)(uint64_t)cvt_i64(x); }
static inline uint64_t cvt_u64(double x) {
    return x >= 9223372036854775808.0 ? (uint64_t)cvt_i64(x - 9223372036854775808.0) ^ 0x8000000000000000u
                                      : (uint64_t)cvt_i64(x);
}

/* One thread's block [m0, m1) x [n0, n1) of C for element type T (accumulated as unsigned U). */
#define DEFINE_WRAP_BLOCK(SFX, T, U)                                                                  \
    GK_NO_FP_CONTRACT static void epilogue_##SFX(const gk_wrap_problem_t *p, const U *acc, int64_t w,   \
                                                 int64_t mr, T *C) {                                  \
        for (int64_t r = 0; r < mr; r++)                                                              \
            for (int64_t j = 0; j < w; j++) {                                                         \
                T prod;                                                                               \
                memcpy(&prod, acc + r * w + j, sizeof(T)); /* the sum's bits as T */                  \
                double v = (double)prod * p->alpha;                                                   \
                if (p->beta != 0.0) {                                                                 \
                    const double cb = (double)C[r * p->ldc + j] * p->beta;                             \
                    v = v + cb;                                                                       \
                }                                                                                     \
                C[r * p->ldc + j] = cvt_##SFX(v);                                                     \
            }                                                                                         \
    }                                                                                                 \
    static int wrap_block_##SFX(const gk_wrap_problem_t *p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) { \
        const U *A = (const U *)p->A, *B = (const U *)p->B;                                           \
        const int64_t K = p->K;                                                                       \
        int64_t nc = GK_WRAP_B_BYTES / (int64_t)sizeof(U) / GK_MAX(K, (int64_t)1);                    \
        nc = GK_MAX((int64_t)16, GK_MIN((int64_t)GK_WRAP_NC_MAX, nc / 16 * 16));                      \
        nc = GK_MIN(nc, n1 - n0);                                                                     \
        U *bp = (U *)gk_thread_workspace(1, sizeof(U) * (size_t)(GK_MAX(K, (int64_t)1) * nc));       \
        U *acc = (U *)gk_thread_workspace(0, sizeof(U) * (size_t)(GK_WRAP_MR * nc));                  \
        if (!bp || !acc) return -1;                                                                   \
        for (int64_t jc = n0; jc < n1; jc += nc) {                                                    \
            const int64_t w = GK_MIN(nc, n1 - jc);                                                    \
            for (int64_t k = 0; k < K; k++)                                                           \
                for (int64_t j = 0; j < w; j++)                                                       \
                    bp[k * w + j] = p->transb ? B[(jc + j) * p->ldb + k] : B[k * p->ldb + jc + j];    \
            for (int64_t i0 = m0; i0 < m1; i0 += GK_WRAP_MR) {                                        \
                const int64_t mr = GK_MIN((int64_t)GK_WRAP_MR, m1 - i0);                              \
                memset(acc, 0, sizeof(U) * (size_t)(mr * w));                                         \
                for (int64_t k = 0; k < K; k++) {                                                     \
                    const U *GK_RESTRICT b = bp + k * w;                                              \
                    for (int64_t r = 0; r < mr; r++) {                                                \
                        const U a = p->transa ? A[k * p->lda + i0 + r] : A[(i0 + r) * p->lda + k];    \
                        U *GK_RESTRICT c = acc + r * w;                                               \
                        for (int64_t j = 0; j < w; j++) c[j] += a * b[j]; /* unsigned: wraps */        \
                    }                                                                                 \
                }                                                                                     \
                epilogue_##SFX(p, acc, w, mr, (T *)p->C + i0 * p->ldc + jc);                          \
            }                                                                                         \
        }                                                                                             \
        return 0;                                                                                     \
    }

DEFINE_WRAP_BLOCK(i32, int32_t, uint32_t)
DEFINE_WRAP_BLOCK(u32, uint32_t, uint32_t)
DEFINE_WRAP_BLOCK(i64, int64_t, uint64_t)
DEFINE_WRAP_BLOCK(u64, uint64_t, uint64_t)

typedef struct {
    const gk_wrap_problem_t *p;
    int tm, tn;
    int failed;
} wrap_job_t;

static void wrap_task(void *ctx, int tid, int nthreads) {
    wrap_job_t *job = (wrap_job_t *)ctx;
    const gk_wrap_problem_t *p = job->p;
    int64_t m0 = 0, m1 = p->M, n0 = 0, n1 = p->N;
    if (nthreads > 1 &&
        !gk_thread_block(p->M, p->N, GK_WRAP_MR, 16, job->tm, job->tn, 0, tid, nthreads, &m0, &m1, &n0, &n1))
        return;
    int rc;
    switch (p->type) {
    case GK_WRAP_I32: rc = wrap_block_i32(p, m0, m1, n0, n1); break;
    case GK_WRAP_U32: rc = wrap_block_u32(p, m0, m1, n0, n1); break;
    case GK_WRAP_I64: rc = wrap_block_i64(p, m0, m1, n0, n1); break;
    default: rc = wrap_block_u64(p, m0, m1, n0, n1); break;
    }
    if (rc != 0) job->failed = 1;
}

gemmkit_status_t gk_wrap_gemm(const gk_wrap_problem_t *p) {
    wrap_job_t job = {p, 1, 1, 0};
    /* integer multiply-adds cost about as much as float ones here: the float threshold */
    const int nthreads = gk_threads_for(p->M, p->N, GK_MAX(p->K, (int64_t)1));
    gk_partition_2d(p->M, p->N, GK_WRAP_MR, 16, nthreads, &job.tm, &job.tn);
    gk_parallel_run(wrap_task, &job, job.tm * job.tn);
    return job.failed ? gemmkit_out_of_memory : gemmkit_success;
}
