/* AMX int8 (Sapphire Rapids and later Xeons): a 32 x 32 microkernel on four 16 x 16 int32 tiles (tdpbusd over
 * 64-byte k groups), its row variants, few-row sums and B packers; built where the compiler knows AMX. */
#include "../kernel.h"
#if GEMMKIT_X86 && defined(GEMMKIT_HAVE_AMX)
#include <immintrin.h>
#include <string.h>
#define MR 32
#define NV 2
#define KG 64
#define ES 1
#define I8_KERNEL_NAME ukernel_i8_amx_32x32
#include "int8_zmm_epilogue.h"
#include "amx_prefetch.h"

/* Packed panels: A is MR rows of 64 k bytes per group (the portable packer: tiles 4 and 5 load rows 0-15 and
 * 16-31 of a group, 64 bytes apart); B is the VNNI layout, a group of 4 k bytes per column, 32 columns per row
 * of 128 bytes, over K rounded up to 64 (tiles 6 and 7 load columns 0-15 and 16-31 of 16 such rows). C is
 * tiles 0-3: rows 0-15 x columns 0-15, 0-15 x 16-31, 16-31 x 0-15, 16-31 x 16-31. */
typedef struct {
    uint8_t palette, start_row, reserved[14];
    uint16_t bytes_per_row[16];
    uint8_t rows[16];
} amx_tile_config_t;

static const GK_ALIGN64 amx_tile_config_t amx_config = {
    1, 0, {0}, {64, 64, 64, 64, 64, 64, 64, 64}, {16, 16, 16, 16, 16, 16, 16, 16}};

/* Around each block of kernel calls (gk_int8_kernel_t.block_begin / block_end): the configuration is loaded, whatever
 * another library left, and the tiles go back to their initial state after (no 8 KiB of tile state for the OS to save
 * per thread between products). Per block, not per kernel call, where it cost a visible share of a tile (see
 * docs/decisions.md, gk_amx_tiles_begin). */
void gk_amx_tiles_begin(void) { _tile_loadconfig(&amx_config); }
void gk_amx_tiles_end(void) { _tile_release(); }

/* The raw sums of one MR x NR tile over kgroups 64-k groups into s (rows NR apart), added to s's when
 * `accumulate`; `half`: rows 0-15 only (tiles 0, 1 and 4: the rows past 16 are not summed nor stored). */
static GK_FORCEINLINE void amx_tile_sums(int64_t kgroups, const uint8_t *GK_RESTRICT a, const uint8_t *GK_RESTRICT b,
                                         int32_t *GK_RESTRICT s, int accumulate, const int half) {
    if (kgroups == 0) { /* the few-row path's epilogue call: s holds its rows' sums (no more rows than that) */
        if (!accumulate) memset(s, 0, sizeof(int32_t) * MR * NR);
        return;
    }
    if (accumulate) {
        _tile_loadd(0, s, NR * 4);
        _tile_loadd(1, s + 16, NR * 4);
        if (!half) {
            _tile_loadd(2, s + 16 * NR, NR * 4);
            _tile_loadd(3, s + 16 * NR + 16, NR * 4);
        }
    } else {
        _tile_zero(0);
        _tile_zero(1);
        if (!half) {
            _tile_zero(2);
            _tile_zero(3);
        }
    }
    for (int64_t g = 0; g < kgroups; g++) {
        const uint8_t *next = a + AMX_PF_GROUPS * MR * KG;
        _tile_loadd(4, a, KG);
        if (!half) _tile_loadd(5, a + 16 * KG, KG);
        _tile_loadd(6, b, NR * 4);
        _tile_loadd(7, b + 64, NR * 4);
        _tile_dpbusd(0, 4, 6);
        AMX_PF_QUARTER(next);
        _tile_dpbusd(1, 4, 7);
        AMX_PF_QUARTER(next + 512);
        if (!half) {
            _tile_dpbusd(2, 5, 6);
            AMX_PF_QUARTER(next + 1024);
            _tile_dpbusd(3, 5, 7);
            AMX_PF_QUARTER(next + 1536);
        }
        a += MR * KG;
        b += NR * KG;
    }
    _tile_stored(0, s, NR * 4);
    _tile_stored(1, s + 16, NR * 4);
    if (!half) {
        _tile_stored(2, s + 16 * NR, NR * 4);
        _tile_stored(3, s + 16 * NR + 16, NR * 4);
    }
}

