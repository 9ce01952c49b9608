/* The boolean matrix product (NumPy's bool matmul: C[i][j] = any_k A[i][k] and B[k][j]) on bit sets: op(B)'s rows
 * packed 64 columns to a word, each row of C the OR of the B rows its A row selects, stopped once it is all true. */
#include <stdlib.h>
#include <string.h>
#include "driver.h"
#include "threads.h"

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

/* Row k of op(B) as bits: words[w] holds columns 64 w .. 64 w + 63 (bit j % 64), zero past N. */
static void pack_row_bits(const uint8_t *b, int64_t step, int64_t N, uint64_t *words) {
    const int64_t W = (N + 63) / 64;
    memset(words, 0, sizeof(uint64_t) * (size_t)W);
    int64_t j = 0;
    if (step == 1)
        for (; j + 8 <= N; j += 8) words[j / 64] |= byte_bits8(b + j) << (j % 64);
    for (; j < N; j++) words[j / 64] |= (uint64_t)(b[j * step] != 0) << (j % 64);
}

typedef struct {
    const gk_bool_problem_t *p;
    const uint64_t *bits; /* K rows of W words */
    int64_t W;
    uint64_t last_mask;   /* the valid bits of a row's last word */
    uint64_t *rows;       /* per thread, W words of the row being summed */
} bool_job_t;

static void bool_rows(void *ctx, int tid, int nthreads) {
    const bool_job_t *job = (const bool_job_t *)ctx;
    const gk_bool_problem_t *p = job->p;
    const int64_t W = job->W, K = p->K, N = p->N;
    const int64_t per = (p->M + nthreads - 1) / nthreads, i0 = tid * per, i1 = GK_MIN(p->M, i0 + per);
    uint64_t *acc = job->rows + (size_t)tid * (size_t)W;
    for (int64_t i = i0; i < i1; i++) {
        memset(acc, 0, sizeof(uint64_t) * (size_t)W);
        const uint8_t *a = p->A + (p->transa ? i : i * p->lda);
        const int64_t ak = p->transa ? p->lda : 1;
        for (int64_t k0 = 0; k0 < K; k0 += 64) {
            const int64_t k1 = GK_MIN(K, k0 + 64);
            for (int64_t k = k0; k < k1; k++) {
                if (ak == 1 && k + 8 <= k1 && !(k & 7)) { /* eight false bytes at once (sparse A) */
                    uint64_t eight;
                    memcpy(&eight, a + k, 8);
                    if (!eight) {
                        k += 7;
                        continue;
                    }
                }
                if (!a[k * ak]) continue;
                const uint64_t *b = job->bits + (size_t)k * (size_t)W;
                for (int64_t w = 0; w < W; w++) acc[w] |= b[w];
            }
            /* once every column is true no later k changes the row */
            uint64_t all = acc[W - 1] | ~job->last_mask;
            for (int64_t w = 0; w + 1 < W; w++) all &= acc[w];
            if (all == ~(uint64_t)0) break;
        }
        uint8_t *c = p->C + i * p->ldc;
        int64_t j = 0;
        if (!p->beta)
            for (; j + 8 <= N; j += 8) {
                const uint64_t bytes = bits_bytes8((uint8_t)(acc[j / 64] >> (j % 64)));
                memcpy(c + j, &bytes, 8);
            }
        for (; j < N; j++) {
            const uint8_t v = (uint8_t)((acc[j / 64] >> (j % 64)) & 1u);
            c[j] = p->beta ? (uint8_t)(v | (c[j] != 0)) : v;
        }
    }
}

gemmkit_status_t gk_bool_gemm(const gk_bool_problem_t *p) {
    const int64_t W = (p->N + 63) / 64;
    /* the work is about M K W word ORs: as a float product with K / 64 */
    const int nthreads = (int)GK_MIN((int64_t)gk_threads_for(p->M, p->N, GK_MAX(p->K / 64, (int64_t)1)), p->M);
    uint64_t *bits = (uint64_t *)malloc(sizeof(uint64_t) * (size_t)(p->K * W + (int64_t)nthreads * W));
    if (bits == NULL) return gemmkit_out_of_memory;
    for (int64_t k = 0; k < p->K; k++)
        pack_row_bits(p->transb ? p->B + k : p->B + k * p->ldb, p->transb ? p->ldb : 1, p->N,
                      bits + (size_t)k * (size_t)W);
    bool_job_t job = {p, bits, W, p->N % 64 ? ((uint64_t)1 << (p->N % 64)) - 1 : ~(uint64_t)0,
                      bits + (size_t)p->K * (size_t)W};
    gk_parallel_run(bool_rows, &job, nthreads);
    free(bits);
    return gemmkit_success;
}
