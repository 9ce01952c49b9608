/* Internal interfaces shared by the driver layers: per-ISA kernel tables, dispatch state,
 * the thread pool and per-thread packing workspaces. Not installed; not part of the public API. */
#ifndef GEMMKIT_INTERNAL_H
#define GEMMKIT_INTERNAL_H

#include <stddef.h>
#include <math.h>
#include <stdint.h>
#include <string.h>
#include "include/gemmkit.h"

/* x86-64 kernels exist only where setup.py compiled them (it defines GEMMKIT_X86_KERNELS); a
 * 32-bit x86 or universal2 slice without them builds the portable path alone. */
#if defined(GEMMKIT_X86_KERNELS) && (defined(__x86_64__) || defined(_M_X64))
#define GEMMKIT_X86 1
#else
#define GEMMKIT_X86 0
#endif
/* AArch64 kernels (NEON, dot product) exist only where setup.py compiled them (GEMMKIT_ARM_KERNELS). */
#if defined(GEMMKIT_ARM_KERNELS) && (defined(__aarch64__) || defined(_M_ARM64))
#define GEMMKIT_ARM 1
#else
#define GEMMKIT_ARM 0
#endif

#if defined(_MSC_VER)
#define GK_RESTRICT __restrict
#define GK_ALIGN64 __declspec(align(64))
#else
#define GK_RESTRICT __restrict__
#define GK_ALIGN64 __attribute__((aligned(64)))
#endif
/* Inlined at every call: kernel helpers whose loops unroll into registers only where their arguments are
 * constants. */
#if defined(_MSC_VER)
#define GK_FORCEINLINE __forceinline
#else
#define GK_FORCEINLINE inline __attribute__((always_inline))
#endif

/* A read prefetch hint to all cache levels (never faults, even past a buffer's end). */
#if defined(__GNUC__) || defined(__clang__)
#define GK_PREFETCH(p) __builtin_prefetch((const void *)(p), 0, 3)
#elif defined(_M_X64) || defined(_M_IX86)
#include <xmmintrin.h>
#define GK_PREFETCH(p) _mm_prefetch((const char *)(p), _MM_HINT_T0)
#else
#define GK_PREFETCH(p) ((void)(p))
#endif

/* round half to even, saturated to int32 (NaN -> INT32_MIN, as the SIMD conversions give). */
static inline int32_t gk_round_sat_i32(double v) {
    if (!(v >= -2147483648.0)) return INT32_MIN;
    if (v >= 2147483647.0) return INT32_MAX;
    return (int32_t)nearbyint(v);
}

#define GK_MIN(a, b) ((a) < (b) ? (a) : (b))
#define GK_MAX(a, b) ((a) > (b) ? (a) : (b))

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

/* GEMV kernels (csrc/kernels/real_gemv_template.h): a matrix S streamed once in place against m short
 * vectors x (rows of k contiguous values, ldx apart), y[i][j] at y + i * rsy + j * csy (beta == 0: y not
 * read); pf > 0: every stream's cache line is requested pf elements ahead.
 *   rows: y[i][j] = alpha * sum_l x[i][l] S[l][j] + beta * y[i][j]   (S: k rows of n values, lds apart)
 *   dots: y[i][j] = alpha * sum_l x[i][l] S[j][l] + beta * y[i][j]   (S: n rows of k values, lds apart) */
typedef void (*gk_gemv_fn)(int64_t m, int64_t n, int64_t k, const void *alpha, const void *x, int64_t ldx,
                           const void *S, int64_t lds, const void *beta, void *y, int64_t rsy, int64_t csy,
                           int64_t pf);

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
typedef void (*gk_tiny_fn)(int64_t M, int64_t N, int64_t K, const void *alpha, const void *A, int64_t lda,
                           int transa, const void *B, int64_t ldb, int transb, const void *beta, void *C,
                           int64_t ldc, const gk_tiny_stream_t *stream);

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
    /* Optional, native complex kernels: this ISA's packing of an A block whose op(A) = A (rows of (re, im)
     * pairs along k, not conjugated, alpha not folded in) into its panels, as pack_a_cx (pack.h) does;
     * mc and kc in complex elements. NULL: the portable packer. */
    void (*pack_a_plain)(const void *A, int64_t lda, int64_t mc, int64_t kc, void *GK_RESTRICT dst);
} gk_real_kernel_t;

