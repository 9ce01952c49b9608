/* The microkernel interface: what a real (float / double, native complex) kernel and an int8 kernel of one
 * ISA provide to the drivers (tile, edge-row, dot, GEMV, tiny and packing entries), and every ISA's kernel tables. */
#ifndef GEMMKIT_KERNEL_H
#define GEMMKIT_KERNEL_H

#include "platform.h"
#include "int8_epilogue.h"

/* ---- real-domain microkernels (float and double; complex runs on them by the 1m method, or on a native
 * complex kernel with the same interface, complex_native below) ---- */

/* Full MR x NR tile: C = alpha * A_panel * B_panel + beta * C (beta == 0: C is not read), in the
 * kernel's element type (float or double; alpha and beta point to one value of that type).
 * a: MR-row micro-panel, MR contiguous values per k, consecutive k `rsa` values apart (MR when packed,
 *    lda when read in place from a transposed A); b: NR-column micro-panel, NR contiguous values per k,
 *    consecutive k `rsb` values apart (NR when packed, ldb when read in place from a plain B). */
typedef void (*gk_ukernel_fn)(int64_t kc, const void *GK_RESTRICT a, int64_t rsa, const void *GK_RESTRICT b,
                              int64_t rsb, void *GK_RESTRICT c, int64_t ldc, const void *alpha, const void *beta);

/* Dot-product path for few rows against a transposed B (both operands contiguous in k):
 * C[0:m, 0:n] = alpha * A B^T + beta * C, A m x k (lda), B n x k (ldb). */
typedef void (*gk_dot_fn)(int64_t m, int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda,
                          const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc);

/* Few columns of C against a transposed A, A read in place (k rows of m values, lda apart): C[0:m, 0:n] (n <= 4) =
 * alpha A^T op(B) + beta C, op(B)[l][j] at B + l * rsb + j * csb. */
typedef void (*gk_cols_fn)(int64_t m, int64_t n, int64_t k, const void *alpha, const void *A, int64_t lda,
                           const void *B, int64_t rsb, int64_t csb, const void *beta, void *C, int64_t ldc);

/* GEMV kernels (csrc/kernels/real_gemv_template.h): a matrix S streamed once in place against m short
 * vectors x (rows of k contiguous values, ldx apart), y[i][j] at y + i * rsy + j * csy (beta == 0: y not
 * read); pf > 0: every stream's cache line is requested pf elements ahead.
 *   rows: y[i][j] = alpha * sum_l x[i][l] S[l][j] + beta * y[i][j]   (S: k rows of n values, lds apart)
 *   dots: y[i][j] = alpha * sum_l x[i][l] S[j][l] + beta * y[i][j]   (S: n rows of k values, lds apart) */
typedef void (*gk_gemv_fn)(int64_t m, int64_t n, int64_t k, const void *alpha, const void *x, int64_t ldx,
                           const void *S, int64_t lds, const void *beta, void *y, int64_t rsy, int64_t csy,
                           int64_t pf);
/* An S of this many bytes or more: the x86 kernels stream it as 4 long runs, one per quarter of its rows
 * (GV_SPREAD, csrc/kernels/real_gemv_template.h), and few rows of C against a transposed B then take
 * gemv_dots rather than the kernel's dot path (csrc/gemm_small.c). */
#define GK_GEMV_SPREAD_MIN_BYTES ((double)(8 << 20))

/* The whole of a tiny complex product (complex M, N, K <= GK_TINY_MAX), elements (re, im) pairs of the
 * kernel's real type: op(X) = X, X^T, conj(X) or X^H by transx / conjx; alpha 2 reals, beta real (a
 * complex beta has been applied to C before, as the 1m driver does). */
typedef void (*gk_tiny_complex_fn)(int64_t M, int64_t N, int64_t K, const void *alpha2, const void *A, int64_t lda,
                                   int transa, int conja, const void *B, int64_t ldb, int transb, int conjb,
                                   const void *beta, void *C, int64_t ldc);
/* The whole of a tiny real product (M, N, K <= GK_TINY_MAX; op(X) = X^T when transx), unpacked; up to
 * GK_TINY_DIRECT_MAX a side where op(A) = A (its rows read in place) and N fills more than half of a
 * 64-byte chunk (16 floats, 8 doubles); op(B) is read in place where its rows are whole chunks, else
 * copied (B^T transposed by the ISA's copy where it has one). */
