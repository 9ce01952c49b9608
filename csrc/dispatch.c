/* Runtime CPU dispatch: CPUID + XGETBV (x86-64) or the OS's feature bits (aarch64: getauxval on Linux,
 * sysctlbyname on macOS) decide which kernels this CPU (and its OS) can run, once;
 * GEMMKIT_ARCH or gemmkit_set_arch() force a path, refusing one the CPU or the build cannot run. */
#if defined(__linux__) && !defined(_GNU_SOURCE)
#define _GNU_SOURCE /* syscall (arch_prctl) */
#endif
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "atomics.h"
#include "driver.h" /* the kernel families the configurations name (described by name) */
#include "qadd.h"
#include "tuning.h"
#include "include/gemmkit_introspect.h"

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

#if defined(__linux__)
#include <sys/syscall.h>
#include <unistd.h>
/* Linux gives a process the AMX tile state (8 KiB of XSAVE area per thread) only on request (arch_prctl
 * ARCH_REQ_XCOMP_PERM for XFEATURE_XTILEDATA, kernel 5.16+); without it the first tile instruction faults. */
static int amx_permitted(void) {
    return syscall(SYS_arch_prctl, 0x1023 /* ARCH_REQ_XCOMP_PERM */, 18 /* XFEATURE_XTILEDATA */) == 0;
}
#else
static int amx_permitted(void) { return 0; } /* not enabled where untested (Windows saves the state itself) */
#endif

