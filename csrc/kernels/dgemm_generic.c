/* Portable C dgemm microkernel (4 x 8): the path for non-x86 builds and for x86 CPUs without AVX2;
 * written so compilers auto-vectorise the 8-wide row updates. */
#include "../kernel.h"

#define T double
#define MR 4
#define NR 8
#define KERNEL_FN ukernel_dgemm_generic_4x8
#include "real_generic_template.h"

#define TINY_FN tiny_dgemm_generic
#define TINY_COMPLEX_FN tiny_zgemm_generic
#include "real_tiny_template.h"
#undef TINY_FN
#undef TINY_COMPLEX_FN

/* the GEMV kernels on scalars (no VOP: the template's scalar operations) */
#define GEMV_ROWS_FN gemv_rows_dgemm_generic
#define GEMV_DOTS_FN gemv_dots_dgemm_generic
#include "real_gemv_template.h"

GK_ASSERT_REAL_TILE(MR, NR, 8);
const gk_real_kernel_t gk_dgemm_kernel_generic = {
    "ukernel_dgemm_generic_4x8", 8, MR, NR, ukernel_dgemm_generic_4x8, NULL, NULL, tiny_dgemm_generic, tiny_zgemm_generic,
    gemv_rows_dgemm_generic, gemv_dots_dgemm_generic,
};