#define GK_TINY_MAX 32
#define GK_TINY_DIRECT_MAX 64
/* A batch of tiny products read from memory (config small.tiny_stream_min_bytes), given to each product:
 * the next product's operands (NULL: none, or shared) to fetch while this one computes, and whether C
 * may be stored past the caches (non-temporal; the kernel fences its own such stores). */
typedef struct {
    const void *next_a, *next_b;
    int64_t a_bytes, b_bytes;
    int nt_store;
} gk_tiny_stream_t;
/* op(A) (M x K: A plain, rows lda apart, or transposed when transa) times a plain B (K x N, rows ldb apart) into
 * C, whole, on the calling thread (gk_real_kernel_t.plain). */
typedef void (*gk_plain_fn)(int64_t M, int64_t N, int64_t K, const void *alpha, const void *A, int64_t lda,
                            int transa, const void *B, int64_t ldb, const void *beta, void *C, int64_t ldc);
typedef void (*gk_tiny_fn)(int64_t M, int64_t N, int64_t K, const void *alpha, const void *A, int64_t lda,
                           int transa, const void *B, int64_t ldb, int transb, const void *beta, void *C,
                           int64_t ldc, const gk_tiny_stream_t *stream);

/* A bfloat16 pair kernel's data movement in its ISA (gk_real_kernel_t.moves), each as its portable counterpart in
 * pack.h / convert.h computes it, bit for bit; the packers return whether a value was subnormal. */
typedef struct gk_bf16_moves {
    /* n k-contiguous rows ld apart (op(A) plain, op(B) transposed) into pair panels pw wide, one pair per group */
    int (*pairs_kcontig)(const uint16_t *src, int64_t ld, int64_t n, int pw, int64_t kp, int64_t kvals,
                         uint32_t *GK_RESTRICT dst);
    /* the same from k-major rows (op(A) transposed, op(B) plain) */
    int (*pairs_kmajor)(const uint16_t *src, int64_t ld, int64_t n, int pw, int64_t kp, int64_t kvals,
                        uint32_t *GK_RESTRICT dst);
    /* a_rows kernels: gk_pack_a_bf16_rows of a plain A */
    int (*rows_kcontig)(const uint16_t *src, int64_t ld, int64_t mc, int mr, int64_t kp, int64_t kvals,
                        uint32_t *GK_RESTRICT dst);
    /* gk_bf16_rows_subnormal: rows read in place that no packer sees */
    int (*rows_subnormal)(const uint16_t *src, int64_t ld, int64_t rows, int64_t cols);
    /* gk_f32_row_to_bf16: a bfloat16 C's rows, rounded once to nearest even */
    void (*f32_row_to_bf16)(const float *src, int64_t n, uint16_t *dst);
} gk_bf16_moves_t;