extern const gk_real_kernel_t gk_sgemm_kernel_generic, gk_dgemm_kernel_generic;
#if GEMMKIT_X86
extern const gk_real_kernel_t gk_sgemm_kernel_avx2, gk_dgemm_kernel_avx2;
extern const gk_real_kernel_t gk_cgemm_kernel_avx2, gk_zgemm_kernel_avx2; /* native complex */
extern const gk_real_kernel_t gk_sgemm_kernel_avx512, gk_dgemm_kernel_avx512;
#endif
#if GEMMKIT_ARM
extern const gk_real_kernel_t gk_sgemm_kernel_neon, gk_dgemm_kernel_neon;
#endif

/* ---- int8 ---------------------------------------------------------------------------------- */

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

static inline uint32_t gk_float_bits(float f) {
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    return x;
}

/* float32 -> bfloat16 bits, round to nearest even by integer arithmetic; a NaN stays a NaN, made quiet
 * (the SIMD epilogues compute exactly this). */
static inline uint16_t gk_float_to_bfloat16_bits(float f) {
    const uint32_t x = gk_float_bits(f);
    if ((x & 0x7fffffffu) > 0x7f800000u) return (uint16_t)((x >> 16) | 0x0040u);
    return (uint16_t)((x + 0x7fffu + ((x >> 16) & 1u)) >> 16);
}

/* float32 -> IEEE binary16 bits, round to nearest even (overflow to infinity, subnormals rounded); a NaN
 * becomes the quiet NaN with the top payload bits, as the F16C / AVX-512 conversion gives. */
static inline uint16_t gk_float_to_float16_bits(float f) {
    const uint32_t x = gk_float_bits(f), a = x & 0x7fffffffu;
    const uint16_t sign = (uint16_t)((x >> 16) & 0x8000u);
    if (a > 0x7f800000u) return (uint16_t)(sign | 0x7e00u | ((a >> 13) & 0x3ffu));
    if (a >= 0x477ff000u) return (uint16_t)(sign | 0x7c00u);   /* >= 65520 (or infinite): infinity */
    if (a >= 0x38800000u) {                                    /* a normal binary16: rebias 127 -> 15 */
        const uint32_t r = a - 0x38000000u;
        return (uint16_t)(sign | ((r + 0xfffu + ((r >> 13) & 1u)) >> 13));
    }
    if (a < 0x33000000u) return sign;                          /* below 2^-25: zero */
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;            /* subnormal: units of 2^-24 */
    const int shift = 126 - (int)(a >> 23);                    /* 14 .. 24 */
    uint32_t q = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u), half = 1u << (shift - 1);
    if (rem > half || (rem == half && (q & 1u))) q++;
    return (uint16_t)(sign | q);
}

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

/* One MR x NR tile over `kgroups` k-groups of packed panels (group size = the kernel's kgroup):
 * a: MR rows x kgroup values per group; b: NR columns x kgroup values per group. The raw int32 sums are
 * added to s (MR x NR, row stride NR, 64-byte aligned) when `accumulate`, else they replace it. With
 * ep != NULL the tile is then finished: the epilogue writes C (elements of ep->dst, rows ldc elements
 * apart) from the sums (s is left undefined). */
/* The epilogue in portable C for an m x n tile whose exact raw sums are S (row stride lds): the
 * GK_EP_DOUBLE formula above, elementwise. Edge tiles, the dot path and the portable kernel use it. */
void gk_int8_epilogue_scalar(int64_t m, int64_t n, const int64_t *S, int64_t lds, void *C, int64_t ldc,
                           const gk_int8_epilogue_t *ep);

typedef void (*gk_int8_ukernel_fn)(int64_t kgroups, const void *GK_RESTRICT a, const void *GK_RESTRICT b,
                                 int32_t *GK_RESTRICT s, int accumulate, void *GK_RESTRICT c, int64_t ldc,
                                 const gk_int8_epilogue_t *ep);

