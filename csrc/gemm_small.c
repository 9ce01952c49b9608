/* The middle-end's small-problem paths outside the packed loops: tiny products computed whole, and few rows
 * or few columns of C against a matrix streamed once in place (GEMV / dot kernels, columns split among threads). */
#include <string.h>
#include "int8_problem.h"
#include "pack.h"
#include "convert.h"

/* Which kernel streams the big operand S (no packing: packing would copy all of it for a handful of uses):
 *  - few rows (M <= small.gemv_max_m): S = B. A plain B streams row after row (gemv_rows, C's rows as
 *    the sums); a transposed B row by row as dot products (gemv_dots), or, up to small.dot_max_m rows,
 *    by the kernel's own dot path where it has one (the AVX-512 and AVX2 kernels);
 *  - few columns (N <= small.gemv_max_n): the same on C^T = op(B)^T op(A)^T, S = A: a plain A by dot
 *    products, a transposed A row after row; C^T is written through its strides. Up to small.dot_max_n columns the
 *    kernel's dot path (a plain A) or `cols` loops (a transposed A) take them first, where it has them.
 * The vectors x (rows of op(A), or columns of op(B)) are read in place when contiguous in k, else copied
 * (m * k values, small next to S). */
/* The kernel's dot path (where it has one) for sums of GK_DOT_MIN_K terms or more (shorter ones go to the plain loops
 * or, on few columns, to the dot path's short sums: below): few rows of C against a transposed B, and few columns (N
 * <= small.dot_max_n) against a plain A, there over A's rows, every column at once; few columns against a transposed A
 * by the kernel's `cols` loops (sums along A's rows, C written through a tile) for as many terms. Sums of 16 terms
 * already gain by the dot path (see docs/decisions.md, GK_DOT_MIN_K). */
#define GK_DOT_MIN_K 16
/* Few rows x B^T: small.dot_rows_plain_min_m rows (12) or more go to the plain loops (B^T transposed by the packer
 * first) below 48 terms, where the dot path's per-sum reductions outweigh its few multiply-adds; fewer rows, and
 * longer sums, keep the dot path (see docs/decisions.md, GK_DOT_ROWS_PLAIN_MIN_M). */
#define GK_DOT_ROWS_MIN_K 48
/* K block of a broadcast x (x_cs == 0): the values gathered once and reused for every block. */
#define GK_GEMV_BROADCAST_KB ((int64_t)1 << 16)

