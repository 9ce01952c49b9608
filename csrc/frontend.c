/* The public gemmkit_* GEMM entry points: oneDNN's argument checks and the degenerate cases (M or
 * N = 0, K = 0, alpha = 0, beta scaling), written once for every type, then the middle-end. */
#include <stdlib.h>
#include <string.h>
#include "convert.h"
#include "driver.h"

/* trans: 'N' op(X) = X, 'T' X^T; complex types also 'C' X^H and 'R' conj(X) (conjugate, no transpose,
 * as BLIS's BLIS_CONJ_NO_TRANSPOSE: what a column-major caller's X^H is in row-major terms). */
static int is_trans(char t) { return t == 'T' || t == 't'; }
static int is_notrans(char t) { return t == 'N' || t == 'n' || t == 'R' || t == 'r'; }
static int is_conj(char t) { return t == 'C' || t == 'c' || t == 'R' || t == 'r'; }

/* oneDNN's rules (row-major): lda >= max(1, op(A) stored width), and so on; allow_conj admits 'C'. */
static gemmkit_status_t check_gemm_args(int allow_conj, char transa, char transb, int64_t M, int64_t N, int64_t K,
                                        const void *A, int64_t lda, const void *B, int64_t ldb, const void *C,
                                        int64_t ldc) {
    if (!(is_trans(transa) || is_notrans(transa) || (allow_conj && is_conj(transa)))) return gemmkit_invalid_arguments;
    if (!(is_trans(transb) || is_notrans(transb) || (allow_conj && is_conj(transb)))) return gemmkit_invalid_arguments;
    const int ta = !is_notrans(transa), tb = !is_notrans(transb);
    if (M < 0 || N < 0 || K < 0) return gemmkit_invalid_arguments;
    /* lda = 0 or ldb = 0: every stored row is the same row (a broadcast operand, read, never written) */
    if (lda != 0 && lda < GK_MAX((int64_t)1, ta ? M : K)) return gemmkit_invalid_arguments;
    if (ldb != 0 && ldb < GK_MAX((int64_t)1, tb ? K : N)) return gemmkit_invalid_arguments;
    if (lda < 0 || ldb < 0) return gemmkit_invalid_arguments;
    if (ldc < GK_MAX((int64_t)1, N)) return gemmkit_invalid_arguments;
    if (M > 0 && N > 0) {
        if (C == NULL) return gemmkit_invalid_arguments;
        if (K > 0 && (A == NULL || B == NULL)) return gemmkit_invalid_arguments;
    }
    return gemmkit_success;
}

/* C := beta * C over M x N elements of a real (cplx = 0) or complex (cplx = 1, beta = 2 values) type,
 * for each of `batch` matrices stride_c elements of the type apart; beta == 0 writes zeros without
 * reading C, beta == 1 touches nothing. */
#define DEFINE_SCALE_C(SFX, T)                                                                       \
    static void scale_c_##SFX(int64_t M, int64_t N, int cplx, const T *beta, T *C, int64_t ldc,      \
                              int64_t batch, int64_t stride_c) {                                     \
        const T br = beta[0], bi = cplx ? beta[1] : (T)0;                                            \
        const int64_t w = cplx ? 2 * N : N, ld = cplx ? 2 * ldc : ldc, sc = cplx ? 2 * stride_c : stride_c; \
        if (br == (T)1 && bi == (T)0) return;                                                        \
        for (int64_t b = 0; b < batch; b++)                                                          \
            for (int64_t i = 0; i < M; i++) {                                                        \
                T *c = C + b * sc + i * ld;                                                          \
                if (br == (T)0 && bi == (T)0) memset(c, 0, sizeof(T) * (size_t)w);                  \
                else if (bi == (T)0) for (int64_t j = 0; j < w; j++) c[j] *= br;                     \
                else for (int64_t j = 0; j < w; j += 2) {                                            \
                    const T re = c[j], im = c[j + 1];                                                \
                    c[j] = br * re - bi * im;                                                        \
                    c[j + 1] = br * im + bi * re;                                                    \
                }                                                                                    \
            }                                                                                        \
    }
DEFINE_SCALE_C(f32, float)
DEFINE_SCALE_C(f64, double)

/* A batch: batch >= 0, and the C matrices (M x N, ldc) must not share an element: either one lies
 * wholly past the other (|stride_c| >= (M - 1) * ldc + N) or their rows interleave (N <= |stride_c|
 * and batch * |stride_c| <= ldc, as in the transposed view of a stack). */
static gemmkit_status_t check_batch_args(int64_t M, int64_t N, int64_t ldc, int64_t batch, int64_t stride_c) {
    if (batch < 0) return gemmkit_invalid_arguments;
    if (batch <= 1 || M == 0 || N == 0) return gemmkit_success;
    if (stride_c == INT64_MIN) return gemmkit_success;
    const int64_t s = stride_c < 0 ? -stride_c : stride_c;
    if (M == 1 || ldc <= (INT64_MAX - N) / (M - 1)) {
        if (s >= (M - 1) * ldc + N) return gemmkit_success;
    } else {
        return gemmkit_invalid_arguments;  /* the span does not fit in 64 bits */
    }
    if (N <= s && s <= ldc / batch) return gemmkit_success;
    return gemmkit_invalid_arguments;
}

