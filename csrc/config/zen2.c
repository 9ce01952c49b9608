/* Configuration of the AVX2 path tuned for AMD Zen 2 (family 17h, models 30h-3Fh, 47h, 60h-7Fh, 84h-87h,
 * 90h-AFh): the AVX2 kernels, sgemm k blocks of 512, and a GEMV without software prefetch (measured here). */
#include "common.h"
#if GEMMKIT_X86

/* Zen 2 (EPYC 7002, family 23 model 49, 2 cores): the GEMV streams fastest on the hardware prefetchers
 * alone. 1 x 4096 x 4096 float, 1 thread, against the same kernel with every stream prefetched ahead:
 * 25.4 GB/s without, 20.7 / 18.9 / 20.1 GB/s at 1 / 2 / 4 KiB (NumPy 24.7, one plain read 18.4), and the
 * same order for float64, B^T and 4096 x 4096 x vector, on huge pages or not (a sweep of the distance in one
 * process, interleaved with NumPy; the bench's gemv cases give the streaming-read fraction). */
static int is_zen2(uint32_t id) {
    const uint32_t model = GK_CPU_MODEL(id);
    return GK_CPU_VENDOR(id) == GK_CPU_AMD && GK_CPU_FAMILY(id) == 0x17 &&
           ((model >= 0x30 && model <= 0x3f) || model == 0x47 || (model >= 0x60 && model <= 0x7f) ||
            (model >= 0x84 && model <= 0x87) || (model >= 0x90 && model <= 0xaf));
}

/* sgemm: k blocks of 512 (A block 72 x 512, 144 KiB): fewer passes over C. gemmkit.matmul 1 thread, best of
 * 3-7 calls, 3 alternations against 144 x 256 in one session: 512^3 98.0-98.3 vs 96.2-97.0 GFLOP/s, 1024^3
 * 98.3-99.0 vs 96.8-97.4, 2048^3 98.6-99.1 vs 95.7-96.1 (2 threads 2048^3 193.5-194.4 vs 187.5-188.7); 256^3
 * within noise. dgemm's 96 x 256 stays: 48 x 512 gained under 1 % at 512-2048 and lost 1-3 % at 256. */
#define GK_SGEMM_ZEN2_BLOCKS {.mc = 72, .kc = 512, .nc = 4080}

const gk_config_t gk_config_zen2 = {
    GK_CONFIG_AVX2_BASE, .uarch = "zen2", .cpu_match = is_zen2,
    .sgemm_blocks = GK_SGEMM_ZEN2_BLOCKS,
    /* With A packed, a plain B read in place loses to packing it past ~56^3 (B beyond L1): 64^3 double
     * 16.3 vs 15.2 us, float 8.5 vs 8.2 us (A^T in place keeps 160^3); the tiny kernel beats the packed
     * path up to 32^3 (batches of 16^3 float: 243 vs 367 ns a product); the complex one only up to about
     * 16^3 (gemmkit.blas per call, tiny vs 1m packed: zgemm 14^3 1.83 vs 2.07 us, 16^3 2.05 vs 2.07,
     * 20^3 3.84 vs 3.08, 32^3 10.6 vs 8.6; cgemm 20^3 2.85 vs 2.5-2.8, 32^3 7.2 vs 5.0). With both
     * operands read in place (6-row assembly loop) it beats the packed path up to 64^3: gemmkit.matmul of
     * stacks, us a product, packed -> tiny: float 48^3 3.9 -> 3.0, 64^3 8.2 -> 6.1; double 40^3 5.3 -> 3.6,
     * 48^3 7.8 -> 5.3, 56^3 12.2 -> 9.0, 64^3 19.5 -> 14.4 (two alternations); B's rows copied where N is
     * not whole chunks, interleaved with np.matmul: float 40^3 3.2 -> 2.0, 56^3 7.1 -> 4.8 (0.70 -> 1.02x,
     * 0.75 -> 1.03x NumPy); B^T copied by 8 x 8 (4 x 4) transposes: float 40^3 / 56^3 / 64^3 0.71 / 0.80
     * / 0.87x -> 0.85-0.88 / 0.98-0.99 / 1.09-1.16x NumPy, double 1.00 / 0.90-0.94 / 0.97-0.98x -> 1.12-1.19
     * / 1.00 / 0.99-1.05x (its element-by-element copy had been slower than packing).
     * Batches past 16 MiB (the L3) are streamed: 1000 x 32^3 double (24 MiB), interleaved with np.matmul,
     * 3.42-3.46 -> 2.19-2.28 us a product (1.28-1.33x -> 1.89-1.92x NumPy, three alternations); 1000 x
     * 32^3 float (12 MiB, in L3) measured no gain from either half (next product prefetched: 0.76 -> 0.82
     * us; C non-temporal: 1.72x -> 1.53x NumPy), so it is not streamed. B is read in place for one 6-row
     * panel of C at most, as the model gives for a 512 KiB L2 (csrc/blocking_model.c, gk_model_direct_row_panels:
     * measured on the avx2 path of a Zen 4 core, the same kernel and L1D, a 1 MiB L2; not on a Zen 2). */
    .small = GK_SMALL_TUNED_FULL(56.0 * 56.0 * 56.0, 32.0 * 32.0 * 32.0, 64.0 * 64.0 * 64.0, 16.0 * 16.0 * 16.0, 0,
                                 16.0 * (1 << 20), GK_PLAIN_MAX_MACS, 1),
};
#endif
