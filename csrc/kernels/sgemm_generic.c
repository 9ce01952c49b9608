/* Portable C sgemm microkernel (4 x 16): the path for non-x86 builds and for x86 CPUs without AVX2;
 * written so compilers auto-vectorise the 16-wide row updates. */
#include "../kernel.h"

#define T float
#define MR 4
#define NR 16
#define KERNEL_FN ukernel_sgemm_generic_4x16
#include "real_generic_template.h"

#define TINY_FN tiny_sgemm_generic
#define TINY_COMPLEX_FN tiny_cgemm_generic
#include "real_tiny_template.h"
#undef TINY_FN
#undef TINY_COMPLEX_FN

/* the GEMV kernels on scalars (no VOP: the template's scalar operations) */
#define GEMV_ROWS_FN gemv_rows_sgemm_generic
#define GEMV_DOTS_FN gemv_dots_sgemm_generic
#include "real_gemv_template.h"

GK_ASSERT_REAL_TILE(MR, NR, 4);
const gk_real_kernel_t gk_sgemm_kernel_generic = {
    "ukernel_sgemm_generic_4x16", 4, MR, NR, ukernel_sgemm_generic_4x16, NULL, NULL, tiny_sgemm_generic, tiny_cgemm_generic,
    gemv_rows_sgemm_generic, gemv_dots_sgemm_generic,
};
