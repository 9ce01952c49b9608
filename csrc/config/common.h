/* Constants shared by several configurations (so each value is written once): the small-problem
 * thresholds and the 512-bit float blocking; a config that differs spells its own values. */
#ifndef GEMMKIT_CONFIG_COMMON_H
#define GEMMKIT_CONFIG_COMMON_H
#include "../config.h"

/* Every configuration is its path's base (GK_CONFIG_*_BASE below: a complete initializer) followed by
 * designated initializers of the fields it changes; a later designator replaces the earlier one (C11
 * 6.7.9), so a config keeps every kernel its base has unless it names that field. tests/core/test_config_bases.py
 * checks each config against its base field by field (gemmkit_config_describe). The compilers' warnings
 * about such overrides are off in the config files only. */
#if defined(__clang__)
#pragma clang diagnostic ignored "-Winitializer-overrides"
#elif defined(__GNUC__)
#pragma GCC diagnostic ignored "-Woverride-init"
#endif

/* Up to 160^3 multiply-adds the real driver skips packing where it can (a plain B under a packed A: up to DIRECT_B
 * macs); up to a few MR-row panels a plain B streams in place in 16-deep k blocks; few rows x B^T: dot kernel up to
 * 16 rows; GEMV up to 2 rows or 2 columns, each stream prefetched GEMV_PF bytes ahead; real products up to TINY macs
 * (and 32 a side) whole in the unpacked tiny kernel, up to TINY_DIRECT (and 64 a side) where A is plain, complex ones
 * up to TINY_COMPLEX complex macs; batches of tiny products streamed from memory past TINY_STREAM bytes (0: never);
 * an int8 plain B read in place rather than its prepacked form up to 4 rows, where it measured faster (from 6 rows on
 * both were level) (see docs/decisions.md, int8_kmajor_over_packed_max_m). */
/* Plain products up to 200^3 whole in a kernel's `plain` loops, where the kernel has them (AVX-512, AVX2): past it B
 * is re-read from beyond L2 by every block of rows. Products worth more than one thread go to the packed path (see
 * docs/decisions.md, GK_PLAIN_MAX_MACS). */
#define GK_PLAIN_MAX_MACS (200.0 * 200.0 * 200.0)
/* Few rows of C against a plain B read in place (k blocks of skinny_kc) rather than packed up to this many MR-row
 * panels; more rows pack B. The x86 tables: three; where no hand config applies the model keeps them on a core with 2
 * MiB of L2 or more and takes one elsewhere (csrc/blocking_model.c). AArch64 keeps four: not measured on ARM hardware
 * (see docs/decisions.md, GK_DIRECT_MAX_ROW_PANELS). */
#if GEMMKIT_ARM
#define GK_DIRECT_MAX_ROW_PANELS 4
#else
#define GK_DIRECT_MAX_ROW_PANELS 3
#endif
/* The AVX2 path takes one panel where its L2 is small: on 2 threads packing a B streamed once from memory lost, so up
 * to 6 rows stay in place; the model picks one or three by the L2 where no hand config applies (see
 * docs/decisions.md, GK_DIRECT_MAX_ROW_PANELS). */
/* A transposed A in the plain loops: copied in strips past a walk of 8 MiB of pages (csrc/gemm_small.c). */
#define GK_TA_STRIPS_MIN_WALK ((double)(8 << 20))
#define GK_SMALL_TUNED_FULL(DIRECT_B, TINY, TINY_DIRECT, TINY_COMPLEX, GEMV_PF, TINY_STREAM, PLAIN, ROW_PANELS) \
    {.direct_max_macs = 160.0 * 160.0 * 160.0, .direct_b_max_macs = (DIRECT_B),                        \
     .direct_max_row_panels = (ROW_PANELS),                                                           \
     .skinny_kc = 16, .dot_max_m = 16, .gemv_max_m = 2, .gemv_max_n = 2, .gemv_pf_bytes = (GEMV_PF),  \
     .int8_kmajor_over_packed_max_m = 4, .tiny_max_macs = (TINY), .tiny_direct_max_macs = (TINY_DIRECT), \
     .tiny_complex_max_macs = (TINY_COMPLEX), .tiny_stream_min_bytes = (TINY_STREAM),                   \
     .plain_max_macs = (PLAIN), .ta_strips_min_walk = GK_TA_STRIPS_MIN_WALK, .b_group_kc = 256, .dot_max_n = 4,  \
     .dot_rows_plain_min_m = 12, .tiny_stream_min_row_bytes = 256, .tiny_stream_min_k = 32, \
     .bf16_widen_min_m = 0, .bf16_widen_min_n = 0}