typedef struct {
    const char *name;
    int mr, nr;
    int kgroup;                /* k values interleaved per packed group: 4 (bytes) or 2 (int16 pairs) */
    int elem_size;             /* bytes per packed element: 1 (u8/s8) or 2 (widened int16) */
    int64_t k_exact;           /* max k whose raw int32 tile sums are exact: one chunk (multiple of kgroup) */
    gk_int8_ukernel_fn ukernel;
    /* Optional ISA-specific packing of a plain (k-major) B block, `width` columns into NR panels,
     * with column sums; NULL: the portable pack_b_i8. */
    void (*pack_b_kmajor)(const int8_t *B, int64_t ldb, int64_t kc, int64_t width, uint8_t *GK_RESTRICT dst,
                          int32_t *GK_RESTRICT colsum);
    /* Optional dot-product path for few rows against a transposed B: raw sums S[i][j] (ld n) of
     * A'[i][:] . B[j][:] (A' = A ^ xr as u8) and colsum[j] = sum_k B[j][k], for k up to kc. */
    void (*dot)(int64_t m, int64_t n, int64_t k, const uint8_t *A, int64_t lda, uint8_t xr, const int8_t *B,
                int64_t ldb, int32_t *GK_RESTRICT S, int32_t *GK_RESTRICT colsum);
    /* Optional: ukernel_rows[m] handles only the first m (1 <= m < MR) rows of a full-width tile. */
    const gk_int8_ukernel_fn *ukernel_rows;
    /* Optional ISA-specific packing of a transposed B block (row x of the source is column x of
     * op(B), contiguous in k), as pack_b_kmajor; NULL: the portable pack_b_i8. */
    void (*pack_b_kcontig)(const int8_t *B, int64_t ldb, int64_t kc, int64_t width, uint8_t *GK_RESTRICT dst,
                           int32_t *GK_RESTRICT colsum);
    /* Optional: few rows against a plain B (k-major, B[k][j] at B[k * ldb + j]): S[i][j] (ld n) =
     * sum_k a[i][k] * B[k][j] with a = A read as int8 when xr == 0x80 (A' - 128: no compensation needed
     * for it), as uint8 when xr == 0; colsum[j] = sum_k B[k][j] only when colsum != NULL. NULL: few rows
     * against a plain B go through the packed path. */
    void (*dot_kmajor)(int64_t m, int64_t n, int64_t k, const uint8_t *A, int64_t lda, uint8_t xr, const int8_t *B,
                       int64_t ldb, int32_t *GK_RESTRICT S, int32_t *GK_RESTRICT colsum);
} gk_int8_kernel_t;

extern const gk_int8_kernel_t gk_int8_kernel_generic;
#if GEMMKIT_X86
extern const gk_int8_kernel_t gk_int8_kernel_avx2;
extern const gk_int8_kernel_t gk_int8_kernel_avx512;
extern const gk_int8_kernel_t gk_int8_kernel_avx512_vnni;
#if defined(GEMMKIT_HAVE_AVX_VNNI)
extern const gk_int8_kernel_t gk_int8_kernel_avx_vnni;
#endif
#endif
#if GEMMKIT_ARM
extern const gk_int8_kernel_t gk_int8_kernel_dotprod, gk_int8_kernel_i8mm;
#endif

/* ---- quantized elementwise add (csrc/qadd.c, csrc/kernels/qadd_*.c) -------------------------- */

/* Everything a run kernel needs, precomputed once per call by csrc/qadd.c (single-value scales and
 * zero points; the formulas are in include/gemmkit.h). */
