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

/* Up to 160^3 multiply-adds the real driver skips packing where it can (a plain B under a packed A: up
 * to DIRECT_B macs); up to 4 MR-row panels a plain B streams in place in 16-deep k blocks; few rows x
 * B^T: dot kernel up to 16 rows; GEMV up to 2 rows or 2 columns, each stream prefetched GEMV_PF bytes
 * ahead; real products up to TINY macs (and 32 a side) whole in the unpacked tiny kernel, up to
 * TINY_DIRECT (and 64 a side) where A is plain, complex ones up to TINY_COMPLEX
 * complex macs; batches of tiny products streamed from memory past TINY_STREAM bytes (0: never); an int8
 * plain B read in place rather than its prepacked form up to 4 rows (AVX2 on Zen 2, N = K = 4096: 2.4 vs
 * 3.1 ms at M = 4; from 6 to 16 rows both within 2 %). */
/* Plain products up to 200^3 whole in a kernel's `plain` loops, where the kernel has them (AVX-512, AVX2): on Zen 4,
 * 1 thread, gemmkit.matmul / np.matmul float32 | float64, packed -> plain: 65^3 0.66 -> 0.96 | 0.75 -> 0.95,
 * 72^3 0.75 -> 1.02 | 0.85 -> 1.02, 100^3 0.72 -> 0.93 | 0.78 -> 0.95, 127^3 1.17 -> 1.23 | 1.16 -> 1.20, 160^3
 * 1.05 -> 1.07 | 1.00 -> 1.20, 200^3 0.99 -> 1.05 | 1.01 -> 1.11; past it float64 lost (255^3 1.14 -> 0.93: B
 * re-read from beyond L2 by every block of rows). The AVX2 loops (Zen 4, avx2 path, sides 16-200, 96 shapes: 57 faster
 * than packed by over 3 %, 5 slower: float64 with B >= 200 KiB and 64 rows or more, 64 x 200 x 200 0.93x, 128 x 128 x
 * 200 0.88x) keep the same limit. Products worth more than one thread go to the packed path. */
#define GK_PLAIN_MAX_MACS (200.0 * 200.0 * 200.0)
/* Few rows of C against a plain B read in place (k blocks of skinny_kc) rather than packed up to this many MR-row
 * panels; more rows pack B. The x86 tables: three (four before); where no hand config applies the model
 * keeps them on a core with 2 MiB of L2 or more and takes one elsewhere (csrc/blocking_model.c). Emerald Rapids
 * (Xeon family 6 model 207, a lent VM, gemmkit.matmul / np.matmul, 1 thread, wheels of four and of one panel
 * alternated): in place won at 16 rows (float32 16 x 4096^2 1.48-1.74 vs 1.04-1.08 packed) and 32 (float64 32 x 2048^2 0.82-0.83 vs 0.68-0.79), packing
 * at 48 (float32 48 x 1024 x 4096 0.62-0.77 -> 0.97-1.05, float64 0.65-0.69 -> 0.86-1.25). Zen 4 packs past one
 * panel (csrc/config/zen4.c). AArch64 keeps four: not measured on ARM hardware. */
#if GEMMKIT_ARM
#define GK_DIRECT_MAX_ROW_PANELS 4
#else
#define GK_DIRECT_MAX_ROW_PANELS 3
#endif
/* The AVX2 path's one-panel measurements on Zen 4 (avx2 path, against OpenBLAS's Haswell kernels, the peer an AVX2
 * CPU gets: OPENBLAS_CORETYPE=Haswell), gemmkit.matmul GFLOP/s, three panels in place -> one (NumPy), 1 thread:
 * float32 8 x 4096^2 23.6 -> 35.7 (39.7), 12 x 4096^2 33.3 -> 48.9 (49.9), 16 x 4096^2 34.1 -> 45.4-54.7 (51-61), 16 x
 * 3000^2 41.7 -> 57.4 (56.8), TN 16 x 256 x 3000 56 -> 65 (81); float64 8 x 2048^2 13.4 -> 18.1 (21.8), 12 x 2048^2
 * 17.2 -> 24.4 (22.1), 16 x 2048^2 15.9-16.9 -> 26.4-27.9 (27-28), 16 x 3000^2 22.1 -> 31.5 (28.2); 2 threads float32
 * 16 x 4096^2 48-58 -> 67-88, 12 x 1000^2 59-84 -> 95-118. Up to 6 rows in place stays: packing won 3-10 % there on 1
 * thread but lost 15-30 % on 2 (B streamed once from memory: float64 4 x 2048^2 19.8 -> 16.2, float32 4 x 4096^2 38.3
 * -> 25.0). The same table on Emerald Rapids wanted three (csrc/blocking_model.c): the model picks one or three by the
 * L2 where no hand config applies. */
