/* The middle-end's interface: the driver skeleton's hooks (gk_loops_t) and the problems the frontend fills
 * per family: real (a float/double kernel's domain; complex with N and K doubled), int8, wrap-around integers. */
#ifndef GEMMKIT_DRIVER_H
#define GEMMKIT_DRIVER_H
#include "config.h"
#include "threads.h"

/* ---- the driver skeleton (csrc/gemm_driver.c), one for every element family ---------------------
 * The Goto/BLIS loops jc (NC columns of C) -> pc (k blocks) -> ic (MC rows), the thread split of C
 * (never K), one packed B block shared by row-sliced threads, written once. A family (the real types in
 * csrc/gemm_real.c, int8 in csrc/gemm_int8.c) plugs in its packers and its macro-kernel (the NR / MR
 * loops over one packed block pair, edge tiles and epilogue) through gk_loops_t, as ruy's TrMulParams. */
typedef struct {
    int tid, nthreads;
    int64_t m0, m1, n0, n1;   /* this thread's block of C */
    int64_t mc_max, nc_max;   /* the largest blocks it packs */
    int b_group;              /* > 0: the macro-kernel packs B itself, this many NR panels at a time (gk_loops_t) */
    void *state;              /* the family's per-thread state (set by thread_begin) */
} gk_loop_thread_t;

typedef struct {
    int64_t M, N, K;          /* C is M x N; the k loop walks K */
    int mr, nr;
    int64_t mc, nc, kc;       /* cache blocks; kc is the k step */
    int threads;              /* threads for this product (>= 1) */
    int share_b;              /* the threads may pack one B block together when C splits into row slices */
    /* > 0: where a thread's rows are one block of MC and it packs B alone, the driver leaves B's block unpacked and
     * the macro-kernel packs b_group NR panels at a time into the front of the B buffer just before its row panels
     * run them (t->b_group): a small buffer the panels' stores find in L2, where a block of megabytes goes to L3 */
    int b_group;
    void *ctx;                /* the family's problem, first argument of every hook */
    /* Bytes of a packed block of mc rows of A / nc columns of B, kc deep (the family's extra data in it) */
    size_t (*a_bytes)(const void *ctx, int64_t mc, int64_t kc);
    size_t (*b_bytes)(const void *ctx, int64_t nc, int64_t kc);
    /* Per thread before its loops: its workspace in t->state; 0 when out of memory */
    int (*thread_begin)(void *ctx, gk_loop_thread_t *t);
    /* Columns [jc + j0, jc + j0 + w) of the B block (k0, jc, kc deep, nc wide) into the block at blk
     * (several threads may pack disjoint column panels of one block) */
    void (*pack_b)(void *ctx, int64_t k0, int64_t kc, int64_t jc, int64_t nc, int64_t j0, int64_t w, void *blk);
    /* Every thread once the block is complete: what its macro-kernel reads as B (blk, or a prepacked one) */
    const void *(*b_ready)(void *ctx, gk_loop_thread_t *t, int64_t k0, int64_t kc, int64_t jc, int64_t nc,
                           const void *blk);
    void (*pack_a)(void *ctx, gk_loop_thread_t *t, int64_t ic, int64_t k0, int64_t mc, int64_t kc, void *dst);
    /* C[ic : ic + mc, jc : jc + nc] from the packed blocks; first / last: the first / last k block */
    void (*macro)(void *ctx, gk_loop_thread_t *t, int64_t ic, int64_t jc, int64_t k0, int64_t mc, int64_t nc,
                  int64_t kc, const void *a, const void *b, int first, int last);
} gk_loops_t;

/* Runs the loops on L->threads threads; out of memory when a thread had no workspace. */
gemmkit_status_t gk_loops_run(const gk_loops_t *L);
/* The most columns (rows) one jc (ic) block of gk_loops_run takes for an .nc (.mc) of `block` (whole micro-panels
 * of `panel`): size per-block buffers by it. */
int64_t gk_loops_block_max(int64_t block, int panel);

/* `batch` independent products: with per_item > 1 threads worth one product, one after the other, each
 * item(ctx, i, 0) on all of them; else whole products spread over `spread` threads, item(ctx, i, 1). */
gemmkit_status_t gk_batch_run(int64_t batch, int per_item, int spread,
                              gemmkit_status_t (*item)(void *ctx, int64_t i, int threads), void *ctx);

typedef struct gk_real_problem gk_real_problem_t;
/* Pack an mc x kc block of op(A) at (i0, k0), or a kc x nc block of op(B) at (k0, j0), into the
 * kernel's micro-panels; indices and sizes in the kernel's real domain. */