/* One real microkernel of one ISA: what it computes and how (its cache blocking is in the config). */
typedef struct {
    const char *name;          /* e.g. "ukernel_sgemm_avx512_12x32" */
    int elem;                  /* bytes per element: 4 (float) or 8 (double) */
    int mr, nr;                /* micro-tile */
    gk_ukernel_fn ukernel;
    /* Optional: ukernel_rows[m] computes only the first m (1 <= m < MR) rows of a full-width tile,
     * straight into C (edge row panels, skinny M); NULL: edges go through a scratch tile. */
    const gk_ukernel_fn *ukernel_rows;
    gk_dot_fn dot;             /* optional (NULL: packed path only) */
    gk_tiny_fn tiny;           /* optional: tiny products (config small.tiny_max_macs), no packing */
    gk_tiny_complex_fn tiny_complex; /* optional: the same for complex elements of this real type */
    gk_gemv_fn gemv_rows, gemv_dots; /* GEMV (few rows or few columns of C); both set, or both NULL */
    /* 1: a native complex kernel (cgemm / zgemm): MR complex rows, NR reals (NR / 2 complex columns), kc
     * in the real domain (twice the complex depth); its B panels hold NR x kc / 2 reals (pack.h), not
     * the NR x kc of 1m. 0: a real kernel (complex types run on it by 1m). */
    int complex_native;
    /* Optional: this ISA's packing of an A block whose op(A) = A into its panels. A real kernel's: rows of its own
     * type along k (not widened), as gk_pack_a_<f32|f64> (pack.h) does. A native complex kernel's: rows of (re, im)
     * pairs along k, not conjugated, alpha not folded in, as gk_pack_a_cx does; mc and kc in complex elements.
     * NULL: the portable packer. */
    void (*pack_a_plain)(const void *A, int64_t lda, int64_t mc, int64_t kc, void *GK_RESTRICT dst);
    /* Optional: a plain A times a plain B of any size with nothing packed or copied (both read in place, the
     * column edges masked), on one thread; used up to the config's small.plain_max_macs. NULL: none. */
    gk_plain_fn plain;
    int plain_group_cols;      /* columns of C one pass of `plain`'s row block over A covers (its widest group) */
    gk_cols_fn cols;           /* optional: few columns of C against a transposed A (NULL: none) */
    int cols_rows;             /* rows of C a `cols` block sums: it walks a strip of A this wide down all of k */
    int dot_short_sums;        /* 1: `dot` on few columns runs sums shorter than a vector at full lanes */
    int dot_few_cols;          /* 1: `dot` takes one column against a plain A (A x) before the GEMV kernels (it is
                                * the faster there); 0: the GEMV kernels take it */
    /* bfloat16 pair kernels only (a config's `bf16`; 0 / NULL on float and double kernels): the kernel's k step is a
     * pair of bfloat16 values (4 bytes, elem = 4: C is float), A and B packed by gk_pack_*_bf16_pairs (pack.h). A's
     * panel holds groups of k_pair_group pairs per row (1: MR pairs per k step, as a float panel; 16: AMX, MR rows
     * of 16 pairs); b_pair_group the same for B's panel (0 or 1: kp rows of NR pairs, the VNNI-2 layout; 2: BFMMLA,
     * NR columns of 2 pairs). kc and K are padded with zero pairs to a multiple of both (GK_PAIR_K_MULTIPLE). */
    int k_pair_group, b_pair_group;
    /* 1: A is read as rows, pair q of row i at a + i * rsa + 4 q (rsa in bytes): the caller's k-contiguous rows in
     * place where K needs no padding, else a packed panel of MR rows of kc pairs (rsa = 4 GK_PAIR_ROW(kc), pack.h);
     * k_pair_group is then only the kernel's k step. 0: A's panel in groups as above (rsa unused). */
    int a_rows;
    /* the same tile on the same panels with bfloat16 subnormals honoured (every value widened to float exactly):
     * the hardware reads them as zero, and a call whose operands hold one runs its tiles here */
    gk_ukernel_fn ukernel_exact;
    /* Optional: few rows of x against a transposed B (x W^T) on the pair instruction, x and S bfloat16 read along k
     * as they lie (gk_gemv_fn's dots, subnormals honoured); NULL: the 16-bit GEMV kernels widen them. */
    gk_gemv_fn pair_dots;
    /* Optional: the same against a plain B (x W), W's rows l, l + 1 paired as read (gk_gemv_fn's rows); NULL: widened */
    gk_gemv_fn pair_rows;
    /* Optional: this ISA's packers, subnormal scan and C narrowing for the pair kernel (NULL: the portable ones) */
    const gk_bf16_moves_t *moves;
    /* Optional: on a thread before its tiles of one block and after them (AMX: tile configuration loaded, then
     * released, so no other code's configuration or OS save area is affected). */
    void (*block_begin)(void), (*block_end)(void);
} gk_real_kernel_t;

#define GK_PAIR_K_MULTIPLE(k) GK_MAX(GK_MAX(1, (k)->k_pair_group), (k)->b_pair_group)

/* GEMV kernels (gk_gemv_fn) whose S holds 16-bit values (bfloat16 or float16 bits, widened as they are read),
 * x and y float: few rows or columns of a 16-bit product with its big operand read in place (csrc/gemm_small.c,
 * gk_half_gemv). A config's `half_gemv`; NULL members: that type takes the packed path. */
typedef struct {
    gk_gemv_fn bf16_rows, bf16_dots, f16_rows, f16_dots;
} gk_half_gemv_t;
/* portable (csrc/kernels/half_gemv_generic.c) and AVX2 + F16C (csrc/kernels/half_gemv_avx2.c) */
extern const gk_half_gemv_t gk_half_gemv_generic;
#if GEMMKIT_X86
extern const gk_half_gemv_t gk_half_gemv_avx2;
#endif

