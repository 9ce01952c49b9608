/* The per-token activation quantization's kernel interface (csrc/quantize.c drives it,
 * csrc/kernels/quantize_*.c implement it): the kernel of a run of tokens per input type, and every ISA's table. */
#ifndef GEMMKIT_QUANTIZE_H
#define GEMMKIT_QUANTIZE_H

#include "platform.h"
#include "include/gemmkit.h"

/* M tokens of K values each (in_type as gemmkit_quantize_per_token; token i at x + i * ldx elements, its
 * bytes at q + i * ldq; smooth NULL or K floats applied as smooth_mode says): writes the bytes and scale[i]
 * with the formula of include/gemmkit.h, bit for bit the same on every path. */
typedef void (*gk_quant_rows_fn)(int64_t M, int64_t K, const void *x, int64_t ldx, const float *smooth,
                                 int smooth_mode, int8_t *q, int64_t ldq, float *scale);
typedef struct {
    const char *name;
    gk_quant_rows_fn rows[3]; /* by in_type - 1: float32, float16, bfloat16 */
    /* the same for an x held in the caches (GK_QZ_IN_CACHE_BYTES), where it is faster; NULL: rows always */
    gk_quant_rows_fn rows_in_cache[3];
} gk_quant_kernel_t;
extern const gk_quant_kernel_t gk_quant_kernel_generic;
#if GEMMKIT_X86
extern const gk_quant_kernel_t gk_quant_kernel_avx2, gk_quant_kernel_avx512;
#endif
#if GEMMKIT_ARM
extern const gk_quant_kernel_t gk_quant_kernel_neon;
#endif

#endif /* GEMMKIT_QUANTIZE_H */
