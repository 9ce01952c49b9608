/* Configuration of the AMX path (Xeon Sapphire Rapids, Emerald Rapids and later): the AVX-512 VNNI path with
 * the AMX int8 kernel (32 x 32 tiles of tdpbusd) and the float kernels' broadcast-operand k loop. */
#include "common.h"
#if GEMMKIT_X86 && defined(GEMMKIT_HAVE_AMX)

const gk_config_t gk_config_avx512_amx = {
    GK_CONFIG_AVX512_BASE, .arch = "avx512_amx",
    .needs = GEMMKIT_CPU_AVX512 | GEMMKIT_CPU_AVX512_VNNI | GEMMKIT_CPU_AMX_INT8,
    .int8 = &gk_int8_kernel_amx,
    /* bfloat16 on 32 x 32 tiles of tdpbf16ps: an A block of 256 rows x 256 pairs (256 KiB) in L2, each B micro-panel
     * (32 columns x 256 pairs, 32 KiB) in L1 while every A panel passes it */
    .bf16 = &gk_bf16_kernel_amx, .bf16_needs = GEMMKIT_CPU_AMX_BF16, .bf16_blocks = {.mc = 256, .kc = 256, .nc = 1024},
    /* The float kernels on the k loop with A's values as broadcast operands of the FMAs (26 loads and 26 uops
     * a k step where the vbroadcast loop has 14 loads and 38 uops): these cores have three load ports. Emerald
     * Rapids, 1 thread, gemmkit.matmul on this path and on avx512_vnni (the vbroadcast loop) interleaved in one
     * process, two runs (a slow spell of the VM, a fast one), embed / vbroadcast: float32 256^3 1.18 / 0.95,
     * 1024^3 1.05 / 1.01, 2048^3 1.04 / 1.00; float64 256^3 1.11 / 1.02, 1024^3 1.01 / 1.01, 2048^3 1.03 / 1.05;
     * complex64 512^3-1024^3 1.01 / 1.03; complex128 512^3 1.02 / 0.99, 1024^3 1.03 / 1.01. Cores with two load
     * ports (Skylake-SP to Ice Lake-SP: 26 loads take 13 cycles of the 12-cycle k step) and the Zen cores keep
     * the vbroadcast loop: not measured there (llvm-mca: skylake-avx512 92 -> 87-90 % of the FMA bound). */
    .sgemm = &gk_sgemm_kernel_avx512_embed, .dgemm = &gk_dgemm_kernel_avx512_embed,
    .cgemm = &gk_cgemm_kernel_avx512_embed, .zgemm = &gk_zgemm_kernel_avx512_embed,
    .int8_blocks = {.mc = 256, .nc = 4096, .kb = 1024, .l2_bytes = 512 << 10, .l3_bytes = 4 << 20,
                    .dot_max_m = 16, .kmajor_max_m = 16},
};
#endif
