/* The tiny-product kernel (all of M, N, K <= GK_TINY_MAX): the whole product in one pass with no
 * tiles, plain C in fixed 8-wide chunks that the ISA file's flags turn into vector registers. */
/* The including file defines: T, TINY_FN. */
static void TINY_FN(int64_t M, int64_t N, int64_t K, const void *alpha_p, const void *Av, int64_t lda, int transa,
                    const void *Bv, int64_t ldb, int transb, const void *beta_p, void *Cv, int64_t ldc) {
    const T *A = (const T *)Av, *B = (const T *)Bv;
    T *C = (T *)Cv;
    const T alpha = *(const T *)alpha_p, beta = *(const T *)beta_p;
    /* op(B) as K rows of NP (N rounded up to 8, zero-padded) contiguous values */
    const int64_t NP = (N + 7) & ~(int64_t)7;
    GK_ALIGN64 T b[GK_TINY_MAX * GK_TINY_MAX];
    for (int64_t k = 0; k < K; k++) {
        T *bk = b + k * NP;
        if (transb) for (int64_t j = 0; j < N; j++) bk[j] = B[j * ldb + k];
        else for (int64_t j = 0; j < N; j++) bk[j] = B[k * ldb + j];
        for (int64_t j = N; j < NP; j++) bk[j] = (T)0;
    }
    for (int64_t i = 0; i < M; i++) {
        T *c = C + i * ldc;
        for (int64_t j0 = 0; j0 < NP; j0 += 8) {
            T v[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (int64_t k = 0; k < K; k++) {
                const T a = transa ? A[k * lda + i] : A[i * lda + k];
                const T *bk = b + k * NP + j0;
                for (int j = 0; j < 8; j++) v[j] += a * bk[j];
            }
            const int64_t w = N - j0 < 8 ? N - j0 : 8;
            if (beta == (T)0) for (int64_t j = 0; j < w; j++) c[j0 + j] = alpha * v[j];
            else for (int64_t j = 0; j < w; j++) c[j0 + j] = alpha * v[j] + beta * c[j0 + j];
        }
    }
}

#ifdef TINY_COMPLEX_FN
/* Complex: op(B) split into real and imaginary planes of K rows x NP, so every row update is two
 * contiguous 8-wide multiply-adds per plane, vectorised as the real loop is. */
static void TINY_COMPLEX_FN(int64_t M, int64_t N, int64_t K, const void *alpha_p, const void *Av, int64_t lda,
                            int transa, int conja, const void *Bv, int64_t ldb, int transb, int conjb,
                            const void *beta_p, void *Cv, int64_t ldc) {
    const T *A = (const T *)Av, *B = (const T *)Bv;
    T *C = (T *)Cv;
    const T ar = ((const T *)alpha_p)[0], ai = ((const T *)alpha_p)[1], beta = *(const T *)beta_p;
    const T sa = conja ? (T)-1 : (T)1, sb = conjb ? (T)-1 : (T)1;
    const int64_t NP = (N + 7) & ~(int64_t)7;
    GK_ALIGN64 T bre[GK_TINY_MAX * GK_TINY_MAX], bim[GK_TINY_MAX * GK_TINY_MAX];
    for (int64_t k = 0; k < K; k++) {
        for (int64_t j = 0; j < N; j++) {
            const T *s = transb ? B + 2 * (j * ldb + k) : B + 2 * (k * ldb + j);
            bre[k * NP + j] = s[0];
            bim[k * NP + j] = sb * s[1];
        }
        for (int64_t j = N; j < NP; j++) bre[k * NP + j] = bim[k * NP + j] = (T)0;
    }
    for (int64_t i = 0; i < M; i++) {
        T *c = C + 2 * i * ldc;
        for (int64_t j0 = 0; j0 < NP; j0 += 8) {
            T vr[8] = {0, 0, 0, 0, 0, 0, 0, 0}, vi[8] = {0, 0, 0, 0, 0, 0, 0, 0};
            for (int64_t k = 0; k < K; k++) {
                const T *s = transa ? A + 2 * (k * lda + i) : A + 2 * (i * lda + k);
                const T xr = s[0], xi = sa * s[1];
                const T *br = bre + k * NP + j0, *bi = bim + k * NP + j0;
                for (int j = 0; j < 8; j++) {
                    vr[j] += xr * br[j] - xi * bi[j];
                    vi[j] += xr * bi[j] + xi * br[j];
                }
            }
            const int64_t w = N - j0 < 8 ? N - j0 : 8;
            for (int64_t j = 0; j < w; j++) {
                T re = ar * vr[j] - ai * vi[j], im = ar * vi[j] + ai * vr[j];
                T *cj = c + 2 * (j0 + j);
                if (beta != (T)0) {
                    re += beta * cj[0];
                    im += beta * cj[1];
                }
                cj[0] = re;
                cj[1] = im;
            }
        }
    }
}
#endif
