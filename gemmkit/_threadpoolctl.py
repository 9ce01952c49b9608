"""threadpoolctl support: lets `threadpoolctl.threadpool_info()` list gemmkit's worker pool and
`threadpoolctl.threadpool_limits(n)` cap it, like it does for OpenBLAS, MKL or OpenMP.

threadpoolctl finds a library by scanning the shared objects loaded in the process and matching the
start of each file name against a controller's `filename_prefixes`. gemmkit's extension is
`gemmkit/_core.<abi-tag>.so` (`.pyd` on Windows), so the prefix is the generic `_core`; other packages
ship `_core` extensions too, so `check_symbols` makes threadpoolctl keep a match only if it exports
gemmkit's own C entry points. The controller then calls `gemmkit_get_num_threads` /
`gemmkit_set_num_threads` from that file through ctypes, i.e. the same thread count as
`gemmkit.get_num_threads()` / `gemmkit.set_num_threads()`.

Registration happens when gemmkit is imported and threadpoolctl >= 3.4 is installed (3.2 added custom
controllers, 3.4 the symbol check); without it this module does nothing.
"""
import ctypes

from ._version import __version__

try:
    import threadpoolctl
    from threadpoolctl import LibController
except ImportError:  # threadpoolctl not installed: nothing to register with
    threadpoolctl = None
    LibController = object


def _threadpoolctl_supported():
    if threadpoolctl is None or not hasattr(threadpoolctl, "register"):
        return False
    try:
        major, minor = (int(p) for p in threadpoolctl.__version__.split(".")[:2])
    except (AttributeError, ValueError):
        return False
    return (major, minor) >= (3, 4)


class GemmkitController(LibController):
    """threadpoolctl controller for gemmkit's thread pool (user_api and internal_api "gemmkit")."""

    user_api = "gemmkit"
    internal_api = "gemmkit"
    filename_prefixes = ("_core",)
    check_symbols = ("gemmkit_get_num_threads", "gemmkit_set_num_threads")

    # threadpoolctl builds the controller (calling get_version and set_additional_attributes) before
    # it looks at check_symbols, so nothing here may assume the file really is gemmkit's.
    def _fn(self, name, restype=None, argtypes=()):
        fn = getattr(self.dynlib, name, None)
        if fn is not None:
            fn.restype = restype
            fn.argtypes = list(argtypes)
        return fn

    def get_num_threads(self):
        fn = self._fn("gemmkit_get_num_threads", ctypes.c_int)
        return None if fn is None else fn()

    def set_num_threads(self, num_threads):
        fn = self._fn("gemmkit_set_num_threads", None, (ctypes.c_int,))
        if fn is not None:
            fn(int(num_threads))

    def get_version(self):
        return __version__ if hasattr(self.dynlib, "gemmkit_get_num_threads") else None

    def set_additional_attributes(self):
        fn = self._fn("gemmkit_get_arch", ctypes.c_char_p)
        arch = fn() if fn is not None else None
        self.arch = arch.decode() if arch else None


if _threadpoolctl_supported():
    threadpoolctl.register(GemmkitController)
