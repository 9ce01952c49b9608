/* AVX-512F dgemm: 12 x 16 microkernel (24 zmm accumulators) with 1..11-row variants and a dot path (few rows x
 * B^T, few columns); compiled with AVX-512 flags, run only where dispatch found AVX-512. */
#include "../kernel.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define MR 12
#define NV 2 /* zmm vectors per row of the tile */
#define NR (8 * NV)
#define PF_COLS 64 /* rows kernels with m <= 4: prefetch B this many columns ahead (4 panels) */

#define T double
#define V __m512d
#define VSUF pd
#define VL 8
#define TILE_FN dgemm_tile_avx512
#include "real_zmm_template.h"

#define DEFINE_ROWS_KERNEL(m) GK_ZMM_ROWS_KERNEL(ukernel_dgemm_avx512_##m##x16, m)
DEFINE_ROWS_KERNEL(1) DEFINE_ROWS_KERNEL(2) DEFINE_ROWS_KERNEL(3) DEFINE_ROWS_KERNEL(4)
DEFINE_ROWS_KERNEL(5) DEFINE_ROWS_KERNEL(6) DEFINE_ROWS_KERNEL(7) DEFINE_ROWS_KERNEL(8)
DEFINE_ROWS_KERNEL(9) DEFINE_ROWS_KERNEL(10) DEFINE_ROWS_KERNEL(11)

#if defined(__GNUC__) && !defined(GK_NO_INLINE_ASM)
/* The packed 12 x 16 k loop in inline assembly (real_zmm_asm.h), where GCC had kept a B vector on the
 * stack; A is 96 bytes a k step, prefetched 1536 bytes (16 k) ahead, six lines per four k. */
#define ZA_BCAST "vbroadcastsd"
#define ZA_FMA "vfmadd231pd"
#define ZA_ES 8
#define ZA_AB 96
#define ZA_PF_A 1536
#define ZA_PF_A_K4(n) ZA_PF_A_K4_##n
#define ZA_PF_A_K4_0 ZA_PF(0) ZA_PF(64)
#define ZA_PF_A_K4_1 ZA_PF(128) ZA_PF(192)
#define ZA_PF_A_K4_2 ZA_PF(256) ZA_PF(320)
#define ZA_PF_A_K4_3
#define ZA_SUMS_FN dgemm_sums_avx512_12x16
#define ZA_KERNEL_FN ukernel_dgemm_avx512_12x16
#include "real_zmm_asm.h"
/* The same loop with A's values as broadcast operands of the FMAs (the _embed kernels: cores with three
 * load ports and more, csrc/config/avx512_amx.c) */
#undef ZA_SUMS_FN
#undef ZA_KERNEL_FN
#define ZA_EMBED "1to8"
#define ZA_SUMS_FN dgemm_sums_avx512_12x16_embed
#define ZA_KERNEL_FN ukernel_dgemm_avx512_12x16_embed
#include "real_zmm_asm.h"
#define CX_SUMS dgemm_sums_avx512_12x16
#define CX_SUMS_EMBED dgemm_sums_avx512_12x16_embed
#else
DEFINE_ROWS_KERNEL(12)
#define ukernel_dgemm_avx512_12x16_embed ukernel_dgemm_avx512_12x16
#define CX_SUMS NULL
#define CX_SUMS_EMBED NULL
#endif

static const gk_ukernel_fn rows_kernels[MR] = {
    NULL, ukernel_dgemm_avx512_1x16, ukernel_dgemm_avx512_2x16, ukernel_dgemm_avx512_3x16,
    ukernel_dgemm_avx512_4x16, ukernel_dgemm_avx512_5x16, ukernel_dgemm_avx512_6x16,
    ukernel_dgemm_avx512_7x16, ukernel_dgemm_avx512_8x16, ukernel_dgemm_avx512_9x16,
    ukernel_dgemm_avx512_10x16, ukernel_dgemm_avx512_11x16,
};

#define DOT_FN dgemm_dot_avx512
#define COLS_FN dgemm_cols_avx512
#include "real_zmm_dot.h"
#undef DOT_FN
#undef COLS_FN

#define TINY_FN tiny_dgemm_avx512
#define TINY_COMPLEX_FN tiny_zgemm_avx512
#define PL_DOT_TAIL dgemm_dot_avx512 /* the plain loops' last few columns (real_plain_template.h) */
#include "real_zmm_tiny.h"
#include "real_tiny_template.h"
#undef TINY_FN
#undef TINY_COMPLEX_FN

#define GEMV_ROWS_FN gemv_rows_dgemm_avx512
#define GEMV_DOTS_FN gemv_dots_dgemm_avx512
#define GV_SPREAD 1
#include "real_gemv_template.h"

#define PK_FN pack_a_plain_dgemm_avx512
#define PK_ROWS MR
#include "real_zmm_pack.h"

#define DGEMM_AVX512_TABLE(NAME, UKERNEL, TINY)                                                      \
    GK_ZMM_REAL_TABLE(dgemm, NAME, UKERNEL, TINY, tiny_zgemm_avx512, pack_a_plain_dgemm_avx512)
GK_ASSERT_REAL_TILE(MR, NR, 8);
const gk_real_kernel_t gk_dgemm_kernel_avx512 = DGEMM_AVX512_TABLE(
    "ukernel_dgemm_avx512_12x16", ukernel_dgemm_avx512_12x16, tiny_dgemm_avx512);
const gk_real_kernel_t gk_dgemm_kernel_avx512_embed = DGEMM_AVX512_TABLE(
    "ukernel_dgemm_avx512_12x16_embed", ukernel_dgemm_avx512_12x16_embed, tiny_dgemm_avx512);
/* Products of 9-16 columns by the AVX2 6 x 8 loop, except plain products whose op(B) rows are not whole 8-double
 * chunks: those by this file's masked loops, which read B in place; the others by this file's tiny kernel, whose
 * plain products outside streamed batches take the masked loops too (see docs/decisions.md, tiny_dgemm_avx512_ymm). */
static void tiny_dgemm_avx512_ymm(int64_t M, int64_t N, int64_t K, const void *alpha, const void *A, int64_t lda,
                                  int transa, const void *B, int64_t ldb, int transb, const void *beta, void *C,
                                  int64_t ldc, const gk_tiny_stream_t *stream) {
    const int ragged = !transa && !transb && N % 8 != 0;
    if (N > 8 && N <= 16 && !ragged) gk_tiny_dgemm_avx2(M, N, K, alpha, A, lda, transa, B, ldb, transb, beta, C, ldc, stream);
    else tiny_dgemm_avx512(M, N, K, alpha, A, lda, transa, B, ldb, transb, beta, C, ldc, stream);
}
const gk_real_kernel_t gk_dgemm_kernel_avx512_ymm_tiny = DGEMM_AVX512_TABLE(
    "ukernel_dgemm_avx512_12x16", ukernel_dgemm_avx512_12x16, tiny_dgemm_avx512_ymm);

#define CX_TILE_FN zgemm_tile_avx512
#include "complex_zmm_template.h"

GK_ZMM_CX_KERNEL_TABLE(zgemm, 8, tiny_zgemm_avx512, CX_SUMS, CX_SUMS_EMBED, NULL)
#endif