/* The problem for the real driver; sizes and C in the kernel's real domain (complex: N, K doubled). */
static gk_real_problem_t real_problem(const gk_real_type_t *type, const gk_real_kernel_t *kern,
                                      const gk_blocks_t *blocks, char transa, char transb, int64_t M, int64_t N,
                                      int64_t K, const void *A, int64_t lda, const void *B, int64_t ldb, void *C,
                                      int64_t ldc) {
    const int m = type->is_complex ? 2 : 1;
    gk_real_problem_t p;
    memset(&p, 0, sizeof(p));
    p.type = type;
    p.kern = kern;
    p.blocks = *blocks;
    p.small = &gk_config()->small;
    p.M = M; p.N = m * N; p.K = m * K;
    p.A = A; p.lda = lda; p.B = B; p.ldb = ldb;
    p.transa = !is_notrans(transa); p.transb = !is_notrans(transb);
    p.conja = is_conj(transa); p.conjb = is_conj(transb);
    p.C = C; p.ldc = m * ldc;
    return p;
}

/* Real types: every entry is a batch (the plain one a batch of one). */
#define DEFINE_REAL_GEMM(NAME, T, SFX, FIELD, KERN, BLOCKS, TYPE)                                    \
    gemmkit_status_t NAME##_batch(char transa, char transb, int64_t M, int64_t N, int64_t K, T alpha,  \
                                  const T *A, int64_t lda, int64_t stride_a, const T *B, int64_t ldb,  \
                                  int64_t stride_b, T beta, T *C, int64_t ldc, int64_t stride_c,       \
                                  int64_t batch) {                                                   \
        gemmkit_status_t st = check_gemm_args(0, transa, transb, M, N, K, A, lda, B, ldb, C, ldc);   \
        if (st == gemmkit_success) st = check_batch_args(M, N, ldc, batch, stride_c);                \
        if (st != gemmkit_success || M == 0 || N == 0 || batch == 0) return st;                      \
        if (K == 0 || alpha == (T)0) {                                                               \
            scale_c_##SFX(M, N, 0, &beta, C, ldc, batch, stride_c);                                  \
            return gemmkit_success;                                                                  \
        }                                                                                            \
        const gk_config_t *cfg = gk_config();                                                        \
        gk_real_problem_t p = real_problem(&TYPE, cfg->KERN, &cfg->BLOCKS, transa, transb, M, N, K, A, lda, \
                                           B, ldb, C, ldc);                                          \
        p.alpha.FIELD = alpha;                                                                       \
        p.beta.FIELD = beta;                                                                         \
        return gk_real_gemm_batch(&p, batch, stride_a, stride_b, stride_c);                          \
    }                                                                                                \
    gemmkit_status_t NAME(char transa, char transb, int64_t M, int64_t N, int64_t K, T alpha, const T *A, \
                          int64_t lda, const T *B, int64_t ldb, T beta, T *C, int64_t ldc) {          \
        return NAME##_batch(transa, transb, M, N, K, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1); \
    }
DEFINE_REAL_GEMM(gemmkit_sgemm, float, f32, f, sgemm, sgemm_blocks, gk_type_sgemm)
DEFINE_REAL_GEMM(gemmkit_dgemm, double, f64, d, dgemm, dgemm_blocks, gk_type_dgemm)

/* Complex on the config's native complex kernel (CKERN), else on the real one by 1m: a real alpha and a
 * real beta go to the kernel; a complex alpha is applied while packing A, a complex beta by scaling C
 * first (then the kernel adds with beta = 1). */
#define DEFINE_COMPLEX_GEMM(NAME, CT, T, SFX, FIELD, CKERN, KERN, BLOCKS, TYPE)                      \
    gemmkit_status_t NAME##_batch(char transa, char transb, int64_t M, int64_t N, int64_t K, CT alpha, \
                                  const CT *A, int64_t lda, int64_t stride_a, const CT *B, int64_t ldb, \
                                  int64_t stride_b, CT beta, CT *C, int64_t ldc, int64_t stride_c,     \
                                  int64_t batch) {                                                   \
        gemmkit_status_t st = check_gemm_args(1, transa, transb, M, N, K, A, lda, B, ldb, C, ldc);   \
        if (st == gemmkit_success) st = check_batch_args(M, N, ldc, batch, stride_c);                \
        if (st != gemmkit_success || M == 0 || N == 0 || batch == 0) return st;                      \
        const T b2[2] = {beta.re, beta.im}, a2[2] = {alpha.re, alpha.im};                            \
        if (K == 0 || (alpha.re == (T)0 && alpha.im == (T)0)) {                                      \
            scale_c_##SFX(M, N, 1, b2, (T *)C, ldc, batch, stride_c);                                \
            return gemmkit_success;                                                                  \
        }                                                                                            \
        const gk_config_t *cfg = gk_config();                                                        \
        gk_real_problem_t p = real_problem(&TYPE, cfg->CKERN ? cfg->CKERN : cfg->KERN, &cfg->BLOCKS, transa, \
                                           transb, M, N, K, A, lda, B, ldb, C, ldc);                 \
        if (beta.im != (T)0) {                                                                       \
            scale_c_##SFX(M, N, 1, b2, (T *)C, ldc, batch, stride_c);                                \
            p.beta.FIELD = (T)1;                                                                     \
        } else {                                                                                     \
            p.beta.FIELD = beta.re;                                                                  \
        }                                                                                            \
        if (alpha.im != (T)0) {                                                                      \
            p.alpha_fold = a2;                                                                       \
            p.alpha.FIELD = (T)1;                                                                    \
        } else {                                                                                     \
            p.alpha.FIELD = alpha.re;                                                                \
        }                                                                                            \
        return gk_real_gemm_batch(&p, batch, stride_a, stride_b, stride_c);                          \
    }                                                                                                \
    gemmkit_status_t NAME(char transa, char transb, int64_t M, int64_t N, int64_t K, CT alpha, const CT *A, \
                          int64_t lda, const CT *B, int64_t ldb, CT beta, CT *C, int64_t ldc) {       \
        return NAME##_batch(transa, transb, M, N, K, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1); \
    }
