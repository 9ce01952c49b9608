/* Configuration of the AVX-512 VNNI path on the Intel cores with AMX (family 6, models 8Fh, CFh, ADh, AEh) where the
 * tiles are not in use (an OS that does not grant their state, or GEMMKIT_ARCH=avx512_vnni). */
#include "common.h"
#if GEMMKIT_X86

static int is_xeon_amx(uint32_t id) {
    const uint32_t model = GK_CPU_MODEL(id);
    return GK_CPU_VENDOR(id) == GK_CPU_INTEL && GK_CPU_FAMILY(id) == 6 &&
           (model == 0x8f || model == 0xcf || model == 0xad || model == 0xae);
}

const gk_config_t gk_config_xeon_amx = {
    GK_CONFIG_AVX512_BASE, GK_AVX512_VNNI_KERNELS, .uarch = "xeon_amx", .cpu_match = is_xeon_amx,
    /* the float kernels' broadcast-operand k loop, as on the avx512_amx path: the same cores */
    GK_AVX512_EMBED_FLOAT_KERNELS,
    /* vdpbf16ps does fewer flops a cycle than the float FMA on these cores: bfloat16 products past a few rows and
     * columns are widened onto the float kernel; fewer stay on the pair kernel, which reads half the bytes (see
     * docs/decisions.md, xeon_amx: small.bf16_widen_min_m / n) */
    .small.bf16_widen_min_m = 16, .small.bf16_widen_min_n = 32,
};
#endif
