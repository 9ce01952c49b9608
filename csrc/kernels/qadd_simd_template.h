/* The SIMD run kernel of gemmkit_quantized_add, written once over the vector primitives that
 * qadd_avx2.c (32-byte steps) and qadd_avx512.c (64-byte steps) define; same bytes as qadd_scalar.h.
 *
 * One step takes a byte vector of each input and makes four float vectors of QV_LANES lanes without
 * a conversion instruction: the bytes (int8 ones flipped by XOR 0x80 to value + 128) are interleaved
 * with zero bytes, then with the word 0x4B00, so each 32-bit lane reads as the float 2^23 + byte; one
 * exact subtraction of 2^23 + 128 * signed (+ the zero point, for DirectML) leaves the value. The
 * float32 arithmetic is the formula's own (each operation rounded as in qadd_scalar.h; DirectML's also
 * in two cheaper forms, taken only where csrc/qadd.c found them giving its bytes), converted to
 * int32 with round half to even, then narrowed with saturating packs (int32 -> int16, + the output
 * zero point in int16 with saturation, int16 -> uint8), which is the output clamp; an int8 output is
 * computed as value + 128 and flipped back. The packs undo the unpacks' lane order, so no permutes.
 * A tail shorter than a step goes through the same code on a copy in a stack buffer.
 *
 * The fixed-point form (params fx_*, used only where csrc/qadd.c verified it over all 65536 input
 * pairs) widens to int16 instead: P(x') = vpmulhrsw(x' << 7, m) per input, two saturating adds, an
 * arithmetic shift and the same unsigned pack: 2 * QV_LANES outputs per vector instead of QV_LANES. */
#include <string.h>
#include "qadd_scalar.h"

/* Required: QV_LANES (float lanes per vector; a byte vector holds 4 * QV_LANES bytes), QV_F, QV_I,
 * QV_LOADU_I / QV_STOREU_I (4 * QV_LANES bytes), QV_STREAM_I (non-temporal store, aligned),
 * QV_STREAM_FENCE(), QV_AND_I, QV_SET1_F, QV_SET1_I8, QV_SET1_I16, QV_XOR_I,
 * QV_UNPACKLO8 / QV_UNPACKHI8 / QV_UNPACKLO16 / QV_UNPACKHI16 (interleave within 128-bit lanes),
 * QV_PACKS32 (int32 -> int16, signed saturation), QV_ADDS16 (int16, signed saturation), QV_PACKUS16
 * (int16 -> uint8, unsigned saturation), QV_SLLI16(x, 7), QV_MULHRS16 (vpmulhrsw), QV_SRA16(x, count)
 * (int16 arithmetic shift by an __m128i count), QV_CAST_I2F (reinterpret), QV_CVT_F2I (round to
 * nearest even; NaN / out of range -> INT32_MIN), QV_SUB_F, QV_ADD_F, QV_MUL_F, QV_DIV_F, QV_MIN_F
 * (min(x, y) gives y when y is NaN), QV_FMA(a, b, c) = a * b + c rounded once, QV_NAME. */

#ifndef GK_FORCEINLINE
#if defined(_MSC_VER)
#define GK_FORCEINLINE __forceinline
#else
#define GK_FORCEINLINE inline __attribute__((always_inline))
#endif
#endif

#define QV_STEP (4 * QV_LANES) /* bytes of each operand per step */
/* The count QV_SRA16 takes and how it is made from an int (x86: an __m128i; qadd_neon.c defines its own). */
#ifndef QV_SHIFT_T
#define QV_SHIFT_T __m128i
#define QV_SHIFT_COUNT(n) _mm_cvtsi32_si128(n)
#endif

