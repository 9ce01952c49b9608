/* The public gemmkit_* GEMM entry points: oneDNN's argument checks and the degenerate cases (M or
 * N = 0, K = 0, alpha = 0, beta scaling), written once for every type, then the middle-end. */
#include <string.h>
#include "driver.h"

static int is_trans(char t) { return t == 'T' || t == 't'; }
static int is_notrans(char t) { return t == 'N' || t == 'n'; }
static int is_conj(char t) { return t == 'C' || t == 'c'; }

/* oneDNN's rules (row-major): lda >= max(1, op(A) stored width), and so on; allow_conj admits 'C'. */
static gemmkit_status_t check_gemm_args(int allow_conj, char transa, char transb, int64_t M, int64_t N, int64_t K,
                                        const void *A, int64_t lda, const void *B, int64_t ldb, const void *C,
                                        int64_t ldc) {
    if (!(is_trans(transa) || is_notrans(transa) || (allow_conj && is_conj(transa)))) return gemmkit_invalid_arguments;
    if (!(is_trans(transb) || is_notrans(transb) || (allow_conj && is_conj(transb)))) return gemmkit_invalid_arguments;
    const int ta = !is_notrans(transa), tb = !is_notrans(transb);
    if (M < 0 || N < 0 || K < 0) return gemmkit_invalid_arguments;
    if (lda < GK_MAX((int64_t)1, ta ? M : K)) return gemmkit_invalid_arguments;
    if (ldb < GK_MAX((int64_t)1, tb ? K : N)) return gemmkit_invalid_arguments;
    if (ldc < GK_MAX((int64_t)1, N)) return gemmkit_invalid_arguments;
    if (M > 0 && N > 0) {
        if (C == NULL) return gemmkit_invalid_arguments;
        if (K > 0 && (A == NULL || B == NULL)) return gemmkit_invalid_arguments;
    }
    return gemmkit_success;
}

/* C := beta * C over M x N elements of a real (cplx = 0) or complex (cplx = 1, beta = 2 values) type;
 * beta == 0 writes zeros without reading C, beta == 1 touches nothing. */
#define DEFINE_SCALE_C(SFX, T)                                                                       \
    static void scale_c_##SFX(int64_t M, int64_t N, int cplx, const T *beta, T *C, int64_t ldc) {    \
        const T br = beta[0], bi = cplx ? beta[1] : (T)0;                                            \
        const int64_t w = cplx ? 2 * N : N, ld = cplx ? 2 * ldc : ldc;                               \
        if (br == (T)1 && bi == (T)0) return;                                                        \
        for (int64_t i = 0; i < M; i++) {                                                            \
            T *c = C + i * ld;                                                                       \
            if (br == (T)0 && bi == (T)0) memset(c, 0, sizeof(T) * (size_t)w);                      \
            else if (bi == (T)0) for (int64_t j = 0; j < w; j++) c[j] *= br;                         \
            else for (int64_t j = 0; j < w; j += 2) {                                                \
                const T re = c[j], im = c[j + 1];                                                    \
                c[j] = br * re - bi * im;                                                            \
                c[j + 1] = br * im + bi * re;                                                        \
            }                                                                                        \
        }                                                                                            \
    }
DEFINE_SCALE_C(f32, float)
DEFINE_SCALE_C(f64, double)

