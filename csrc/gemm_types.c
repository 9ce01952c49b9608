/* The per-type tables of the real driver (as ruy's TrMulParams): how sgemm, dgemm, and cgemm / zgemm
 * by the 1m method turn the caller's operands into the panels of a float or double microkernel. */
#include "driver.h"
#include "pack.h"

/* Real types: indices are the caller's; the real packers take the block's first element. */
#define REAL_PACKERS(SFX, T)                                                                         \
    static void pack_a_##SFX##_block(const gk_real_problem_t *p, int64_t i0, int64_t k0, int64_t mc,   \
                                     int64_t kc, void *dst) {                                        \
        const T *A = (const T *)p->A + (p->transa ? k0 * p->lda + i0 : i0 * p->lda + k0);            \
        pack_a_##SFX(p->transa, A, p->lda, mc, kc, p->kern->mr, (T *)dst);                           \
    }                                                                                                \
    static void pack_b_##SFX##_block(const gk_real_problem_t *p, int64_t k0, int64_t j0, int64_t kc,   \
                                     int64_t nc, void *dst) {                                        \
        const T *B = (const T *)p->B + (p->transb ? j0 * p->ldb + k0 : k0 * p->ldb + j0);            \
        pack_b_##SFX(p->transb, B, p->ldb, kc, nc, p->kern->nr, (T *)dst);                           \
    }

/* Complex by 1m: real-domain k0, kc, j0, nc are twice the complex ones (the blocking keeps them even);
 * a complex element is two reals, so complex offsets double once more. */
#define COMPLEX_PACKERS(SFX, T)                                                                      \
    static void pack_a_1m_##SFX##_block(const gk_real_problem_t *p, int64_t i0, int64_t k0, int64_t mc, \
                                        int64_t kc, void *dst) {                                     \
        const int64_t k = k0 / 2;                                                                    \
        const T *A = (const T *)p->A + 2 * (p->transa ? k * p->lda + i0 : i0 * p->lda + k);          \
        pack_a_1m_##SFX(p->transa, p->conja, (const T *)p->alpha_fold, A, p->lda, mc, kc / 2,         \
                        p->kern->mr, (T *)dst);                                                      \
    }                                                                                                \
    static void pack_b_1m_##SFX##_block(const gk_real_problem_t *p, int64_t k0, int64_t j0, int64_t kc, \
                                        int64_t nc, void *dst) {                                     \
        const int64_t k = k0 / 2, j = j0 / 2;                                                        \
        const T *B = (const T *)p->B + 2 * (p->transb ? j * p->ldb + k : k * p->ldb + j);            \
        pack_b_1m_##SFX(p->transb, p->conjb, B, p->ldb, kc / 2, nc / 2, p->kern->nr, (T *)dst);      \
    }

REAL_PACKERS(f32, float)
REAL_PACKERS(f64, double)
COMPLEX_PACKERS(f32, float)
COMPLEX_PACKERS(f64, double)

const gk_real_type_t gk_type_sgemm = {"sgemm", 0, pack_a_f32_block, pack_b_f32_block, gk_sgemm_few_rows};
const gk_real_type_t gk_type_dgemm = {"dgemm", 0, pack_a_f64_block, pack_b_f64_block, NULL};
const gk_real_type_t gk_type_cgemm = {"cgemm", 1, pack_a_1m_f32_block, pack_b_1m_f32_block, NULL};
const gk_real_type_t gk_type_zgemm = {"zgemm", 1, pack_a_1m_f64_block, pack_b_1m_f64_block, NULL};