/* A transposed A in the plain loops: copied in strips past a walk of 8 MiB of pages (csrc/gemm_small.c). */
#define GK_TA_STRIPS_MIN_WALK ((double)(8 << 20))
#define GK_SMALL_TUNED_FULL(DIRECT_B, TINY, TINY_DIRECT, TINY_COMPLEX, GEMV_PF, TINY_STREAM, PLAIN, ROW_PANELS) \
    {.direct_max_macs = 160.0 * 160.0 * 160.0, .direct_b_max_macs = (DIRECT_B),                        \
     .direct_max_row_panels = (ROW_PANELS),                                                           \
     .skinny_kc = 16, .dot_max_m = 16, .gemv_max_m = 2, .gemv_max_n = 2, .gemv_pf_bytes = (GEMV_PF),  \
     .int8_kmajor_over_packed_max_m = 4, .tiny_max_macs = (TINY), .tiny_direct_max_macs = (TINY_DIRECT), \
     .tiny_complex_max_macs = (TINY_COMPLEX), .tiny_stream_min_bytes = (TINY_STREAM),                   \
     .plain_max_macs = (PLAIN), .ta_strips_min_walk = GK_TA_STRIPS_MIN_WALK}
#define GK_SMALL_TUNED(DIRECT_B, TINY, TINY_DIRECT, TINY_COMPLEX, GEMV_PF, TINY_STREAM)              \
    GK_SMALL_TUNED_FULL(DIRECT_B, TINY, TINY_DIRECT, TINY_COMPLEX, GEMV_PF, TINY_STREAM, GK_PLAIN_MAX_MACS,     \
                        GK_DIRECT_MAX_ROW_PANELS)
/* GEMV prefetch 2 KiB: the distance the Zen 5 tuning of the float GEMV found (+25 % at N = K = 4096 over
 * the hardware prefetchers alone). */
#define GK_SMALL_DEFAULTS GK_SMALL_TUNED(160.0 * 160.0 * 160.0, 10.0 * 10.0 * 10.0, 10.0 * 10.0 * 10.0, 10.0 * 10.0 * 10.0, 2048, 0)
/* The x86 paths' defaults for CPUs without a configuration of their own: the tiny limits of their 6-row
 * in-place k loops. AVX2: Zen 2's (csrc/config/zen2.c), which carried to a CPU they were not tuned on:
 * on Zen 4 (avx2 path, 1 thread, GFLOP/s float / double, the generic table -> these): gemmkit.matmul of
 * 16 x 32^3 63 / 35 -> 101 / 52, 1000 x 32^3 64 / 19 -> 100 / 47, 1000 x 16^3 38 / 21 -> 73 / 45, 300 x 48^3
 * 79 / 29 -> 108 / 30-35, 100 x 64^3 89 / 44 -> 107 / 43 (the Zen 3: 1000 x 32^3 float 1.0x NumPy on
 * the generic table, 1.9x on Zen 2's). AVX-512: products up to 32^3 whole in the tiny kernel (Zen 4 measured
 * in csrc/config/zen4.c; by model, on a core with two 512-bit FMA pipes the 6-row zmm loop keeps 6 of the 8
 * FMAs in flight it needs, where packing two 32 x 32 operands costs more than that quarter), a plain A up
 * to 32^3 only (at 64^3 the packed 12 x 32 tile's full rate pays for the packing there). */
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
/* Native complex 3 x 8 cgemm / 3 x 4 zgemm, sizes in the real domain (kc, nc: twice the complex ones):
 * a k step of A and B is as many bytes as the real kernels', so kc 256 complex keeps the B micro-panel
 * at 16 KiB in L1 (Zen 2, 1024^3, 1 thread: kc 192 / 320 / 384 complex 1-2 % slower); A blocks 96 x 256
 * x 8 B (cgemm) and 48 x 256 x 16 B (zgemm) = 192 KiB in L2 (zgemm mc 72: 0.5-1 % slower), B blocks of
 * 2048 / 1024 complex columns (4 MiB: N = 1024 and 2048 split evenly; 2040 left a 4-column sliver
 * that packed A again, 1-2 % slower). */
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
/* AVX2 int8 (bytes widened to int16): k block 256 in L1; B blocks up to 8 MiB of int16 panels (1024
 * columns at K = 4096: a plain B's rows are packed 1 KiB at a time; 4 MiB measured 0.3-0.6 ms slower per
 * call at M = 32..128, N = K = 4096 on Zen 2). Few rows in place (Zen 2, N = K = 4096, thread CPU time):
 * B^T as fast as the packed weight up to 32 rows (12.4 ms at M = 32, 14.5 ms packing per call); a plain B
 * up to 24 rows (12.2 vs 13.6 ms packing per call at M = 24, 16.8 vs 16.3 at 32). */