/* What the formula computes per lane; constants of the caller's loop, so the branches fold away. */
enum {
    QV_FIXED_POINT,      /* either formula, the verified 16-bit form, rounding half up */
    QV_FIXED_POINT_EVEN, /* the same rounding half to even */
    QV_DIRECTML,         /* q = (av + bv) / sc, |q| known to stay below 2^30 (no NaN) */
    QV_DIRECTML_CLAMPED, /* the same with q clamped to 2^20 first (NaN and -Inf still give INT32_MIN) */
    QV_DIRECTML_RECIPROCAL, /* q = (av + bv) * (1 / sc), where it gives QV_DIRECTML's bytes */
    QV_DIRECTML_FMA,     /* q = fma(b - zb, rb, (a - za) * ra), where it gives QV_DIRECTML's bytes */
    QV_ORT_A_FIRST,      /* fma(B, rb, fma(A, ra, fixed)) */
    QV_ORT_B_FIRST       /* fma(A, ra, fma(B, rb, fixed)) */
};
/* Which inputs vary along the run: both, only B (A is one value), only A (B is one value). */
enum { QV_BOTH_VARY, QV_A_REPEATED, QV_B_REPEATED };

/* What every element of a run shares. */
typedef struct {
    QV_I a_flip, b_flip, out_flip; /* XOR 0x80 for int8 bytes, 0 for uint8 */
    QV_I magic16;                  /* the word 0x4B00, the high half of the float 2^23 */
    QV_I out_add16;                /* added in int16 after the rounding: DirectML's output zero point,
                                    * + 128 for an int8 output (ONNX Runtime: just the 128) */
    QV_F a_off, b_off;             /* 2^23 + 128 * signed (+ the zero point for DirectML) */
    QV_F a_rep, b_rep;             /* a repeated input: DirectML (x - zp) * scale, ONNX Runtime x */
    QV_F sa, sb, sc, sc_inv, lim;  /* DirectML */
    QV_F dml_ra, dml_rb, a_centered_rep, b_centered_rep; /* its fma form; a repeated input's x - zp */
    QV_F ra, rb, fixed;            /* ONNX Runtime */
    QV_I fx_ma, fx_mb, fx_add;     /* the fixed-point form (int16 lanes) */
    QV_I fx_half_m1, fx_parity;    /* its half-even rounding: 2^(shift - 1) - 1, the zero point's parity */
    QV_I fx_a_rep, fx_b_rep;       /* P(x') of a repeated input */
    QV_SHIFT_T fx_shift;
} qv_ctx_t;

/* The fixed-point P(x') of the bytes' low (hi = 0) or high (hi = 1) halves of each 128-bit lane. */
static GK_FORCEINLINE QV_I qv_fx_product(QV_I flipped, QV_I m, const int hi) {
    const QV_I zero = QV_SET1_I8(0);
    const QV_I w = hi ? QV_UNPACKHI8(flipped, zero) : QV_UNPACKLO8(flipped, zero);
    return QV_MULHRS16(QV_SLLI16(w, 7), m);
}

/* One fixed-point step: QV_STEP output bytes. Rounding half up (the constant holds the 1/2), or, in
 * the half-even form, t + 1/2 - 1 + (1 if floor(t) is odd, the output zero point's parity undone). */
static GK_FORCEINLINE QV_I qv_fx_step(const qv_ctx_t *x, const uint8_t *a, const uint8_t *b, const int even,
                                      const int mode) {
    const QV_I va = mode == QV_A_REPEATED ? x->a_flip : QV_XOR_I(QV_LOADU_I(a), x->a_flip); /* (unused */
    const QV_I vb = mode == QV_B_REPEATED ? x->b_flip : QV_XOR_I(QV_LOADU_I(b), x->b_flip); /*  when repeated) */
    QV_I t[2];
    for (int h = 0; h < 2; h++) {
        const QV_I pa = mode == QV_A_REPEATED ? x->fx_a_rep : qv_fx_product(va, x->fx_ma, h);
        const QV_I pb = mode == QV_B_REPEATED ? x->fx_b_rep : qv_fx_product(vb, x->fx_mb, h);
        t[h] = QV_ADDS16(QV_ADDS16(pa, pb), x->fx_add);
        if (even) {
            const QV_I odd = QV_AND_I(QV_XOR_I(QV_SRA16(t[h], x->fx_shift), x->fx_parity), QV_SET1_I16(1));
            t[h] = QV_ADDS16(QV_ADDS16(t[h], x->fx_half_m1), odd);
        }
        t[h] = QV_SRA16(t[h], x->fx_shift);
    }
    return QV_XOR_I(QV_PACKUS16(t[0], t[1]), x->out_flip);
}

