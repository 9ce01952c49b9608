/* AMX-BF16 (Sapphire Rapids and later Xeons): a 32 x 32 bfloat16 pair kernel on four 16 x 16 float tiles
 * (tdpbf16ps over groups of 16 k pairs), A read as rows (in place where it can be), on the int8 AMX kernel's tile configuration; built where the compiler knows AMX. */
#include "../kernel.h"
#if GEMMKIT_X86 && defined(GEMMKIT_HAVE_AMX)
#include <immintrin.h>
#include "../convert.h"
#include "bf16_zmm_store.h"

#define MR 32
#define NR 32
#define KG 16 /* k pairs per tile row: 64 bytes */

/* A is rows (gk_real_kernel_t.a_rows): pair q of row i at a + i * rsa + 4 q, rsa in bytes, the caller's rows in
 * place or a packed panel of kc pairs per row; tiles 4 and 5 load rows 0-15 and 16-31 of a group of 16 pairs. B is
 * rows of 32 pairs (128 bytes: tiles 6 and 7 load columns 0-15 and 16-31 of 16 rows). C is tiles 0-3: rows 0-15 x
 * columns 0-15, 0-15 x 16-31, 16-31 x 0-15, 16-31 x 16-31: loaded from C and stored back as they are where alpha is
 * 1 and beta 0 or 1 (C not read at beta 0), else stored to a float tile and finished with AVX-512. */

static void ukernel_bf16_amx_32x32(int64_t kc, const void *GK_RESTRICT av, int64_t rsa, const void *GK_RESTRICT bv,
                                   int64_t rsb, void *GK_RESTRICT cv, int64_t ldc, const void *alpha,
                                   const void *beta) {
    const char *a = (const char *)av, *b = (const char *)bv;
    float *c = (float *)cv;
    const float al = *(const float *)alpha, be = *(const float *)beta;
    const int in_place = al == 1.0f && (be == 0.0f || be == 1.0f); /* C's tiles need no arithmetic */
    (void)rsb;
    if (in_place && be == 1.0f) {
        _tile_loadd(0, c, ldc * 4);
        _tile_loadd(1, c + 16, ldc * 4);
        _tile_loadd(2, c + 16 * ldc, ldc * 4);
        _tile_loadd(3, c + 16 * ldc + 16, ldc * 4);
    } else {
        _tile_zero(0);
        _tile_zero(1);
        _tile_zero(2);
        _tile_zero(3);
    }
    const char *a16 = a + 16 * rsa;
    for (int64_t g = 0; g < kc / KG; g++) {
        _tile_loadd(4, a, rsa);
        _tile_loadd(5, a16, rsa);
        _tile_loadd(6, b, NR * 4);
        _tile_loadd(7, b + 64, NR * 4);
        _tile_dpbf16ps(0, 4, 6);
        _tile_dpbf16ps(1, 4, 7);
        _tile_dpbf16ps(2, 5, 6);
        _tile_dpbf16ps(3, 5, 7);
        a += KG * 4;
        a16 += KG * 4;
        b += NR * KG * 4;
    }
    if (in_place) {
        _tile_stored(0, c, ldc * 4);
        _tile_stored(1, c + 16, ldc * 4);
        _tile_stored(2, c + 16 * ldc, ldc * 4);
        _tile_stored(3, c + 16 * ldc + 16, ldc * 4);
        return;
    }
    GK_ALIGN64 float s[MR * NR];
    _tile_stored(0, s, NR * 4);
    _tile_stored(1, s + 16, NR * 4);
    _tile_stored(2, s + 16 * NR, NR * 4);
    _tile_stored(3, s + 16 * NR + 16, NR * 4);
    const __m512 va = _mm512_set1_ps(al);
    for (int i = 0; i < MR; i++)
        bf16_zmm_store_row32(c + i * ldc, _mm512_load_ps(s + i * NR), _mm512_load_ps(s + i * NR + 16), va, be);
}

#define BP_MR MR
#define BP_NR NR
#define BP_GROUP KG
#define BP_A_ROWS 1
#define BP_NAME ukernel_bf16_amx_32x32_exact
#include "bf16_pair_exact_template.h"

GK_ASSERT_REAL_TILE(MR, NR, 4);
const gk_real_kernel_t gk_bf16_kernel_amx = {
    .name = "ukernel_bf16_amx_32x32", .elem = 4, .mr = MR, .nr = NR, .ukernel = ukernel_bf16_amx_32x32,
    .k_pair_group = KG, .a_rows = 1, .ukernel_exact = ukernel_bf16_amx_32x32_exact,
    .moves = &gk_bf16_moves_avx512, .block_begin = gk_amx_tiles_begin, .block_end = gk_amx_tiles_end,
};
#endif
