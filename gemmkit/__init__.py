"""gemmkit: BLAS-style GEMM kernels (s/d/c/z gemm, u8s8s32, s8s8s32) with runtime CPU dispatch.

For NumPy arrays: gemmkit.matmul(a, b, out=None) (np.matmul's rules) and
gemmkit.gemm(a, b, c=None, *, alpha=1.0, beta=0.0, trans_a=False, trans_b=False).

The core functions mirror oneDNN's BLAS-like API (row-major, C updated in place and returned):

    gemmkit.sgemm(transa, transb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc)
    gemmkit.dgemm(...), gemmkit.cgemm(...), gemmkit.zgemm(...)   (c/z: trans 'C' = conjugate transpose)
    gemmkit.gemm_u8s8s32(transa, transb, offsetc, M, N, K, alpha, A, lda, ao, B, ldb, bo, beta, C, ldc, co)
    gemmkit.gemm_s8s8s32(...)
"""
# Imported under private names: dir(gemmkit) lists the API (and gemmkit's public submodules) only.
import contextlib as _contextlib
import os as _os
from os import environ as _environ

from ._version import __version__


def _extension_missing_message():
    """The one line to show when `gemmkit._core` (the compiled extension) is not beside this file:
    Python found the source folder (e.g. run from a checkout) instead of an installed gemmkit."""
    here = _os.path.dirname(_os.path.realpath(__file__))
    return (f"gemmkit's compiled extension is not built here: you are importing the source folder {here}; "
            "install it (pip install .) and run from another folder, or use the `gemmkit` command")


try:
    from . import _core
except ImportError as _e:
    # Only the case "no _core extension file at all" gets the short message; an extension that is
    # there but fails to load (missing symbol, wrong Python) keeps its own error.
    try:
        _files = _os.listdir(_os.path.dirname(_os.path.abspath(__file__)))
    except OSError:  # not a plain folder (zip import, ...): keep Python's own error
        raise _e from None
    if not any(f.startswith("_core.") and f.endswith((".so", ".pyd")) for f in _files):
        raise ImportError(_extension_missing_message(), name=__name__) from None
    raise
from ._core import (cgemm, dgemm, gemm_s8s8s32, gemm_u8s8s32, get_num_threads, sgemm, zgemm)
from ._matmul import gemm, matmul
from ._core import bf16gemm, hgemm  # float16 / bfloat16 core functions (float arithmetic, rounded once)
from ._core import gemm_bf16bf16f32  # bfloat16 operands, float32 C

__all__ = ["matmul", "gemm", "sgemm", "dgemm", "cgemm", "zgemm", "gemm_u8s8s32", "gemm_s8s8s32", "set_num_threads", "get_num_threads",
           "show_config", "use_arch", "set_arch", "get_arch", "available_archs", "__version__"]

__all__ += ["hgemm", "bf16gemm", "gemm_bf16bf16f32"]
__all__ += ["threads_limit"]  # a per-thread cap on gemmkit's threads

ARCHS = _core.ARCHS


def set_num_threads(n):
    """Set the number of threads of later calls.

    Parameters
    ----------
    n : int
        Threads; ``n <= 0`` restores the default (``GEMMKIT_NUM_THREADS``, else the CPUs this process may
        run on). Small problems run on the calling thread whatever ``n`` is. Results do not depend on it.

    Raises
    ------
    TypeError
        ``n`` not an integer.

    See Also
    --------
    get_num_threads
    threadpoolctl.threadpool_limits : limits gemmkit's pool (user_api ``"gemmkit"``) for a block.

    Examples
    --------
    >>> import gemmkit
    >>> before = gemmkit.get_num_threads()
    >>> gemmkit.set_num_threads(1); gemmkit.get_num_threads()
    1
    >>> gemmkit.set_num_threads(before)
    """
    _core.set_num_threads(n)


@_contextlib.contextmanager
def threads_limit(n):
    """A context manager capping the threads of gemmkit calls made from this thread.

    Other threads and the process-wide count (:func:`set_num_threads`, threadpoolctl) are not changed, and
    the previous cap is restored on exit; ``gemmkit.dask``'s tasks run under it.

    Parameters
    ----------
    n : int
        The most threads one call from this thread may use; ``n <= 0``: no cap.

    Returns
    -------
    context manager
        Entering it sets the cap (the ``with`` target is None); leaving it restores the previous one.

    Raises
    ------
    TypeError
        ``n`` not an integer.

    Examples
    --------
    >>> import numpy as np, gemmkit
    >>> with gemmkit.threads_limit(1):      # this thread's calls run on one thread
    ...     c = gemmkit.matmul(np.ones((300, 300)), np.ones((300, 300)))
    >>> float(c[0, 0])
    300.0
    """
    previous = _core.set_thread_limit(n)
    try:
        yield
    finally:
        _core.set_thread_limit(previous)


