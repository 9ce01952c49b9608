/* The integer GEMM with wrap-around arithmetic, written once and compiled per ISA (gemm_wrap.c: portable;
 * kernels/wrap_avx2.c: AVX2, where the compiler turns the MR x NR register tile into vector code).
 * Needs GK_WRAP_ISA (name suffix); optional GK_WRAP_UKERNEL32 / GK_WRAP_UKERNEL64, the ISA's register
 * tiles (4 x 16 and 4 x 8) replacing the portable ones. Defines the table gk_wrap_kernels_<GK_WRAP_ISA>. */
#include <string.h>

#define GK_WRAP_CAT_(a, b) a##b
#define GK_WRAP_CAT(a, b) GK_WRAP_CAT_(a, b)
#define GK_WRAP_MR 4                 /* rows of C per register tile */
#define GK_WRAP_B_BYTES (512 << 10)  /* the packed op(B) block (K x nc) is kept near this size (L2) */

#if defined(__GNUC__) && !defined(__clang__)
/* fl(fl(P * alpha) + fl(C * beta)): three roundings, as NumPy computes it, never fused into an FMA */
#define GK_NO_FP_CONTRACT __attribute__((optimize("fp-contract=off")))
#else
#pragma STDC FP_CONTRACT OFF
#define GK_NO_FP_CONTRACT
#endif

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

/* The portable register tile: acc = A panel (k-major, MR per k) x B panel (k-major, NR per k), modulo
 * 2^bits (U unsigned: the same bits as the signed type's). */
#define DEFINE_WRAP_UKERNEL(SFX, U, NR)                                                               \
    static inline void ukernel_##SFX(int64_t K, const U *GK_RESTRICT ap, const U *GK_RESTRICT bp,        \
                                     U *GK_RESTRICT acc) {                                            \
        U c[GK_WRAP_MR][NR];                                                                          \
        memset(c, 0, sizeof(c));                                                                      \
        for (int64_t k = 0; k < K; k++) {                                                             \
            const U *b = bp + k * NR;                                                                 \
            for (int r = 0; r < GK_WRAP_MR; r++) {                                                    \
                const U a = ap[k * GK_WRAP_MR + r];                                                   \
                for (int j = 0; j < NR; j++) c[r][j] += a * b[j]; /* unsigned: wraps */                \
            }                                                                                         \
        }                                                                                             \
        memcpy(acc, c, sizeof(c));                                                                    \
    }
DEFINE_WRAP_UKERNEL(u32, uint32_t, 16)
DEFINE_WRAP_UKERNEL(u64, uint64_t, 8)