/* A byte vector -> four float vectors 2^23 + (byte ^ flip), in the unpacks' lane order. */
static GK_FORCEINLINE void qv_widen(QV_I v, QV_I flip, QV_I magic16, QV_F f[4]) {
    const QV_I zero = QV_SET1_I8(0);
    v = QV_XOR_I(v, flip);
    const QV_I lo = QV_UNPACKLO8(v, zero), hi = QV_UNPACKHI8(v, zero);
    f[0] = QV_CAST_I2F(QV_UNPACKLO16(lo, magic16));
    f[1] = QV_CAST_I2F(QV_UNPACKHI16(lo, magic16));
    f[2] = QV_CAST_I2F(QV_UNPACKLO16(hi, magic16));
    f[3] = QV_CAST_I2F(QV_UNPACKHI16(hi, magic16));
}

/* One float vector of each input (2^23-biased; unused when that input is repeated) -> int32. */
static GK_FORCEINLINE QV_I qv_value(const qv_ctx_t *x, QV_F fa, QV_F fb, const int kind, const int mode) {
    if (kind == QV_ORT_A_FIRST || kind == QV_ORT_B_FIRST) {
        const QV_F av = mode == QV_A_REPEATED ? x->a_rep : QV_SUB_F(fa, x->a_off);
        const QV_F bv = mode == QV_B_REPEATED ? x->b_rep : QV_SUB_F(fb, x->b_off);
        if (kind == QV_ORT_A_FIRST) return QV_CVT_F2I(QV_FMA(bv, x->rb, QV_FMA(av, x->ra, x->fixed)));
        return QV_CVT_F2I(QV_FMA(av, x->ra, QV_FMA(bv, x->rb, x->fixed)));
    }
    if (kind == QV_DIRECTML_FMA) {
        const QV_F ac = mode == QV_A_REPEATED ? x->a_centered_rep : QV_SUB_F(fa, x->a_off);
        const QV_F bc = mode == QV_B_REPEATED ? x->b_centered_rep : QV_SUB_F(fb, x->b_off);
        return QV_CVT_F2I(QV_FMA(bc, x->dml_rb, QV_MUL_F(ac, x->dml_ra)));
    }
    const QV_F av = mode == QV_A_REPEATED ? x->a_rep : QV_MUL_F(QV_SUB_F(fa, x->a_off), x->sa);
    const QV_F bv = mode == QV_B_REPEATED ? x->b_rep : QV_MUL_F(QV_SUB_F(fb, x->b_off), x->sb);
    QV_F q = kind == QV_DIRECTML_RECIPROCAL ? QV_MUL_F(QV_ADD_F(av, bv), x->sc_inv) : QV_DIV_F(QV_ADD_F(av, bv), x->sc);
    if (kind == QV_DIRECTML_CLAMPED) q = QV_MIN_F(x->lim, q);
    return QV_CVT_F2I(q);
}

/* One step: QV_STEP output bytes from a and b (a repeated input is not read). */
static GK_FORCEINLINE QV_I qv_step(const qv_ctx_t *x, const uint8_t *a, const uint8_t *b, const int kind,
                                   const int mode) {
    if (kind == QV_FIXED_POINT || kind == QV_FIXED_POINT_EVEN) return qv_fx_step(x, a, b, kind == QV_FIXED_POINT_EVEN, mode);
    QV_F fa[4], fb[4];
    if (mode != QV_A_REPEATED) qv_widen(QV_LOADU_I(a), x->a_flip, x->magic16, fa);
    else fa[0] = fa[1] = fa[2] = fa[3] = x->a_rep;
    if (mode != QV_B_REPEATED) qv_widen(QV_LOADU_I(b), x->b_flip, x->magic16, fb);
    else fb[0] = fb[1] = fb[2] = fb[3] = x->b_rep;
    QV_I r[4];
    for (int q = 0; q < 4; q++) r[q] = qv_value(x, fa[q], fb[q], kind, mode);
    const QV_I lo = QV_ADDS16(QV_PACKS32(r[0], r[1]), x->out_add16);
    const QV_I hi = QV_ADDS16(QV_PACKS32(r[2], r[3]), x->out_add16);
    return QV_XOR_I(QV_PACKUS16(lo, hi), x->out_flip);
}

