/* gemmkit's peak probe: one core's arithmetic peaks (fp32/fp64 FMA on ymm and zmm, u8*s8 VNNI and AMX, the AVX2
   int16 vpmaddwd path, bf16 vdpbf16ps and AMX-BF16) and a streaming-read bandwidth; bench/machine.py compiles it
   with cc -O2 and runs it.

   Method: for each instruction the CPU supports (checked at run time, each loop compiled for its own ISA by
   a target attribute), keep NACC independent accumulators busy with back-to-back instructions whose inputs
   do not depend on each other's results, so the loop is bound by issue throughput, not by latency; count
   the operations (2 per multiply-add lane) over a run timed on the thread's CPU clock; best of REPEATS. Bandwidth: sum a buffer much
   larger than the caches with four independent vector sums.
   A CPU with neither AVX512_BF16 nor AMX-BF16 gets the line "bf16 unit: none" (bench then compares bfloat16
   GEMM with the fp32 FMA peak, which is what a widening kernel can reach).
   Usage: peak_probe [seconds per measurement, default 0.1]; prints "<name>: <value> <unit>" lines. */
#include <immintrin.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#define NACC 12
#define REPEATS 3

/* The thread's own CPU time: on a core shared with other processes, the time slices they take are not
   counted (their cache use still can be, which matters only for the bandwidth figure). */
