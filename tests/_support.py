"""Helpers shared by the sgemm and int8 tests: transpose cases, tile-edge sizes and operands with
padding that detect writes outside the matrix."""
import contextlib
import threading

import numpy as np
from hypothesis import strategies as st

import gemmkit

TRANS_PAIRS = [a + b for a in "NnTt" for b in "NnTt"]
TRANS_PAIRS_UPPER = ["NN", "NT", "TN", "TT"]


def _is_t(t):
    return t in "Tt"


def _kernel(kind):
    return gemmkit.show_config(print_out=False)[kind]


def _edge_sizes(mr, nr):
    return sorted({1, mr - 1, mr, mr + 1, nr - 1, nr, nr + 1, 2 * nr + 1} - {0})


class Operand:
    """A rows x cols matrix stored with leading dimension ld, as a 1-D flat buffer or a 2-D view.

    `arg` is what is passed to gemmkit; `parent` is the whole allocation (including padding between
    rows and a spare row/tail after the matrix), so writes outside the matrix can be detected.
    """

    def __init__(self, data, ld, layout, pad_value):
        data = np.asarray(data)
        rows, cols = data.shape
        assert ld >= cols
        self.rows, self.cols, self.ld, self.layout = rows, cols, ld, layout
        if layout == "1d":
            self.parent = np.full(rows * ld + ld, pad_value, dtype=data.dtype)
            grid = self.parent[:rows * ld].reshape(rows, ld)
            need = (rows - 1) * ld + cols if rows and cols else 0
            self.arg = self.parent[:need]
            self.mask = np.zeros(self.parent.shape, bool)
            self.mask[:rows * ld].reshape(rows, ld)[:, :cols] = True
        elif layout == "2d":
            self.parent = np.full((rows + 1, ld), pad_value, dtype=data.dtype)
            grid = self.parent[:rows]
            self.arg = self.parent[:rows, :cols]
            self.mask = np.zeros(self.parent.shape, bool)
            self.mask[:rows, :cols] = True
        else:
            raise AssertionError(layout)
        grid[:, :cols] = data
        self.before = self.parent.copy()

    @property
    def matrix(self):
        """The logical rows x cols matrix (a view into parent)."""
        if self.layout == "1d":
            return self.parent[:self.rows * self.ld].reshape(self.rows, self.ld)[:, :self.cols]
        return self.parent[:self.rows, :self.cols]

    def assert_untouched(self, what):
        assert np.array_equal(self.parent, self.before, equal_nan=True), f"{what} was modified"

    def assert_outside_untouched(self, what):
        outside = ~self.mask
        assert np.array_equal(self.parent[outside], self.before[outside], equal_nan=True), \
            f"{what}: elements outside the {self.rows}x{self.cols} matrix (padding, ld={self.ld}) were written"


def run_while_pool_busy(big_call, small_call, calls=20):
    """Call `small_call()` `calls` times while another Python thread keeps gemmkit's pool busy with
    `big_call()`. Each returns the number of wrong elements of its result (0 when right); asserts
    that every call, on either thread, computed all of C."""
    stop = threading.Event()
    big_bad, wrong = [], []

    def blocker():
        while not stop.is_set():
            bad = big_call()
            if bad:
                big_bad.append(bad)

    t = threading.Thread(target=blocker)
    t.start()
    try:
        for _ in range(calls):
            bad = small_call()
            if bad:
                wrong.append(bad)
    finally:
        stop.set()
        t.join()
    assert not wrong, (f"{len(wrong)} of {calls} calls made while another thread used the pool were wrong "
                       f"({wrong[:3]} elements)")
    assert not big_bad, f"{len(big_bad)} big calls on the other thread were wrong"


def draw_gemm_case(data, max_m, max_n, max_k):
    """The draws the property tests share: kernel path, thread count, transposes, sizes, and per operand
    a padding of ld and a 1-D or 2-D layout."""
    case = {
        "arch": data.draw(st.sampled_from(gemmkit.available_archs()), label="arch"),
        "threads": data.draw(st.sampled_from([1, 2]), label="threads"),
        "ta": data.draw(st.sampled_from("NnTt"), label="transa"),
        "tb": data.draw(st.sampled_from("NnTt"), label="transb"),
        "M": data.draw(st.integers(0, max_m), label="M"),
        "N": data.draw(st.integers(0, max_n), label="N"),
        "K": data.draw(st.integers(0, max_k), label="K"),
    }
    case["pads"] = tuple(data.draw(st.integers(0, 5), label=f"pad_{x}") for x in "abc")
    case["layouts"] = tuple(data.draw(st.sampled_from(["1d", "2d"]), label=f"layout_{x}") for x in "abc")
    return case


@contextlib.contextmanager
def kernel_path(arch, threads):
    """Run the body on kernel path `arch` with `threads` threads, restoring the thread count after."""
    prev = gemmkit.get_num_threads()
    gemmkit.set_num_threads(threads)
    try:
        with gemmkit.use_arch(arch):
            yield
    finally:
        gemmkit.set_num_threads(prev)


def normal_values(rng, shape, dtype):
    """Standard-normal test data of a float or complex dtype (complex: independent real and imaginary parts)."""
    x = rng.standard_normal(shape)
    if np.dtype(dtype).kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    return x.astype(dtype)
