"""NumPy's own matmul tests run against gemmkit.matmul: the test classes of the installed NumPy
(numpy/_core/tests/test_multiarray.py, shipped in NumPy's wheels) subclassed with their `matmul` pointed at gemmkit."""
import pytest

import gemmkit

numpy_tests = pytest.importorskip("numpy._core.tests.test_multiarray", reason="this NumPy ships no tests")


class TestNumpyMatmulOnGemmkit(numpy_tests.TestMatmul):
    """Every test of NumPy's TestMatmul and its MatmulCommon, with gemmkit.matmul as the function under test."""
    matmul = staticmethod(gemmkit.matmul)


@pytest.mark.skip(reason="tests the @ operator itself (ndarray.__matmul__), which gemmkit cannot replace")
class TestNumpyMatmulOperator(numpy_tests.TestMatmulOperator):
    pass
