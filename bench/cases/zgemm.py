"""zgemm cases: gemmkit.zgemm (complex128) against NumPy, scipy.linalg.blas.zgemm and MKL on squares 64..1024
(8 real flops per complex multiply-add, so the fp64 peak applies)."""
from .common import QUICK_SQUARES, Blas3Op

ORDER = 31
OPS = [Blas3Op("z", "zgemm", squares=[64, 128, 256, 512, 1024], quick=QUICK_SQUARES)]
