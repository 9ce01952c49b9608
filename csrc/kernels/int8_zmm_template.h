/* Body shared by the 512-bit int8 microkernels (VNNI and AVX-512BW widening): the including file
 * defines MR, NV, KG, ES, I8_STEP(acc, a_bcast, b) and the kernel names, then includes this. */
#include <string.h>
#include "int8_zmm_epilogue.h"

#include "int8_tile_sums.h"

static void I8_KERNEL_NAME(int64_t kgroups, const void *GK_RESTRICT av, const void *GK_RESTRICT bv,
                           int32_t *GK_RESTRICT s, int accumulate, void *GK_RESTRICT c, int64_t ldc,
                           const gk_int8_epilogue_t *ep) {
    const int direct = ep != NULL && ep->dst == GK_DST_INT32 && ep->mode == GK_EP_INT32;
    int8_tile_sums(kgroups, (const uint8_t *)av, (const uint8_t *)bv, s, accumulate, ep != NULL ? c : NULL,
                 ep != NULL ? ldc * gk_dst_size(ep->dst) : 0, direct ? (int32_t *)c : NULL, ldc,
                 direct ? ep->row_i32 : NULL, direct ? ep->col_i32 : NULL);
    if (ep != NULL && !direct) I8_PASTE(I8_KERNEL_NAME, _finish)(MR, s, c, ldc, ep);
}

#include "int8_row_kernels.h"
#include "int8_panel_sums.h"
