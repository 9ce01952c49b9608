/* gemmkit public C API: BLAS-like GEMM entry points mirroring oneDNN's dnnl_sgemm / dnnl_gemm_*s8s32
 * plus d/c/z GEMM; all matrices row-major, status codes equal oneDNN's dnnl_status_t values. */
#ifndef GEMMKIT_H
#define GEMMKIT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define GEMMKIT_API __declspec(dllexport)
#else
#define GEMMKIT_API __attribute__((visibility("default")))
#endif

typedef enum {
    gemmkit_success = 0,            /* dnnl_success */
    gemmkit_out_of_memory = 1,      /* dnnl_out_of_memory */
    gemmkit_invalid_arguments = 2,  /* dnnl_invalid_arguments */
    gemmkit_unimplemented = 3       /* dnnl_unimplemented */
} gemmkit_status_t;

/* C := alpha * op(A) * op(B) + beta * C, op(X) = X or X^T, row-major. */
GEMMKIT_API gemmkit_status_t gemmkit_sgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
        float alpha, const float *A, int64_t lda, const float *B, int64_t ldb, float beta, float *C,
        int64_t ldc);

/* The same for double. */
GEMMKIT_API gemmkit_status_t gemmkit_dgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
        double alpha, const double *A, int64_t lda, const double *B, int64_t ldb, double beta, double *C,
        int64_t ldc);

/* Complex values as C99/C++ lay them out: real part, then imaginary part. */
typedef struct { float re, im; } gemmkit_complex64_t;
typedef struct { double re, im; } gemmkit_complex128_t;

/* Complex GEMM: op(X) = X, X^T, X^H or conj(X) for trans 'N', 'T', 'C' or 'R' (either case; 'R' is
 * BLIS's conjugate-no-transpose, an extension to oneDNN's set); leading dimensions and sizes count
 * complex elements. */
GEMMKIT_API gemmkit_status_t gemmkit_cgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
        gemmkit_complex64_t alpha, const gemmkit_complex64_t *A, int64_t lda, const gemmkit_complex64_t *B,
        int64_t ldb, gemmkit_complex64_t beta, gemmkit_complex64_t *C, int64_t ldc);
GEMMKIT_API gemmkit_status_t gemmkit_zgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
        gemmkit_complex128_t alpha, const gemmkit_complex128_t *A, int64_t lda, const gemmkit_complex128_t *B,
        int64_t ldb, gemmkit_complex128_t beta, gemmkit_complex128_t *C, int64_t ldc);

/* float16 (IEEE binary16) and bfloat16 values, given as their bits. */
typedef uint16_t gemmkit_float16_t;
typedef uint16_t gemmkit_bfloat16_t;

/* C := alpha * op(A) * op(B) + beta * C for float16 (hgemm) and bfloat16 (bf16gemm): float sums, the result
 * rounded once to nearest-even (overflow to infinity). float16 is widened exactly to float on the sgemm kernels.
 * bfloat16 runs on the CPU's bfloat16 unit where the path has one (AMX-BF16 tdpbf16ps, AVX512_BF16 vdpbf16ps, Arm
 * FEAT_BF16 BFMMLA), else (and for products of at most 32 a side) widened as float16 is: a product of two bfloat16
 * values is exact in float, and each sum is a float sum rounded to nearest-even (BFMMLA without FEAT_EBF16: unfused,
 * rounded to odd); the hardware reads bfloat16 subnormals as zero, so a call whose operands hold one
 * (found while packing) computes its tiles with every value widened exactly instead: subnormal inputs are
 * honoured on every path; sums below FLT_MIN may flush to zero on the hardware paths (as in oneDNN and MKL).
 * Results stay within float's error bound of the exact product, not bit-identical across paths (the order of
 * the sums differs). */
GEMMKIT_API gemmkit_status_t gemmkit_hgemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
        float alpha, const gemmkit_float16_t *A, int64_t lda, const gemmkit_float16_t *B, int64_t ldb,
        float beta, gemmkit_float16_t *C, int64_t ldc);
