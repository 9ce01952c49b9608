/* The per-CPU configuration: the kernels a kernel path uses and the blocking and thresholds tuned for a
 * microarchitecture (gk_config_t; entries in csrc/config/), the registry's configs, CPU identity, the one in use. */
#ifndef GEMMKIT_CONFIG_H
#define GEMMKIT_CONFIG_H

#include "platform.h"
#include "kernel.h"
#include "quantize.h"
#include "qadd.h"
#include "small_params.h"
#include "paths.h"
#include "include/gemmkit.h"

/* Cache blocking of the Goto loops, in the kernel's element units: an MC x KC block of A in L2, a
 * KC x NC block of B in L3 (as BLIS's cntx blocksizes). */
typedef struct { int64_t mc, kc, nc; } gk_blocks_t;

/* int8 blocking: MC/NC caps, the k block KB inside an exact chunk (a KB x NR sub-panel of B stays in
 * L1), the L2/L3 byte budgets the A and B blocks are scaled to for a given packed depth, and the rows up
 * to which the few-row paths read B in place instead (tuned with the kernel's dot functions). */
typedef struct {
    int64_t mc, nc, kb;
    int64_t l2_bytes, l3_bytes;
    int64_t dot_max_m;    /* few rows x B^T: B read in place (kernel->dot) up to this M (<= 32) */
    int64_t kmajor_max_m; /* few rows x plain B: in place (kernel->dot_kmajor) up to this M (<= 32) */
} gk_int8_blocks_t;

/* Small-problem thresholds of the middle-end (csrc/gemm_small.c and the driver): the fields of csrc/small_params.h. */
typedef struct {
#define GK_SMALL_FIELD(f, T, ...) T f;
    GK_SMALL_TUNED_PARAMS(GK_SMALL_FIELD)
    GK_SMALL_FIXED_PARAMS(GK_SMALL_FIELD)
#undef GK_SMALL_FIELD
} gk_small_t;

/* One configuration: the kernels an ISA path uses and the constants tuned for a microarchitecture.
 * Dispatch walks the registry (best first) and takes the first whose features the CPU has and whose
 * CPU match (vendor/family/model) holds; GEMMKIT_ARCH names the path (`arch`). */
/* Kernel families of other headers, named here by their struct tags (csrc/driver.h defines them). */
struct gk_real_type;
struct gk_wrap_kernels;
extern const struct gk_real_type gk_type_hgemm;
extern const struct gk_wrap_kernels gk_wrap_kernels_generic;
#if GEMMKIT_X86
extern const struct gk_real_type gk_type_hgemm_f16c;
extern const struct gk_wrap_kernels gk_wrap_kernels_avx2;
#endif
#if GEMMKIT_ARM
extern const struct gk_real_type gk_type_hgemm_neon;
#endif

typedef struct gk_config {
    gk_path_t path;            /* the kernel path (csrc/paths.h; its name is GEMMKIT_ARCH's) */
    const char *uarch;         /* what the constants are tuned for, e.g. "zen5", "any" */
    uint32_t needs;            /* GEMMKIT_CPU_* bits */
    int (*cpu_match)(uint32_t vendor_family_model); /* NULL: any CPU with the features */
    const gk_real_kernel_t *sgemm, *dgemm;
    const gk_real_kernel_t *cgemm, *zgemm; /* native complex kernels; NULL: 1m on sgemm / dgemm */
    const gk_int8_kernel_t *int8;
    /* Optional: the int8 kernel for a K just past one of int8's k groups (gk_int8_kernel_for), narrower groups
     * where int8's would pack A and multiply a second group of mostly zero padding (AMX); NULL: int8 always */
    const gk_int8_kernel_t *int8_short_k;
    gk_blocks_t sgemm_blocks, dgemm_blocks, cgemm_blocks, zgemm_blocks;
    gk_int8_blocks_t int8_blocks;
    gk_small_t small;
    const gk_quant_kernel_t *quant; /* per-token quantization (csrc/quantize.c); NULL: the generic one */
    /* bfloat16 products on a pair kernel (gk_real_kernel_t.k_pair_group) where the CPU has bf16_needs too (a path
     * spans CPUs with and without bfloat16 instructions); NULL or lacking: widened to float on the sgemm kernel */
    const gk_real_kernel_t *bf16;
    uint32_t bf16_needs;
    gk_blocks_t bf16_blocks;          /* in k pairs (kc) */
    const gk_half_gemv_t *half_gemv;  /* few rows / columns of 16-bit products in place; NULL: packed */
    const struct gk_real_type *hgemm; /* float16 products: the type whose packers convert (F16C, Advanced SIMD or C) */
    const struct gk_wrap_kernels *wrap; /* wrap-around integer products (int16 to uint64) */
    const gk_qadd_kernel_t *qadd;     /* the quantized add */
    const gk_bool_kernels_t *bool_kernels; /* the bool product's; NULL: the portable ones */
} gk_config_t;

/* The int8 kernel of cfg for products of depth K: int8, or int8_short_k where K lies in (g, 3 g / 2] of int8's k
 * group g (packed weights are made and read by the same rule). */
static inline const gk_int8_kernel_t *gk_int8_kernel_for(const gk_config_t *cfg, int64_t K) {
    const gk_int8_kernel_t *k = cfg->int8;
    return cfg->int8_short_k && K > k->kgroup && 2 * K <= 3 * k->kgroup ? cfg->int8_short_k : k;
}

extern const gk_config_t gk_config_generic;
#if GEMMKIT_X86
extern const gk_config_t gk_config_avx2, gk_config_avx512, gk_config_avx512_vnni;
extern const gk_config_t gk_config_zen2, gk_config_zen4, gk_config_xeon_amx; /* tuned: selected by cpu_match */
#if defined(GEMMKIT_HAVE_AVX_VNNI)
extern const gk_config_t gk_config_avx_vnni;
#endif
#if defined(GEMMKIT_HAVE_AMX)
extern const gk_config_t gk_config_avx512_amx;
#endif
#endif
#if GEMMKIT_ARM
extern const gk_config_t gk_config_neon, gk_config_dotprod, gk_config_i8mm, gk_config_dotprod_apple;
#endif

/* CPU identity for configs' cpu_match: (vendor << 24) | (family << 12) | model (display values). */
#define GK_CPU_AMD 1u
#define GK_CPU_INTEL 2u
/* aarch64: vendor 0, family = the MIDR implementer (0x41 Arm, 0x61 Apple, ...), model = the part number */
#define GK_CPU_ARM_APPLE 0x61u
#define GK_CPU_VENDOR(id) ((id) >> 24)
#define GK_CPU_FAMILY(id) (((id) >> 12) & 0xfffu)
#define GK_CPU_MODEL(id) ((id) & 0xfffu)
uint32_t gk_cpu_id(void);

/* The configuration in use (GEMMKIT_ARCH / gemmkit_set_arch, else the best for this CPU). */
const gk_config_t *gk_config(void);
/* Its bfloat16 pair kernel where this CPU runs it (bf16_needs), else NULL (bfloat16 widened on sgemm). */
const gk_real_kernel_t *gk_bf16_kernel(const gk_config_t *c);

#endif /* GEMMKIT_CONFIG_H */
