/* The configuration in use, built from a registry entry: hand-written or table values, the analytical
 * model's blocking (blocking_model.c) where no hand config applies, then validated tuning overrides. */
#include <stdlib.h>
#include <string.h>
#include "atomics.h"
#include "threads.h"
#include "tuning.h"
#include "include/gemmkit_introspect.h"

/* ---- the parameters a tuning may set ------------------------------------------------------------ */

/* The parameters, one list each, from which the enum, the names, the ranges and get / set below all come:
 * the block types' MC, KC and NC (X(tag, name, blocks field); bf16's KC in k pairs), int8's blocks (X(tag, field,
 * least, most, multiple)), the small-problem thresholds (csrc/small_params.h: P_SMALL_<field>), the threading one. */
#define GK_BLOCK_TYPES(X) \
    X(S, sgemm, sgemm_blocks) X(D, dgemm, dgemm_blocks) X(C, cgemm, cgemm_blocks) X(Z, zgemm, zgemm_blocks) \
    X(BF16, bf16, bf16_blocks)
#define GK_INT8_TUNED_PARAMS(X)                                                                      \
    X(I8_KB, kb, 64, GK_TUNE_KB_MAX, 64)                                                             \
    X(I8_L2, l2_bytes, 16384, GK_TUNE_BLOCK_BYTES_MAX, 1)                                            \
    X(I8_L3, l3_bytes, 65536, GK_TUNE_BLOCK_BYTES_MAX, 1)

#define GK_BLOCK_ENUM(t, ...) P_##t##_MC, P_##t##_KC, P_##t##_NC,
#define GK_INT8_ENUM(t, ...) P_##t,
#define GK_SMALL_ENUM(f, ...) P_SMALL_##f,
#define GK_COUNT(...) +1
enum { N_BLOCK_TYPES = 0 GK_BLOCK_TYPES(GK_COUNT), P_BLOCKS_END = 3 * N_BLOCK_TYPES };
enum { GK_BLOCK_TYPES(GK_BLOCK_ENUM) GK_INT8_TUNED_PARAMS(GK_INT8_ENUM) GK_SMALL_TUNED_PARAMS(GK_SMALL_ENUM)
       P_THREAD_MACS, N_PARAMS };
#undef GK_COUNT
#undef GK_BLOCK_ENUM
#undef GK_INT8_ENUM
#undef GK_SMALL_ENUM

#define GK_BLOCK_NAME(t, name, ...) #name ".mc", #name ".kc", #name ".nc",
#define GK_INT8_NAME(t, field, ...) "int8." #field,
#define GK_SMALL_NAME(f, ...) "small." #f,
static const char *const param_names[N_PARAMS] = {
    GK_BLOCK_TYPES(GK_BLOCK_NAME) GK_INT8_TUNED_PARAMS(GK_INT8_NAME) GK_SMALL_TUNED_PARAMS(GK_SMALL_NAME)
    "threads.min_macs",
};
#undef GK_BLOCK_NAME
#undef GK_INT8_NAME
#undef GK_SMALL_NAME

/* where a value of the configuration in use comes from */
enum { SRC_TABLE = 0, SRC_HAND = 1, SRC_MODEL = 2, SRC_TUNED = 3 };


/* Accepted overrides per kernel path (csrc/paths.h); `generation` counts changes (configurations built before are
 * stale). */
static double ov_value[GK_N_PATHS][N_PARAMS];
static unsigned char ov_set[GK_N_PATHS][N_PARAMS];
static unsigned generation = 1;
static int model_mode = 1; /* 0: tables and hand configs only; 1: the model where no hand config; 2: everywhere */

static int slot_of(const char *arch) {
    if (!arch) return -1;
    for (int i = 0; i < GK_N_PATHS; i++)
        if (strcmp(gk_path_name(i), arch) == 0) return i;
    return -1;
}
static int param_of(const char *name) {
    if (!name) return -1;
    for (int i = 0; i < N_PARAMS; i++)
        if (strcmp(param_names[i], name) == 0) return i;
    return -1;
}

typedef struct {
    gk_config_t cfg;           /* first: gk_config() returns &cfg */
    const gk_config_t *base;
    unsigned generation;
    int model_mode;
    double thread_macs;
    unsigned char source[N_PARAMS];
} effective_t;

