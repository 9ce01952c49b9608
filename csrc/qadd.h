/* The quantized elementwise add's kernel interface (csrc/qadd.c drives it, csrc/kernels/qadd_*.c implement
 * it): the parameters precomputed per call, the run kernels of each ISA and their selection by kernel path. */
#ifndef GEMMKIT_QADD_H
#define GEMMKIT_QADD_H

#include "platform.h"
#include "include/gemmkit.h"

/* Everything a run kernel needs, precomputed once per call by csrc/qadd.c (single-value scales and
 * zero points; the formulas are in include/gemmkit.h). */
typedef struct {
    int formula;                   /* gemmkit_qadd_formula_t */
    int a_signed, b_signed;        /* input element types: 1 = int8, 0 = uint8 */
    int32_t out_min, out_max;      /* output type's range */
    /* GEMMKIT_QADD_DIRECTML */
    float a_scale, b_scale, out_scale;
    int32_t a_zp, b_zp, out_zp;
    int dml_needs_clamp;           /* some input may drive |quotient| to 2^30 or overflow float32 on the
                                    * way: the SIMD kernels clamp it (else they may skip that step) */
    /* How the SIMD kernels compute DirectML's float form, never changing a byte: dividing; or, only
     * without dml_needs_clamp, multiplying by out_scale_inv = 1 / out_scale (float32) where that is exact
     * or csrc/qadd.c found the same bytes for all 65536 input pairs; or, found so too, rounding
     * fma(b - zb, dml_rb, (a - za) * dml_ra) (dml_ra / dml_rb = a_scale / out_scale, b_scale / out_scale
     * in float32) before adding the output zero point */
    int dml_form;
    float out_scale_inv, dml_ra, dml_rb;
    /* GEMMKIT_QADD_ONNXRUNTIME: the ratios, which input's product comes first (1: A's, when A is
     * broadcast along the last axis of size > 1; 0: B's) and the fixed part that goes with it */
    float ra, rb, ort_fixed;
    int ort_a_first;
    /* Either formula in 16-bit fixed point, set by csrc/qadd.c only after the kernel's fixed-point form
     * gave its float form's bytes for all 65536 input pairs of these parameters (fx_ok):
     *   x' = input byte ^ (0x80 if int8), P(x') = round((x' << 7) * m / 2^15)  (vpmulhrsw, m = fx_ma / fx_mb)
     *   t = sat16(sat16(P(a') + P(b')) + fx_add), output byte = sat_u8(t >> fx_shift) ^ (0x80 if int8) */
    int fx_ok;
    int32_t fx_shift, fx_ma, fx_mb, fx_add;
    /* ... or rounding half to even (fx_even): fx_add without the 1/2, then t + 2^(fx_shift-1) - 1 + 1 when
     * (t >> fx_shift) ^ fx_parity is odd (fx_parity: the output zero point's, DirectML rounding before
     * adding it) */
    int fx_even;
    int32_t fx_parity;
    int stream_out; /* outputs too many to stay in cache: the SIMD kernels store them non-temporally */
} gk_qadd_params_t;

enum { GK_QADD_DML_DIVIDE, GK_QADD_DML_RECIPROCAL, GK_QADD_DML_FMA };

/* One contiguous run of n outputs c[0..n) (stride 1) from a (stride a_step: 0 or 1) and b (stride
 * b_step: 0 or 1) with the params above; every ISA gives the same bytes. a_step / b_step only say
 * where the values come from: the arithmetic of an element does not depend on them. */
typedef void (*gk_qadd_run_fn)(int64_t n, const void *a, int64_t a_step, const void *b, int64_t b_step,
                               void *c, const gk_qadd_params_t *p);
typedef struct {
    const char *name;
    gk_qadd_run_fn run;
    int fixed_point; /* has the fixed-point form (params fx_*) */
} gk_qadd_kernel_t;

extern const gk_qadd_kernel_t gk_qadd_kernel_generic;

/* The operands of one call, in the order the driver keeps their pointers and strides. */
enum { GK_QADD_A, GK_QADD_B, GK_QADD_OUT, GK_QADD_A_SCALE, GK_QADD_A_ZP, GK_QADD_B_SCALE, GK_QADD_B_ZP,
       GK_QADD_OUT_SCALE, GK_QADD_OUT_ZP, GK_QADD_OPERANDS };
/* Portable run of n outputs with any element steps for every operand (scales and zero points may
 * change along the run; the ONNX Runtime constants in p are used as they are). */
void gk_qadd_run_strided(int64_t n, const gk_qadd_params_t *p, const char *const ptr[GK_QADD_OPERANDS],
                         const int64_t step[GK_QADD_OPERANDS]);
#if GEMMKIT_X86
extern const gk_qadd_kernel_t gk_qadd_kernel_avx2, gk_qadd_kernel_avx512;
#endif
#if GEMMKIT_ARM
extern const gk_qadd_kernel_t gk_qadd_kernel_neon;
#endif

#endif /* GEMMKIT_QADD_H */