#define GK_SMALL_TUNED(DIRECT_B, TINY, TINY_DIRECT, TINY_COMPLEX, GEMV_PF, TINY_STREAM)              \
    GK_SMALL_TUNED_FULL(DIRECT_B, TINY, TINY_DIRECT, TINY_COMPLEX, GEMV_PF, TINY_STREAM, GK_PLAIN_MAX_MACS,     \
                        GK_DIRECT_MAX_ROW_PANELS)
/* GEMV prefetch 2 KiB: the distance the float GEMV's tuning found, ahead of the hardware prefetchers alone
 * (see docs/decisions.md, small.gemv_pf_bytes). */
#define GK_SMALL_DEFAULTS GK_SMALL_TUNED(160.0 * 160.0 * 160.0, 10.0 * 10.0 * 10.0, 10.0 * 10.0 * 10.0, 10.0 * 10.0 * 10.0, 2048, 0)
/* The x86 paths' defaults for CPUs without a configuration of their own: the tiny limits of their 6-row in-place k
 * loops. AVX2: those of csrc/config/zen2.c, which carried to a CPU they were not tuned on. AVX-512: products up to
 * 32^3 whole in the tiny kernel (on a core with two 512-bit FMA pipes the 6-row zmm loop keeps 6 of the 8 FMAs in
 * flight it needs, where packing two 32 x 32 operands costs more than that quarter), a plain A up to 32^3 only (at
 * 64^3 the packed 12 x 32 tile's full rate pays for the packing) (see docs/decisions.md, GK_SMALL_AVX2_DEFAULTS). */
#define GK_SMALL_AVX2_DEFAULTS                                                                       \
    GK_SMALL_TUNED(160.0 * 160.0 * 160.0, 32.0 * 32.0 * 32.0, 64.0 * 64.0 * 64.0, 16.0 * 16.0 * 16.0, 2048, \
                   16.0 * (1 << 20))
#define GK_SMALL_AVX512_DEFAULTS                                                                     \
    GK_SMALL_TUNED(160.0 * 160.0 * 160.0, 32.0 * 32.0 * 32.0, 32.0 * 32.0 * 32.0, 10.0 * 10.0 * 10.0, 2048, \
                   16.0 * (1 << 20))

/* AVX2 6 x 16 sgemm / 6 x 8 dgemm: A block 144 x 256 (sgemm 144 KiB, dgemm 96 x 256: 192 KiB) in a
 * 512 KiB L2, B block 256 x NC in a share of L3. */
#define GK_SGEMM_AVX2_BLOCKS {.mc = 144, .kc = 256, .nc = 4080}
#define GK_DGEMM_AVX2_BLOCKS {.mc = 96, .kc = 256, .nc = 2040}
/* Native complex 3 x 8 cgemm / 3 x 4 zgemm, sizes in the real domain (kc, nc: twice the complex ones): a k step of A
 * and B is as many bytes as the real kernels', so kc 256 complex keeps the B micro-panel at 16 KiB in L1; A blocks 96
 * x 256 x 8 B (cgemm) and 48 x 256 x 16 B (zgemm) = 192 KiB in L2, B blocks of 2048 / 1024 complex columns (4 MiB: N
 * = 1024 and 2048 split evenly, no sliver that packs A again) (see docs/decisions.md, GK_CGEMM_AVX2_BLOCKS). */
#define GK_CGEMM_AVX2_BLOCKS {.mc = 96, .kc = 512, .nc = 4096}
#define GK_ZGEMM_AVX2_BLOCKS {.mc = 48, .kc = 512, .nc = 2048}
/* The AVX2 path's kernels and blocking, shared by its configurations (avx2, zen2: they differ in the
 * sgemm blocks and the small-problem thresholds). Used inside `#if GEMMKIT_X86`. */
