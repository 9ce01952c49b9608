/* gemmkit_quantized_add: argument checks, the layout (axes of size 1 dropped, negative output strides
 * flipped, axes ordered and merged into contiguous runs), threads, and per-run kernel dispatch. */
#include <float.h>
#include <string.h>
#include "atomics.h"
#include "config.h"
#include "qadd.h"
#include "threads.h"
#include "kernels/qadd_scalar.h"

/* From this many outputs (with the inputs, well over a last-level cache) the SIMD kernels store
 * them non-temporally when both inputs vary along the run. */
#define QADD_STREAM_MIN ((int64_t)1 << 23)

/* Below this many outputs one thread does it all; above, about one thread per this many. */
#define QADD_ELEMS_PER_THREAD ((int64_t)1 << 18)

/* The run kernel of each kernel path: AVX-512 (BW) on the 512-bit paths, AVX2 on the 256-bit ones. */
static const uint8_t zero_byte = 0; /* the value of an absent zero point, of either type */

typedef struct {
    int nd;                                          /* axes after merging (>= 1) */
    int64_t shape[GEMMKIT_QADD_MAX_DIMS];
    int64_t stride[GK_QADD_OPERANDS][GEMMKIT_QADD_MAX_DIMS]; /* elements of the operand's own type */
    const char *base[GK_QADD_OPERANDS];
    int elem[GK_QADD_OPERANDS];                      /* bytes per element: 1, or 4 for scales */
    int64_t total;
    int64_t next_chunk;                              /* threads: the next chunk to claim (qadd_task) */
    gk_qadd_params_t params;                         /* the single-value parameters (first elements) */
    int params_vary;                                 /* some scale or zero point is strided */
    const gk_qadd_kernel_t *kern;
} qadd_layout_t;

/* DirectML's SIMD kernels may skip clamping the quotient when no input can make |q| reach 2^30 or
 * overflow float32 on the way (then no NaN either): the bound is taken in double, with room for the
 * float32 roundings; |x - zero point| <= 255 for both types. */
static int directml_needs_clamp(const gk_qadd_params_t *p) {
    const double most = 255.0 * ((double)fabsf(p->a_scale) + (double)fabsf(p->b_scale)) * 1.001;
    return !(most < (double)FLT_MAX && most / fabs((double)p->out_scale) < 1073741824.0);
}

/* ---- the fixed-point form: constants, a check over every pair of input bytes, a per-thread cache -- */

/* Below this many outputs an unknown parameter set is not checked: the checks, once per parameter set, would cost as
 * much as the product or more (see docs/decisions.md, QADD_FX_CHECK_MIN); a set already checked by this thread is
 * used at any size. */
#define QADD_FX_CHECK_MIN ((int64_t)1 << 17)

#if defined(_MSC_VER)
#define QADD_THREAD_LOCAL __declspec(thread)
#else
#define QADD_THREAD_LOCAL _Thread_local
#endif

/* p's fx_* constants (see qadd.h) for rounding half up or, with `even`, half to even:
 * t / 2^shift approximates ra * a' + rb * b' + c (+ 1/2 when rounding half up) in the flipped-byte
 * domain (x = x' - 128 for int8), c holding the zero points and, for int8 outputs, the + 128 that the
 * output flip undoes. The largest shift whose constants fit int16 and whose P(a') + P(b') cannot
 * saturate; 0 when none. */
static int fixed_point_constants(gk_qadd_params_t *p, int even) {
    const double fa = p->a_signed ? 128.0 : 0.0, fb = p->b_signed ? 128.0 : 0.0;
    const double out_bias = p->out_min < 0 ? 128.0 : 0.0;
    double ra, rb, c;
    if (p->formula == GEMMKIT_QADD_ONNXRUNTIME) {
        ra = p->ra;
        rb = p->rb;
        c = (double)p->ort_fixed - ra * fa - rb * fb + out_bias;
    } else {
        ra = (double)p->a_scale / (double)p->out_scale;
        rb = (double)p->b_scale / (double)p->out_scale;
        c = -ra * (fa + p->a_zp) - rb * (fb + p->b_zp) + p->out_zp + out_bias;
    }
    for (int shift = 7; shift >= (even ? 1 : 0); shift--) {
        const double unit = ldexp(1.0, shift);
        const double ma = nearbyint(ra * unit * 256.0), mb = nearbyint(rb * unit * 256.0);
        const double add = nearbyint((c + (even ? 0.0 : 0.5)) * unit);
        /* written so that NaN fails: |P(x')| <= 255 |m| / 256 + 1 */
        if (!(fabs(ma) <= 32767.0 && fabs(mb) <= 32767.0 && fabs(add) <= 32767.0 &&
              255.0 * (fabs(ma) + fabs(mb)) / 256.0 + 2.0 <= 32767.0))
            continue;
        p->fx_shift = shift;
        p->fx_ma = (int32_t)ma;
        p->fx_mb = (int32_t)mb;
        p->fx_add = (int32_t)add;
        p->fx_even = even;
        /* DirectML rounds before adding its zero point: the parity to undo (ONNX Runtime rounds it in) */
        p->fx_parity = p->formula == GEMMKIT_QADD_ONNXRUNTIME ? 0 : (p->out_zp & 1);
        return 1;
    }
    return 0;
}

