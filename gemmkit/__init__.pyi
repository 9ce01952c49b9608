# Type stubs for the gemmkit package: the NumPy front ends (matmul, gemm) and the configuration helpers.
# The core functions are re-exported from gemmkit._core (typed by its own stub where there is one).
import contextlib
from typing import Any, Literal, overload

from numpy.typing import ArrayLike, NDArray

from ._core import gemm_s8s8s32 as gemm_s8s8s32
from ._core import gemm_u8s8s32 as gemm_u8s8s32
from ._core import get_num_threads as get_num_threads
from ._core import sgemm as sgemm

__version__: str
__all__: list[str]
ARCHS: tuple[str, ...]

_Arch = Literal["generic", "avx2", "avx_vnni", "avx512", "avx512_vnni"]

@overload
def matmul(a: ArrayLike, b: ArrayLike, out: None = None) -> Any: ...
@overload
def matmul(a: ArrayLike, b: ArrayLike, out: NDArray[Any]) -> NDArray[Any]: ...
def gemm(a: ArrayLike, b: ArrayLike, c: NDArray[Any] | None = None, *, alpha: complex = 1.0,
         beta: complex = 0.0, trans_a: bool = False, trans_b: bool = False) -> NDArray[Any]: ...
def set_num_threads(n: int) -> None: ...
def available_archs() -> list[str]: ...
def set_arch(name: _Arch | None = None) -> None: ...
def get_arch() -> str: ...
def use_arch(name: _Arch) -> contextlib.AbstractContextManager[None]: ...
def show_config(print_out: bool = True) -> dict[str, Any]: ...