GEMMKIT_API gemmkit_status_t gemmkit_bf16gemm(char transa, char transb, int64_t M, int64_t N, int64_t K,
        float alpha, const gemmkit_bfloat16_t *A, int64_t lda, const gemmkit_bfloat16_t *B, int64_t ldb,
        float beta, gemmkit_bfloat16_t *C, int64_t ldc);
/* C := alpha * op(A) * op(B) + beta * C with bfloat16 A and B and a float C (oneDNN's gemm_bf16bf16f32): the
 * arithmetic of gemmkit_bf16gemm above, on the same kernels, without the final rounding to bfloat16. */
GEMMKIT_API gemmkit_status_t gemmkit_gemm_bf16bf16f32(char transa, char transb, int64_t M, int64_t N, int64_t K,
        float alpha, const gemmkit_bfloat16_t *A, int64_t lda, const gemmkit_bfloat16_t *B, int64_t ldb,
        float beta, float *C, int64_t ldc);

/* Integer GEMM as ONNX's Gemm computes it (onnx.reference, bit for bit) for int32, int64, uint32 and uint64:
 * P = sum_k op(A)[i][k] * op(B)[k][j] wrapping modulo 2^bits (the type's own arithmetic), then in double
 * C := cvt(fl(fl(double(P) * alpha) + fl(double(C) * beta))), the beta term only when beta != 0 (C is not
 * read otherwise), cvt = truncation toward zero where the value fits, else what NumPy gives for one value on
 * x86-64 (INT_MIN bits; uint64: values >= 2^63 offset by 2^63; uint32: the low 32 bits of the int64
 * conversion; see README). With alpha = 1 and beta = 0, int32 and uint32 are the exact
 * wrapped product; 64-bit products pass through double (53-bit) there too. */
GEMMKIT_API gemmkit_status_t gemmkit_gemm_i32(char transa, char transb, int64_t M, int64_t N, int64_t K,
        double alpha, const int32_t *A, int64_t lda, const int32_t *B, int64_t ldb, double beta, int32_t *C,
        int64_t ldc);
GEMMKIT_API gemmkit_status_t gemmkit_gemm_i64(char transa, char transb, int64_t M, int64_t N, int64_t K,
        double alpha, const int64_t *A, int64_t lda, const int64_t *B, int64_t ldb, double beta, int64_t *C,
        int64_t ldc);
GEMMKIT_API gemmkit_status_t gemmkit_gemm_u32(char transa, char transb, int64_t M, int64_t N, int64_t K,
        double alpha, const uint32_t *A, int64_t lda, const uint32_t *B, int64_t ldb, double beta, uint32_t *C,
        int64_t ldc);
GEMMKIT_API gemmkit_status_t gemmkit_gemm_u64(char transa, char transb, int64_t M, int64_t N, int64_t K,
        double alpha, const uint64_t *A, int64_t lda, const uint64_t *B, int64_t ldb, double beta, uint64_t *C,
        int64_t ldc);
/* Integer matrix products as NumPy computes them (np.matmul, and alpha * (a @ b) + beta * c with integer
 * scalars): C := alpha * op(A) op(B) + beta * C in the type's own arithmetic, every operation modulo 2^bits
 * (signed types as two's complement; no intermediate rounding: not through double), C not read when
 * beta == 0 (mod 2^bits). GEMMKIT_INT_BOOL (bytes, nonzero is true; C written 0 / 1): C := (alpha and
 * any_k(A[i][k] and B[k][j])) or (beta and C), alpha and beta read as truth values. A, B and C all hold `type`; strides and batches as the
 * batch entries below (gemmkit_sgemm_batch's rules; batch = 1 for one product). */
#define GEMMKIT_INT_BOOL 0
#define GEMMKIT_INT_S8   1
#define GEMMKIT_INT_U8   2
#define GEMMKIT_INT_S16  3
#define GEMMKIT_INT_U16  4
#define GEMMKIT_INT_S32  5
#define GEMMKIT_INT_U32  6
#define GEMMKIT_INT_S64  7
#define GEMMKIT_INT_U64  8
GEMMKIT_API gemmkit_status_t gemmkit_gemm_int_batch(int type, char transa, char transb, int64_t M, int64_t N,
        int64_t K, int64_t alpha, const void *A, int64_t lda, int64_t stride_a, const void *B, int64_t ldb,
        int64_t stride_b, int64_t beta, void *C, int64_t ldc, int64_t stride_c, int64_t batch);
