/* Configuration of the AVX-512 VNNI path tuned for AMD Zen 4 (family 19h, models 10h-1Fh, 60h-74h,
 * 78h-7Bh, A0h-AFh): built from the core's documented caches and datapath, not yet measured on one. */
#include "common.h"
#if GEMMKIT_X86

/* Zen 4 against the Zen 5 core the avx512_vnni constants were measured on (AMD's Software Optimization
 * Guide for family 19h; BLIS's zen4 configuration, read for comparison, blocks its 32 x 12 sgemm with
 * KC 480, close to our 512):
 *  - L2 1 MiB and L3 32 MiB per CCD as on Zen 5: the float A / B blocks stay (GK_*_AVX512_BLOCKS);
 *    a 512-bit FMA runs as two 256-bit halves on the 2 FMA pipes, so the 12 x 32 tile's k step takes
 *    twice the cycles and the B micro-panel it reads from L2 (kc 512: 64 KiB) needs half the bandwidth.
 *  - int8 k block kb: 4096 (the whole depth of the usual chunk; a B panel of 128 KiB then stays in L2 for the
 *    row panels). The L1 rule (kb x 32 B sub-panel in the 32 KiB L1D: kb 256) lost on this core: the
 *    per-token product K = N = 4096 (packed weight, 1 thread, thread CPU time, best of 3-4, the weight
 *    flushed from L3 before each call) M = 16 2.16-2.41 -> 1.66-1.78 ms, M = 128 11.8-12.0 -> 10.3-10.5 ms;
 *    gemm_u8s8s32 2048^3 379-382 -> 409-413 GOP/s; 512^3 within noise (308-376 vs 334-364); a loaded host.
 *  - GEMV: no software prefetch. Zen 4 streamed B at 15 GB/s with the 2 KiB prefetch where NumPy reached
 *    27.6 GB/s (issue 14); on Zen 2, whose L2 stream prefetcher is the same design, every prefetch distance
 *    was slower than none (csrc/config/zen2.c). */
/* Hand blocking against the analytical model (csrc/blocking_model.c, which every config without a
 * hand-written one now takes), measured on a Zen 4 (EPYC, family 25 model 17, KVM guest, 1 thread pinned,
 * bench --blocking hand / model, medians of 3 runs, GFLOP/s, a shared and busy host: runs of identical
 * settings spread 5-8 %): sgemm 1024^3 104.0 vs 98.3 (model 1224 x 160 x 6528), 2048^3 107.0 vs 98.4;
 * cgemm 1024^3 105.0 vs 96.4; dgemm 1024^3 44.2 vs 41.3 (model 768 x 128); zgemm 1024^3 44.3 vs 41.6. With
 * the model's k floor (384 x 512 x 2048, dgemm 384 x 256), 2 runs each: level within the noise (sgemm 1024^3
 * 94.8 vs 98.1, dgemm 36.8 vs 38.5, cgemm 103.0 vs 105.0, zgemm 40.8 vs 40.9; -8 % .. +9 % over the table).
 * The hand values stay here (they did not lose); `gemmkit tune` on this core confirmed them (no block beat
 * them by 2 %; docs/performance/zen4.md, "Notes on this CPU"). */
/* Plain products of one thread's worth in the kernel's `plain` loops up to 320^3 multiply-adds (the table's
 * 200^3 elsewhere), while B, re-read in place by every block of 6 rows, stays within this core's 1 MiB L2.
 * gemmkit.matmul / np.matmul, 1 thread, both limits interleaved in one process, packed -> plain: float32 224^3
 * 1.08 -> 1.15, 256^3 1.06 -> 1.13, 320^3 1.07 -> 1.14; float64 224^3 1.04 -> 1.14, 256^3 1.08 -> 1.20, 320^3
 * 1.01-1.05 -> 1.12-1.15. Past it B outgrows L2 and the result turns on the L3 this core shares: float64 384^3
 * 1.05 -> 1.05 and 1.03 -> 0.97, 512^3 1.05 -> 1.08 and 1.04 -> 0.95 (two runs); float32 512^3 1.10 -> 1.14 and
 * 1.12 -> 1.09. */