static uint32_t detect_features(void) {
    uint32_t r[4], f = 0;
    cpuid(0, 0, r);
    uint32_t max_leaf = r[0];
    if (max_leaf < 7) return 0;
    cpuid(1, 0, r);
    int osxsave = (r[2] >> 27) & 1, avx = (r[2] >> 28) & 1, fma = (r[2] >> 12) & 1;
    int f16c = (r[2] >> 29) & 1; /* every AVX2 CPU has it; the int8 float16 epilogue uses it */
    if (!osxsave || !avx) return 0;
    uint64_t xcr0 = xgetbv0();
    int ymm_os = (xcr0 & 0x6) == 0x6;             /* SSE + AVX state */
    int zmm_os = ymm_os && (xcr0 & 0xe0) == 0xe0; /* opmask + ZMM_Hi256 + Hi16_ZMM */
    cpuid(7, 0, r);
    uint32_t ebx = r[1], ecx = r[2], edx = r[3];
    int avx2 = (ebx >> 5) & 1;
    int amx_int8 = ((edx >> 24) & 1) && ((edx >> 25) & 1); /* AMX-TILE, AMX-INT8 */
    int tiles_os = (xcr0 & 0x60000) == 0x60000;             /* XTILECFG + XTILEDATA */
    int a512f = (ebx >> 16) & 1, a512dq = (ebx >> 17) & 1, a512bw = (ebx >> 30) & 1,
        a512vl = (ebx >> 31) & 1, a512vnni = (ecx >> 11) & 1;
    int amx_bf16 = (edx >> 22) & 1;
    cpuid(7, 1, r);
    int avxvnni = (r[0] >> 4) & 1, a512bf16 = (r[0] >> 5) & 1;
    if (ymm_os && avx2 && fma && f16c) {
        f |= GEMMKIT_CPU_AVX2;
        if (avxvnni) f |= GEMMKIT_CPU_AVX_VNNI;
        if (zmm_os && a512f && a512dq && a512bw && a512vl) {
            f |= GEMMKIT_CPU_AVX512;
            if (a512vnni) f |= GEMMKIT_CPU_AVX512_VNNI;
            if (a512bf16) f |= GEMMKIT_CPU_AVX512_BF16;
            if (a512vnni && amx_int8 && tiles_os && amx_permitted()) {
                f |= GEMMKIT_CPU_AMX_INT8;
                if (amx_bf16) f |= GEMMKIT_CPU_AMX_BF16;
            }
        }
    }
    return f;
}
/* (vendor << 24) | (display family << 12) | display model, vendor 1 = AMD, 2 = Intel, 0 = other. */
static uint32_t detect_cpu_id(void) {
    uint32_t r[4];
    cpuid(0, 0, r);
    uint32_t vendor = 0;
    if (r[1] == 0x68747541u && r[3] == 0x69746e65u && r[2] == 0x444d4163u) vendor = GK_CPU_AMD; /* AuthenticAMD */
    if (r[1] == 0x756e6547u && r[3] == 0x49656e69u && r[2] == 0x6c65746eu) vendor = GK_CPU_INTEL; /* GenuineIntel */
    if (r[0] < 1) return vendor << 24;
    cpuid(1, 0, r);
    uint32_t family = (r[0] >> 8) & 0xf, model = (r[0] >> 4) & 0xf;
    if (family == 0xf) family += (r[0] >> 20) & 0xff;
    if (family == 0xf || family == 0x6 || family >= 0x10) model |= ((r[0] >> 16) & 0xf) << 4;
    return (vendor << 24) | (family << 12) | model;
}
#elif GEMMKIT_ARM
/* AArch64: the features the OS reports for this CPU at run time, never the build host's. */
#if defined(__linux__)
#include <sys/auxv.h>
#ifndef AT_HWCAP2
#define AT_HWCAP2 26
#endif
#define GK_HWCAP_ASIMD (1ul << 1)
#define GK_HWCAP_ASIMDDP (1ul << 20)
#define GK_HWCAP2_I8MM (1ul << 13)
#define GK_HWCAP2_BF16 (1ul << 14)
static uint32_t detect_features(void) {
    const unsigned long hw = getauxval(AT_HWCAP), hw2 = getauxval(AT_HWCAP2);
    uint32_t f = 0;
    if (hw & GK_HWCAP_ASIMD) {
        f |= GEMMKIT_CPU_NEON;
        if (hw & GK_HWCAP_ASIMDDP) f |= GEMMKIT_CPU_DOTPROD;
        if (hw2 & GK_HWCAP2_I8MM) f |= GEMMKIT_CPU_I8MM;
        if (hw2 & GK_HWCAP2_BF16) f |= GEMMKIT_CPU_BF16;
    }
    return f;
}
#elif defined(__APPLE__)
#include <sys/sysctl.h>
static int sysctl_flag(const char *name) {
    int v = 0;
    size_t len = sizeof v;
    return sysctlbyname(name, &v, &len, NULL, 0) == 0 && v != 0;
}
static uint32_t detect_features(void) {
    uint32_t f = GEMMKIT_CPU_NEON; /* every Apple arm64 core */
    if (sysctl_flag("hw.optional.arm.FEAT_DotProd")) f |= GEMMKIT_CPU_DOTPROD;
    if (sysctl_flag("hw.optional.arm.FEAT_I8MM")) f |= GEMMKIT_CPU_I8MM;
    if (sysctl_flag("hw.optional.arm.FEAT_BF16")) f |= GEMMKIT_CPU_BF16;
    return f;
}
#else
static uint32_t detect_features(void) { return GEMMKIT_CPU_NEON; } /* AArch64 has Advanced SIMD */
#endif
/* (implementer << 12) | part number from MIDR_EL1 (Linux: sysfs; macOS: Apple); 0 when unknown. */
#if defined(__APPLE__)
static uint32_t detect_cpu_id(void) { return GK_CPU_ARM_APPLE << 12; }
#elif defined(__linux__)
#include <stdio.h>
static uint32_t detect_cpu_id(void) {
    FILE *f = fopen("/sys/devices/system/cpu/cpu0/regs/identification/midr_el1", "r");
    unsigned long long midr = 0;
    if (f == NULL) return 0;
    if (fscanf(f, "%llx", &midr) != 1) midr = 0;
    fclose(f);
    return (uint32_t)(((midr >> 24) & 0xff) << 12 | ((midr >> 4) & 0xfff));
}
#else
static uint32_t detect_cpu_id(void) { return 0; }
#endif
#else
static uint32_t detect_features(void) { return 0; }
static uint32_t detect_cpu_id(void) { return 0; }
#endif