/* Batches (strided, as cuBLAS's gemmStridedBatched): for i in [0, batch), the product above on
 * A + i * stride_a, B + i * stride_b, C + i * stride_c (strides in elements of the type, any sign; 0
 * shares one A or B among all). The C matrices must not share elements: |stride_c| >= (M - 1) * ldc + N,
 * or interleaved rows (N <= |stride_c| and batch * |stride_c| <= ldc); else gemmkit_invalid_arguments.
 * Small products run whole on different threads. The same for the 16-bit types: gemmkit_hgemm_batch, gemmkit_bf16gemm_batch and
 * gemmkit_gemm_bf16bf16f32_batch (A and B 16-bit, C of the plain entry's type, alpha and beta float). */
#define GEMMKIT_DECLARE_BATCH(NAME, AB_T, C_T, S)                                                    \
    GEMMKIT_API gemmkit_status_t NAME(char transa, char transb, int64_t M, int64_t N, int64_t K, S alpha, \
            const AB_T *A, int64_t lda, int64_t stride_a, const AB_T *B, int64_t ldb, int64_t stride_b, S beta, \
            C_T *C, int64_t ldc, int64_t stride_c, int64_t batch);
GEMMKIT_DECLARE_BATCH(gemmkit_sgemm_batch, float, float, float)
GEMMKIT_DECLARE_BATCH(gemmkit_dgemm_batch, double, double, double)
GEMMKIT_DECLARE_BATCH(gemmkit_cgemm_batch, gemmkit_complex64_t, gemmkit_complex64_t, gemmkit_complex64_t)
GEMMKIT_DECLARE_BATCH(gemmkit_zgemm_batch, gemmkit_complex128_t, gemmkit_complex128_t, gemmkit_complex128_t)
GEMMKIT_DECLARE_BATCH(gemmkit_hgemm_batch, gemmkit_float16_t, gemmkit_float16_t, float)
GEMMKIT_DECLARE_BATCH(gemmkit_bf16gemm_batch, gemmkit_bfloat16_t, gemmkit_bfloat16_t, float)
GEMMKIT_DECLARE_BATCH(gemmkit_gemm_bf16bf16f32_batch, gemmkit_bfloat16_t, float, float)
#undef GEMMKIT_DECLARE_BATCH

/* C := alpha * (op(A) - ao) * (op(B) - bo) + beta * C + co, offsetc in F/C/R (fixed/column/row). */
GEMMKIT_API gemmkit_status_t gemmkit_gemm_u8s8s32(char transa, char transb, char offsetc, int64_t M,
        int64_t N, int64_t K, float alpha, const uint8_t *A, int64_t lda, uint8_t ao, const int8_t *B,
        int64_t ldb, int8_t bo, float beta, int32_t *C, int64_t ldc, const int32_t *co);

GEMMKIT_API gemmkit_status_t gemmkit_gemm_s8s8s32(char transa, char transb, char offsetc, int64_t M,
        int64_t N, int64_t K, float alpha, const int8_t *A, int64_t lda, int8_t ao, const int8_t *B,
        int64_t ldb, int8_t bo, float beta, int32_t *C, int64_t ldc, const int32_t *co);

/* ---- per-token quantized int8 product with float output ---- */
/* Output element types of gemmkit_gemm_s8s8_per_token. */
#define GEMMKIT_OUT_FLOAT32  1
#define GEMMKIT_OUT_FLOAT16  2   /* IEEE binary16 */
#define GEMMKIT_OUT_BFLOAT16 3