#define ZEN4_PLAIN_MAX_MACS (320.0 * 320.0 * 320.0)
/* Few rows of C read a plain B in place up to one 12-row panel (the x86 tables: three), more rows pack it.
 * gemmkit.matmul / np.matmul, 1 thread, builds alternated, four panels -> one: float32 32 x 2048^2 0.90 -> 1.27,
 * 48 x 2048^2 0.72 -> 1.24, 40 x 4096^2 0.92 -> 1.41, 16 x 4096^2 1.27 -> 1.57, float64 32 x 2048^2 0.69 -> 1.04,
 * 48 x 1024 x 4096 0.60 -> 1.02, 16 x 4096^2 0.92 -> 1.10; the avx2 path (6-row panels) float32 24 x 2048^2 0.72
 * -> 1.27, 8 x 1024^2 0.76 -> 1.27, float64 16 x 4096^2 0.65 -> 1.02; 2 threads alike. No panel (B always packed)
 * was mixed (float32 8 x 4096^2 1.90 -> 1.61, 4 x 2048^2 1.13 -> 1.24). */
#define ZEN4_DIRECT_MAX_ROW_PANELS 1
static int is_zen4(uint32_t id) {
    const uint32_t model = GK_CPU_MODEL(id);
    return GK_CPU_VENDOR(id) == GK_CPU_AMD && GK_CPU_FAMILY(id) == 0x19 &&
           ((model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0x74) ||
            (model >= 0x78 && model <= 0x7b) || (model >= 0xa0 && model <= 0xaf));
}

const gk_config_t gk_config_zen4 = {
    GK_CONFIG_AVX512_BASE, .arch = "avx512_vnni", .uarch = "zen4",
    .needs = GEMMKIT_CPU_AVX512 | GEMMKIT_CPU_AVX512_VNNI, .cpu_match = is_zen4, .int8 = &gk_int8_kernel_avx512_vnni,
    GK_BF16_AVX512_KERNEL,
    /* float32 tiny products of more than 8 columns by the AVX2 6 x 16 loop (12 ymm chains), 2-10 % faster than the
     * 6-row zmm one (gemmkit.matmul, 1 thread, GFLOP/s zmm -> ymm: 16 x 32^3 91-93 -> 99-102, 1000 x 32^3
     * 96-97 -> 100-104, 8 x 64^3 105-107 -> 110-111, 300 x 48^3 86-102 -> 107-108); double keeps the zmm one
     * (level or ahead: 100 x 64^3 49-53 vs 42-51) but for 9-16 columns (1000 x 16^3 37.7 -> 42.6-43.0) */
    .sgemm = &gk_sgemm_kernel_avx512_ymm_tiny, .dgemm = &gk_dgemm_kernel_avx512_ymm_tiny,
    .int8_blocks = {.mc = 240, .nc = 4096, .kb = 4096, .l2_bytes = 384 << 10, .l3_bytes = 4 << 20,
                    .dot_max_m = 16, .kmajor_max_m = 16},
    /* Tiny products whole in the unpacked kernel up to 32^3 multiply-adds (the 10^3 of the untuned table sent
     * 32^3 stacks to the packed path): gemmkit.matmul of stacks, 1 thread, interleaved with np.matmul on
     * this core, two alternations: 1000 x 32^3 float 0.54-0.55x -> 0.79-0.80x NumPy, double 0.58-0.60x ->
     * 0.73-0.74x. With the 6- and 5-row zmm k loop (kernels/real_zmm_tiny.h), a plain A up to 64^3, and
     * batches past 8 MiB streamed where C's rows are 256 bytes or more (next product prefetched, C
     * past the caches), 1 thread, GFLOP/s gemmkit / NumPy before -> after: 1000 x 32^3 float 92.6 / 105 -> 96.9 /
     * 105, double 34.0 / 48.2 -> 45.2 / 46.7; 300 x 48^3 float 61.2 / 110 -> 82.7-101 / 104-110, double
     * 31.6 / 48.4 -> 41.2-44.1 / 34.4-50.1; 100 x 64^3 float 91.4 / 112 -> 105 / 113, double 43.5 / 51.0
     * -> 48.6-49.8 / 42.8-50.8. Streaming 1000 x
     * 32^3 float (12 MiB) measured neutral (96.1 vs 97.5). */
    .small = GK_SMALL_TUNED_FULL(160.0 * 160.0 * 160.0, 32.0 * 32.0 * 32.0, 64.0 * 64.0 * 64.0, 10.0 * 10.0 * 10.0, 0,
                                 8.0 * (1 << 20), ZEN4_PLAIN_MAX_MACS, ZEN4_DIRECT_MAX_ROW_PANELS),
};
#endif
