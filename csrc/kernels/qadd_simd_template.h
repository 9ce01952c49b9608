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

/* mode: 0 = both inputs vary, 1 = A is one value, 2 = B is one value (compile-time after inlining);
 * a repeated value is loaded once, the arithmetic per element is the same in every mode. */
static inline void qv_run(int64_t n, const uint8_t *a, const uint8_t *b, uint8_t *c, const gk_qadd_params_t *p,
                          int mode) {
    const int a_scalar = mode == 1, b_scalar = mode == 2;
    const int32_t a0 = gk_qadd_load(a, p->a_signed), b0 = gk_qadd_load(b, p->b_signed);
    qv_types_t t;
    t.a_xor = QV_SET1_I(p->a_signed ? 0x80 : 0); t.a_bias = QV_SET1_I(p->a_signed ? 128 : 0);
    t.b_xor = QV_SET1_I(p->b_signed ? 0x80 : 0); t.b_bias = QV_SET1_I(p->b_signed ? 128 : 0);
    t.out_lo = QV_SET1_I(p->out_min); t.out_hi = QV_SET1_I(p->out_max);
    t.out_bias = QV_SET1_I(p->out_min < 0 ? 128 : 0); t.out_xor = QV_SET1_I(p->out_min < 0 ? 0x80 : 0);
    const QV_I a_const = QV_SET1_I(a0), b_const = QV_SET1_I(b0);
    int64_t i = 0;
    if (p->formula == GEMMKIT_QADD_ONNXRUNTIME) {
        const QV_F ra = QV_SET1_F(p->ra), rb = QV_SET1_F(p->rb), fixed = QV_SET1_F(p->ort_fixed);
        const int a_first = p->ort_a_first;
        for (; i + QV_LANES <= n; i += QV_LANES) {
            const QV_I av = a_scalar ? a_const : qv_load(a + i, t.a_xor, t.a_bias);
            const QV_I bv = b_scalar ? b_const : qv_load(b + i, t.b_xor, t.b_bias);
            /* INT32_MIN (NaN, out of range) clamps to the minimum */
            qv_store(c + i, QV_CVT_F2I(qv_ort(av, bv, ra, rb, fixed, a_first)), &t);
        }
    } else {
        const QV_F sa = QV_SET1_F(p->a_scale), sb = QV_SET1_F(p->b_scale), sc = QV_SET1_F(p->out_scale);
        const QV_I za = QV_SET1_I(p->a_zp), zb = QV_SET1_I(p->b_zp), zc = QV_SET1_I(p->out_zp);
        if (a_scalar) {
            const QV_F av = QV_SET1_F((float)(a0 - p->a_zp) * p->a_scale);
            for (; i + QV_LANES <= n; i += QV_LANES)
                qv_store(c + i, qv_directml(av, qv_load(b + i, t.b_xor, t.b_bias), zb, sb, sc, zc), &t);
        } else if (b_scalar) {
            /* a + b = b + a: B's constant takes A's place (the float32 sum is commutative) */
            const QV_F bv = QV_SET1_F((float)(b0 - p->b_zp) * p->b_scale);
            for (; i + QV_LANES <= n; i += QV_LANES)
                qv_store(c + i, qv_directml(bv, qv_load(a + i, t.a_xor, t.a_bias), za, sa, sc, zc), &t);
        } else {
            for (; i + QV_LANES <= n; i += QV_LANES) {
                const QV_F av = QV_MUL_F(QV_CVT_I2F(QV_SUB_I(qv_load(a + i, t.a_xor, t.a_bias), za)), sa);
                qv_store(c + i, qv_directml(av, qv_load(b + i, t.b_xor, t.b_bias), zb, sb, sc, zc), &t);
            }
        }
    }
    for (; i < n; i++) {
        const int32_t av = a_scalar ? a0 : gk_qadd_load(a + i, p->a_signed);
        const int32_t bv = b_scalar ? b0 : gk_qadd_load(b + i, p->b_signed);
        c[i] = (uint8_t)gk_qadd_one(p, av, bv);
    }
}

static void QV_NAME(int64_t n, const void *a, int64_t a_step, const void *b, int64_t b_step, void *c,
                    const gk_qadd_params_t *p) {
    const uint8_t *pa = (const uint8_t *)a, *pb = (const uint8_t *)b;
    if (a_step == 0) qv_run(n, pa, pb, (uint8_t *)c, p, 1);
    else if (b_step == 0) qv_run(n, pa, pb, (uint8_t *)c, p, 2);
    else qv_run(n, pa, pb, (uint8_t *)c, p, 0);
}