/* The kernel and blocks of block type t (GK_BLOCK_TYPES' order: s, d, c, z, bf16) of a configuration; complex runs
 * on the real kernel by 1m (with its blocking) where there is no native complex one; bfloat16's blocks are the path's
 * pair kernel's (NULL where it has none), which runs where the CPU has its feature (gk_bf16_kernel, dispatch.c, above
 * this file: not called from here). */
static const gk_real_kernel_t *type_kernel(const gk_config_t *c, int t) {
    switch (t) {
    case 0: return c->sgemm;
    case 1: return c->dgemm;
    case 2: return c->cgemm ? c->cgemm : c->sgemm;
    case 3: return c->zgemm ? c->zgemm : c->dgemm;
    default: return c->bf16;
    }
}
static gk_blocks_t *type_blocks(gk_config_t *c, int t) {
#define GK_BLOCK_FIELD(tag, name, field) &c->field,
    gk_blocks_t *const b[N_BLOCK_TYPES] = {GK_BLOCK_TYPES(GK_BLOCK_FIELD)};
#undef GK_BLOCK_FIELD
    return b[t];
}

/* Whether the packed blocks of mc x kc (A) and kc x nc (B), each last block up to a quarter longer
 * (gk_loops_block_max), stay in the workspace limits: GK_TUNE_BLOCK_BYTES_MAX each, or the path table's own blocks
 * where those are larger (bfloat16's wide B blocks on AMX). */
static int blocks_fit(const gk_real_kernel_t *k, const gk_blocks_t *b, const gk_blocks_t *table) {
    const double es = k->elem, kdiv = k->complex_native ? 2.0 : 1.0, most = (double)GK_TUNE_BLOCK_BYTES_MAX;
    const double a_most = GK_MAX(most, (double)table->mc * 1.25 * (double)table->kc * es);
    const double b_most = GK_MAX(most, (double)table->nc * 1.25 * (double)table->kc * es / kdiv);
    return (double)b->mc * 1.25 * (double)b->kc * es <= a_most &&
           (double)b->nc * 1.25 * (double)b->kc * es / kdiv <= b_most;
}

static int is_integer(double v) { return v == v && v >= -9.0e15 && v <= 9.0e15 && v == (double)(int64_t)v; }

/* Whether `value` is acceptable for parameter p of configuration c (its kernels' MR / NR). */
static int valid_value(const gk_config_t *c, int p, double v) {
    if (!(v == v) || v < 0 || v > 1.0e15) return 0; /* NaN, negative, absurd */
    if (p < P_BLOCKS_END) {
        const gk_real_kernel_t *k = type_kernel(c, p / 3);
        if (!k || !is_integer(v)) return 0;
        const int64_t x = (int64_t)v;
        switch (p % 3) {
        case 0: return x >= k->mr && x <= GK_TUNE_MC_MAX && x % k->mr == 0;
        case 1: return x >= 8 && x <= GK_TUNE_KC_MAX && x % 8 == 0;
        default: return x >= k->nr && x <= GK_TUNE_NC_MAX && x % k->nr == 0;
        }
    }
    switch (p) {
#define GK_INT8_VALID(t, field, least, most, multiple)                                               \
    case P_##t: return is_integer(v) && v >= (least) && v <= (double)(most) && (int64_t)v % (multiple) == 0;
    GK_INT8_TUNED_PARAMS(GK_INT8_VALID)
#undef GK_INT8_VALID
#define GK_SMALL_VALID(f, T, most, integer, multiple)                                                 \
    case P_SMALL_##f:                                                                                  \
        return (!(integer) || is_integer(v)) && v <= (double)(most) && ((multiple) <= 1 || (int64_t)v % (multiple) == 0);
    GK_SMALL_TUNED_PARAMS(GK_SMALL_VALID)
#undef GK_SMALL_VALID
    case P_THREAD_MACS: return v >= 4096.0 && v <= 1073741824.0;
    default: return 0;
    }
}

