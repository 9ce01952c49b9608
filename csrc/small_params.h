/* The small-problem thresholds of the middle-end (gk_small_t), the one list: their fields, their tuning names
 * ("small.<field>"), valid ranges and get / set (csrc/tuning.c) and a configuration's description all come from it. */
#ifndef GEMMKIT_SMALL_PARAMS_H
#define GEMMKIT_SMALL_PARAMS_H

/* X(field, C type, most, integer, multiple): tunable, any value from 0 to `most` (`integer`: whole numbers only,
 * multiples of `multiple`). Each field's meaning is beside it; each path's values are in csrc/config/. */
#define GK_SMALL_TUNED_PARAMS(X)                                                                     \
    /* real products with M, N, K <= GK_TINY_MAX and no more multiply-adds run whole in the kernel's `tiny` */ \
    X(tiny_max_macs, double, 32.0 * 32.0 * 32.0, 0, 1)                                               \
    /* ... and those read in place (GK_TINY_DIRECT_MAX) up to this many */                            \
    X(tiny_direct_max_macs, double, 64.0 * 64.0 * 64.0, 0, 1)                                        \
    /* complex products, in complex multiply-adds, in `tiny_complex` (the 1m packed path overtakes it sooner) */ \
    X(tiny_complex_max_macs, double, 32.0 * 32.0 * 32.0, 0, 1)                                       \
    /* a plain A x plain B on one thread: the kernel's `plain` up to this many multiply-adds */       \
    X(plain_max_macs, double, 512.0 * 512.0 * 512.0, 0, 1)                                           \
    /* up to this many multiply-adds the real driver skips packing */                                \
    X(direct_max_macs, double, 512.0 * 512.0 * 512.0, 0, 1)                                          \
    /* ... and with op(A) = A (packed), streams a plain B in place up to this */                      \
    X(direct_b_max_macs, double, 512.0 * 512.0 * 512.0, 0, 1)                                        \
    /* few rows: the GEMV kernels up to this M (B^T: where the dot kernel is not used) */            \
    X(gemv_max_m, int, 8, 1, 1)                                                                      \
    /* few columns: the GEMV kernels on C^T = op(B)^T op(A)^T up to this N */                        \
    X(gemv_max_n, int, 8, 1, 1)                                                                      \
    /* GEMV software prefetch distance per stream, bytes (0: none), whole cache lines */             \
    X(gemv_pf_bytes, int, 16384, 1, 64)                                                              \
    /* few rows x B^T: the dot kernel up to this M */                                                \
    X(dot_max_m, int, 32, 1, 1)                                                                      \
    /* up to this many MR-row panels a plain B is streamed in place */                               \
    X(direct_max_row_panels, int, 8, 1, 1)                                                           \
    /* a transposed A in the plain loops is copied in strips first where a row block's walk down A^T (bytes of \
     * pages, per plain_group_cols columns of C) is longer (at most 1 TiB: never) */                 \
    X(ta_strips_min_walk, double, 1099511627776.0, 0, 1)                                             \
    /* few rows packed: B packed this many NR panels at a time by the macro-kernel into a reused buffer, in k \
     * blocks of at most b_group_kc (0: B's whole block first) */                                   \
    X(b_group_panels, int, GK_TUNE_B_GROUP_MAX, 1, 1)                                                \
    /* ... and their k block at most this (0: the block's own; the A block keeps its bytes under it) */\
    X(b_group_kc, int, 4096, 1, 8)                                                                   \
    /* few columns: the kernel's dot path (a plain A) and `cols` loops (a transposed A) up to this N (their column \
     * blocks take at most 4) */                                                                     \
    X(dot_max_n, int, 4, 1, 1)                                                                       \
    /* few rows x B^T from this M on: the plain loops below GK_DOT_ROWS_MIN_K terms, not the dot path */ \
    X(dot_rows_plain_min_m, int, 32, 1, 1)                                                           \
    /* a batch of tiny products streamed (tiny_stream_min_bytes) only where C's rows are this many bytes or more \
     * (shorter: the fence after each product's non-temporal stores costs more than it saves) ... */ \
    X(tiny_stream_min_row_bytes, int, 1 << 20, 1, 1)                                                 \
    /* ... and only past this many k steps (a shorter k loop does not carry a streamed block's fixed cost) */ \
    X(tiny_stream_min_k, int, 1 << 16, 1, 1)                                                         \
    /* bfloat16 products with more rows than this and more columns than bf16_widen_min_n widened onto the float \
     * kernel rather than the pair kernel, but x W^T up to GK_BF16_SWAP_MAX_M rows (0: never; for a CPU whose pair \
     * instruction has a lower rate than its float FMA) */                                           \
    X(bf16_widen_min_m, int, 1 << 20, 1, 1)                                                          \
    X(bf16_widen_min_n, int, 1 << 20, 1, 1)

/* X(field, C type): set by each path's table only */
#define GK_SMALL_FIXED_PARAMS(X)                                                                     \
    /* k block when B is streamed in place */                                                        \
    X(skinny_kc, int64_t)                                                                            \
    /* int8, few rows x a prepacked plain B: the plain B read in place instead (kernel->dot_kmajor) up to this M */ \
    X(int8_kmajor_over_packed_max_m, int)                                                            \
    /* batches of tiny products with more operand bytes than this (beyond the caches) are streamed \
     * (gk_tiny_stream_t); 0: never */                                                               \
    X(tiny_stream_min_bytes, double)

#endif
