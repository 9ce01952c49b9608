"""gemmkit.blas: a drop-in for the gemm calls of `scipy.linalg.blas` (sgemm, dgemm, cgemm, zgemm with
SciPy's signature and behaviour, get_blas_funcs, find_best_blas_type, scipy_patched); every other name
is SciPy's own.

    from gemmkit import blas                  # instead of: from scipy.linalg import blas
    c = blas.dgemm(1.0, a, b, trans_b=1)

The gemm functions follow SciPy's f2py wrappers, as found by experiment and tested against them: every
argument converted by f2py's own rules, in its order (gemmkit._f2py): inputs cast to the routine's dtype
(complex to real with NumPy's ComplexWarning), 0-d, 1-D and 3-D inputs read as f2py reads them, trans
0 / 1 / 2 (2: conjugate transpose), the result a new Fortran-ordered array unless `overwrite_c` is set
and `c` has the routine's dtype and is Fortran-contiguous (then `c` itself is written and returned),
beta = 0 never reading c, empty products where f2py makes them and its exceptions where it refuses.
Unlike SciPy, a or b with a unit-stride axis (C or Fortran order, slices, transposes) is never copied:
the resolver of gemmkit._resolve passes it with trans flags and leading dimensions; and a read-only `c`
is not written in place (SciPy writes it).
"""
import contextlib
import functools
import threading

import numpy as np

from . import _core, _f2py, _fastpaths
from ._resolve import resolve_operand

try:
    import scipy.linalg.blas as _scipy_blas
except ImportError:  # SciPy is optional: gemm works without it
    _scipy_blas = None


def _scipy_error_class():
    """SciPy's `_fblas.error` (it has no public name; its wrappers raise it), or None."""
    try:
        _scipy_blas.dgemm(1.0, [[1.0]], [[1.0], [1.0]])
    except Exception as e:  # the inner dimensions differ
        return type(e)
    return None


_ERROR_DOC = """The exception the gemm routines raise for arguments that do not fit (SciPy's ``_fblas.error``).

    With SciPy installed this is SciPy's own class (``except blas.error`` also catches what SciPy's other
    BLAS routines raise), else a subclass of Exception; f2py's conversion errors are ValueError and
    TypeError instead.

    Parameters
    ----------
    message : str
        What failed: the check f2py's wrapper makes and the values it saw.

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import blas
    >>> try:
    ...     blas.dgemm(1.0, np.ones((2, 3)), np.ones((4, 2)))     # inner dimensions 3 and 4
    ... except blas.error as e:
    ...     print(e)
    (trans_b?kb==k:ldb==k) failed for hidden n: dgemm:n=2
    """

error = _scipy_error_class() if _scipy_blas is not None else None
if error is None or error in (ValueError, TypeError):
    class error(Exception):  # noqa: N801 (SciPy's name)
        pass
if not error.__doc__:  # f2py gives SciPy's class none; a class of SciPy's that has one keeps it
    try:
        error.__doc__ = _ERROR_DOC
    except (AttributeError, TypeError):  # a static type: its docstring is fixed
        pass

__all__ = ["sgemm", "dgemm", "cgemm", "zgemm", "get_blas_funcs", "find_best_blas_type", "scipy_patched", "error"]

_DTYPES = {"s": np.dtype(np.float32), "d": np.dtype(np.float64), "c": np.dtype(np.complex64),
           "z": np.dtype(np.complex128)}


# Which core trans flag reads op(x)^T from the row-major view R of x (R = x, or R = x^T when flipped):
# op = x (0): x^T; op = x^T (1): x; op = x^H (2): conj(x) = (x^T)^H, or 'R' (conjugate, no transpose).
_FLAG = {(0, False): "T", (0, True): "N", (1, False): "N", (1, True): "T", (2, False): "R", (2, True): "C"}


# The attributes SciPy's get_blas_funcs gives the routines it returns, with its values for the 32-bit
# integer (LP64) routines of its Fortran module; an ILP64 or CBLAS routine gets a variant (_variant_like).
def _scipy_attributes(prefix):
    return {"module_name": "fblas", "typecode": prefix, "dtype": _DTYPES[prefix], "int_dtype": np.dtype(np.intc),
            "prefix": prefix}


