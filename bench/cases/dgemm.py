"""dgemm cases: gemmkit.dgemm against NumPy, scipy.linalg.blas.dgemm and MKL on squares 64..2048."""
from .common import QUICK_SQUARES, Blas3Op

ORDER = 20
OPS = [Blas3Op("d", "dgemm", squares=[64, 128, 256, 512, 1024, 2048], quick=QUICK_SQUARES)]