/* Does the kernel give the same bytes with parameters x and y for all 65536 pairs of input bytes (16
 * values of A against the 256 of B per run, on the stack)? */
static int same_bytes_all_pairs(const gk_qadd_kernel_t *k, const gk_qadd_params_t *x, const gk_qadd_params_t *y) {
    enum { ROWS = 16, N = ROWS * 256 };
    uint8_t a[N], b[N], want[N], got[N];
    gk_qadd_params_t px = *x, py = *y;
    px.stream_out = py.stream_out = 0;
    for (int i = 0; i < N; i++) b[i] = (uint8_t)i;
    for (int a0 = 0; a0 < 256; a0 += ROWS) {
        for (int r = 0; r < ROWS; r++) memset(a + r * 256, a0 + r, 256);
        k->run(N, a, 1, b, 1, want, &px);
        k->run(N, a, 1, b, 1, got, &py);
        if (memcmp(want, got, N) != 0) return 0;
    }
    return 1;
}

/* Does the fixed-point form (p's constants) give the float form's bytes? */
static int fixed_point_exact(const gk_qadd_kernel_t *k, const gk_qadd_params_t *p) {
    gk_qadd_params_t pf = *p, px = *p;
    pf.fx_ok = 0;
    px.fx_ok = 1;
    return same_bytes_all_pairs(k, &pf, &px);
}

/* Which of DirectML's float forms (gk_qadd_params_t's dml_form) the kernel may use: the fma form or
 * the reciprocal where they give the dividing form's bytes on every pair (the reciprocal also where it
 * is exact: the same real quotient, rounded once); `check` 0: only what needs no check. */
static int directml_reciprocal_exact(const gk_qadd_params_t *p) {
    return (double)p->out_scale_inv * (double)p->out_scale == 1.0;
}

static int directml_float_form(const gk_qadd_kernel_t *k, const gk_qadd_params_t *p, int check) {
    if (p->formula != GEMMKIT_QADD_DIRECTML || p->dml_needs_clamp) return GK_QADD_DML_DIVIDE;
    gk_qadd_params_t pd = *p, pt = *p;
    pd.fx_ok = pt.fx_ok = 0;
    pd.dml_form = GK_QADD_DML_DIVIDE;
    if (check) {
        pt.dml_form = GK_QADD_DML_FMA;
        if (same_bytes_all_pairs(k, &pd, &pt)) return GK_QADD_DML_FMA;
    }
    if (directml_reciprocal_exact(p)) return GK_QADD_DML_RECIPROCAL;
    pt.dml_form = GK_QADD_DML_RECIPROCAL;
    if (check && same_bytes_all_pairs(k, &pd, &pt)) return GK_QADD_DML_RECIPROCAL;
    return GK_QADD_DML_DIVIDE;
}

/* What decides the bytes of a call with single-value parameters. */
typedef struct {
    const gk_qadd_kernel_t *kern;
    int formula, a_signed, b_signed, out_min, ort_a_first;
    float a_scale, b_scale, out_scale;
    int32_t a_zp, b_zp, out_zp;
} fx_key_t;

/* The fixed-point decision for one key: fx_ok and the constants. */
typedef struct {
    int ok, even;
    int32_t shift, ma, mb, add, parity;
    int dml_form; /* (when not ok) */
} fx_form_t;

typedef struct {
    fx_key_t key;
    int used;
    fx_form_t form;
} fx_cache_entry_t;

