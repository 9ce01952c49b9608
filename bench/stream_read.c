/* The streaming references of the bench: a read of a buffer as a GEMV must read it (bench/cases/gemv.py), and
   a read that writes a byte per 4 bytes read, the traffic of a float32 quantizer (bench/w8a8_bench.py). */
#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

/* One thread's share: 4 concurrent streams over its 4 quarters (on Zen 2 one stream reads at ~18 GB/s,
   4 at ~26 GB/s: the bound a GEMV that keeps several rows in flight can reach), one 64-byte line of each
   per step in 16-byte words (GCC/Clang vector extension: SSE2), one sum per stream. */
typedef uint64_t v2u __attribute__((vector_size(16)));

static inline v2u load2(const uint64_t *p) {
    v2u v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

static uint64_t read_share(const uint64_t *p, size_t n) {
    const size_t q = n / 4 / 8 * 8;
    const uint64_t *p0 = p, *p1 = p + q, *p2 = p + 2 * q, *p3 = p + 3 * q;
    v2u s0 = {0, 0}, s1 = s0, s2 = s0, s3 = s0;
    for (size_t i = 0; i < q; i += 8) {
        s0 += (load2(p0 + i) + load2(p0 + i + 2)) + (load2(p0 + i + 4) + load2(p0 + i + 6));
        s1 += (load2(p1 + i) + load2(p1 + i + 2)) + (load2(p1 + i + 4) + load2(p1 + i + 6));
        s2 += (load2(p2 + i) + load2(p2 + i + 2)) + (load2(p2 + i + 4) + load2(p2 + i + 6));
        s3 += (load2(p3 + i) + load2(p3 + i + 2)) + (load2(p3 + i + 4) + load2(p3 + i + 6));
    }
    const v2u s = (s0 + s1) + (s2 + s3);
    uint64_t sum = s[0] + s[1];
    for (size_t i = 4 * q; i < n; i++) sum += p[i];
    return sum;
}

/* The same 4 streams, each 64-byte line read leaving 16 bytes at out (its quarter of out): the memory traffic of
   quantizing float32 to int8 in one pass (plain stores, as the quantizer's). */
static uint64_t read_narrow_share(const uint64_t *p, size_t n, uint64_t *out) {
    const size_t q = n / 4 / 8 * 8;
    v2u s = {0, 0};
    for (size_t i = 0; i < q; i += 8) {
        for (int t = 0; t < 4; t++) {
            const uint64_t *pt = p + t * q + i;
            const v2u v = (load2(pt) ^ load2(pt + 2)) ^ (load2(pt + 4) ^ load2(pt + 6));
            __builtin_memcpy(out + (t * q + i) / 4, &v, sizeof v);
            s += v;
        }
    }
    uint64_t sum = s[0] + s[1];
    for (size_t i = 4 * q; i < n; i++) sum += p[i];
    return sum;
}

typedef struct { const uint64_t *p; size_t n; uint64_t *out; uint64_t sum; } share_t;

static void *read_thread(void *arg) {
    share_t *s = (share_t *)arg;
    s->sum = s->out ? read_narrow_share(s->p, s->n, s->out) : read_share(s->p, s->n);
    return NULL;
}

/* Both references: `bytes` at p on `threads` threads (1 .. 64), the calling one included, each thread writing its
   share's quarter-sized part of out unless out is NULL; returns the sum so that nothing is optimised away. */
static uint64_t stream_run(const void *p, size_t bytes, void *out, int threads) {
    share_t sh[64];
    pthread_t tid[64];
    int started[64] = {0};
    const size_t n = bytes / 8;
    if (threads < 1) threads = 1;
    if (threads > 64) threads = 64;
    for (int t = 0; t < threads; t++) {
        const size_t a = n * t / threads, b = n * (t + 1) / threads;
        sh[t].p = (const uint64_t *)p + a;
        sh[t].n = b - a;
        sh[t].out = out ? (uint64_t *)out + a / 4 : NULL;
        sh[t].sum = 0;
    }
    for (int t = 1; t < threads; t++) started[t] = pthread_create(&tid[t], NULL, read_thread, &sh[t]) == 0;
    read_thread(&sh[0]);
    uint64_t sum = sh[0].sum;
    for (int t = 1; t < threads; t++) {
        if (started[t]) pthread_join(tid[t], NULL);
        else read_thread(&sh[t]);   /* no thread: the caller reads that share too */
        sum += sh[t].sum;
    }
    return sum;
}

/* Reads `bytes` bytes (a multiple of 8) at p on `threads` threads (1 .. 64), the calling one included;
   returns their sum so that nothing is optimised away. */
uint64_t stream_read(const void *p, size_t bytes, int threads) { return stream_run(p, bytes, NULL, threads); }

/* As stream_read, and writes bytes / 4 bytes at out (8-byte aligned; a multiple of 256 bytes read per thread
   writes every one of them): a float32 -> int8 quantizer's traffic. */
uint64_t stream_read_narrow(const void *p, size_t bytes, void *out, int threads) {
    return stream_run(p, bytes, out, threads);
}