/* Outputs [i, i + rest) (rest < QV_STEP) through stack copies (c may be a or b itself). */
static GK_FORCEINLINE void qv_part(int64_t i, size_t rest, const uint8_t *a, const uint8_t *b, uint8_t *c,
                                   const qv_ctx_t *x, const int kind, const int mode) {
    uint8_t ta[QV_STEP] = {0}, tb[QV_STEP] = {0}, tc[QV_STEP];
    if (mode != QV_A_REPEATED) memcpy(ta, a + i, rest);
    if (mode != QV_B_REPEATED) memcpy(tb, b + i, rest);
    QV_STOREU_I(tc, qv_step(x, ta, tb, kind, mode));
    memcpy(c + i, tc, rest);
}

/* n outputs: whole steps, then the tail. With `stream` (inputs that both vary, outputs too many to
 * stay in cache), a head up to the vector alignment of c, then non-temporal stores. */
static GK_FORCEINLINE void qv_loop(int64_t n, const uint8_t *a, const uint8_t *b, uint8_t *c, const qv_ctx_t *x,
                                   const int kind, const int mode, const int stream) {
    int64_t i = 0;
    if (stream) {
        const int64_t head = GK_MIN(n, (int64_t)((QV_STEP - (uintptr_t)c % QV_STEP) % QV_STEP));
        if (head > 0) qv_part(0, (size_t)head, a, b, c, x, kind, mode);
        for (i = head; i + QV_STEP <= n; i += QV_STEP) QV_STREAM_I(c + i, qv_step(x, a + i, b + i, kind, mode));
        QV_STREAM_FENCE();
    } else {
        for (; i + QV_STEP <= n; i += QV_STEP)
            QV_STOREU_I(c + i, qv_step(x, mode == QV_A_REPEATED ? a : a + i, mode == QV_B_REPEATED ? b : b + i,
                                       kind, mode));
    }
    if (i < n) qv_part(i, (size_t)(n - i), a, b, c, x, kind, mode);
}

static GK_FORCEINLINE void qv_loop_kind(int64_t n, const uint8_t *a, const uint8_t *b, uint8_t *c,
                                        const qv_ctx_t *x, const int kind, const int mode, const int stream) {
    switch (kind) {
    case QV_FIXED_POINT: qv_loop(n, a, b, c, x, QV_FIXED_POINT, mode, stream); break;
    case QV_FIXED_POINT_EVEN: qv_loop(n, a, b, c, x, QV_FIXED_POINT_EVEN, mode, stream); break;
    case QV_DIRECTML: qv_loop(n, a, b, c, x, QV_DIRECTML, mode, stream); break;
    case QV_DIRECTML_CLAMPED: qv_loop(n, a, b, c, x, QV_DIRECTML_CLAMPED, mode, stream); break;
    case QV_DIRECTML_RECIPROCAL: qv_loop(n, a, b, c, x, QV_DIRECTML_RECIPROCAL, mode, stream); break;
    case QV_DIRECTML_FMA: qv_loop(n, a, b, c, x, QV_DIRECTML_FMA, mode, stream); break;
    case QV_ORT_A_FIRST: qv_loop(n, a, b, c, x, QV_ORT_A_FIRST, mode, stream); break;
    default: qv_loop(n, a, b, c, x, QV_ORT_B_FIRST, mode, stream); break;
    }
}