static void ukernel_i8_amx_32x32(int64_t kgroups, const void *GK_RESTRICT av, const void *GK_RESTRICT bv,
                                 int32_t *GK_RESTRICT s, int accumulate, void *GK_RESTRICT c, int64_t ldc,
                                 const gk_int8_epilogue_t *ep) {
    amx_tile_sums(kgroups, (const uint8_t *)av, (const uint8_t *)bv, s, accumulate, 0);
    if (ep != NULL) ukernel_i8_amx_32x32_finish(MR, s, c, ldc, ep);
}

/* The first m rows of a tile: up to 16, tiles 0-1 only; past 16, the whole tile (the packer zero-pads A's
 * panel to MR rows), m rows finished. */
#define AMX_ROWS(mm)                                                                                 \
    static void ukernel_i8_amx_32x32_r##mm(int64_t kgroups, const void *GK_RESTRICT av,               \
                                           const void *GK_RESTRICT bv, int32_t *GK_RESTRICT s,        \
                                           int accumulate, void *GK_RESTRICT c, int64_t ldc,          \
                                           const gk_int8_epilogue_t *ep) {                            \
        amx_tile_sums(kgroups, (const uint8_t *)av, (const uint8_t *)bv, s, accumulate, (mm) <= 16);  \
        if (ep != NULL) ukernel_i8_amx_32x32_finish(mm, s, c, ldc, ep);                               \
    }
#define AMX_ROW_COUNTS(X)                                                                            \
    X(1) X(2) X(3) X(4) X(5) X(6) X(7) X(8) X(9) X(10) X(11) X(12) X(13) X(14) X(15) X(16) X(17) X(18)  \
    X(19) X(20) X(21) X(22) X(23) X(24) X(25) X(26) X(27) X(28) X(29) X(30) X(31)
AMX_ROW_COUNTS(AMX_ROWS)
#define AMX_ROW_ENTRY(mm) ukernel_i8_amx_32x32_r##mm,
static const gk_int8_ukernel_fn ukernel_i8_amx_32x32_rows[MR] = {NULL, AMX_ROW_COUNTS(AMX_ROW_ENTRY)};

/* Few rows (up to GK_INT8_PANEL_ROWS) against up to 4 B panels side by side with vpdpbusd (int8_panel_sums.h):
 * a 32-row tile for 1-4 rows would spend 8-32 times the work, and the weight's one read bounds these shapes. */
#define I8_STEP(acc, x, b) _mm512_dpbusd_epi32(acc, x, b)
#include "int8_panel_sums.h"

/* B into the AVX-512 VNNI packers' panels, over K rounded up to the 64-k group (zero 4-byte groups past K). */
static void pack_b_amx(const int8_t *B, int64_t ldb, int64_t kc, int64_t width, uint8_t *GK_RESTRICT dst,
                       int32_t *GK_RESTRICT colsum) {
    gk_int8_pack_b_kmajor_zmm(B, ldb, kc, (kc + KG - 1) / KG * (KG / 4), width, dst, colsum);
}
static void pack_b_kcontig_amx(const int8_t *B, int64_t ldb, int64_t kc, int64_t width, uint8_t *GK_RESTRICT dst,
                               int32_t *GK_RESTRICT colsum) {
    gk_int8_pack_b_kcontig_zmm(B, ldb, kc, (kc + KG - 1) / KG * (KG / 4), width, dst, colsum);
}

/* tdpbusd does not saturate: the k_chunk bound keeps the int32 sums exact, as for vpdpbusd. Few rows against
 * B^T take the VNNI dot path. */
GK_ASSERT_INT8_TILE(MR, NR);
const gk_int8_kernel_t gk_int8_kernel_amx = {
    "ukernel_i8_amx_32x32", MR, NR, KG, ES, GK_INT8_K_CHUNK,
    ukernel_i8_amx_32x32, pack_b_amx, gk_int8_dot_avx512_vnni, ukernel_i8_amx_32x32_rows,
    pack_b_kcontig_amx, NULL, ukernel_i8_amx_32x32_panels, gk_amx_tiles_begin, gk_amx_tiles_end,
};
#endif
