/* Configuration of the AArch64 NEON path (every ARMv8-A core): the 8 x 12 sgemm / 8 x 6 dgemm Advanced SIMD
 * kernels (complex by 1m on them) and their blocking, the 16-byte NEON quantized add
 * and the 4-lane NEON per-token quantization; int8 stays portable here. */
#include "common.h"
#if GEMMKIT_ARM

/* sgemm: A block 128 x 256 floats (128 KiB) in L2, B micro-panel 12 x 256 (12 KiB) in a 32-64 KiB L1;
 * dgemm: the same bytes per k step of B (6 doubles = 48 bytes vs 12 floats), A block 128 x 256 doubles. */
#define GK_SGEMM_NEON_BLOCKS {.mc = 128, .kc = 256, .nc = 3072}
#define GK_DGEMM_NEON_BLOCKS {.mc = 128, .kc = 256, .nc = 1536}

/* Small problems: the defaults, but a plain A goes to the tiny kernel up to 64^3 (as on the tuned x86 cores), where its 6-
 * and 5-row k loops read A and B in place (real_neon_tiny.h) near the FMLA bound by a model, not a measurement on ARM
 * hardware (see docs/decisions.md, GK_SMALL_NEON). */
#define GK_SMALL_NEON                                                                                \
    GK_SMALL_TUNED(160.0 * 160.0 * 160.0, 10.0 * 10.0 * 10.0, 64.0 * 64.0 * 64.0, 10.0 * 10.0 * 10.0, 2048, 0)

/* bfloat16 on BFMMLA where the CPU has FEAT_BF16 (the float kernels' bytes per block: A 128 rows x 256 pairs, kc in
 * pairs); without it bfloat16 is widened on the sgemm kernel. */
#define GK_BF16_BFMMLA                                                                               \
    .bf16 = &gk_bf16_kernel_bfmmla, .bf16_needs = GEMMKIT_CPU_BF16, .bf16_blocks = {.mc = 128, .kc = 256, .nc = 3072}

/* The NEON path's base (every AArch64 config is it plus the fields it changes, later designated
 * initializers overriding earlier ones: tests/core/test_config_bases.py checks that each differs only where it
 * says). int8 blocks: A block 128 rows, B blocks of 2048 columns, a 1024-deep k block of B panels. */
#define GK_CONFIG_NEON_BASE                                                                          \
    .path = GK_PATH_neon, .uarch = "any", .needs = GEMMKIT_CPU_NEON, .cpu_match = NULL,                    \
    .sgemm = &gk_sgemm_kernel_neon, .dgemm = &gk_dgemm_kernel_neon, .int8 = &gk_int8_kernel_generic,   \
    .quant = &gk_quant_kernel_neon,                                                                  \
    .sgemm_blocks = GK_SGEMM_NEON_BLOCKS, .dgemm_blocks = GK_DGEMM_NEON_BLOCKS,                      \
    .cgemm_blocks = GK_SGEMM_NEON_BLOCKS, .zgemm_blocks = GK_DGEMM_NEON_BLOCKS,                      \
    .int8_blocks = {.mc = 128, .nc = 2048, .kb = 1024, .l2_bytes = 384 << 10, .l3_bytes = 4 << 20,    \
                    .dot_max_m = 16, .kmajor_max_m = 16},                                            \
    .small = GK_SMALL_NEON, .half_gemv = &gk_half_gemv_generic, GK_BF16_BFMMLA,                        \
    .hgemm = &gk_type_hgemm_neon, .wrap = &gk_wrap_kernels_generic, .qadd = &gk_qadd_kernel_neon

const gk_config_t gk_config_neon = {GK_CONFIG_NEON_BASE};

/* FEAT_DotProd (Neoverse N1 and later, Apple M1 and later): the NEON float kernels and the 8 x 12 SDOT int8
 * kernel (B blocks of 2040 columns: whole 12-column panels; 12 KiB of B panels per k block in L1). */
#define GK_CONFIG_DOTPROD                                                                            \
    GK_CONFIG_NEON_BASE, .path = GK_PATH_dotprod, .needs = GEMMKIT_CPU_NEON | GEMMKIT_CPU_DOTPROD,           \
    .int8 = &gk_int8_kernel_dotprod,                                                                   \
    .int8_blocks = {.mc = 128, .nc = 2040, .kb = 1024, .l2_bytes = 384 << 10, .l3_bytes = 4 << 20,    \
                    .dot_max_m = 16, .kmajor_max_m = 16}
const gk_config_t gk_config_dotprod = {GK_CONFIG_DOTPROD};
#endif

#if GEMMKIT_ARM
/* FEAT_I8MM (Neoverse V1 / N2 / V2, Apple M2 and later): USMMLA 8 x 8 int8 (unsigned A by signed B in one
 * instruction). Chosen over dotprod by CPU family, not by the flag alone: on Apple cores SDOT and the MMLA
 * instructions issue at the same rate, so there the dotprod path stays (the `apple` config below). */
const gk_config_t gk_config_i8mm = {
    GK_CONFIG_NEON_BASE, .path = GK_PATH_i8mm, .needs = GEMMKIT_CPU_NEON | GEMMKIT_CPU_I8MM, .int8 = &gk_int8_kernel_i8mm,
};

/* Apple cores (MIDR implementer 0x61; every Apple arm64 Mac): the dotprod path even where FEAT_I8MM is
 * present (registered before i8mm). */
static int is_apple(uint32_t id) { return GK_CPU_FAMILY(id) == GK_CPU_ARM_APPLE; }
const gk_config_t gk_config_dotprod_apple = {
    GK_CONFIG_DOTPROD, .uarch = "apple", .cpu_match = is_apple,
};
#endif