static void QV_NAME(int64_t n, const void *a, int64_t a_step, const void *b, int64_t b_step, void *c,
                    const gk_qadd_params_t *p) {
    const uint8_t *pa = (const uint8_t *)a, *pb = (const uint8_t *)b;
    const int mode = a_step == 0 ? QV_A_REPEATED : (b_step == 0 ? QV_B_REPEATED : QV_BOTH_VARY);
    const int ort = p->formula == GEMMKIT_QADD_ONNXRUNTIME, out_signed = p->out_min < 0;
    const int32_t a0 = gk_qadd_load(pa, p->a_signed), b0 = gk_qadd_load(pb, p->b_signed);
    qv_ctx_t x;
    x.a_flip = QV_SET1_I8(p->a_signed ? (char)0x80 : 0);
    x.b_flip = QV_SET1_I8(p->b_signed ? (char)0x80 : 0);
    x.out_flip = QV_SET1_I8(out_signed ? (char)0x80 : 0);
    x.magic16 = QV_SET1_I16(0x4B00);
    x.out_add16 = QV_SET1_I16((short)((ort ? 0 : p->out_zp) + (out_signed ? 128 : 0)));
    const float two23 = 8388608.0f; /* the sums below are integers < 2^24: exact */
    x.a_off = QV_SET1_F(two23 + (float)(p->a_signed ? 128 : 0) + (ort ? 0.0f : (float)p->a_zp));
    x.b_off = QV_SET1_F(two23 + (float)(p->b_signed ? 128 : 0) + (ort ? 0.0f : (float)p->b_zp));
    x.a_rep = QV_SET1_F(ort ? (float)a0 : (float)(a0 - p->a_zp) * p->a_scale);
    x.b_rep = QV_SET1_F(ort ? (float)b0 : (float)(b0 - p->b_zp) * p->b_scale);
    x.sa = QV_SET1_F(p->a_scale); x.sb = QV_SET1_F(p->b_scale); x.sc = QV_SET1_F(p->out_scale);
    x.sc_inv = QV_SET1_F(p->out_scale_inv);
    x.dml_ra = QV_SET1_F(p->dml_ra); x.dml_rb = QV_SET1_F(p->dml_rb);
    x.a_centered_rep = QV_SET1_F((float)(a0 - p->a_zp)); x.b_centered_rep = QV_SET1_F((float)(b0 - p->b_zp));
    x.lim = QV_SET1_F(GK_QADD_Q_LIMIT);
    x.ra = QV_SET1_F(p->ra); x.rb = QV_SET1_F(p->rb); x.fixed = QV_SET1_F(p->ort_fixed);
    x.fx_ma = QV_SET1_I16((short)p->fx_ma); x.fx_mb = QV_SET1_I16((short)p->fx_mb);
    x.fx_add = QV_SET1_I16((short)p->fx_add);
    x.fx_shift = QV_SHIFT_COUNT(p->fx_shift);
    x.fx_half_m1 = QV_SET1_I16((short)(p->fx_shift > 0 ? (1 << (p->fx_shift - 1)) - 1 : 0));
    x.fx_parity = QV_SET1_I16((short)p->fx_parity);
    /* a repeated input's product, by the vector code itself (every lane holds it) */
    x.fx_a_rep = qv_fx_product(QV_XOR_I(QV_SET1_I8((char)*pa), x.a_flip), x.fx_ma, 0);
    x.fx_b_rep = qv_fx_product(QV_XOR_I(QV_SET1_I8((char)*pb), x.b_flip), x.fx_mb, 0);
    const int kind = p->fx_ok ? (p->fx_even ? QV_FIXED_POINT_EVEN : QV_FIXED_POINT)
                     : ort ? (p->ort_a_first ? QV_ORT_A_FIRST : QV_ORT_B_FIRST)
                           : p->dml_needs_clamp                         ? QV_DIRECTML_CLAMPED
                             : p->dml_form == GK_QADD_DML_FMA        ? QV_DIRECTML_FMA
                             : p->dml_form == GK_QADD_DML_RECIPROCAL ? QV_DIRECTML_RECIPROCAL
                                                                     : QV_DIRECTML;
    uint8_t *pc = (uint8_t *)c;
    if (mode == QV_A_REPEATED) qv_loop_kind(n, pa, pb, pc, &x, kind, QV_A_REPEATED, 0);
    else if (mode == QV_B_REPEATED) qv_loop_kind(n, pa, pb, pc, &x, kind, QV_B_REPEATED, 0);
    else if (p->stream_out && n >= 2 * QV_STEP) qv_loop_kind(n, pa, pb, pc, &x, kind, QV_BOTH_VARY, 1);
    else qv_loop_kind(n, pa, pb, pc, &x, kind, QV_BOTH_VARY, 0);
}
