"""Throughput model of the aarch64 kernels' k loops: `python -m bench.model_arm64` cross-compiles the
ARM kernel files as setup.py does (aarch64 gcc) and runs llvm-mca on each selected kernel's k loop.

For neoverse-n1 (dotprod path), neoverse-v1 (i8mm) and apple-m1 (dotprod, the Apple config) the kernels each
config selects (tests/test_arm64.py::test_selection_by_features_and_family holds the same choice) are found in
their file's assembly: the innermost loop reachable from the kernel with the most multiply-add instructions
(FMLA, SDOT / UDOT, SMMLA / USMMLA) is its k loop. `llvm-mca -mcpu=CPU` gives its cycles per pass; the bound
is llvm-mca's own cycles for the loop's multiply-adds alone (sources renamed so no chain is left), i.e. the
model's issue rate of those instructions; modelled % = bound / loop cycles. It also counts the instructions
per scalar multiply-add of the NEON kernels and of the portable kernels (the same files setup.py builds for
every target, compiled for aarch64 at -O3: what the `generic` path runs there).
"""
import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile

try:
    from .model import kernel_flags, reachable
except ImportError:  # run as a script: python bench/model_arm64.py
    from model import kernel_flags, reachable

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
ITERATIONS = 300
# llvm -mcpu -> (label, {op: (file, kernel symbol)}): the configs csrc/config/arm64.c selects on these cores
NEON_FLOAT = {"sgemm": ("csrc/kernels/sgemm_neon.c", "ukernel_sgemm_neon_8x12"),
              "dgemm": ("csrc/kernels/dgemm_neon.c", "ukernel_dgemm_neon_8x6")}
DOTPROD = ("csrc/kernels/int8_dotprod.c", "ukernel_i8_dotprod_8x12")
I8MM = ("csrc/kernels/int8_i8mm.c", "ukernel_i8_i8mm_8x8")
CPUS = [
    ("neoverse-n1", "Arm Neoverse N1 (Graviton2, Ampere Altra): dotprod", dict(NEON_FLOAT, int8=DOTPROD)),
    ("neoverse-v1", "Arm Neoverse V1 (Graviton3): i8mm", dict(NEON_FLOAT, int8=I8MM)),
    ("apple-m1", "Apple M1: dotprod (Apple config)", dict(NEON_FLOAT, int8=DOTPROD)),
]
PORTABLE = {"sgemm": ("csrc/kernels/sgemm_generic.c", "ukernel_sgemm_generic_4x16"),
            "dgemm": ("csrc/kernels/dgemm_generic.c", "ukernel_dgemm_generic_4x8"),
            "int8": ("csrc/kernels/int8_generic.c", "ukernel_i8_generic_4x16")}

LABEL = re.compile(r"^([.\w$]+):")
BRANCH = re.compile(r"^(b(?:\.?(?:eq|ne|cs|hs|cc|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le))?|cbnz|cbz|tbnz|tbz)\s+"
                    r"(?:[^,]+,\s*)*([.\w$]+)$")
# multiply-add mnemonics -> scalar multiply-adds per instruction from the arrangement of the destination
# (lanes), times the bytes each lane sums for the dot / matrix forms; fmul counts (fmul + fadd: no contraction)
MACS = {"fmla": 1, "fmul": 1, "mla": 1, "mul": 1, "smlal": 1, "smlal2": 1, "umlal": 1, "umlal2": 1,
        "sdot": 4, "udot": 4, "usdot": 4, "smmla": 8, "ummla": 8, "usmmla": 8, "fmadd": 1, "madd": 1}
COMPUTE = ("fmla", "sdot", "udot", "usdot", "smmla", "ummla", "usmmla")


def arm_kernel_flags(setup_py=os.path.join(REPO, "setup.py")):
    """{ARM kernel file: flags} and the extension's compile arguments (csrc/SOURCES' aarch64 groups)."""
    return kernel_flags(("aarch64",), setup_py)


def compile_file(src, flags, outdir, cc):
    dst = os.path.join(outdir, os.path.basename(src)[:-2] + ".s")
    cmd = cc.split() + ["-S", "-fPIC", "-DGEMMKIT_ARM_KERNELS=1", "-I" + os.path.join(REPO, "csrc")] + flags + \
        [os.path.join(REPO, src), "-o", dst]
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr}")
    return open(dst).read()


def functions(text):
    """{name: [instruction / label lines]} of a gcc aarch64 assembly file."""
    names = set(re.findall(r"^\s*\.type\s+([.\w$]+),\s*%function", text, re.M))
    funcs, cur = {}, None
    for raw in text.splitlines():
        line = raw.split("//")[0].strip()
        m = LABEL.match(line)
        if m and m.group(1) in names:
            cur = m.group(1)
            funcs[cur] = []
            continue
        if cur is None or not line:
            continue
        if line.startswith(".size") and cur in line:
            cur = None
            continue
        if not line.startswith(".") or LABEL.match(line):
            funcs[cur].append(line)
    return funcs


def mnemonic(line):
    return line.split()[0]


def macs_of(line):
    """Scalar multiply-adds of one instruction (0 for others)."""
    mn = mnemonic(line)
    if mn not in MACS:
        return 0
    m = re.search(r"\bv\d+\.(\d+)([bhsd])", line)
    if m:
        return int(m.group(1)) * MACS[mn]
    if mn in ("fmadd", "madd") or (mn == "fmul" and re.match(r"fmul\s+[sd]\d", line)):
        return 1
    return 0  # scalar mul: address arithmetic