typedef void (*gk_pack_a_fn)(const gk_real_problem_t *p, int64_t i0, int64_t k0, int64_t mc, int64_t kc, void *dst);
typedef void (*gk_pack_b_fn)(const gk_real_problem_t *p, int64_t k0, int64_t j0, int64_t kc, int64_t nc, void *dst);

/* What differs between the element types that run on the real driver (as ruy's TrMulParams): how
 * the user's operands become the kernel's panels, and whether the kernel may read them in place. */
enum { GK_WIDENED_F16 = 1, GK_WIDENED_BF16 = 2 }; /* the 16-bit operand types (gk_real_type_t.widened) */
typedef struct gk_real_type {
    const char *name;          /* "sgemm", ... */
    int is_complex;            /* 1: complex, N and K doubled in the real domain (1m or a native complex kernel) */
    gk_pack_a_fn pack_a;
    gk_pack_b_fn pack_b;
    /* Optional path for few rows or columns of C outside the packed driver: returns 1 (and sets *st) when it
     * handled the problem, 0 when the packed driver should. */
    int (*gemv_path)(const gk_real_problem_t *p, gemmkit_status_t *st);
    /* Types whose C is not the kernel's (float16 and bfloat16 on the float kernel; NULL for the others):
     * the driver widens each thread's C block into a float buffer before the k loop (only when beta
     * reads C) and narrows it, rounding once, after it. (i0, j0): the block's first element of C;
     * the float rows are `ld` apart. Such types never read an operand in place (no-pack path off). */
    void (*load_c)(const gk_real_problem_t *p, int64_t i0, int64_t j0, int64_t m, int64_t n, float *dst,
                   int64_t ld);
    void (*store_c)(const gk_real_problem_t *p, int64_t i0, int64_t j0, int64_t m, int64_t n, const float *src,
                    int64_t ld);
    int widened;               /* GK_WIDENED_*: A and B are narrower than the kernel's type (widened while packing),
                                * so they are never read in place even when C is the kernel's type; 0: not */
    /* widened types: n values of A or B (their 16-bit bits) into floats, for the tiny products that run widened
     * whole on the float kernel's tiny path (gk_real_tiny) */
    void (*widen_row)(const uint16_t *src, int64_t n, float *dst);
    /* a pair type's twin with C transposed, for few rows against a transposed B (the frontend swaps the operands
     * so that the big one is read as rows); NULL: none */
    const struct gk_real_type *c_transposed;
    int c_float;               /* 1: a C moved by load_c / store_c that is float all the same (transposed); 0: 16-bit */
} gk_real_type_t;

extern const gk_real_type_t gk_type_sgemm, gk_type_dgemm, gk_type_cgemm, gk_type_zgemm;
/* float16 (portable, by F16C where kernels/half_avx2.c is built, by NEON where kernels/half_neon.c is) and
 * bfloat16, on the float kernel */
extern const gk_real_type_t gk_type_hgemm, gk_type_bf16gemm;
/* bfloat16 operands, float C (oneDNN's gemm_bf16bf16f32; NumPy's matmul of bfloat16 arrays) */
extern const gk_real_type_t gk_type_bf16bf16f32;
/* bfloat16gemm and gemm_bf16bf16f32 on a pair kernel (the config's bf16 where the CPU runs it) */
extern const gk_real_type_t gk_type_bf16gemm_pairs, gk_type_bf16bf16f32_pairs;
/* ... with C transposed: C^T = op(B)^T op(A)^T, for few rows against a transposed B (gemm_types.c) */
extern const gk_real_type_t gk_type_bf16gemm_pairs_ct, gk_type_bf16bf16f32_pairs_ct;
#if GEMMKIT_X86
extern const gk_real_type_t gk_type_hgemm_f16c;
#endif
#if GEMMKIT_ARM
extern const gk_real_type_t gk_type_hgemm_neon;
#endif

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
    /* A bfloat16 pair kernel's product (kern->k_pair_group > 0): K counts k pairs, padded to the group; k_values
     * is the caller's K (the packers pad past it with zeros); subnormal_seen is set once a packer met a bfloat16
     * subnormal, after which the tiles run kern->ukernel_exact. 0 / NULL otherwise. */
    int64_t k_values;
    int *subnormal_seen;
    /* few rows / columns of a 16-bit product read in place (gk_half_gemv); NULL: none */
    const gk_half_gemv_t *half_gemv;
};

/* A type table's block packers over the real packers pack_a_<SFX> / pack_b_<SFX> (pack.h): indices are the
 * caller's, TS its element type, T the packed one. */
