/* Packing routines shared by the drivers: they turn a block of the user's operand into the
 * micro-panel layout a microkernel streams (fp32 panels, int8 panels with row/column sums). */
#ifndef GEMMKIT_PACK_H
#define GEMMKIT_PACK_H
#include "kernel.h"

/* k-major blocks (A transposed, B plain) of up to this many source bytes, already in cache, are packed
 * panel by panel; bigger ones row by row (pack_real_template.h, pack_complex_template.h). */
#define GK_PACK_SMALL_BLOCK_BYTES (128 * 1024)

/* Real panels (float f32, double f64): an mc x kc block of op(A) into MR-row micro-panels (panel p at
 * dst + p*mr*kc, element (k, i) at k*mr + i), a kc x nc block of op(B) into NR-column micro-panels
 * (element (k, j) at k*nr + j); edges zero-padded. */
void gk_pack_a_f32(int transa, const float *A, int64_t lda, int64_t mc, int64_t kc, int mr, float *GK_RESTRICT dst);
void gk_pack_b_f32(int transb, const float *B, int64_t ldb, int64_t kc, int64_t nc, int nr, float *GK_RESTRICT dst);
void gk_pack_a_f64(int transa, const double *A, int64_t lda, int64_t mc, int64_t kc, int mr, double *GK_RESTRICT dst);
void gk_pack_b_f64(int transb, const double *B, int64_t ldb, int64_t kc, int64_t nc, int nr, double *GK_RESTRICT dst);

/* float16 (f16; f16_f16c: by F16C, in kernels/half_avx2.c) and bfloat16 (bf16) blocks, given as their
 * uint16_t bits, widened to float panels as above. */
void gk_pack_a_f16(int transa, const uint16_t *A, int64_t lda, int64_t mc, int64_t kc, int mr, float *GK_RESTRICT dst);
void gk_pack_b_f16(int transb, const uint16_t *B, int64_t ldb, int64_t kc, int64_t nc, int nr, float *GK_RESTRICT dst);
void gk_pack_a_bf16(int transa, const uint16_t *A, int64_t lda, int64_t mc, int64_t kc, int mr, float *GK_RESTRICT dst);
void gk_pack_b_bf16(int transb, const uint16_t *B, int64_t ldb, int64_t kc, int64_t nc, int nr, float *GK_RESTRICT dst);
void gk_pack_a_f16_f16c(int transa, const uint16_t *A, int64_t lda, int64_t mc, int64_t kc, int mr,
                     float *GK_RESTRICT dst);
void gk_pack_b_f16_f16c(int transb, const uint16_t *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                     float *GK_RESTRICT dst);

/* bfloat16 blocks for a pair kernel (gk_real_kernel_t.k_pair_group), as their uint16_t bits, k in pairs: pair q of
 * row i is the 32-bit (op(A)[i][2q] | op(A)[i][2q + 1] << 16), the order vdpbf16ps, tdpbf16ps and BFMMLA read.
 * A: MR-row panels (panel p at dst + p*mr*kp) of kp / group groups, each MR rows of `group` pairs; B: NR-column
 * panels (p*nr*kp) of kp / group groups, each NR columns of `group` pairs (group 1: kp rows of NR pairs, the VNNI-2
 * layout). kp is a multiple of each operand's group; k values past kvals
 * (the block's values of the caller's K), rows past mc and columns past nc are zero. Returns 1 when a value
 * packed is a bfloat16 subnormal (zero exponent, nonzero fraction), which the hardware reads as zero. */
int gk_pack_a_bf16_pairs(int transa, const uint16_t *A, int64_t lda, int64_t mc, int64_t kp, int64_t kvals, int mr,
                         int group, uint32_t *GK_RESTRICT dst);
int gk_pack_b_bf16_pairs(int transb, const uint16_t *B, int64_t ldb, int64_t kp, int64_t kvals, int64_t nc, int nr,
                         int group, uint32_t *GK_RESTRICT dst);