def _make_gemm(prefix, attributes=None):
    dtype = _DTYPES[prefix]
    cplx, single = dtype.kind == "c", dtype in (np.float32, np.complex64)
    core = getattr(_core, prefix + "gemm")
    fn = prefix + "gemm"

    def scalar(x, name, which):
        """alpha/beta as f2py converts them (double_from_pyobj, complex_double_from_pyobj), then rounded
        to the routine's scalar type (an overflow to infinity, as the C cast gives)."""
        kind = ("complex_float" if single else "complex_double") if cplx else ("float" if single else "double")
        errmess = f"_fblas.{fn}() {which} ({name}) can't be converted to {kind}"
        if cplx:
            z = _f2py.complex_from_pyobj(x, errmess)
        else:
            z = _f2py.double_from_pyobj(x, errmess)
        if single:
            with np.errstate(over="ignore"):
                z = complex(np.complex64(z)) if cplx else float(np.float32(z))
        return z

    def trans(t, name, which):
        if t is None:
            return 0
        v = _f2py.int_from_pyobj(t, f"_fblas.{fn}() {which} ({name}) can't be converted to int")
        if not 0 <= v <= 2:
            raise error(f"({name}>=0 && {name} <=2) failed for {which} {name}: {fn}:{name}={v}")
        return v

    def matrix(x, which):
        """a or b as f2py reads it, (lda, ka): a 2-D array of the routine's dtype, a view where the
        dtype already fits and x is 2-D (any layout: the resolver needs no copy)."""
        arr, dims = _f2py.array_from_pyobj(x, dtype, (-1, -1), f"_fblas.{fn}: failed to create array from {which}",
                                           lambda arr: True)
        return (arr if arr.ndim == 2 else arr.reshape(dims, order="F")), dims

    def general(alpha, a, b, beta=0.0, c=None, trans_a=0, trans_b=0, overwrite_c=0):
        """Everything the fast path (_fastpaths.blas_gemm_fast) leaves, in the order of SciPy's f2py
        wrapper: overwrite_c (parsed with the arguments), trans_a, trans_b, alpha, beta, a, b, the inner
        dimensions, c and its shape."""
        in_place = _f2py.parse_int(overwrite_c, f"{fn}() overwrite_c") != 0
        ta, tb = trans(trans_a, "trans_a", "3rd keyword"), trans(trans_b, "trans_b", "4th keyword")
        al = scalar(alpha, "alpha", "1st argument")
        be = 0.0 if beta is None else scalar(beta, "beta", "1st keyword")
        a2, (lda, ka) = matrix(a, "the 2nd argument `a`")
        b2, (ldb, kb) = matrix(b, "the 3rd argument `b`")
        m, k = (ka, lda) if ta else (lda, ka)
        n = ldb if tb else kb
        if (kb if tb else ldb) != k:
            raise error(f"(trans_b?kb==k:ldb==k) failed for hidden n: {fn}:n={n}")
        if c is None:  # SciPy's c is zeros: beta only matters when it is not finite (nan * 0)
            if np.isfinite(be):
                result = np.empty((m, n), dtype, order="F")
                be = 0.0
            else:
                result = np.zeros((m, n), dtype, order="F")
        else:
            # in place: f2py's rule (dtype, Fortran order, aligned), except that a read-only c is copied
            result, dims = _f2py.array_from_pyobj(
                c, dtype, (m, n), f"_fblas.{fn}: failed to create array from the 2nd keyword `c`",
                lambda arr: in_place and arr.flags.f_contiguous and arr.flags.aligned and arr.flags.writeable)
            if dims != [m, n]:
                raise error("(shape(c,0)==m && shape(c,1)==n) failed for 2nd keyword c")
        if m and n:
            # f2py passes c's Fortran-ordered data as m x n; read row-major that is C^T (n x m):
            # C^T = op(b)^T op(a)^T
            out = result.reshape((m, n), order="F")
            ra, flip_a, lda = resolve_operand(a2)
            rb, flip_b, ldb = resolve_operand(b2)
            fa, fb = _FLAG[(ta if cplx or ta < 2 else 1, flip_a)], _FLAG[(tb if cplx or tb < 2 else 1, flip_b)]
            core(fb, fa, n, m, k, al, rb, ldb, ra, lda, be, out.T, max(1, m))
        return result

    typenum, fast = dtype.num, _fastpaths.blas_gemm_fast

    def gemm(alpha, a, b, beta=0.0, c=None, trans_a=0, trans_b=0, overwrite_c=0):
        r = fast(typenum, alpha, a, b, beta, c, trans_a, trans_b, overwrite_c)  # the common call, or None
        return r if r is not None else general(alpha, a, b, beta, c, trans_a, trans_b, overwrite_c)

    gemm.__name__ = gemm.__qualname__ = fn
    gemm.__doc__ = f"""``scipy.linalg.blas.{fn}`` on gemmkit's kernels: c := alpha * op(a) @ op(b) + beta * c, {dtype}.

    Arguments are converted as SciPy's f2py wrapper converts them, in its order, and raise the same
    exception types; a or b with a unit-stride axis is never copied (SciPy copies all but Fortran order).

    Parameters
    ----------
    alpha : scalar
        Converted as f2py converts numbers ({'the real part of a complex, ' if dtype.kind == 'f' else ''}numeric strings,
        the first item of a sequence), then rounded to {dtype}.
    a, b : array_like
        Matrices (lists, scalars as 1 x 1, 1-D arrays as columns), cast to {dtype}.
    beta : scalar, optional
        0 by default: c is then not read.
    c : array_like, optional
        (m, n). Written in place and returned when ``overwrite_c`` is set and c is a writable
        Fortran-contiguous {dtype} array; else a new array is returned.
    trans_a, trans_b : int, optional
        0 (x), 1 (x^T) or 2 (x^H).
    overwrite_c : int, optional

    Returns
    -------
    ndarray
        (m, n), Fortran order, {dtype}.

    Raises
    ------
    gemmkit.blas.error
        Shapes that do not fit, a trans flag out of range (SciPy's ``_fblas.error``).
    ValueError, TypeError
        Arguments f2py cannot convert.

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import blas
    >>> blas.{fn}(2, [[1, 2]], [[3], [4]])
    array([[22.{'+0.j' if dtype.kind == 'c' else ''}]]{'' if dtype in (np.float64, np.complex128) else ', dtype=' + dtype.name})
    """
    for name, value in (_scipy_attributes(prefix) if attributes is None else attributes).items():
        setattr(gemm, name, value)
    return gemm


