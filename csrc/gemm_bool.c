/* The boolean matrix product (NumPy's bool matmul: C[i][j] = any_k A[i][k] and B[k][j]) on bit sets: op(B)'s rows
 * packed 64 columns to a word, each row of C the OR of the B rows its A row selects, stopped once it is all true. */
#include <stdlib.h>
#include <string.h>
#include "driver.h"
#include "threads.h"
#if defined(__SSE2__) || defined(_M_X64)
#include <emmintrin.h>
#define GK_BOOL_SSE 1 /* x86-64's baseline: B's bytes to bits 16 at a time */
#else
#define GK_BOOL_SSE 0
#endif

/* words of a row of C summed at a time by the portable chunk: 512 columns, four SSE registers */
#define BOOL_CHUNK_WORDS 8

/* 8 bytes (any value; nonzero is true) as 8 bits, byte b at bit b. */
static inline uint64_t byte_bits8(const uint8_t *p) {
    uint64_t x;
    memcpy(&x, p, 8);
    x |= x >> 4;
    x |= x >> 2;
    x |= x >> 1;
    x &= 0x0101010101010101u;             /* bit 0 of each byte: whether it was nonzero */
    return (x * 0x0102040810204080u) >> 56; /* byte b's bit to bit b of the top byte */
}

/* The inverse: 8 bits as 8 bytes 0 / 1 (bit b to byte b). */
static inline uint64_t bits_bytes8(uint8_t v) {
    const uint64_t x = ((uint64_t)v * 0x0101010101010101u) & 0x8040201008040201u; /* bit b kept in byte b */
    return ((x + 0x7F7F7F7F7F7F7F7Fu) >> 7) & 0x0101010101010101u;              /* nonzero byte to 1 */
}

/* n contiguous bytes as bits (gk_bool_kernels_t.pack_bits). */
static void pack_bits_portable(const uint8_t *b, int64_t n, uint64_t *words) {
    memset(words, 0, sizeof(uint64_t) * (size_t)((n + 63) / 64));
    int64_t j = 0;
#if GK_BOOL_SSE
    for (; j + 16 <= n; j += 16) { /* 16 bytes to 16 bits: a compare with zero and its byte mask */
        const __m128i z = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(b + j)), _mm_setzero_si128());
        words[j / 64] |= (uint64_t)(~(unsigned)_mm_movemask_epi8(z) & 0xffffu) << (j % 64);
    }
#endif
    for (; j + 8 <= n; j += 8) words[j / 64] |= byte_bits8(b + j) << (j % 64);
    for (; j < n; j++) words[j / 64] |= (uint64_t)(b[j] != 0) << (j % 64);
}

/* Row k of op(B) as bits, its bytes `step` apart. */
static void pack_row_bits(const gk_bool_kernels_t *kern, const uint8_t *b, int64_t step, int64_t N, uint64_t *words) {
    if (step == 1) {
        kern->pack_bits(b, N, words);
        return;
    }
    memset(words, 0, sizeof(uint64_t) * (size_t)((N + 63) / 64));
    for (int64_t j = 0; j < N; j++) words[j / 64] |= (uint64_t)(b[j * step] != 0) << (j % 64);
}

/* n bits as bytes 0 / 1 (gk_bool_kernels_t.store_bytes). */
static void store_bytes_portable(const uint64_t *words, int64_t n, uint8_t *c) {
    int64_t j = 0;
    for (; j + 8 <= n; j += 8) {
        const uint64_t bytes = bits_bytes8((uint8_t)(words[j / 64] >> (j % 64)));
        memcpy(c + j, &bytes, 8);
    }
    for (; j < n; j++) c[j] = (uint8_t)((words[j / 64] >> (j % 64)) & 1u);
}

typedef struct {
    const gk_bool_problem_t *p;
    const uint64_t *bits; /* K rows of W words */
    int64_t W;
    uint64_t last_mask;   /* the valid bits of a row's last word */
    uint64_t *rows;       /* per thread, W words of the row being summed */
    const gk_bool_kernels_t *kern;
} bool_job_t;

/* Whether A's bytes k .. k + 7 (contiguous: ak 1, within the check's k1) are all false: a sparse A's runs of false
 * bytes skipped eight at a time. */
static inline int eight_false(const uint8_t *a, int64_t ak, int64_t k, int64_t k1) {
    uint64_t eight = 1;
    if (ak == 1 && k + 8 <= k1 && !(k & 7)) memcpy(&eight, a + k, 8);
    return eight == 0;
}

