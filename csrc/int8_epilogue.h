/* The int8 microkernels' epilogue: what a finished tile adds to its exact sums and writes (int32, or scaled
 * float32 / float16 / bfloat16), the parameters the driver passes, and its portable scalar form. */
#ifndef GEMMKIT_INT8_EPILOGUE_H
#define GEMMKIT_INT8_EPILOGUE_H

#include "platform.h"

/* What the int8 microkernel's epilogue adds to the raw sum S[i][j] = sum_k A'[i][k] * B[k][j]
 * (A' unsigned bytes, B signed bytes) of one MR x NR tile:
 *   acc  = S + row_comp[i] + col_comp[j]            (exact, in double: |acc| < 2^53)
 * then, by the destination type `dst`:
 *   GK_DST_INT32: C = round_half_even(alpha * acc + beta * C + row_add[i] + col_add[j]), saturated to
 *                 int32; beta == 0: C is not read. row_add / col_add may be NULL.
 *   GK_DST_FLOAT32 / FLOAT16 / BFLOAT16 (scaled float output, alpha = 1, beta = 0, no adds):
 *                 y = float32(acc) * first[.] * second[.] (+ bias) in float32, one rounding per operation
 *                 (no fused multiply-add), then rounded to nearest even into the destination type:
 *                 first = col_scale[j], second = row_scale[i] (row_scale_first == 0), or the other way
 *                 round (row_scale_first == 1, the product computed transposed); bias = col_bias[j] or
 *                 row_bias[i] when one is given. C holds elements of that type (ldc counts them).
 * Integer shortcuts a kernel may take instead (same results, the double fields stay valid):
 *   GK_EP_INT64: alpha == 1, beta in {0, 1}: C = sat32(S + row_int[i] + col_int[j] + beta * C)
 *   GK_EP_INT32: alpha == 1, beta == 0 and |S| + |row| + |col| < 2^31 proven by the driver:
 *                acc = S + row_i32[i] + col_i32[j] in int32 arithmetic (the SIMD float epilogues
 *                need this mode; the driver sends float tiles in other modes to the scalar one) */
enum { GK_EP_DOUBLE = 0, GK_EP_INT64 = 1, GK_EP_INT32 = 2 };
enum { GK_DST_INT32 = 0, GK_DST_FLOAT32 = 1, GK_DST_FLOAT16 = 2, GK_DST_BFLOAT16 = 3 };
typedef struct {
    const double *row_comp;    /* MR entries */
    const double *col_comp;    /* NR entries */
    const double *row_add;     /* MR entries or NULL */
    const double *col_add;     /* NR entries or NULL */
    double alpha, beta;
    int mode;
    const int64_t *row_int, *col_int;   /* comp + add, as integers (GK_EP_INT64) */
    const int32_t *row_i32, *col_i32;   /* the same, narrowed (GK_EP_INT32) */
    int dst;                            /* GK_DST_* */
    const float *row_scale, *col_scale; /* MR / NR entries (float destinations) */
    int row_scale_first;
    const float *row_bias, *col_bias;   /* MR / NR entries; at most one, or neither */
} gk_int8_epilogue_t;

/* Bytes per destination element. */
static inline int gk_dst_size(int dst) { return dst == GK_DST_FLOAT16 || dst == GK_DST_BFLOAT16 ? 2 : 4; }

/* The float epilogue of one element from its exact sum: y as the formula above, before conversion. */
static inline float gk_int8_scaled_value(float acc, const gk_int8_epilogue_t *ep, int64_t i, int64_t j) {
    const float first = ep->row_scale_first ? ep->row_scale[i] : ep->col_scale[j];
    const float second = ep->row_scale_first ? ep->col_scale[j] : ep->row_scale[i];
    float y = acc * first;
    y = y * second;
    if (ep->col_bias) y = y + ep->col_bias[j];
    else if (ep->row_bias) y = y + ep->row_bias[i];
    return y;
}

/* The epilogue in portable C for an m x n tile whose exact raw sums are S (row stride lds): the
 * GK_EP_DOUBLE formula above, elementwise. Edge tiles, the dot path and the portable kernel use it. */
void gk_int8_epilogue_scalar(int64_t m, int64_t n, const int64_t *S, int64_t lds, void *C, int64_t ldc,
                           const gk_int8_epilogue_t *ep);

#endif /* GEMMKIT_INT8_EPILOGUE_H */
