"""gemmkit.dask: blockwise GEMM on Dask arrays, for products beyond one machine's memory or cores.
Each output block is one chain of tasks that accumulates its K blocks in place (beta = 1), in order.

    import dask.array as da, gemmkit.dask as gkd
    c = gkd.matmul(a, b)          # 2-D dask arrays, float32/float64/complex64/complex128 -> a dask array
    c.compute()                   # any scheduler: threads, processes, distributed

Unlike dask.array.matmul (each block product a new array, summed over K in a reduction tree of new
arrays), a task of chain (i, j) adds A[i, k] @ B[k, j] for a run of consecutive k into the one buffer
of C[i, j] that the chain's previous task made (runs long enough to amortise a task's scheduling,
`task_macs`): a task holds one C block and its A and B blocks, and the order of the sums is fixed (k
ascending), so results are deterministic whatever the scheduler does. Dask's tasks are the parallelism:
each task computes on one gemmkit thread (GEMMKIT_NUM_THREADS in a worker's environment overrides it),
so workers x threads per worker is the number of busy cores, never more. The cap holds for the task's
own thread only (gemmkit.threads_limit): gemmkit's thread count for the rest of the process is unchanged.
"""
import os

import numpy as np

try:
    import dask
    import dask.array as da
    from dask.base import tokenize
    from dask.highlevelgraph import HighLevelGraph
except ImportError as e:  # pragma: no cover - exercised only without dask
    raise ImportError("gemmkit.dask needs Dask: pip install 'dask[array]' (and 'distributed' for a cluster)") from e

import gemmkit
from . import _args, _core
from ._matmul_per_token import PackedWeight
from ._matmul import BATCH_DTYPES

__all__ = ["matmul", "matmul_per_token", "DEFAULT_BLOCK_BYTES"]

# What one task may hold (one A, one B and one C block) when a K chunk size has to be chosen.
DEFAULT_BLOCK_BYTES = 256 << 20
# Multiply-adds one task should carry at least: consecutive K blocks of a chain are grouped into one
# task until it does (a 1024^3 block product is ~1.1e9; each task costs a scheduler round trip and
# a worker that sits idle while it waits for the next one).
DEFAULT_TASK_MACS = 4.0e9


def _task_threads():
    """gemmkit threads for one task, applied as a cap on the task's own thread (gemmkit.threads_limit), so
    the process-wide count (set_num_threads) is never changed by a task. Dask's parallelism is its
    tasks: in a distributed worker (whose nanny sets OMP_NUM_THREADS=1 for the same reason), under the
    threaded scheduler (a pool of one thread per CPU) and the processes scheduler (one process per CPU),
    each task computes on one thread,
    unless GEMMKIT_NUM_THREADS is set in the worker's environment; only the synchronous scheduler, one
    task at a time, gives a task all the CPUs of the process."""
    env = _core.parse_num_threads(os.environ.get("GEMMKIT_NUM_THREADS", ""))  # as the core reads it
    if env > 0:
        return env
    try:
        from distributed import get_worker
        get_worker()
        return 1
    except (ImportError, ValueError):
        pass
    scheduler = dask.config.get("scheduler", None)
    if scheduler in ("sync", "synchronous", "single-threaded"):
        try:
            return max(1, len(os.sched_getaffinity(0)))
        except (AttributeError, OSError):
            return max(1, os.cpu_count() or 1)
    return 1


def _accumulate(c, a_blocks, b_blocks, dtype):
    """C block += A blocks[k] @ B blocks[k] for k in order, in place (c None: the chain's first task,
    into a new buffer)."""
    with gemmkit.threads_limit(_task_threads()):  # this task's thread only: the process keeps its count
        for a_block, b_block in zip(a_blocks, b_blocks):
            a_block = np.asarray(a_block, dtype=dtype)
            b_block = np.asarray(b_block, dtype=dtype)
            if c is None:
                c = np.empty((a_block.shape[0], b_block.shape[1]), dtype)
                gemmkit.gemm(a_block, b_block, c, beta=0.0)
            else:
                gemmkit.gemm(a_block, b_block, c, beta=1.0)
    return c


def _zeros(shape, dtype):
    return np.zeros(shape, dtype)


def _check_block_bytes(block_bytes, who):
    if isinstance(block_bytes, (bool, np.bool_)) or not isinstance(block_bytes, (int, np.integer)):
        raise TypeError(f"{who}: block_bytes must be an integer number of bytes, got "
                        f"{type(block_bytes).__name__} {block_bytes!r}")
    if block_bytes <= 0:
        raise ValueError(f"{who}: block_bytes must be > 0 (the bytes one task may hold), got {block_bytes}")