/* gk_bool_kernels_t.chunk, portable: SSE where x86-64's baseline has it. */
static void chunk_portable(const uint8_t *a, int64_t ak, int64_t K, const uint64_t *bits, int64_t W, int64_t c0,
                           int64_t nw, uint64_t valid, uint64_t *acc) {
#if GK_BOOL_SSE
    if (nw == BOOL_CHUNK_WORDS) { /* the chunk in four registers, B's rows under a mask, no branch per k */
        __m128i s0 = _mm_setzero_si128(), s1 = s0, s2 = s0, s3 = s0;
        const __m128i full = _mm_set1_epi32(-1), tail = _mm_set_epi64x((long long)~valid, 0);
        for (int64_t k0 = 0; k0 < K; k0 += GK_BOOL_CHECK_K) {
            const int64_t k1 = GK_MIN(K, k0 + GK_BOOL_CHECK_K);
            for (int64_t k = k0; k < k1; k++) {
                if (eight_false(a, ak, k, k1)) {
                    k += 7;
                    continue;
                }
                const __m128i m = _mm_set1_epi8((char)(0 - (a[k * ak] != 0)));
                const __m128i *b = (const __m128i *)(bits + (size_t)k * (size_t)W + c0);
                s0 = _mm_or_si128(s0, _mm_and_si128(_mm_loadu_si128(b), m));
                s1 = _mm_or_si128(s1, _mm_and_si128(_mm_loadu_si128(b + 1), m));
                s2 = _mm_or_si128(s2, _mm_and_si128(_mm_loadu_si128(b + 2), m));
                s3 = _mm_or_si128(s3, _mm_and_si128(_mm_loadu_si128(b + 3), m));
            }
            /* once every column is true no later k changes the chunk */
            const __m128i all = _mm_and_si128(_mm_and_si128(s0, s1), _mm_and_si128(s2, _mm_or_si128(s3, tail)));
            if (_mm_movemask_epi8(_mm_cmpeq_epi8(all, full)) == 0xffff) break;
        }
        _mm_storeu_si128((__m128i *)acc, s0);
        _mm_storeu_si128((__m128i *)acc + 1, s1);
        _mm_storeu_si128((__m128i *)acc + 2, s2);
        _mm_storeu_si128((__m128i *)acc + 3, s3);
        return;
    }
#endif
    memset(acc, 0, sizeof(uint64_t) * (size_t)nw);
    for (int64_t k0 = 0; k0 < K; k0 += GK_BOOL_CHECK_K) {
        const int64_t k1 = GK_MIN(K, k0 + GK_BOOL_CHECK_K);
        for (int64_t k = k0; k < k1; k++) {
            if (eight_false(a, ak, k, k1)) {
                k += 7;
                continue;
            }
            const uint64_t m = (uint64_t)0 - (uint64_t)(a[k * ak] != 0);
            const uint64_t *b = bits + (size_t)k * (size_t)W + c0;
            for (int64_t w = 0; w < nw; w++) acc[w] |= b[w] & m;
        }
        uint64_t all = acc[nw - 1] | ~valid;
        for (int64_t w = 0; w + 1 < nw; w++) all &= acc[w];
        if (all == ~(uint64_t)0) break;
    }
}

static const gk_bool_kernels_t bool_kernels_portable = {"bool_portable", pack_bits_portable, chunk_portable,
                                                         store_bytes_portable, BOOL_CHUNK_WORDS};

static void bool_rows(void *ctx, int tid, int nthreads) {
    const bool_job_t *job = (const bool_job_t *)ctx;
    const gk_bool_problem_t *p = job->p;
    const int64_t W = job->W, K = p->K, N = p->N;
    const int64_t per = (p->M + nthreads - 1) / nthreads, i0 = tid * per, i1 = GK_MIN(p->M, i0 + per);
    uint64_t *acc = job->rows + (size_t)tid * (size_t)W;
    for (int64_t i = i0; i < i1; i++) {
        const uint8_t *a = p->A + (p->transa ? i : i * p->lda);
        const int64_t ak = p->transa ? p->lda : 1;
        const int64_t cw = job->kern->chunk_words;
        for (int64_t c0 = 0; c0 < W; c0 += cw) { /* chunks of C's row, each stopped on its own */
            const int64_t nw = GK_MIN(cw, W - c0);
            job->kern->chunk(a, ak, K, job->bits, W, c0, nw, c0 + nw == W ? job->last_mask : ~(uint64_t)0, acc + c0);
        }
        uint8_t *c = p->C + i * p->ldc;
        if (!p->beta) {
            job->kern->store_bytes(acc, N, c);
            continue;
        }
        for (int64_t j = 0; j < N; j++) c[j] = (uint8_t)(((acc[j / 64] >> (j % 64)) & 1u) | (c[j] != 0));
    }
}

gemmkit_status_t gk_bool_gemm(const gk_bool_problem_t *p) {
    const int64_t W = (p->N + 63) / 64;
    /* the work is about M K W word ORs: as a float product with K / 64 */
    const int nthreads = (int)GK_MIN((int64_t)gk_threads_for(p->M, p->N, GK_MAX(p->K / 64, (int64_t)1)), p->M);
    /* K bit rows, 8 words of slack (a kernel's whole-vector reads past a chunk's last word), the threads' rows */
    uint64_t *bits = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)(p->K * W + 8 + (int64_t)nthreads * W));
    if (bits == NULL) return gemmkit_out_of_memory;
    const gk_bool_kernels_t *kern = p->kern ? p->kern : &bool_kernels_portable;
    for (int64_t k = 0; k < p->K; k++)
        pack_row_bits(kern, p->transb ? p->B + k : p->B + k * p->ldb, p->transb ? p->ldb : 1, p->N,
                      bits + (size_t)k * (size_t)W);
    bool_job_t job = {p, bits, W, p->N % 64 ? ((uint64_t)1 << (p->N % 64)) - 1 : ~(uint64_t)0,
                      bits + (size_t)p->K * (size_t)W + 8, kern};
    gk_parallel_run(bool_rows, &job, nthreads);
    free(bits);
    return gemmkit_success;
}