/* Direct-mapped by a hash of the key: a model's worth of layers with their own parameters. */
#define QADD_FX_CACHE_SLOTS 64
static QADD_THREAD_LOCAL fx_cache_entry_t fx_cache[QADD_FX_CACHE_SLOTS];

static unsigned fx_key_slot(const fx_key_t *k) {
    uint32_t bits[3];
    memcpy(&bits[0], &k->a_scale, 4);
    memcpy(&bits[1], &k->b_scale, 4);
    memcpy(&bits[2], &k->out_scale, 4);
    uint32_t h = 2166136261u; /* FNV-1a over the fields' values */
    const uint32_t v[9] = {bits[0], bits[1], bits[2], (uint32_t)k->a_zp, (uint32_t)k->b_zp, (uint32_t)k->out_zp,
                           (uint32_t)(k->formula | k->a_signed << 1 | k->b_signed << 2 | (k->out_min < 0) << 3 |
                                      k->ort_a_first << 4),
                           (uint32_t)(uintptr_t)k->kern, (uint32_t)((uint64_t)(uintptr_t)k->kern >> 32)};
    for (int i = 0; i < 9; i++) h = (h ^ v[i]) * 16777619u;
    return (h ^ (h >> 16)) % QADD_FX_CACHE_SLOTS;
}

static int fx_key_equal(const fx_key_t *x, const fx_key_t *y) {
    return x->kern == y->kern && x->formula == y->formula && x->a_signed == y->a_signed &&
           x->b_signed == y->b_signed && x->out_min == y->out_min && x->ort_a_first == y->ort_a_first &&
           x->a_scale == y->a_scale && x->b_scale == y->b_scale && x->out_scale == y->out_scale &&
           x->a_zp == y->a_zp && x->b_zp == y->b_zp && x->out_zp == y->out_zp;
}

static fx_form_t fx_form_of(const gk_qadd_params_t *p) {
    fx_form_t f = {p->fx_ok, p->fx_even, p->fx_shift, p->fx_ma, p->fx_mb, p->fx_add, p->fx_parity, p->dml_form};
    return f;
}

static void fx_form_set(gk_qadd_params_t *p, const fx_form_t *f) {
    p->fx_ok = f->ok; p->fx_even = f->even; p->fx_shift = f->shift; p->fx_ma = f->ma; p->fx_mb = f->mb;
    p->fx_add = f->add; p->fx_parity = f->parity; p->dml_form = f->dml_form;
}

/* Sets p->fx_ok (and the constants) when this thread already found a fixed-point form exact for these
 * parameters, or checks now (half up, then half to even) when the call is large enough to pay for it;
 * failing that, which of DirectML's float forms it may use (the same way). */
static void plan_forms(const gk_qadd_kernel_t *k, gk_qadd_params_t *p, int64_t total) {
    p->fx_ok = 0;
    p->dml_form = directml_float_form(k, p, 0);
    if (!k->fixed_point) return;
    fx_key_t key;
    memset(&key, 0, sizeof key);
    key.kern = k; key.formula = p->formula; key.a_signed = p->a_signed; key.b_signed = p->b_signed;
    key.out_min = p->out_min; key.ort_a_first = p->formula == GEMMKIT_QADD_ONNXRUNTIME ? p->ort_a_first : 0;
    key.a_scale = p->a_scale; key.b_scale = p->b_scale; key.out_scale = p->out_scale;
    key.a_zp = p->a_zp; key.b_zp = p->b_zp; key.out_zp = p->out_zp;
    fx_cache_entry_t *e = &fx_cache[fx_key_slot(&key)];
    if (e->used && fx_key_equal(&e->key, &key)) {
        fx_form_set(p, &e->form);
        return;
    }
    if (total < QADD_FX_CHECK_MIN) return;
    p->fx_ok = (fixed_point_constants(p, 0) && fixed_point_exact(k, p)) ||
               (fixed_point_constants(p, 1) && fixed_point_exact(k, p));
    if (!p->fx_ok) p->dml_form = directml_float_form(k, p, 1);
    e->key = key;
    e->used = 1;
    e->form = fx_form_of(p);
}

static int valid_type(gemmkit_qtype_t t) { return t == GEMMKIT_QTYPE_U8 || t == GEMMKIT_QTYPE_S8; }

