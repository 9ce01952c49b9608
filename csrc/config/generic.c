/* Configuration of the portable path: the C microkernels every build has, and their blocking (sized
 * for a 32 KiB L1 / 512 KiB L2 core); used on non-x86 targets and on x86 CPUs without AVX2. */
#include "common.h"

const gk_config_t gk_config_generic = {
    .path = GK_PATH_generic, .uarch = "any", .needs = 0, .cpu_match = NULL,
    .sgemm = &gk_sgemm_kernel_generic, .dgemm = &gk_dgemm_kernel_generic, .int8 = &gk_int8_kernel_generic,
    .sgemm_blocks = {.mc = 128, .kc = 256, .nc = 2048},
    .dgemm_blocks = {.mc = 128, .kc = 256, .nc = 2048},
    .cgemm_blocks = {.mc = 128, .kc = 256, .nc = 2048},
    .zgemm_blocks = {.mc = 128, .kc = 256, .nc = 2048},
    .int8_blocks = {.mc = 128, .nc = 2048, .kb = 1024, .l2_bytes = 384 << 10, .l3_bytes = 4 << 20,
                    .dot_max_m = 16, .kmajor_max_m = 16},
    .small = GK_SMALL_DEFAULTS,
    .quant = &gk_quant_kernel_generic,
    .half_gemv = &gk_half_gemv_generic,
    .hgemm = &gk_type_hgemm, .wrap = &gk_wrap_kernels_generic, .qadd = &gk_qadd_kernel_generic,
    /* bfloat16 packed at its own width (half the bytes of widened panels), subnormals kept; blocks of the sgemm
     * blocks' bytes, kc in pairs */
    .bf16 = &gk_bf16_kernel_generic, .bf16_blocks = {.mc = 128, .kc = 128, .nc = 2048},
};
