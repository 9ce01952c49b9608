/* This CPU's data cache hierarchy (size, ways, line, cores sharing each level), read once at run time:
 * CPUID leaf 4 (Intel) or 0x8000001D (AMD) on x86-64, sysfs on other Linux CPUs, sysctl on macOS. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "atomics.h"
#include "tuning.h"

#if GEMMKIT_X86
#if defined(_MSC_VER)
#include <intrin.h>
static void cpuid_(uint32_t leaf, uint32_t sub, uint32_t r[4]) {
    int v[4];
    __cpuidex(v, (int)leaf, (int)sub);
    r[0] = (uint32_t)v[0]; r[1] = (uint32_t)v[1]; r[2] = (uint32_t)v[2]; r[3] = (uint32_t)v[3];
}
#else
#include <cpuid.h>
static void cpuid_(uint32_t leaf, uint32_t sub, uint32_t r[4]) { __cpuid_count(leaf, sub, r[0], r[1], r[2], r[3]); }
#endif

/* The deterministic cache parameters leaf (4 or 0x8000001D, same layout): EAX type [4:0] (1 data,
 * 3 unified), level [7:5], fully associative [9], logical CPUs sharing - 1 [25:14]; EBX line - 1 [11:0],
 * partitions - 1 [21:12], ways - 1 [31:22]; ECX sets - 1. */
static int read_cpuid_caches(uint32_t leaf, gk_cache_info_t *ci) {
    int64_t l1_logical = 0, logical[4] = {0};
    int found = 0;
    for (uint32_t sub = 0; sub < 16; sub++) {
        uint32_t r[4];
        cpuid_(leaf, sub, r);
        const uint32_t type = r[0] & 0x1f, level = (r[0] >> 5) & 7;
        if (type == 0) break;
        if ((type != 1 && type != 3) || level < 1 || level > 3) continue;
        gk_cache_level_t c;
        c.line = (int64_t)(r[1] & 0xfff) + 1;
        const int64_t parts = (int64_t)((r[1] >> 12) & 0x3ff) + 1, sets = (int64_t)r[2] + 1;
        c.ways = (int64_t)((r[1] >> 22) & 0x3ff) + 1;
        c.size = c.ways * parts * c.line * sets;
        if ((r[0] >> 9) & 1) c.ways = c.size / c.line; /* fully associative */
        c.sharing = 1;
        logical[level] = (int64_t)((r[0] >> 14) & 0xfff) + 1;
        if (level == 1) { ci->l1 = c; l1_logical = logical[1]; }
        else if (level == 2) ci->l2 = c;
        else ci->l3 = c;
        found = 1;
    }
    /* cores sharing a level: its logical CPUs over those of one core (L1's: the SMT threads) */
    if (l1_logical > 0) {
        ci->l2.sharing = GK_MAX((int64_t)1, logical[2] / l1_logical);
        ci->l3.sharing = GK_MAX((int64_t)1, logical[3] / l1_logical);
    }
    return found && ci->l1.size > 0;
}

static int detect_x86(gk_cache_info_t *ci) {
    uint32_t r[4];
    cpuid_(0, 0, r);
    const uint32_t max_leaf = r[0];
    const int amd = r[1] == 0x68747541u && r[3] == 0x69746e65u && r[2] == 0x444d4163u;
    if (amd) {
        cpuid_(0x80000000u, 0, r);
        if (r[0] >= 0x8000001du) {
            cpuid_(0x80000001u, 0, r);
            if (((r[2] >> 22) & 1) && read_cpuid_caches(0x8000001du, ci)) return 1; /* TopologyExtensions */
        }
        return 0;
    }
    return max_leaf >= 4 && read_cpuid_caches(4, ci);
}
#endif

#if defined(__linux__)
/* The start of a small text file into buf (size bytes, NUL-terminated); 0 when it cannot be opened. */
static int read_text(const char *path, char *buf, size_t size) {
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    const size_t n = fread(buf, 1, size - 1, f);
    fclose(f);
    buf[n] = '\0';
    return 1;
}

static int64_t read_sysfs_value(const char *path, int bytes) {
    char buf[64];
    if (!read_text(path, buf, sizeof buf)) return 0;
    char *end = NULL;
    long long v = strtoll(buf, &end, 10);
    if (v <= 0) return 0;
    if (bytes && end && (*end == 'K' || *end == 'k')) v <<= 10;
    else if (bytes && end && *end == 'M') v <<= 20;
    return (int64_t)v;
}

/* CPUs in a list like "0-3,8-11": the count; 1 when it cannot be read. */
static int64_t read_cpu_count(const char *path) {
    char buf[512];
    if (!read_text(path, buf, sizeof buf)) return 1;
    int64_t count = 0;
    char *p = buf;
    while (*p && *p != '\n') {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p) break;
        p = end;
        if (*p == '-') { b = strtol(p + 1, &end, 10); p = end; }
        if (b >= a) count += b - a + 1;
        if (*p == ',') p++;
    }
    return count > 0 ? count : 1;
}