/* Reads / writes parameter p of a configuration being built. */
static double get_param(const effective_t *e, int p) {
    const gk_config_t *c = &e->cfg;
    if (p < P_BLOCKS_END) {
        const gk_blocks_t *b = type_blocks((gk_config_t *)c, p / 3);
        return (double)(p % 3 == 0 ? b->mc : p % 3 == 1 ? b->kc : b->nc);
    }
    switch (p) {
#define GK_INT8_GET(t, field, ...) case P_##t: return (double)c->int8_blocks.field;
    GK_INT8_TUNED_PARAMS(GK_INT8_GET)
#undef GK_INT8_GET
#define GK_SMALL_GET(f, ...) case P_SMALL_##f: return (double)c->small.f;
    GK_SMALL_TUNED_PARAMS(GK_SMALL_GET)
#undef GK_SMALL_GET
    default: return e->thread_macs;
    }
}
static void set_param(effective_t *e, int p, double v) {
    gk_config_t *c = &e->cfg;
    if (p < P_BLOCKS_END) {
        gk_blocks_t *b = type_blocks(c, p / 3);
        if (p % 3 == 0) b->mc = (int64_t)v;
        else if (p % 3 == 1) b->kc = (int64_t)v;
        else b->nc = (int64_t)v;
        return;
    }
    switch (p) {
#define GK_INT8_SET(t, field, ...) case P_##t: c->int8_blocks.field = (int64_t)v; break;
    GK_INT8_TUNED_PARAMS(GK_INT8_SET)
#undef GK_INT8_SET
#define GK_SMALL_SET(f, T, ...) case P_SMALL_##f: c->small.f = (T)v; break;
    GK_SMALL_TUNED_PARAMS(GK_SMALL_SET)
#undef GK_SMALL_SET
    default: e->thread_macs = v; break;
    }
}

/* The model's values for configuration e (blocks of every type, int8's k block and budgets, the plain-B
 * limit); the sources of what it set. */
static void apply_model(effective_t *e, const gk_cache_info_t *ci) {
    gk_config_t *c = &e->cfg;
    for (int t = 0; t < 4; t++) { /* the real types (bfloat16's pair kernels keep their table's blocks) */
        const gk_real_kernel_t *k = type_kernel(c, t);
        gk_blocks_t b = *type_blocks(c, t);
        const gk_blocks_t none = {0, 0, 0}; /* the model's blocks within the tuning limits themselves */
        if (k && gk_model_blocks(ci, k->mr, k->nr, k->elem, k->complex_native, &b) && blocks_fit(k, &b, &none)) {
            *type_blocks(c, t) = b;
            e->source[3 * t] = e->source[3 * t + 1] = SRC_MODEL;
            if (ci->l3.size > 0) e->source[3 * t + 2] = SRC_MODEL;
        }
    }
    if (c->int8) {
        gk_int8_blocks_t q = c->int8_blocks;
        if (gk_model_int8_blocks(ci, c->int8->mr, c->int8->nr, c->int8->elem_size, &q)) {
            c->int8_blocks = q;
            e->source[P_I8_KB] = e->source[P_I8_L2] = SRC_MODEL;
            if (ci->l3.size > 0) e->source[P_I8_L3] = SRC_MODEL;
        }
    }
    const double db = gk_model_direct_b_macs(ci);
    if (db > 0) {
        c->small.direct_b_max_macs = db;
        e->source[P_SMALL_direct_b_max_macs] = SRC_MODEL;
    }
    const int panels = gk_model_direct_row_panels(ci, c->small.direct_max_row_panels);
    if (panels > 0) {
        c->small.direct_max_row_panels = panels;
        e->source[P_SMALL_direct_max_row_panels] = SRC_MODEL;
    }
    const double walk = gk_model_ta_strips_min_walk(ci, c->small.ta_strips_min_walk);
    if (walk > 0) {
        c->small.ta_strips_min_walk = walk;
        e->source[P_SMALL_ta_strips_min_walk] = SRC_MODEL;
    }
    const gk_real_kernel_t *sk = type_kernel(c, 0); /* a panel row: the float kernel's NR values (double's alike) */
    const int group = sk ? gk_model_b_group_panels(ci, sk->nr * sk->elem) : -1;
    if (group >= 0) {
        c->small.b_group_panels = group;
        e->source[P_SMALL_b_group_panels] = SRC_MODEL;
    }
}

