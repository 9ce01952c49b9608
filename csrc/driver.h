/* The middle-end's interface: one problem description in the real domain of a microkernel (float or
 * double; complex problems are mapped onto it by the 1m packers), filled by the frontend per type. */
#ifndef GEMMKIT_DRIVER_H
#define GEMMKIT_DRIVER_H
#include "gemmkit_internal.h"

typedef struct gk_real_problem gk_real_problem_t;
/* Pack an mc x kc block of op(A) at (i0, k0), or a kc x nc block of op(B) at (k0, j0), into the
 * kernel's micro-panels; indices and sizes in the kernel's real domain. */
typedef void (*gk_pack_a_fn)(const gk_real_problem_t *p, int64_t i0, int64_t k0, int64_t mc, int64_t kc, void *dst);
typedef void (*gk_pack_b_fn)(const gk_real_problem_t *p, int64_t k0, int64_t j0, int64_t kc, int64_t nc, void *dst);

/* What differs between the element types that run on the real driver (as ruy's TrMulParams): how
 * the user's operands become the kernel's panels, and whether the kernel may read them in place. */
typedef struct {
    const char *name;          /* "sgemm", ... */
    int complex_1m;            /* 1: complex, N and K doubled in the real domain */
    gk_pack_a_fn pack_a;
    gk_pack_b_fn pack_b;
    /* Optional path for few rows of C outside the packed driver: returns 1 (and sets *st) when it
     * handled the problem, 0 when the packed driver should. */
    int (*few_rows)(const gk_real_problem_t *p, gemmkit_status_t *st);
} gk_real_type_t;

extern const gk_real_type_t gk_type_sgemm, gk_type_dgemm, gk_type_cgemm, gk_type_zgemm;

typedef union { float f; double d; } gk_real_scalar_t;

struct gk_real_problem {
    const gk_real_type_t *type;
    const gk_real_kernel_t *kern;
    gk_blocks_t blocks;
    const gk_small_t *small;
    int64_t M, N, K;                /* the kernel's real domain (complex: N and K doubled) */
    const void *A, *B;              /* as given, in elements of the caller's type */
    int64_t lda, ldb;
    int transa, transb, conja, conjb;
    void *C;                        /* real view, ldc real elements per row */
    int64_t ldc;
    gk_real_scalar_t alpha, beta;   /* in the kernel's type */
    const void *alpha_fold;         /* complex alpha applied while packing A (2 reals), or NULL */
    int threads;                    /* threads for this product; 0: as many as it is worth (gk_threads_for) */
};

/* C := alpha * op(A) op(B) + beta * C on the Goto/BLIS loops, threads splitting C (never K). */
gemmkit_status_t gk_real_gemm(const gk_real_problem_t *p);

/* The same for `batch` products whose A, B and C lie stride_a, stride_b, stride_c caller elements
 * apart (0: one operand shared by all; C's never overlap, checked by the frontend). Products too small
 * to split are spread over the threads whole, one thread each; larger ones run one after the other,
 * each on all threads. */
gemmkit_status_t gk_real_gemm_batch(const gk_real_problem_t *p, int64_t batch, int64_t stride_a,
                                    int64_t stride_b, int64_t stride_c);

/* Few rows of C (sgemm): the dot-product kernel or the GEMV, B streamed in place. Returns 1 and sets
 * *st when it handled the problem, 0 when the packed driver should. */
int gk_sgemm_few_rows(const gk_real_problem_t *p, gemmkit_status_t *st);

/* An int8 product after the frontend's checks: C := alpha * (op(A') - a_ofs) (op(B) - bo) + beta * C + co,
 * A' = A (u8) or A ^ 0x80 (s8 flipped to u8, flip_a = 1, a_ofs = ao + 128); M, N, K > 0, alpha != 0.
 * With dst != GK_DST_INT32 (fields after co; zero-initialised they mean int32 output, one matrix) C holds
 * floats of that type: C := scaled(acc) as gk_i8_epilogue_t's float formula, acc the exact sum (then
 * alpha = 1, beta = 0, co = 0). batch > 1: matrices b = 0 .. batch-1 at A + b * stride_a, B + b * stride_b,
 * C + b * stride_c and scales + b * stride_*_scale (elements; 0 = shared), in one call. */
typedef struct {
    int transa, transb, flip_a;
    int64_t M, N, K;
    double alpha, beta;
    const uint8_t *A; int64_t lda; int a_ofs;
    const int8_t *B; int64_t ldb; int bo;
    void *C; int64_t ldc;
    char offsetc; const int32_t *co;   /* 'F', 'C' or 'R' */
    int dst;                           /* GK_DST_* */
    const float *row_scale, *col_scale; /* M / N entries */
    int row_scale_first;
    const float *row_bias, *col_bias;  /* M / N entries; at most one, or neither */
    int64_t batch, stride_a, stride_b, stride_c, stride_row_scale, stride_col_scale;
    /* A prepacked op(B) (gk_int8_packed_weight_view; K within one exact chunk) in place of B, or NULL */
    const uint8_t *packed_b; const int32_t *packed_colsum;
} gk_int8_problem_t;

gemmkit_status_t gk_int8_gemm(const gk_int8_problem_t *p);

/* Prepacked int8 weights: op(B) (K x N) packed once into the NR-column panels (and column sums) of the
 * int8 kernel in use, for repeated products with one weight. Size in bytes of the packed form, 0 when
 * K is beyond one exact chunk (such weights are not packed). */
int64_t gk_int8_packed_weight_size(int64_t N, int64_t K);
gemmkit_status_t gk_int8_pack_weight(int transb, int64_t N, int64_t K, const int8_t *B, int64_t ldb, void *dst,
                                     int64_t bytes);
/* The panels and column sums of a packed weight made for the kernel in use with these N, K; 0 when
 * `packed` is not one (another kernel path, other sizes, too short). */
int gk_int8_packed_weight_view(const void *packed, int64_t bytes, int64_t N, int64_t K, const uint8_t **panels,
                               const int32_t **colsum);

#endif