sgemm = _make_gemm("s")
dgemm = _make_gemm("d")
cgemm = _make_gemm("c")
zgemm = _make_gemm("z")
_GEMMS = {"sgemm": sgemm, "dgemm": dgemm, "cgemm": cgemm, "zgemm": zgemm}


# ---- the module's other names ---------------------------------------------------------------------

_PREFIX_OF_KIND = {"f": "d", "c": "z"}
_BEST = {np.dtype(np.float32): "s", np.dtype(np.float64): "d", np.dtype(np.complex64): "c",
         np.dtype(np.complex128): "z"}


def find_best_blas_type(arrays=(), dtype=None):
    """SciPy's choice of BLAS routine prefix for arrays or a dtype.

    Parameters
    ----------
    arrays : sequence of ndarray, optional
    dtype : dtype, optional

    Returns
    -------
    prefix : str
        ``'s'``, ``'d'``, ``'c'`` or ``'z'``.
    dtype : numpy.dtype
    prefer_fortran : bool

    Raises
    ------
    AttributeError, TypeError
        An element of ``arrays`` that is not an array, or a ``dtype`` NumPy does not know (SciPy's
        function raises the same).

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import blas
    >>> blas.find_best_blas_type((np.ones(2, np.float32),))[0]
    's'
    """
    if _scipy_blas is not None:
        return _scipy_blas.find_best_blas_type(arrays, dtype)
    dt = np.result_type(*[np.asarray(x).dtype for x in arrays], *([dtype] if dtype is not None else [])) \
        if arrays or dtype is not None else np.dtype(np.float64)
    prefix = _BEST.get(dt, "z" if dt.kind == "c" else ("s" if dt in (np.float16,) else "d"))
    prefer_fortran = bool(arrays) and any(np.asarray(x).flags.f_contiguous and not np.asarray(x).flags.c_contiguous
                                          for x in arrays)
    return prefix, _DTYPES[prefix], prefer_fortran


