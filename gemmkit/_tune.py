"""`gemmkit tune`: measures this machine's blockings and small-path thresholds through gemmkit's own matmul and
saves the winners as the tuning file (gemmkit/_tuning_file.py applies it at import); a tool above the front ends."""
import errno
import json
import math
import os
import sys
import time

from . import _core
from ._matmul import matmul
from ._tuning_file import (FORMAT, FORMAT_VERSION, SaveError, check_destination, default_path, load, machine_key,
                           set_all, state)

MARGIN = 0.02  # a measured value replaces the one in use only when at least 2 % faster

def _default_arch():
    """The kernel path dispatch picks here (not a forced one)."""
    archs = [a for a in _core.ARCHS if _core.arch_supported(a)]
    previous = _core.get_arch()
    _core.set_arch(None)
    best = _core.get_arch()
    _core.set_arch(previous)
    return best if best in archs else previous




# ---- measuring -----------------------------------------------------------------------------------------

class _Bar:
    """A progress bar on stderr (tqdm when installed)."""

    def __init__(self, total, quiet):
        self.quiet, self.n, self.total, self.bar = quiet, 0, total, None
        if quiet:
            return
        try:
            from tqdm import tqdm
            self.bar = tqdm(total=total, desc="gemmkit tune", unit="step", file=sys.stderr, leave=True)
        except ImportError:
            pass

    def step(self, what):
        self.n += 1
        if self.quiet:
            return
        if self.bar is not None:
            self.bar.set_postfix_str(what)
            self.bar.update(1)
        else:
            width = 30
            done = int(width * self.n / max(1, self.total))
            print(f"\rgemmkit tune [{'#' * done}{'.' * (width - done)}] {self.n}/{self.total} {what:<28}",
                  end="", file=sys.stderr, flush=True)

    def close(self):
        if self.bar is not None:
            self.bar.close()
        elif not self.quiet:
            print(file=sys.stderr)


def _best_time(fn, seconds, clock=time.thread_time, min_reps=2):
    """The least time of one call among calls for about `seconds` (at least min_reps), after one warm-up.
    One thread: this thread's CPU time (what other processes take from a shared machine does not count,
    as the bench's --clock cpu); several: the wall clock."""
    fn()
    best, spent, n = math.inf, 0.0, 0
    while n < min_reps or spent < seconds:
        t0 = clock()
        fn()
        dt = clock() - t0
        best, spent, n = min(best, dt), spent + dt, n + 1
    return best


