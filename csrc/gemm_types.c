/* The per-type tables of the real driver (as ruy's TrMulParams): how sgemm, dgemm, cgemm / zgemm (native
 * or by the 1m method), and float16 / bfloat16 widened to float, turn the caller's operands into panels. */
#include <string.h>
#include "driver.h"
#include "pack.h"
#include "atomics.h"
#include "convert.h"

/* Complex, on a native complex kernel or by 1m on a real one (panel formats in pack.h): real-domain k0, kc, j0, nc are twice the complex ones (the blocking keeps them even); a
 * complex element is two reals, so complex offsets double once more. */
#define COMPLEX_PACKERS(SFX, T)                                                                      \
    static void pack_a_complex_##SFX##_block(const gk_real_problem_t *p, int64_t i0, int64_t k0, int64_t mc, \
                                             int64_t kc, void *dst) {                                \
        const int64_t k = k0 / 2;                                                                    \
        const T *A = (const T *)p->A + 2 * (p->transa ? k * p->lda + i0 : i0 * p->lda + k);          \
        if (p->kern->complex_native && p->kern->pack_a_plain && !p->transa && !p->conja && !p->alpha_fold) \
            p->kern->pack_a_plain(A, p->lda, mc, kc / 2, dst);                                       \
        else if (p->kern->complex_native)                                                            \
            gk_pack_a_cx_##SFX(p->transa, p->conja, (const T *)p->alpha_fold, A, p->lda, mc, kc / 2,     \
                            p->kern->mr, (T *)dst);                                                  \
        else                                                                                         \
            gk_pack_a_1m_##SFX(p->transa, p->conja, (const T *)p->alpha_fold, A, p->lda, mc, kc / 2,     \
                            p->kern->mr, (T *)dst);                                                  \
    }                                                                                                \
    static void pack_b_complex_##SFX##_block(const gk_real_problem_t *p, int64_t k0, int64_t j0, int64_t kc, \
                                             int64_t nc, void *dst) {                                \
        const int64_t k = k0 / 2, j = j0 / 2;                                                        \
        const T *B = (const T *)p->B + 2 * (p->transb ? j * p->ldb + k : k * p->ldb + j);            \
        if (p->kern->complex_native)                                                                 \
            gk_pack_b_cx_##SFX(p->transb, p->conjb, B, p->ldb, kc / 2, nc / 2, p->kern->nr, (T *)dst);  \
        else                                                                                         \
            gk_pack_b_1m_##SFX(p->transb, p->conjb, B, p->ldb, kc / 2, nc / 2, p->kern->nr, (T *)dst);  \
    }

GK_REAL_PACKERS(f32, float, float)
GK_REAL_PACKERS(f64, double, double)
COMPLEX_PACKERS(f32, float)
COMPLEX_PACKERS(f64, double)

const gk_real_type_t gk_type_sgemm = {"sgemm", 0, pack_a_f32_block, pack_b_f32_block, gk_real_gemv};
const gk_real_type_t gk_type_dgemm = {"dgemm", 0, pack_a_f64_block, pack_b_f64_block, gk_real_gemv};
const gk_real_type_t gk_type_cgemm = {"cgemm", 1, pack_a_complex_f32_block, pack_b_complex_f32_block, NULL};
const gk_real_type_t gk_type_zgemm = {"zgemm", 1, pack_a_complex_f64_block, pack_b_complex_f64_block, NULL};

/* float16 and bfloat16: widened to float while packing, C through a float buffer (portable converters). */
GK_REAL_PACKERS(f16, uint16_t, float)
GK_REAL_PACKERS(bf16, uint16_t, float)
GK_HALF_C_CONVERTERS(f16, gk_f16_row_to_f32, gk_f32_row_to_f16)
/* a bfloat16 C's rows narrowed by the pair kernel's own converter where it has one (p, the problem, in scope) */
#define NARROW_BF16(src, n, dst) (p->kern->moves ? p->kern->moves->f32_row_to_bf16 : gk_f32_row_to_bf16)(src, n, dst)
GK_HALF_C_CONVERTERS(bf16, gk_bf16_row_to_f32, NARROW_BF16)
const gk_real_type_t gk_type_hgemm = {"hgemm", 0, pack_a_f16_block, pack_b_f16_block, gk_half_gemv, load_c_f16,
                                      store_c_f16, GK_WIDENED_F16, gk_f16_row_to_f32};