DEFINE_COMPLEX_GEMM(gemmkit_cgemm, gemmkit_complex64_t, float, f32, f, cgemm, sgemm, cgemm_blocks, gk_type_cgemm)
DEFINE_COMPLEX_GEMM(gemmkit_zgemm, gemmkit_complex128_t, double, f64, d, zgemm, dgemm, zgemm_blocks, gk_type_zgemm)

/* ---- float16 and bfloat16 on the float kernels ------------------------------------------------------- */

/* C := beta * C for a 16-bit C (K = 0 or alpha = 0) through the type's converters, in row chunks. */
static void scale_c_half(const gk_real_problem_t *p, float beta) {
    enum { CHUNK = 256 };
    float buf[CHUNK];
    if (beta == 1.0f) return;
    for (int64_t i = 0; i < p->M; i++)
        for (int64_t j = 0; j < p->N; j += CHUNK) {
            const int64_t n = GK_MIN((int64_t)CHUNK, p->N - j);
            if (beta == 0.0f) {
                memset(buf, 0, sizeof(buf));
            } else {
                p->type->load_c(p, i, j, 1, n, buf, CHUNK);
                for (int64_t q = 0; q < n; q++) buf[q] *= beta;
            }
            p->type->store_c(p, i, j, 1, n, buf, CHUNK);
        }
}

/* x W^T with bfloat16 operands on a pair kernel reading A's rows: computed as W x^T (C transposed) up to this many
 * rows of x, the pair kernel's few-columns blocking then (csrc/gemm_real.c) */
#define GK_BF16_SWAP_MAX_M 128

/* The NC block of a converted C: its float buffer holds a thread's rows x NC, so keep NC modest. */
#define GK_CONVERTED_C_NC 512

/* float16 / bfloat16 operands on the float kernel, C of the type's own (16-bit) or float: every entry is a
 * batch (the plain one a batch of one). */
static gemmkit_status_t gemm_half_batch(const gk_real_type_t *type, const gk_real_type_t *pair_type, char transa,
                                        char transb, int64_t M, int64_t N,
                                        int64_t K, float alpha, const uint16_t *A, int64_t lda, int64_t stride_a,
                                        const uint16_t *B, int64_t ldb, int64_t stride_b, float beta, void *C,
                                        int64_t ldc, int64_t stride_c, int64_t batch) {
    gemmkit_status_t st = check_gemm_args(0, transa, transb, M, N, K, A, lda, B, ldb, C, ldc);
    if (st == gemmkit_success) st = check_batch_args(M, N, ldc, batch, stride_c);
    if (st != gemmkit_success || M == 0 || N == 0 || batch == 0) return st;
    const gk_config_t *cfg = gk_config();
    gk_real_problem_t p = real_problem(type, cfg->sgemm, &cfg->sgemm_blocks, transa, transb, M, N, K, A, lda, B,
                                       ldb, C, ldc);
    const gk_real_kernel_t *pk = pair_type ? gk_bf16_kernel(cfg) : NULL;
    /* x W^T with few rows on the pair kernel: the big operand's rows read by it or packed in pairs, never widened */
    const int few_rows_wt = !is_notrans(transb) && M <= GK_BF16_SWAP_MAX_M;
    const int64_t wm = cfg->small.bf16_widen_min_m, wn = cfg->small.bf16_widen_min_n;
    if (wm > 0 && wn > 0 && M > wm && N > wn && !few_rows_wt) pk = NULL; /* the float kernel's rate is the higher */
    int subnormal_seen = 0;
    /* tiny products stay widened: the float kernel's tiny path takes them whole (gk_real_tiny), but for one tile of
     * a pair kernel that reads A as rows (its product outside the loops is the faster) */
    const int tiny = gk_real_tiny_widened_fits(&p) && !(pk && pk->a_rows && M <= pk->mr && N <= pk->nr);
    if (pk && K > 0 && !tiny) { /* bfloat16 hardware: k in pairs, padded to the kernel's group */
        const int64_t kg = GK_PAIR_K_MULTIPLE(pk), kp = ((K + 1) / 2 + kg - 1) / kg * kg;
        /* few rows against a transposed B (x W^T): C^T = op(B)^T op(A)^T, the big operand's rows read by the kernel
         * as they lie (gk_real_kernel_t.a_rows) and never packed whole for a handful of rows */
        const int swap = pk->a_rows && pair_type->c_transposed && few_rows_wt && M > cfg->small.gemv_max_m;
        if (swap) {
            p = real_problem(pair_type->c_transposed, pk, &cfg->bf16_blocks, 'N', is_notrans(transa) ? 'T' : 'N', N,
                             M, kp, B, ldb, A, lda, C, ldc);
            const int64_t s = stride_a;
            stride_a = stride_b;
            stride_b = s;
        } else {
            p = real_problem(pair_type, pk, &cfg->bf16_blocks, transa, transb, M, N, kp, A, lda, B, ldb, C, ldc);
        }
        p.k_values = K;
        p.subnormal_seen = &subnormal_seen;
    }
    p.half_gemv = cfg->half_gemv;
    if (K == 0 || alpha == 0.0f) {
        if (!type->store_c) { /* a float C */
            scale_c_f32(M, N, 0, &beta, (float *)C, ldc, batch, stride_c);
            return gemmkit_success;
        }
        for (int64_t i = 0; i < batch; i++) {
            p.C = (uint16_t *)C + i * stride_c;
            scale_c_half(&p, beta);
        }
        return gemmkit_success;
    }
    if (p.type->store_c) { /* C converted through a float buffer per thread: keep its NC block modest */
        const int64_t nr = p.kern->nr;
        p.blocks.nc = GK_MAX(nr, GK_MIN(p.blocks.nc, GK_CONVERTED_C_NC / nr * nr));
    }
    p.alpha.f = alpha;
    p.beta.f = beta;
    return gk_real_gemm_batch(&p, batch, stride_a, stride_b, stride_c);
}

