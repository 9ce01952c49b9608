"""Throughput model of the NEON tiny path's k loops: `python -m bench.model_arm64_tiny` cross-compiles
sgemm_neon.c / dgemm_neon.c as setup.py does and runs llvm-mca on the 6- and 5-row in-place loops (real_neon_tiny.h).

Beside them, the template's own loop in the tiny function (real_tiny_template.h's 4 rows x one 64-byte chunk, what
every row ran before the in-place loops and the rows left after them still run). Per loop: llvm-mca cycles per
pass (-mcpu neoverse-n1, neoverse-v1, apple-m1), the FMLA bound (llvm-mca's cycles for the FMLAs alone, as
bench/model_arm64.py measures it), % of the bound and scalar multiply-adds per cycle.
"""
import sys
import tempfile

try:
    from .model_arm64 import (arm_kernel_flags, compile_file, compute_only, functions, k_loop, macs_of, mca_cycles,
                              parse_args, tools)
except ImportError:  # run as a script: python bench/model_arm64_tiny.py
    from model_arm64 import (arm_kernel_flags, compile_file, compute_only, functions, k_loop, macs_of, mca_cycles,
                             parse_args, tools)

CPUS = ("neoverse-n1", "neoverse-v1", "apple-m1")
FILES = {"sgemm": ("csrc/kernels/sgemm_neon.c", "tiny_sgemm_neon"),
         "dgemm": ("csrc/kernels/dgemm_neon.c", "tiny_dgemm_neon")}


def model(cc=None, mca=None):
    cc, mca = tools(cc, mca)
    kernels, base = arm_kernel_flags()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for op, (src, fn) in FILES.items():
            funcs = functions(compile_file(src, base + kernels.get(src, []), tmp, cc))
            loops = [(f"{fn}_sums6", k_loop(funcs, f"{fn}_sums6")), (f"{fn}_sums5", k_loop(funcs, f"{fn}_sums5")),
                     (f"{fn} (template, 4 rows)", k_loop({fn: funcs[fn]}, fn))]  # its own loops, not the callees'
            for name, body in loops:
                if body is None:
                    raise RuntimeError(f"no k loop found in {name}")
                macs = sum(macs_of(l) for l in body)
                for cpu in CPUS:
                    cyc, bound = mca_cycles(mca, cpu, body), mca_cycles(mca, cpu, compute_only(body))
                    rows.append(dict(cpu=cpu, op=op, loop=name, n=len(body), macs=macs, cycles=cyc, bound=bound,
                                     pct=100 * bound / cyc, rate=macs / cyc))
    return rows, mca


def table(rows):
    out = ["| CPU (`-mcpu`) | op | k loop | instructions / scalar multiply-adds per pass | llvm-mca c / pass | "
           "FMLA bound c / pass | % of bound | multiply-adds / cycle |", "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        out.append(f"| {r['cpu']} | {r['op']} | `{r['loop']}` | {r['n']} / {r['macs']} | {r['cycles']:.2f} | "
                   f"{r['bound']:.2f} | {r['pct']:.1f} | {r['rate']:.2f} |")
    return "\n".join(out)


def main(argv=None):
    a = parse_args(__doc__, argv)
    rows, mca = model(cc=a.cc)
    print(f"{mca}, 300 iterations")
    print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
