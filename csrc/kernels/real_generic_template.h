/* The portable real microkernel (MR x NR, plain C that compilers auto-vectorise), written once and
 * instantiated for float (sgemm_generic.c) and double (dgemm_generic.c). */
/* The including file defines: T, MR, NR, KERNEL_FN. */
static void KERNEL_FN(int64_t kc, const void *GK_RESTRICT av, int64_t rsa, const void *GK_RESTRICT bv,
                      int64_t rsb, void *GK_RESTRICT cv, int64_t ldc, const void *alpha_p, const void *beta_p) {
    const T *a = (const T *)av, *b = (const T *)bv;
    T *c = (T *)cv;
    const T alpha = *(const T *)alpha_p, beta = *(const T *)beta_p;
    T acc[MR][NR] = {{0}};
    for (int64_t k = 0; k < kc; k++) {
        const T *bk = b + k * rsb;
        const T *ak = a + k * rsa;
        for (int i = 0; i < MR; i++)
            for (int j = 0; j < NR; j++) acc[i][j] += ak[i] * bk[j];
    }
    for (int i = 0; i < MR; i++) {
        T *ci = c + i * ldc;
        if (beta == (T)0) for (int j = 0; j < NR; j++) ci[j] = alpha * acc[i][j];
        else for (int j = 0; j < NR; j++) ci[j] = alpha * acc[i][j] + beta * ci[j];
    }
}
