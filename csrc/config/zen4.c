/* Configuration of the AVX-512 VNNI path tuned for AMD Zen 4 (family 19h, models 10h-1Fh, 60h-74h,
 * 78h-7Bh, A0h-AFh): built from the core's documented caches and datapath, then measured on one. */
#include "common.h"
#if GEMMKIT_X86

/* Against the core the avx512_vnni constants were tuned on: the same L2 and L3, so the float blocks stay
 * (a zmm FMA runs as two 256-bit halves, so the 12 x 32 tile needs half the L2 bandwidth for its B micro-panel); the
 * int8 k block kb is the whole usual depth (a 128 KiB B panel stays in L2 for the row panels; the L1 rule's 256 lost
 * here); the GEMV has no software prefetch, which slows this core's L2 stream prefetcher (see
 * docs/decisions.md, zen4). */
/* Hand blocking kept against the analytical model (csrc/blocking_model.c): it did not lose, and `gemmkit tune`
 * confirmed it (see docs/decisions.md, zen4: hand blocking). */
/* Plain products of one thread's worth in the kernel's `plain` loops up to 320^3 multiply-adds (the table's 200^3
 * elsewhere): B, re-read in place by every block of 6 rows, stays within this core's 1 MiB L2 (see docs/decisions.md,
 * ZEN4_PLAIN_MAX_MACS). */
#define ZEN4_PLAIN_MAX_MACS (320.0 * 320.0 * 320.0)
/* Few rows of C read a plain B in place up to one 12-row panel (the x86 tables: three), more rows pack it: with this
 * core's 1 MiB L2 more panels lose B's block between k blocks (see docs/decisions.md, ZEN4_DIRECT_MAX_ROW_PANELS). */
#define ZEN4_DIRECT_MAX_ROW_PANELS 1
static int is_zen4(uint32_t id) {
    const uint32_t model = GK_CPU_MODEL(id);
    return GK_CPU_VENDOR(id) == GK_CPU_AMD && GK_CPU_FAMILY(id) == 0x19 &&
           ((model >= 0x10 && model <= 0x1f) || (model >= 0x60 && model <= 0x74) ||
            (model >= 0x78 && model <= 0x7b) || (model >= 0xa0 && model <= 0xaf));
}

const gk_config_t gk_config_zen4 = {
    GK_CONFIG_AVX512_BASE, .path = GK_PATH_avx512_vnni, .uarch = "zen4",
    .needs = GEMMKIT_CPU_AVX512 | GEMMKIT_CPU_AVX512_VNNI, .cpu_match = is_zen4, .int8 = &gk_int8_kernel_avx512_vnni,
    GK_BF16_AVX512_KERNEL,
    /* float32 tiny products of more than 8 columns by the AVX2 6 x 16 loop (12 ymm chains), faster here than the
     * 6-row zmm one; double keeps the zmm one but for 9-16 columns (see docs/decisions.md, zen4: tiny kernels) */
    .sgemm = &gk_sgemm_kernel_avx512_ymm_tiny, .dgemm = &gk_dgemm_kernel_avx512_ymm_tiny,
    .int8_blocks = {.mc = 240, .nc = 4096, .kb = 4096, .l2_bytes = 384 << 10, .l3_bytes = 4 << 20,
                    .dot_max_m = 16, .kmajor_max_m = 16},
    /* Tiny products whole in the unpacked kernel up to 32^3 multiply-adds (the untuned table's 10^3 sent 32^3 stacks
     * to the packed path), a plain A up to 64^3 by the 6- and 5-row zmm k loops (kernels/real_zmm_tiny.h); batches
     * past 8 MiB streamed where C's rows are 256 bytes or more (see docs/decisions.md, zen4: tiny limits). */
    .small = GK_SMALL_TUNED_FULL(160.0 * 160.0 * 160.0, 32.0 * 32.0 * 32.0, 64.0 * 64.0 * 64.0, 10.0 * 10.0 * 10.0, 0,
                                 8.0 * (1 << 20), ZEN4_PLAIN_MAX_MACS, ZEN4_DIRECT_MAX_ROW_PANELS),
};
#endif
