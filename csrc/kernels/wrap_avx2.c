/* The wrap-around integer GEMM (csrc/wrap_template.h) compiled with AVX2 flags only, with its 4 x 16
 * (32-bit) and 4 x 8 (64-bit) register tiles in AVX2: vpmulld, and 64-bit products from vpmuludq. */
#include <immintrin.h>
#include "../driver.h"

#if GEMMKIT_X86
/* acc[4][16] = A panel (4 per k) x B panel (16 per k), modulo 2^32 */
static void ukernel32_avx2(int64_t K, const uint32_t *GK_RESTRICT ap, const uint32_t *GK_RESTRICT bp,
                           uint32_t *GK_RESTRICT acc) {
    __m256i c[4][2];
    for (int r = 0; r < 4; r++) c[r][0] = c[r][1] = _mm256_setzero_si256();
    for (int64_t k = 0; k < K; k++) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)(bp + k * 16));
        const __m256i b1 = _mm256_loadu_si256((const __m256i *)(bp + k * 16 + 8));
        for (int r = 0; r < 4; r++) {
            const __m256i a = _mm256_set1_epi32((int)ap[k * 4 + r]);
            c[r][0] = _mm256_add_epi32(c[r][0], _mm256_mullo_epi32(a, b0));
            c[r][1] = _mm256_add_epi32(c[r][1], _mm256_mullo_epi32(a, b1));
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

/* acc[4][8] = A panel (4 per k) x B panel (8 per k), modulo 2^64 */
static void ukernel64_avx2(int64_t K, const uint64_t *GK_RESTRICT ap, const uint64_t *GK_RESTRICT bp,
                           uint64_t *GK_RESTRICT acc) {
    __m256i c[4][2];
    for (int r = 0; r < 4; r++) c[r][0] = c[r][1] = _mm256_setzero_si256();
    for (int64_t k = 0; k < K; k++) {
        const __m256i b0 = _mm256_loadu_si256((const __m256i *)(bp + k * 8));
        const __m256i b1 = _mm256_loadu_si256((const __m256i *)(bp + k * 8 + 4));
        const __m256i b0h = _mm256_srli_epi64(b0, 32), b1h = _mm256_srli_epi64(b1, 32);
        for (int r = 0; r < 4; r++) {
            const __m256i a = _mm256_set1_epi64x((long long)ap[k * 4 + r]);
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

#define GK_WRAP_ISA avx2
#define GK_WRAP_UKERNEL32 ukernel32_avx2
#define GK_WRAP_UKERNEL64 ukernel64_avx2
#include "../wrap_template.h"
#endif