static int detect_sysfs(gk_cache_info_t *ci) {
    int64_t l1_cpus = 0, cpus[4] = {0};
    for (int i = 0; i < 8; i++) {
        char path[128], type[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/type", i);
        if (!read_text(path, type, sizeof type)) break;
        if (strncmp(type, "Data", 4) != 0 && strncmp(type, "Unified", 7) != 0) continue;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        const int64_t level = read_sysfs_value(path, 0);
        if (level < 1 || level > 3) continue;
        gk_cache_level_t c;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        c.size = read_sysfs_value(path, 1);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/ways_of_associativity", i);
        c.ways = read_sysfs_value(path, 0);
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/coherency_line_size", i);
        c.line = read_sysfs_value(path, 0);
        if (c.line <= 0) c.line = 64;
        if (c.ways <= 0) c.ways = level == 1 ? 8 : level == 2 ? 8 : 16; /* not given: typical ways */
        c.sharing = 1;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/shared_cpu_list", i);
        cpus[level] = read_cpu_count(path);
        if (level == 1) { ci->l1 = c; l1_cpus = cpus[1]; }
        else if (level == 2) ci->l2 = c;
        else ci->l3 = c;
    }
    if (l1_cpus > 0) {
        ci->l2.sharing = GK_MAX((int64_t)1, cpus[2] / l1_cpus);
        ci->l3.sharing = GK_MAX((int64_t)1, cpus[3] / l1_cpus);
    }
    return ci->l1.size > 0;
}
#endif

#if defined(__APPLE__)
#include <sys/sysctl.h>
static int64_t sysctl_i64(const char *name) {
    int64_t v = 0;
    size_t len = sizeof v;
    if (sysctlbyname(name, &v, &len, NULL, 0) != 0) return 0;
    if (len == sizeof(int32_t)) { int32_t w; memcpy(&w, &v, sizeof w); v = w; }
    return v > 0 ? v : 0;
}
/* sysctl gives sizes and the line, not the ways: the performance cores' caches (hw.perflevel0.*,
 * else hw.*), ways assumed 8 (L1), 12 (L2), 16 (L3). */
static int detect_sysctl(gk_cache_info_t *ci) {
    int64_t line = sysctl_i64("hw.cachelinesize");
    if (line <= 0) line = 64;
    int64_t l1 = sysctl_i64("hw.perflevel0.l1dcachesize"), l2 = sysctl_i64("hw.perflevel0.l2cachesize");
    if (l1 <= 0) l1 = sysctl_i64("hw.l1dcachesize");
    if (l2 <= 0) l2 = sysctl_i64("hw.l2cachesize");
    const int64_t l3 = sysctl_i64("hw.l3cachesize"), per_l2 = sysctl_i64("hw.perflevel0.cpusperl2");
    ci->l1 = (gk_cache_level_t){l1, 8, line, 1};
    ci->l2 = (gk_cache_level_t){l2, 12, line, per_l2 > 0 ? per_l2 : 1};
    ci->l3 = (gk_cache_level_t){l3, 16, line, 1};
    return l1 > 0;
}
#endif

static gk_cache_info_t detected;
static GK_SHARED int detected_done = 0;

static void detect(gk_cache_info_t *ci) {
    memset(ci, 0, sizeof(*ci));
    ci->source = "none";
#if GEMMKIT_X86
    if (detect_x86(ci)) { ci->source = "cpuid"; return; }
    memset(ci, 0, sizeof(*ci));
    ci->source = "none";
#endif
#if defined(__linux__)
    if (detect_sysfs(ci)) { ci->source = "sysfs"; return; }
    memset(ci, 0, sizeof(*ci));
    ci->source = "none";
#endif
#if defined(__APPLE__)
    if (detect_sysctl(ci)) { ci->source = "sysctl"; return; }
    memset(ci, 0, sizeof(*ci));
    ci->source = "none";
#endif
}

/* Racing first calls compute the same values; GEMMKIT_CACHES=none (for tests) reports no hierarchy,
 * so the configurations keep their tables. */
const gk_cache_info_t *gk_cache_info(void) {
    if (!GK_LOAD_ACQUIRE(&detected_done)) {
        gk_cache_info_t ci;
        const char *env = getenv("GEMMKIT_CACHES");
        if (env && strcmp(env, "none") == 0) {
            memset(&ci, 0, sizeof ci);
            ci.source = "none";
        } else {
            detect(&ci);
        }
        detected = ci;
        GK_STORE_RELEASE(&detected_done, 1);
    }
    return &detected;
}