typedef struct {
    int formula;                   /* gemmkit_qadd_formula_t */
    int a_signed, b_signed;        /* input element types: 1 = int8, 0 = uint8 */
    int32_t out_min, out_max;      /* output type's range */
    /* GEMMKIT_QADD_DIRECTML */
    float a_scale, b_scale, out_scale;
    int32_t a_zp, b_zp, out_zp;
    int dml_needs_clamp;           /* some input may drive |quotient| to 2^30 or overflow float32 on the
                                    * way: the SIMD kernels clamp it (else they may skip that step) */
    /* How the SIMD kernels compute DirectML's float form, never changing a byte: dividing; or, only
     * without dml_needs_clamp, multiplying by out_scale_inv = 1 / out_scale (float32) where that is exact
     * or csrc/qadd.c found the same bytes for all 65536 input pairs; or, found so too, rounding
     * fma(b - zb, dml_rb, (a - za) * dml_ra) (dml_ra / dml_rb = a_scale / out_scale, b_scale / out_scale
     * in float32) before adding the output zero point */
    int dml_form;
    float out_scale_inv, dml_ra, dml_rb;
    /* GEMMKIT_QADD_ONNXRUNTIME: the ratios, which input's product comes first (1: A's, when A is
     * broadcast along the last axis of size > 1; 0: B's) and the fixed part that goes with it */
    float ra, rb, ort_fixed;
    int ort_a_first;
    /* Either formula in 16-bit fixed point, set by csrc/qadd.c only after the kernel's fixed-point form
     * gave its float form's bytes for all 65536 input pairs of these parameters (fx_ok):
     *   x' = input byte ^ (0x80 if int8), P(x') = round((x' << 7) * m / 2^15)  (vpmulhrsw, m = fx_ma / fx_mb)
     *   t = sat16(sat16(P(a') + P(b')) + fx_add), output byte = sat_u8(t >> fx_shift) ^ (0x80 if int8) */
    int fx_ok;
    int32_t fx_shift, fx_ma, fx_mb, fx_add;
    /* ... or rounding half to even (fx_even): fx_add without the 1/2, then t + 2^(fx_shift-1) - 1 + 1 when
     * (t >> fx_shift) ^ fx_parity is odd (fx_parity: the output zero point's, DirectML rounding before
     * adding it) */
    int fx_even;
    int32_t fx_parity;
    int stream_out; /* outputs too many to stay in cache: the SIMD kernels store them non-temporally */
} gk_qadd_params_t;

enum { GK_QADD_DML_DIVIDE, GK_QADD_DML_RECIPROCAL, GK_QADD_DML_FMA };

/* One contiguous run of n outputs c[0..n) (stride 1) from a (stride a_step: 0 or 1) and b (stride
 * b_step: 0 or 1) with the params above; every ISA gives the same bytes. a_step / b_step only say
 * where the values come from: the arithmetic of an element does not depend on them. */
typedef void (*gk_qadd_run_fn)(int64_t n, const void *a, int64_t a_step, const void *b, int64_t b_step,
                               void *c, const gk_qadd_params_t *p);
typedef struct {
    const char *name;
    gk_qadd_run_fn run;
    int fixed_point; /* has the fixed-point form (params fx_*) */
} gk_qadd_kernel_t;

extern const gk_qadd_kernel_t gk_qadd_kernel_generic;

/* The operands of one call, in the order the driver keeps their pointers and strides. */
enum { GK_QADD_A, GK_QADD_B, GK_QADD_OUT, GK_QADD_A_SCALE, GK_QADD_A_ZP, GK_QADD_B_SCALE, GK_QADD_B_ZP,
       GK_QADD_OUT_SCALE, GK_QADD_OUT_ZP, GK_QADD_OPERANDS };
/* Portable run of n outputs with any element steps for every operand (scales and zero points may
 * change along the run; the ONNX Runtime constants in p are used as they are). */
void gk_qadd_run_strided(int64_t n, const gk_qadd_params_t *p, const char *const ptr[GK_QADD_OPERANDS],
                         const int64_t step[GK_QADD_OPERANDS]);
#if GEMMKIT_X86
extern const gk_qadd_kernel_t gk_qadd_kernel_avx2, gk_qadd_kernel_avx512;
#endif
#if GEMMKIT_ARM
extern const gk_qadd_kernel_t gk_qadd_kernel_neon;
#endif
/* ---- end of quantized elementwise add ---------------------------------------------------------- */

/* ---- per-token activation quantization (csrc/quantize.c, csrc/kernels/quantize_*.c) ----------- */

/* One token of K values (in_type as gemmkit_quantize_per_token; smooth NULL or K floats applied as
 * smooth_mode says): writes q[0..K) and *scale with the formula of include/gemmkit.h, bit for bit the
 * same on every path. */
typedef void (*gk_quant_token_fn)(int64_t K, const void *x, const float *smooth, int smooth_mode, int8_t *q,
                                  float *scale);