#define GK_AVX2_KERNELS_AND_BLOCKS GK_AVX2_KERNELS_AND_BLOCKS_S(GK_SGEMM_AVX2_BLOCKS)
#define GK_AVX2_KERNELS_AND_BLOCKS_S(SGEMM_BLOCKS)                                                   \
    .sgemm = &gk_sgemm_kernel_avx2, .dgemm = &gk_dgemm_kernel_avx2, .int8 = &gk_int8_kernel_avx2,      \
    .cgemm = &gk_cgemm_kernel_avx2, .zgemm = &gk_zgemm_kernel_avx2,                                  \
    .sgemm_blocks = SGEMM_BLOCKS, .dgemm_blocks = GK_DGEMM_AVX2_BLOCKS,                              \
    .cgemm_blocks = GK_CGEMM_AVX2_BLOCKS, .zgemm_blocks = GK_ZGEMM_AVX2_BLOCKS,                      \
    .int8_blocks = GK_INT8_AVX2_BLOCKS, .quant = &gk_quant_kernel_avx2
/* AVX2 int8 (bytes widened to int16): k block 256 in L1; B blocks up to 8 MiB of int16 panels (1024 columns at K =
 * 4096: a plain B's rows are packed 1 KiB at a time). Few rows in place: B^T as fast as the packed weight up to 32
 * rows, a plain B up to 24 (see docs/decisions.md, GK_INT8_AVX2_BLOCKS). */
#define GK_INT8_AVX2_BLOCKS                                                                          \
    {.mc = 120, .nc = 4096, .kb = 256, .l2_bytes = 384 << 10, .l3_bytes = 8 << 20, .dot_max_m = 32,    \
     .kmajor_max_m = 24}

/* sgemm 12 x 32: A block 120 x 512 (240 KiB) in L2, B block 512 x 1024 (2 MiB) in L3 (a wider B block is more evicted
 * between the A blocks) (see docs/decisions.md, GK_SGEMM_AVX512_BLOCKS). */
#define GK_SGEMM_AVX512_BLOCKS {.mc = 120, .kc = 512, .nc = 1024}
/* dgemm 12 x 16: the same bytes per block as sgemm (a k step of B is 128 bytes in both). */
#define GK_DGEMM_AVX512_BLOCKS {.mc = 120, .kc = 256, .nc = 1024}
/* Native complex 6 x 16 cgemm / 6 x 8 zgemm (kc, nc in the real domain: twice the complex ones): the real kernels'
 * bytes per block (A 120 x 256 complex x 8 B (cgemm) or x 128 x 16 B (zgemm) = 240 KiB, B 2 MiB). Where the cache
 * sizes are known the model's blocks replace these (csrc/blocking_model.c; see docs/decisions.md,
 * GK_CGEMM_AVX512_BLOCKS). */
#define GK_CGEMM_AVX512_BLOCKS {.mc = 120, .kc = 512, .nc = 2048}
#define GK_ZGEMM_AVX512_BLOCKS {.mc = 120, .kc = 256, .nc = 2048}
/* The AVX-512 float kernels and blocking and the AVX-512 per-token quantization, shared by the avx512, avx512_vnni
 * and zen4 configurations (their int8 kernels and blocks differ). Used inside `#if GEMMKIT_X86`. */
#define GK_AVX512_FLOAT_KERNELS_AND_BLOCKS                                                           \
    .sgemm = &gk_sgemm_kernel_avx512, .dgemm = &gk_dgemm_kernel_avx512,                              \
    .cgemm = &gk_cgemm_kernel_avx512, .zgemm = &gk_zgemm_kernel_avx512,                              \
    .sgemm_blocks = GK_SGEMM_AVX512_BLOCKS, .dgemm_blocks = GK_DGEMM_AVX512_BLOCKS,                  \
    .cgemm_blocks = GK_CGEMM_AVX512_BLOCKS, .zgemm_blocks = GK_ZGEMM_AVX512_BLOCKS,                  \
    .quant = &gk_quant_kernel_avx512