extern const gk_real_kernel_t gk_sgemm_kernel_generic, gk_dgemm_kernel_generic;
#if GEMMKIT_X86
extern const gk_real_kernel_t gk_sgemm_kernel_avx2, gk_dgemm_kernel_avx2;
extern const gk_real_kernel_t gk_cgemm_kernel_avx2, gk_zgemm_kernel_avx2; /* native complex */
extern const gk_real_kernel_t gk_sgemm_kernel_avx512, gk_dgemm_kernel_avx512;
extern const gk_real_kernel_t gk_cgemm_kernel_avx512, gk_zgemm_kernel_avx512; /* native complex */
/* The same kernels on the k loop whose FMAs take A's values as broadcast operands (kernels/real_zmm_asm.h,
 * ZA_EMBED), for cores with three load ports or more (csrc/config/avx512_amx.c). */
extern const gk_real_kernel_t gk_sgemm_kernel_avx512_embed, gk_dgemm_kernel_avx512_embed;
extern const gk_real_kernel_t gk_cgemm_kernel_avx512_embed, gk_zgemm_kernel_avx512_embed;
/* The AVX-512 sgemm / dgemm kernels with the AVX2 path's tiny kernels (6 rows x 2 ymm, assembly) for some
 * widths (sgemm > 8 columns, dgemm 9-16), for the cores where they measured faster than the zmm ones
 * (csrc/config/zen4.c); and those tiny kernels themselves. */
extern const gk_real_kernel_t gk_sgemm_kernel_avx512_ymm_tiny, gk_dgemm_kernel_avx512_ymm_tiny;
void gk_tiny_dgemm_avx2(int64_t M, int64_t N, int64_t K, const void *alpha, const void *A, int64_t lda, int transa,
                        const void *B, int64_t ldb, int transb, const void *beta, void *C, int64_t ldc,
                        const gk_tiny_stream_t *stream);
void gk_tiny_sgemm_avx2(int64_t M, int64_t N, int64_t K, const void *alpha, const void *A, int64_t lda, int transa,
                        const void *B, int64_t ldb, int transb, const void *beta, void *C, int64_t ldc,
                        const gk_tiny_stream_t *stream);
#endif
#if GEMMKIT_ARM
extern const gk_real_kernel_t gk_sgemm_kernel_neon, gk_dgemm_kernel_neon;
#endif
/* bfloat16 pair kernels (k_pair_group above): portable (widened exactly, the generic path's), AVX512_BF16's
 * vdpbf16ps, AMX-BF16's tdpbf16ps and FEAT_BF16's BFMMLA. */
extern const gk_real_kernel_t gk_bf16_kernel_generic;
#if GEMMKIT_X86
extern const gk_bf16_moves_t gk_bf16_moves_avx512; /* csrc/kernels/bf16_moves_avx512.c: the kernels' below */
#endif
#if GEMMKIT_ARM
extern const gk_real_kernel_t gk_bf16_kernel_bfmmla;
#endif
#if GEMMKIT_X86 && defined(GEMMKIT_HAVE_AVX512_BF16)
extern const gk_real_kernel_t gk_bf16_kernel_avx512;
void gk_bf16_dots_avx512(int64_t m, int64_t n, int64_t k, const void *alpha, const void *x, int64_t ldx, const void *S,
                         int64_t lds, const void *beta, void *y, int64_t rsy, int64_t csy, int64_t pf); /* pair_dots */
void gk_bf16_rows_avx512(int64_t m, int64_t n, int64_t k, const void *alpha, const void *x, int64_t ldx, const void *S,
                         int64_t lds, const void *beta, void *y, int64_t rsy, int64_t csy, int64_t pf); /* pair_rows */
#endif
#if GEMMKIT_X86 && defined(GEMMKIT_HAVE_AMX)
extern const gk_real_kernel_t gk_bf16_kernel_amx;
#endif

/* ---- the bool product (csrc/gemm_bool.c: C[i][j] = any_k A[i][k] and B[k][j] on bit sets) ---- */