#define GK_INT8_AVX2_BLOCKS                                                                          \
    {.mc = 120, .nc = 4096, .kb = 256, .l2_bytes = 384 << 10, .l3_bytes = 8 << 20, .dot_max_m = 32,    \
     .kmajor_max_m = 24}

/* sgemm 12 x 32: A block 120 x 512 (240 KiB) in L2, B block 512 x 1024 (2 MiB) in L3 (a 4096-wide B
 * block measured 7 % slower at 2048..4096 on Zen 5: more of it evicted between the A blocks). */
#define GK_SGEMM_AVX512_BLOCKS {.mc = 120, .kc = 512, .nc = 1024}
/* dgemm 12 x 16: the same bytes per block as sgemm (a k step of B is 128 bytes in both). */
#define GK_DGEMM_AVX512_BLOCKS {.mc = 120, .kc = 256, .nc = 1024}
/* Native complex 6 x 16 cgemm / 6 x 8 zgemm (kc, nc in the real domain: twice the complex ones): the real
 * kernels' bytes per block (A 120 x 256 complex x 8 B (cgemm) or x 128 x 16 B (zgemm) = 240 KiB, B 2 MiB). Where
 * the cache sizes are known the model's blocks replace these (csrc/blocking_model.c; Emerald Rapids, 1 thread,
 * cgemm / zgemm 512^3 and 1024^3 with kc 256-768 and mc 96-384 around the model's: none faster by over 2 %). */
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

/* The AVX512_BF16 pair kernel (12 x 32 vdpbf16ps) for the AVX-512 paths on CPUs that have it (Cooper Lake, Sapphire
 * Rapids and later, Zen 4 / 5): the sgemm blocks' bytes (a k pair is 4 bytes, as a float), kc in pairs. */
#if defined(GEMMKIT_HAVE_AVX512_BF16)
#define GK_BF16_AVX512_KERNEL                                                                        \
    .bf16 = &gk_bf16_kernel_avx512, .bf16_needs = GEMMKIT_CPU_AVX512_BF16,                           \
    .bf16_blocks = {.mc = 120, .kc = 512, .nc = 1024}
#else
#define GK_BF16_AVX512_KERNEL .bf16 = NULL
#endif

/* The path bases (used inside `#if GEMMKIT_X86`). AVX2: the 256-bit kernels, real and native complex,
 * the int16-widening int8 kernel and the AVX2 per-token quantization (configs avx2, zen2, avx_vnni). */
#define GK_CONFIG_AVX2_BASE                                                                          \
    .arch = "avx2", .uarch = "any", .needs = GEMMKIT_CPU_AVX2, .cpu_match = NULL,                    \
    GK_AVX2_KERNELS_AND_BLOCKS, .small = GK_SMALL_AVX2_DEFAULTS, .half_gemv = &gk_half_gemv_avx2
/* AVX-512 (F/BW/DQ/VL): the 512-bit float kernels, real and native complex, the int16-widening int8
 * kernel and the AVX-512 per-token quantization (configs avx512, avx512_vnni, zen4; each spells its int8 blocks). */
#define GK_CONFIG_AVX512_BASE                                                                        \
    .arch = "avx512", .uarch = "any", .needs = GEMMKIT_CPU_AVX512, .cpu_match = NULL,                \
    GK_AVX512_FLOAT_KERNELS_AND_BLOCKS, .int8 = &gk_int8_kernel_avx512, .small = GK_SMALL_AVX512_DEFAULTS,          \
    .half_gemv = &gk_half_gemv_avx2 /* (AVX-512 CPUs run the AVX2 + F16C kernels) */

#endif