def k_loop(funcs, kernel):
    """Instructions of one pass of the kernel's k loop (ending at its branch back), or None."""
    best = None
    for f in reachable(funcs, kernel, branch=r"(bl|b)"):
        lines = funcs[f]
        labels = {LABEL.match(l).group(1): i for i, l in enumerate(lines) if LABEL.match(l)}
        loops = []
        for i, l in enumerate(lines):
            b = BRANCH.match(l)
            if b and b.group(1) != "b" and b.group(2) in labels and labels[b.group(2)] < i:  # conditional: a loop
                loops.append((labels[b.group(2)], i))
        for s, e in loops:
            if any(s <= s2 and e2 <= e and (s2, e2) != (s, e) for s2, e2 in loops):
                continue
            body = [l for l in lines[s + 1:e + 1] if not LABEL.match(l)]
            n = sum(macs_of(l) for l in body)
            key = (n, -len(body))
            if n and (best is None or key > best[0]):
                best = (key, body)
    return best[1] if best else None


def mca_cycles(mca, cpu, body):
    text = "kl:\n" + "\n".join(body[:-1]) + "\n" + BRANCH.sub(lambda m: m.group(0).replace(m.group(2), "kl"), body[-1]) + "\n"
    r = subprocess.run([mca, "-mtriple=aarch64", f"-mcpu={cpu}", f"-iterations={ITERATIONS}"], input=text,
                       capture_output=True, text=True)
    if r.returncode != 0:
        raise RuntimeError(f"llvm-mca -mcpu={cpu}: {r.stderr.strip()}\n{text}")
    return int(re.search(r"^Total Cycles:\s+(\d+)", r.stdout, re.M).group(1)) / ITERATIONS


def compute_only(body):
    """The loop's multiply-adds alone, sources renamed to two registers none of them writes, and the branch."""
    comp = [l for l in body if mnemonic(l) in COMPUTE]
    dests = {re.match(r"\S+\s+(v\d+)", l).group(1) for l in comp}
    free = [f"v{i}" for i in range(31, -1, -1) if f"v{i}" not in dests][:2]
    out = []
    for l in comp:
        mn, ops = l.split(None, 1)
        parts = [p.strip() for p in ops.split(",")]
        srcs = [re.sub(r"v\d+", free[j % 2], p) for j, p in enumerate(parts[1:])]
        out.append(f"{mn}\t{', '.join([parts[0]] + srcs)}")
    return out + ["b\tkl"]


def tools(cc=None, mca=None):
    """The aarch64 C compiler (cc, $AARCH64_CC or aarch64-linux-gnu-gcc) and llvm-mca (19 first) to use."""
    return (cc or os.environ.get("AARCH64_CC") or "aarch64-linux-gnu-gcc",
            mca or shutil.which("llvm-mca-19") or shutil.which("llvm-mca"))


def parse_args(doc, argv=None):
    """The command line of the ARM model scripts: --cc."""
    p = argparse.ArgumentParser(description=doc.splitlines()[0])
    p.add_argument("--cc", help="aarch64 C compiler (default aarch64-linux-gnu-gcc or $AARCH64_CC)")
    return p.parse_args(argv)


def model(cc=None, mca=None):
    cc, mca = tools(cc, mca)
    kernels, base = arm_kernel_flags()
    asm = {}
    with tempfile.TemporaryDirectory() as tmp:
        for src, flags in list(kernels.items()) + [(f, []) for f, _ in PORTABLE.values()]:
            asm[src] = functions(compile_file(src, base + flags, tmp, cc))
    ipm = {}  # instructions per scalar multiply-add of a kernel's k loop
    for op, (src, sym) in list(PORTABLE.items()) + list(NEON_FLOAT.items()) + [("int8", DOTPROD), ("int8", I8MM)]:
        body = k_loop(asm[src], sym)
        ipm[sym] = len(body) / sum(macs_of(l) for l in body)
    rows = []
    for cpu, label, ops in CPUS:
        for op, (src, sym) in ops.items():
            body = k_loop(asm[src], sym)
            cyc, bound = mca_cycles(mca, cpu, body), mca_cycles(mca, cpu, compute_only(body))
            rows.append(dict(cpu=cpu, label=label, op=op, kernel=sym, n=len(body),
                             compute=sum(mnemonic(l) in COMPUTE for l in body), cycles=cyc, bound=bound,
                             pct=100 * bound / cyc, ipm=ipm[sym], portable=ipm[PORTABLE[op][1]]))
    return rows, mca


def table(rows):
    out = ["| CPU (`-mcpu`) | op | kernel | k loop: instructions / multiply-add instructions | llvm-mca c / pass | "
           "bound c / pass | % of bound | instr. per scalar multiply-add: NEON / portable |",
           "|---|---|---|---|---|---|---|---|"]
    for r in rows:
        flag = "" if r["pct"] >= 90 else " ✗"
        out.append(f"| {r['cpu']} | {r['op']} | `{r['kernel']}` | {r['n']} / {r['compute']} | {r['cycles']:.2f} | "
                   f"{r['bound']:.2f} | {r['pct']:.1f}{flag} | {r['ipm']:.3f} / {r['portable']:.3f} = "
                   f"{r['ipm'] / r['portable']:.3f} |")
    return "\n".join(out)


def main(argv=None):
    a = parse_args(__doc__, argv)
    rows, mca = model(cc=a.cc)
    ver = subprocess.run([mca, "--version"], capture_output=True, text=True).stdout
    m = re.search(r"LLVM version (\S+)", ver)
    print(f"llvm-mca {m.group(1) if m else '?'}, {ITERATIONS} iterations")
    print(table(rows))
    return 0 if all(r["pct"] >= 90 for r in rows) else 1


if __name__ == "__main__":
    sys.exit(main())