static double seconds_now(void) {
    struct timespec t;
#ifdef CLOCK_THREAD_CPUTIME_ID
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
#else
    clock_gettime(CLOCK_MONOTONIC, &t);
#endif
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static volatile double sink; /* keeps the accumulators' results alive */

/* One probe loop: VTYPE accumulators, SETUP declares the loop-invariant inputs, STEP(acc) is one
   instruction (or a dependent pair) on accumulator acc, OPS_PER_STEP the operations it performs. */
#define PROBE(fname, isa, VTYPE, ZERO, SETUP, STEP, FOLD, OPS_PER_STEP)                      \
    __attribute__((target(isa), noinline)) static double fname(long iters) {                \
        VTYPE acc[NACC];                                                                    \
        SETUP;                                                                              \
        for (int i = 0; i < NACC; i++) acc[i] = ZERO;                                      \
        double t0 = seconds_now();                                                         \
        for (long it = 0; it < iters; it++) {                                             \
            _Pragma("GCC unroll 12") for (int i = 0; i < NACC; i++) acc[i] = STEP(acc[i]); \
        }                                                                                   \
        double dt = seconds_now() - t0;                                                    \
        double s = 0;                                                                       \
        for (int i = 0; i < NACC; i++) s += FOLD(acc[i]);                                  \
        sink = s;                                                                           \
        return (double)iters * NACC * (OPS_PER_STEP) / dt;                                 \
    }

#define FMA_PS256(x) _mm256_fmadd_ps(x, va, vb)
#define FMA_PD256(x) _mm256_fmadd_pd(x, va, vb)
#define FMA_PS512(x) _mm512_fmadd_ps(x, va, vb)
#define DPBUSD_VEX(x) _mm256_dpbusd_avx_epi32(x, va, vb)
#define DPBUSD_Y(x) _mm256_dpbusd_epi32(x, va, vb)
#define DPBUSD_Z(x) _mm512_dpbusd_epi32(x, va, vb)
#define FIRST_PS256(x) _mm256_cvtss_f32(x)
#define FIRST_PD256(x) _mm256_cvtsd_f64(x)
#define FIRST_PS512(x) _mm512_cvtss_f32(x)
#define FIRST_I256(x) _mm256_cvtsi256_si32(x)
#define FIRST_I512(x) _mm512_cvtsi512_si32(x)

/* va*acc + vb with va slightly below 1 stays finite for any run length. */
PROBE(fp32_ymm_fma, "avx2,fma", __m256, _mm256_set1_ps(1.0f),
      __m256 va = _mm256_set1_ps(0.999f); __m256 vb = _mm256_set1_ps(0.001f),
      FMA_PS256, FIRST_PS256, 8 * 2)
PROBE(fp64_ymm_fma, "avx2,fma", __m256d, _mm256_set1_pd(1.0),
      __m256d va = _mm256_set1_pd(0.999); __m256d vb = _mm256_set1_pd(0.001),
      FMA_PD256, FIRST_PD256, 4 * 2)
/* The int16 path's pair (vpmaddwd into a temporary, vpaddd into an accumulator) in inline assembly: written
   with intrinsics, the compiler hoists the loop-invariant product or, made to read the accumulator, spills
   twelve accumulators and their temporaries; six pairs on registers of their own are what the kernels issue. */
__attribute__((target("avx2"), noinline)) static double i16_ymm_maddwd(long iters) {
    double t0 = seconds_now();
    for (long it = 0; it < iters; it++) {
        __asm__ volatile(
            "vpmaddwd %%ymm14, %%ymm15, %%ymm6\n\tvpaddd %%ymm6, %%ymm0, %%ymm0\n\t"
            "vpmaddwd %%ymm14, %%ymm15, %%ymm7\n\tvpaddd %%ymm7, %%ymm1, %%ymm1\n\t"
            "vpmaddwd %%ymm14, %%ymm15, %%ymm8\n\tvpaddd %%ymm8, %%ymm2, %%ymm2\n\t"
            "vpmaddwd %%ymm14, %%ymm15, %%ymm9\n\tvpaddd %%ymm9, %%ymm3, %%ymm3\n\t"
            "vpmaddwd %%ymm14, %%ymm15, %%ymm10\n\tvpaddd %%ymm10, %%ymm4, %%ymm4\n\t"
            "vpmaddwd %%ymm14, %%ymm15, %%ymm11\n\tvpaddd %%ymm11, %%ymm5, %%ymm5\n\t"
            ::: "xmm0", "xmm1", "xmm2", "xmm3", "xmm4", "xmm5", "xmm6", "xmm7", "xmm8", "xmm9", "xmm10", "xmm11");
    }
    double dt = seconds_now() - t0;
    return (double)iters * 6 * (16 * 2) / dt;
}
PROBE(u8s8_ymm_avxvnni, "avx2,avxvnni", __m256i, _mm256_setzero_si256(),
      __m256i va = _mm256_set1_epi8(3); __m256i vb = _mm256_set1_epi8(-2),
      DPBUSD_VEX, FIRST_I256, 32 * 2)
PROBE(u8s8_ymm_evex, "avx512f,avx512vl,avx512vnni", __m256i, _mm256_setzero_si256(),
      __m256i va = _mm256_set1_epi8(3); __m256i vb = _mm256_set1_epi8(-2),
      DPBUSD_Y, FIRST_I256, 32 * 2)
PROBE(fp32_zmm_fma, "avx512f", __m512, _mm512_set1_ps(1.0f),
      __m512 va = _mm512_set1_ps(0.999f); __m512 vb = _mm512_set1_ps(0.001f),
      FMA_PS512, FIRST_PS512, 16 * 2)
PROBE(u8s8_zmm_vnni, "avx512f,avx512vnni", __m512i, _mm512_setzero_si512(),
      __m512i va = _mm512_set1_epi8(3); __m512i vb = _mm512_set1_epi8(-2),
      DPBUSD_Z, FIRST_I512, 64 * 2)

#include <cpuid.h>

/* AVX512_BF16 is CPUID leaf 7 sub-leaf 1, EAX bit 5; the zmm state is the OS's once avx512f is usable. */
static int avx512bf16_usable(int avx512) {
    unsigned a, b, c, d;
    return avx512 && __get_cpuid_count(7, 1, &a, &b, &c, &d) && ((a >> 5) & 1);
}

#if defined(__GNUC__) && (__GNUC__ >= 10 || (defined(__clang__) && __clang_major__ >= 9))
#define PROBE_BF16 1
/* vdpbf16ps: per float32 lane two bf16 products summed into the accumulator, 16 lanes x 2 pairs x 2 ops.
   The inputs are tiny, so the accumulators grow slowly and stay finite for any run length. */
#define DPBF16_Z(x) _mm512_dpbf16_ps(x, va, vb)
PROBE(bf16_zmm_dpbf16, "avx512f,avx512bf16", __m512, _mm512_setzero_ps(),
      __m512bh va = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.001f), _mm512_set1_ps(0.001f));
      __m512bh vb = _mm512_cvtne2ps_pbh(_mm512_set1_ps(0.002f), _mm512_set1_ps(0.002f)),
      DPBF16_Z, FIRST_PS512, 16 * 2 * 2)
#endif

