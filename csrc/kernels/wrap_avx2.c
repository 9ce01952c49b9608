/* The wrap-around integer GEMM (csrc/wrap_template.h) built with AVX2: its register tiles (4 x 16 on 16-bit
 * limbs with vpmaddwd; 4 x 8 64-bit with vpmuludq, or vpmuldq for int32-range entries) and C updates. */
#include <immintrin.h>
#include "../driver.h"

#if GEMMKIT_X86
/* Columns [8h, 8h + 8) of the 4 x 16 limb tile with cross products (HI_A: A's high limbs times B's low,
 * HI_B: A's low limbs times B's high; constants at each call): acc = lo + (cross << 16). */
static GK_FORCEINLINE void limb_cross_half(int64_t Kp, const uint32_t *GK_RESTRICT ap, const uint32_t *GK_RESTRICT bp,
                               const int HI_A, const int HI_B, int h, uint32_t *GK_RESTRICT acc) {
    __m256i lo[4], cross[4];
    for (int r = 0; r < 4; r++) lo[r] = cross[r] = _mm256_setzero_si256();
    for (int64_t q = 0; q < Kp; q++) {
        const uint32_t *b = bp + q * 32 + 8 * h;
        const __m256i bl = _mm256_loadu_si256((const __m256i *)b);
        const __m256i bh = HI_B ? _mm256_loadu_si256((const __m256i *)(b + 16)) : bl;
        for (int r = 0; r < 4; r++) {
            const __m256i al = _mm256_set1_epi32((int)ap[r * Kp + q]);
            lo[r] = _mm256_add_epi32(lo[r], _mm256_madd_epi16(al, bl));
            if (HI_A) {
                const __m256i ah = _mm256_set1_epi32((int)ap[(4 + r) * Kp + q]);
                cross[r] = _mm256_add_epi32(cross[r], _mm256_madd_epi16(ah, bl));
            }
            if (HI_B) cross[r] = _mm256_add_epi32(cross[r], _mm256_madd_epi16(al, bh));
        }
    }
    for (int r = 0; r < 4; r++)
        _mm256_storeu_si256((__m256i *)(acc + r * 16 + 8 * h),
                            _mm256_add_epi32(lo[r], _mm256_slli_epi32(cross[r], 16)));
}

/* acc[4][16] = A panel x B panel modulo 2^32 on 16-bit limbs (layout in wrap_template.h) */
static void ukernel_limb_avx2(int64_t Kp, const uint32_t *GK_RESTRICT ap, const uint32_t *GK_RESTRICT bp, int hi_a,
                              int hi_b, uint32_t *GK_RESTRICT acc) {
    if (hi_a || hi_b) {
        for (int h = 0; h < 2; h++) {
            if (hi_a && hi_b) limb_cross_half(Kp, ap, bp, 1, 1, h, acc);
            else if (hi_a) limb_cross_half(Kp, ap, bp, 1, 0, h, acc);
            else limb_cross_half(Kp, ap, bp, 0, 1, h, acc);
        }
        return;
    }
    __m256i c[4][2]; /* no high limbs: the low products alone, 16 columns at once */
    for (int r = 0; r < 4; r++) c[r][0] = c[r][1] = _mm256_setzero_si256();
    for (int64_t q = 0; q < Kp; q++) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)(bp + q * 32));
        const __m256i b1 = _mm256_loadu_si256((const __m256i *)(bp + q * 32 + 8));
        for (int r = 0; r < 4; r++) {
            const __m256i a = _mm256_set1_epi32((int)ap[r * Kp + q]);
            c[r][0] = _mm256_add_epi32(c[r][0], _mm256_madd_epi16(a, b0));
            c[r][1] = _mm256_add_epi32(c[r][1], _mm256_madd_epi16(a, b1));
        }
    }
    for (int r = 0; r < 4; r++) {
        _mm256_storeu_si256((__m256i *)(acc + r * 16), c[r][0]);
        _mm256_storeu_si256((__m256i *)(acc + r * 16 + 8), c[r][1]);
    }
}

