/* gemmkit_quantize_per_token: argument checks, the split of the tokens among threads, and the tokens'
 * kernel of the path in use (csrc/kernels/quantize_*.c; the formula is in include/gemmkit.h). */
#include "config.h"
#include "quantize.h"
#include "threads.h"
#include "tuning.h"
#include "include/gemmkit_introspect.h"

/* An x of at most this many bytes is held in the caches between its two reads: a quarter of the last level
 * (2 MiB where the hierarchy is unknown); the kernel's rows_in_cache loop then (Zen 4, 32 MiB L3: 8 MiB). */
static int64_t qz_in_cache_bytes(void) {
    const gk_cache_info_t *ci = gk_cache_info();
    const int64_t last = ci->l3.size > 0 ? ci->l3.size : ci->l2.size;
    return last > 0 ? last / 4 : (int64_t)2 << 20;
}

/* Below this many values one thread does it all; above, about one thread per this many. */
#define QZ_ELEMS_PER_THREAD ((int64_t)1 << 17)

typedef struct {
    gk_quant_rows_fn fn;
    int64_t M, K, ldx, ldq;
    const char *x;
    size_t x_elem;
    const float *smooth;
    int mode;
    int8_t *q;
    float *scale;
} qz_job_t;

static void qz_task(void *ctx, int tid, int nthreads) {
    const qz_job_t *J = (const qz_job_t *)ctx;
    int64_t begin, end;
    gk_split_range(J->M, 1, nthreads, tid, &begin, &end);
    if (end > begin)
        J->fn(end - begin, J->K, J->x + (size_t)(begin * J->ldx) * J->x_elem, J->ldx, J->smooth, J->mode,
              J->q + begin * J->ldq, J->ldq, J->scale + begin);
}

static const gk_quant_kernel_t *qz_kernel(void) {
    const gk_quant_kernel_t *k = gk_config()->quant;
    return k ? k : &gk_quant_kernel_generic;
}

const char *gemmkit_quantize_kernel_name(void) { return qz_kernel()->name; }

gemmkit_status_t gemmkit_quantize_per_token(int in_type, int64_t M, int64_t K, const void *x, int64_t ldx,
                                            const float *smooth, int smooth_mode, int8_t *q, int64_t ldq,
                                            float *scale) {
    if (in_type < GEMMKIT_OUT_FLOAT32 || in_type > GEMMKIT_OUT_BFLOAT16) return gemmkit_invalid_arguments;
    if (smooth_mode != GEMMKIT_SMOOTH_DIVIDE && smooth_mode != GEMMKIT_SMOOTH_MULTIPLY)
        return gemmkit_invalid_arguments;
    if (M < 0 || K < 0) return gemmkit_invalid_arguments;
    if (M > 1 && (ldx < K || ldq < K)) return gemmkit_invalid_arguments;
    if (M == 0) return gemmkit_success;
    if (!scale || (K > 0 && (!x || !q))) return gemmkit_invalid_arguments;
    if (K == 0) { /* empty tokens: amax 0 */
        for (int64_t i = 0; i < M; i++) scale[i] = 0.0f;
        return gemmkit_success;
    }
    qz_job_t J;
    const gk_quant_kernel_t *kern = qz_kernel();
    J.fn = kern->rows[in_type - 1];
    if (kern->rows_in_cache[in_type - 1] &&
        (double)M * (double)K * (in_type == GEMMKIT_OUT_FLOAT32 ? 4.0 : 2.0) <= (double)qz_in_cache_bytes())
        J.fn = kern->rows_in_cache[in_type - 1];
    J.M = M;
    J.K = K;
    J.ldx = M > 1 ? ldx : 0;
    J.ldq = M > 1 ? ldq : 0;
    J.x = (const char *)x;
    J.x_elem = in_type == GEMMKIT_OUT_FLOAT32 ? 4 : 2;
    J.smooth = K > 0 ? smooth : NULL;
    J.mode = smooth_mode;
    J.q = q;
    J.scale = scale;
    const int64_t total = M * (K > 0 ? K : 1);
    int nthreads = 1;
    if (total >= 2 * QZ_ELEMS_PER_THREAD && M > 1)
        nthreads = (int)GK_MIN(GK_MIN((int64_t)gk_num_threads(), total / QZ_ELEMS_PER_THREAD), M);
    if (nthreads <= 1) qz_task(&J, 0, 1);
    else gk_parallel_run(qz_task, &J, nthreads);
    return gemmkit_success;
}