const gk_real_type_t gk_type_bf16gemm = {"bf16gemm", 0, pack_a_bf16_block, pack_b_bf16_block, gk_half_gemv,
                                         load_c_bf16, store_c_bf16, GK_WIDENED_BF16, gk_bf16_row_to_f32};
const gk_real_type_t gk_type_bf16bf16f32 = {"gemm_bf16bf16f32", 0, pack_a_bf16_block, pack_b_bf16_block,
                                            gk_half_gemv, NULL, NULL, GK_WIDENED_BF16, gk_bf16_row_to_f32};

/* bfloat16 on a pair kernel (gk_real_kernel_t.k_pair_group; p->K in pairs): operands packed as pairs of k at their
 * own width, subnormals reported to p->subnormal_seen; C float, or bfloat16 through the converters above. Offsets
 * into A and B are the caller's elements (2 k0 values in). */
static void pack_a_bf16_pairs_block(const gk_real_problem_t *p, int64_t i0, int64_t k0, int64_t mc, int64_t kc,
                                    void *dst) {
    const uint16_t *A = (const uint16_t *)p->A + (p->transa ? 2 * k0 * p->lda + i0 : i0 * p->lda + 2 * k0);
    const gk_real_kernel_t *k = p->kern;
    const int64_t kvals = p->k_values - 2 * k0;
    const gk_bf16_moves_t *mv = k->moves; /* the kernel's own packers where it has them, else the portable ones */
    int sub;
    if (k->a_rows)
        sub = mv && !p->transa ? mv->rows_kcontig(A, p->lda, mc, k->mr, kc, kvals, (uint32_t *)dst)
                               : gk_pack_a_bf16_rows(p->transa, A, p->lda, mc, kc, kvals, k->mr, (uint32_t *)dst);
    else if (mv && k->k_pair_group <= 1)
        sub = (p->transa ? mv->pairs_kmajor : mv->pairs_kcontig)(A, p->lda, mc, k->mr, kc, kvals, (uint32_t *)dst);
    else
        sub = gk_pack_a_bf16_pairs(p->transa, A, p->lda, mc, kc, kvals, k->mr, k->k_pair_group, (uint32_t *)dst);
    if (sub) GK_STORE_RELAXED(p->subnormal_seen, 1);
}
static void pack_b_bf16_pairs_block(const gk_real_problem_t *p, int64_t k0, int64_t j0, int64_t kc, int64_t nc,
                                    void *dst) {
    const uint16_t *B = (const uint16_t *)p->B + (p->transb ? j0 * p->ldb + 2 * k0 : 2 * k0 * p->ldb + j0);
    const gk_real_kernel_t *k = p->kern;
    const int64_t kvals = p->k_values - 2 * k0;
    const gk_bf16_moves_t *mv = k->moves;
    const int sub = mv && k->b_pair_group <= 1
                        ? (p->transb ? mv->pairs_kcontig : mv->pairs_kmajor)(B, p->ldb, nc, k->nr, kc, kvals,
                                                                             (uint32_t *)dst)
                        : gk_pack_b_bf16_pairs(p->transb, B, p->ldb, kc, kvals, nc, k->nr, k->b_pair_group,
                                               (uint32_t *)dst);
    if (sub) GK_STORE_RELAXED(p->subnormal_seen, 1);
}
const gk_real_type_t gk_type_bf16gemm_pairs = {"bf16gemm", 0, pack_a_bf16_pairs_block, pack_b_bf16_pairs_block,
                                               gk_half_gemv, load_c_bf16, store_c_bf16, GK_WIDENED_BF16,
                                               gk_bf16_row_to_f32, &gk_type_bf16gemm_pairs_ct};