static const gk_real_type_t *hgemm_type(void) { return gk_config()->hgemm; }

#define DEFINE_HALF_GEMM(NAME, TYPE, PAIR_TYPE, AB_T, C_T)                                                      \
    gemmkit_status_t NAME##_batch(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha, \
                                  const AB_T *A, int64_t lda, int64_t stride_a, const AB_T *B, int64_t ldb, \
                                  int64_t stride_b, float beta, C_T *C, int64_t ldc, int64_t stride_c,  \
                                  int64_t batch) {                                                   \
        return gemm_half_batch(TYPE, PAIR_TYPE, transa, transb, M, N, K, alpha, A, lda, stride_a, B, ldb, stride_b, beta, \
                               C, ldc, stride_c, batch);                                             \
    }                                                                                                \
    gemmkit_status_t NAME(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha, const AB_T *A, \
                          int64_t lda, const AB_T *B, int64_t ldb, float beta, C_T *C, int64_t ldc) {  \
        return NAME##_batch(transa, transb, M, N, K, alpha, A, lda, 0, B, ldb, 0, beta, C, ldc, 0, 1); \
    }
DEFINE_HALF_GEMM(gemmkit_hgemm, hgemm_type(), NULL, gemmkit_float16_t, gemmkit_float16_t)
DEFINE_HALF_GEMM(gemmkit_bf16gemm, &gk_type_bf16gemm, &gk_type_bf16gemm_pairs, gemmkit_bfloat16_t, gemmkit_bfloat16_t)
DEFINE_HALF_GEMM(gemmkit_gemm_bf16bf16f32, &gk_type_bf16bf16f32, &gk_type_bf16bf16f32_pairs, gemmkit_bfloat16_t, float)

/* ---- int32, int64, uint32, uint64 with wrap-around arithmetic ------------------------------------- */

#define DEFINE_WRAP_GEMM(NAME, T, TYPE)                                                              \
    gemmkit_status_t NAME(char transa, char transb, int64_t M, int64_t N, int64_t K, double alpha, const T *A, \
                          int64_t lda, const T *B, int64_t ldb, double beta, T *C, int64_t ldc) {     \
        gemmkit_status_t st = check_gemm_args(0, transa, transb, M, N, K, A, lda, B, ldb, C, ldc);   \
        if (st != gemmkit_success || M == 0 || N == 0) return st;                                    \
        const gk_wrap_problem_t p = {TYPE, is_trans(transa), is_trans(transb), M, N, K, alpha, beta, \
                                     A, B, lda, ldb, C, ldc, GK_WRAP_SCALE_DOUBLE, 0, 0};            \
        return gk_wrap_gemm(&p);                                                                     \
    }
DEFINE_WRAP_GEMM(gemmkit_gemm_i32, int32_t, GK_WRAP_I32)
DEFINE_WRAP_GEMM(gemmkit_gemm_i64, int64_t, GK_WRAP_I64)
DEFINE_WRAP_GEMM(gemmkit_gemm_u32, uint32_t, GK_WRAP_U32)
DEFINE_WRAP_GEMM(gemmkit_gemm_u64, uint64_t, GK_WRAP_U64)

/* ---- int8 ---------------------------------------------------------------------------------------- */

/* K == 0 or alpha == 0: C := beta * C + co, with the epilogue's rounding and saturation. */
static void int8_no_product(const gk_int8_problem_t *p) {
    for (int64_t i = 0; i < p->M; i++)
        for (int64_t j = 0; j < p->N; j++) {
            int32_t *c = (int32_t *)p->C + i * p->ldc + j;
            double v = 0.0;
            if (p->beta != 0.0) v = p->beta * (double)*c;
            double add = p->offsetc == 'F' ? p->co[0] : p->offsetc == 'C' ? p->co[i] : p->co[j];
            *c = gk_round_sat_i32(v + add);
        }
}

