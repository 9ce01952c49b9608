/* Constants shared by several configurations (so each value is written once): the small-problem
 * thresholds and the 512-bit float blocking; a config that differs spells its own values. */
#ifndef GEMMKIT_CONFIG_COMMON_H
#define GEMMKIT_CONFIG_COMMON_H
#include "../gemmkit_internal.h"

/* Up to 160^3 multiply-adds the real driver skips packing where it can; up to 4 MR-row panels a plain
 * B streams in place in 16-deep k blocks; few rows x B^T: dot kernel up to 16 rows; GEMV up to 2; an
 * int8 plain B read in place rather than its prepacked form up to 4 rows (AVX2 on Zen 2, N = K = 4096:
 * 2.4 vs 3.1 ms at M = 4; from 6 to 16 rows both within 2 %). */
#define GK_SMALL_DEFAULTS                                                                            \
    {.direct_max_macs = 160.0 * 160.0 * 160.0, .direct_max_row_panels = 4, .skinny_kc = 16,          \
     .dot_max_m = 16, .gemv_max_m = 2, .int8_kmajor_over_packed_max_m = 4,                           \
     .tiny_max_macs = 10.0 * 10.0 * 10.0}

/* sgemm 12 x 32: A block 120 x 512 (240 KiB) in L2, B block 512 x 1024 (2 MiB) in L3 (a 4096-wide B
 * block measured 7 % slower at 2048..4096 on Zen 5: more of it evicted between the A blocks). */
#define GK_SGEMM_AVX512_BLOCKS {.mc = 120, .kc = 512, .nc = 1024}
/* dgemm 12 x 16: the same bytes per block as sgemm (a k step of B is 128 bytes in both). */
#define GK_DGEMM_AVX512_BLOCKS {.mc = 120, .kc = 256, .nc = 1024}

#endif