def _attributes_of(func):
    """The attributes get_blas_funcs set on SciPy's routine `func` (its public instance attributes), as a
    sorted tuple of items, or None when one of them cannot be a dictionary key."""
    items = tuple(sorted((k, v) for k, v in getattr(func, "__dict__", {}).items() if not k.startswith("_")))
    try:
        hash(items)
    except TypeError:
        return None
    return items


_LP64_ATTRIBUTES = {fn.typecode: _attributes_of(fn) for fn in _GEMMS.values()}
_variants_lock = threading.Lock()
_variants = {}  # (prefix, SciPy's attributes) -> gemmkit's gemm carrying them, made once


def _variant_like(prefix, attributes):
    """gemmkit's `prefix`gemm carrying `attributes` (SciPy's, for a routine SciPy resolved differently:
    ILP64, or CBLAS): a routine of its own, since SciPy's attributes of one routine differ between them."""
    with _variants_lock:
        fn = _variants.get((prefix, attributes))
        if fn is None:
            fn = _variants[(prefix, attributes)] = _make_gemm(prefix, dict(attributes))
        return fn


def _swap_in_gemm(name, func):
    """gemmkit's gemm in place of SciPy's `func` found for routine `name`, with the attributes SciPy set on
    `func` (the module's own sgemm ... zgemm when they are SciPy's 32-bit Fortran values); other routines
    unchanged."""
    if not (isinstance(name, str) and name.lower() == "gemm"):
        return func
    mine = _GEMMS.get(getattr(func, "typecode", "") + "gemm")
    if mine is None:
        return func
    attributes = _attributes_of(func)
    if attributes is None or attributes == _LP64_ATTRIBUTES[mine.typecode]:
        return mine
    return _variant_like(mine.typecode, attributes)


def _with_gemmkit_gemm(names, funcs):
    if isinstance(names, str):
        return _swap_in_gemm(names, funcs)
    return [_swap_in_gemm(n, f) for n, f in zip(names, funcs)]


@functools.lru_cache(maxsize=None)
def _funcs_without_scipy(names, prefix):
    out = []
    for name in names:
        full = prefix + name
        if full not in _GEMMS:
            raise ValueError(f"BLAS function {full} could not be found: gemmkit.blas has only gemm without SciPy "
                             f"(install scipy for the other routines)")
        out.append(_GEMMS[full])
    return out


def get_blas_funcs(names, arrays=(), dtype=None, ilp64=False):
    """``scipy.linalg.blas.get_blas_funcs`` with gemm resolved to gemmkit's routines.

    Parameters
    ----------
    names : str or sequence of str
        BLAS routine names without prefix (``'gemm'``, ``'axpy'``, ...).
    arrays : sequence of ndarray, optional
        Arrays whose dtypes choose the prefix.
    dtype : dtype, optional
    ilp64 : bool or 'preferred', optional
        As SciPy's: True asks for the routines with 64-bit integers (an error where SciPy's BLAS has
        none), ``'preferred'`` for them where there are, else the 32-bit ones.

    Returns
    -------
    function or list of functions
        gemm is gemmkit's (the same objects on every call) with the attributes and values SciPy's
        get_blas_funcs gives its own: ``typecode``, ``dtype``, ``int_dtype``, ``module_name`` and ``prefix``
        (the 32-bit Fortran ones are ``blas.sgemm`` ... ``blas.zgemm``); every other routine is SciPy's own.

    Raises
    ------
    ValueError
        A routine SciPy does not have, one other than gemm when SciPy is not installed, or an ``ilp64``
        string other than ``'preferred'``.
    RuntimeError
        ``ilp64=True`` where SciPy has no ILP64 BLAS (or is not installed).

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit import blas
    >>> gemm, = blas.get_blas_funcs(('gemm',), (np.ones((2, 2)),))
    >>> gemm is blas.dgemm, gemm.typecode, gemm.int_dtype
    (True, 'd', dtype('int32'))
    """
    single = isinstance(names, str)
    if _scipy_blas is not None:
        return _with_gemmkit_gemm(names, _scipy_blas.get_blas_funcs(names, arrays, dtype, ilp64))
    # as a SciPy built with a 32-bit integer BLAS answers
    if isinstance(ilp64, str):
        if ilp64 != "preferred":
            raise ValueError("Invalid value for 'ilp64'")
        ilp64 = False
    if ilp64:
        raise RuntimeError("BLAS ILP64 routine requested, but gemmkit.blas without SciPy has only 32-bit BLAS "
                           "routines")
    prefix = find_best_blas_type(arrays, dtype)[0]
    funcs = _funcs_without_scipy((names,) if single else tuple(names), prefix)
    return funcs[0] if single else list(funcs)


