/* gemmkit's introspection and tuning entries: configurations, kernels, caches, the blocking model and tuning
 * overrides, exported with the API for gemmkit's own Python layer, its tests and `gemmkit tune`; not the GEMM API. */
#ifndef GEMMKIT_INTROSPECT_H
#define GEMMKIT_INTROSPECT_H
#include "gemmkit.h"
#ifdef __cplusplus
extern "C" {
#endif

/* The count GEMMKIT_NUM_THREADS's text gives: a whole decimal number from 1 to the pool's maximum (256),
 * blanks (spaces, tabs) around it allowed; 0 for anything else (NULL, empty, 3abc, 2.5, 0, -1), which
 * then means the default. */
GEMMKIT_API int gemmkit_parse_num_threads(const char *text);

/* The configurations (kernel path + the microarchitecture its constants are tuned for, "any" for the
 * untuned ones), i = 0 .. count-1 in the order dispatch tries them, with the GEMMKIT_CPU_* bits each needs. */
GEMMKIT_API int gemmkit_config_count(void);
GEMMKIT_API gemmkit_status_t gemmkit_config_at(int i, const char **arch, const char **uarch, uint32_t *needs);
/* Every field of configuration i as "name=value" lines (kernels by name, "-" for none) into buf of size
 * bytes; gemmkit_invalid_arguments when i is out of range or buf too small. */
GEMMKIT_API gemmkit_status_t gemmkit_config_describe(int i, char *buf, size_t size);
/* The configuration dispatch picks (among all paths) for a CPU given by vendor (1 AMD, 2 Intel, 0 other),
 * display family and model and GEMMKIT_CPU_* features, as GEMMKIT_UARCH = `uarch` (NULL or "": unset)
 * would make it; pure (no CPUID, no environment), for tests and tools. */
GEMMKIT_API gemmkit_status_t gemmkit_config_for_cpu(uint32_t vendor, uint32_t family, uint32_t model,
                                                    uint32_t features, const char *uarch, const char **arch,
                                                    const char **uarch_out);
/* The GEMV paths of the configuration in use: up to max_m rows or max_n columns of C, each stream of the
 * big operand prefetched prefetch_bytes ahead (0: the hardware prefetchers alone). */
GEMMKIT_API void gemmkit_gemv_info(int *max_m, int *max_n, int *prefetch_bytes);
/* This CPU's vendor (1 AMD, 2 Intel, 0 other), display family and model, as dispatch sees them. */
GEMMKIT_API void gemmkit_cpu_identity(uint32_t *vendor, uint32_t *family, uint32_t *model);
/* CPU feature names and their GEMMKIT_CPU_* bits, i = 0 .. (NULL name past the end). */
GEMMKIT_API const char *gemmkit_cpu_feature_name(int i, uint32_t *bit);
/* What the configuration in use runs for one operation ("sgemm", "dgemm", "cgemm", "zgemm", "int8", "bf16", and
 * "int8_short_k": the int8 kernel for a K just past one of int8's k groups, gemmkit_invalid_arguments where none):
 * kernel name, micro-tile, cache blocks (int8: kc = k per exact chunk, kb = k block in L1, k_group =
 * k values interleaved per packed group, elem = bytes per packed element), the tuning target. */
typedef struct {
    const char *kernel, *uarch;
    int mr, nr, k_group, elem;
    int64_t mc, kc, nc, kb;
} gemmkit_kernel_info_t;
GEMMKIT_API gemmkit_status_t gemmkit_kernel_info(const char *op, gemmkit_kernel_info_t *info);

/* The name of the quantize kernel the path in use runs. */
GEMMKIT_API const char *gemmkit_quantize_kernel_name(void);

/* ---- cache hierarchy, analytical blocking and tuning overrides (csrc/cache_info.c, blocking_model.c,
 * tuning.c; `gemmkit tune`) ----------------------------------------------------------------------- */
/* One cache level: bytes, ways, line bytes, cores sharing it (1: private); size 0: unknown. */
typedef struct { int64_t size, ways, line, sharing; } gemmkit_cache_level_t;
/* This CPU's L1 data, L2 and L3 caches as read at run time (source: "cpuid", "sysfs", "sysctl", "none"). */
GEMMKIT_API gemmkit_status_t gemmkit_cache_hierarchy(gemmkit_cache_level_t levels[3], const char **source);
/* The analytical model's MC, KC, NC (out[0..2]) for an MR x NR kernel of elem-byte values (complex_native:
 * a native complex kernel, kc and nc in the real domain) on the given hierarchy; nc stays fallback_nc
 * without an L3. int8: out = k block, A block bytes, B block bytes. Pure; gemmkit_unimplemented when L1
 * or L2 is unknown. */
GEMMKIT_API gemmkit_status_t gemmkit_model_real_blocks(const gemmkit_cache_level_t levels[3], int mr, int nr,
                                                       int elem, int complex_native, int64_t fallback_nc,
                                                       int64_t out[3]);
GEMMKIT_API gemmkit_status_t gemmkit_model_int8_blocks(const gemmkit_cache_level_t levels[3], int mr, int nr,
                                                       int elem, int64_t out[3]);
/* The model's small-problem limits on the given hierarchy: out[0] small.direct_b_max_macs (0: L1 unknown), out[1]
 * small.direct_max_row_panels for a path table of table_row_panels (1-8), out[2] small.ta_strips_min_walk for a table
 * of table_walk bytes (> 0) (0: L2 unknown). Pure. */
GEMMKIT_API gemmkit_status_t gemmkit_model_small_limits(const gemmkit_cache_level_t levels[3], int table_row_panels,
                                                        double table_walk, double out[3]);
/* Overrides of kernel path `arch`'s parameters (names: gemmkit_param_name): every value is checked
 * (range, integer where it counts, multiples of MR / NR, packed blocks within the workspace limits);
 * gemmkit_invalid_arguments (nothing changed) when it is not acceptable. They never change the kernels.
 * Not thread-safe: set them before calls run. */
GEMMKIT_API gemmkit_status_t gemmkit_tuning_set(const char *arch, const char *name, double value);
GEMMKIT_API void gemmkit_tuning_clear(void);
/* Where the blocking comes from: 0 tables and hand configs only, 1 (default) the model for every
 * configuration without a hand-written one, 2 the model everywhere; returns the previous mode (mode -1:
 * only asks). */
GEMMKIT_API int gemmkit_blocking_model(int mode);
/* The parameters, i = 0 .. count-1, and their value in the configuration in use with its source
 * (0 path table, 1 hand config, 2 model, 3 tuning override). */
GEMMKIT_API int gemmkit_param_count(void);
GEMMKIT_API const char *gemmkit_param_name(int i);
GEMMKIT_API gemmkit_status_t gemmkit_param_get(const char *name, double *value, int *source);

#ifdef __cplusplus
}
#endif
#endif /* GEMMKIT_INTROSPECT_H */
