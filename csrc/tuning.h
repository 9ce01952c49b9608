/* Internal interfaces of the cache hierarchy (cache_info.c), the analytical blocking model
 * (blocking_model.c) and the validated tuning overrides that build the configuration in use (tuning.c). */
#ifndef GEMMKIT_TUNING_H
#define GEMMKIT_TUNING_H
#include "config.h"

/* One cache level: bytes, ways, line bytes, cores sharing it (1: private); size 0: unknown. */
typedef struct { int64_t size, ways, line, sharing; } gk_cache_level_t;
typedef struct {
    gk_cache_level_t l1, l2, l3;   /* l1: the data cache */
    const char *source;            /* "cpuid", "sysfs", "sysctl", "none" */
} gk_cache_info_t;

/* This CPU's caches, read once (CPUID leaf 4 / 0x8000001D on x86, sysfs on Linux, sysctl on macOS). */
const gk_cache_info_t *gk_cache_info(void);

/* Limits every blocking obeys, whatever its source (model, hand config or tuning file): the packed blocks
 * stay far below the 16 MiB a thread's workspace keeps (GK_WS_KEEP_BYTES). */
#define GK_TUNE_MC_MAX 4096
#define GK_TUNE_KC_MAX 4096
#define GK_TUNE_NC_MAX 16384
#define GK_TUNE_KB_MAX 4096
#define GK_TUNE_BLOCK_BYTES_MAX ((int64_t)8 << 20)
#define GK_MODEL_B_BLOCK_MAX ((int64_t)4 << 20)
#define GK_MODEL_KC_MIN_BYTES 2048 /* a k block at least this many bytes of an A row (blocking_model.c) */
#define GK_MODEL_WIDE_B_STEP 128   /* a real kernel reading this many bytes of B a k step or more (the AVX-512 tiles) */
#define GK_MODEL_WIDE_KC_MIN 512   /* has k blocks of at least this many k steps */
#define GK_MODEL_INT8_KB 4096     /* int8 k block of the model (blocking_model.c), at most GK_TUNE_KB_MAX */
#define GK_TUNE_B_GROUP_MAX 64    /* small.b_group_panels, whatever its source */
#define GK_MODEL_B_GROUP_BYTES 1024 /* the model's group of B panels: this many bytes of each B row (blocking_model.c) */

int gk_model_blocks(const gk_cache_info_t *ci, int mr, int nr, int elem, int complex_native, gk_blocks_t *out);
int gk_model_int8_blocks(const gk_cache_info_t *ci, int mr, int nr, int elem, gk_int8_blocks_t *io);
double gk_model_direct_b_macs(const gk_cache_info_t *ci);
int gk_model_direct_row_panels(const gk_cache_info_t *ci, int table_panels);
double gk_model_ta_strips_min_walk(const gk_cache_info_t *ci, double table_walk);
int gk_model_b_group_panels(const gk_cache_info_t *ci, int panel_row_bytes);

/* The configuration in use built from a registry entry: its hand-written or table values, the model's
 * blocking where it applies, then the accepted overrides of its kernel path. Never freed (a few hundred
 * bytes per change of path or overrides). */
const gk_config_t *gk_effective_config(const gk_config_t *base);
/* The overrides and the model's mode (tuning.c keeps them; it reads no configuration in use: dispatch.c's public
 * entry points pass it in and rebuild it after a change). gk_tuning_set: value of `name` on path `arch`, checked
 * against that path's registry entry `base` (NULL: the path cannot run here). gk_tuning_model_mode: the model's
 * mode set (0-2; else unchanged), the old one returned. gk_tuning_param_get: the value and source in c. */
gemmkit_status_t gk_tuning_set(const gk_config_t *base, const char *arch, const char *name, double value);
void gk_tuning_clear(void);
int gk_tuning_model_mode(int mode);
gemmkit_status_t gk_tuning_param_get(const gk_config_t *c, const char *name, double *value, int *source);
/* Multiply-adds per thread worth splitting a product under configuration c (tuning.c), and under the one in use
 * (dispatch.c; gk_threads_for). */
double gk_tuning_thread_macs(const gk_config_t *c);
double gk_thread_macs(void);

#endif