/* a * b modulo 2^64 per lane: lo(a) lo(b) + ((hi(a) lo(b) + lo(a) hi(b)) << 32) */
static inline __m256i mul_u64(__m256i a, __m256i a_hi, __m256i b, __m256i b_hi) {
    const __m256i cross = _mm256_add_epi64(_mm256_mul_epu32(a_hi, b), _mm256_mul_epu32(a, b_hi));
    return _mm256_add_epi64(_mm256_mul_epu32(a, b), _mm256_slli_epi64(cross, 32));
}

/* acc[4][8] = A panel (4 per k) x B panel (8 per k), modulo 2^64; NARROW (a constant at each call):
 * every entry within int32, each product one vpmuldq */
static GK_FORCEINLINE void tile64_avx2(int64_t K, const uint64_t *GK_RESTRICT ap, const uint64_t *GK_RESTRICT bp,
                                       uint64_t *GK_RESTRICT acc, const int NARROW) {
    __m256i c[4][2];
    for (int r = 0; r < 4; r++) c[r][0] = c[r][1] = _mm256_setzero_si256();
    for (int64_t k = 0; k < K; k++) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)(bp + k * 8));
        const __m256i b1 = _mm256_loadu_si256((const __m256i *)(bp + k * 8 + 4));
        const __m256i b0h = _mm256_srli_epi64(b0, 32), b1h = _mm256_srli_epi64(b1, 32);
        for (int r = 0; r < 4; r++) {
            const __m256i a = _mm256_set1_epi64x((long long)ap[k * 4 + r]);
            if (NARROW) {
                c[r][0] = _mm256_add_epi64(c[r][0], _mm256_mul_epi32(a, b0));
                c[r][1] = _mm256_add_epi64(c[r][1], _mm256_mul_epi32(a, b1));
                continue;
            }
            const __m256i ah = _mm256_srli_epi64(a, 32);
            c[r][0] = _mm256_add_epi64(c[r][0], mul_u64(a, ah, b0, b0h));
            c[r][1] = _mm256_add_epi64(c[r][1], mul_u64(a, ah, b1, b1h));
        }
    }
    for (int r = 0; r < 4; r++) {
        _mm256_storeu_si256((__m256i *)(acc + r * 8), c[r][0]);
        _mm256_storeu_si256((__m256i *)(acc + r * 8 + 4), c[r][1]);
    }
}
static void ukernel64_avx2(int64_t K, const uint64_t *GK_RESTRICT ap, const uint64_t *GK_RESTRICT bp,
                           uint64_t *GK_RESTRICT acc) {
    tile64_avx2(K, ap, bp, acc, 0);
}
static void ukernel64_narrow_avx2(int64_t K, const uint64_t *GK_RESTRICT ap, const uint64_t *GK_RESTRICT bp,
                                  uint64_t *GK_RESTRICT acc) {
    tile64_avx2(K, ap, bp, acc, 1);
}

/* The limb path's conversion into C, 4 entries at a time (as wrap_template.h's cvt_*: vcvttpd2dq is
 * cvt_i32 exactly); a row's leading entries up to the first group the vector code does not cover (a
 * uint32 or 64-bit value out of its easy range), the count returned. The products and the sum are kept
 * apart (an opaque copy between them), never fused into an FMA. */