def _check_known_chunks(who, **arrays):
    """ValueError naming the array and axis whose chunk sizes Dask does not know (NaN)."""
    for name, x in arrays.items():
        for axis, n in enumerate(x.shape):
            if isinstance(n, float) and np.isnan(n):
                raise ValueError(f"{who}: {name} has unknown chunk sizes along axis {axis} (shape {x.shape}); "
                                 f"call {name}.compute_chunk_sizes() first")


def _k_chunks(a, b, dtype, block_bytes):
    """One K chunking for both operands: theirs when they agree, else blocks of equal size chosen so
    that one A block, one B block and one C block fit `block_bytes`."""
    if a.chunks[1] == b.chunks[0]:
        return a.chunks[1]
    K = a.shape[1]
    itemsize = np.dtype(dtype).itemsize
    m = max(a.chunks[0]) if a.chunks[0] else 1
    n = max(b.chunks[1]) if b.chunks[1] else 1
    room = block_bytes // itemsize - m * n
    kc = max(1, min(K, room // max(1, m + n)))
    return tuple([kc] * (K // kc) + ([K % kc] if K % kc else []))


def matmul(a, b, *, block_bytes=DEFAULT_BLOCK_BYTES, task_macs=DEFAULT_TASK_MACS):
    """a @ b for 2-D Dask arrays on gemmkit's kernels, one in-place chain of tasks per output block.

    Each output block accumulates its K blocks in place (beta = 1), k ascending, so the result is the same on
    every scheduler and for any ``task_macs``. Each task computes on one gemmkit thread under the threaded and
    processes schedulers and in distributed workers (``GEMMKIT_NUM_THREADS`` overrides), on all CPUs under the
    synchronous one.

    Parameters
    ----------
    a, b : dask.array.Array or array_like, 2-D
        NumPy arrays are wrapped by Dask. Their common dtype (NumPy's) must be float32, float64, complex64 or
        complex128.
    block_bytes : int, keyword-only
        When a's column chunks and b's row chunks differ, both are rechunked once along K to blocks sized so
        that a task's A, B and C blocks fit this many bytes (default ``DEFAULT_BLOCK_BYTES``, 256 MiB); a
        positive integer.
    task_macs : float, keyword-only
        Consecutive K blocks of an output block go into one task until it has this many multiply-adds
        (default 4e9; 1 gives a task per block).

    Returns
    -------
    dask.array.Array
        The product, with a's row chunks and b's column chunks; nothing is computed until asked.

    Raises
    ------
    ValueError
        Operands that are not 2-D, contracted dimensions that differ, unknown (NaN) chunk sizes along K, or
        a ``block_bytes`` that is not a positive integer (when the graph is built).
    TypeError
        A dtype without kernels.

    Examples
    --------
    >>> import numpy as np, dask.array as da, gemmkit.dask as gkd
    >>> a = da.ones((4, 6), chunks=2)
    >>> c = gkd.matmul(a, a.T)
    >>> c.compute(scheduler="threads")[0]
    array([6., 6., 6., 6.])
    """

    who = "gemmkit.dask.matmul"
    _args.operand(a, "a", who)
    _args.operand(b, "b", who)
    _check_block_bytes(block_bytes, who)
    a, b = da.asarray(a), da.asarray(b)
    if a.ndim != 2 or b.ndim != 2:
        raise ValueError(f"gemmkit.dask.matmul: a and b must be 2-D, got shapes {a.shape} and {b.shape}")
    _check_known_chunks(who, a=a, b=b)
    if a.shape[1] != b.shape[0]:
        raise ValueError(f"gemmkit.dask.matmul: a has {a.shape[1]} columns (shape {a.shape}) but b has "
                         f"{b.shape[0]} rows (shape {b.shape})")
    dtype = np.result_type(a.dtype, b.dtype)
    if dtype.name not in BATCH_DTYPES:
        raise TypeError(f"gemmkit.dask.matmul: result dtype {dtype} has no kernels (float32, float64, "
                        f"complex64, complex128)")
    kchunks = _k_chunks(a, b, dtype, block_bytes)
    a = a.rechunk((a.chunks[0], kchunks))
    b = b.rechunk((kchunks, b.chunks[1]))
    token = tokenize(a, b, "gemmkit.dask.matmul", task_macs)  # the graph depends on how K is grouped
    name = f"gemmkit-matmul-{token}"
    partial = f"gemmkit-matmul-partial-{token}"
    nk = len(kchunks)
    if isinstance(task_macs, bool) or not isinstance(task_macs, (int, float)) or not task_macs > 0:
        raise ValueError(f"gemmkit.dask.matmul: task_macs must be a positive number, got {task_macs!r}")
    layer = {}
    for i, m in enumerate(a.chunks[0]):
        for j, n in enumerate(b.chunks[1]):
            if nk == 0:  # K = 0: zeros
                layer[(name, i, j)] = (_zeros, (m, n), dtype)
                continue
            prev, k0 = None, 0
            while k0 < nk:
                k1, macs = k0, 0.0
                while k1 < nk and (k1 == k0 or macs < task_macs):
                    macs += float(m) * float(n) * float(kchunks[k1])
                    k1 += 1
                key = (partial, i, j, k0)
                layer[key] = (_accumulate, prev, [(a.name, i, k) for k in range(k0, k1)],
                              [(b.name, k, j) for k in range(k0, k1)], dtype)
                prev, k0 = key, k1
            layer[(name, i, j)] = prev
    graph = HighLevelGraph.from_collections(name, layer, dependencies=[a, b])
    return da.Array(graph, name, chunks=(a.chunks[0], b.chunks[1]), dtype=dtype)


# ---- per-token int8 ----------------------------------------------------------------------------------

_INT32_SAFE_K = (2**31 - 1) // (128 * 128)  # int8 x int8 sums of up to this many terms cannot leave int32


def _accumulate_int8(acc, x_block, w_block):
    """acc += x_block @ w_block, exact int32 (acc None: the first K block, into a new buffer)."""
    x_block = np.ascontiguousarray(x_block, dtype=np.int8)
    w_block = np.ascontiguousarray(w_block, dtype=np.int8)
    m, k = x_block.shape
    n = w_block.shape[1]
    first = acc is None
    if first:
        acc = np.empty((m, n), np.int32)
    with gemmkit.threads_limit(_task_threads()):  # this task's thread only: the process keeps its count
        gemmkit.gemm_s8s8s32("N", "N", "F", m, n, k, 1.0, x_block, max(1, k), 0, w_block, max(1, n), 0,
                             0.0 if first else 1.0, acc, max(1, n), np.zeros(1, np.int32))
    return acc


def _scale_tokens(acc, deq, token, bias, out_dtype):
    """The per-token epilogue on a block's exact sums (the same bits as quant.matmul_per_token)."""
    out = np.empty(acc.shape, np.dtype(out_dtype))
    target = out.view(np.uint16) if out.dtype.itemsize == 2 and out.dtype != np.float16 else out
    name = {"float32": "float32", "float16": "float16"}.get(out.dtype.name, "bfloat16")
    _core.per_token_scale_int32(name, np.ascontiguousarray(acc, dtype=np.int32),
                                np.ascontiguousarray(deq, dtype=np.float32),
                                np.ascontiguousarray(token, dtype=np.float32),
                                None if bias is None else np.ascontiguousarray(bias, dtype=np.float32), target)
    return out


def _out_dtype(out_dtype):
    if out_dtype in ("bfloat16",) or getattr(out_dtype, "__name__", None) == "bfloat16":
        import ml_dtypes
        return np.dtype(ml_dtypes.bfloat16)
    dt = np.dtype(out_dtype)
    if dt.name not in ("float16", "float32", "bfloat16"):
        raise TypeError(f"gemmkit.dask.matmul_per_token: out_dtype must be float16, bfloat16 or float32, got {dt}")
    return dt


def matmul_per_token(x, weight, deq_scale, per_token_scale, *, out_dtype="float16", bias=None,
                     block_bytes=DEFAULT_BLOCK_BYTES):
    """:func:`gemmkit.quant.matmul_per_token` for 2-D Dask arrays, bit-identical to it.

    Each output block sums its K blocks exactly in int32 (in place, k ascending) and applies the scales once
    at the end, through the same epilogue as the NumPy call.

    Parameters
    ----------
    x : dask.array.Array or array_like
        int8 (m, k).
    weight : dask.array.Array or array_like
        int8 (k, n); not a ``PackedWeight`` (this function splits the weight into blocks itself).
    deq_scale : array_like
        float32 (n,), one per output column (NumPy or Dask).
    per_token_scale : array_like
        float32 (m,), one per row of x.
    out_dtype : str, keyword-only
        ``"float16"`` (default), ``"bfloat16"`` or ``"float32"``.
    bias : array_like, optional, keyword-only
        float32 (n,).
    block_bytes : int, keyword-only
        As for :func:`matmul`.

    Returns
    -------
    dask.array.Array
        (m, n) of ``out_dtype``.

    Raises
    ------
    TypeError, ValueError
        Wrong dtypes or shapes, when the graph is built.

    Examples
    --------
    >>> import numpy as np, dask.array as da, gemmkit.dask as gkd
    >>> x = da.from_array(np.int8([[1, 2], [3, 4]]), chunks=1)
    >>> w = da.from_array(np.int8([[1, 2, 3], [4, 5, 6]]), chunks=1)
    >>> y = gkd.matmul_per_token(x, w, np.float32([1, 2, 3]), np.float32([1, 2]))
    >>> y.compute(scheduler="sync")
    array([[  9.,  24.,  45.],
           [ 38., 104., 198.]], dtype=float16)
    """

    who = "gemmkit.dask.matmul_per_token"
    _args.operand(x, "x", who)
    _args.refuse_masked(weight, "weight", who)
    if isinstance(weight, PackedWeight):
        raise TypeError(f"{who}: weight is a PackedWeight; gemmkit.dask.matmul_per_token takes the int8 weight "
                        f"itself (weight.weight), which it splits into blocks (a PackedWeight is for "
                        f"gemmkit.quant.matmul_per_token)")
    _check_block_bytes(block_bytes, who)
    x, weight = da.asarray(x), da.asarray(weight)
    if x.ndim != 2 or weight.ndim != 2:
        raise ValueError(f"gemmkit.dask.matmul_per_token: x and weight must be 2-D, got {x.shape} and {weight.shape}")
    _check_known_chunks(who, x=x, weight=weight)
    if x.dtype != np.int8 or weight.dtype != np.int8:
        raise TypeError(f"gemmkit.dask.matmul_per_token: x and weight must be int8, got {x.dtype} and {weight.dtype}")
    (m, k), (kw, n) = x.shape, weight.shape
    if k != kw:
        raise ValueError(f"gemmkit.dask.matmul_per_token: x has {k} columns but weight has {kw} rows")
    if k > _INT32_SAFE_K:
        raise ValueError(f"gemmkit.dask.matmul_per_token: K = {k} is beyond the {_INT32_SAFE_K} whose int8 sums "
                         f"always fit the int32 accumulators")
    dtype = _out_dtype(out_dtype)
    vectors = {}
    for name, v, length, chunks in (("deq_scale", deq_scale, n, weight.chunks[1]),
                                    ("per_token_scale", per_token_scale, m, x.chunks[0]),
                                    ("bias", bias, n, weight.chunks[1])):
        if v is None:
            continue
        v = da.asarray(v)
        if v.shape != (length,):
            raise ValueError(f"gemmkit.dask.matmul_per_token: {name} must have shape ({length},), got {v.shape}")
        if v.dtype != np.float32:
            raise TypeError(f"gemmkit.dask.matmul_per_token: {name} must be float32, got {v.dtype}")
        vectors[name] = v.rechunk((chunks,))
    kchunks = _k_chunks(x, weight, np.int32, block_bytes)
    x = x.rechunk((x.chunks[0], kchunks))
    weight = weight.rechunk((kchunks, weight.chunks[1]))
    token = tokenize(x, weight, *vectors.values(), dtype.name, "gemmkit.dask.matmul_per_token")
    name, partial = f"gemmkit-per-token-{token}", f"gemmkit-per-token-acc-{token}"
    deq, pts, bias_v = vectors["deq_scale"], vectors["per_token_scale"], vectors.get("bias")
    layer = {}
    for i, mi in enumerate(x.chunks[0]):
        for j, nj in enumerate(weight.chunks[1]):
            prev = None
            for kk in range(len(kchunks)):
                key = (partial, i, j, kk)
                layer[key] = (_accumulate_int8, prev, (x.name, i, kk), (weight.name, kk, j))
                prev = key
            if prev is None:  # K = 0: the sums are zeros
                prev = (partial, i, j, 0)
                layer[prev] = (np.zeros, (mi, nj), np.int32)
            layer[(name, i, j)] = (_scale_tokens, prev, (deq.name, j), (pts.name, i),
                                   None if bias_v is None else (bias_v.name, j), dtype)
    deps = [x, weight, deq, pts] + ([bias_v] if bias_v is not None else [])
    graph = HighLevelGraph.from_collections(name, layer, dependencies=deps)
    return da.Array(graph, name, chunks=(x.chunks[0], weight.chunks[1]), dtype=dtype)