def available_archs():
    """The kernel paths this CPU and this build can run, best last.

    Asked of the C core (CPUID and XGETBV); the path in use does not change.

    Returns
    -------
    list of str
        Names from ``gemmkit.ARCHS``: ``'generic'`` always, then e.g. ``'avx2'``, ``'avx512'``,
        ``'avx512_vnni'``.

    Examples
    --------
    >>> import gemmkit
    >>> gemmkit.available_archs()[0]
    'generic'
    """
    return [name for name in ARCHS if _core.arch_supported(name)]


def set_arch(name=None):
    """Force a kernel path for every later call (``GEMMKIT_ARCH`` does so at import).

    Parameters
    ----------
    name : str or None
        One of ``gemmkit.ARCHS``; None selects the best path for this CPU.

    Raises
    ------
    ValueError
        An unknown name.
    RuntimeError
        A path this CPU or build cannot run.

    See Also
    --------
    use_arch : the same for a ``with`` block.

    Examples
    --------
    >>> import gemmkit
    >>> gemmkit.set_arch("generic"); gemmkit.get_arch()
    'generic'
    >>> gemmkit.set_arch(None)
    """
    if name is not None and name not in ARCHS:
        raise ValueError(f"unknown kernel path {name!r}; expected one of {', '.join(ARCHS)}")
    _core.set_arch(name)


def get_arch():
    """The name of the kernel path in use.

    Returns
    -------
    str
        One of ``gemmkit.available_archs()``.

    Examples
    --------
    >>> import gemmkit
    >>> gemmkit.get_arch() in gemmkit.available_archs()
    True
    """
    return _core.get_arch()


@_contextlib.contextmanager
def use_arch(name):
    """Run a ``with`` block on kernel path ``name`` (for tests, comparisons and bug reports).

    The previous path is restored on exit, exceptions included. Not thread-safe: the path is process-wide.

    Parameters
    ----------
    name : str
        One of ``gemmkit.available_archs()``.

    Returns
    -------
    context manager
        Entering it switches the path (the ``with`` target is None); leaving it restores the previous one.

    Raises
    ------
    ValueError, RuntimeError
        As :func:`set_arch`.

    Examples
    --------
    >>> import numpy as np, gemmkit
    >>> with gemmkit.use_arch("generic"):
    ...     gemmkit.matmul(np.eye(2), np.ones((2, 2)))
    array([[1., 1.],
           [1., 1.]])
    """
    previous = _core.get_arch()
    set_arch(name)
    try:
        yield
    finally:
        _core.set_arch(previous)


