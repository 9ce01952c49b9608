/* The kernel paths (GEMMKIT_ARCH's names), the one list, best first: their enum (a configuration's `path`), their
 * names and the tuning overrides' slots come from it; which of them a build knows is dispatch.c's. */
#ifndef GEMMKIT_PATHS_H
#define GEMMKIT_PATHS_H

#define GK_PATHS(X) X(avx512_amx) X(avx512_vnni) X(avx512) X(avx_vnni) X(avx2) X(i8mm) X(dotprod) X(neon) X(generic)

typedef enum {
#define GK_PATH_ENUM(name) GK_PATH_##name,
    GK_PATHS(GK_PATH_ENUM)
#undef GK_PATH_ENUM
    GK_N_PATHS
} gk_path_t;

/* A path's GEMMKIT_ARCH name ("" past the list). */
static inline const char *gk_path_name(int path) {
#define GK_PATH_NAME(name) #name,
    static const char *const names[GK_N_PATHS] = {GK_PATHS(GK_PATH_NAME)};
#undef GK_PATH_NAME
    return path >= 0 && path < GK_N_PATHS ? names[path] : "";
}

#endif
