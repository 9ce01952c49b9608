/* The AMX kernels' prefetch of A's panel (int8 and bfloat16): its next groups into L1 two groups ahead, a quarter
 * of a 2 KiB group per tile product (tiles are not renamed: a tile load missing L1 holds up every product after it). */
#ifndef GEMMKIT_AMX_PREFETCH_H
#define GEMMKIT_AMX_PREFETCH_H
#include <immintrin.h>

#define AMX_PF_GROUPS 2
#define AMX_PF_QUARTER(p)                                                                            \
    do {                                                                                             \
        for (int l = 0; l < 8; l++) _mm_prefetch((const char *)(p) + 64 * l, _MM_HINT_T0);          \
    } while (0)
#endif