const gk_real_type_t gk_type_bf16bf16f32_pairs = {"gemm_bf16bf16f32", 0, pack_a_bf16_pairs_block,
                                                  pack_b_bf16_pairs_block, gk_half_gemv, NULL, NULL, GK_WIDENED_BF16,
                                                  gk_bf16_row_to_f32, &gk_type_bf16bf16f32_pairs_ct};

/* The same with C transposed (element (i, j) of the kernel's product at C[j * ldc + i]): the few-row products
 * computed as C^T = op(B)^T op(A)^T, so that the big operand is the one read as rows (gk_real_kernel_t.a_rows).
 * The driver keeps each thread's block of C^T in its float buffer and these move it to and from C, a column of
 * the buffer at a time (through a row of floats for a bfloat16 C). */
#define TRANSPOSED_C_ROW 256
static void copy_f32_row(const float *src, int64_t n, float *dst) { memcpy(dst, src, sizeof(float) * (size_t)n); }
#define TRANSPOSED_C_CONVERTERS(SFX, CT, WIDEN, NARROW)                                              \
    static void load_c_t_##SFX(const gk_real_problem_t *p, int64_t i0, int64_t j0, int64_t m, int64_t n, \
                               float *dst, int64_t ld) {                                             \
        float row[TRANSPOSED_C_ROW];                                                                 \
        for (int64_t j = 0; j < n; j++)                                                              \
            for (int64_t r = 0; r < m; r += TRANSPOSED_C_ROW) {                                      \
                const int64_t w = GK_MIN((int64_t)TRANSPOSED_C_ROW, m - r);                          \
                WIDEN((const CT *)p->C + (j0 + j) * p->ldc + i0 + r, w, row);                        \
                for (int64_t i = 0; i < w; i++) dst[(r + i) * ld + j] = row[i];                      \
            }                                                                                        \
    }                                                                                                \
    static void store_c_t_##SFX(const gk_real_problem_t *p, int64_t i0, int64_t j0, int64_t m, int64_t n, \
                                const float *src, int64_t ld) {                                      \
        float row[TRANSPOSED_C_ROW];                                                                 \
        for (int64_t j = 0; j < n; j++)                                                              \
            for (int64_t r = 0; r < m; r += TRANSPOSED_C_ROW) {                                      \
                const int64_t w = GK_MIN((int64_t)TRANSPOSED_C_ROW, m - r);                          \
                for (int64_t i = 0; i < w; i++) row[i] = src[(r + i) * ld + j];                      \
                NARROW(row, w, (CT *)p->C + (j0 + j) * p->ldc + i0 + r);                             \
            }                                                                                        \
    }
TRANSPOSED_C_CONVERTERS(f32, float, copy_f32_row, copy_f32_row)
TRANSPOSED_C_CONVERTERS(bf16, uint16_t, gk_bf16_row_to_f32, NARROW_BF16)
const gk_real_type_t gk_type_bf16gemm_pairs_ct = {"bf16gemm", 0, pack_a_bf16_pairs_block, pack_b_bf16_pairs_block,
                                                  NULL, load_c_t_bf16, store_c_t_bf16, GK_WIDENED_BF16,
                                                  gk_bf16_row_to_f32};
const gk_real_type_t gk_type_bf16bf16f32_pairs_ct = {
    .name = "gemm_bf16bf16f32", .pack_a = pack_a_bf16_pairs_block, .pack_b = pack_b_bf16_pairs_block,
    .load_c = load_c_t_f32, .store_c = store_c_t_f32, .widened = GK_WIDENED_BF16, .widen_row = gk_bf16_row_to_f32,
    .c_float = 1};
