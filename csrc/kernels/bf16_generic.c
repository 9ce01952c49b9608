/* The portable bfloat16 pair kernel (the generic path's): 4 x 16 tiles on k-pair panels, every value widened to
 * float exactly; it packs bfloat16 at half the bytes of the widened float panels and keeps subnormals. */
#include "../kernel.h"
#include "../convert.h"

#define BP_MR 4
#define BP_NR 16
#define BP_GROUP 1
#define BP_NAME ukernel_bf16_generic_4x16
#include "bf16_pair_exact_template.h"

GK_ASSERT_REAL_TILE(BP_MR, BP_NR, 4);
const gk_real_kernel_t gk_bf16_kernel_generic = {
    .name = "ukernel_bf16_generic_4x16", .elem = 4, .mr = BP_MR, .nr = BP_NR, .ukernel = ukernel_bf16_generic_4x16,
    .k_pair_group = BP_GROUP, .ukernel_exact = ukernel_bf16_generic_4x16,
};