static inline __m256d opaque_pd(__m256d x) {
    __asm__("" : "+x"(x));
    return x;
}
static inline __m256d scaled(__m256d prod, __m256d alpha) { return opaque_pd(_mm256_mul_pd(prod, alpha)); }
/* uint32 lanes as float64 */
static inline __m256d u32_to_pd(__m128i x) {
    const __m256d d = _mm256_cvtepi32_pd(x);
    const __m256d negative = _mm256_cmp_pd(d, _mm256_setzero_pd(), _CMP_LT_OQ);
    return _mm256_add_pd(d, _mm256_and_pd(negative, _mm256_set1_pd(4294967296.0)));
}
/* int64 lanes within [-2^51, 2^51) as float64 (magic-number conversion) */
static const double GK_MAGIC = 6755399441055744.0; /* 2^52 + 2^51 */
static inline __m256d i64_to_pd(__m256i x) {
    return _mm256_sub_pd(_mm256_castsi256_pd(_mm256_add_epi64(x, _mm256_castpd_si256(_mm256_set1_pd(GK_MAGIC)))),
                         _mm256_set1_pd(GK_MAGIC));
}
static int64_t row_limb_i32_avx2(const uint32_t *s, int32_t *c, int64_t nb, double alpha, double beta) {
    const __m256d va = _mm256_set1_pd(alpha), vb = _mm256_set1_pd(beta);
    int64_t j = 0;
    for (; j + 4 <= nb; j += 4) {
        __m256d v = scaled(_mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i *)(s + j))), va);
        if (beta != 0.0)
            v = _mm256_add_pd(v, scaled(_mm256_cvtepi32_pd(_mm_loadu_si128((const __m128i *)(c + j))), vb));
        _mm_storeu_si128((__m128i *)(c + j), _mm256_cvttpd_epi32(v));
    }
    return j;
}

