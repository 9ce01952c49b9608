/* Runtime CPU dispatch: CPUID + XGETBV decide which kernels this CPU (and its OS) can run, once;
 * GEMMKIT_ARCH or gemmkit_set_arch() force a path, refusing one the CPU or the build cannot run. */
#include <stdlib.h>
#include <string.h>
#include "gemmkit_internal.h"

#if GEMMKIT_X86
#if defined(_MSC_VER)
#include <intrin.h>
static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
    int v[4];
    __cpuidex(v, (int)leaf, (int)sub);
    r[0] = (uint32_t)v[0]; r[1] = (uint32_t)v[1]; r[2] = (uint32_t)v[2]; r[3] = (uint32_t)v[3];
}
static uint64_t xgetbv0(void) { return _xgetbv(0); }
#else
#include <cpuid.h>
static void cpuid(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
    __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]);
}
static uint64_t xgetbv0(void) {
    uint32_t lo, hi;
    __asm__ volatile(".byte 0x0f, 0x01, 0xd0" : "=a"(lo), "=d"(hi) : "c"(0)); /* xgetbv */
    return ((uint64_t)hi << 32) | lo;
}
#endif

static uint32_t detect_features(void) {
    uint32_t r[4], f = 0;
    cpuid(0, 0, r);
    uint32_t max_leaf = r[0];
    if (max_leaf < 7) return 0;
    cpuid(1, 0, r);
    int osxsave = (r[2] >> 27) & 1, avx = (r[2] >> 28) & 1, fma = (r[2] >> 12) & 1;
    if (!osxsave || !avx) return 0;
    uint64_t xcr0 = xgetbv0();
    int ymm_os = (xcr0 & 0x6) == 0x6;             /* SSE + AVX state */
    int zmm_os = ymm_os && (xcr0 & 0xe0) == 0xe0; /* opmask + ZMM_Hi256 + Hi16_ZMM */
    cpuid(7, 0, r);
    uint32_t ebx = r[1], ecx = r[2];
    int avx2 = (ebx >> 5) & 1;
    int a512f = (ebx >> 16) & 1, a512dq = (ebx >> 17) & 1, a512bw = (ebx >> 30) & 1,
        a512vl = (ebx >> 31) & 1, a512vnni = (ecx >> 11) & 1;
    cpuid(7, 1, r);
    int avxvnni = (r[0] >> 4) & 1;
    if (ymm_os && avx2 && fma) {
        f |= GEMMKIT_CPU_AVX2;
        if (avxvnni) f |= GEMMKIT_CPU_AVX_VNNI;
        if (zmm_os && a512f && a512dq && a512bw && a512vl) {
            f |= GEMMKIT_CPU_AVX512;
            if (a512vnni) f |= GEMMKIT_CPU_AVX512_VNNI;
        }
    }
    return f;
}
#else
static uint32_t detect_features(void) { return 0; }
#endif

typedef struct {
    const char *name;
    uint32_t needs;
    gk_dispatch_t table;
} arch_entry_t;

static const arch_entry_t arch_entries[] = {
#if GEMMKIT_X86
    {"avx512_vnni", GEMMKIT_CPU_AVX512 | GEMMKIT_CPU_AVX512_VNNI,
     {"avx512_vnni", &gk_sgemm_kernel_avx512, &gk_i8_kernel_avx512_vnni}},
    {"avx512", GEMMKIT_CPU_AVX512, {"avx512", &gk_sgemm_kernel_avx512, &gk_i8_kernel_avx512}},
#if defined(GEMMKIT_HAVE_AVX_VNNI)
    {"avx_vnni", GEMMKIT_CPU_AVX2 | GEMMKIT_CPU_AVX_VNNI,
     {"avx_vnni", &gk_sgemm_kernel_avx2, &gk_i8_kernel_avx_vnni}},
#endif
    {"avx2", GEMMKIT_CPU_AVX2, {"avx2", &gk_sgemm_kernel_avx2, &gk_i8_kernel_avx2}},
#endif
    {"generic", 0, {"generic", &gk_sgemm_kernel_generic, &gk_i8_kernel_generic}},
};
#define N_ARCH (sizeof(arch_entries) / sizeof(arch_entries[0]))

static int features_known = 0;
static uint32_t features = 0;
static const gk_dispatch_t *current = NULL;

uint32_t gemmkit_cpu_features(void) {
    if (!features_known) { features = detect_features(); features_known = 1; }
    return features;
}

static const gk_dispatch_t *best_supported(void) {
    uint32_t f = gemmkit_cpu_features();
    for (size_t i = 0; i < N_ARCH; i++)
        if ((arch_entries[i].needs & f) == arch_entries[i].needs) return &arch_entries[i].table;
    return &arch_entries[N_ARCH - 1].table;
}

gemmkit_status_t gemmkit_set_arch(const char *name) {
    if (name == NULL || name[0] == '\0' || strcmp(name, "auto") == 0) {
        current = best_supported();
        return gemmkit_success;
    }
    uint32_t f = gemmkit_cpu_features();
    for (size_t i = 0; i < N_ARCH; i++) {
        if (strcmp(arch_entries[i].name, name) == 0) {
            if ((arch_entries[i].needs & f) != arch_entries[i].needs) return gemmkit_unimplemented;
            current = &arch_entries[i].table;
            return gemmkit_success;
        }
    }
    return gemmkit_invalid_arguments;
}

const gk_dispatch_t *gk_dispatch(void) {
    if (current == NULL) {
        /* First use: honour GEMMKIT_ARCH when it names a runnable path, else the best one. The
         * Python layer validates GEMMKIT_ARCH at import and raises on a bad value. */
        const char *env = getenv("GEMMKIT_ARCH");
        if (gemmkit_set_arch(env) != gemmkit_success) current = best_supported();
    }
    return current;
}

const char *gemmkit_get_arch(void) { return gk_dispatch()->arch; }