/* The float kernels on the k loop with A's values as broadcast operands of the FMAs (more loads, fewer uops than the
 * vbroadcast loop), for the Xeon cores with three load ports (configs avx512_amx, xeon_amx); cores with two and the
 * Zen cores keep the vbroadcast loop (see docs/decisions.md, avx512_amx: embed). */
#define GK_AVX512_EMBED_FLOAT_KERNELS                                                                \
    .sgemm = &gk_sgemm_kernel_avx512_embed, .dgemm = &gk_dgemm_kernel_avx512_embed,                  \
    .cgemm = &gk_cgemm_kernel_avx512_embed, .zgemm = &gk_zgemm_kernel_avx512_embed

/* The AVX512_BF16 pair kernel (12 x 32 vdpbf16ps) for the AVX-512 paths on CPUs that have it (Cooper Lake, Sapphire
 * Rapids and later, Zen 4 / 5): the sgemm blocks' bytes (a k pair is 4 bytes, as a float), kc in pairs. */
#if defined(GEMMKIT_HAVE_AVX512_BF16)
#define GK_BF16_AVX512_KERNEL                                                                        \
    .bf16 = &gk_bf16_kernel_avx512, .bf16_needs = GEMMKIT_CPU_AVX512_BF16,                           \
    .bf16_blocks = {.mc = 120, .kc = 512, .nc = 1024}
#else
#define GK_BF16_AVX512_KERNEL .bf16 = NULL
#endif
/* The AVX-512 VNNI path's kernels and int8 blocks, shared by its configurations avx512_vnni and xeon_amx */
#define GK_AVX512_VNNI_KERNELS                                                                       \
    .path = GK_PATH_avx512_vnni, .needs = GEMMKIT_CPU_AVX512 | GEMMKIT_CPU_AVX512_VNNI,              \
    .int8 = &gk_int8_kernel_avx512_vnni, GK_BF16_AVX512_KERNEL,                                      \
    .int8_blocks = {.mc = 240, .nc = 4096, .kb = 512, .l2_bytes = 384 << 10, .l3_bytes = 4 << 20,    \
                    .dot_max_m = 16, .kmajor_max_m = 16}

/* The path bases (used inside `#if GEMMKIT_X86`). AVX2: the 256-bit kernels, real and native complex,
 * the int16-widening int8 kernel and the AVX2 per-token quantization (configs avx2, zen2, avx_vnni). */
#define GK_CONFIG_AVX2_BASE                                                                          \
    .path = GK_PATH_avx2, .uarch = "any", .needs = GEMMKIT_CPU_AVX2, .cpu_match = NULL,                    \
    GK_AVX2_KERNELS_AND_BLOCKS, .small = GK_SMALL_AVX2_DEFAULTS, .half_gemv = &gk_half_gemv_avx2,        \
    .hgemm = &gk_type_hgemm_f16c, .wrap = &gk_wrap_kernels_avx2, .qadd = &gk_qadd_kernel_avx2
/* AVX-512 (F/BW/DQ/VL): the 512-bit float kernels, real and native complex, the int16-widening int8
 * kernel and the AVX-512 per-token quantization (configs avx512, avx512_vnni, zen4; each spells its int8 blocks). */
#define GK_CONFIG_AVX512_BASE                                                                        \
    .path = GK_PATH_avx512, .uarch = "any", .needs = GEMMKIT_CPU_AVX512, .cpu_match = NULL,                \
    GK_AVX512_FLOAT_KERNELS_AND_BLOCKS, .int8 = &gk_int8_kernel_avx512, .small = GK_SMALL_AVX512_DEFAULTS,          \
    .half_gemv = &gk_half_gemv_avx2, /* (AVX-512 CPUs run the AVX2 + F16C kernels, and the AVX2 wrap ones) */   \
    .hgemm = &gk_type_hgemm_f16c, .wrap = &gk_wrap_kernels_avx2, .qadd = &gk_qadd_kernel_avx512,         \
    .bool_kernels = &gk_bool_kernels_avx512

#endif