static gemmkit_status_t gemm_int8(char transa, char transb, char offsetc, int64_t M, int64_t N, int64_t K,
                                  float alpha, const uint8_t *A, int64_t lda, int a_ofs, int flip_a,
                                  const int8_t *B, int64_t ldb, int bo, float beta, int32_t *C, int64_t ldc,
                                  const int32_t *co) {
    gemmkit_status_t st = check_gemm_args(0, transa, transb, M, N, K, A, lda, B, ldb, C, ldc);
    if (st != gemmkit_success) return st;
    const char oc = (char)(offsetc >= 'a' && offsetc <= 'z' ? offsetc - 32 : offsetc);
    if (oc != 'F' && oc != 'C' && oc != 'R') return gemmkit_invalid_arguments;
    if (M > 0 && N > 0 && co == NULL) return gemmkit_invalid_arguments;
    if (M == 0 || N == 0) return gemmkit_success;
    const gk_int8_problem_t p = {is_trans(transa), is_trans(transb), flip_a, M, N, K, alpha, beta,
                                 A, lda, a_ofs, B, ldb, bo, C, ldc, oc, co};
    if (K == 0 || alpha == 0.0f) {
        int8_no_product(&p);
        return gemmkit_success;
    }
    return gk_int8_gemm(&p);
}

gemmkit_status_t gemmkit_gemm_u8s8s32(char transa, char transb, char offsetc, int64_t M, int64_t N,
                                      int64_t K, float alpha, const uint8_t *A, int64_t lda, uint8_t ao,
                                      const int8_t *B, int64_t ldb, int8_t bo, float beta, int32_t *C,
                                      int64_t ldc, const int32_t *co) {
    return gemm_int8(transa, transb, offsetc, M, N, K, alpha, A, lda, (int)ao, 0, B, ldb, (int)bo, beta, C,
                     ldc, co);
}

gemmkit_status_t gemmkit_gemm_s8s8s32(char transa, char transb, char offsetc, int64_t M, int64_t N,
                                      int64_t K, float alpha, const int8_t *A, int64_t lda, int8_t ao,
                                      const int8_t *B, int64_t ldb, int8_t bo, float beta, int32_t *C,
                                      int64_t ldc, const int32_t *co) {
    /* A' = A + 128 as unsigned bytes, so (A - ao) = (A' - (ao + 128)). */
    return gemm_int8(transa, transb, offsetc, M, N, K, alpha, (const uint8_t *)A, lda, (int)ao + 128, 1, B, ldb,
                     (int)bo, beta, C, ldc, co);
}

/* ---- NumPy's integer matmul: every integer type and bool, modulo 2^bits --------------------------- */

/* Element bytes of a GEMMKIT_INT_* type, 0 for none. */
static int int_type_size(int type) {
    switch (type) {
    case GEMMKIT_INT_BOOL: case GEMMKIT_INT_S8: case GEMMKIT_INT_U8: return 1;
    case GEMMKIT_INT_S16: case GEMMKIT_INT_U16: return 2;
    case GEMMKIT_INT_S32: case GEMMKIT_INT_U32: return 4;
    case GEMMKIT_INT_S64: case GEMMKIT_INT_U64: return 8;
    default: return 0;
    }
}

/* int8 and uint8 on the exact int8 kernels: A's bytes read unsigned and B's signed give every product right
 * modulo 2^8. K goes in chunks whose int32 sums cannot saturate (255 * 128 * 2^16 < 2^31); a block of rows
 * at a time sums into a scratch int32 matrix, then C := alpha S + beta C modulo 2^8. */
enum { INT8_MODULAR_K_CHUNK = 1 << 16, INT8_MODULAR_SCRATCH = 32 << 20 };
static gemmkit_status_t int8_modular(int ta, int tb, int64_t M, int64_t N, int64_t K, uint8_t alpha,
                                     const uint8_t *A, int64_t lda, const int8_t *B, int64_t ldb, uint8_t beta,
                                     uint8_t *C, int64_t ldc, int32_t *scratch, int64_t mb) {
    static const int32_t zero = 0;
    for (int64_t i0 = 0; i0 < M; i0 += mb) {
        const int64_t m = GK_MIN(mb, M - i0);
        for (int64_t k0 = 0; k0 < K; k0 += INT8_MODULAR_K_CHUNK) {
            const int64_t kc = GK_MIN((int64_t)INT8_MODULAR_K_CHUNK, K - k0);
            const gk_int8_problem_t p = {ta, tb, 0, m, N, kc, 1.0f, 0.0f,
                                         ta ? A + k0 * lda + i0 : A + i0 * lda + k0, lda, 0,
                                         tb ? B + k0 : B + k0 * ldb, ldb, 0, scratch, N, 'F', &zero};
            gemmkit_status_t st = gk_int8_gemm(&p);
            if (st != gemmkit_success) return st;
            for (int64_t i = 0; i < m; i++) {
                uint8_t *c = C + (i0 + i) * ldc;
                const int32_t *s = scratch + i * N;
                if (k0 > 0) {
                    for (int64_t j = 0; j < N; j++) c[j] = (uint8_t)(c[j] + alpha * (uint32_t)s[j]);
                } else if (beta == 0) {
                    for (int64_t j = 0; j < N; j++) c[j] = (uint8_t)(alpha * (uint32_t)s[j]);
                } else {
                    for (int64_t j = 0; j < N; j++) c[j] = (uint8_t)(alpha * (uint32_t)s[j] + beta * (uint32_t)c[j]);
                }
            }
        }
    }
    return gemmkit_success;
}

