/* The bool product's AVX-512 kernels (kernel.h gk_bool_kernels_t): bytes to bits by a test per 64 bytes, a chunk of
 * C's row (up to 2048 columns) as ORs in zmm of the B rows of A's set bits, bits back to bytes by a masked move. */
#include "../kernel.h"
#if GEMMKIT_X86
#include <immintrin.h>

#define CHUNK_VECTORS 4 /* zmm of a chunk: 32 words, 2048 columns of C, one load per vector and k step */

static void pack_bits_avx512(const uint8_t *b, int64_t n, uint64_t *words) {
    const int64_t whole = n / 64;
    for (int64_t w = 0; w < whole; w++) {
        const __m512i v = _mm512_loadu_si512(b + 64 * w);
        words[w] = _mm512_test_epi8_mask(v, v);
    }
    if (n > 64 * whole) {
        const __m512i v = _mm512_maskz_loadu_epi8(~(__mmask64)0 >> (64 - (n - 64 * whole)), b + 64 * whole);
        words[whole] = _mm512_test_epi8_mask(v, v);
    }
}

static void store_bytes_avx512(const uint64_t *words, int64_t n, uint8_t *c) {
    const __m512i one = _mm512_set1_epi8(1);
    const int64_t whole = n / 64;
    for (int64_t w = 0; w < whole; w++) _mm512_storeu_si512(c + 64 * w, _mm512_maskz_mov_epi8((__mmask64)words[w], one));
    if (n > 64 * whole)
        _mm512_mask_storeu_epi8(c + 64 * whole, ~(__mmask64)0 >> (64 - (n - 64 * whole)),
                                _mm512_maskz_mov_epi8((__mmask64)words[whole], one));
}

/* A's bytes k0 .. k0 + n - 1 (n <= 64, ak apart) as bits: bit j set when byte k0 + j is true. */
static GK_FORCEINLINE uint64_t a_bits64(const uint8_t *a, int64_t ak, int64_t k0, int64_t n) {
    if (ak == 1) {
        const __m512i v = n == 64 ? _mm512_loadu_si512(a + k0) : _mm512_maskz_loadu_epi8(~(__mmask64)0 >> (64 - n), a + k0);
        return _mm512_test_epi8_mask(v, v);
    }
    uint64_t sel = 0;
    for (int64_t j = 0; j < n; j++) sel |= (uint64_t)(a[(k0 + j) * ak] != 0) << j;
    return sel;
}

/* The chunk in NV zmm sums: the B rows of A's true bytes ORed in, 64 k of A at a time as bits walked by their set
 * bits (false bytes cost nothing); the last vector read whole (the words past the chunk lie within the bit rows'
 * slack and are masked at the store), fill: the bits of it that do not count, set, for the all-true check. */
static GK_FORCEINLINE void chunk_nv(const int NV, const uint8_t *a, int64_t ak, int64_t K, const uint64_t *bits,
                                    int64_t W, __mmask8 lm, __m512i fill, uint64_t *acc) {
    __m512i s[CHUNK_VECTORS];
#pragma GCC unroll 4
    for (int v = 0; v < NV; v++) s[v] = _mm512_setzero_si512();
    const __m512i ones = _mm512_set1_epi64(-1);
    int full = 0;
    for (int64_t k0 = 0; k0 < K && !full; k0 += 64) {
        const int64_t n = GK_MIN((int64_t)64, K - k0);
        const uint64_t sel = a_bits64(a, ak, k0, n);
        for (int q = 0; q < n; q += GK_BOOL_CHECK_K) {
            uint64_t part = (sel >> q) & (((uint64_t)1 << GK_BOOL_CHECK_K) - 1);
            if (!part) continue;
            while (part) {
                const uint64_t *b = bits + (size_t)(k0 + q + (int64_t)__builtin_ctzll(part)) * (size_t)W;
                part &= part - 1;
#pragma GCC unroll 4
                for (int v = 0; v < NV; v++) s[v] = _mm512_or_si512(s[v], _mm512_loadu_si512(b + 8 * v));
            }
            /* once every column is true no later k changes the chunk */
            __m512i all = _mm512_or_si512(s[NV - 1], fill);
#pragma GCC unroll 4
            for (int v = 0; v + 1 < NV; v++) all = _mm512_and_si512(all, s[v]);
            if (_mm512_cmpneq_epi64_mask(all, ones) == 0) {
                full = 1;
                break;
            }
        }
    }
#pragma GCC unroll 4
    for (int v = 0; v + 1 < NV; v++) _mm512_storeu_si512(acc + 8 * v, s[v]);
    _mm512_mask_storeu_epi64(acc + 8 * (NV - 1), lm, s[NV - 1]);
}

static void chunk_avx512(const uint8_t *a, int64_t ak, int64_t K, const uint64_t *bits, int64_t W, int64_t c0,
                         int64_t nw, uint64_t valid, uint64_t *acc) {
    const int nv = (int)((nw + 7) / 8), rem = (int)(nw - 8 * (nv - 1));
    const __mmask8 lm = (__mmask8)((1u << rem) - 1u);
    __m512i fill = _mm512_mask_set1_epi64(_mm512_set1_epi64(-1), lm, 0);
    fill = _mm512_mask_set1_epi64(fill, (__mmask8)(1u << (rem - 1)), (long long)~valid);
    bits += c0;
    switch (nv) {
        case 1: chunk_nv(1, a, ak, K, bits, W, lm, fill, acc); break;
        case 2: chunk_nv(2, a, ak, K, bits, W, lm, fill, acc); break;
        case 3: chunk_nv(3, a, ak, K, bits, W, lm, fill, acc); break;
        default: chunk_nv(4, a, ak, K, bits, W, lm, fill, acc); break;
    }
}

const gk_bool_kernels_t gk_bool_kernels_avx512 = {"bool_avx512", pack_bits_avx512, chunk_avx512,
                                                  store_bytes_avx512, 8 * CHUNK_VECTORS};
#endif