typedef struct {
    gk_gemv_fn gemv;            /* NULL: the kernel's dot path (kern->dot) */
    gk_dot_fn dot;
    int dots;                   /* S's rows are the output's columns (gemv_dots, dot) */
    int split_m;                /* threads split the m rows of x (the dot path on few columns), not S's */
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
    if (job->split_m) { /* rows of C in blocks of 16 (whole dot blocks, and C's lines apart between threads) */
        gk_split_range(job->m, 16, nthreads, tid, &j0, &j1);
        if (j0 < j1)
            job->dot(j1 - j0, job->n, job->k, &job->alpha, job->x + (size_t)(j0 * job->ldx) * (size_t)job->es,
                     job->ldx, job->S, job->lds, &job->beta, job->y + (size_t)(j0 * job->rsy) * (size_t)job->es,
                     job->rsy);
        return;
    }
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

/* x[i][l] = X[i * rs + l * cs] (m x k) into a contiguous buffer of the calling thread (its A workspace: the GEMV's
 * vectors); NULL when out of memory. */
static const char *gather_vectors(int es, int64_t m, int64_t k, const void *X, int64_t rs, int64_t cs) {
    char *x = (char *)gk_thread_workspace(GK_WS_A, (size_t)es * (size_t)(m * k));
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

/* Few columns against a transposed A by the kernel's `cols` loops: rows of C split among threads in 64s. */
typedef struct { const gk_real_problem_t *p; int64_t rsb, csb; } cols_job_t;

static void cols_task(void *ctx, int tid, int nthreads) {
    const cols_job_t *job = (const cols_job_t *)ctx;
    const gk_real_problem_t *p = job->p;
    const size_t es = (size_t)p->kern->elem;
    int64_t i0, i1;
    gk_split_range(p->M, 64, nthreads, tid, &i0, &i1);
    if (i0 < i1)
        p->kern->cols(i1 - i0, p->N, p->K, &p->alpha, (const char *)p->A + (size_t)i0 * es, p->lda, p->B, job->rsb,
                      job->csb, &p->beta, (char *)p->C + (size_t)(i0 * p->ldc) * es, p->ldc);
}

/* A single column (A^T x) takes the `cols` loops only while one of their blocks covers all of C's rows: past that
 * they walk A in strips (a few cache lines of each of its rows, down all of k), which its GEMV kernel reads as long
 * runs instead. Two to four columns stay with `cols`, faster there (see docs/decisions.md,
 * cols_loops_fit). */
static int cols_loops_fit(const gk_real_problem_t *p) {
    const gk_real_kernel_t *kern = p->kern;
    return p->transa && kern->cols && p->N <= p->small->dot_max_n && p->M > p->N && p->K >= GK_DOT_MIN_K &&
           (p->N > 1 || p->M <= kern->cols_rows);
}

/* Whether an operand of `rows` stored rows, ld elements apart, streams from L3 or memory (GK_GEMV_SPREAD_MIN_BYTES):
 * the GEMV kernels then read it as 4 long runs, and loops that walk it in strips lose. */
static int streamed(int64_t rows, int64_t ld, int es) {
    return (double)rows * (double)ld * es >= GK_GEMV_SPREAD_MIN_BYTES;
}

int gk_real_gemv(const gk_real_problem_t *p, gemmkit_status_t *st) {
    const gk_real_kernel_t *kern = p->kern;
    if (cols_loops_fit(p)) {
        cols_job_t job = {p, p->transb ? 1 : p->ldb, p->transb ? p->ldb : 1};
        gk_parallel_run(cols_task, &job, p->threads ? p->threads : gk_threads_for(p->M, p->N, p->K));
        *st = gemmkit_success;
        return 1;
    }
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
    /* a big S from L3 or memory: the GEMV kernels' 4 long runs read it faster than the dot path's 4 adjacent rows
     * (see docs/decisions.md, gemv_spread) */
    const int gemv_spread = M <= sm->gemv_max_m && kern->gemv_rows && streamed(N, p->ldb, es);
    /* sums shorter than a vector: the AVX-512 dot path fills its lanes with rows (dot_short_sums); the others' masked
     * single step still beats the GEMV kernels from two columns on (see docs/decisions.md, short_k) */
    const int short_k = K < 64 / es && M >= 64 / es && (N >= 2 || kern->dot_short_sums);
    /* the same for few columns against a big plain A streamed from memory; within L3 the dot path stays, hence the
     * bound (see docs/decisions.md, gemv_cols_spread) */
    const int gemv_cols_spread = N <= sm->gemv_max_n && kern->gemv_rows && streamed(M, p->lda, es);
    /* and one column at any size where the kernel's dot path is the slower (AVX2: 2-row blocks of ymm sums); two
     * columns stay, and the AVX-512 dot path keeps them (see docs/decisions.md, gemv_cols) */
    const int gemv_cols = gemv_cols_spread ||
                          (N == 1 && kern->gemv_rows && !kern->dot_few_cols && K >= GK_DOT_MIN_K);
    if (!p->transa && kern->dot && N <= sm->dot_max_n && M > N && (K >= GK_DOT_MIN_K || short_k) && !gemv_cols) {
        job.dot = kern->dot; /* few columns: dot products of A's rows, in place, with op(B)'s columns */
        job.split_m = 1;
    } else if (p->transb && kern->dot && M <= sm->dot_max_m && !gemv_spread &&
               (!kern->plain || K >= (M >= sm->dot_rows_plain_min_m ? GK_DOT_ROWS_MIN_K : GK_DOT_MIN_K))) {
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
    if (job.split_m) {                   /* few columns by the dot path: x = A's rows, S = op(B)^T, y = C */
        job.m = M; job.n = N;
        job.S = (const char *)p->B; job.lds = p->ldb;
        job.rsy = p->ldc; job.csy = 1;
        xsrc = p->A;
        x_rs = p->lda;
        x_cs = 1;
        if (!p->transb) { /* op(B)'s columns gathered, N x K */
            job.S = gather_vectors(es, N, K, p->B, 1, p->ldb);
            job.lds = K;
            if (!job.S) { *st = gemmkit_out_of_memory; return 1; }
        }
    } else if (job.dot || M <= sm->gemv_max_m) { /* few rows: S = op(B), x = rows of op(A), y = C */
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
    const int threads = p->threads ? p->threads : gk_threads_for(M, N, K);
    if (x_cs == 0 && K > GK_GEMV_BROADCAST_KB) {
        /* x repeats one value along k (a broadcast operand, ld 0): K in blocks of KB, one gathered block
         * of x for all of them (not K values: 2^33 for a broadcast row), each block summed into y */
        const int64_t kb = GK_GEMV_BROADCAST_KB;
        job.x = gather_vectors(es, job.m, kb, xsrc, x_rs, 0);
        job.ldx = kb;
        if (!job.x) { *st = gemmkit_out_of_memory; return 1; }
        const char *S0 = job.S;
        for (int64_t k0 = 0; k0 < K; k0 += kb) {
            job.k = GK_MIN(kb, K - k0);
            job.S = S0 + (size_t)(job.dots ? k0 : k0 * job.lds) * (size_t)es;
            if (k0 > 0) {
                if (es == 4) job.beta.f = 1.0f;
                else job.beta.d = 1.0;
            }
            gk_parallel_run(gemv_task, &job, threads);
        }
        gk_thread_workspace_trim();
        return 1;
    }
    if (x_cs == 1 || K == 1) {
        job.x = (const char *)xsrc;
        job.ldx = x_rs;
    } else {
        job.x = gather_vectors(es, job.m, K, xsrc, x_rs, x_cs);
        job.ldx = K;
        if (!job.x) { *st = gemmkit_out_of_memory; return 1; }
    }
    gk_parallel_run(gemv_task, &job, threads);
    gk_thread_workspace_trim();
    return 1;
}

/* ---- float16 / bfloat16: few rows or columns, the 16-bit big operand read in place ------------------ */

/* Few rows of a 16-bit product read op(B) in place up to these M (the packed path widens all of B first, a cost these
 * rows do not repay), few columns op(A) up to GK_HALF_GEMV_MAX_N; beyond, the packed driver. */
#define GK_HALF_GEMV_DOTS_MAX_M 16 /* B^T: the many-rows dot kernel still beats widening B at this M */
#define GK_HALF_GEMV_ROWS_MAX_M 16 /* a plain B: likewise for the many-rows row kernel */
#define GK_HALF_GEMV_MAX_N 2       /* few columns: as the float GEMV path's small.gemv_max_n */
/* The widened vectors x: K in blocks of at most this many floats of x (a broadcast operand's K may be far
 * beyond memory); one block for every product of real size. */
#define GK_HALF_GEMV_X_FLOATS ((int64_t)1 << 20)

typedef struct {
    gk_gemv_fn gemv;
    int dots;                   /* S's rows are the output's columns */
    int64_t m, n, k;
    float alpha, beta;
    const void *x; int64_t ldx; /* float, or bfloat16 bits for a pair kernel's dots */
    const uint16_t *S; int64_t lds;
    float *y; int64_t rsy, csy;
    int64_t pf;                 /* prefetch distance, S elements */
} half_gemv_job_t;

static void half_gemv_task(void *ctx, int tid, int nthreads) {
    const half_gemv_job_t *job = (const half_gemv_job_t *)ctx;
    int64_t j0, j1;
    gk_split_range(job->n, 32, nthreads, tid, &j0, &j1); /* whole cache lines of S's 16-bit rows (gemv_rows) */
    if (j0 >= j1) return;
    job->gemv(job->m, j1 - j0, job->k, &job->alpha, job->x, job->ldx, job->S + (job->dots ? j0 * job->lds : j0),
              job->lds, &job->beta, job->y + j0 * job->csy, job->rsy, job->csy, job->pf);
}

/* x[i][l] = X[i * rs + l * cs] widened (m x k, rows ldx apart). */
static void widen_vectors(int f16, int64_t m, int64_t k, const uint16_t *X, int64_t rs, int64_t cs, float *x,
                          int64_t ldx) {
    for (int64_t i = 0; i < m; i++) {
        const uint16_t *src = X + i * rs;
        float *dst = x + i * ldx;
        if (f16) for (int64_t l = 0; l < k; l++) dst[l] = gk_f16_to_f32(src[l * cs]);
        else for (int64_t l = 0; l < k; l++) dst[l] = gk_bf16_to_f32(src[l * cs]);
    }
}

/* The same vectors as they are (bfloat16 bits for a pair kernel's dots). */
static void copy_vectors(int64_t m, int64_t k, const uint16_t *X, int64_t rs, int64_t cs, uint16_t *x, int64_t ldx) {
    for (int64_t i = 0; i < m; i++) {
        const uint16_t *src = X + i * rs;
        uint16_t *dst = x + i * ldx;
        if (cs == 1) memcpy(dst, src, 2 * (size_t)k);
        else for (int64_t l = 0; l < k; l++) dst[l] = src[l * cs];
    }
}

int gk_half_gemv(const gk_real_problem_t *p, gemmkit_status_t *st) {
    const gk_half_gemv_t *hg = p->half_gemv;
    if (!hg || p->type->is_complex) return 0;
    const int f16 = p->type->widened == GK_WIDENED_F16;
    /* a bfloat16 pair kernel's problem counts K in pairs: the caller's K is k_values */
    const int64_t M = p->M, N = p->N, K = p->kern->k_pair_group ? p->k_values : p->K;
    const int rows_fit = M <= (p->transb ? GK_HALF_GEMV_DOTS_MAX_M : GK_HALF_GEMV_ROWS_MAX_M);
    const int cols_fit = N <= GK_HALF_GEMV_MAX_N;
    if (!rows_fit && !cols_fit) return 0;
    const int few_rows = rows_fit && (!cols_fit || M <= N); /* both: the fewer vectors x against the larger S */
    const int dots = few_rows ? p->transb : !p->transa;
    /* bfloat16 with 3 rows or more on the pair kernel's own instruction, x copied unwidened */
    const gk_gemv_fn pair = !f16 && (few_rows ? M : N) >= 3 ? (dots ? p->kern->pair_dots : p->kern->pair_rows) : NULL;
    const gk_gemv_fn fn = pair ? pair
                               : f16 ? (dots ? hg->f16_dots : hg->f16_rows) : (dots ? hg->bf16_dots : hg->bf16_rows);
    if (!fn) return 0;
    half_gemv_job_t job;
    memset(&job, 0, sizeof(job));
    job.gemv = fn;
    job.dots = dots;
    job.alpha = p->alpha.f;
    job.beta = p->beta.f;
    job.pf = p->small->gemv_pf_bytes / 2;
    const uint16_t *X;
    int64_t x_rs, x_cs;                  /* the vectors x[i][l] at X + i * x_rs + l * x_cs */
    if (few_rows) {                      /* S = op(B), x = rows of op(A), y = C */
        job.m = M; job.n = N;
        job.S = (const uint16_t *)p->B; job.lds = p->ldb;
        X = (const uint16_t *)p->A;
        x_rs = p->transa ? 1 : p->lda;
        x_cs = p->transa ? p->lda : 1;
    } else {                             /* S = op(A), x = columns of op(B), y = C^T */
        job.m = N; job.n = M;
        job.S = (const uint16_t *)p->A; job.lds = p->lda;
        X = (const uint16_t *)p->B;
        x_rs = p->transb ? p->ldb : 1;
        x_cs = p->transb ? 1 : p->ldb;
    }
    /* a 16-bit C: computed in a float M x N buffer (small: few rows or columns), narrowed once at the end */
    const int c16 = p->type->store_c != NULL;
    float *yf = (float *)p->C;
    int64_t ldy = p->ldc;
    if (c16) {
        yf = (float *)gk_thread_workspace(GK_WS_B, sizeof(float) * (size_t)(M * N));
        ldy = N;
        if (!yf) { *st = gemmkit_out_of_memory; return 1; }
        if (job.beta != 0.0f) p->type->load_c(p, 0, 0, M, N, yf, ldy);
    }
    job.y = yf;
    job.rsy = few_rows ? ldy : 1;
    job.csy = few_rows ? 1 : ldy;
    const int64_t kb = GK_MIN(K, GK_MAX((int64_t)64, GK_HALF_GEMV_X_FLOATS / job.m));
    /* x's rows an odd number of cache lines apart: rows a multiple of 4 KiB apart (K = 4096) share L1's sets, and
     * the many-rows kernels read a chunk of every row at once */
    const int64_t line = pair ? 32 : 16, esize = pair ? 2 : 4;
    int64_t ldx = (kb + line - 1) / line * line;
    if ((ldx / line) % 2 == 0) ldx += line;
    void *x = gk_thread_workspace(GK_WS_A, (size_t)(esize * job.m * ldx));
    if (!x) { *st = gemmkit_out_of_memory; return 1; }
    const int threads = p->threads ? p->threads : gk_threads_for(M, N, K);
    const uint16_t *S0 = job.S;
    for (int64_t k0 = 0; k0 < K; k0 += kb) {
        job.k = GK_MIN(kb, K - k0);
        if (pair) copy_vectors(job.m, job.k, X + k0 * x_cs, x_rs, x_cs, (uint16_t *)x, ldx);
        else widen_vectors(f16, job.m, job.k, X + k0 * x_cs, x_rs, x_cs, (float *)x, ldx);
        job.x = x;
        job.ldx = ldx;
        job.S = S0 + (dots ? k0 : k0 * job.lds);
        if (k0 > 0) job.beta = 1.0f; /* later blocks add to the float sums */
        gk_parallel_run(half_gemv_task, &job, threads);
    }
    if (c16) p->type->store_c(p, 0, 0, M, N, yf, ldy);
    gk_thread_workspace_trim();
    *st = gemmkit_success;
    return 1;
}

/* ---- tiny products ---------------------------------------------------------------------------- */

/* Whether p is a real product the kernel's `tiny` computes whole (no packing, no threads): any layout up
 * to GK_TINY_MAX a side, a plain A up to GK_TINY_DIRECT_MAX (gk_tiny_fn). */
int gk_real_tiny_fits(const gk_real_problem_t *p) {
    if (!p->kern->tiny || p->type->is_complex || p->type->widened || p->type->store_c) return 0;
    const double macs = (double)p->M * (double)p->N * (double)p->K;
    if (p->M <= GK_TINY_MAX && p->N <= GK_TINY_MAX && p->K <= GK_TINY_MAX && macs <= p->small->tiny_max_macs)
        return 1;
    const int64_t chunk = 64 / p->kern->elem;
    return !p->transa && 2 * p->N > chunk && p->M <= GK_TINY_DIRECT_MAX &&
           p->N <= GK_TINY_DIRECT_MAX && p->K <= GK_TINY_DIRECT_MAX && macs <= p->small->tiny_direct_max_macs;
}

/* A complex product small enough for the kernel's `tiny_complex` (counted in complex multiply-adds; real
 * domain: N, K and C's ld doubled). */
static int real_tiny_complex_fits(const gk_real_problem_t *p) {
    return p->kern->tiny_complex && p->type->is_complex && !p->type->store_c && p->M <= GK_TINY_MAX &&
           p->N <= 2 * GK_TINY_MAX && p->K <= 2 * GK_TINY_MAX &&
           (double)p->M * (double)(p->N / 2) * (double)(p->K / 2) <= p->small->tiny_complex_max_macs;
}

/* A tiny product of 16-bit operands (a widened type on a float kernel with a tiny path): A, B and a 16-bit C widened
 * into float tiles on the stack, then the tiny path as float32 runs it; packing, edge tiles and a C buffer per
 * thread would cost more than a product this small. */
int gk_real_tiny_widened_fits(const gk_real_problem_t *p) {
    const gk_real_type_t *t = p->type;
    if (!t->widened || !t->widen_row || !p->kern->tiny || p->kern->k_pair_group || p->kern->elem != 4) return 0;
    gk_real_problem_t q = *p; /* the float product it becomes: the float tiny path's own limits */
    q.type = &gk_type_sgemm;
    return gk_real_tiny_fits(&q);
}

static int real_tiny_widened(const gk_real_problem_t *p) {
    const gk_real_type_t *t = p->type;
    if (!gk_real_tiny_widened_fits(p)) return 0;
    GK_ALIGN64 float a[GK_TINY_DIRECT_MAX * GK_TINY_DIRECT_MAX], b[GK_TINY_DIRECT_MAX * GK_TINY_DIRECT_MAX],
        c[GK_TINY_DIRECT_MAX * GK_TINY_DIRECT_MAX];
    const int64_t a_rows = p->transa ? p->K : p->M, a_cols = p->transa ? p->M : p->K;
    const int64_t b_rows = p->transb ? p->N : p->K, b_cols = p->transb ? p->K : p->N;
    for (int64_t i = 0; i < a_rows; i++) t->widen_row((const uint16_t *)p->A + i * p->lda, a_cols, a + i * a_cols);
    for (int64_t i = 0; i < b_rows; i++) t->widen_row((const uint16_t *)p->B + i * p->ldb, b_cols, b + i * b_cols);
    if (!t->store_c) {
        p->kern->tiny(p->M, p->N, p->K, &p->alpha, a, a_cols, p->transa, b, b_cols, p->transb, &p->beta, p->C, p->ldc,
                      NULL);
        return 1;
    }
    if (p->beta.f != 0.0f) t->load_c(p, 0, 0, p->M, p->N, c, p->N);
    p->kern->tiny(p->M, p->N, p->K, &p->alpha, a, a_cols, p->transa, b, b_cols, p->transb, &p->beta, c, p->N, NULL);
    t->store_c(p, 0, 0, p->M, p->N, c, p->N);
    return 1;
}

int gk_real_tiny(const gk_real_problem_t *p) {
    if (real_tiny_widened(p)) return 1;
    if (gk_real_tiny_fits(p)) {
        p->kern->tiny(p->M, p->N, p->K, &p->alpha, p->A, p->lda, p->transa, p->B, p->ldb, p->transb, &p->beta,
                      p->C, p->ldc, NULL);
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

/* Few columns of C (or few terms) against a B that stays in L2: the kernel's `plain` loops at any size, rows split
 * among the threads (each row block re-reads B, K x N, in place; the packed driver's NR-column tiles would be mostly
 * empty). So do sums of up to 16 terms, with any N (B, K x N, as small; packing A and B cost more than their few
 * multiply-adds) (see docs/decisions.md, GK_PLAIN_FEW_COLS). */
#define GK_PLAIN_FEW_COLS 64
#define GK_PLAIN_SHORT_K 16
#define GK_PLAIN_FEW_COLS_B_BYTES ((double)(512 << 10))
/* A transposed B is copied for the plain loops (by the packer: one panel N wide, transposed in registers) up to 48 Ki
 * values; past it the packed driver wins (see docs/decisions.md, GK_PLAIN_COPY_BT_MAX). */
#define GK_PLAIN_COPY_BT_MAX ((int64_t)48 << 10)

/* A transposed A whose row blocks each walk more pages than the TLB holds (K lines of A^T, a page each when they are
 * 4 KiB apart or more, once per plain_group_cols columns of C: small.ta_strips_min_walk bytes of pages, the tables' 8
 * MiB being 2048 pages, a common L2 TLB; the model's rule for other cores: csrc/blocking_model.c) goes to the
 * plain loops in strips of GK_PLAIN_TA_STRIP_BYTES of each k's line (48 floats: whole 8- and 6-row blocks),
 * GK_PLAIN_TA_STRIP_K deep, copied contiguous first; read in place, each row block took a sixth to a third of a line
 * for every k, on a page of its own, and the next block walked the same pages again. Shorter walks stay in place,
 * faster there. Float64 past L2 goes to the packed driver before (above) (see docs/decisions.md,
 * small.ta_strips_min_walk). */
/* and 16 columns or more: fewer do too few multiply-adds per value copied (see docs/decisions.md,
 * GK_PLAIN_TA_STRIPS_MIN_N) */
#define GK_PLAIN_TA_STRIPS_MIN_N 16
#define GK_PLAIN_TA_STRIP_BYTES 192
#define GK_PLAIN_TA_STRIP_K 256

typedef struct { const gk_real_problem_t *p; const void *B; int64_t ldb, unit; int ta_strips; } plain_job_t;

/* Rows [i0, i1) of C by the plain loops, A^T's strips packed (one panel of w rows, as the packed driver packs a
 * transposed A) into the thread's B workspace; 0 when out of memory. */
static int plain_ta_strips(const plain_job_t *job, int64_t i0, int64_t i1) {
    const gk_real_problem_t *p = job->p;
    const size_t es = (size_t)p->kern->elem;
    const int64_t W = GK_PLAIN_TA_STRIP_BYTES / (int64_t)es, KS = GK_PLAIN_TA_STRIP_K;
    char *buf = (char *)gk_thread_workspace(GK_WS_B, es * (size_t)(W * KS));
    if (!buf) return 0;
    const gk_real_scalar_t one = es == 4 ? (gk_real_scalar_t){.f = 1.0f} : (gk_real_scalar_t){.d = 1.0};
    for (int64_t i = i0; i < i1; i += W) {
        const int64_t w = GK_MIN(W, i1 - i);
        for (int64_t k0 = 0; k0 < p->K; k0 += KS) {
            const int64_t kc = GK_MIN(KS, p->K - k0);
            const char *a = (const char *)p->A + ((size_t)(k0 * p->lda + i)) * es;
            if (es == 4) gk_pack_a_f32(1, (const float *)a, p->lda, w, kc, (int)w, (float *)buf); /* one w-row panel */
            else gk_pack_a_f64(1, (const double *)a, p->lda, w, kc, (int)w, (double *)buf);
            p->kern->plain(w, p->N, kc, &p->alpha, buf, w, 1, (const char *)job->B + (size_t)(k0 * job->ldb) * es,
                           job->ldb, k0 == 0 ? (const void *)&p->beta : (const void *)&one,
                           (char *)p->C + (size_t)(i * p->ldc) * es, p->ldc);
        }
    }
    return 1;
}

static void plain_rows(const plain_job_t *job, int64_t i0, int64_t i1) {
    const gk_real_problem_t *p = job->p;
    const size_t es = (size_t)p->kern->elem;
    if (job->ta_strips && plain_ta_strips(job, i0, i1)) return;
    p->kern->plain(i1 - i0, p->N, p->K, &p->alpha, (const char *)p->A + (size_t)(p->transa ? i0 : i0 * p->lda) * es,
                   p->lda, p->transa, job->B, job->ldb, &p->beta, (char *)p->C + (size_t)(i0 * p->ldc) * es, p->ldc);
}

static void plain_task(void *ctx, int tid, int nthreads) {
    const plain_job_t *job = (const plain_job_t *)ctx;
    int64_t i0, i1;
    gk_split_range(job->p->M, (int)job->unit, nthreads, tid, &i0, &i1);
    if (i0 < i1) plain_rows(job, i0, i1);
}

/* The row stride (elements) of a transposed B's copy for the plain loops: N, one cache line more where N's bytes are
 * a multiple of 256. The copy's in-register transposes store each value of a source row to another row of the copy:
 * rows a multiple of 256 bytes apart fall into a quarter of L1's sets or fewer and evict each other (see
 * docs/decisions.md, plain_bt_ld). */
static int64_t plain_bt_ld(int64_t N, int elem) {
    return (N * elem) % 256 == 0 ? N + 64 / elem : N;
}

/* A plain real product in the kernel's `plain` loops, nothing packed: one thread's worth (p->threads, else
 * gk_threads_for) up to small.plain_max_macs, or few columns / few terms against a B in L2 (above) on every thread; a
 * transposed B within the same 512 KiB copied plain first (K x N values), where the packed driver's tiles would use
 * few of their columns (see docs/decisions.md, gk_real_plain). */
int gk_real_plain(const gk_real_problem_t *p) {
    if (!p->kern->plain || p->type->is_complex || p->type->widened || p->type->store_c) return 0;
    const double macs = (double)p->M * (double)p->N * (double)p->K;
    const int threads = p->threads ? p->threads : gk_threads_for(p->M, p->N, p->K);
    const int b_fits = (double)p->K * (double)p->N * p->kern->elem <= GK_PLAIN_FEW_COLS_B_BYTES;
    const int few_cols = (p->N <= GK_PLAIN_FEW_COLS || p->K <= GK_PLAIN_SHORT_K) && b_fits;
    /* one thread's worth, while B (re-read in place by every row block, in strips of its columns down all of k) is
     * not streamed from memory: past GK_GEMV_SPREAD_MIN_BYTES the packed driver, which reads B once, wins (see
     * docs/decisions.md, gk_real_plain: b_streamed) */
    const int b_streamed = streamed(p->transb ? p->N : p->K, p->ldb, p->kern->elem);
    if (!few_cols && (macs > p->small->plain_max_macs || threads != 1 || b_streamed)) return 0;
    /* a transposed A: each 8-row block takes one value per row from every k's line of A^T; float64 uses the whole
     * line then, with no reuse by the next block, and loses past L2, where float32 gains (see docs/decisions.md,
     * gk_real_plain: transposed A) */
    if (p->transa && p->kern->elem == 8 && (double)p->M * (double)p->K * 8.0 > (double)(1 << 20)) return 0;
    /* a transposed B: the copy (K x N, one value at a time) pays off over 32 rows or more, or where K is too short
     * for the dot path (see docs/decisions.md, gk_real_plain: transposed B) */
    if (p->transb && (!b_fits || (p->M < 32 && p->K >= 64) || p->K * p->N > GK_PLAIN_COPY_BT_MAX)) return 0;
    const int64_t walk_cols = GK_MAX(1, p->kern->plain_group_cols); /* columns of C a walk down A^T serves */
    plain_job_t job = {p, p->B, p->ldb, 8, /* whole 8-row blocks per thread (the plain loops' row block) */
                       p->transa && p->N >= GK_PLAIN_TA_STRIPS_MIN_N &&
                           (double)((p->N + walk_cols - 1) / walk_cols) * (double)p->K *
                                   (double)GK_MIN(p->lda * p->kern->elem, 4096) > p->small->ta_strips_min_walk};
    if (p->transb) { /* op(B)[k][j] = B[j * ldb + k], transposed K x N by the packer (one panel N wide: its in-register
                      * transposes, where a value-at-a-time copy took most of a short sum's time), its rows plain_bt_ld()
                      * apart */
        const int64_t ld = plain_bt_ld(p->N, p->kern->elem);
        char *bt = (char *)gk_thread_workspace(GK_WS_A, (size_t)p->kern->elem * (size_t)(p->K * ld));
        if (bt == NULL) return 0; /* (the packed driver reports the lack of memory) */
        if (p->kern->elem == 4) gk_pack_b_f32(1, (const float *)p->B, p->ldb, p->K, p->N, (int)ld, (float *)bt);
        else gk_pack_b_f64(1, (const double *)p->B, p->ldb, p->K, p->N, (int)ld, (double *)bt);
        job.B = bt;
        job.ldb = ld;
    }
    if (threads <= 1) {
        plain_rows(&job, 0, p->M);
        return 1;
    }
    gk_parallel_run(plain_task, &job, threads);
    return 1;
}

/* ---- int8: few rows of C ---------------------------------------------------------------------- */

/* Few rows of C: dot products of the rows of A' with the columns of op(B), B read in place (kernel->dot
 * for a transposed B, kernel->dot_kmajor for a plain one), N split among threads; the epilogue per
 * element as on the edge tiles. */
#define GK_INT8_DOT_MAX_M 32
#define GK_INT8_DOT_COLS 4096 /* columns per kernel call (a plain B's rows are read 4 KiB at a time) */
#define GK_INT8_DOT_EP_COLS 64 /* columns per epilogue call */

typedef struct {
    int8_job_t *job;                  /* (its `failed` set when a thread has no workspace) */
    const uint8_t *A; int64_t lda;  /* op(A) row-major M x K, bytes as given (flipped in the kernel) */
    const int8_terms_t *rows;         /* all M rows */
} int8_dot_job_t;

static void int8_dot_task(void *ctx, int tid, int nthreads) {
    const int8_dot_job_t *d = (const int8_dot_job_t *)ctx;
    int8_job_t *job = d->job;
    const int64_t M = job->M, K = job->K;
    const uint8_t xr = job->flip_a ? 0x80 : 0;
    int64_t j0, j1;
    gk_split_range(job->N, 16, nthreads, tid, &j0, &j1);
    /* the sums of a call, M x GK_INT8_DOT_COLS, and its column sums (GK_WS_A may hold the caller's op(A)) */
    int32_t *S = (int32_t *)gk_thread_workspace(GK_WS_B, sizeof(int32_t) * (size_t)((M + 1) * GK_INT8_DOT_COLS));
    if (S == NULL) {
        job->failed = 1;
        return;
    }
    int32_t *colsum = S + M * GK_INT8_DOT_COLS;
    int64_t S64[GK_INT8_DOT_MAX_M * GK_INT8_DOT_EP_COLS], cs64[GK_INT8_DOT_EP_COLS];
    double comp[GK_INT8_DOT_EP_COLS], add[GK_INT8_DOT_EP_COLS];
    int64_t sum64[GK_INT8_DOT_EP_COLS];
    int32_t sum32[GK_INT8_DOT_EP_COLS];
    int8_terms_t cols = {comp, add, sum64, sum32, 0};
    for (int64_t jb = j0; jb < j1; jb += GK_INT8_DOT_COLS) {
        const int64_t n = GK_MIN((int64_t)GK_INT8_DOT_COLS, j1 - jb);
        /* dot_kmajor: column sums only where the (reduced) offset of A needs them */
        const int sums = job->transb || job->a_ofs != 0;
        if (job->transb) job->kern->dot(M, n, K, d->A, d->lda, xr, job->B + jb * job->ldb, job->ldb, S, colsum);
        else job->kern->dot_kmajor(M, n, K, d->A, d->lda, xr, job->B + jb, job->ldb, S, sums ? colsum : NULL);
        for (int64_t je = 0; je < n; je += GK_INT8_DOT_EP_COLS) {
            const int64_t ne = GK_MIN((int64_t)GK_INT8_DOT_EP_COLS, n - je);
            for (int64_t j = 0; j < ne; j++) cs64[j] = sums ? colsum[je + j] : 0;
            for (int64_t i = 0; i < M; i++)
                for (int64_t j = 0; j < ne; j++) S64[i * ne + j] = S[i * n + je + j];
            gk_int8_col_terms(job, jb + je, ne, cs64, &cols);
            const gk_int8_epilogue_t ep = gk_int8_tile_epilogue(job, d->rows, 0, &cols, 0, 0, jb + je, GK_EP_DOUBLE);
            gk_int8_epilogue_scalar(M, ne, S64, ne, gk_int8_c_at(job, 0, jb + je), job->ldc, &ep);
        }
    }
}

/* Whether the dot path takes this product (few rows, one exact K chunk, a kernel for B's layout). */
int gk_int8_dot_applies(const int8_job_t *job) {
    const gk_int8_kernel_t *kern = job->kern;
    const int64_t max_m = job->transb ? job->blocks->dot_max_m : job->blocks->kmajor_max_m;
    return !job->packed_b && job->M <= GK_MIN(max_m, (int64_t)GK_INT8_DOT_MAX_M) && job->K <= kern->k_chunk &&
           (job->transb ? kern->dot != NULL : kern->dot_kmajor != NULL);
}

int gk_int8_b_in_place_beats_packed(int transb, int64_t M, int64_t K) {
    const gk_config_t *cfg = gk_config();
    int8_job_t job;
    memset(&job, 0, sizeof(job));
    job.kern = gk_int8_kernel_for(cfg, K);
    job.blocks = &cfg->int8_blocks;
    job.transb = transb;
    job.M = M;
    job.K = K;
    /* A transposed B in place beats panels widened to int16 (twice the weight's bytes) at every M the dot
     * path takes (measured on AVX2); byte panels (VNNI) were not measured against it: they stay. */
    return gk_int8_dot_applies(&job) &&
           (transb ? job.kern->elem_size > 1 : M <= cfg->small.int8_kmajor_over_packed_max_m);
}

/* The dot path on up to max_threads threads (1: on the calling thread). dot_kmajor reads an int8 A as
 * signed, A' - 128: for it the job's offset of A is a_ofs - 128 and the row sums are of the int8 values. */
gemmkit_status_t gk_int8_dot(const int8_job_t *job_in, int max_threads) {
    int8_job_t kjob = *job_in, *job = &kjob;
    const int signed_a = !job->transb && job->flip_a;
    if (signed_a) job->a_ofs -= 128;
    const int64_t M = job->M, K = job->K;
    const size_t a_bytes = job->transa ? gk_align64((size_t)(M * K)) : 0;
    uint8_t *ws = (uint8_t *)gk_thread_workspace(GK_WS_A, a_bytes + 4 * sizeof(int64_t) * GK_INT8_DOT_MAX_M);
    if (!ws) return gemmkit_out_of_memory;
    int8_dot_job_t d = {job, job->A, job->lda, NULL};
    if (job->transa) { /* A is K x M: copy op(A) row-major (M x K, small) */
        for (int64_t k = 0; k < K; k++)
            for (int64_t i = 0; i < M; i++) ws[i * K + k] = job->A[k * job->lda + i];
        d.A = ws;
        d.lda = K;
    }
    int64_t *rowsum = (int64_t *)(ws + a_bytes);
    int32_t rows32[GK_INT8_DOT_MAX_M];
    int8_terms_t rows = {(double *)(rowsum + GK_INT8_DOT_MAX_M), (double *)(rowsum + 2 * GK_INT8_DOT_MAX_M),
                       rowsum + 3 * GK_INT8_DOT_MAX_M, rows32, 0};
    const uint8_t xr = job->flip_a ? 0x80 : 0;
    for (int64_t i = 0; i < M; i++) {
        int64_t s = 0;
        if (signed_a) for (int64_t k = 0; k < K; k++) s += (int8_t)d.A[i * d.lda + k];
        else for (int64_t k = 0; k < K; k++) s += (uint8_t)(d.A[i * d.lda + k] ^ xr);
        rowsum[i] = s;
    }
    gk_int8_row_terms(job, 0, M, rowsum, &rows);
    d.rows = &rows;
    const int nthreads = GK_MIN(max_threads, gk_threads_for(M, job->N, gk_int8_float_depth(K)));
    job->failed = 0;
    if (nthreads <= 1) int8_dot_task(&d, 0, 1);
    else gk_parallel_run(int8_dot_task, &d, nthreads);
    gk_thread_workspace_trim();
    return job->failed ? gemmkit_out_of_memory : gemmkit_success;
}