/* For b < batch, i < M, j < N, with X_b = X + b * stride_x (elements; a stride of 0 shares X):
 *   acc = sum_k op(A_b)[i][k] * op(B_b)[k][j]                   (exact integer, A and B signed bytes)
 *   y   = float32(float32(acc) * deq_scale[j]) * token_scale_b[i]  (+ bias[j] when bias != NULL),
 *         float32 arithmetic, one rounding per operation (no fused multiply-add)
 *   C_b[i][j] = y rounded to nearest even into out_type (GEMMKIT_OUT_*).
 * layout_c 'R': C_b[i][j] at C_b[i * ldc + j]; 'C': at C_b[i + j * ldc] (ldc >= max(1, M)). C's element
 * size follows out_type; stride_c != 0 when batch > 1. One call runs the whole batch on the thread pool.
 * deq_scale has N entries, token_scale_b and bias M and N; K = 0 gives the formula with acc = 0. */
GEMMKIT_API gemmkit_status_t gemmkit_gemm_s8s8_per_token(char transa, char transb, char layout_c, int out_type,
        int64_t batch, int64_t M, int64_t N, int64_t K, const int8_t *A, int64_t lda, int64_t stride_a,
        const int8_t *B, int64_t ldb, int64_t stride_b, const float *deq_scale, const float *token_scale,
        int64_t stride_token_scale, const float *bias, void *C, int64_t ldc, int64_t stride_c);

/* The per-token formula above applied to exact int32 sums acc (M x N, row-major, ld_acc) computed
 * elsewhere: C[i][j] (row-major, ldc) = float32(float32(acc[i][j]) * deq_scale[j]) * token_scale[i]
 * (+ bias[j]), rounded into out_type: bit for bit what gemmkit_gemm_s8s8_per_token writes for the same sums. */
GEMMKIT_API gemmkit_status_t gemmkit_per_token_scale_int32(int out_type, int64_t M, int64_t N, const int32_t *acc,
        int64_t ld_acc, const float *deq_scale, const float *token_scale, const float *bias, void *C, int64_t ldc);

/* Prepacked weights for repeated products with one weight: op(B) (K x N, transb as above) packed once for
 * the int8 kernel path in use. gemmkit_s8s8_packed_weight_size gives the bytes (0: K too long to be
 * packed, or N or K = 0; use gemmkit_gemm_s8s8_per_token with the weight itself then), pack_weight fills
 * them. The _packed product is gemmkit_gemm_s8s8_per_token with layout_c 'R' and this weight shared by the
 * batch; it returns gemmkit_invalid_arguments for a packed weight of another kernel path or other N, K. */
GEMMKIT_API int64_t gemmkit_s8s8_packed_weight_size(int64_t N, int64_t K);
/* The kernel path a packed weight was packed for (gemmkit_get_arch's name; the _packed product takes it on
 * that path), or NULL when `packed` is not a packed weight. The size and the packing each read the path in
 * use: where another thread may switch it, pack_weight's invalid_arguments means size and pack again. */
GEMMKIT_API const char *gemmkit_s8s8_packed_weight_arch(const void *packed, int64_t packed_bytes);
/* 1 when the int8 kernel path in use reads op(B) in place (no packing) for a product with M rows and depth
 * K, and that is faster than the packed form (whose panels are larger where the kernel widens bytes):
 * gemmkit_gemm_s8s8_per_token with the weight itself is then the better call. */
GEMMKIT_API int gemmkit_s8s8_reads_weight_in_place(char transb, int64_t M, int64_t K);
GEMMKIT_API gemmkit_status_t gemmkit_s8s8_pack_weight(char transb, int64_t N, int64_t K, const int8_t *B,
        int64_t ldb, void *packed, int64_t packed_bytes);
GEMMKIT_API gemmkit_status_t gemmkit_gemm_s8s8_per_token_packed(char transa, int out_type, int64_t batch,
        int64_t M, int64_t N, int64_t K, const int8_t *A, int64_t lda, int64_t stride_a, const void *packed_weight,
        int64_t packed_bytes, const float *deq_scale, const float *token_scale, int64_t stride_token_scale,
        const float *bias, void *C, int64_t ldc, int64_t stride_c);

