"""sgemm cases: gemmkit.sgemm against NumPy, SciPy, MKL and oneDNN on squares 64..4096 and skinny products
(M in 1, 16, 128 with N = K = 4096; M = 1 is a GEMV, compared with the streaming-read bound)."""
from .common import Blas3Op

ORDER = 10
SKINNY = [(m, 4096, 4096) for m in (1, 16, 128)]


class SgemmOp(Blas3Op):
    extra_shapes = SKINNY
    scipy_max_mnk = 1024 ** 3   # SciPy runs the same OpenBLAS as NumPy: only up to 1024³, to save time


OPS = [SgemmOp("s", "sgemm")]
