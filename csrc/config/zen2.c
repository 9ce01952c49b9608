/* Configuration of the AVX2 path tuned for AMD Zen 2 (family 17h, models 30h-3Fh, 47h, 60h-7Fh, 84h-87h,
 * 90h-AFh): the AVX2 kernels, sgemm k blocks of 512, and a GEMV without software prefetch (measured here). */
#include "common.h"
#if GEMMKIT_X86

/* The GEMV streams fastest on this core's hardware prefetchers alone; every software prefetch distance tried was
 * slower (see docs/decisions.md, zen2: small.gemv_pf_bytes). */
static int is_zen2(uint32_t id) {
    const uint32_t model = GK_CPU_MODEL(id);
    return GK_CPU_VENDOR(id) == GK_CPU_AMD && GK_CPU_FAMILY(id) == 0x17 &&
           ((model >= 0x30 && model <= 0x3f) || model == 0x47 || (model >= 0x60 && model <= 0x7f) ||
            (model >= 0x84 && model <= 0x87) || (model >= 0x90 && model <= 0xaf));
}

/* sgemm: k blocks of 512 (A block 72 x 512, 144 KiB): fewer passes over C; dgemm's 96 x 256 stays, its longer k block
 * did not pay (see docs/decisions.md, GK_SGEMM_ZEN2_BLOCKS). */
#define GK_SGEMM_ZEN2_BLOCKS {.mc = 72, .kc = 512, .nc = 4080}

const gk_config_t gk_config_zen2 = {
    GK_CONFIG_AVX2_BASE, .uarch = "zen2", .cpu_match = is_zen2,
    .sgemm_blocks = GK_SGEMM_ZEN2_BLOCKS,
    /* With A packed, a plain B read in place up to ~56^3 (past it B leaves L1 and packing wins; A^T in place keeps
     * 160^3); real tiny products whole up to 32^3, up to 64^3 where both operands are read in place (6-row assembly
     * loop); complex ones up to 16^3; batches past 16 MiB (the L3) streamed; B read in place for one 6-row panel at
     * most, as the model gives for a 512 KiB L2 (see docs/decisions.md, zen2: small). */
    .small = GK_SMALL_TUNED_FULL(56.0 * 56.0 * 56.0, 32.0 * 32.0 * 32.0, 64.0 * 64.0 * 64.0, 16.0 * 16.0 * 16.0, 0,
                                 16.0 * (1 << 20), GK_PLAIN_MAX_MACS, 1),
};
#endif