/* Every distinct scale value (the elements reached over the axes where the stride is not 0) must be
 * finite and non-zero. */
static int scales_valid(int ndim, const int64_t *shape, const int64_t *stride, const float *s) {
    int64_t idx[GEMMKIT_QADD_MAX_DIMS] = {0};
    for (;;) {
        int64_t off = 0;
        for (int d = 0; d < ndim; d++) off += idx[d] * stride[d];
        const float v = s[off];
        if (!(v != 0.0f) || !isfinite(v)) return 0;
        int d = ndim - 1;
        for (; d >= 0; d--) {
            if (stride[d] == 0 || shape[d] <= 1) continue;
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
        if (d < 0) return 1;
    }
}

static int strided_along_shape(int ndim, const int64_t *shape, const int64_t *stride) {
    for (int d = 0; d < ndim; d++)
        if (stride && stride[d] != 0 && shape[d] > 1) return 1;
    return 0;
}

/* Axes: drop size-1 ones, flip those the output walks backwards, order by output stride (largest
 * first, so the innermost run is the output's smallest step), merge neighbours that are one. */
static void normalize_axes(qadd_layout_t *L, int ndim, const int64_t *shape) {
    int nd = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) continue;
        L->shape[nd] = shape[d];
        for (int k = 0; k < GK_QADD_OPERANDS; k++) L->stride[k][nd] = L->stride[k][d];
        nd++;
    }
    for (int d = 0; d < nd; d++) {
        if (L->stride[GK_QADD_OUT][d] >= 0) continue;
        for (int k = 0; k < GK_QADD_OPERANDS; k++) {
            L->base[k] += (L->shape[d] - 1) * L->stride[k][d] * L->elem[k];
            L->stride[k][d] = -L->stride[k][d];
        }
    }
    for (int i = 1; i < nd; i++) /* insertion sort, stable */
        for (int j = i; j > 0 && L->stride[GK_QADD_OUT][j] > L->stride[GK_QADD_OUT][j - 1]; j--) {
            int64_t t = L->shape[j]; L->shape[j] = L->shape[j - 1]; L->shape[j - 1] = t;
            for (int k = 0; k < GK_QADD_OPERANDS; k++) {
                t = L->stride[k][j]; L->stride[k][j] = L->stride[k][j - 1]; L->stride[k][j - 1] = t;
            }
        }
    int m = 0;
    for (int d = 1; d < nd; d++) {
        int mergeable = 1;
        for (int k = 0; k < GK_QADD_OPERANDS; k++)
            if (L->stride[k][m] != L->stride[k][d] * L->shape[d]) mergeable = 0;
        if (mergeable) {
            L->shape[m] *= L->shape[d];
            for (int k = 0; k < GK_QADD_OPERANDS; k++) L->stride[k][m] = L->stride[k][d];
        } else {
            m++;
            L->shape[m] = L->shape[d];
            for (int k = 0; k < GK_QADD_OPERANDS; k++) L->stride[k][m] = L->stride[k][d];
        }
    }
    L->nd = nd == 0 ? 1 : m + 1;
    if (nd == 0) { /* one element */
        L->shape[0] = 1;
        for (int k = 0; k < GK_QADD_OPERANDS; k++) L->stride[k][0] = 0;
    }
}

