/* Configuration of the AMX path (Xeon Sapphire Rapids, Emerald Rapids and later): the AVX-512 VNNI path with
 * the AMX int8 kernel (32 x 32 tiles of tdpbusd) and the float kernels' broadcast-operand k loop. */
#include "common.h"
#if GEMMKIT_X86 && defined(GEMMKIT_HAVE_AMX)

const gk_config_t gk_config_avx512_amx = {
    GK_CONFIG_AVX512_BASE, .path = GK_PATH_avx512_amx,
    .needs = GEMMKIT_CPU_AVX512 | GEMMKIT_CPU_AVX512_VNNI | GEMMKIT_CPU_AMX_INT8,
    .int8 = &gk_int8_kernel_amx,
    /* K just past one 64-byte group: VNNI's 4-byte groups, where AMX would pack A for a second group mostly empty */
    .int8_short_k = &gk_int8_kernel_avx512_vnni,
    /* bfloat16 on 32 x 32 tiles of tdpbf16ps: deep k blocks (2,048 pairs) and wide B blocks (4,096 columns), since
     * at the tiles' rate each pass of C per k block, and each packing of A's rows again per B block, costs more than
     * the micro-panels read from L2 and L3 rather than L1; an A block of 128 rows */
    .bf16 = &gk_bf16_kernel_amx, .bf16_needs = GEMMKIT_CPU_AMX_BF16, .bf16_blocks = {.mc = 128, .kc = 2048, .nc = 4096},
    /* the float kernels' broadcast-operand k loop: these cores have three load ports */
    GK_AVX512_EMBED_FLOAT_KERNELS,
    .int8_blocks = {.mc = 256, .nc = 4096, .kb = 1024, .l2_bytes = 512 << 10, .l3_bytes = 4 << 20,
                    .dot_max_m = 16, .kmajor_max_m = 16},
};
#endif
