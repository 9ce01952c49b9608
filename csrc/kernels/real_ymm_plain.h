/* The plain loops (real_plain_template.h, kernel.h gk_plain_fn) on ymm for the AVX2 kernels: blocks of up to 6 rows by
 * one or two chunks of VL values (12 sums, two of B, one of A and the last chunk's mask: the 16 registers). */
/* The including file defines T, V, VSUF, VL, TILE_FN and PLAIN_FN and includes real_ymm_template.h first (VOP, the
 * lane masks). Tails by maskload / maskstore. */
#define PL_V V
#define PL_M __m256i
#define PL_MASK(n) GK_YMM_CAT(TILE_FN, _lane_mask)((n) >= VL ? VL : (n))
#define PL_ZERO() VOP(setzero)()
#define PL_LOADU(p) VOP(loadu)(p)
#define PL_MASKZ_LOADU(m, p) VOP(maskload)(p, m)
#define PL_STOREU(p, v) VOP(storeu)(p, v)
#define PL_MASK_STOREU(p, m, v) VOP(maskstore)(p, m, v)
#define PL_SET1(x) VOP(set1)(x)
#define PL_FMADD(a, b, c) VOP(fmadd)(a, b, c)
#define PL_MUL(a, b) VOP(mul)(a, b)
#define PL_RMAX 6
#define PL_R4MAX 0
#define PL_HALF 0
#define PL_WHOLE_LOADS 1
#define PL_NARROW_TRANSA 1
#include "real_plain_template.h"
