/* The SIMD run kernel of gemmkit_quantized_add, written once over a few vector primitives that
 * qadd_avx2.c (8 lanes) and qadd_avx512.c (16 lanes) define; tails use qadd_scalar.h's per-element code.
 * Bytes of either type go through one path: an int8 byte XOR 0x80, zero-extended, minus 128 is its
 * value; an int8 output is stored as (value + 128) XOR 0x80. */
#include "qadd_scalar.h"

/* Required: QV_F, QV_I (float / int32 vectors of QV_LANES lanes), QV_LOAD_BYTES(p) (QV_LANES bytes
 * zero-extended to int32), QV_STORE_BYTES(p, v) (QV_LANES int32 in 0..255 stored as bytes), QV_SET1_F,
 * QV_SET1_I, QV_ADD_I, QV_SUB_I, QV_XOR_I, QV_MAX_I, QV_MIN_I, QV_CVT_I2F, QV_CVT_F2I (round to
 * nearest even; NaN / out of range -> INT32_MIN), QV_ADD_F, QV_MUL_F, QV_DIV_F, QV_MAX_F (NaN in the
 * first operand gives the second), QV_MIN_F, QV_FMA(a, b, c) = a * b + c rounded once, QV_NAME. */

typedef struct {
    QV_I a_xor, a_bias, b_xor, b_bias;     /* input value = (zext(byte) ^ xor) - bias */
    QV_I out_lo, out_hi, out_bias, out_xor; /* clamp, then stored byte = (v + bias) ^ xor */
} qv_types_t;

static inline QV_I qv_load(const uint8_t *p, QV_I x, QV_I bias) {
    return QV_SUB_I(QV_XOR_I(QV_LOAD_BYTES(p), x), bias);
}

static inline void qv_store(uint8_t *p, QV_I v, const qv_types_t *t) {
    v = QV_MIN_I(QV_MAX_I(v, t->out_lo), t->out_hi);
    QV_STORE_BYTES(p, QV_XOR_I(QV_ADD_I(v, t->out_bias), t->out_xor));
}

/* DirectML: a and b as int32 vectors (a may be a broadcast constant: av precomputed). */
static inline QV_I qv_directml(QV_F av, QV_I b, QV_I zb, QV_F sb, QV_F sc, QV_I zc) {
    const QV_F bv = QV_MUL_F(QV_CVT_I2F(QV_SUB_I(b, zb)), sb);
    QV_F q = QV_DIV_F(QV_ADD_F(av, bv), sc);
    q = QV_MIN_F(QV_MAX_F(q, QV_SET1_F(-GK_QADD_Q_LIMIT)), QV_SET1_F(GK_QADD_Q_LIMIT));
    return QV_ADD_I(QV_CVT_F2I(q), zc);
}

static inline QV_F qv_ort(QV_I a, QV_I b, QV_F ra, QV_F rb, QV_F fixed, int a_first) {
    if (a_first) return QV_FMA(QV_CVT_I2F(b), rb, QV_FMA(QV_CVT_I2F(a), ra, fixed));
    return QV_FMA(QV_CVT_I2F(a), ra, QV_FMA(QV_CVT_I2F(b), rb, fixed));
}

/* What every element of a run shares: the type conversions and the formula's constants. */
typedef struct {
    qv_types_t t;
    QV_I a_const, b_const;       /* a repeated input, as its int32 value */
    QV_F ra, rb, fixed;          /* ONNX Runtime */
    int a_first;
    QV_F sa, sb, sc, c_scaled;   /* DirectML; c_scaled: the repeated input's (x - zp) * scale */
    QV_I za, zb, zc;
} qv_ctx_t;

/* One vector of results (int32, before the clamp and store). formula and mode are constants of the
 * caller's loop, so the branches fold away; the arithmetic per element is the same in every mode. */
static inline QV_I qv_one(const qv_ctx_t *x, QV_I av, QV_I bv, int ort, int mode) {
    if (ort) return QV_CVT_F2I(qv_ort(av, bv, x->ra, x->rb, x->fixed, x->a_first)); /* INT32_MIN clamps to min */
    if (mode == 1) return qv_directml(x->c_scaled, bv, x->zb, x->sb, x->sc, x->zc);
    /* a + b = b + a: with B repeated, B's constant takes A's place (the float32 sum is commutative) */
    if (mode == 2) return qv_directml(x->c_scaled, av, x->za, x->sa, x->sc, x->zc);
    return qv_directml(QV_MUL_F(QV_CVT_I2F(QV_SUB_I(av, x->za)), x->sa), bv, x->zb, x->sb, x->sc, x->zc);
}

/* n elements; ort / mode compile-time constants after inlining (mode 0: both vary, 1: A is one value,
 * 2: B is one value, loaded once). Four vectors per step share the loop overhead; then one vector per
 * step; the tail goes through the scalar code of qadd_scalar.h. */