static effective_t *build(const gk_config_t *base) {
    effective_t *e = (effective_t *)calloc(1, sizeof(effective_t));
    if (!e) return NULL;
    e->cfg = *base;
    e->base = base;
    e->generation = generation;
    e->model_mode = model_mode;
    e->thread_macs = GK_THREAD_MACS_DEFAULT;
    const int hand = base->cpu_match != NULL;
    memset(e->source, hand ? SRC_HAND : SRC_TABLE, sizeof e->source);
    e->source[P_THREAD_MACS] = SRC_TABLE;
    if (model_mode == 2 || (model_mode == 1 && !hand)) apply_model(e, gk_cache_info());
    const int s = (int)base->path;
    if (s >= 0) {
        /* a type's MC, KC, NC together (the packed blocks they make must fit), then the others */
        for (int t = 0; t < N_BLOCK_TYPES; t++) {
            const gk_blocks_t before = *type_blocks(&e->cfg, t);
            int any = 0;
            for (int p = 3 * t; p < 3 * t + 3; p++) {
                if (!ov_set[s][p] || !valid_value(&e->cfg, p, ov_value[s][p])) continue;
                set_param(e, p, ov_value[s][p]);
                any = 1;
            }
            if (!any) continue;
            if (!blocks_fit(type_kernel(&e->cfg, t), type_blocks(&e->cfg, t), type_blocks((gk_config_t *)base, t))) {
                *type_blocks(&e->cfg, t) = before; /* never past the workspace limits, whatever the mix */
                continue;
            }
            for (int p = 3 * t; p < 3 * t + 3; p++)
                if (ov_set[s][p]) e->source[p] = SRC_TUNED;
        }
        for (int p = P_BLOCKS_END; p < N_PARAMS; p++) {
            if (!ov_set[s][p] || !valid_value(&e->cfg, p, ov_value[s][p])) continue;
            set_param(e, p, ov_value[s][p]);
            e->source[p] = SRC_TUNED;
        }
    }
    return e;
}

/* One built configuration per registry entry, rebuilt when the overrides or the model's mode changed;
 * the stale ones are kept (a call in flight may still read them). */
#define N_CACHE 16
static effective_t *GK_SHARED cache[N_CACHE];

const gk_config_t *gk_effective_config(const gk_config_t *base) {
    int free_slot = -1;
    for (int i = 0; i < N_CACHE; i++) {
        effective_t *e = GK_LOAD_ACQUIRE(&cache[i]);
        if (e == NULL) { if (free_slot < 0) free_slot = i; continue; }
        if (e->base != base) continue;
        if (e->generation == generation && e->model_mode == model_mode) return &e->cfg;
        free_slot = i;
        break;
    }
    effective_t *e = build(base);
    if (!e) return base;
    if (free_slot >= 0) GK_STORE_RELEASE(&cache[free_slot], e);
    return &e->cfg;
}

/* The built entry whose configuration is c, or NULL: c is a registry entry itself (its build ran out of
 * memory), never to be read as an effective_t. */
static const effective_t *effective_of(const gk_config_t *c) {
    for (int i = 0; i < N_CACHE; i++) {
        const effective_t *e = GK_LOAD_ACQUIRE(&cache[i]);
        if (e != NULL && &e->cfg == c) return e;
    }
    return NULL;
}

/* A configuration with its tuning record; a plain entry (not built) as one with default sources. */
static effective_t effective_copy(const gk_config_t *c) {
    const effective_t *e = effective_of(c);
    if (e != NULL) return *e;
    effective_t plain;
    memset(&plain, 0, sizeof plain);
    plain.cfg = *c;
    plain.base = c;
    plain.thread_macs = GK_THREAD_MACS_DEFAULT;
    memset(plain.source, c->cpu_match != NULL ? SRC_HAND : SRC_TABLE, sizeof plain.source);
    return plain;
}

double gk_tuning_thread_macs(const gk_config_t *c) {
    const effective_t *e = effective_of(c);
    return e != NULL ? e->thread_macs : GK_THREAD_MACS_DEFAULT;
}

gemmkit_status_t gk_tuning_set(const gk_config_t *base, const char *arch, const char *name, double value) {
    const int s = slot_of(arch), p = param_of(name);
    if (s < 0 || p < 0) return gemmkit_invalid_arguments;
    if (!base) return gemmkit_unimplemented; /* a path this CPU / build cannot run: nothing to check against */
    if (!valid_value(base, p, value)) return gemmkit_invalid_arguments;
    if (p < P_BLOCKS_END) { /* the block it makes with the other two (overridden or not) must fit */
        effective_t probe = effective_copy(gk_effective_config(base));
        set_param(&probe, p, value);
        const int t = p / 3;
        if (!blocks_fit(type_kernel(base, t), type_blocks(&probe.cfg, t), type_blocks((gk_config_t *)base, t)))
            return gemmkit_invalid_arguments;
    }
    ov_value[s][p] = value;
    ov_set[s][p] = 1;
    generation++;
    return gemmkit_success;
}