/* Element type T summed as unsigned U (the same bits modulo 2^bits), NR columns per register tile. */
#define DEFINE_WRAP_BLOCK(SFX, T, U, NR, UKERNEL)                                                     \
    /* C[0:mr, 0:nb] from the tile's sums (row stride NR). */                                          \
    GK_NO_FP_CONTRACT static void epilogue_##SFX(const gk_wrap_problem_t *p, const U *acc, int64_t mr, \
                                                 int64_t nb, T *C) {                                  \
        for (int64_t r = 0; r < mr; r++)                                                              \
            for (int64_t j = 0; j < nb; j++) {                                                        \
                T prod;                                                                               \
                memcpy(&prod, acc + r * NR + j, sizeof(T)); /* the sum's bits as T */                 \
                double v = (double)prod * p->alpha;                                                   \
                if (p->beta != 0.0) {                                                                 \
                    const double cb = (double)C[r * p->ldc + j] * p->beta;                             \
                    v = v + cb;                                                                       \
                }                                                                                     \
                C[r * p->ldc + j] = cvt_##SFX(v);                                                     \
            }                                                                                         \
    }                                                                                                 \
    static int block_##SFX(const gk_wrap_problem_t *p, int64_t m0, int64_t m1, int64_t n0, int64_t n1) { \
        const U *A = (const U *)p->A, *B = (const U *)p->B;                                           \
        const int64_t K = p->K, K1 = GK_MAX(K, (int64_t)1);                                            \
        int64_t nc = GK_WRAP_B_BYTES / (int64_t)sizeof(U) / K1 / NR * NR;                              \
        nc = GK_MAX((int64_t)NR, GK_MIN(nc, (n1 - n0 + NR - 1) / NR * NR));                           \
        U *bp = (U *)gk_thread_workspace(1, sizeof(U) * (size_t)(K1 * nc));                           \
        U *ap = (U *)gk_thread_workspace(0, sizeof(U) * (size_t)(K1 * GK_WRAP_MR));                   \
        if (!bp || !ap) return -1;                                                                    \
        GK_ALIGN64 U acc[GK_WRAP_MR * NR];                                                            \
        for (int64_t jc = n0; jc < n1; jc += nc) {                                                    \
            const int64_t w = GK_MIN(nc, n1 - jc);                                                    \
            for (int64_t j0 = 0; j0 < w; j0 += NR) { /* NR-column panels, k-major, zero-padded */      \
                U *d = bp + j0 * K;                                                                   \
                const int64_t nb = GK_MIN((int64_t)NR, w - j0);                                       \
                for (int64_t k = 0; k < K; k++) {                                                     \
                    int64_t j = 0;                                                                    \
                    for (; j < nb; j++)                                                               \
                        d[k * NR + j] = p->transb ? B[(jc + j0 + j) * p->ldb + k] : B[k * p->ldb + jc + j0 + j]; \
                    for (; j < NR; j++) d[k * NR + j] = 0;                                            \
                }                                                                                     \
            }                                                                                         \
            for (int64_t i0 = m0; i0 < m1; i0 += GK_WRAP_MR) {                                        \
                const int64_t mr = GK_MIN((int64_t)GK_WRAP_MR, m1 - i0);                              \
                for (int64_t k = 0; k < K; k++) { /* MR rows, k-major, zero-padded */                  \
                    int r = 0;                                                                        \
                    for (; r < mr; r++)                                                               \
                        ap[k * GK_WRAP_MR + r] = p->transa ? A[k * p->lda + i0 + r] : A[(i0 + r) * p->lda + k]; \
                    for (; r < GK_WRAP_MR; r++) ap[k * GK_WRAP_MR + r] = 0;                           \
                }                                                                                     \
                for (int64_t j0 = 0; j0 < w; j0 += NR) {                                              \
                    UKERNEL(K, ap, bp + j0 * K, acc);                                                 \
                    epilogue_##SFX(p, acc, mr, GK_MIN((int64_t)NR, w - j0), (T *)p->C + i0 * p->ldc + jc + j0); \
                }                                                                                     \
            }                                                                                         \
        }                                                                                             \
        return 0;                                                                                     \
    }

#ifndef GK_WRAP_UKERNEL32
#define GK_WRAP_UKERNEL32 ukernel_u32
#endif
#ifndef GK_WRAP_UKERNEL64
#define GK_WRAP_UKERNEL64 ukernel_u64
#endif
DEFINE_WRAP_BLOCK(i32, int32_t, uint32_t, 16, GK_WRAP_UKERNEL32)
DEFINE_WRAP_BLOCK(u32, uint32_t, uint32_t, 16, GK_WRAP_UKERNEL32)
DEFINE_WRAP_BLOCK(i64, int64_t, uint64_t, 8, GK_WRAP_UKERNEL64)
DEFINE_WRAP_BLOCK(u64, uint64_t, uint64_t, 8, GK_WRAP_UKERNEL64)

/* indexed by gk_wrap_type_t */
const gk_wrap_kernels_t GK_WRAP_CAT(gk_wrap_kernels_, GK_WRAP_ISA) = {
    {block_i32, block_u32, block_i64, block_u64}};