/* Complex blocks for the 1m method, over real panels of depth 2kc (kc complex k):
 *  A: row i, real k' = 2k holds Re(alpha * op(A)[i][k]), k' = 2k+1 its Im (alpha NULL: 1);
 *  B: complex column j is real columns 2j, 2j+1; real row 2k holds (Re b, Im b), row 2k+1 (-Im b, Re b)
 *     for b = op(B)[k][j] (nr real columns = nr/2 complex columns per panel).
 * The real product of the two is then the complex product in (re, im) pairs: C viewed as real. conj*
 * conjugates the operand (trans 'C'). */
void gk_pack_a_1m_f32(int transa, int conja, const float *alpha, const float *A, int64_t lda, int64_t mc, int64_t kc,
                   int mr, float *GK_RESTRICT dst);
void gk_pack_b_1m_f32(int transb, int conjb, const float *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                   float *GK_RESTRICT dst);
void gk_pack_a_1m_f64(int transa, int conja, const double *alpha, const double *A, int64_t lda, int64_t mc,
                   int64_t kc, int mr, double *GK_RESTRICT dst);
void gk_pack_b_1m_f64(int transb, int conjb, const double *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                   double *GK_RESTRICT dst);
/* Complex panels for a native complex kernel (kernel->complex_native), every element as a (re, im) pair:
 *  A: panels of mr rows, per k the panel's alpha * op(A)[i][k] (2 mr reals, zero past mc; alpha NULL: 1);
 *  B: panels of nr / 2 complex columns, per k the panel's op(B)[k][j] (nr reals, zero past nc).
 * A panel holds 2 mr x kc or nr x kc reals; conj* conjugates the operand. */
void gk_pack_a_cx_f32(int transa, int conja, const float *alpha, const float *A, int64_t lda, int64_t mc, int64_t kc,
                   int mr, float *GK_RESTRICT dst);
void gk_pack_a_cx_f64(int transa, int conja, const double *alpha, const double *A, int64_t lda, int64_t mc,
                   int64_t kc, int mr, double *GK_RESTRICT dst);
void gk_pack_b_cx_f32(int transb, int conjb, const float *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                   float *GK_RESTRICT dst);
void gk_pack_b_cx_f64(int transb, int conjb, const double *B, int64_t ldb, int64_t kc, int64_t nc, int nr,
                   double *GK_RESTRICT dst);

/* int8 panels. A' = op(A) as unsigned bytes (flip: XOR 0x80, turning s8 into u8 = s8 + 128);
 * k is interleaved in groups of `kgroup` values per row/column; elem_size 2 widens to int16.
 * K is zero-padded up to a multiple of kgroup. rowsum[i] = sum_k A'[i][k], colsum[j] = sum_k B[k][j]. */
void gk_pack_a_int8(int transa, const uint8_t *A, int64_t lda, int64_t mc, int64_t kc, int mr, int kgroup,
               int elem_size, int flip, void *GK_RESTRICT dst, int32_t *GK_RESTRICT rowsum);
void gk_pack_b_int8(int transb, const int8_t *B, int64_t ldb, int64_t kc, int64_t nc, int nr, int kgroup,
               int elem_size, void *GK_RESTRICT dst, int32_t *GK_RESTRICT colsum);

/* Whether rows x cols bfloat16 values (row r at X + r * ld) hold a subnormal (for operands read in place). */
int gk_bf16_rows_subnormal(const uint16_t *X, int64_t ld, int64_t rows, int64_t cols);
/* A's panels for a pair kernel that reads A as rows (gk_real_kernel_t.a_rows): row i of op(A)'s block as kp pairs
 * at dst + i * stride (zero past kvals values; rows mc .. up to a multiple of mr zero), stride = kp +
 * GK_PAIR_ROW_PAD: rows a power of two apart would fall in a few cache sets. Returns whether a value was subnormal. */
#define GK_PAIR_ROW_PAD 16
#define GK_PAIR_ROW(kp) ((kp) + GK_PAIR_ROW_PAD) /* pairs from one packed row to the next */
int gk_pack_a_bf16_rows(int transa, const uint16_t *A, int64_t lda, int64_t mc, int64_t kp, int64_t kvals, int mr,
                        uint32_t *GK_RESTRICT dst);
#endif