class _Tuner:
    """One measurement session: candidates are applied through the C entry (validated as any file's
    values), compared in interleaved rounds (the machine may be busy), the median of each one's best
    times decides."""

    def __init__(self, quick, arch):
        import numpy as np
        self.np, self.quick, self.arch = np, quick, arch
        self.rounds = 3 if quick else 5      # interleaved rounds; the median of each candidate's best
        self.seconds = 0.06 if quick else 0.2  # of calls per candidate per round
        self.rng = np.random.default_rng(0)
        self.base = {k: v for k, (v, _) in _core.params().items()}
        self.winners, self.notes = {}, []

    def set(self, values):
        _core.tuning_clear()
        why = set_all(self.arch, {**self.winners, **values})
        if why is not None:
            _core.tuning_clear()
        return why

    def compare(self, candidates, fn, clock=time.thread_time):
        """The candidate (a dict of parameter values) with the least median time, its times {index: s}.
        candidates[0] is the value in use: another wins only by MARGIN (noise must not move a default)."""
        times = {i: [] for i in range(len(candidates))}
        for _ in range(self.rounds):
            for i, cand in enumerate(candidates):
                if self.set(cand) is not None:
                    times[i].append(math.inf)
                    continue
                times[i].append(_best_time(fn, self.seconds, clock))
        med = {i: sorted(t)[len(t) // 2] for i, t in times.items()}
        best = min(med, key=med.get)
        if med[best] > med[0] * (1.0 - MARGIN):
            best = 0
        _core.tuning_clear()
        return candidates[best], med

    def operands(self, dtype, m, n, k):
        np = self.np
        a = self.rng.standard_normal((m, k)).astype(dtype)
        b = self.rng.standard_normal((k, n)).astype(dtype)
        if np.dtype(dtype).kind == "c":
            a = a + 1j * self.rng.standard_normal((m, k)).astype(dtype)
            b = b + 1j * self.rng.standard_normal((k, n)).astype(dtype)
        return a, b, np.empty((m, n), np.float32 if np.dtype(dtype).name == "bfloat16" else dtype)

    def blocks(self, op, dtype, size):
        """MC, KC, NC of `op` among the model's, the hand / table values and scalings of the model's KC
        (MC rescaled to keep the A block's bytes)."""
        info = _core.kernel_info()[op]
        mr, nr = info["MR"], info["NR"]
        cur = (self.base[f"{op}.mc"], self.base[f"{op}.kc"], self.base[f"{op}.nc"])
        prev = _core.blocking_model(0)
        hand = (_core.params()[f"{op}.mc"][0], _core.params()[f"{op}.kc"][0], _core.params()[f"{op}.nc"][0])
        _core.blocking_model(2)
        model = (_core.params()[f"{op}.mc"][0], _core.params()[f"{op}.kc"][0], _core.params()[f"{op}.nc"][0])
        _core.blocking_model(prev)
        trip = [cur, hand, model]  # the value in use first (compare() keeps it unless beaten by MARGIN)
        scalings = ((0.5, 2.0), (2.0, 0.5), (1.5, 1.0)) if not self.quick else ((2.0, 0.5),)
        for base in (model, hand) if not self.quick else (model,):
            for f in scalings:  # KC scaled, MC scaled the other way: the A block keeps its bytes
                trip.append((int(base[0] * f[1]), max(8, int(base[1] * f[0])), base[2]))
        cands, seen = [], set()
        for mc, kc, nc in trip:
            mc = max(mr, min(mc, 4096) // mr * mr)
            nc = max(nr, min(nc, 16384) // nr * nr)
            cand = (mc, min(kc, 4096) // 8 * 8, nc)
            if cand not in seen:
                seen.add(cand)
                cands.append({f"{op}.mc": cand[0], f"{op}.kc": cand[1], f"{op}.nc": cand[2]})
        a, b, c = self.operands(dtype, size, size, size)
        win, med = self.compare(cands, lambda: matmul(a, b, out=c))
        self.winners.update(win)
        return win, med

    def threshold(self, name, values, fn):
        values = [self.base[name]] + [v for v in values if v != self.base[name]]  # the value in use first
        win, med = self.compare([{name: v} for v in values], fn)
        self.winners.update(win)
        return win, med


def _steps(quick):
    """(label, function(tuner)) of one tuning session, in order."""
    import numpy as np
    size = 512 if quick else 1024

    def blocks(op, dtype):
        return lambda t: t.blocks(op, dtype, size if op in ("sgemm", "dgemm") else size // 2)

    def bf16_type(t, step):  # bfloat16's NumPy type where the path has a pair kernel and ml_dtypes is there, else None
        if _core.kernel_info()["bf16"]["k_group"] != 2:
            t.notes.append(f"{step}: no bfloat16 unit on this path, not measured")
            return None
        try:
            import ml_dtypes
        except ImportError:
            t.notes.append(f"{step}: ml_dtypes is not installed, not measured")
            return None
        return ml_dtypes.bfloat16

    def bf16_blocks(t):  # the pair kernel's (KC in k pairs; bfloat16 A and B, a float32 C)
        bf16 = bf16_type(t, "bf16 blocks")
        return (None, {}) if bf16 is None else t.blocks("bf16", bf16, size)

    def bf16_widen(t):  # a square product on the pair kernel (limits 0) or widened onto the float kernel
        bf16 = bf16_type(t, "bf16 widening")
        if bf16 is None:
            return None, {}
        a, b, c = t.operands(bf16, 256, 256, 256)
        names = ("small.bf16_widen_min_m", "small.bf16_widen_min_n")
        cands = [{n: t.base[n] for n in names}]
        for m, n in ((0, 0), (16, 32)):
            if (m, n) != tuple(t.base[x] for x in names):
                cands.append(dict(zip(names, (m, n))))
        win, med = t.compare(cands, lambda: matmul(a, b, out=c))
        t.winners.update(win)
        return win, med

    def tiny(t):
        n = 24 if quick else 32
        a = t.rng.standard_normal((200, n, n)).astype(np.float32)
        c = np.empty_like(a)
        return t.threshold("small.tiny_max_macs", [float((n - 1) ** 3), float(n ** 3)],
                           lambda: matmul(a, a, out=c))

    def tiny_direct(t):
        n = 48
        a = t.rng.standard_normal((100, n, n)).astype(np.float32)
        c = np.empty_like(a)
        return t.threshold("small.tiny_direct_max_macs", [float((n - 1) ** 3), float(n ** 3)],
                           lambda: matmul(a, a, out=c))

    def tiny_complex(t):
        n = 16
        a = (t.rng.standard_normal((200, n, n)) + 1j).astype(np.complex128)
        c = np.empty_like(a)
        return t.threshold("small.tiny_complex_max_macs", [float((n - 1) ** 3), float(n ** 3)],
                           lambda: matmul(a, a, out=c))

    # the GEMV and few-row steps read B from memory (4096^2, past any L3 share) even when quick: a B that fits in L3
    # picks a prefetch distance that loses from memory (docs/decisions.md, gemv_pf)
    def gemv_pf(t):
        k = 4096
        x, b, y = t.operands(np.float32, 1, k, k)
        return t.threshold("small.gemv_pf_bytes", [0, 1024, 2048, 4096], lambda: matmul(x, b, out=y))

    def gemv_m(t):
        k = 4096
        x, b, y = t.operands(np.float32, 4, k, k)
        return t.threshold("small.gemv_max_m", [2, 4], lambda: matmul(x, b, out=y))

    def dot_m(t):
        k = 4096
        x, b, y = t.operands(np.float32, 16, k, k)
        bt = np.ascontiguousarray(b.T)
        return t.threshold("small.dot_max_m", [8, 16], lambda: matmul(x, bt.T, out=y))

    def row_panels(t):  # 16 rows against a plain B from memory: read in place (up to 3 panels) or packed (1)
        x, b, y = t.operands(np.float32, 16, 4096, 4096)
        return t.threshold("small.direct_max_row_panels", [1, 3], lambda: matmul(x, b, out=y))

    def b_groups(t):  # 128 rows against a plain B from memory: B packed a group of panels at a time, or whole (0)
        x, b, y = t.operands(np.float32, 128, 1024, 4096)
        return t.threshold("small.b_group_panels", [0, 8], lambda: matmul(x, b, out=y))

    def ta_strips(t):  # a transposed A in the plain loops: in place, or copied in strips past this walk (bytes)
        a = np.ascontiguousarray(t.rng.standard_normal((1500, 3000)).astype(np.float32)).T
        b = t.rng.standard_normal((1500, 48)).astype(np.float32)
        c = np.empty((3000, 48), np.float32)
        return t.threshold("small.ta_strips_min_walk", [float(2 << 20), float(8 << 20), float(32 << 20)],
                           lambda: matmul(a, b, out=c))

    def direct_b(t):
        n = 64
        a, b, c = t.operands(np.float64, n, n, n)
        return t.threshold("small.direct_b_max_macs", [float((n - 1) ** 3), float(n ** 3)],
                           lambda: [matmul(a, b, out=c) for _ in range(20)])

    def plain(t):  # a plain product of one thread's worth: the kernel's `plain` loops or the packed driver
        n = 160
        a, b, c = t.operands(np.float64, n, n, n)
        return t.threshold("small.plain_max_macs", [float((n - 1) ** 3), float(n ** 3)],
                           lambda: matmul(a, b, out=c))

    def threads(t):
        if t.nthreads < 2:
            t.notes.append("threads.min_macs: one CPU here, not measured")
            return None, {}
        n = 128
        a, b, c = t.operands(np.float32, n, n, n)
        macs = float(n ** 3)
        _core.set_num_threads(2)
        try:  # split at 128^3 (2 threads) or not (1): the one that runs it faster (wall clock)
            win, med = t.compare([{"threads.min_macs": v} for v in (t.base["threads.min_macs"], macs / 2, macs)],
                                 lambda: matmul(a, b, out=c), clock=time.perf_counter)
            t.winners.update(win)
            return win, med
        finally:
            _core.set_num_threads(1)

    steps = [("sgemm blocks", blocks("sgemm", np.float32)), ("dgemm blocks", blocks("dgemm", np.float64)),
             ("cgemm blocks", blocks("cgemm", np.complex64)), ("zgemm blocks", blocks("zgemm", np.complex128)),
             ("bf16 blocks", bf16_blocks), ("bf16 widening", bf16_widen), ("tiny threshold", tiny), ("GEMV prefetch", gemv_pf), ("GEMV rows", gemv_m),
             ("few rows x B^T", dot_m), ("few rows x B in place", row_panels), ("few rows x B in groups", b_groups),
             ("A^T in strips", ta_strips), ("thread split", threads)]
    if not quick:
        steps[7:7] = [("tiny direct threshold", tiny_direct), ("tiny complex threshold", tiny_complex),
                      ("plain B in place", direct_b), ("plain products unpacked", plain)]
    return steps


def tune(quick=False, path=None, save=True, quiet=False):
    """Measures this machine (about 2 minutes; quick: under 30 s) on its default kernel path and saves the
    winners (path: default_path()). Returns the document."""
    if save:
        path = check_destination(path)  # before measuring: a save that cannot happen must not cost minutes
    arch = _default_arch()
    previous_arch = _core.get_arch()
    nthreads = _core.get_num_threads()
    _core.set_num_threads(1)  # the blockings are a core's; the thread split is measured on 2
    _core.set_arch(arch)
    _core.tuning_clear()
    steps = _steps(quick)
    bar = _Bar(len(steps), quiet)
    t0 = time.time()
    tuner = _Tuner(quick, arch)
    tuner.nthreads = nthreads
    budget = 25.0 if quick else 110.0
    try:
        for label, fn in steps:
            if time.time() - t0 > budget:
                tuner.notes.append(f"{label}: skipped (time budget spent)")
            else:
                fn(tuner)
            bar.step(label)
    finally:
        bar.close()
        _core.tuning_clear()
        _core.set_arch(previous_arch)
        _core.set_num_threads(nthreads)
    # only what measured faster than the value in use is saved; the rest is confirmed (listed, not set)
    params = {k: (int(v) if float(v).is_integer() else float(v)) for k, v in tuner.winners.items()
              if v != tuner.base.get(k)}
    confirmed = sorted(k for k, v in tuner.winners.items() if v == tuner.base.get(k))
    doc = {"format": FORMAT, "version": FORMAT_VERSION, **machine_key(), "arch": arch,
           "created": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
           "seconds": round(time.time() - t0, 1), "quick": bool(quick), "params": params,
           "confirmed": confirmed, "notes": tuner.notes}
    if save:
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            json.dump(doc, f, indent=1, sort_keys=True)
        os.replace(tmp, path)
        load(path)
    return doc


# ---- the table --------------------------------------------------------------------------------------

def table():
    """Lines: every parameter of the configuration in use, its value and where it comes from."""
    lines = [f"tuning file : {state.get('path') or default_path() or '(platformdirs missing)'}",
             f"status      : {state['status']}",
             f"kernel path : {_core.get_arch()} (uarch {_core.kernel_info()['uarch']})"]
    caches = _core.cache_hierarchy()
    lines.append("caches      : " + ", ".join(
        f"{k} {caches[k]['size'] // 1024} KiB {caches[k]['ways']}-way" for k in ("L1d", "L2", "L3")
        if caches[k]["size"]) + f" (from {caches['source']})")
    lines.append(f"{'parameter':<30} {'value':>12}  source")
    for name, (value, source) in _core.params().items():
        lines.append(f"{name:<30} {value:>12}  {source}")
    return lines


def main(argv, prog="gemmkit"):
    import argparse
    p = argparse.ArgumentParser(prog=f"{prog} tune", description=(
        "Measure this machine's blockings and small-problem thresholds (about 2 minutes; --quick under 30 s) "
        "and save the winners to the tuning file gemmkit applies at import when CPU, caches and version match "
        "(GEMMKIT_TUNING=off ignores it, GEMMKIT_TUNING=PATH reads another). Kernels and exactness never "
        "change; float results may differ in the last bits with the blocking, as with any BLAS."))
    p.add_argument("--quick", action="store_true", help="fewer candidates and rounds, under 30 s")
    p.add_argument("--show", action="store_true", help="print the parameters in use and their sources; no measuring")
    p.add_argument("--output", metavar="PATH", help="write the file here instead of the user cache dir")
    p.add_argument("--dry-run", action="store_true", help="measure and print, save nothing")
    p.add_argument("--clear", action="store_true", help="delete the tuning file")
    args = p.parse_args(argv)
    if args.show:
        print("\n".join(table()))
        return 0
    if args.clear:
        path = args.output or default_path()
        if path and os.path.lexists(path):
            try:
                os.remove(path)
            except OSError as e:
                print(f"{prog} tune: cannot remove {path}: {e.strerror or e}", file=sys.stderr)
                return 1
            print(f"removed {path}")
        return 0
    try:
        path = None if args.dry_run else check_destination(args.output)
        doc = tune(quick=args.quick, path=path, save=not args.dry_run)
    except SaveError as e:
        print(f"{prog} tune: {e}", file=sys.stderr)
        return 2
    except OSError as e:  # the save itself failed after measuring (a disk filled up meanwhile)
        if getattr(e, "errno", None) == errno.ENOSPC:
            raise  # the command line's one-line message for a full disk
        print(f"{prog} tune: cannot save the tuning file: {e.strerror or e}", file=sys.stderr)
        return 1
    print(json.dumps(doc["params"], indent=1, sort_keys=True))
    if not args.dry_run:
        print(f"saved {path} ({doc['seconds']} s)")
        print("\n".join(table()))
    return 0