void gk_tuning_clear(void) {
    memset(ov_set, 0, sizeof ov_set);
    generation++;
}

int gk_tuning_model_mode(int mode) {
    const int old = model_mode;
    if (mode >= 0 && mode <= 2) model_mode = mode;
    return old;
}

gemmkit_status_t gk_tuning_param_get(const gk_config_t *c, const char *name, double *value, int *source) {
    const int p = param_of(name);
    if (p < 0) return gemmkit_invalid_arguments;
    const effective_t e = effective_copy(c);
    if (value) *value = get_param(&e, p);
    if (source) *source = e.source[p];
    return gemmkit_success;
}

/* ---- public entry points (include/gemmkit_introspect.h) that need no configuration in use ------------------- */

int gemmkit_param_count(void) { return N_PARAMS; }
const char *gemmkit_param_name(int i) { return i >= 0 && i < N_PARAMS ? param_names[i] : NULL; }

gemmkit_status_t gemmkit_cache_hierarchy(gemmkit_cache_level_t levels[3], const char **source) {
    if (!levels) return gemmkit_invalid_arguments;
    const gk_cache_info_t *ci = gk_cache_info();
    const gk_cache_level_t *l[3] = {&ci->l1, &ci->l2, &ci->l3};
    for (int i = 0; i < 3; i++) {
        levels[i].size = l[i]->size;
        levels[i].ways = l[i]->ways;
        levels[i].line = l[i]->line;
        levels[i].sharing = l[i]->sharing;
    }
    if (source) *source = ci->source;
    return gemmkit_success;
}

static void to_internal(const gemmkit_cache_level_t levels[3], gk_cache_info_t *ci) {
    memset(ci, 0, sizeof *ci);
    gk_cache_level_t *l[3] = {&ci->l1, &ci->l2, &ci->l3};
    for (int i = 0; i < 3; i++) *l[i] = (gk_cache_level_t){levels[i].size, levels[i].ways, levels[i].line,
                                                           levels[i].sharing};
}

gemmkit_status_t gemmkit_model_real_blocks(const gemmkit_cache_level_t levels[3], int mr, int nr, int elem,
                                           int complex_native, int64_t fallback_nc, int64_t out[3]) {
    if (!levels || !out || mr <= 0 || mr > 64 || nr <= 0 || nr > 64 || (elem != 4 && elem != 8))
        return gemmkit_invalid_arguments;
    gk_cache_info_t ci;
    to_internal(levels, &ci);
    gk_blocks_t b = {0, 0, fallback_nc};
    if (!gk_model_blocks(&ci, mr, nr, elem, complex_native != 0, &b)) return gemmkit_unimplemented;
    out[0] = b.mc; out[1] = b.kc; out[2] = b.nc;
    return gemmkit_success;
}

gemmkit_status_t gemmkit_model_int8_blocks(const gemmkit_cache_level_t levels[3], int mr, int nr, int elem,
                                           int64_t out[3]) {
    if (!levels || !out || mr <= 0 || mr > 64 || nr <= 0 || nr > 64 || (elem != 1 && elem != 2))
        return gemmkit_invalid_arguments;
    gk_cache_info_t ci;
    to_internal(levels, &ci);
    gk_int8_blocks_t q;
    memset(&q, 0, sizeof q);
    if (!gk_model_int8_blocks(&ci, mr, nr, elem, &q)) return gemmkit_unimplemented;
    out[0] = q.kb; out[1] = q.l2_bytes; out[2] = q.l3_bytes;
    return gemmkit_success;
}

gemmkit_status_t gemmkit_model_small_limits(const gemmkit_cache_level_t levels[3], int table_row_panels,
                                            double table_walk, double out[3]) {
    if (!levels || !out || table_row_panels < 1 || table_row_panels > 8 || !(table_walk > 0))
        return gemmkit_invalid_arguments;
    gk_cache_info_t ci;
    to_internal(levels, &ci);
    out[0] = gk_model_direct_b_macs(&ci);
    out[1] = (double)gk_model_direct_row_panels(&ci, table_row_panels);
    out[2] = gk_model_ta_strips_min_walk(&ci, table_walk);
    return gemmkit_success;
}