/* K == 0: C := beta C modulo 2^bits (bool: C and beta). */
static void int_scale_c(int type, int size, int64_t M, int64_t N, uint64_t beta, char *C, int64_t ldc) {
    for (int64_t i = 0; i < M; i++) {
        char *c = C + i * ldc * size;
        if (beta == 0) {
            memset(c, 0, (size_t)(N * size));
            continue;
        }
        for (int64_t j = 0; j < N; j++) {
            if (type == GEMMKIT_INT_BOOL) c[j] = (char)(c[j] != 0);
            else if (size == 1) ((uint8_t *)c)[j] = (uint8_t)(beta * ((uint8_t *)c)[j]);
            else if (size == 2) ((uint16_t *)c)[j] = (uint16_t)(beta * ((uint16_t *)c)[j]);
            else if (size == 4) ((uint32_t *)c)[j] = (uint32_t)(beta * ((uint32_t *)c)[j]);
            else ((uint64_t *)c)[j] = beta * ((uint64_t *)c)[j];
        }
    }
}

gemmkit_status_t gemmkit_gemm_int_batch(int type, char transa, char transb, int64_t M, int64_t N, int64_t K,
                                        int64_t alpha, const void *A, int64_t lda, int64_t stride_a, const void *B,
                                        int64_t ldb, int64_t stride_b, int64_t beta, void *C, int64_t ldc,
                                        int64_t stride_c, int64_t batch) {
    const int size = int_type_size(type);
    if (size == 0) return gemmkit_invalid_arguments;
    gemmkit_status_t st = check_gemm_args(0, transa, transb, M, N, K, A, lda, B, ldb, C, ldc);
    if (st == gemmkit_success) st = check_batch_args(M, N, ldc, batch, stride_c);
    if (st != gemmkit_success || M == 0 || N == 0 || batch == 0) return st;
    const int ta = is_trans(transa), tb = is_trans(transb);
    /* modulo 2^bits only the factors' low bits count; bool's are truth values */
    const uint64_t al = type == GEMMKIT_INT_BOOL ? alpha != 0 : (uint64_t)alpha;
    const uint64_t be = type == GEMMKIT_INT_BOOL ? beta != 0 : (uint64_t)beta;
    const uint64_t mask = size == 8 ? ~(uint64_t)0 : ((uint64_t)1 << (8 * size)) - 1;
    if (K == 0 || (al & mask) == 0) {
        for (int64_t b = 0; b < batch; b++)
            int_scale_c(type, size, M, N, be & mask, (char *)C + b * stride_c * size, ldc);
        return gemmkit_success;
    }
    if (type == GEMMKIT_INT_BOOL) {
        for (int64_t b = 0; b < batch && st == gemmkit_success; b++) {
            const gk_bool_problem_t p = {ta, tb, M, N, K, (const uint8_t *)A + b * stride_a,
                                         (const uint8_t *)B + b * stride_b, lda, ldb, (uint8_t *)C + b * stride_c,
                                         ldc, be != 0, gk_config()->bool_kernels};
            st = gk_bool_gemm(&p);
        }
        return st;
    }
    if (size == 1) {
        const int64_t mb = GK_MAX((int64_t)1, GK_MIN(M, INT8_MODULAR_SCRATCH / 4 / N));
        int32_t *scratch = (int32_t *)malloc(sizeof(int32_t) * (size_t)(mb * N));
        if (scratch == NULL) return gemmkit_out_of_memory;
        for (int64_t b = 0; b < batch && st == gemmkit_success; b++)
            st = int8_modular(ta, tb, M, N, K, (uint8_t)al,
                              (const uint8_t *)A + b * stride_a, lda, (const int8_t *)B + b * stride_b, ldb,
                              (uint8_t)be, (uint8_t *)C + b * stride_c, ldc, scratch, mb);
        free(scratch);
        return st;
    }
    const gk_wrap_type_t wt = size == 2 ? GK_WRAP_I16
                              : size == 4 ? (type == GEMMKIT_INT_S32 ? GK_WRAP_I32 : GK_WRAP_U32)
                                          : (type == GEMMKIT_INT_S64 ? GK_WRAP_I64 : GK_WRAP_U64);
    for (int64_t b = 0; b < batch && st == gemmkit_success; b++) {
        const gk_wrap_problem_t p = {wt, ta, tb, M, N, K, 1.0, 0.0,
                                     (const char *)A + b * stride_a * size, (const char *)B + b * stride_b * size,
                                     lda, ldb, (char *)C + b * stride_c * size, ldc, GK_WRAP_SCALE_MODULAR, al, be};
        st = gk_wrap_gemm(&p);
    }
    return st;
}

/* ---- per-token quantized int8 product with float output (gemmkit_gemm_s8s8_per_token) ------------ */

static int per_token_out_type(int out_type) {
    return out_type == GEMMKIT_OUT_FLOAT32 ? GK_DST_FLOAT32 : out_type == GEMMKIT_OUT_FLOAT16 ? GK_DST_FLOAT16
           : out_type == GEMMKIT_OUT_BFLOAT16 ? GK_DST_BFLOAT16 : -1;
}

