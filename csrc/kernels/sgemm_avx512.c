/* AVX-512F sgemm: 12 x 32 microkernel (24 zmm accumulators) with 1..11-row variants and a dot path for
 * few rows x B^T; compiled with AVX-512 flags, run only where dispatch found AVX-512. */
#include "../kernel.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define MR 12
#define NV 2 /* zmm vectors per row of the tile */
#define NR (16 * NV)
#define PF_COLS 128 /* rows kernels with m <= 4: prefetch B this many columns ahead (4 panels) */

#define T float
#define V __m512
#define VSUF ps
#define VL 16
#define TILE_FN sgemm_tile_avx512
#include "real_zmm_template.h"

#define DEFINE_ROWS_KERNEL(m) GK_ZMM_ROWS_KERNEL(ukernel_sgemm_avx512_##m##x32, m)
DEFINE_ROWS_KERNEL(1) DEFINE_ROWS_KERNEL(2) DEFINE_ROWS_KERNEL(3) DEFINE_ROWS_KERNEL(4)
DEFINE_ROWS_KERNEL(5) DEFINE_ROWS_KERNEL(6) DEFINE_ROWS_KERNEL(7) DEFINE_ROWS_KERNEL(8)
DEFINE_ROWS_KERNEL(9) DEFINE_ROWS_KERNEL(10) DEFINE_ROWS_KERNEL(11)

#if defined(__GNUC__) && !defined(GK_NO_INLINE_ASM)
/* The packed 12 x 32 k loop in inline assembly (real_zmm_asm.h); A is 48 bytes a k step, prefetched
 * 768 bytes (16 k) ahead, one line per 64 bytes read (three per four k). */
#define ZA_BCAST "vbroadcastss"
#define ZA_FMA "vfmadd231ps"
#define ZA_ES 4
#define ZA_AB 48
#define ZA_PF_A 768
#define ZA_PF_A_K4(n) ZA_PF_A_K4_##n
#define ZA_PF_A_K4_0 ZA_PF(0)
#define ZA_PF_A_K4_1 ZA_PF(64)
#define ZA_PF_A_K4_2 ZA_PF(128)
#define ZA_PF_A_K4_3
#define ZA_SUMS_FN sgemm_sums_avx512_12x32
#define ZA_KERNEL_FN ukernel_sgemm_avx512_12x32
#include "real_zmm_asm.h"
/* The same loop with A's values as broadcast operands of the FMAs (the _embed kernels: cores with three
 * load ports and more, csrc/config/avx512_amx.c) */
#undef ZA_SUMS_FN
#undef ZA_KERNEL_FN
#define ZA_EMBED "1to16"
#define ZA_SUMS_FN sgemm_sums_avx512_12x32_embed
#define ZA_KERNEL_FN ukernel_sgemm_avx512_12x32_embed
#include "real_zmm_asm.h"
#define CX_SUMS sgemm_sums_avx512_12x32
#define CX_SUMS_EMBED sgemm_sums_avx512_12x32_embed
#else
DEFINE_ROWS_KERNEL(12)
#define ukernel_sgemm_avx512_12x32_embed ukernel_sgemm_avx512_12x32
#define CX_SUMS NULL
#define CX_SUMS_EMBED NULL
#endif

static const gk_ukernel_fn rows_kernels[MR] = {
    NULL, ukernel_sgemm_avx512_1x32, ukernel_sgemm_avx512_2x32, ukernel_sgemm_avx512_3x32,
    ukernel_sgemm_avx512_4x32, ukernel_sgemm_avx512_5x32, ukernel_sgemm_avx512_6x32,
    ukernel_sgemm_avx512_7x32, ukernel_sgemm_avx512_8x32, ukernel_sgemm_avx512_9x32,
    ukernel_sgemm_avx512_10x32, ukernel_sgemm_avx512_11x32,
};

#define DOT_FN sgemm_dot_avx512
#define COLS_FN sgemm_cols_avx512
#include "real_zmm_dot.h"
#undef DOT_FN
#undef COLS_FN

#define TINY_FN tiny_sgemm_avx512
#define TINY_COMPLEX_FN tiny_cgemm_avx512
#define PL_DOT_TAIL sgemm_dot_avx512 /* the plain loops' last few columns (real_plain_template.h) */
#include "real_zmm_tiny.h"
#include "real_tiny_template.h"
#undef TINY_FN
#undef TINY_COMPLEX_FN

#define GEMV_ROWS_FN gemv_rows_sgemm_avx512
#define GEMV_DOTS_FN gemv_dots_sgemm_avx512
#define GV_SPREAD 1
#include "real_gemv_template.h"

#define SGEMM_AVX512_TABLE(NAME, UKERNEL, TINY) GK_ZMM_REAL_TABLE(sgemm, NAME, UKERNEL, TINY, tiny_cgemm_avx512, NULL)
GK_ASSERT_REAL_TILE(MR, NR, 4);
const gk_real_kernel_t gk_sgemm_kernel_avx512 = SGEMM_AVX512_TABLE(
    "ukernel_sgemm_avx512_12x32", ukernel_sgemm_avx512_12x32, tiny_sgemm_avx512);
const gk_real_kernel_t gk_sgemm_kernel_avx512_embed = SGEMM_AVX512_TABLE(
    "ukernel_sgemm_avx512_12x32_embed", ukernel_sgemm_avx512_12x32_embed, tiny_sgemm_avx512);
/* Plain products by this file's masked loops (B in place, no copy, no scratch tile), except streamed batches whose
 * rows are whole 16-float chunks; those and transposed products of more than 8 columns by the AVX2 6 x 16 loop,
 * narrower ones by the half chunks, where the AVX2 kernel's 8-column products are slow (see docs/decisions.md,
 * tiny_sgemm_avx512_ymm). */
static void tiny_sgemm_avx512_ymm(int64_t M, int64_t N, int64_t K, const void *alpha, const void *A, int64_t lda,
                                  int transa, const void *B, int64_t ldb, int transb, const void *beta, void *C,
                                  int64_t ldc, const gk_tiny_stream_t *stream) {
    const int masked = !transa && !transb && (N % 16 != 0 || !stream); /* the masked loops */
    if (N > 8 && !masked) gk_tiny_sgemm_avx2(M, N, K, alpha, A, lda, transa, B, ldb, transb, beta, C, ldc, stream);
    else tiny_sgemm_avx512(M, N, K, alpha, A, lda, transa, B, ldb, transb, beta, C, ldc, stream);
}
const gk_real_kernel_t gk_sgemm_kernel_avx512_ymm_tiny = SGEMM_AVX512_TABLE(
    "ukernel_sgemm_avx512_12x32", ukernel_sgemm_avx512_12x32, tiny_sgemm_avx512_ymm);

#define CX_TILE_FN cgemm_tile_avx512
#include "complex_zmm_template.h"
#define PK_FN pack_a_plain_cgemm_avx512 /* complex floats: 8-byte (re, im) pairs */
#define PK_ROWS 6
#include "real_zmm_pack.h"

GK_ZMM_CX_KERNEL_TABLE(cgemm, 16, tiny_cgemm_avx512, CX_SUMS, CX_SUMS_EMBED,
                       pack_a_plain_cgemm_avx512)
#endif
