/* Cross-built for a non-x86 target from the files setup.py compiles there (portable kernels only),
 * run under qemu-user: the generic path is selected and sgemm/u8s8s32/s8s8s32 give exact results. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "gemmkit.h"

static int fails = 0;
#define CHECK(cond, ...) do { if (!(cond)) { fails++; printf("FAIL: " __VA_ARGS__); printf("\n"); } } while (0)

static uint32_t seed = 12345;
static int rnd(int lo, int hi) { seed = seed * 1664525u + 1013904223u; return lo + (int)((seed >> 8) % (uint32_t)(hi - lo + 1)); }

static void check_sgemm(char ta, char tb, int64_t M, int64_t N, int64_t K) {
    int64_t lda = ta == 'N' ? K : M, ldb = tb == 'N' ? N : K, ldc = N + 3;
    float *A = malloc(sizeof(float) * (size_t)(M * K)), *B = malloc(sizeof(float) * (size_t)(K * N));
    float *C = malloc(sizeof(float) * (size_t)(M * ldc));
    for (int64_t i = 0; i < M * K; i++) A[i] = (float)rnd(-8, 8) / 4.0f;
    for (int64_t i = 0; i < K * N; i++) B[i] = (float)rnd(-8, 8) / 4.0f;
    for (int64_t i = 0; i < M * ldc; i++) C[i] = (float)rnd(-8, 8);
    float *C0 = malloc(sizeof(float) * (size_t)(M * ldc));
    memcpy(C0, C, sizeof(float) * (size_t)(M * ldc));
    CHECK(gemmkit_sgemm(ta, tb, M, N, K, 0.5f, A, lda, B, ldb, 2.0f, C, ldc) == gemmkit_success, "sgemm status");
    double worst = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            double s = 0;
            for (int64_t k = 0; k < K; k++)
                s += (double)(ta == 'N' ? A[i * lda + k] : A[k * lda + i]) * (tb == 'N' ? B[k * ldb + j] : B[j * ldb + k]);
            double ref = 0.5 * s + 2.0 * C0[i * ldc + j];
            worst = fmax(worst, fabs(ref - C[i * ldc + j]));
        }
    /* inputs are multiples of 1/4 with small sums: float accumulation is exact here */
    CHECK(worst == 0, "sgemm %c%c %lldx%lldx%lld: max error %g", ta, tb, (long long)M, (long long)N, (long long)K, worst);
    free(A); free(B); free(C); free(C0);
}

static void check_int8(int s8, char offsetc, int64_t M, int64_t N, int64_t K, float beta) {
    int64_t lda = K, ldb = N, ldc = N;
    uint8_t *A = malloc((size_t)(M * K)); int8_t *B = malloc((size_t)(K * N));
    int32_t *C = malloc(sizeof(int32_t) * (size_t)(M * N)), *C0 = malloc(sizeof(int32_t) * (size_t)(M * N));
    int32_t co[1024];
    for (int64_t i = 0; i < M * K; i++) A[i] = s8 ? (uint8_t)(int8_t)rnd(-128, 127) : (uint8_t)rnd(0, 255);
    for (int64_t i = 0; i < K * N; i++) B[i] = (int8_t)rnd(-128, 127);
    for (int64_t i = 0; i < M * N; i++) C[i] = C0[i] = rnd(-1000, 1000);
    for (int i = 0; i < 1024; i++) co[i] = rnd(-50, 50);
    int ao = s8 ? -3 : 7, bo = -2;
    gemmkit_status_t st = s8
        ? gemmkit_gemm_s8s8s32('N', 'N', offsetc, M, N, K, 1.0f, (const int8_t *)A, lda, (int8_t)ao, B, ldb, (int8_t)bo, beta, C, ldc, co)
        : gemmkit_gemm_u8s8s32('N', 'N', offsetc, M, N, K, 1.0f, A, lda, (uint8_t)ao, B, ldb, (int8_t)bo, beta, C, ldc, co);
    CHECK(st == gemmkit_success, "int8 status %d", (int)st);
    int64_t bad = 0;
    for (int64_t i = 0; i < M; i++)
        for (int64_t j = 0; j < N; j++) {
            int64_t s = 0;
            for (int64_t k = 0; k < K; k++) {
                int64_t a = s8 ? (int8_t)A[i * lda + k] : A[i * lda + k];
                s += (a - ao) * ((int64_t)B[k * ldb + j] - bo);
            }
            int64_t off = offsetc == 'F' ? co[0] : offsetc == 'C' ? co[i] : co[j];
            int64_t ref = s + (beta == 1.0f ? C0[i * ldc + j] : 0) + off;
            if (ref != C[i * ldc + j]) bad++;
        }
    CHECK(bad == 0, "%s offsetc=%c %lldx%lldx%lld beta=%g: %lld wrong", s8 ? "s8s8s32" : "u8s8s32", offsetc,
          (long long)M, (long long)N, (long long)K, beta, (long long)bad);
    free(A); free(B); free(C); free(C0);
}

int main(void) {
    const char *arch = gemmkit_get_arch();
    printf("arch=%s cpu_features=%u threads=%d\n", arch, gemmkit_cpu_features(), gemmkit_get_num_threads());
    CHECK(strcmp(arch, "generic") == 0, "arch is %s, expected generic", arch);
    CHECK(gemmkit_set_arch("avx2") != gemmkit_success, "avx2 accepted on a non-x86 build");
    for (int t = 1; t <= 2; t++) {
        gemmkit_set_num_threads(t);
        check_sgemm('N', 'N', 67, 45, 300);
        check_sgemm('T', 'T', 33, 70, 41);
        check_sgemm('N', 'T', 260, 200, 530);
        check_int8(0, 'F', 61, 47, 301, 0.0f);
        check_int8(1, 'C', 40, 33, 77, 1.0f);
        check_int8(0, 'R', 200, 150, 600, 1.0f);
    }
    printf("%s\n", fails ? "portable check FAILED" : "portable check passed");
    return fails != 0;
}
