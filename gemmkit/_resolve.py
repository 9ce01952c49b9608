"""The one place that turns NumPy arrays into what the row-major GEMM core takes: a view whose rows are
contiguous, a transpose flag and a leading dimension, copying only a matrix with no unit-stride axis.

Used by gemmkit.matmul and gemmkit.gemm (and by gemmkit.blas). Works on the last two axes, so a stack of
matrices resolves once for all of them (they share their strides).
"""
import numpy as np


def row_major_ld(x):
    """The leading dimension (elements between rows) with which the core can read the last two axes of
    `x` as they are: rows `ld` apart, unit stride along a row, ld >= max(1, cols); None if it cannot.

    A size-1 axis may have any stride (it is never stepped along), and an empty matrix any strides.
    """
    rows, cols = x.shape[-2], x.shape[-1]
    itemsize = x.dtype.itemsize
    if rows == 0 or cols == 0:
        return max(1, cols)
    if not (x.dtype.isnative and x.flags.aligned):
        return None
    if cols > 1 and x.strides[-1] != itemsize:
        return None
    if rows == 1:
        return max(1, cols)
    row_stride = x.strides[-2]
    if row_stride <= 0 or row_stride % itemsize:
        return None
    ld = row_stride // itemsize
    return ld if ld >= max(1, cols) else None


def _swap_last_axes(x):
    return np.swapaxes(x, -1, -2)


def _native_c_order_copy(x):
    return np.ascontiguousarray(x, dtype=x.dtype.newbyteorder("="))


def resolve_operand(x):
    """How the row-major core reads an input matrix (or stack of matrices, last two axes) as it is.

    - rows contiguous: `x` itself, trans False, ld = row stride in elements;
    - columns contiguous: the transposed view (its rows are x's columns), trans True: the core reads
      that view with 'T' and gets x back;
    - neither (no unit-stride axis, negative or overlapping strides, non-native byte order,
      misaligned): a C-ordered copy, trans False.

    No copy is made in the first two cases. Callers combine `trans` with their own transpose by xor.

    Parameters
    ----------
    x : ndarray
        At least 2-D; any dtype, layout and strides.

    Returns
    -------
    view : ndarray
        What the core reads: `x`, its transposed view, or a C-ordered native copy.
    trans : bool
        True when `view` is x's transposed view (the core reads it with 'T').
    ld : int
        The leading dimension of `view` (elements between its rows, at least 1).

    Raises
    ------
    ValueError
        `x` with fewer than 2 dimensions.

    Examples
    --------
    >>> import numpy as np
    >>> from gemmkit._resolve import resolve_operand
    >>> a = np.zeros((3, 5), order="F")
    >>> view, trans, ld = resolve_operand(a)
    >>> view.shape, trans, ld, np.shares_memory(view, a)
    ((5, 3), True, 3, True)
    >>> resolve_operand(np.zeros((4, 6))[:, ::2])[1:]      # no unit-stride axis: a copy
    (False, 3)
    """
    if x.ndim < 2:
        raise ValueError(f"resolve_operand needs a matrix or a stack of matrices, got {x.ndim}-D")
    ld = row_major_ld(x)
    if ld is not None:
        return x, False, ld
    xt = _swap_last_axes(x)
    ld = row_major_ld(xt)
    if ld is not None:
        return xt, True, ld
    copy = _native_c_order_copy(x)
    return copy, False, max(1, copy.shape[-1])


class ResolvedOutput:
    """Where the core writes a result matrix (or stack) `out`.

    target: the view the core writes, rows contiguous, with leading dimension ld;
    transposed: True when target is out's transposed view (out has contiguous columns): the caller
        then computes C^T = op(B)^T op(A)^T into it;
    copy_back: the array to copy target into after the computation (out itself when it has no
        unit-stride axis and target is a temporary), else None.
    """
    __slots__ = ("target", "transposed", "ld", "copy_back")

    def __init__(self, target, transposed, ld, copy_back):
        self.target, self.transposed, self.ld, self.copy_back = target, transposed, ld, copy_back

    def finish(self):
        """Copies a temporary result into out (no arithmetic); nothing to do otherwise."""
        if self.copy_back is not None:
            self.copy_back[...] = self.target


def resolve_output(out, reads_c):
    """ResolvedOutput for the result array `out` (last two axes: the M x N matrix). `reads_c`: the
    product reads C's old values (beta != 0), so a temporary must start as a copy of out."""
    if out.ndim < 2:
        raise ValueError(f"resolve_output needs a matrix or a stack of matrices, got {out.ndim}-D")
    ld = row_major_ld(out)
    if ld is not None:
        return ResolvedOutput(out, False, ld, None)
    out_t = _swap_last_axes(out)
    ld = row_major_ld(out_t)
    if ld is not None:
        return ResolvedOutput(out_t, True, ld, None)
    native = out.dtype.newbyteorder("=")
    tmp = _native_c_order_copy(out) if reads_c else np.empty(out.shape, native)
    return ResolvedOutput(tmp, False, max(1, tmp.shape[-1]), out)


def batch_stride(x):
    """Elements between consecutive matrices of the stack `x` (3-D: axis 0 is the batch) as the core
    takes it: >= 0, a whole number of elements; 0 for a 2-D `x` or a batch of one; None if the batch
    axis cannot be passed as it is (negative or misaligned stride: the caller copies)."""
    if x.ndim < 3 or x.shape[0] <= 1:
        return 0
    stride = x.strides[0]
    if stride < 0 or stride % x.dtype.itemsize:
        return None
    return stride // x.dtype.itemsize