#define GK_REAL_PACKERS(SFX, TS, T)                                                                  \
    static void pack_a_##SFX##_block(const gk_real_problem_t *p, int64_t i0, int64_t k0, int64_t mc,   \
                                     int64_t kc, void *dst) {                                        \
        const TS *A = (const TS *)p->A + (p->transa ? k0 * p->lda + i0 : i0 * p->lda + k0);          \
        if (p->kern->pack_a_plain && !p->transa && !p->type->widened)                                \
            p->kern->pack_a_plain(A, p->lda, mc, kc, dst);                                           \
        else                                                                                         \
            gk_pack_a_##SFX(p->transa, A, p->lda, mc, kc, p->kern->mr, (T *)dst);                    \
    }                                                                                                \
    static void pack_b_##SFX##_block(const gk_real_problem_t *p, int64_t k0, int64_t j0, int64_t kc,   \
                                     int64_t nc, void *dst) {                                        \
        const TS *B = (const TS *)p->B + (p->transb ? j0 * p->ldb + k0 : k0 * p->ldb + j0);          \
        gk_pack_b_##SFX(p->transb, B, p->ldb, kc, nc, p->kern->nr, (T *)dst);                           \
    }

/* A 16-bit C's load_c / store_c (see gk_real_type_t) over row converters WIDEN(src, n, dst) and
 * NARROW(src, n, dst) between uint16_t bits and float. */
#define GK_HALF_C_CONVERTERS(SFX, WIDEN, NARROW)                                                     \
    static void load_c_##SFX(const gk_real_problem_t *p, int64_t i0, int64_t j0, int64_t m, int64_t n, \
                             float *dst, int64_t ld) {                                               \
        const uint16_t *C = (const uint16_t *)p->C + i0 * p->ldc + j0;                                \
        for (int64_t i = 0; i < m; i++) WIDEN(C + i * p->ldc, n, dst + i * ld);                        \
    }                                                                                                \
    static void store_c_##SFX(const gk_real_problem_t *p, int64_t i0, int64_t j0, int64_t m, int64_t n, \
                              const float *src, int64_t ld) {                                        \
        uint16_t *C = (uint16_t *)p->C + i0 * p->ldc + j0;                                            \
        for (int64_t i = 0; i < m; i++) NARROW(src + i * ld, n, C + i * p->ldc);                       \
    }

/* C := alpha * op(A) op(B) + beta * C on the Goto/BLIS loops, threads splitting C (never K). */
gemmkit_status_t gk_real_gemm(const gk_real_problem_t *p);

/* The same for `batch` products whose A, B and C lie stride_a, stride_b, stride_c caller elements
 * apart (0: one operand shared by all; C's never overlap, checked by the frontend). Products too small
 * to split are spread over the threads whole, one thread each; larger ones run one after the other,
 * each on all threads. */
gemmkit_status_t gk_real_gemm_batch(const gk_real_problem_t *p, int64_t batch, int64_t stride_a,
                                    int64_t stride_b, int64_t stride_c);

/* Products small enough for the kernel's `tiny` (real) or `tiny_complex` (1m types), computed whole without
 * packing or threads (csrc/gemm_small.c): returns 1 when it computed p, 0 when it does not fit. */
int gk_real_tiny_fits(const gk_real_problem_t *p);
/* The same for a widened type's product (16-bit operands) on a float kernel: widened whole into float tiles, then
 * the tiny path (gk_real_tiny does it). */
int gk_real_tiny_widened_fits(const gk_real_problem_t *p);
int gk_real_tiny(const gk_real_problem_t *p);
/* A plain product of one thread's worth by the kernel's `plain` loops (csrc/gemm_small.c): 1 when it computed p. */
int gk_real_plain(const gk_real_problem_t *p);

/* Few rows or few columns of C (sgemm, dgemm): the GEMV or dot-product kernels, the big operand streamed
 * in place (csrc/gemm_small.c). Returns 1 and sets *st when it handled the problem, 0 when the packed
 * driver should. */
int gk_real_gemv(const gk_real_problem_t *p, gemmkit_status_t *st);
/* The same for float16 / bfloat16 products (the types' gemv_path): the 16-bit big operand read in place by the
 * config's half_gemv kernels, widened as read; the small one widened into a float buffer, a 16-bit C through one. */
int gk_half_gemv(const gk_real_problem_t *p, gemmkit_status_t *st);

/* An int8 product after the frontend's checks: C := alpha * (op(A') - a_ofs) (op(B) - bo) + beta * C + co,
 * A' = A (u8) or A ^ 0x80 (s8 flipped to u8, flip_a = 1, a_ofs = ao + 128); M, N, K > 0, alpha != 0.
 * With dst != GK_DST_INT32 (fields after co; zero-initialised they mean int32 output, one matrix) C holds
 * floats of that type: C := scaled(acc) as gk_int8_epilogue_t's float formula, acc the exact sum (then
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
    /* The configuration the whole call runs on, read once by the frontend (NULL: the one in use): a packed
     * weight checked against its int8 kernel is then run by that kernel, whatever another thread's
     * gemmkit_set_arch does meanwhile. */
    const gk_config_t *cfg;
} gk_int8_problem_t;

