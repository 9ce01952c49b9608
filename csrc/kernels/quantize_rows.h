/* The loop over tokens shared by the SIMD quantizers (four tokens' max |x'| read side by side, then each token
 * quantized) and their kernel table; included by quantize_<isa>.c after its qz_amax_rows and qz_quantize_token. */
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

/* The kernel table `TABLE` named `NAME`: one entry per input type, each qz_rows for that type. */
#define GK_QZ_ROWS_ENTRY(FN, TYPE)                                                                            \
    static void FN(int64_t M, int64_t K, const void *x, int64_t ldx, const float *smooth, int mode, int8_t *q,    \
                   int64_t ldq, float *scale) {                                                               \
        qz_rows(TYPE, M, K, x, ldx, smooth, mode, q, ldq, scale);                                             \
    }
#define GK_QZ_KERNEL_TABLE(TABLE, NAME)                                                                       \
    GK_QZ_ROWS_ENTRY(TABLE##_f32, GEMMKIT_OUT_FLOAT32)                                                        \
    GK_QZ_ROWS_ENTRY(TABLE##_f16, GEMMKIT_OUT_FLOAT16)                                                        \
    GK_QZ_ROWS_ENTRY(TABLE##_bf16, GEMMKIT_OUT_BFLOAT16)                                                      \
    const gk_quant_kernel_t TABLE = {NAME, {TABLE##_f32, TABLE##_f16, TABLE##_bf16}};

#endif