/* k steps between the checks for a chunk of C's row all true (a dense product is all true after a few dozen) */
#define GK_BOOL_CHECK_K 16
/* One ISA's bool kernels (a config's `bool_kernels`; NULL: the portable ones in csrc/gemm_bool.c). */
typedef struct {
    const char *name;
    /* n contiguous bytes (nonzero true) as bits: words[w] holds bytes 64 w .. 64 w + 63, zero past n */
    void (*pack_bits)(const uint8_t *b, int64_t n, uint64_t *words);
    /* acc[0, nw) = the OR of the words [c0, c0 + nw) of the bit rows (W words apart, and 8 words of slack after the
     * last, never counted) that row a of op(A) selects (its K bytes ak apart), stopped at a check (every
     * GK_BOOL_CHECK_K k) that finds them all true (valid: the bits that count in word nw - 1); nw <= chunk_words */
    void (*chunk)(const uint8_t *a, int64_t ak, int64_t K, const uint64_t *bits, int64_t W, int64_t c0, int64_t nw,
                  uint64_t valid, uint64_t *acc);
    /* the first n bits of words as n bytes 0 / 1 */
    void (*store_bytes)(const uint64_t *words, int64_t n, uint8_t *c);
    int chunk_words;      /* words of a row of C a chunk holds */
} gk_bool_kernels_t;
#if GEMMKIT_X86
extern const gk_bool_kernels_t gk_bool_kernels_avx512; /* csrc/kernels/bool_avx512.c */
#endif

/* Scratch tiles the drivers keep on the stack for edge tiles: a real kernel's MR x NR tile of its elements
 * (csrc/gemm_real.c) and an int8 kernel's MR x NR int32 / int64 sums (csrc/gemm_int8.c). Each kernel file
 * asserts its tile fits, next to its kernel table (GK_ASSERT_*_TILE). */
#define GK_REAL_TILE_BYTES (32 * 32 * 8)
#define GK_INT8_TILE_ELEMS (32 * 64)
#define GK_ASSERT_REAL_TILE(mr, nr, elem) \
    GK_STATIC_ASSERT((mr) * (nr) * (elem) <= GK_REAL_TILE_BYTES, "MR x NR tile larger than GK_REAL_TILE_BYTES")
#define GK_ASSERT_INT8_TILE(mr, nr) \
    GK_STATIC_ASSERT((mr) * (nr) <= GK_INT8_TILE_ELEMS, "MR x NR tile larger than GK_INT8_TILE_ELEMS")

/* ---- int8 ----------------------------------------------------------------------------------- */

/* Every int8 kernel's k_chunk: a raw int32 tile sum over this many k is exact (|sum| <= 16384 * 255 * 128
 * < 2^31). */
#define GK_INT8_K_CHUNK 16384

/* One MR x NR tile over `kgroups` k-groups of packed panels (group size = the kernel's kgroup):
 * a: MR rows x kgroup values per group; b: NR columns x kgroup values per group. The raw int32 sums are
 * added to s (MR x NR, row stride NR, 64-byte aligned) when `accumulate`, else they replace it. With
 * ep != NULL the tile is then finished: the epilogue writes C (elements of ep->dst, rows ldc elements
 * apart) from the sums (s is left undefined). */
typedef void (*gk_int8_ukernel_fn)(int64_t kgroups, const void *GK_RESTRICT a, const void *GK_RESTRICT b,
                                 int32_t *GK_RESTRICT s, int accumulate, void *GK_RESTRICT c, int64_t ldc,
                                 const gk_int8_epilogue_t *ep);

