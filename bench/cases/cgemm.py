"""cgemm cases: gemmkit.cgemm (complex64) against NumPy, scipy.linalg.blas.cgemm and MKL on squares 64..1024
(8 real flops per complex multiply-add, so the fp32 peak applies)."""
from .common import QUICK_SQUARES, Blas3Op

ORDER = 30
OPS = [Blas3Op("c", "cgemm", squares=[64, 128, 256, 512, 1024], quick=QUICK_SQUARES)]
