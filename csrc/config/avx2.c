/* Configuration of the AVX2 + FMA path (Haswell and later, AMD Zen 1-3): the 256-bit kernels and their
 * blocking (A block in a 512 KiB L2, B block in a share of L3); int8 widens bytes to int16 (exact). */
#include "common.h"
#if GEMMKIT_X86

const gk_config_t gk_config_avx2 = {
    .arch = "avx2", .uarch = "any", .needs = GEMMKIT_CPU_AVX2, .cpu_match = NULL,
    .sgemm = &gk_sgemm_kernel_avx2, .dgemm = &gk_dgemm_kernel_avx2, .int8 = &gk_i8_kernel_avx2,
    .sgemm_blocks = {.mc = 144, .kc = 256, .nc = 4080},
    .dgemm_blocks = {.mc = 96, .kc = 256, .nc = 2040},
    .cgemm_blocks = {.mc = 144, .kc = 256, .nc = 4080},
    .zgemm_blocks = {.mc = 96, .kc = 256, .nc = 2040},
    .int8_blocks = {.mc = 120, .nc = 4096, .kb = 256, .l2_bytes = 384 << 10, .l3_bytes = 4 << 20},
    /* Zen 2: with A packed, a plain B read in place loses to packing it past ~56^3 (B beyond L1):
     * 64^3 double 16.3 vs 15.2 us, float 8.5 vs 8.2 us, quiet core (A^T in place keeps 160^3); the
     * tiny kernel beats the packed path up to 32^3 (batches of 16^3 float: 243 vs 367 ns a product) */
    .small = GK_SMALL_TUNED(56.0 * 56.0 * 56.0, 32.0 * 32.0 * 32.0),
    .qadd = &gk_qadd_kernel_avx2,
};
#endif