typedef struct {
    const char *name;
    gk_quant_token_fn token[3]; /* by in_type - 1: float32, float16, bfloat16 */
} gk_quant_kernel_t;
extern const gk_quant_kernel_t gk_quant_kernel_generic;
#if GEMMKIT_X86
extern const gk_quant_kernel_t gk_quant_kernel_avx2, gk_quant_kernel_avx512;
#endif
/* ---- end of per-token activation quantization ------------------------------------------------ */

/* ---- per-CPU configuration (csrc/config/<arch>.c) and dispatch -------------------------------- */

/* Cache blocking of the Goto loops, in the kernel's element units: an MC x KC block of A in L2, a
 * KC x NC block of B in L3 (as BLIS's cntx blocksizes). */
typedef struct { int64_t mc, kc, nc; } gk_blocks_t;

/* int8 blocking: MC/NC caps, the k block KB inside an exact chunk (a KB x NR sub-panel of B stays in
 * L1), the L2/L3 byte budgets the A and B blocks are scaled to for a given packed depth, and the rows up
 * to which the few-row paths read B in place instead (tuned with the kernel's dot functions). */
typedef struct {
    int64_t mc, nc, kb;
    int64_t l2_bytes, l3_bytes;
    int64_t dot_max_m;    /* few rows x B^T: B read in place (kernel->dot) up to this M (<= 32) */
    int64_t kmajor_max_m; /* few rows x plain B: in place (kernel->dot_kmajor) up to this M (<= 32) */
} gk_int8_blocks_t;

/* Small-problem thresholds of the middle-end (csrc/gemm_small.c and the driver). */
typedef struct {
    double direct_max_macs;    /* up to this many multiply-adds the real driver skips packing */
    double direct_b_max_macs;  /* ... and with op(A) = A (packed), streams a plain B in place up to this */
    int direct_max_row_panels; /* up to this many MR-row panels a plain B is streamed in place */
    int64_t skinny_kc;         /* k block when B is streamed in place */
    int dot_max_m;             /* few rows x B^T: the dot kernel up to this M */
    int gemv_max_m;            /* few rows: the GEMV kernels up to this M (B^T: where the dot kernel is not used) */
    int gemv_max_n;            /* few columns: the GEMV kernels on C^T = op(B)^T op(A)^T up to this N */
    int gemv_pf_bytes;         /* GEMV software prefetch distance per stream, bytes (0: none) */
    int int8_kmajor_over_packed_max_m; /* int8, few rows x a prepacked plain B: the plain B read in place
                                        * instead (kernel->dot_kmajor) up to this M */
    double tiny_max_macs;      /* real products with M, N, K <= GK_TINY_MAX and no more multiply-adds
                                * than this run whole in the kernel's `tiny` (batches of small matrices) */
    double tiny_direct_max_macs; /* ... and those read in place (GK_TINY_DIRECT_MAX) up to this many */
    double tiny_stream_min_bytes; /* batches of tiny products with more operand bytes than this (beyond the
                                   * caches) are streamed (gk_tiny_stream_t); 0: never */
    double tiny_complex_max_macs; /* complex products, counted in complex multiply-adds, in `tiny_complex`
                                   * (its own limit: the 1m packed path overtakes it sooner) */
} gk_small_t;

/* One configuration: the kernels an ISA path uses and the constants tuned for a microarchitecture.
 * Dispatch walks the registry (best first) and takes the first whose features the CPU has and whose
 * CPU match (vendor/family/model) holds; GEMMKIT_ARCH names the path (`arch`). */
typedef struct gk_config {
    const char *arch;          /* kernel path: "generic", "avx2", "avx_vnni", "avx512", "avx512_vnni" */
    const char *uarch;         /* what the constants are tuned for, e.g. "zen5", "any" */
    uint32_t needs;            /* GEMMKIT_CPU_* bits */
    int (*cpu_match)(uint32_t vendor_family_model); /* NULL: any CPU with the features */
    const gk_real_kernel_t *sgemm, *dgemm;
    const gk_real_kernel_t *cgemm, *zgemm; /* native complex kernels; NULL: 1m on sgemm / dgemm */
    const gk_int8_kernel_t *int8;
    gk_blocks_t sgemm_blocks, dgemm_blocks, cgemm_blocks, zgemm_blocks;
    gk_int8_blocks_t int8_blocks;
    gk_small_t small;
    const gk_qadd_kernel_t *qadd;   /* quantized elementwise add (csrc/qadd.c) */
    const gk_quant_kernel_t *quant; /* per-token quantization (csrc/quantize.c); NULL: the generic one */
} gk_config_t;