/* The registry, best first: a tuned configuration comes before the generic one of its path. */
static const gk_config_t *const registry[] = {
#if GEMMKIT_X86
    &gk_config_zen4,
#if defined(GEMMKIT_HAVE_AMX)
    &gk_config_avx512_amx,
#endif
    &gk_config_xeon_amx,
    &gk_config_avx512_vnni,
    &gk_config_avx512,
#if defined(GEMMKIT_HAVE_AVX_VNNI)
    &gk_config_avx_vnni,
#endif
    &gk_config_zen2,
    &gk_config_avx2,
#endif
#if GEMMKIT_ARM
    &gk_config_dotprod_apple,
    &gk_config_i8mm,
    &gk_config_dotprod,
    &gk_config_neon,
#endif
    &gk_config_generic,
};
#define N_CONFIGS (sizeof(registry) / sizeof(registry[0]))

/* The kernel paths this build knows (csrc/paths.h's, best first): every build knows the x86-64 and the aarch64 ones
 * (a path of the other ISA is known but not supported: RuntimeError, not an unknown name), an x86-64 build the
 * compiler-probed ones (AMX, AVX-VNNI) only where it built them. */
static const gk_path_t known_paths[] = {
#if !GEMMKIT_X86 || defined(GEMMKIT_HAVE_AMX)
    GK_PATH_avx512_amx,
#endif
    GK_PATH_avx512_vnni, GK_PATH_avx512,
#if !GEMMKIT_X86 || defined(GEMMKIT_HAVE_AVX_VNNI)
    GK_PATH_avx_vnni,
#endif
    GK_PATH_avx2, GK_PATH_i8mm, GK_PATH_dotprod, GK_PATH_neon, GK_PATH_generic,
};
#define N_ARCHS (sizeof(known_paths) / sizeof(known_paths[0]))

/* The known path of that name, or -1. */
static int path_of_name(const char *name) {
    if (name == NULL) return -1;
    for (size_t i = 0; i < N_ARCHS; i++)
        if (strcmp(gk_path_name(known_paths[i]), name) == 0) return (int)known_paths[i];
    return -1;
}

/* Lazily computed, shared by all threads: racing first calls compute the same values; the loads and
 * stores are atomic so that a reader sees either nothing or a whole value. */

static GK_SHARED uint32_t features_cache = 0, cpu_id_cache = 0; /* bit 31 of features_cache: computed */
static const gk_config_t *GK_SHARED current = NULL;
static const gk_config_t *GK_SHARED current_base = NULL; /* the registry entry `current` is built from */

uint32_t gemmkit_cpu_features(void) {
    uint32_t f = GK_LOAD_ACQUIRE(&features_cache);
    if (!(f & 0x80000000u)) {
        GK_STORE_RELEASE(&cpu_id_cache, detect_cpu_id());
        f = detect_features() | 0x80000000u;
        GK_STORE_RELEASE(&features_cache, f);
    }
    return f & 0x7fffffffu;
}

uint32_t gk_cpu_id(void) {
    (void)gemmkit_cpu_features();
    return GK_LOAD_ACQUIRE(&cpu_id_cache);
}

/* The first configuration of the registry (best first) of path `arch` (NULL: any path) that a CPU with
 * these features and identity runs: a tuned config (one with cpu_match) applies on the CPUs it matches,
 * or, when `force` names a uarch (GEMMKIT_UARCH), only where it is that uarch, on any CPU with the
 * features (so its correctness can be tested anywhere); NULL when none. Pure: no CPUID, no environment. */
static const gk_config_t *select_config(int path, const char *force, uint32_t features, uint32_t cpu_id) {
    const int forcing = force && force[0];
    for (size_t i = 0; i < N_CONFIGS; i++) {
        const gk_config_t *c = registry[i];
        if (path >= 0 && (int)c->path != path) continue;
        if ((c->needs & features) != c->needs) continue;
        if (c->cpu_match && (forcing ? strcmp(force, c->uarch) != 0 : !c->cpu_match(cpu_id))) continue;
        return c;
    }
    return NULL;
}

/* The best configuration of path `arch` (NULL: of any path) for this CPU, or NULL (an unknown name too). */
static const gk_config_t *find_config(const char *arch) {
    const int path = arch ? path_of_name(arch) : -1;
    if (arch && path < 0) return NULL;
    return select_config(path, getenv("GEMMKIT_UARCH"), gemmkit_cpu_features(), gk_cpu_id());
}