def show_config(print_out=True):
    """What runs here: CPU, its features, the kernel path, each kernel and its blocking, threads.

    Parameters
    ----------
    print_out : bool, default True
        Print the summary (``gemmkit info`` prints the same).

    Returns
    -------
    dict
        ``version``, ``cpu`` (vendor, family, model), ``cpu_features``, ``arch`` (the path in use), ``uarch``
        (the configuration it is tuned for), ``available_archs``, ``num_threads``, one entry per kernel
        family (``sgemm``, ``dgemm``, ``cgemm``, ``zgemm``, ``int8``, ``gemv``), ``quantize`` (the per-token
        quantizer's kernel) and the ``GEMMKIT_*`` environment variables.

    Examples
    --------
    >>> import gemmkit
    >>> info = gemmkit.show_config(print_out=False)
    >>> info["arch"] == gemmkit.get_arch()
    True
    """
    info = {
        "version": __version__,
        "cpu_features": _core.cpu_features(),
        "available_archs": available_archs(),
        "num_threads": get_num_threads(),
        "cpu": _core.cpu_identity(),
        "GEMMKIT_ARCH": _environ.get("GEMMKIT_ARCH"),
        "GEMMKIT_UARCH": _environ.get("GEMMKIT_UARCH"),
        "GEMMKIT_NUM_THREADS": _environ.get("GEMMKIT_NUM_THREADS"),
    }
    info.update(_core.kernel_info())
    info["quantize"] = _core.quantize_kernel_name()
    info.update(_tuning_info())  # caches, every parameter and its source, the tuning file
    if print_out:
        feats = ", ".join(k for k, v in info["cpu_features"].items() if v) or "none beyond baseline"
        q = info["int8"]
        print(f"gemmkit {info['version']}")
        cpu = info["cpu"]
        print(f"  cpu          : {cpu['vendor']} family {cpu['family']:#x} model {cpu['model']:#x}")
        print(f"  cpu features : {feats}")
        print(f"  kernel path  : {info['arch']} (tuned for: {info['uarch']}; "
              f"available: {', '.join(info['available_archs'])})")
        for op in ("sgemm", "dgemm", "cgemm", "zgemm"):
            s = info[op]
            how = " (1m: complex on the real kernel)" if op in ("cgemm", "zgemm") and op not in s["kernel"] else ""
            print(f"  {op} kernel : {s['kernel']}{how}  MR={s['MR']} NR={s['NR']} MC={s['MC']} KC={s['KC']} "
                  f"NC={s['NC']}")
        print(f"  int8 kernel  : {q['kernel']}  MR={q['MR']} NR={q['NR']} k_group={q['k_group']} "
              f"MC={q['MC']} K_chunk={q['K_chunk']} NC={q['NC']} KB={q['KB']}")
        if q["short_k_kernel"]:
            g = q["k_group"]
            print(f"  int8 short K : {q['short_k_kernel']} for {g} < K <= {3 * g // 2} (the second group mostly padding)")
        b = info["bf16"]
        if b["k_group"] == 2:
            print(f"  bf16 kernel  : {b['kernel']}  MR={b['MR']} NR={b['NR']} MC={b['MC']} KC={b['KC']} (k pairs) "
                  f"NC={b['NC']}")
        else:
            print(f"  bf16 kernel  : widened to float32 on {b['kernel']} (no bfloat16 unit on this path)")
        print(f"  quantize     : {info['quantize']} (per-token int8 activations)")
        g = info["gemv"]
        print(f"  gemv         : M <= {g['max_M']} or N <= {g['max_N']}, the big operand streamed in place, "
              f"prefetch {g['prefetch_bytes']} bytes ahead per stream" + (" (none)" if not g["prefetch_bytes"] else ""))
        print(f"  threads      : {info['num_threads']}")
        _print_tuning_info(info)
    return info


# ---- cache hierarchy, blocking sources and the tuning file (gemmkit/_tuning_file.py) ----

def _tuning_info():
    from . import _tuning_file
    return {"caches": _core.cache_hierarchy(), "params": _core.params(),
            "tuning": {"status": _tuning_file.state["status"], "path": _tuning_file.state["path"]}}


def _print_tuning_info(info):
    c = info["caches"]
    levels = ", ".join(f"{k} {c[k]['size'] // 1024} KiB {c[k]['ways']}-way"
                       + (f" (shared by {c[k]['sharing']} cores)" if c[k]["sharing"] > 1 else "")
                       for k in ("L1d", "L2", "L3") if c[k]["size"])
    print(f"  caches       : {levels or 'unknown'} (read from {c['source']})")
    t = info["tuning"]
    print(f"  tuning file  : {t['status']}" + (f" [{t['path']}]" if t["path"] else ""))
    by_source = {}
    for name, (value, source) in info["params"].items():
        by_source.setdefault(source, []).append(f"{name}={value}")
    for source, items in by_source.items():
        print(f"  from {source:<12}: " + ", ".join(items))


def _apply_env_arch():
    name = _environ.get("GEMMKIT_ARCH")
    if name:
        if name not in ARCHS and name != "auto":
            raise ImportError(f"GEMMKIT_ARCH={name!r} is not a kernel path; expected one of {', '.join(ARCHS)}")
        try:
            _core.set_arch(None if name == "auto" else name)
        except RuntimeError as e:
            raise ImportError(f"GEMMKIT_ARCH={name!r}: {e}") from None


def _warn_env_threads():
    """GEMMKIT_NUM_THREADS that is not a thread count (3abc, 2.5, 0): the core uses the default; said here."""
    text = _os.environ.get("GEMMKIT_NUM_THREADS")
    if text is not None and text.strip() and _core.parse_num_threads(text) == 0:
        import warnings
        warnings.warn(f"GEMMKIT_NUM_THREADS={text!r} ignored: expected a whole number of threads from 1 to 256; "
                      f"the default ({_core.get_num_threads()}) is used", RuntimeWarning, stacklevel=3)


_apply_env_arch()
_warn_env_threads()
from . import _tuning_file  # noqa: E402  (GEMMKIT_BLOCKING and the tuning file, applied once here)
_tuning_file.load_at_import()
from . import _threadpoolctl  # noqa: E402,F401  (registers gemmkit with threadpoolctl when it is installed)
del _contextlib, _os  # needed while the module is made only
