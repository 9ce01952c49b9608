/* Portable kernels of gemmkit_quantized_add: a contiguous run with single-value parameters, and the
 * fully strided run (any steps, parameters that change along the run) every path falls back to. */
#include "qadd_scalar.h"

static void qadd_run_generic(int64_t n, const void *a, int64_t a_step, const void *b, int64_t b_step, void *c,
                             const gk_qadd_params_t *p) {
    const uint8_t *pa = (const uint8_t *)a, *pb = (const uint8_t *)b;
    uint8_t *pc = (uint8_t *)c;
    for (int64_t i = 0; i < n; i++) {
        const int32_t av = gk_qadd_load(pa + i * a_step, p->a_signed), bv = gk_qadd_load(pb + i * b_step, p->b_signed);
        pc[i] = (uint8_t)gk_qadd_one(p, av, bv);
    }
}

void gk_qadd_run_strided(int64_t n, const gk_qadd_params_t *p, const char *const ptr[GK_QADD_OPERANDS],
                         const int64_t step[GK_QADD_OPERANDS]) {
    const int out_signed = p->out_min < 0;
    if (p->formula == GEMMKIT_QADD_ONNXRUNTIME) {
        for (int64_t i = 0; i < n; i++) {
            const int32_t av = gk_qadd_load(ptr[GK_QADD_A] + i * step[GK_QADD_A], p->a_signed);
            const int32_t bv = gk_qadd_load(ptr[GK_QADD_B] + i * step[GK_QADD_B], p->b_signed);
            *(uint8_t *)(ptr[GK_QADD_OUT] + i * step[GK_QADD_OUT]) =
                (uint8_t)gk_qadd_ort_finish(gk_qadd_ort_value(p, av, bv), p->out_min, p->out_max);
        }
        return;
    }
    /* DirectML: scale strides count floats, zero point strides count bytes. */
    for (int64_t i = 0; i < n; i++) {
        const int32_t av = gk_qadd_load(ptr[GK_QADD_A] + i * step[GK_QADD_A], p->a_signed);
        const int32_t bv = gk_qadd_load(ptr[GK_QADD_B] + i * step[GK_QADD_B], p->b_signed);
        const float sa = ((const float *)ptr[GK_QADD_A_SCALE])[i * step[GK_QADD_A_SCALE]];
        const float sb = ((const float *)ptr[GK_QADD_B_SCALE])[i * step[GK_QADD_B_SCALE]];
        const float sc = ((const float *)ptr[GK_QADD_OUT_SCALE])[i * step[GK_QADD_OUT_SCALE]];
        const int32_t za = gk_qadd_load(ptr[GK_QADD_A_ZP] + i * step[GK_QADD_A_ZP], p->a_signed);
        const int32_t zb = gk_qadd_load(ptr[GK_QADD_B_ZP] + i * step[GK_QADD_B_ZP], p->b_signed);
        const int32_t zc = gk_qadd_load(ptr[GK_QADD_OUT_ZP] + i * step[GK_QADD_OUT_ZP], out_signed);
        *(uint8_t *)(ptr[GK_QADD_OUT] + i * step[GK_QADD_OUT]) =
            (uint8_t)gk_qadd_directml(av, bv, sa, za, sb, zb, sc, zc, p->out_min, p->out_max);
    }
}

const gk_qadd_kernel_t gk_qadd_kernel_generic = {"qadd_generic", qadd_run_generic, 0};