/* Threads: default = CPUs this process may run on (or GEMMKIT_NUM_THREADS). */
GEMMKIT_API int gemmkit_get_num_threads(void);
GEMMKIT_API void gemmkit_set_num_threads(int n);
/* A cap on the threads of the calls made from the calling thread only (n <= 0: no cap); the
 * process-wide count above is left alone. gemmkit_get_thread_limit: the calling thread's cap, 0 if none. */
GEMMKIT_API void gemmkit_set_thread_limit(int n);
GEMMKIT_API int gemmkit_get_thread_limit(void);

/* Kernel paths: "generic", "avx2", "avx_vnni", "avx512", "avx512_vnni", "avx512_amx" (x86-64), "neon", "dotprod", "i8mm" (aarch64). NULL or "" selects the best
 * path this CPU supports. Returns gemmkit_unimplemented if the CPU (or this build) lacks the path. */
GEMMKIT_API gemmkit_status_t gemmkit_set_arch(const char *name);
GEMMKIT_API const char *gemmkit_get_arch(void);
/* Bit set of GEMMKIT_CPU_* features detected by CPUID + XGETBV (x86-64) or the OS (aarch64). */
GEMMKIT_API uint32_t gemmkit_cpu_features(void);
/* Kernel paths this build knows, i = 0 .. count-1, best first (NULL past the end); whether this CPU can
 * run one (1) or not (0; -1 for a name this build does not know). None of them changes the path in use. */
GEMMKIT_API int gemmkit_arch_count(void);
GEMMKIT_API const char *gemmkit_arch_name(int i);
GEMMKIT_API int gemmkit_arch_supported(const char *name);

/* ---- quantized elementwise add (gemmkit.quant.quantized_add; csrc/qadd.c) -------------------- */

/* Element types of a quantized tensor and the two formulas gemmkit_quantized_add computes:
 *   GEMMKIT_QADD_DIRECTML (DirectML's QUANTIZED_LINEAR_ADD, in float32, each step rounded to float32):
 *     q = ((float)(A - a_zp) * a_scale + (float)(B - b_zp) * b_scale) / out_scale
 *     out = clamp(round_half_even(q) + out_zp, type min, type max)
 *   GEMMKIT_QADD_ONNXRUNTIME (ONNX Runtime's com.microsoft QLinearAdd x86-64 kernel, bit for bit):
 *     ra = a_scale / out_scale, rb = b_scale / out_scale (float32), fma = fused multiply-add
 *     A broadcast along the last axis of size > 1 (or one element in all):
 *       v = fma(B, rb, fma(A, ra, out_zp - fma(rb, b_zp, ra * a_zp)))
 *     otherwise: v = fma(A, ra, fma(B, rb, out_zp - fma(ra, a_zp, rb * b_zp)))
 *     out = clamp(round_half_even(v)), where v outside int32 or NaN gives the type's minimum
 *     (scales and zero points must be single values). */
typedef enum { GEMMKIT_QTYPE_U8 = 0, GEMMKIT_QTYPE_S8 = 1 } gemmkit_qtype_t;
typedef enum { GEMMKIT_QADD_DIRECTML = 0, GEMMKIT_QADD_ONNXRUNTIME = 1 } gemmkit_qadd_formula_t;
#define GEMMKIT_QADD_MAX_DIMS 32

/* One operand over the output's shape: element strides per axis (any sign; 0 repeats a value along
 * that axis, which is how broadcasting is expressed). scale (float32) and zero_point (of `type`) are
 * strided the same way; scale_strides / zero_point_strides NULL: one value; zero_point NULL: 0. */
typedef struct {
    const void *data;
    gemmkit_qtype_t type;
    const int64_t *strides;
    const float *scale;
    const int64_t *scale_strides;
    const void *zero_point;
    const int64_t *zero_point_strides;
} gemmkit_qtensor_t;

/* out := quantized a + b over `shape` (ndim 0..GEMMKIT_QADD_MAX_DIMS). out->data is written (it may be
 * a->data or b->data with the same strides); out->data must not otherwise overlap a, b or any scale
 * or zero point. Invalid: a scale that is 0, NaN or Inf, a bad formula/type/ndim/shape, NULL data
 * with elements to compute, ONNX Runtime's formula with strided scales or zero points. Nothing is
 * written unless the status is gemmkit_success. Large tensors are split among the threads. */