/* cvt_u32: the low 32 bits of the int64 truncation (0 where that is out of range or NaN) */
static inline __m128i cvt_u32_pd(__m256d v) {
    const __m256d two32 = _mm256_set1_pd(4294967296.0);
    const __m256d easy = _mm256_and_pd(_mm256_cmp_pd(v, _mm256_set1_pd(-2147483649.0), _CMP_GT_OQ),
                                       _mm256_cmp_pd(v, two32, _CMP_LT_OQ));
    if (_mm256_movemask_pd(easy) == 0xF) { /* [2^31, 2^32): trunc = floor, less 2^32 (exact) fits int32 */
        const __m256d big = _mm256_cmp_pd(v, _mm256_set1_pd(2147483648.0), _CMP_GE_OQ);
        return _mm256_cvttpd_epi32(_mm256_blendv_pd(v, _mm256_sub_pd(_mm256_floor_pd(v), two32), big));
    }
    /* t = trunc(v) within int64, t mod 2^32 = t - 2^32 floor(t / 2^32) (exact), moved into int32's range */
    const __m256d valid = _mm256_and_pd(_mm256_cmp_pd(v, _mm256_set1_pd(-9223372036854775808.0), _CMP_GE_OQ),
                                        _mm256_cmp_pd(v, _mm256_set1_pd(9223372036854775808.0), _CMP_LT_OQ));
    const __m256d t = _mm256_round_pd(_mm256_and_pd(v, valid), _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
    const __m256d wraps = _mm256_floor_pd(_mm256_mul_pd(t, _mm256_set1_pd(0x1p-32)));
    __m256d r = _mm256_sub_pd(t, opaque_pd(_mm256_mul_pd(wraps, two32)));
    r = _mm256_sub_pd(r, _mm256_and_pd(_mm256_cmp_pd(r, _mm256_set1_pd(2147483648.0), _CMP_GE_OQ), two32));
    return _mm256_cvttpd_epi32(r);
}

static int64_t row_limb_u32_avx2(const uint32_t *s, uint32_t *c, int64_t nb, double alpha, double beta) {
    const __m256d va = _mm256_set1_pd(alpha), vb = _mm256_set1_pd(beta);
    int64_t j = 0;
    for (; j + 4 <= nb; j += 4) {
        __m256d v = scaled(u32_to_pd(_mm_loadu_si128((const __m128i *)(s + j))), va);
        if (beta != 0.0) v = _mm256_add_pd(v, scaled(u32_to_pd(_mm_loadu_si128((const __m128i *)(c + j))), vb));
        _mm_storeu_si128((__m128i *)(c + j), cvt_u32_pd(v));
    }
    return j;
}

/* 64-bit C from sums within int32 (the limb path's), a row of at most 16 (GK_WRAP_NR32) whole or not at
 * all: UNSIGNED, a negative sum is 2^64 + s; those, C entries and results beyond 2^51 go to the scalar
 * code. All groups are computed before one test, then stored. */
static GK_FORCEINLINE int64_t row_limb_64_avx2(const uint32_t *s, uint64_t *c, int64_t nb, double alpha, double beta,
                                               const int UNSIGNED) {
    const __m256d va = _mm256_set1_pd(alpha), vb = _mm256_set1_pd(beta), magic = _mm256_set1_pd(GK_MAGIC);
    const __m256d limit = _mm256_set1_pd(2251799813685248.0); /* 2^51 */
    const __m256i c_lo = _mm256_set1_epi64x(UNSIGNED ? 0 : -((long long)1 << 51));
    const __m256i span = _mm256_set1_epi64x(((long long)1 << 52) - 1);
    const int64_t groups = GK_MIN(nb, (int64_t)16) / 4;
    __m256i out[4], bad = _mm256_setzero_si256();
    for (int g = 0; g < 4; g++) { /* a constant count: out[] stays in registers */
        if (g >= groups) break;
        const __m128i sum = _mm_loadu_si128((const __m128i *)(s + 4 * g));
        if (UNSIGNED) bad = _mm256_or_si256(bad, _mm256_cvtepi32_epi64(sum)); /* sign bits */
        __m256d v = scaled(_mm256_cvtepi32_pd(sum), va);
        if (beta != 0.0) {
            const __m256i cj = _mm256_loadu_si256((const __m256i *)(c + 4 * g)), t = _mm256_sub_epi64(cj, c_lo);
            bad = _mm256_or_si256(bad, _mm256_or_si256(t, _mm256_cmpgt_epi64(t, span))); /* t < 0 or past */
            v = _mm256_add_pd(v, scaled(i64_to_pd(cj), vb));
        }
        const __m256d t = _mm256_round_pd(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC);
        bad = _mm256_or_si256(bad, _mm256_castpd_si256(
                                       _mm256_cmp_pd(_mm256_andnot_pd(_mm256_set1_pd(-0.0), t), limit, _CMP_NLT_UQ)));
        out[g] = _mm256_sub_epi64(_mm256_castpd_si256(_mm256_add_pd(t, magic)), _mm256_castpd_si256(magic));
    }
    if (_mm256_movemask_pd(_mm256_castsi256_pd(bad)) != 0) return 0; /* a sign bit: some lane out of range */
    for (int g = 0; g < 4; g++)
        if (g < groups) _mm256_storeu_si256((__m256i *)(c + 4 * g), out[g]);
    return 4 * groups;
}
static int64_t row_limb_i64_avx2(const uint32_t *s, int64_t *c, int64_t nb, double alpha, double beta) {
    return row_limb_64_avx2(s, (uint64_t *)c, nb, alpha, beta, 0);
}
static int64_t row_limb_u64_avx2(const uint32_t *s, uint64_t *c, int64_t nb, double alpha, double beta) {
    return row_limb_64_avx2(s, c, nb, alpha, beta, 1);
}

#define GK_WRAP_ISA avx2
#define GK_WRAP_UKERNEL_LIMB ukernel_limb_avx2
#define GK_WRAP_UKERNEL64 ukernel64_avx2
#define GK_WRAP_UKERNEL64_NARROW ukernel64_narrow_avx2
#define GK_WRAP_ROW_LIMB_I32 row_limb_i32_avx2
#define GK_WRAP_ROW_LIMB_U32 row_limb_u32_avx2
#define GK_WRAP_ROW_LIMB_I64 row_limb_i64_avx2
#define GK_WRAP_ROW_LIMB_U64 row_limb_u64_avx2
#include "../wrap_template.h"
#endif