static inline void qv_loop(int64_t n, const uint8_t *a, const uint8_t *b, uint8_t *c, const qv_ctx_t *x,
                           const gk_qadd_params_t *p, int ort, int mode) {
    int64_t i = 0;
    for (; i + 4 * QV_LANES <= n; i += 4 * QV_LANES) {
        QV_I r[4];
        for (int q = 0; q < 4; q++) {
            const QV_I av = mode == 1 ? x->a_const : qv_load(a + i + q * QV_LANES, x->t.a_xor, x->t.a_bias);
            const QV_I bv = mode == 2 ? x->b_const : qv_load(b + i + q * QV_LANES, x->t.b_xor, x->t.b_bias);
            r[q] = qv_one(x, av, bv, ort, mode);
        }
        for (int q = 0; q < 4; q++) qv_store(c + i + q * QV_LANES, r[q], &x->t);
    }
    for (; i + QV_LANES <= n; i += QV_LANES) {
        const QV_I av = mode == 1 ? x->a_const : qv_load(a + i, x->t.a_xor, x->t.a_bias);
        const QV_I bv = mode == 2 ? x->b_const : qv_load(b + i, x->t.b_xor, x->t.b_bias);
        qv_store(c + i, qv_one(x, av, bv, ort, mode), &x->t);
    }
    const int32_t a0 = gk_qadd_load(a, p->a_signed), b0 = gk_qadd_load(b, p->b_signed);
    for (; i < n; i++) {
        const int32_t av = mode == 1 ? a0 : gk_qadd_load(a + i, p->a_signed);
        const int32_t bv = mode == 2 ? b0 : gk_qadd_load(b + i, p->b_signed);
        c[i] = (uint8_t)gk_qadd_one(p, av, bv);
    }
}

static void qv_run(int64_t n, const uint8_t *a, const uint8_t *b, uint8_t *c, const gk_qadd_params_t *p, int mode) {
    qv_ctx_t x;
    const int32_t a0 = gk_qadd_load(a, p->a_signed), b0 = gk_qadd_load(b, p->b_signed);
    x.t.a_xor = QV_SET1_I(p->a_signed ? 0x80 : 0); x.t.a_bias = QV_SET1_I(p->a_signed ? 128 : 0);
    x.t.b_xor = QV_SET1_I(p->b_signed ? 0x80 : 0); x.t.b_bias = QV_SET1_I(p->b_signed ? 128 : 0);
    x.t.out_lo = QV_SET1_I(p->out_min); x.t.out_hi = QV_SET1_I(p->out_max);
    x.t.out_bias = QV_SET1_I(p->out_min < 0 ? 128 : 0); x.t.out_xor = QV_SET1_I(p->out_min < 0 ? 0x80 : 0);
    x.a_const = QV_SET1_I(a0); x.b_const = QV_SET1_I(b0);
    x.ra = QV_SET1_F(p->ra); x.rb = QV_SET1_F(p->rb); x.fixed = QV_SET1_F(p->ort_fixed); x.a_first = p->ort_a_first;
    x.sa = QV_SET1_F(p->a_scale); x.sb = QV_SET1_F(p->b_scale); x.sc = QV_SET1_F(p->out_scale);
    x.za = QV_SET1_I(p->a_zp); x.zb = QV_SET1_I(p->b_zp); x.zc = QV_SET1_I(p->out_zp);
    x.c_scaled = mode == 1 ? QV_SET1_F((float)(a0 - p->a_zp) * p->a_scale)
                           : QV_SET1_F((float)(b0 - p->b_zp) * p->b_scale);
    if (p->formula == GEMMKIT_QADD_ONNXRUNTIME) {
        if (mode == 1) qv_loop(n, a, b, c, &x, p, 1, 1);
        else if (mode == 2) qv_loop(n, a, b, c, &x, p, 1, 2);
        else qv_loop(n, a, b, c, &x, p, 1, 0);
    } else {
        if (mode == 1) qv_loop(n, a, b, c, &x, p, 0, 1);
        else if (mode == 2) qv_loop(n, a, b, c, &x, p, 0, 2);
        else qv_loop(n, a, b, c, &x, p, 0, 0);
    }
}

static void QV_NAME(int64_t n, const void *a, int64_t a_step, const void *b, int64_t b_step, void *c,
                    const gk_qadd_params_t *p) {
    const uint8_t *pa = (const uint8_t *)a, *pb = (const uint8_t *)b;
    if (a_step == 0) qv_run(n, pa, pb, (uint8_t *)c, p, 1);
    else if (b_step == 0) qv_run(n, pa, pb, (uint8_t *)c, p, 2);
    else qv_run(n, pa, pb, (uint8_t *)c, p, 0);
}