GEMMKIT_API gemmkit_status_t gemmkit_quantized_add(gemmkit_qadd_formula_t formula, int ndim, const int64_t *shape,
        const gemmkit_qtensor_t *a, const gemmkit_qtensor_t *b, const gemmkit_qtensor_t *out);
/* ---- end of quantized elementwise add ---------------------------------------------------------- */

/* ---- per-token activation quantization (gemmkit.quant.quantize_per_token; csrc/quantize.c) ---- */
/* Smoothing of x before quantizing: x' = x / smooth[k] (SmoothQuant activations), or x * smooth[k]
 * (the weight side, folding the same vector into a weight's rows). */
#define GEMMKIT_SMOOTH_DIVIDE   0
#define GEMMKIT_SMOOTH_MULTIPLY 1
/* For each token (row) i < M of x (in_type GEMMKIT_OUT_FLOAT32 / FLOAT16 / BFLOAT16; row i at x + i * ldx
 * elements, K contiguous values), in IEEE float32 arithmetic, one rounding per operation:
 *   x'[k] = x[k] widened exactly to float32 (/ or * smooth[k] when smooth != NULL)
 *   amax = max_k |x'[k]|;  scale[i] = amax / 127
 *   q[i][k] = round_half_even(min(max(x'[k] / scale[i], -127), 127))     (int8, row i at q + i * ldq)
 * A token whose x' are all 0, or whose amax / 127 underflows to 0, gets scale 0 and q = 0. A token with
 * a NaN or an infinity in x' gets scale NaN and q = 0 (its output row in a layer is NaN). Every kernel path
 * writes the same bytes. Invalid: bad in_type / smooth_mode, M or K < 0, ldx < K, ldq < K (with M > 1),
 * NULL pointers with work to do. Large calls are split among the threads by tokens. */
GEMMKIT_API gemmkit_status_t gemmkit_quantize_per_token(int in_type, int64_t M, int64_t K, const void *x,
        int64_t ldx, const float *smooth, int smooth_mode, int8_t *q, int64_t ldq, float *scale);
/* ---- end of per-token activation quantization ------------------------------------------------ */


#define GEMMKIT_CPU_AVX2        (1u << 0)  /* AVX2 + FMA + F16C + OS-saved ymm state */
#define GEMMKIT_CPU_AVX512      (1u << 1)  /* AVX-512 F/BW/DQ/VL + OS-saved zmm state */
#define GEMMKIT_CPU_AVX512_VNNI (1u << 2)
#define GEMMKIT_CPU_AVX_VNNI    (1u << 3)
/* AArch64 (getauxval AT_HWCAP / AT_HWCAP2 on Linux, sysctlbyname hw.optional.arm.FEAT_* on macOS) */
#define GEMMKIT_CPU_NEON        (1u << 4)  /* Advanced SIMD (every ARMv8-A) */
#define GEMMKIT_CPU_DOTPROD     (1u << 5)  /* FEAT_DotProd: SDOT / UDOT */
#define GEMMKIT_CPU_I8MM        (1u << 6)  /* FEAT_I8MM: SMMLA / UMMLA / USMMLA, USDOT */
#define GEMMKIT_CPU_BF16        (1u << 7)  /* FEAT_BF16 */
/* AMX-TILE + AMX-INT8, OS-saved tile state and (Linux) the process's permission to use it */
#define GEMMKIT_CPU_AMX_INT8    (1u << 8)
#define GEMMKIT_CPU_AVX512_BF16 (1u << 9)  /* AVX512_BF16: vdpbf16ps (Cooper Lake, Sapphire Rapids+, Zen 4+) */
#define GEMMKIT_CPU_AMX_BF16    (1u << 10) /* AMX-BF16 (tdpbf16ps), with AMX_INT8's tile state and permission */

#ifdef __cplusplus
}
#endif
#endif /* GEMMKIT_H */