def __getattr__(name):
    """Every other name of scipy.linalg.blas is SciPy's own."""
    if name.startswith("__"):
        raise AttributeError(name)
    if _scipy_blas is None:
        raise AttributeError(f"gemmkit.blas.{name}: not a gemm routine, and SciPy (which provides it) is not installed")
    try:
        return getattr(_scipy_blas, name)
    except AttributeError:
        raise AttributeError(f"module 'gemmkit.blas' has no attribute {name!r} (nor has scipy.linalg.blas)") from None


def __dir__():
    return sorted(set(globals()) | (set(dir(_scipy_blas)) if _scipy_blas is not None else set()))


_patch_lock = threading.Lock()
_patch_state = {"depth": 0, "saved": None}  # blocks inside scipy_patched (any thread); SciPy's originals


def _patch_scipy():
    """Swaps gemmkit's gemm into scipy.linalg.blas (and scipy.linalg.get_blas_funcs); returns what to restore."""
    import scipy.linalg as scipy_linalg
    targets = [(_scipy_blas, name, fn) for name, fn in _GEMMS.items()]
    targets += [(_scipy_blas, "get_blas_funcs", get_blas_funcs)]
    if getattr(scipy_linalg, "get_blas_funcs", None) is _scipy_blas.get_blas_funcs:
        targets.append((scipy_linalg, "get_blas_funcs", get_blas_funcs))
    saved = [(module, name, getattr(module, name)) for module, name, _ in targets]
    real_get = _scipy_blas.get_blas_funcs

    def patched_get(names, arrays=(), dtype=None, ilp64=False):
        return _with_gemmkit_gemm(names, real_get(names, arrays, dtype, ilp64))

    try:
        for module, name, fn in targets:
            setattr(module, name, patched_get if name == "get_blas_funcs" else fn)
    except BaseException:
        _restore(saved)
        raise
    return saved


def _restore(saved):
    for module, name, original in saved:
        setattr(module, name, original)


@contextlib.contextmanager
def scipy_patched():
    """A context manager that makes ``scipy.linalg.blas``'s gemm gemmkit's within a ``with`` block.

    Within the block ``scipy.linalg.blas.{s,d,c,z}gemm`` are gemmkit's and what ``get_blas_funcs`` (also
    ``scipy.linalg.get_blas_funcs``) returns for gemm is gemmkit's; everything is restored on exit, exceptions
    included. Modules that imported a SciPy gemm by name before the block keep what they imported.

    The patch is process-wide (SciPy's module attributes) and reference-counted under a lock: blocks may
    nest and may be entered and left from several threads in any order; SciPy's originals come back when
    the last open block, in whatever thread, is left (until then every thread sees gemmkit's gemm).

    Returns
    -------
    context manager
        The ``with`` target is None.

    Raises
    ------
    ImportError
        SciPy is not installed (on entering the block).

    Examples
    --------
    >>> import numpy as np, scipy.linalg
    >>> from gemmkit import blas
    >>> with blas.scipy_patched():
    ...     scipy.linalg.blas.dgemm is blas.dgemm
    True
    >>> scipy.linalg.blas.dgemm is blas.dgemm
    False
    """
    if _scipy_blas is None:
        raise ImportError("gemmkit.blas.scipy_patched needs SciPy")
    with _patch_lock:
        if _patch_state["depth"] == 0:
            _patch_state["saved"] = _patch_scipy()
        _patch_state["depth"] += 1
    try:
        yield
    finally:
        with _patch_lock:
            _patch_state["depth"] -= 1
            if _patch_state["depth"] == 0:
                saved, _patch_state["saved"] = _patch_state["saved"], None
                _restore(saved)
