/* AVX512_BF16 (GEMMKIT_CPU_AVX512_BF16): a 12 x 32 bfloat16 pair kernel on vdpbf16ps (24 zmm sums, two zmm of B and a
 * broadcast pair of A per row and k pair) and its packer of k-contiguous rows, in zmm. */
#include "../kernel.h"
#if GEMMKIT_X86 && defined(GEMMKIT_HAVE_AVX512_BF16)
#include <immintrin.h>
#include "../convert.h"
#include "bf16_zmm_store.h"

#define MR 12
#define NR 32

/* The sums of one k pair: vdpbf16ps adds a[2i]b[2i] and a[2i+1]b[2i+1] into float lane i, each sum rounded to
 * nearest even, bfloat16 subnormal inputs read as zero (the packers report those: ukernel_exact below). */
static void ukernel_bf16_avx512_12x32(int64_t kc, const void *GK_RESTRICT av, int64_t rsa, const void *GK_RESTRICT bv,
                                      int64_t rsb, void *GK_RESTRICT cv, int64_t ldc, const void *alpha,
                                      const void *beta) {
    const int32_t *a = (const int32_t *)av;
    const uint32_t *b = (const uint32_t *)bv;
    float *c = (float *)cv;
    (void)rsa, (void)rsb;
    __m512 acc[MR][2];
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) acc[i][0] = acc[i][1] = _mm512_setzero_ps();
    for (int64_t q = 0; q < kc; q++) {
        const __m512bh b0 = (__m512bh)_mm512_loadu_si512(b), b1 = (__m512bh)_mm512_loadu_si512(b + 16);
        _mm_prefetch((const char *)(b + 8 * NR), _MM_HINT_T0);
#pragma GCC unroll 12
        for (int i = 0; i < MR; i++) {
            const __m512bh ai = (__m512bh)_mm512_set1_epi32(a[i]);
            acc[i][0] = _mm512_dpbf16_ps(acc[i][0], ai, b0);
            acc[i][1] = _mm512_dpbf16_ps(acc[i][1], ai, b1);
        }
        a += MR;
        b += NR;
    }
    const __m512 va = _mm512_set1_ps(*(const float *)alpha);
    const float be = *(const float *)beta;
#pragma GCC unroll 12
    for (int i = 0; i < MR; i++) bf16_zmm_store_row32(c + i * ldc, acc[i][0], acc[i][1], va, be);
}

/* ---- the packing of k-contiguous rows (op(A) plain, op(B) transposed) into the kernel's pair panels ---------- */

/* out[j] lane i = r[i] lane j: a 16 x 16 transpose of 32-bit pairs (pairs within 128-bit lanes, then the lanes). */
static GK_FORCEINLINE void transpose16(__m512i r[16]) {
    __m512i t[16];
#pragma GCC unroll 8
    for (int k = 0; k < 8; k++) {
        t[2 * k] = _mm512_unpacklo_epi32(r[2 * k], r[2 * k + 1]);
        t[2 * k + 1] = _mm512_unpackhi_epi32(r[2 * k], r[2 * k + 1]);
    }
#pragma GCC unroll 4
    for (int k = 0; k < 4; k++) { /* u[4k + e]: rows 4k..4k+3 at column e of each 128-bit lane */
        r[4 * k] = _mm512_unpacklo_epi64(t[4 * k], t[4 * k + 2]);
        r[4 * k + 1] = _mm512_unpackhi_epi64(t[4 * k], t[4 * k + 2]);
        r[4 * k + 2] = _mm512_unpacklo_epi64(t[4 * k + 1], t[4 * k + 3]);
        r[4 * k + 3] = _mm512_unpackhi_epi64(t[4 * k + 1], t[4 * k + 3]);
    }
#pragma GCC unroll 4
    for (int e = 0; e < 4; e++) {
        const __m512i v0 = _mm512_shuffle_i32x4(r[e], r[4 + e], 0x88), v1 = _mm512_shuffle_i32x4(r[e], r[4 + e], 0xdd);
        const __m512i w0 = _mm512_shuffle_i32x4(r[8 + e], r[12 + e], 0x88),
                      w1 = _mm512_shuffle_i32x4(r[8 + e], r[12 + e], 0xdd);
        t[e] = _mm512_shuffle_i32x4(v0, w0, 0x88);
        t[8 + e] = _mm512_shuffle_i32x4(v0, w0, 0xdd);
        t[4 + e] = _mm512_shuffle_i32x4(v1, w1, 0x88);
        t[12 + e] = _mm512_shuffle_i32x4(v1, w1, 0xdd);
    }
#pragma GCC unroll 16
    for (int j = 0; j < 16; j++) r[j] = t[j];
}