/* The problem for the real driver; sizes and C in the kernel's real domain (complex: N, K doubled). */
static gk_real_problem_t real_problem(const gk_real_type_t *type, const gk_real_kernel_t *kern,
                                      const gk_blocks_t *blocks, char transa, char transb, int64_t M, int64_t N,
                                      int64_t K, const void *A, int64_t lda, const void *B, int64_t ldb, void *C,
                                      int64_t ldc) {
    const int m = type->complex_1m ? 2 : 1;
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

gemmkit_status_t gemmkit_sgemm(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha,
                               const float *A, int64_t lda, const float *B, int64_t ldb, float beta,
                               float *C, int64_t ldc) {
    gemmkit_status_t st = check_gemm_args(0, transa, transb, M, N, K, A, lda, B, ldb, C, ldc);
    if (st != gemmkit_success || M == 0 || N == 0) return st;
    if (K == 0 || alpha == 0.0f) {
        scale_c_f32(M, N, 0, &beta, C, ldc);
        return gemmkit_success;
    }
    const gk_config_t *cfg = gk_config();
    gk_real_problem_t p = real_problem(&gk_type_sgemm, cfg->sgemm, &cfg->sgemm_blocks, transa, transb, M, N, K,
                                       A, lda, B, ldb, C, ldc);
    p.alpha.f = alpha;
    p.beta.f = beta;
    if (gk_sgemm_few_rows(&p, &st)) return st;
    return gk_real_gemm(&p);
}

gemmkit_status_t gemmkit_dgemm(char transa, char transb, int64_t M, int64_t N, int64_t K, double alpha,
                               const double *A, int64_t lda, const double *B, int64_t ldb, double beta,
                               double *C, int64_t ldc) {
    gemmkit_status_t st = check_gemm_args(0, transa, transb, M, N, K, A, lda, B, ldb, C, ldc);
    if (st != gemmkit_success || M == 0 || N == 0) return st;
    if (K == 0 || alpha == 0.0) {
        scale_c_f64(M, N, 0, &beta, C, ldc);
        return gemmkit_success;
    }
    const gk_config_t *cfg = gk_config();
    gk_real_problem_t p = real_problem(&gk_type_dgemm, cfg->dgemm, &cfg->dgemm_blocks, transa, transb, M, N, K,
                                       A, lda, B, ldb, C, ldc);
    p.alpha.d = alpha;
    p.beta.d = beta;
    return gk_real_gemm(&p);
}

/* Complex on the real kernels (1m): a real alpha and a real beta go to the kernel; a complex alpha is
 * applied while packing A, a complex beta by scaling C first (then the kernel adds with beta = 1). */
#define DEFINE_COMPLEX_GEMM(NAME, CT, T, SFX, FIELD, KERN, BLOCKS, TYPE)                             \
    gemmkit_status_t NAME(char transa, char transb, int64_t M, int64_t N, int64_t K, CT alpha, const CT *A, \
                          int64_t lda, const CT *B, int64_t ldb, CT beta, CT *C, int64_t ldc) {       \
        gemmkit_status_t st = check_gemm_args(1, transa, transb, M, N, K, A, lda, B, ldb, C, ldc);   \
        if (st != gemmkit_success || M == 0 || N == 0) return st;                                    \
        const T b2[2] = {beta.re, beta.im}, a2[2] = {alpha.re, alpha.im};                            \
        if (K == 0 || (alpha.re == (T)0 && alpha.im == (T)0)) {                                      \
            scale_c_##SFX(M, N, 1, b2, (T *)C, ldc);                                                 \
            return gemmkit_success;                                                                  \
        }                                                                                            \
        const gk_config_t *cfg = gk_config();                                                        \
        gk_real_problem_t p = real_problem(&TYPE, cfg->KERN, &cfg->BLOCKS, transa, transb, M, N, K, A, lda, \
                                           B, ldb, C, ldc);                                          \
        if (beta.im != (T)0) {                                                                       \
            scale_c_##SFX(M, N, 1, b2, (T *)C, ldc);                                                 \
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
        return gk_real_gemm(&p);                                                                     \
    }
DEFINE_COMPLEX_GEMM(gemmkit_cgemm, gemmkit_complex64_t, float, f32, f, sgemm, cgemm_blocks, gk_type_cgemm)
DEFINE_COMPLEX_GEMM(gemmkit_zgemm, gemmkit_complex128_t, double, f64, d, dgemm, zgemm_blocks, gk_type_zgemm)

/* ---- float16 and bfloat16 on the float kernels ------------------------------------------------------- */

#if GEMMKIT_X86 && defined(_MSC_VER)
#include <intrin.h>
#elif GEMMKIT_X86
#include <cpuid.h>
#endif

/* Whether the CPU converts float16 (F16C: CPUID leaf 1, ECX bit 29); the AVX2 and AVX-512 paths use it
 * when it does (every AVX2 CPU so far has it). */
static int cpu_has_f16c(void) {
#if GEMMKIT_X86 && defined(_MSC_VER)
    int r[4];
    __cpuid(r, 1);
    return (r[2] >> 29) & 1;
#elif GEMMKIT_X86
    unsigned a, b, c, d;
    return __get_cpuid(1, &a, &b, &c, &d) && ((c >> 29) & 1u);
#else
    return 0;
#endif
}

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

/* The NC block of a converted C: its float buffer holds a thread's rows x NC, so keep NC modest. */
#define GK_CONVERTED_C_NC 512

static gemmkit_status_t gemm_half(const gk_real_type_t *type, char transa, char transb, int64_t M, int64_t N,
                                  int64_t K, float alpha, const uint16_t *A, int64_t lda, const uint16_t *B,
                                  int64_t ldb, float beta, uint16_t *C, int64_t ldc) {
    gemmkit_status_t st = check_gemm_args(0, transa, transb, M, N, K, A, lda, B, ldb, C, ldc);
    if (st != gemmkit_success || M == 0 || N == 0) return st;
    const gk_config_t *cfg = gk_config();
    gk_real_problem_t p = real_problem(type, cfg->sgemm, &cfg->sgemm_blocks, transa, transb, M, N, K, A, lda, B,
                                       ldb, C, ldc);
    if (K == 0 || alpha == 0.0f) {
        scale_c_half(&p, beta);
        return gemmkit_success;
    }
    const int64_t nr = cfg->sgemm->nr;
    p.blocks.nc = GK_MAX(nr, GK_MIN(p.blocks.nc, GK_CONVERTED_C_NC / nr * nr));
    p.alpha.f = alpha;
    p.beta.f = beta;
    return gk_real_gemm(&p);
}

gemmkit_status_t gemmkit_hgemm(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha,
                               const gemmkit_float16_t *A, int64_t lda, const gemmkit_float16_t *B, int64_t ldb,
                               float beta, gemmkit_float16_t *C, int64_t ldc) {
    const gk_real_type_t *type = &gk_type_hgemm;
#if GEMMKIT_X86
    if (strcmp(gk_config()->arch, "generic") != 0 && cpu_has_f16c()) type = &gk_type_hgemm_f16c;
#endif
    return gemm_half(type, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

gemmkit_status_t gemmkit_bf16gemm(char transa, char transb, int64_t M, int64_t N, int64_t K, float alpha,
                                  const gemmkit_bfloat16_t *A, int64_t lda, const gemmkit_bfloat16_t *B, int64_t ldb,
                                  float beta, gemmkit_bfloat16_t *C, int64_t ldc) {
    return gemm_half(&gk_type_bf16gemm, transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc);
}

/* ---- int32, int64, uint32, uint64 with wrap-around arithmetic ------------------------------------- */

#define DEFINE_WRAP_GEMM(NAME, T, TYPE)                                                              \
    gemmkit_status_t NAME(char transa, char transb, int64_t M, int64_t N, int64_t K, double alpha, const T *A, \
                          int64_t lda, const T *B, int64_t ldb, double beta, T *C, int64_t ldc) {     \
        gemmkit_status_t st = check_gemm_args(0, transa, transb, M, N, K, A, lda, B, ldb, C, ldc);   \
        if (st != gemmkit_success || M == 0 || N == 0) return st;                                    \
        const gk_wrap_problem_t p = {TYPE, is_trans(transa), is_trans(transb), M, N, K, alpha, beta, \
                                     A, B, lda, ldb, C, ldc};                                        \
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
            int32_t *c = p->C + i * p->ldc + j;
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