gemmkit_status_t gk_int8_gemm(const gk_int8_problem_t *p);

/* An integer product with wrap-around arithmetic after the frontend's checks (M, N > 0; K >= 0):
 * P = sum_k op(A)[i][k] op(B)[k][j] modulo 2^bits, then by `scale`:
 *   GK_WRAP_SCALE_DOUBLE (ONNX's Gemm): C := cvt(fl(fl(double(P) * alpha) + fl(double(C) * beta))) (the beta
 *     term only when beta != 0), cvt as x86-64 converts float64 to the type (csrc/gemm_wrap.c);
 *   GK_WRAP_SCALE_MODULAR (NumPy's arithmetic): C := alpha_int * P + beta_int * C modulo 2^bits (C not read
 *     when beta_int == 0). GK_WRAP_I16 (int16 and uint16: the same bits) has only this one. */
typedef enum { GK_WRAP_I32, GK_WRAP_U32, GK_WRAP_I64, GK_WRAP_U64, GK_WRAP_I16 } gk_wrap_type_t;
enum { GK_WRAP_SCALE_DOUBLE = 0, GK_WRAP_SCALE_MODULAR = 1 };
typedef struct {
    gk_wrap_type_t type;
    int transa, transb;
    int64_t M, N, K;
    double alpha, beta;
    const void *A, *B;
    int64_t lda, ldb;
    void *C;
    int64_t ldc;
    int scale;                    /* GK_WRAP_SCALE_* */
    uint64_t alpha_int, beta_int; /* GK_WRAP_SCALE_MODULAR's factors, modulo 2^64 */
} gk_wrap_problem_t;

gemmkit_status_t gk_wrap_gemm(const gk_wrap_problem_t *p);

/* A bool product after the frontend's checks (M, N, K > 0; csrc/gemm_bool.c): C[i][j] := any_k (op(A)[i][k] and
 * op(B)[k][j]), or C[i][j] when beta; bytes, nonzero read as true, C written 0 / 1. */
typedef struct {
    int transa, transb;
    int64_t M, N, K;
    const uint8_t *A, *B;
    int64_t lda, ldb;
    uint8_t *C;
    int64_t ldc;
    int beta;
    const gk_bool_kernels_t *kern; /* the path's bool kernels; NULL: the portable ones */
} gk_bool_problem_t;
gemmkit_status_t gk_bool_gemm(const gk_bool_problem_t *p);
/* One build of csrc/wrap_template.h: per gk_wrap_type_t, a thread's block [m0, m1) x [n0, n1) of C
 * (0, or -1 when out of memory). */
typedef struct gk_wrap_kernels {
    const char *name;
    int (*block[5])(const gk_wrap_problem_t *p, int64_t m0, int64_t m1, int64_t n0, int64_t n1);
} gk_wrap_kernels_t;
extern const gk_wrap_kernels_t gk_wrap_kernels_generic;
#if GEMMKIT_X86
extern const gk_wrap_kernels_t gk_wrap_kernels_avx2;
#endif

/* Prepacked int8 weights: op(B) (K x N) packed once into the NR-column panels (and column sums) of the
 * int8 kernel in use, for repeated products with one weight. Size in bytes of the packed form, 0 when
 * K is beyond one exact chunk (such weights are not packed). */
int64_t gk_int8_packed_weight_size(int64_t N, int64_t K);
/* Whether an M-row product with depth K (op(B) = B^T when transb) is faster with B read in place (the dot
 * path) than with B prepacked. */
int gk_int8_b_in_place_beats_packed(int transb, int64_t M, int64_t K);
gemmkit_status_t gk_int8_pack_weight(int transb, int64_t N, int64_t K, const int8_t *B, int64_t ldb, void *dst,
                                     int64_t bytes);
/* The kernel path named in a packed weight's header (gemmkit_arch_name), NULL when `packed` is not one. */
const char *gk_int8_packed_weight_arch(const void *packed, int64_t bytes);
/* The panels and column sums of a packed weight made for int8 kernel `kern` with these N, K; 0 when
 * `packed` is not one (another kernel path, other sizes, too short). */
int gk_int8_packed_weight_view(const gk_int8_kernel_t *kern, const void *packed, int64_t bytes, int64_t N,
                               int64_t K, const uint8_t **panels, const int32_t **colsum);

#endif
