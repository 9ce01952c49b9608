/* The loops over tokens shared by the SIMD quantizers (four tokens' max |x'| read side by side, then each token
 * quantized; or one token at a time, pipelined) and their kernel table; included by quantize_<isa>.c last. */
#ifndef GEMMKIT_QUANTIZE_ROWS_H
#define GEMMKIT_QUANTIZE_ROWS_H

/* M tokens (rows of x, ldx elements apart; q ldq bytes apart), four at a time: their first pass leaves them
 * in the cache for the second. (On Zen 4, prefetching the next four during the second pass, eight streams,
 * four far-apart quarters and non-temporal stores of q all measured no faster.) */
static GK_FORCEINLINE void qz_rows(int type, int64_t M, int64_t K, const void *x, int64_t ldx, const float *smooth,
                                   int mode, int8_t *q, int64_t ldq, float *scale) {
    const size_t esz = type == GEMMKIT_OUT_FLOAT32 ? 4 : 2;
#define QZ_ROW(i) ((const char *)x + (size_t)((i) * ldx) * esz)
    for (int64_t i = 0; i < M; i += 4) {
        const int n = (int)GK_MIN((int64_t)4, M - i);
        const void *rows[4];
        uint32_t amax[4];
        for (int t = 0; t < n; t++) rows[t] = QZ_ROW(i + t);
        if (smooth) qz_amax_rows(type, n, rows, K, smooth, mode, amax);
        else qz_amax_rows(type, n, rows, K, NULL, 0, amax); /* compiled without the smoothing */
        for (int t = 0; t < n; t++) {
            const float s = gk_qz_scale(amax[t]);
            int8_t *qt = q + (i + t) * ldq;
            scale[i + t] = s;
            if (!(s > 0.0f)) memset(qt, 0, (size_t)K); /* zeros, an underflowing scale, or NaN / Inf */
            else if (smooth) qz_quantize_token(type, K, rows[t], smooth, mode, s, qt);
            else qz_quantize_token(type, K, rows[t], NULL, 0, s, qt);
        }
    }
#undef QZ_ROW
}

#if defined(QZ_HAVE_TOKEN_NEXT)
/* M tokens as qz_rows, one at a time: token i quantized while the max of token i + 1 is taken in the same loop (the
 * ISA's qz_quantize_token_next), so the second read of a token and the first of the next overlap. Faster while x sits
 * in the caches; slower from memory, where qz_rows's four streams keep more lines in flight (see docs/decisions.md,
 * qz_rows_pipelined). */
static GK_FORCEINLINE void qz_rows_pipelined(int type, int64_t M, int64_t K, const void *x, int64_t ldx,
                                             const float *smooth, int mode, int8_t *q, int64_t ldq, float *scale) {
    const size_t esz = type == GEMMKIT_OUT_FLOAT32 ? 4 : 2;
#define QZ_ROW(i) ((const char *)x + (size_t)((i) * ldx) * esz)
    uint32_t amax;
    const void *first = QZ_ROW(0);
    qz_amax_rows(type, 1, &first, K, smooth, mode, &amax);
    for (int64_t i = 0; i < M; i++) {
        const void *xi = QZ_ROW(i), *xn = i + 1 < M ? QZ_ROW(i + 1) : NULL;
        const float s = gk_qz_scale(amax);
        int8_t *qt = q + i * ldq;
        uint32_t next = 0;
        scale[i] = s;
        if (!(s > 0.0f)) { /* zeros, an underflowing scale, or NaN / Inf: nothing to quantize */
            memset(qt, 0, (size_t)K);
            if (xn) qz_amax_rows(type, 1, &xn, K, smooth, mode, &next);
        } else if (smooth) {
            if (xn) qz_quantize_token_next(type, K, xi, smooth, mode, s, qt, xn, &next);
            else qz_quantize_token(type, K, xi, smooth, mode, s, qt);
        } else {
            if (xn) qz_quantize_token_next(type, K, xi, NULL, 0, s, qt, xn, &next);
            else qz_quantize_token(type, K, xi, NULL, 0, s, qt);
        }
        amax = next;
    }
#undef QZ_ROW
}
#endif

/* The kernel table `TABLE` named `NAME`: one entry per input type, each qz_rows for that type (and
 * qz_rows_pipelined for an x in the caches where the ISA has it). */
#define GK_QZ_ROWS_ENTRY(FN, ROWS, TYPE)                                                                      \
    static void FN(int64_t M, int64_t K, const void *x, int64_t ldx, const float *smooth, int mode, int8_t *q,    \
                   int64_t ldq, float *scale) {                                                               \
        ROWS(TYPE, M, K, x, ldx, smooth, mode, q, ldq, scale);                                                \
    }
#define GK_QZ_ROWS_ENTRIES(TABLE, ROWS)                                                                       \
    GK_QZ_ROWS_ENTRY(TABLE##_f32, ROWS, GEMMKIT_OUT_FLOAT32)                                                  \
    GK_QZ_ROWS_ENTRY(TABLE##_f16, ROWS, GEMMKIT_OUT_FLOAT16)                                                  \
    GK_QZ_ROWS_ENTRY(TABLE##_bf16, ROWS, GEMMKIT_OUT_BFLOAT16)
#if defined(QZ_HAVE_TOKEN_NEXT)
#define GK_QZ_KERNEL_TABLE(TABLE, NAME)                                                                       \
    GK_QZ_ROWS_ENTRIES(TABLE, qz_rows)                                                                        \
    GK_QZ_ROWS_ENTRIES(TABLE##_in_cache, qz_rows_pipelined)                                                   \
    const gk_quant_kernel_t TABLE = {NAME,                                                                    \
                                     {TABLE##_f32, TABLE##_f16, TABLE##_bf16},                                \
                                     {TABLE##_in_cache_f32, TABLE##_in_cache_f16, TABLE##_in_cache_bf16}};
#else
#define GK_QZ_KERNEL_TABLE(TABLE, NAME)                                                                       \
    GK_QZ_ROWS_ENTRIES(TABLE, qz_rows)                                                                        \
    const gk_quant_kernel_t TABLE = {NAME, {TABLE##_f32, TABLE##_f16, TABLE##_bf16}, {NULL, NULL, NULL}};
#endif

#endif