#if defined(__linux__) && defined(__GNUC__) && (__GNUC__ >= 11 || defined(__clang__))
#define PROBE_AMX 1
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>
/* AMX: CPUID AMX-TILE and the unit asked for (EDX bit 25 AMX-INT8, bit 22 AMX-BF16), the OS's tile state in
   XCR0, and Linux's permission for this process (asked once; asking again is harmless). */
#define AMX_INT8_BIT 25
#define AMX_BF16_BIT 22
static int amx_usable(int unit_bit) {
    unsigned a, b, c, d;
    if (!__get_cpuid_count(7, 0, &a, &b, &c, &d) || !((d >> 24) & 1) || !((d >> unit_bit) & 1)) return 0;
    if (!__get_cpuid(1, &a, &b, &c, &d) || !((c >> 27) & 1)) return 0; /* OSXSAVE */
    unsigned lo, hi;
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0)); /* xgetbv */
    if ((lo & 0x60000) != 0x60000) return 0;
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XTILEDATA */) == 0;
}
/* tdpbusd back to back into six independent 16 x 16 int32 tiles from two fixed 16 x 64-byte tiles:
   16 * 16 * 64 multiply-adds (2 ops each) per instruction. */
__attribute__((target("amx-tile,amx-int8"), noinline)) static double u8s8_amx(long iters) {
    struct { unsigned char palette, start, reserved[14]; unsigned short colsb[16]; unsigned char rows[16]; }
        __attribute__((aligned(64))) cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) { cfg.colsb[t] = 64; cfg.rows[t] = 16; }
    static unsigned char ones[16 * 64] __attribute__((aligned(64)));
    memset(ones, 1, sizeof ones);
    _tile_loadconfig(&cfg);
    _tile_loadd(6, ones, 64);
    _tile_loadd(7, ones, 64);
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3); _tile_zero(4); _tile_zero(5);
    double t0 = seconds_now();
    for (long it = 0; it < iters; it++) {
        _tile_dpbusd(0, 6, 7); _tile_dpbusd(1, 6, 7); _tile_dpbusd(2, 6, 7);
        _tile_dpbusd(3, 6, 7); _tile_dpbusd(4, 6, 7); _tile_dpbusd(5, 6, 7);
    }
    double dt = seconds_now() - t0;
    static int out[16 * 16] __attribute__((aligned(64)));
    _tile_stored(0, out, 64);
    sink = out[0];
    _tile_release();
    return (double)iters * 6 * 16 * 16 * 64 * 2 / dt;
}
/* tdpbf16ps the same way: 16 x 16 float32 tiles += 16 x 32 bf16 times 16 x 16 bf16 pairs, 16 * 16 * 32
   multiply-adds (2 ops each) per instruction. */
__attribute__((target("amx-tile,amx-bf16"), noinline)) static double bf16_amx(long iters) {
    struct { unsigned char palette, start, reserved[14]; unsigned short colsb[16]; unsigned char rows[16]; }
        __attribute__((aligned(64))) cfg;
    memset(&cfg, 0, sizeof cfg);
    cfg.palette = 1;
    for (int t = 0; t < 8; t++) { cfg.colsb[t] = 64; cfg.rows[t] = 16; }
    static unsigned short small[16 * 32] __attribute__((aligned(64)));
    for (int i = 0; i < 16 * 32; i++) small[i] = 0x3a83; /* a bf16 near 0.001: the tiles stay finite */
    _tile_loadconfig(&cfg);
    _tile_loadd(6, small, 64);
    _tile_loadd(7, small, 64);
    _tile_zero(0); _tile_zero(1); _tile_zero(2); _tile_zero(3); _tile_zero(4); _tile_zero(5);
    double t0 = seconds_now();
    for (long it = 0; it < iters; it++) {
        _tile_dpbf16ps(0, 6, 7); _tile_dpbf16ps(1, 6, 7); _tile_dpbf16ps(2, 6, 7);
        _tile_dpbf16ps(3, 6, 7); _tile_dpbf16ps(4, 6, 7); _tile_dpbf16ps(5, 6, 7);
    }
    double dt = seconds_now() - t0;
    static float out[16 * 16] __attribute__((aligned(64)));
    _tile_stored(0, out, 64);
    sink = out[0];
    _tile_release();
    return (double)iters * 6 * 16 * 16 * 32 * 2 / dt;
}
#endif

typedef double (*probe_fn)(long);