/* The outputs [begin, end) of the merged index space, run by run. */
static void qadd_range(const qadd_layout_t *L, int64_t begin, int64_t end) {
    const int nd = L->nd, in = nd - 1;
    int64_t idx[GEMMKIT_QADD_MAX_DIMS];
    int64_t rest = begin;
    for (int d = nd - 1; d >= 0; d--) { idx[d] = rest % L->shape[d]; rest /= L->shape[d]; }
    int64_t step[GK_QADD_OPERANDS];
    for (int k = 0; k < GK_QADD_OPERANDS; k++) step[k] = L->stride[k][in];
    const int fast_steps = (step[GK_QADD_A] == 0 || step[GK_QADD_A] == 1) &&
                           (step[GK_QADD_B] == 0 || step[GK_QADD_B] == 1) && step[GK_QADD_OUT] == 1;
    const int params_step = step[GK_QADD_A_SCALE] | step[GK_QADD_A_ZP] | step[GK_QADD_B_SCALE] |
                            step[GK_QADD_B_ZP] | step[GK_QADD_OUT_SCALE] | step[GK_QADD_OUT_ZP];
    for (int64_t pos = begin; pos < end;) {
        const int64_t n = GK_MIN(L->shape[in] - idx[in], end - pos);
        const char *ptr[GK_QADD_OPERANDS];
        for (int k = 0; k < GK_QADD_OPERANDS; k++) {
            int64_t off = 0;
            for (int d = 0; d < nd; d++) off += idx[d] * L->stride[k][d];
            ptr[k] = L->base[k] + off * L->elem[k];
        }
        if (fast_steps && params_step == 0) {
            gk_qadd_params_t p = L->params;
            if (L->params_vary) { /* this run's own single values */
                const int out_signed = p.out_min < 0;
                p.a_scale = *(const float *)ptr[GK_QADD_A_SCALE];
                p.b_scale = *(const float *)ptr[GK_QADD_B_SCALE];
                p.out_scale = *(const float *)ptr[GK_QADD_OUT_SCALE];
                p.a_zp = gk_qadd_load(ptr[GK_QADD_A_ZP], p.a_signed);
                p.b_zp = gk_qadd_load(ptr[GK_QADD_B_ZP], p.b_signed);
                p.out_zp = gk_qadd_load(ptr[GK_QADD_OUT_ZP], out_signed);
                p.dml_needs_clamp = directml_needs_clamp(&p);
                p.fx_ok = 0;
                p.dml_form = GK_QADD_DML_DIVIDE;
            }
            L->kern->run(n, ptr[GK_QADD_A], step[GK_QADD_A], ptr[GK_QADD_B], step[GK_QADD_B], (void *)ptr[GK_QADD_OUT],
                         &p);
        } else {
            gk_qadd_run_strided(n, &L->params, ptr, step);
        }
        pos += n;
        idx[in] += n;
        for (int d = in; d > 0 && idx[d] == L->shape[d]; d--) { idx[d] = 0; idx[d - 1]++; }
    }
}

/* With several threads the outputs go in chunks claimed in turn from a shared counter, so that a thread
 * the OS runs late (a busy machine) leaves its share to the others instead of holding the call up. */
#define QADD_CHUNK ((int64_t)1 << 16)

static void qadd_task(void *ctx, int tid, int nthreads) {
    qadd_layout_t *L = (qadd_layout_t *)ctx;
    (void)tid;
    if (nthreads <= 1) {
        qadd_range(L, 0, L->total);
        return;
    }
    for (;;) {
        const int64_t begin = (int64_t)GK_CLAIM_RELAXED(&L->next_chunk) * QADD_CHUNK;
        if (begin >= L->total) return;
        qadd_range(L, begin, GK_MIN(begin + QADD_CHUNK, L->total));
    }
}