/* gk_pack_*_bf16_pairs' k-contiguous case with one pair per group (pack.h): 16 rows x 16 pairs per step, loaded
 * whole (a block's last values under a mask), tested for subnormals, transposed; returns the OR of the tests. */
static int pack_pairs_kcontig_avx512(const uint16_t *src, int64_t ld, int64_t n, int pw, int64_t kp, int64_t kvals,
                                     uint32_t *GK_RESTRICT dst) {
    __mmask32 any = 0;
    kvals = GK_MAX((int64_t)0, GK_MIN(kvals, 2 * kp));
    for (int64_t x0 = 0; x0 < n; x0 += pw) {
        const int w = (int)GK_MIN((int64_t)pw, n - x0);
        uint32_t *panel = dst + x0 * kp;
        for (int r0 = 0; r0 < pw; r0 += 16) {
            const int lanes = GK_MIN(16, pw - r0), real = GK_MAX(0, GK_MIN(16, w - r0));
            const __mmask16 store = (__mmask16)((1u << lanes) - 1u);
            const uint16_t *rows = src + (x0 + r0) * ld;
            for (int64_t q0 = 0; q0 < kp; q0 += 16) {
                const int64_t left = kvals - 2 * q0;
                const __mmask32 m = left >= 32 ? (__mmask32)0xffffffffu
                                               : left > 0 ? (__mmask32)((1u << left) - 1u) : (__mmask32)0;
                __m512i r[16];
#pragma GCC unroll 16
                for (int i = 0; i < 16; i++) {
                    if (i >= real) r[i] = _mm512_setzero_si512();
                    else if (left >= 32) r[i] = _mm512_loadu_si512(rows + i * ld + 2 * q0);
                    else r[i] = _mm512_maskz_loadu_epi16(m, rows + i * ld + 2 * q0);
                    any |= bf16_subnormal_lanes(r[i]);
                }
                transpose16(r);
                const int64_t nq = GK_MIN((int64_t)16, kp - q0);
                uint32_t *out = panel + q0 * pw + r0;
                if (lanes == 16)
                    for (int64_t j = 0; j < nq; j++) _mm512_storeu_si512(out + j * pw, r[j]);
                else
                    for (int64_t j = 0; j < nq; j++) _mm512_mask_storeu_epi32(out + j * pw, store, r[j]);
            }
        }
    }
    return any != 0;
}

#define BP_MR MR
#define BP_NR NR
#define BP_GROUP 1
#define BP_NAME ukernel_bf16_avx512_12x32_exact
#include "bf16_pair_exact_template.h"

GK_ASSERT_REAL_TILE(MR, NR, 4);
const gk_real_kernel_t gk_bf16_kernel_avx512 = {
    .name = "ukernel_bf16_avx512_12x32", .elem = 4, .mr = MR, .nr = NR, .ukernel = ukernel_bf16_avx512_12x32,
    .k_pair_group = 1, .ukernel_exact = ukernel_bf16_avx512_12x32_exact, .pair_dots = gk_bf16_dots_avx512,
    .pair_rows = gk_bf16_rows_avx512,
    .pack_pairs_kcontig = pack_pairs_kcontig_avx512,
};
#endif