gemmkit_status_t gemmkit_config_for_cpu(uint32_t vendor, uint32_t family, uint32_t model, uint32_t features,
                                        const char *uarch, const char **arch_out, const char **uarch_out) {
    if (vendor > 0xff || family > 0xfff || model > 0xfff || !arch_out || !uarch_out)
        return gemmkit_invalid_arguments;
    const gk_config_t *c = select_config(-1, uarch, features, (vendor << 24) | (family << 12) | model);
    if (c == NULL) c = &gk_config_generic;
    *arch_out = gk_path_name(c->path);
    *uarch_out = c->uarch;
    return gemmkit_success;
}

int gemmkit_config_count(void) { return (int)N_CONFIGS; }

gemmkit_status_t gemmkit_config_at(int i, const char **arch, const char **uarch, uint32_t *needs) {
    if (i < 0 || i >= (int)N_CONFIGS || !arch || !uarch || !needs) return gemmkit_invalid_arguments;
    *arch = gk_path_name(registry[i]->path);
    *uarch = registry[i]->uarch;
    *needs = registry[i]->needs;
    return gemmkit_success;
}

void gemmkit_gemv_info(int *max_m, int *max_n, int *prefetch_bytes) {
    const gk_small_t *sm = &gk_config()->small;
    if (max_m) *max_m = sm->gemv_max_m;
    if (max_n) *max_n = sm->gemv_max_n;
    if (prefetch_bytes) *prefetch_bytes = sm->gemv_pf_bytes;
}

void gemmkit_cpu_identity(uint32_t *vendor, uint32_t *family, uint32_t *model) {
    const uint32_t id = gk_cpu_id();
    if (vendor) *vendor = GK_CPU_VENDOR(id);
    if (family) *family = GK_CPU_FAMILY(id);
    if (model) *model = GK_CPU_MODEL(id);
}

int gemmkit_arch_count(void) { return (int)N_ARCHS; }
const char *gemmkit_arch_name(int i) { return i >= 0 && i < (int)N_ARCHS ? gk_path_name(known_paths[i]) : NULL; }

int gemmkit_arch_supported(const char *name) {
    return path_of_name(name) < 0 ? -1 : find_config(name) != NULL;
}

const char *gemmkit_cpu_feature_name(int i, uint32_t *bit) {
    static const char *const names[] = {"avx2", "avx512", "avx512_vnni", "avx_vnni", "amx_int8", "neon", "dotprod", "i8mm",
                                        "bf16", "avx512_bf16", "amx_bf16"};
    static const uint32_t bits[] = {GEMMKIT_CPU_AVX2, GEMMKIT_CPU_AVX512, GEMMKIT_CPU_AVX512_VNNI, GEMMKIT_CPU_AVX_VNNI,
                                    GEMMKIT_CPU_AMX_INT8, GEMMKIT_CPU_NEON, GEMMKIT_CPU_DOTPROD, GEMMKIT_CPU_I8MM,
                                    GEMMKIT_CPU_BF16, GEMMKIT_CPU_AVX512_BF16, GEMMKIT_CPU_AMX_BF16};
    if (i < 0 || i >= (int)(sizeof names / sizeof names[0])) return NULL;
    if (bit) *bit = bits[i];
    return names[i];
}

gemmkit_status_t gemmkit_set_arch(const char *name) {
    const gk_config_t *c;
    if (name == NULL || name[0] == '\0' || strcmp(name, "auto") == 0) {
        c = find_config(NULL);
    } else {
        int known = gemmkit_arch_supported(name);
        if (known < 0) return gemmkit_invalid_arguments;
        if (known == 0) return gemmkit_unimplemented;
        c = find_config(name);
    }
    if (c == NULL) c = &gk_config_generic;
    GK_STORE_RELEASE(&current_base, c);
    GK_STORE_RELEASE(&current, gk_effective_config(c)); /* model and tuning applied (tuning.c) */
    return gemmkit_success;
}