extern const gk_config_t gk_config_generic;
#if GEMMKIT_X86
extern const gk_config_t gk_config_avx2, gk_config_avx512, gk_config_avx512_vnni;
extern const gk_config_t gk_config_zen2, gk_config_zen4;   /* tuned: selected by cpu_match */
#if defined(GEMMKIT_HAVE_AVX_VNNI)
extern const gk_config_t gk_config_avx_vnni;
#endif
#endif
#if GEMMKIT_ARM
extern const gk_config_t gk_config_neon, gk_config_dotprod, gk_config_i8mm, gk_config_dotprod_apple;
#endif

/* CPU identity for configs' cpu_match: (vendor << 24) | (family << 12) | model (display values). */
#define GK_CPU_AMD 1u
#define GK_CPU_INTEL 2u
/* aarch64: vendor 0, family = the MIDR implementer (0x41 Arm, 0x61 Apple, ...), model = the part number */
#define GK_CPU_ARM_APPLE 0x61u
#define GK_CPU_VENDOR(id) ((id) >> 24)
#define GK_CPU_FAMILY(id) (((id) >> 12) & 0xfffu)
#define GK_CPU_MODEL(id) ((id) & 0xfffu)
uint32_t gk_cpu_id(void);

/* The configuration in use (GEMMKIT_ARCH / gemmkit_set_arch, else the best for this CPU). */
const gk_config_t *gk_config(void);

/* ---- threads and workspaces ---------------------------------------------------------------- */

typedef void (*gk_task_fn)(void *ctx, int tid, int nthreads);
/* Runs fn(ctx, tid, n) for tid in [0, n) concurrently on the pool (the caller runs tid 0) and returns
 * when all end. Where n threads cannot run at once (another caller holds the pool), it calls
 * fn(ctx, 0, 1) instead: a task given nthreads == 1 does all the work. */
void gk_parallel_run(gk_task_fn fn, void *ctx, int nthreads);

/* Spin barrier for the threads of one gk_parallel_run call. */
typedef struct { long count, phase; int n; } gk_barrier_t;
void gk_barrier_init(gk_barrier_t *b, int n);
void gk_barrier_wait(gk_barrier_t *b);
int gk_num_threads(void);
/* Threads worth using for an M x N x K product (1 for small ones). */
int gk_threads_for(int64_t M, int64_t N, int64_t K);

/* Per-thread, 64-byte aligned, grown on demand and kept for reuse; slot 0/1 are independent. */
void *gk_thread_workspace(int slot, size_t bytes);
/* What a thread's workspace may keep between calls; larger slots are freed by gk_thread_workspace_trim(). */
#define GK_WS_KEEP_BYTES ((size_t)16 << 20)
void gk_thread_workspace_trim(void);

/* Split the M x N output among nthreads into a tm x tn grid (tm * tn <= nthreads). */
void gk_partition_2d(int64_t m, int64_t n, int mr, int nr, int nthreads, int *tm, int *tn);
/* Thread tid's block [m0, m1) x [n0, n1) of an M x N output split among nthreads: row slices over all
 * threads when `row_slices` (they share one packed B, so every thread takes part even with no rows:
 * returns 1), else a tm x tn grid (returns 0 for a thread outside the grid or with an empty block). */
int gk_thread_block(int64_t M, int64_t N, int mr, int nr, int tm, int tn, int row_slices, int tid, int nthreads,
                    int64_t *m0, int64_t *m1, int64_t *n0, int64_t *n1);
/* [begin, end) of part `idx` of `parts` over `total`, in units of `unit`. */
void gk_split_range(int64_t total, int unit, int parts, int idx, int64_t *begin, int64_t *end);

#endif /* GEMMKIT_INTERNAL_H */
