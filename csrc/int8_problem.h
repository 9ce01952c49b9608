/* The int8 family's problem after the frontend's checks and its epilogue terms, shared by its packed loops
 * (csrc/gemm_int8.c) and its few-row dot path (csrc/gemm_small.c). */
#ifndef GEMMKIT_INT8_PROBLEM_H
#define GEMMKIT_INT8_PROBLEM_H
#include "driver.h"

typedef struct {
    const gk_int8_kernel_t *kern;
    const gk_int8_blocks_t *blocks;
    int transa, transb, flip_a;
    int64_t M, N, K;
    double alpha, beta;
    const uint8_t *A; int64_t lda; int a_ofs; /* a_ofs = ao (u8) or ao + 128 (s8, A flipped to u8) */
    const int8_t *B; int64_t ldb; int bo;
    void *C; int64_t ldc; int c_size;  /* C's elements: int32 or the float destination type */
    char offsetc; const int32_t *co;
    int dst;                            /* the float epilogue (gk_int8_epilogue_t), as gk_int8_problem_t */
    const float *row_scale, *col_scale;
    int row_scale_first;
    const float *row_bias, *col_bias;
    const uint8_t *packed_b;            /* prepacked op(B) panels (one K chunk) and column sums, or NULL */
    const int32_t *packed_colsum;
    int64_t nc;                         /* the skeleton's column block (a packed B block's column sums first) */
    int failed;                         /* the dot path: a thread had no workspace */
} int8_job_t;

/* The depth of a float product with about the work of an int8 one of depth K (an int8 multiply-add costs
 * about a quarter of a float one): what the int8 paths give gk_threads_for. */
static inline int64_t gk_int8_float_depth(int64_t K) { return K / 4 + 1; }

/* Per-column and per-row terms of the epilogue for columns [j0, j0+n) / rows [i0, i0+m): the
 * compensation (comp) and offset (add) as doubles, their sum as an integer, and max |sum|. */
typedef struct {
    double *comp, *add;
    int64_t *sum64;
    int32_t *sum32;
    int64_t max_abs;
} int8_terms_t;

static inline void gk_int8_col_terms(const int8_job_t *job, int64_t j0, int64_t n, const int64_t *colsum, int8_terms_t *t) {
    t->max_abs = 0;
    for (int64_t j = 0; j < n; j++) {
        int64_t comp = -(int64_t)job->a_ofs * colsum[j];
        int64_t add = job->offsetc == 'F' ? job->co[0] : job->offsetc == 'R' ? job->co[j0 + j] : 0;
        t->comp[j] = (double)comp;
        t->add[j] = (double)add;
        t->sum64[j] = comp + add;
        t->sum32[j] = (int32_t)GK_MAX(GK_MIN(comp + add, (int64_t)INT32_MAX), (int64_t)INT32_MIN);
        t->max_abs = GK_MAX(t->max_abs, comp + add < 0 ? -(comp + add) : comp + add);
    }
}
static inline void gk_int8_row_terms(const int8_job_t *job, int64_t i0, int64_t m, const int64_t *rowsum, int8_terms_t *t) {
    const int64_t kab = job->K * (int64_t)job->a_ofs * (int64_t)job->bo;
    t->max_abs = 0;
    for (int64_t i = 0; i < m; i++) {
        int64_t comp = -(int64_t)job->bo * rowsum[i] + kab;
        int64_t add = job->offsetc == 'C' ? job->co[i0 + i] : 0;
        t->comp[i] = (double)comp;
        t->add[i] = (double)add;
        t->sum64[i] = comp + add;
        t->sum32[i] = (int32_t)GK_MAX(GK_MIN(comp + add, (int64_t)INT32_MAX), (int64_t)INT32_MIN);
        t->max_abs = GK_MAX(t->max_abs, comp + add < 0 ? -(comp + add) : comp + add);
    }
}

static inline size_t gk_align64(size_t x) { return (x + 63) & ~(size_t)63; }

/* Address of C[i][j] (elements of the destination type). */
static inline void *gk_int8_c_at(const int8_job_t *job, int64_t i, int64_t j) {
    return (char *)job->C + (size_t)(i * job->ldc + j) * (size_t)job->c_size;
}

/* The epilogue block of the tile whose first row is row i0 and first column is column j0 of C: the
 * per-row terms from rows[ri], the per-column terms from cols[cj], the scales and bias from i0, j0. */
static inline gk_int8_epilogue_t gk_int8_tile_epilogue(const int8_job_t *job, const int8_terms_t *rows, int64_t ri, const int8_terms_t *cols,
                                      int64_t cj, int64_t i0, int64_t j0, int mode) {
    const int has_ra = job->offsetc == 'C', has_ca = job->offsetc == 'F' || job->offsetc == 'R';
    gk_int8_epilogue_t ep; /* every field set below; a memset cost time (docs/decisions.md, int8 epilogue: no memset) */
    ep.row_comp = rows->comp + ri;
    ep.col_comp = cols->comp + cj;
    ep.row_add = has_ra ? rows->add + ri : NULL;
    ep.col_add = has_ca ? cols->add + cj : NULL;
    ep.alpha = job->alpha;
    ep.beta = job->beta;
    ep.mode = mode;
    ep.row_int = rows->sum64 + ri;
    ep.col_int = cols->sum64 + cj;
    ep.row_i32 = rows->sum32 + ri;
    ep.col_i32 = cols->sum32 + cj;
    ep.dst = job->dst;
    ep.row_scale = ep.col_scale = ep.row_bias = ep.col_bias = NULL;
    ep.row_scale_first = 0;
    if (job->dst != GK_DST_INT32) {
        ep.row_scale = job->row_scale + i0;
        ep.col_scale = job->col_scale + j0;
        ep.row_scale_first = job->row_scale_first;
        ep.row_bias = job->row_bias ? job->row_bias + i0 : NULL;
        ep.col_bias = job->col_bias ? job->col_bias + j0 : NULL;
    }
    return ep;
}

/* The few-row dot path (csrc/gemm_small.c): whether it takes this product (few rows, one exact K chunk, a
 * kernel for B's layout), and the product on up to max_threads threads (1: on the calling thread). */
int gk_int8_dot_applies(const int8_job_t *job);
gemmkit_status_t gk_int8_dot(const int8_job_t *job, int max_threads);

#endif