gemmkit_status_t gemmkit_quantized_add(gemmkit_qadd_formula_t formula, int ndim, const int64_t *shape,
                                       const gemmkit_qtensor_t *a, const gemmkit_qtensor_t *b,
                                       const gemmkit_qtensor_t *out) {
    if (formula != GEMMKIT_QADD_DIRECTML && formula != GEMMKIT_QADD_ONNXRUNTIME) return gemmkit_invalid_arguments;
    if (ndim < 0 || ndim > GEMMKIT_QADD_MAX_DIMS || (ndim > 0 && shape == NULL)) return gemmkit_invalid_arguments;
    if (a == NULL || b == NULL || out == NULL) return gemmkit_invalid_arguments;
    const gemmkit_qtensor_t *t[3] = {a, b, out};
    int64_t total = 1;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0) return gemmkit_invalid_arguments;
        if (shape[d] > 0 && total > INT64_MAX / shape[d]) return gemmkit_invalid_arguments;
        total *= shape[d];
    }
    for (int i = 0; i < 3; i++) {
        if (!valid_type(t[i]->type) || t[i]->scale == NULL) return gemmkit_invalid_arguments;
        if (total > 0 && (t[i]->data == NULL || (ndim > 0 && t[i]->strides == NULL))) return gemmkit_invalid_arguments;
    }
    qadd_layout_t layout;
    qadd_layout_t *L = &layout;
    memset(L, 0, sizeof(*L));
    for (int i = 0; i < 3; i++) {
        const int k_data = i == 0 ? GK_QADD_A : (i == 1 ? GK_QADD_B : GK_QADD_OUT);
        const int k_scale = i == 0 ? GK_QADD_A_SCALE : (i == 1 ? GK_QADD_B_SCALE : GK_QADD_OUT_SCALE);
        const int k_zp = i == 0 ? GK_QADD_A_ZP : (i == 1 ? GK_QADD_B_ZP : GK_QADD_OUT_ZP);
        L->base[k_data] = (const char *)t[i]->data;
        L->base[k_scale] = (const char *)t[i]->scale;
        L->base[k_zp] = t[i]->zero_point ? (const char *)t[i]->zero_point : (const char *)&zero_byte;
        L->elem[k_data] = 1; L->elem[k_scale] = 4; L->elem[k_zp] = 1;
        for (int d = 0; d < ndim; d++) {
            L->stride[k_data][d] = t[i]->strides ? t[i]->strides[d] : 0;
            L->stride[k_scale][d] = t[i]->scale_strides ? t[i]->scale_strides[d] : 0;
            L->stride[k_zp][d] = (t[i]->zero_point && t[i]->zero_point_strides) ? t[i]->zero_point_strides[d] : 0;
        }
        const int scale_strided = strided_along_shape(ndim, shape, t[i]->scale_strides);
        const int zp_strided = t[i]->zero_point && strided_along_shape(ndim, shape, t[i]->zero_point_strides);
        if (scale_strided || zp_strided) {
            if (formula == GEMMKIT_QADD_ONNXRUNTIME) return gemmkit_invalid_arguments;
            L->params_vary = 1;
        }
        /* a zero-size tensor still has its scales checked, but over no elements of a strided one */
        if (!(scale_strided && total == 0) &&
            !scales_valid(ndim, shape, L->stride[k_scale], t[i]->scale))
            return gemmkit_invalid_arguments;
    }
    if (total == 0) return gemmkit_success;

    gk_qadd_params_t *p = &L->params;
    p->formula = (int)formula;
    p->a_signed = a->type == GEMMKIT_QTYPE_S8;
    p->b_signed = b->type == GEMMKIT_QTYPE_S8;
    p->out_min = out->type == GEMMKIT_QTYPE_S8 ? -128 : 0;
    p->out_max = out->type == GEMMKIT_QTYPE_S8 ? 127 : 255;
    p->a_scale = a->scale[0]; p->b_scale = b->scale[0]; p->out_scale = out->scale[0];
    p->a_zp = gk_qadd_load(L->base[GK_QADD_A_ZP], p->a_signed);
    p->b_zp = gk_qadd_load(L->base[GK_QADD_B_ZP], p->b_signed);
    p->out_zp = gk_qadd_load(L->base[GK_QADD_OUT_ZP], out->type == GEMMKIT_QTYPE_S8);
    p->dml_needs_clamp = directml_needs_clamp(p);
    /* ONNX Runtime's constants (float32, each step rounded; its kernel fuses the first product). Its
     * order of operations follows how the inputs broadcast along the last axis of size > 1. */
    p->ra = p->a_scale / p->out_scale;
    p->rb = p->b_scale / p->out_scale;
    {
        int last = ndim - 1;
        while (last >= 0 && shape[last] == 1) last--;
        p->ort_a_first = last < 0 || L->stride[GK_QADD_A][last] == 0;
        const float pa = p->ra * (float)p->a_zp, pb = p->rb * (float)p->b_zp;
        p->ort_fixed = p->ort_a_first ? (float)p->out_zp - fmaf(p->rb, (float)p->b_zp, pa)
                                      : (float)p->out_zp - fmaf(p->ra, (float)p->a_zp, pb);
    }
    L->total = total;
    L->kern = gk_config()->qadd;
    normalize_axes(L, ndim, shape);
    p->out_scale_inv = 1.0f / p->out_scale;
    p->dml_ra = p->a_scale / p->out_scale;
    p->dml_rb = p->b_scale / p->out_scale;
    if (!L->params_vary) plan_forms(L->kern, p, total);
    p->stream_out = total >= QADD_STREAM_MIN;

    int nthreads = 1;
    if (total >= 2 * QADD_ELEMS_PER_THREAD)
        nthreads = (int)GK_MIN((int64_t)gk_num_threads(), total / QADD_ELEMS_PER_THREAD);
    gk_parallel_run(qadd_task, L, nthreads);
    return gemmkit_success;
}