typedef struct {
    const char *name;
    int mr, nr;
    int kgroup;                /* k values interleaved per packed group: 4 (bytes), 8 (i8mm), 2 (int16 pairs),
                                * 64 (AMX: A rows of 64 bytes; B in 4-byte groups, panels 64 k deep) */
    int elem_size;             /* bytes per packed element: 1 (u8/s8) or 2 (widened int16) */
    int64_t k_chunk;           /* the k depth of one exact chunk: the most k whose raw int32 tile sums cannot
                                * overflow (a multiple of kgroup; GK_INT8_K_CHUNK); longer K runs in chunks */
    gk_int8_ukernel_fn ukernel;
    /* Optional ISA-specific packing of a plain (k-major) B block, `width` columns into NR panels,
     * with column sums; NULL: the portable gk_pack_b_int8. */
    void (*pack_b_kmajor)(const int8_t *B, int64_t ldb, int64_t kc, int64_t width, uint8_t *GK_RESTRICT dst,
                          int32_t *GK_RESTRICT colsum);
    /* Optional dot-product path for few rows against a transposed B: raw sums S[i][j] (ld n) of
     * A'[i][:] . B[j][:] (A' = A ^ xr as u8) and colsum[j] = sum_k B[j][k], for k up to kc. */
    void (*dot)(int64_t m, int64_t n, int64_t k, const uint8_t *A, int64_t lda, uint8_t xr, const int8_t *B,
                int64_t ldb, int32_t *GK_RESTRICT S, int32_t *GK_RESTRICT colsum);
    /* Optional: ukernel_rows[m] handles only the first m (1 <= m < MR) rows of a full-width tile. */
    const gk_int8_ukernel_fn *ukernel_rows;
    /* Optional ISA-specific packing of a transposed B block (row x of the source is column x of
     * op(B), contiguous in k), as pack_b_kmajor; NULL: the portable gk_pack_b_int8. */
    void (*pack_b_kcontig)(const int8_t *B, int64_t ldb, int64_t kc, int64_t width, uint8_t *GK_RESTRICT dst,
                           int32_t *GK_RESTRICT colsum);
    /* Optional: few rows against a plain B (k-major, B[k][j] at B[k * ldb + j]): S[i][j] (ld n) =
     * sum_k a[i][k] * B[k][j] with a = A read as int8 when xr == 0x80 (A' - 128: no compensation needed
     * for it), as uint8 when xr == 0; colsum[j] = sum_k B[k][j] only when colsum != NULL. NULL: few rows
     * against a plain B go through the packed path. */
    void (*dot_kmajor)(int64_t m, int64_t n, int64_t k, const uint8_t *A, int64_t lda, uint8_t xr, const int8_t *B,
                       int64_t ldb, int32_t *GK_RESTRICT S, int32_t *GK_RESTRICT colsum);
    /* Optional: raw sums of the first m (1 <= m <= GK_INT8_PANEL_ROWS) rows of a packed A panel against np
     * (1..4) consecutive packed B panels (panel_bytes apart) read side by side; panel p's rows at s + p*m*NR. */
    void (*panel_sums)(int m, int np, int64_t kgroups, const uint8_t *GK_RESTRICT a, const uint8_t *GK_RESTRICT b,
                       size_t panel_bytes, int32_t *GK_RESTRICT s);
    /* Optional: called on a thread before its kernel calls of one block and after them (AMX: the tile
     * configuration is loaded, then released: no other code runs between, whatever ran before). */
    void (*block_begin)(void), (*block_end)(void);
} gk_int8_kernel_t;
#define GK_INT8_PANEL_ROWS 4

extern const gk_int8_kernel_t gk_int8_kernel_generic;
#if GEMMKIT_X86
extern const gk_int8_kernel_t gk_int8_kernel_avx2;
extern const gk_int8_kernel_t gk_int8_kernel_avx512;
extern const gk_int8_kernel_t gk_int8_kernel_avx512_vnni;
#if defined(GEMMKIT_HAVE_AVX_VNNI)
extern const gk_int8_kernel_t gk_int8_kernel_avx_vnni;
#endif
#if defined(GEMMKIT_HAVE_AMX)
extern const gk_int8_kernel_t gk_int8_kernel_amx;
/* The AMX kernels' tile configuration (palette 1, eight tiles of 16 rows x 64 bytes) loaded, and the tiles
 * released: every AMX kernel's block_begin / block_end (csrc/kernels/int8_amx.c). */
void gk_amx_tiles_begin(void);
void gk_amx_tiles_end(void);
#endif
/* The AVX-512 VNNI file's B packers (32-column panels of `groups` 4-byte k groups, groups >= (kc + 3) / 4,
 * the rest zero) and its dot path, shared with the AMX kernel (csrc/kernels/int8_amx.c). */
void gk_int8_pack_b_kmajor_zmm(const int8_t *B, int64_t ldb, int64_t kc, int64_t groups, int64_t width,
                               uint8_t *GK_RESTRICT dst, int32_t *GK_RESTRICT colsum);
void gk_int8_pack_b_kcontig_zmm(const int8_t *B, int64_t ldb, int64_t kc, int64_t groups, int64_t width,
                                uint8_t *GK_RESTRICT dst, int32_t *GK_RESTRICT colsum);
void gk_int8_dot_avx512_vnni(int64_t m, int64_t n, int64_t k, const uint8_t *A, int64_t lda, uint8_t xr,
                             const int8_t *B, int64_t ldb, int32_t *GK_RESTRICT S, int32_t *GK_RESTRICT colsum);
#endif
#if GEMMKIT_ARM
extern const gk_int8_kernel_t gk_int8_kernel_dotprod, gk_int8_kernel_i8mm;
#endif

#endif /* GEMMKIT_KERNEL_H */