/* K == 0: every sum is 0, and the epilogue still runs (0 * scales, plus bias: IEEE rules for NaN/Inf). */
static void per_token_empty_sums(const gk_int8_problem_t *p) {
    static const int64_t zeros[64] = {0};
    static const double zero_terms[64] = {0};
    gk_int8_epilogue_t ep;
    memset(&ep, 0, sizeof(ep));
    ep.row_comp = zero_terms;
    ep.col_comp = zero_terms;
    ep.dst = p->dst;
    ep.row_scale_first = p->row_scale_first;
    const int size = gk_dst_size(p->dst);
    for (int64_t b = 0; b < p->batch; b++)
        for (int64_t i = 0; i < p->M; i++)
            for (int64_t j = 0; j < p->N; j += 64) {
                ep.row_scale = p->row_scale + b * p->stride_row_scale + i;
                ep.col_scale = p->col_scale + b * p->stride_col_scale + j;
                ep.row_bias = p->row_bias ? p->row_bias + i : NULL;
                ep.col_bias = p->col_bias ? p->col_bias + j : NULL;
                char *c = (char *)p->C + (size_t)(b * p->stride_c + i * p->ldc + j) * (size_t)size;
                gk_int8_epilogue_scalar(1, GK_MIN((int64_t)64, p->N - j), zeros, 64, c, p->ldc, &ep);
            }
}

/* Both per-token entries: with `packed` (then layout_c is 'R' and B is unused) op(B) is a prepacked weight. */
static gemmkit_status_t per_token(char transa, char transb, char layout_c, int out_type, int64_t batch, int64_t M,
                                  int64_t N, int64_t K, const int8_t *A, int64_t lda, int64_t stride_a,
                                  const int8_t *B, int64_t ldb, int64_t stride_b, const void *packed,
                                  int64_t packed_bytes, const float *deq_scale, const float *token_scale,
                                  int64_t stride_token_scale, const float *bias, void *C, int64_t ldc,
                                  int64_t stride_c) {
    const int dst = per_token_out_type(out_type);
    const int c_rows = layout_c == 'R' || layout_c == 'r', c_cols = layout_c == 'C' || layout_c == 'c';
    if (dst < 0 || !(c_rows || c_cols) || batch < 0) return gemmkit_invalid_arguments;
    if (stride_a < 0 || stride_b < 0 || stride_c < 0 || stride_token_scale < 0) return gemmkit_invalid_arguments;
    /* Column-major C is the row-major N x M C^T = op(B)^T op(A)^T: the operands swap, and so do the roles
     * of rows and columns in the epilogue (deq_scale, applied first, then runs along C^T's rows). */
    gemmkit_status_t st = c_rows ? check_gemm_args(0, transa, transb, M, N, K, A, lda, B, ldb, C, ldc)
                                 : check_gemm_args(0, is_trans(transb) ? 'N' : 'T', is_trans(transa) ? 'N' : 'T', N,
                                                   M, K, B, ldb, A, lda, C, ldc);
    if (st != gemmkit_success) return st;
    if (batch == 0 || M == 0 || N == 0) return gemmkit_success;
    if (deq_scale == NULL || token_scale == NULL) return gemmkit_invalid_arguments;
    if (batch > 1 && stride_c == 0) return gemmkit_invalid_arguments; /* the matrices would overlap */
    static const int32_t zero_offset = 0;
    gk_int8_problem_t p;
    memset(&p, 0, sizeof(p));
    p.flip_a = 1;
    p.alpha = 1.0; p.beta = 0.0;
    p.a_ofs = 128; p.bo = 0;            /* A' = A + 128 as unsigned bytes, compensated exactly */
    p.C = C; p.ldc = ldc;
    p.offsetc = 'F'; p.co = &zero_offset;
    p.dst = dst;
    p.K = K;
    p.batch = batch;
    p.stride_c = stride_c;
    if (c_rows) {
        p.transa = is_trans(transa); p.transb = is_trans(transb);
        p.M = M; p.N = N;
        p.A = (const uint8_t *)A; p.lda = lda; p.stride_a = stride_a;
        p.B = B; p.ldb = ldb; p.stride_b = stride_b;
        p.row_scale = token_scale; p.stride_row_scale = stride_token_scale;
        p.col_scale = deq_scale;
        p.row_scale_first = 0;
        p.col_bias = bias;
    } else {
        p.transa = !is_trans(transb); p.transb = !is_trans(transa);
        p.M = N; p.N = M;
        p.A = (const uint8_t *)B; p.lda = ldb; p.stride_a = stride_b;
        p.B = A; p.ldb = lda; p.stride_b = stride_a;
        p.row_scale = deq_scale;
        p.col_scale = token_scale; p.stride_col_scale = stride_token_scale;
        p.row_scale_first = 1;
        p.row_bias = bias;
    }
    if (K == 0) {
        per_token_empty_sums(&p);
        return gemmkit_success;
    }
    if (packed != NULL) {
        p.cfg = gk_config(); /* the weight is checked against, and run by, this configuration's kernel */
        if (!c_rows || !gk_int8_packed_weight_view(gk_int8_kernel_for(p.cfg, K), packed, packed_bytes, N, K, &p.packed_b,
                                                   &p.packed_colsum))
            return gemmkit_invalid_arguments;
        p.stride_b = 0;
    }
    return gk_int8_gemm(&p);
}