/* Best rate of REPEATS runs of about `secs` each (the iteration count is calibrated on a short run). */
static double best_rate(probe_fn fn, double secs) {
    long iters = 10000;
    double t0 = seconds_now();
    fn(iters);
    double dt = seconds_now() - t0;
    if (dt > 0) iters = (long)(iters * secs / dt) + 1;
    double best = 0;
    for (int r = 0; r < REPEATS; r++) {
        double v = fn(iters);
        if (v > best) best = v;
    }
    return best;
}

/* Streaming read: GB/s of summing a 256 MiB buffer with four independent ymm sums (best of REPEATS). */
__attribute__((target("avx2"), noinline)) static double stream_read_gbs(void) {
    size_t n = (size_t)64 << 20; /* floats */
    float *buf = aligned_alloc(64, n * sizeof(float));
    if (!buf) return 0;
    for (size_t i = 0; i < n; i++) buf[i] = (float)(i & 7);
    double best = 0;
    for (int r = 0; r < REPEATS; r++) {
        __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
        double t0 = seconds_now();
        for (size_t i = 0; i < n; i += 32) {
            s0 = _mm256_add_ps(s0, _mm256_load_ps(buf + i));
            s1 = _mm256_add_ps(s1, _mm256_load_ps(buf + i + 8));
            s2 = _mm256_add_ps(s2, _mm256_load_ps(buf + i + 16));
            s3 = _mm256_add_ps(s3, _mm256_load_ps(buf + i + 24));
        }
        double dt = seconds_now() - t0;
        sink = _mm256_cvtss_f32(_mm256_add_ps(_mm256_add_ps(s0, s1), _mm256_add_ps(s2, s3)));
        double gbs = (double)n * sizeof(float) / dt / 1e9;
        if (gbs > best) best = gbs;
    }
    free(buf);
    return best;
}

int main(int argc, char **argv) {
    double secs = argc > 1 ? atof(argv[1]) : 0.1;
    if (!(secs > 0)) secs = 0.1;
    __builtin_cpu_init();
    int avx2 = __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    int avx512 = __builtin_cpu_supports("avx512f");
    int vnni512 = avx512 && __builtin_cpu_supports("avx512vnni");
    int vnni_vl = vnni512 && __builtin_cpu_supports("avx512vl");
    int avxvnni = 0;
#if defined(__GNUC__) && (__GNUC__ >= 11 || defined(__clang__))
    avxvnni = avx2 && __builtin_cpu_supports("avxvnni");
#endif
    if (avx2) {
        printf("fp32 ymm FMA: %.1f GFLOP/s\n", best_rate(fp32_ymm_fma, secs) / 1e9);
        printf("fp64 ymm FMA: %.1f GFLOP/s\n", best_rate(fp64_ymm_fma, secs) / 1e9);
        printf("int16 ymm VPMADDWD: %.1f GOP/s\n", best_rate(i16_ymm_maddwd, secs) / 1e9);
    }
    if (avxvnni) printf("u8s8 ymm VNNI: %.1f GOP/s\n", best_rate(u8s8_ymm_avxvnni, secs) / 1e9);
    if (vnni_vl) printf("u8s8 ymm VNNI(evex): %.1f GOP/s\n", best_rate(u8s8_ymm_evex, secs) / 1e9);
    if (avx512) printf("fp32 zmm FMA: %.1f GFLOP/s\n", best_rate(fp32_zmm_fma, secs) / 1e9);
    if (vnni512) printf("u8s8 zmm VNNI: %.1f GOP/s\n", best_rate(u8s8_zmm_vnni, secs) / 1e9);
#if PROBE_AMX
    if (vnni512 && amx_usable(AMX_INT8_BIT)) printf("u8s8 AMX tdpbusd: %.1f GOP/s\n", best_rate(u8s8_amx, secs) / 1e9);
#endif
    int bf16_units = 0;
#if PROBE_BF16
    if (avx512bf16_usable(avx512)) {
        printf("bf16 zmm VDPBF16PS: %.1f GFLOP/s\n", best_rate(bf16_zmm_dpbf16, secs) / 1e9);
        bf16_units++;
    }
#endif
#if PROBE_AMX
    if (avx512 && amx_usable(AMX_BF16_BIT)) {
        printf("bf16 AMX tdpbf16ps: %.1f GFLOP/s\n", best_rate(bf16_amx, secs) / 1e9);
        bf16_units++;
    }
#endif
    if (!bf16_units) printf("bf16 unit: none\n");
    if (avx2) printf("stream read: %.1f GB/s\n", stream_read_gbs());
    return 0;
}
