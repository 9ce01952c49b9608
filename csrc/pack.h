/* Packing routines shared by the drivers: they turn a block of the user's operand into the
 * micro-panel layout a microkernel streams (fp32 panels, int8 panels with row/column sums). */
#ifndef GEMMKIT_PACK_H
#define GEMMKIT_PACK_H
#include "gemmkit_internal.h"

void pack_a_f32(int transa, const float *A, int64_t lda, int64_t mc, int64_t kc, int mr,
                float *GK_RESTRICT dst);
void pack_b_f32(int transb, const float *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                float *GK_RESTRICT dst);

/* int8 panels. A' = op(A) as unsigned bytes (flip: XOR 0x80, turning s8 into u8 = s8 + 128);
 * k is interleaved in groups of `kgroup` values per row/column; elem_size 2 widens to int16.
 * K is zero-padded up to a multiple of kgroup. rowsum[i] = sum_k A'[i][k], colsum[j] = sum_k B[k][j]. */
void pack_a_i8(int transa, const uint8_t *A, int64_t lda, int64_t mc, int64_t kc, int mr, int kgroup,
               int elem_size, int flip, void *GK_RESTRICT dst, int32_t *GK_RESTRICT rowsum);
void pack_b_i8(int transb, const int8_t *B, int64_t ldb, int64_t kc, int64_t nc, int nr, int kgroup,
               int elem_size, void *GK_RESTRICT dst, int32_t *GK_RESTRICT colsum);

#endif