gemmkit_status_t gemmkit_gemm_s8s8_per_token(char transa, char transb, char layout_c, int out_type, int64_t batch,
                                             int64_t M, int64_t N, int64_t K, const int8_t *A, int64_t lda,
                                             int64_t stride_a, const int8_t *B, int64_t ldb, int64_t stride_b,
                                             const float *deq_scale, const float *token_scale,
                                             int64_t stride_token_scale, const float *bias, void *C, int64_t ldc,
                                             int64_t stride_c) {
    return per_token(transa, transb, layout_c, out_type, batch, M, N, K, A, lda, stride_a, B, ldb, stride_b, NULL, 0,
                     deq_scale, token_scale, stride_token_scale, bias, C, ldc, stride_c);
}

int64_t gemmkit_s8s8_packed_weight_size(int64_t N, int64_t K) { return gk_int8_packed_weight_size(N, K); }

const char *gemmkit_s8s8_packed_weight_arch(const void *packed, int64_t packed_bytes) {
    return gk_int8_packed_weight_arch(packed, packed_bytes);
}

int gemmkit_s8s8_reads_weight_in_place(char transb, int64_t M, int64_t K) {
    if (!(is_trans(transb) || is_notrans(transb)) || M < 0 || K < 0) return 0;
    return gk_int8_b_in_place_beats_packed(is_trans(transb), M, K);
}

gemmkit_status_t gemmkit_s8s8_pack_weight(char transb, int64_t N, int64_t K, const int8_t *B, int64_t ldb,
                                          void *packed, int64_t packed_bytes) {
    if (!(is_trans(transb) || is_notrans(transb)) || ldb < GK_MAX((int64_t)1, is_trans(transb) ? K : N))
        return gemmkit_invalid_arguments;
    return gk_int8_pack_weight(is_trans(transb), N, K, B, ldb, packed, packed_bytes);
}

gemmkit_status_t gemmkit_gemm_s8s8_per_token_packed(char transa, int out_type, int64_t batch, int64_t M, int64_t N,
                                                    int64_t K, const int8_t *A, int64_t lda, int64_t stride_a,
                                                    const void *packed_weight, int64_t packed_bytes,
                                                    const float *deq_scale, const float *token_scale,
                                                    int64_t stride_token_scale, const float *bias, void *C,
                                                    int64_t ldc, int64_t stride_c) {
    /* B's place in the argument checks is taken by the packed weight (plain K x N, ldb = N). */
    return per_token(transa, 'N', 'R', out_type, batch, M, N, K, A, lda, stride_a, (const int8_t *)packed_weight,
                     GK_MAX((int64_t)1, N), 0, packed_weight, packed_bytes, deq_scale, token_scale,
                     stride_token_scale, bias, C, ldc, stride_c);
}

/* The per-token epilogue alone, on exact int32 sums made elsewhere (gemmkit.dask accumulates a block's
 * K blocks with gemmkit_gemm_s8s8s32 and applies the scales once): the same scalar code, hence the same
 * bits, as gemmkit_gemm_s8s8_per_token's epilogue. */
gemmkit_status_t gemmkit_per_token_scale_int32(int out_type, int64_t M, int64_t N, const int32_t *acc, int64_t ld_acc,
                                               const float *deq_scale, const float *token_scale, const float *bias,
                                               void *C, int64_t ldc) {
    const int dst = out_type == GEMMKIT_OUT_FLOAT32 ? GK_DST_FLOAT32
                  : out_type == GEMMKIT_OUT_FLOAT16 ? GK_DST_FLOAT16
                  : out_type == GEMMKIT_OUT_BFLOAT16 ? GK_DST_BFLOAT16 : -1;
    if (dst < 0 || M < 0 || N < 0 || ld_acc < GK_MAX((int64_t)1, N) || ldc < GK_MAX((int64_t)1, N))
        return gemmkit_invalid_arguments;
    if (M == 0 || N == 0) return gemmkit_success;
    if (!acc || !deq_scale || !token_scale || !C) return gemmkit_invalid_arguments;
    int64_t *row = (int64_t *)malloc(sizeof(int64_t) * (size_t)N);
    double *zeros = (double *)calloc((size_t)N + 1, sizeof(double));
    if (!row || !zeros) {
        free(row);
        free(zeros);
        return gemmkit_out_of_memory;
    }
    const size_t es = (size_t)gk_dst_size(dst);
    for (int64_t i = 0; i < M; i++) {
        for (int64_t j = 0; j < N; j++) row[j] = acc[i * ld_acc + j];
        gk_int8_epilogue_t ep;
        memset(&ep, 0, sizeof(ep));
        ep.row_comp = zeros; ep.col_comp = zeros; ep.alpha = 1.0; ep.mode = GK_EP_DOUBLE; ep.dst = dst;
        ep.row_scale = token_scale + i; ep.col_scale = deq_scale; ep.col_bias = bias;
        gk_int8_epilogue_scalar(1, N, row, N, (char *)C + (size_t)(i * ldc) * es, ldc, &ep);
    }
    free(row);
    free(zeros);
    return gemmkit_success;
}