/* For tuning.c: the registry entry of path `arch`, and the configuration in use rebuilt from its entry. */
static void config_refresh(void) {
    const gk_config_t *b = GK_LOAD_ACQUIRE(&current_base);
    if (b != NULL) GK_STORE_RELEASE(&current, gk_effective_config(b));
}

/* The public tuning entry points (include/gemmkit_introspect.h): tuning.c changes the overrides, the configuration in
 * use is rebuilt here. */
gemmkit_status_t gemmkit_tuning_set(const char *arch, const char *name, double value) {
    const gemmkit_status_t st = gk_tuning_set(arch ? find_config(arch) : NULL, arch, name, value);
    if (st == gemmkit_success) config_refresh();
    return st;
}

void gemmkit_tuning_clear(void) {
    gk_tuning_clear();
    config_refresh();
}

int gemmkit_blocking_model(int mode) {
    const int old = gk_tuning_model_mode(mode);
    if (mode >= 0 && mode <= 2 && mode != old) config_refresh();
    return old;
}

gemmkit_status_t gemmkit_param_get(const char *name, double *value, int *source) {
    return gk_tuning_param_get(gk_config(), name, value, source);
}

double gk_thread_macs(void) { return gk_tuning_thread_macs(gk_config()); }

const gk_config_t *gk_config(void) {
    const gk_config_t *c = GK_LOAD_ACQUIRE(&current);
    if (c == NULL) {
        /* First use: honour GEMMKIT_ARCH when it names a runnable path, else the best one. The
         * Python layer validates GEMMKIT_ARCH at import and raises on a bad value. */
        const char *env = getenv("GEMMKIT_ARCH");
        if (gemmkit_set_arch(env) != gemmkit_success) gemmkit_set_arch(NULL);
        c = GK_LOAD_ACQUIRE(&current);
    }
    return c;
}

const char *gemmkit_get_arch(void) { return gk_path_name(gk_config()->path); }

const gk_real_kernel_t *gk_bf16_kernel(const gk_config_t *c) {
    return c->bf16 && (gemmkit_cpu_features() & c->bf16_needs) == c->bf16_needs ? c->bf16 : NULL;
}

gemmkit_status_t gemmkit_kernel_info(const char *op, gemmkit_kernel_info_t *info) {
    if (op == NULL || info == NULL) return gemmkit_invalid_arguments;
    const gk_config_t *c = gk_config();
    memset(info, 0, sizeof(*info));
    info->uarch = c->uarch;
    const gk_real_kernel_t *k = NULL;
    const gk_blocks_t *b = NULL;
    if (strcmp(op, "sgemm") == 0) { k = c->sgemm; b = &c->sgemm_blocks; }
    else if (strcmp(op, "dgemm") == 0) { k = c->dgemm; b = &c->dgemm_blocks; }
    else if (strcmp(op, "cgemm") == 0) { k = c->cgemm ? c->cgemm : c->sgemm; b = &c->cgemm_blocks; }
    else if (strcmp(op, "zgemm") == 0) { k = c->zgemm ? c->zgemm : c->dgemm; b = &c->zgemm_blocks; }
    else if (strcmp(op, "int8") == 0 || strcmp(op, "int8_short_k") == 0) {
        const gk_int8_kernel_t *q = op[4] ? c->int8_short_k : c->int8;
        if (q == NULL) return gemmkit_invalid_arguments; /* no short-K kernel on this path */
        info->kernel = q->name;
        info->mr = q->mr; info->nr = q->nr; info->k_group = q->kgroup; info->elem = q->elem_size;
        info->mc = c->int8_blocks.mc; info->kc = q->k_chunk; info->nc = c->int8_blocks.nc;
        info->kb = c->int8_blocks.kb;
        return gemmkit_success;
    } else if (strcmp(op, "bf16") == 0) { /* the pair kernel in use, else the sgemm kernel bfloat16 is widened for */
        k = gk_bf16_kernel(c);
        b = k ? &c->bf16_blocks : &c->sgemm_blocks;
        if (!k) k = c->sgemm;
    } else return gemmkit_invalid_arguments;
    info->kernel = k->name;
    info->mr = k->mr; info->nr = k->nr; info->k_group = k->k_pair_group ? 2 : 1; info->elem = k->elem;
    info->mc = b->mc; info->kc = b->kc; info->nc = b->nc;
    return gemmkit_success;
}

/* Every field of configuration i (registry order) as "name=value" lines into buf (size bytes): kernels by
 * name ("-": none; complex products then run by 1m), blocks as numbers, each small-problem threshold on its
 * own line. For the test that each config equals its path's base except in named fields
 * (tests/core/test_config_bases.py). */
#define GK_DESC(...) n += snprintf(buf + (n < size ? n : size - 1), n < size ? size - n : 1, __VA_ARGS__)
#define GK_DESC_KERNEL(NM, k) GK_DESC(NM "=%s\n", (k) ? (k)->name : "-")
#define GK_DESC_BLOCKS(NM, b) GK_DESC(NM "=%lld,%lld,%lld\n", (long long)(b).mc, (long long)(b).kc, (long long)(b).nc)
#define GK_DESC_SMALL(f) GK_DESC("small." #f "=%.17g\n", (double)c->small.f)
/* The last fields of the structs described: a field added after one of them must be described too. */
typedef char gk_describe_covers_config[
    offsetof(gk_config_t, bool_kernels) + sizeof(void *) == sizeof(gk_config_t) ? 1 : -1];
typedef char gk_describe_covers_int8_blocks[
    offsetof(gk_int8_blocks_t, kmajor_max_m) + sizeof(int64_t) == sizeof(gk_int8_blocks_t) ? 1 : -1];
gemmkit_status_t gemmkit_config_describe(int i, char *buf, size_t size) {
    if (i < 0 || i >= (int)N_CONFIGS || buf == NULL || size == 0) return gemmkit_invalid_arguments;
    const gk_config_t *c = registry[i];
    const gk_int8_blocks_t *q = &c->int8_blocks;
    size_t n = 0;
    GK_DESC("arch=%s\nuarch=%s\nneeds=%u\ncpu_match=%s\n", gk_path_name(c->path), c->uarch, (unsigned)c->needs,
            c->cpu_match ? "set" : "-");
    GK_DESC_KERNEL("sgemm", c->sgemm); GK_DESC_KERNEL("dgemm", c->dgemm);
    GK_DESC_KERNEL("cgemm", c->cgemm); GK_DESC_KERNEL("zgemm", c->zgemm);
    GK_DESC_KERNEL("int8", c->int8); GK_DESC_KERNEL("quant", c->quant); GK_DESC_KERNEL("bf16", c->bf16);
    GK_DESC("bf16_needs=%u\nhalf_gemv=%s\n", (unsigned)c->bf16_needs, c->half_gemv ? "set" : "-");
    GK_DESC_BLOCKS("bf16_blocks", c->bf16_blocks);
    GK_DESC_KERNEL("qadd", c->qadd); GK_DESC_KERNEL("hgemm", c->hgemm); GK_DESC_KERNEL("wrap", c->wrap);
    GK_DESC_KERNEL("bool", c->bool_kernels);
    GK_DESC_BLOCKS("sgemm_blocks", c->sgemm_blocks); GK_DESC_BLOCKS("dgemm_blocks", c->dgemm_blocks);
    GK_DESC_BLOCKS("cgemm_blocks", c->cgemm_blocks); GK_DESC_BLOCKS("zgemm_blocks", c->zgemm_blocks);
    GK_DESC("int8_blocks=%lld,%lld,%lld,%lld,%lld,%lld,%lld\n", (long long)q->mc, (long long)q->nc,
            (long long)q->kb, (long long)q->l2_bytes, (long long)q->l3_bytes, (long long)q->dot_max_m,
            (long long)q->kmajor_max_m);
#define GK_DESC_SMALL_FIELD(f, ...) GK_DESC_SMALL(f);
    GK_SMALL_TUNED_PARAMS(GK_DESC_SMALL_FIELD) GK_SMALL_FIXED_PARAMS(GK_DESC_SMALL_FIELD)
#undef GK_DESC_SMALL_FIELD
    return n < size ? gemmkit_success : gemmkit_invalid_arguments;
}
