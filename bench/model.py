"""Throughput model of each microkernel's k loop per target CPU: `python -m bench.model` or
`gemmkit bench --model` compiles the x86 kernel files as setup.py does and runs llvm-mca on the k loops.

For every target CPU the dispatcher's choice of configuration is asked of the installed gemmkit
(gemmkit._core.config_for_cpu, config_fields); each kernel it names (sgemm, dgemm, cgemm, zgemm, int8; a
complex op without a native kernel runs by 1m on the real one) is found in the assembly of its file, the
innermost loop reachable from the kernel holding the most multiply-adds (FMA, vpdpbusd, vpmaddwd) is its
k loop, and `llvm-mca -mcpu=CPU` gives its cycles per iteration. The bound is the CPU's issue rate of those
instructions (CPUS below, with sources): modelled % = bound cycles / llvm-mca cycles.
"""
import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import tempfile

REPO = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LLVM_MCA = "llvm-mca-19"
ITERATIONS = 300

# Multiply-add issue rates (instructions per cycle) by register width, and where each comes from. A 512-bit
# FMA on Zen 4 occupies both 256-bit FMA pipes (AMD Software Optimization Guide for family 19h, 2.11).
# "fma": vfmadd*/vfnmadd*/vfmsub* packed; "dpbusd": vpdpbusd(s); "maddwd": vpmaddwd.
CPUS = [
    # llvm -mcpu, label, (vendor, family, model, features) for the dispatcher, rates, source
    ("znver2", "AMD Zen 2 (EPYC 7002)", ("AMD", 0x17, 0x31, ["avx2"]),
     {("fma", 256): 2, ("maddwd", 256): 1},
     "AMD SOG family 17h model 30h: FMA on FP0/FP1 (2 x 256 bit); integer multiply (vpmaddwd) on FP0 only"),
    ("znver3", "AMD Zen 3 (EPYC 7003)", ("AMD", 0x19, 0x01, ["avx2"]),
     {("fma", 256): 2, ("maddwd", 256): 2},
     "AMD SOG family 19h: FMA on FP0/FP1 (2 x 256 bit); vpmaddwd on two pipes (Agner Fog's Zen 3 table: "
     "reciprocal throughput 0.5)"),
    ("haswell", "Intel Haswell", ("Intel", 0x6, 0x3F, ["avx2"]),
     {("fma", 256): 2, ("maddwd", 256): 1},
     "Intel optimization manual / uops.info HSW: FMA on p0/p1; vpmaddwd ymm on p0 only"),
    ("skylake", "Intel Skylake (client)", ("Intel", 0x6, 0x5E, ["avx2"]),
     {("fma", 256): 2, ("maddwd", 256): 2},
     "Intel optimization manual / uops.info SKL: FMA and vpmaddwd ymm on p0/p1"),
    ("alderlake", "Intel Alder Lake P-core (AVX-VNNI)", ("Intel", 0x6, 0x97, ["avx2", "avx_vnni"]),
     {("fma", 256): 2, ("maddwd", 256): 2, ("dpbusd", 256): 2},
     "uops.info ADL-P: FMA, vpmaddwd and {vex} vpdpbusd ymm on p0/p1"),
    ("znver4", "AMD Zen 4 (EPYC 9004)", ("AMD", 0x19, 0x11, ["avx2", "avx512", "avx512_vnni"]),
     {("fma", 256): 2, ("fma", 512): 1, ("maddwd", 512): 1, ("dpbusd", 512): 1},
     "AMD SOG family 19h (Zen 4): 2 x 256-bit FMA pipes, a 512-bit op takes both (one zmm FMA / cycle); "
     "vpdpbusd and vpmaddwd zmm likewise one per cycle"),
    ("skylake-avx512", "Intel Skylake-SP (2 FMA units)", ("Intel", 0x6, 0x55, ["avx2", "avx512"]),
     {("fma", 512): 2, ("maddwd", 512): 2},
     "Intel optimization manual (Skylake Server): 2 x 512-bit FMA on p0(+p1) and p5; vpmaddwd zmm on p0/p5"),
    ("icelake-server", "Intel Ice Lake-SP", ("Intel", 0x6, 0x6A, ["avx2", "avx512", "avx512_vnni"]),
     {("fma", 512): 2, ("maddwd", 512): 2, ("dpbusd", 512): 2},
     "Intel optimization manual (Ice Lake Server): 2 x 512-bit FMA (p0, p5); vpdpbusd / vpmaddwd zmm on p0/p5"),
    ("sapphirerapids", "Intel Sapphire Rapids", ("Intel", 0x6, 0x8F, ["avx2", "avx512", "avx512_vnni", "avx_vnni"]),
     {("fma", 512): 2, ("maddwd", 512): 2, ("dpbusd", 512): 2},
     "Intel optimization manual (Sapphire Rapids): 2 x 512-bit FMA (p0, p5); vpdpbusd / vpmaddwd zmm on p0/p5"),
]
OPS = ("sgemm", "dgemm", "cgemm", "zgemm", "int8")
MIN_FRACTION = 0.90  # every selected kernel must model at >= 90 % of its bound

COMPUTE = [
    ("fma", re.compile(r"^\{?v?f(n)?m(add|sub)(sub|add)?(132|213|231)p[sd]\b")),
    ("dpbusd", re.compile(r"^(\{vex\}\s*)?vpdpbusds?\b")),
    ("maddwd", re.compile(r"^vpmaddwd\b")),
]
WIDTH = [(512, re.compile(r"%zmm")), (256, re.compile(r"%ymm")), (128, re.compile(r"%xmm"))]


# ---- building as setup.py does -----------------------------------------------------------------------

def kernel_flags(targets, setup_py=os.path.join(REPO, "setup.py")):
    """{kernel file: gcc flags} of the kernel files csrc/SOURCES lists for `targets` (its flag groups'
    targets: x86_64, x86_64-probe, aarch64), and the extension's compile arguments: setup.py's own
    read_sources() and extra_compile_args(), taken from setup.py without running it."""
    tree = ast.parse(open(setup_py).read(), setup_py)
    keep = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name in ("read_sources", "extra_compile_args")]
    ns = {"sys": sys, "os": os}
    exec(compile(ast.Module(body=keep, type_ignores=[]), setup_py, "exec"), ns)
    _portable, kernels = ns["read_sources"](os.path.join(os.path.dirname(setup_py), "csrc", "SOURCES"))
    return {src: gnu for src, target, gnu, _msvc in kernels if target in targets}, ns["extra_compile_args"]()


def setup_kernel_flags(setup_py=os.path.join(REPO, "setup.py")):
    """The x86 kernel files (AVX-VNNI's included) with their gcc flags, and the extension's compile arguments."""
    return kernel_flags(("x86_64", "x86_64-probe"), setup_py)


def compile_kernels(outdir, cc=None, only=None):
    """Every x86 kernel file (or those in `only`) to assembly (gcc -S) with setup.py's flags and macros:
    {file: .s path}."""
    kernels, base = setup_kernel_flags()
    if only:
        kernels = {k: v for k, v in kernels.items() if k in only}
    cc = cc or os.environ.get("CC") or (sysconfig.get_config_var("CC") or "gcc").split()[0]
    macros = ["-DNPY_NO_DEPRECATED_API=NPY_1_7_API_VERSION", "-DGEMMKIT_X86_KERNELS=1", "-DGEMMKIT_HAVE_AVX_VNNI=1",
              "-DGEMMKIT_HAVE_AMX=1"]
    out = {}
    for src, flags in kernels.items():
        dst = os.path.join(outdir, os.path.basename(src)[:-2] + ".s")
        cmd = [cc, "-S", "-fPIC"] + macros + ["-I" + os.path.join(REPO, "csrc")] + base + flags + \
              [os.path.join(REPO, src), "-o", dst]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            if src.endswith("_avx_vnni.c"):  # setup.py builds it only where the compiler knows -mavxvnni
                continue
            raise RuntimeError(f"{' '.join(cmd)} failed:\n{r.stderr}")
        out[src] = dst
    return out


# ---- assembly: functions, loops, the k loop -------------------------------------------------------------

LABEL = re.compile(r"^([.\w$]+|\d+):\s*(#.*)?$")
BRANCH = re.compile(r"^j[a-z]+\s+([.\w$]+)\s*$")


def parse_functions(text):
    """{function name: [its lines, stripped]} of a gcc assembly file (from `name:` to `.size name`)."""
    names = set(re.findall(r"^\s*\.type\s+([.\w$]+),\s*@function", text, re.M))
    funcs, cur = {}, None
    for raw in text.splitlines():
        line = raw.strip()
        m = LABEL.match(line)
        if m and m.group(1) in names:
            cur = m.group(1)
            funcs[cur] = []
            continue
        if cur is None:
            continue
        if line.startswith(".size") and cur in line:
            cur = None
            continue
        funcs[cur].append(line)
    return funcs


def is_instruction(line):
    return bool(line) and not line.startswith((".", "#")) and not LABEL.match(line)


def compute_kind(line):
    """(kind, width) of a multiply-add instruction, else None."""
    for kind, rx in COMPUTE:
        if rx.match(line):
            for w, wrx in WIDTH:
                if wrx.search(line):
                    return kind, w
    return None


def loops_of(lines):
    """(start, end) line indices of every loop: a branch back to a label earlier in the function
    (numeric local labels `Nb` resolve to the nearest `N:` before the branch)."""
    labels, out = {}, []
    for i, line in enumerate(lines):
        m = LABEL.match(line)
        if m:
            labels.setdefault(m.group(1), []).append(i)
            continue
        b = BRANCH.match(line)
        if not b:
            continue
        t = b.group(1)
        if re.fullmatch(r"\d+b", t):
            cands = [j for j in labels.get(t[:-1], []) if j < i]
            if cands:
                out.append((cands[-1], i))
        elif t in labels and labels[t][-1] < i:
            out.append((labels[t][-1], i))
    return out


def reachable(funcs, root, branch=r"(call|jmp)"):
    """The functions `root` calls or jumps to (`branch`: the ISA's call / jump mnemonics), transitively
    (gcc's .part / .constprop clones included)."""
    seen, todo = [], [root]
    while todo:
        f = todo.pop()
        if f in seen or f not in funcs:
            continue
        seen.append(f)
        for line in funcs[f]:
            m = re.match(r"^" + branch + r"\s+([.\w$]+)(@PLT)?\s*$", line)
            if m and m.group(2) in funcs:
                todo.append(m.group(2))
    return seen


def split_operands(text):
    """AT&T operands of an instruction, split at the commas outside parentheses."""
    ops, depth, cur = [], 0, ""
    for ch in text.strip():
        depth += ch == "("
        depth -= ch == ")"
        if ch == "," and depth == 0:
            ops.append(cur.strip())
            cur = ""
        else:
            cur += ch
    if cur.strip():
        ops.append(cur.strip())
    return ops


class KLoop:
    """The k loop of a kernel: its function, the instructions of one pass (the closing branch included)
    and its multiply-adds by (kind, width)."""

    def __init__(self, function, body):
        self.function = function
        self.body = body
        self.compute = {}
        for line in body:
            k = compute_kind(line)
            if k:
                self.compute[k] = self.compute.get(k, 0) + 1

    @property
    def n_compute(self):
        return sum(self.compute.values())

    def compute_only_text(self):
        """Only the loop's multiply-adds, their register sources renamed to registers none of them writes (so
        no chain through a broadcast's register is left): how fast llvm-mca's model issues them alone."""
        parsed = []
        for line in self.body:
            if compute_kind(line):
                m = re.match(r"^((?:\{\w+\}\s*)?\S+)\s+(.*)$", line)
                parsed.append((m.group(1), split_operands(m.group(2))))
        dests = {ops[-1] for _m, ops in parsed}
        out = []
        for mnemonic, ops in parsed:
            width = ops[-1][1:4]  # "xmm", "ymm", "zmm"
            top = 31 if width == "zmm" else 15  # VEX encodes registers 0-15 only
            free = [f"%{width}{i}" for i in range(top, -1, -1) if f"%{width}{i}" not in dests]
            srcs = [free[j % 2] if o.startswith("%") else o for j, o in enumerate(ops[:-1])]
            out.append(f"{mnemonic}\t{', '.join(srcs + [ops[-1]])}")
        return "\n".join(out) + "\n"

    def mca_text(self):
        """The loop as llvm-mca input: its instructions, the closing branch back to the top."""
        lines = ["kloop_top:"]
        for line in self.body[:-1]:
            lines.append(line)
        lines.append(BRANCH.sub(lambda m: m.group(0).replace(m.group(1), "kloop_top"), self.body[-1]))
        return "\n".join(lines) + "\n"


def find_k_loop(funcs, kernel):
    """The k loop of `kernel` (a function symbol): among the innermost loops of it and the functions it
    reaches, the one with the most multiply-adds, then the fewest instructions (the packed, constant-stride
    loop rather than the strided one). None if no loop holds a multiply-add."""
    best = None
    for f in reachable(funcs, kernel):
        lines = funcs[f]
        loops = loops_of(lines)
        for (s, e) in loops:
            if any(s <= s2 and e2 <= e and (s2, e2) != (s, e) for (s2, e2) in loops):
                continue  # not innermost
            body = [l for l in lines[s + 1:e + 1] if is_instruction(l)]
            loop = KLoop(f, body)
            if loop.n_compute == 0:
                continue
            key = (loop.n_compute, -len(body))
            if best is None or key > best[0]:
                best = (key, loop)
    return best[1] if best else None


# ---- llvm-mca ---------------------------------------------------------------------------------------------

def llvm_mca_path():
    return shutil.which(LLVM_MCA)


def llvm_version(mca):
    r = subprocess.run([mca, "--version"], capture_output=True, text=True)
    m = re.search(r"LLVM version (\S+)", r.stdout)
    return m.group(1) if m else "?"


class Mca:
    """One llvm-mca run: cycles per pass (total cycles / iterations), the pressure per pass on each resource
    and, per resource, on each mnemonic."""

    def __init__(self, mca, cpu, text):
        r = subprocess.run([mca, f"-mcpu={cpu}", f"-iterations={ITERATIONS}", "-resource-pressure"], input=text,
                           capture_output=True, text=True)
        if r.returncode != 0:
            raise RuntimeError(f"llvm-mca -mcpu={cpu} failed: {r.stderr.strip()}")
        out = r.stdout
        it = int(re.search(r"^Iterations:\s+(\d+)", out, re.M).group(1))
        self.cycles = int(re.search(r"^Total Cycles:\s+(\d+)", out, re.M).group(1)) / it
        names = re.findall(r"^\[([\d.]+)\]\s+-\s+(\S+)", out.split("Resource pressure per iteration:")[0], re.M)
        self.resources = [n for _i, n in names]
        self.by_mnemonic = {n: {} for n in self.resources}
        units = {n: self.resources.count(n) for n in self.resources}  # Zn4Load: [15.0] [15.1] [15.2]
        part = out.split("Resource pressure by instruction:")[-1].splitlines()[2:]
        for line in part:
            tok = line.split()
            if len(tok) <= len(self.resources):
                break
            rest = tok[len(self.resources):]
            mnemonic = " ".join(rest[:2]) if rest[0].startswith("{") else rest[0]
            for name, v in zip(self.resources, tok):
                if v != "-":
                    d = self.by_mnemonic[name]
                    d[mnemonic] = d.get(mnemonic, 0.0) + float(v) / units[name]  # per unit of the group
        self.pressure = {n: sum(d.values()) for n, d in self.by_mnemonic.items()}

    def busiest(self):
        """(resource, its cycles per pass, [(mnemonic, cycles)] largest first)."""
        name = max(self.pressure, key=self.pressure.get)
        users = sorted(self.by_mnemonic[name].items(), key=lambda kv: -kv[1])
        return name, self.pressure[name], users


def bound_cycles(loop, rates):
    """Cycles one pass takes at the CPU's multiply-add issue rates; None when a kind has no rate here."""
    c = 0.0
    for key, n in loop.compute.items():
        if key not in rates:
            return None
        c += n / rates[key]
    return c


def per_k_step(op, kernel, loop):
    """Multiply-add instructions per k step of the kernel's tile (MR x NR in its name; native complex kernels
    in complex elements, their loop over the real domain's k): MR * NR / lanes."""
    m = re.search(r"_(\d+)x(\d+)$", kernel)
    mr, nr = int(m.group(1)), int(m.group(2))
    if "_cgemm_" in kernel or "_zgemm_" in kernel:
        mr, nr = 2 * mr, 2 * nr
    width = max(w for (_k, w) in loop.compute)
    elem = 8 if op in ("dgemm", "zgemm") else 4  # int8 accumulates int32
    return mr * nr // (width // (8 * elem))


# ---- the model ----------------------------------------------------------------------------------------------

def selected_kernels(core, cpu_identity):
    """(arch, uarch, {op: (kernel, note)}) of the configuration the dispatcher picks for a CPU."""
    vendor, family, model, features = cpu_identity
    arch, uarch = core.config_for_cpu(vendor, family, model, features)
    idx = [(c["arch"], c["uarch"]) for c in core.configs()].index((arch, uarch))
    fields = core.config_fields(idx)
    ops = {}
    for op in OPS:
        k, note = fields[op], ""
        if k == "-":
            real = {"cgemm": "sgemm", "zgemm": "dgemm"}[op]
            k, note = fields[real], f"1m on {real}"
        ops[op] = (k, note)
    return arch, uarch, ops


def model(cpus=None, ops=OPS, cc=None, mca=None, files=None):
    """Rows of the model: one per (CPU, op) with the kernel, its loop and the modelled and bound cycles
    (kernels looked up in every x86 kernel file, or in `files`)."""
    from gemmkit import _core
    mca = mca or llvm_mca_path()
    if mca is None:
        raise RuntimeError(f"{LLVM_MCA} not found (Debian: apt-get install llvm-19)")
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        funcs = {}
        for src, asm in compile_kernels(tmp, cc, only=files).items():
            for name, lines in parse_functions(open(asm).read()).items():
                funcs.setdefault(name, lines)
        loops, cycles = {}, {}  # cycles: (kernel, cpu) -> (Mca of the loop, Mca of its multiply-adds alone)
        for cpu, label, ident, rates, _src in CPUS:
            if cpus and cpu not in cpus:
                continue
            arch, uarch, kernels = selected_kernels(_core, ident)
            for op in ops:
                kernel, note = kernels[op]
                if kernel not in loops:
                    loops[kernel] = find_k_loop(funcs, kernel)
                loop = loops[kernel]
                row = {"cpu": cpu, "label": label, "config": f"{arch}/{uarch}", "op": op, "kernel": kernel,
                       "note": note, "loop": loop}
                if loop is None:
                    row["error"] = "no k loop found"
                    rows.append(row)
                    continue
                if (kernel, cpu) not in cycles:
                    cycles[(kernel, cpu)] = (Mca(mca, cpu, loop.mca_text()), Mca(mca, cpu, loop.compute_only_text()))
                full, alone = cycles[(kernel, cpu)]
                step = per_k_step(op, kernel, loop)
                steps = loop.n_compute / step
                row.update(cycles=full.cycles, mca=full, compute_alone=alone.cycles, bound=bound_cycles(loop, rates),
                           steps=steps, per_step=step)
                rows.append(row)
    return rows


def fmt_compute(loop):
    return " + ".join(f"{n} {k} {w}b" for (k, w), n in sorted(loop.compute.items()))


def why(r):
    """What limits the loop in llvm-mca's model: its multiply-adds alone (the model's issue rate against the
    documented one) and the busiest resource with the instructions on it."""
    parts = []
    if r["bound"] is not None and r["compute_alone"] > 1.05 * r["bound"]:
        parts.append(f"llvm's model issues the multiply-adds alone at {r['compute_alone'] / r['steps']:.2f} "
                     f"c/k step (documented {r['bound'] / r['steps']:.2f})")
    name, cyc, users = r["mca"].busiest()
    top = ", ".join(f"{m} {c:.0f}" for m, c in users[:3])
    parts.append(f"busiest {name} {cyc / r['steps']:.2f} c/k step ({top} per pass)")
    return "; ".join(parts)


def table(rows):
    out = ["| CPU (`-mcpu`) | config | op | kernel | k loop: instructions, multiply-adds, k steps "
           "| llvm-mca c / k step | bound c / k step | % of bound | what limits it in the model |",
           "|---|---|---|---|---|---:|---:|---:|---|"]
    for r in rows:
        if "error" in r:
            out.append(f"| {r['cpu']} | {r['config']} | {r['op']} | {r['kernel']} | {r['error']} | | | | |")
            continue
        loop = r["loop"]
        kern = r["kernel"] + (f" ({r['note']})" if r["note"] else "")
        per = r["cycles"] / r["steps"]
        if r["bound"] is None:
            b, pct = "no rate", ""
        else:
            frac = r["bound"] / r["cycles"]
            b, pct = f"{r['bound'] / r['steps']:.2f}", f"{100 * frac:.0f} %" + ("" if frac >= MIN_FRACTION else " ✗")
        out.append(f"| {r['cpu']} | {r['config']} | {r['op']} | {kern} | {len(loop.body)}, {fmt_compute(loop)}, "
                   f"{r['steps']:g} | {per:.2f} | {b} | {pct} | {why(r)} |")
    return "\n".join(out)


def sources_table():
    out = ["| CPU (`-mcpu`) | multiply-adds issued per cycle (the bound) | source |", "|---|---|---|"]
    for cpu, label, _ident, rates, src in CPUS:
        r = ", ".join(f"{k} {w}b: {v}" for (k, w), v in sorted(rates.items()))
        out.append(f"| {cpu} ({label}) | {r} | {src} |")
    return "\n".join(out)


# What a row under MIN_FRACTION means, for the docs page (--page): (llvm -mcpu names, ops, text). A note is
# printed only while one of its rows is under the bound, so a fixed kernel or model drops its note.
NOTES = [
    (("icelake-server", "sapphirerapids"), OPS,
     "**icelake-server, sapphirerapids: llvm's model, not the kernels.** LLVM's `icelake-server` and "
     "`sapphirerapids` models issue every 512-bit FMA (and Sapphire Rapids' 512-bit `vpdpbusd`) on port 0 "
     "only, as for a part with one 512-bit FMA unit (client Ice Lake); the Xeons have a second unit on port 5, "
     "as `skylake-avx512` models it (the same FMA loops reach the bound there). At the model's own rate these "
     "loops run at 100 % (port 0 busy every cycle with the multiply-adds alone). Not measured: no such CPU "
     "was at hand."),
    (("znver4",), ("sgemm", "cgemm", "dgemm", "zgemm"),
     "**znver4 FMA kernels: llvm's model.** llvm's `znver4` model puts each broadcast from memory "
     "(`vbroadcastss` / `vbroadcastsd zmm, m`) on FP1 as well, where the 512-bit FMAs already take FP0 and "
     "FP1 for two cycles each. Measured on a Zen 4 (EPYC, family 25 model 17, one core): `gemmkit.matmul` "
     "float32 1536³ runs at 105.7-106.5 GFLOP/s against a 116.6-116.9 GFLOP/s zmm FMA peak "
     "(`bench/peak_probe.c`), the whole product with its packing at 91 %, so the k loop runs at >= 91 %. "
     "dgemm, the same k loop in float64, reaches 70-75 % of the fp64 peak over the whole product "
     "([zen4](zen4.md)): its gap is outside the k loop, and open."),
    (("znver4",), ("int8",),
     "**znver4 int8: llvm's model.** llvm's `znver4` model issues `vpdpbusd zmm` once every 2 cycles (the "
     "multiply-adds alone model at twice the documented cycles). Measured on a Zen 4: the peak probe issues "
     "one `vpdpbusd zmm` per cycle (466-467 GOP/s) and the whole int8 product (`gemm_u8s8s32`, 2048³) reaches "
     "377-384 GOP/s, 81-82 % of it with packing and epilogue."),
    (("skylake", "znver3", "skylake-avx512", "haswell", "znver2"), ("int8",),
     "**int8 without VNNI: the kernel's design, not the model.** The int16-widening kernels follow each "
     "`vpmaddwd` with a `vpaddd` into the int32 accumulator and broadcast A with `vpbroadcastd`: per k group "
     "2 x MR `vpmaddwd` + 2 x MR `vpaddd` + MR broadcasts, all on the vector ALU ports (Skylake p0/p1/p5; "
     "Skylake-SP zmm on p0/p5 only; Zen 3 the add and broadcast pipes). The `vpmaddwd` bound is out of reach "
     "without a fused multiply-accumulate, which only VNNI has; CPUs with VNNI get the VNNI kernels. (Zen 3's "
     "`vpmaddwd` rate, 2 per cycle, is Agner Fog's figure, not measured.)"),
]


def _compiler():
    cc = os.environ.get("CC") or (sysconfig.get_config_var("CC") or "gcc").split()[0]
    try:
        first = subprocess.run([cc, "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    except (OSError, IndexError):
        first = cc
    return first


def page(rows, version, command):
    """The docs page (MyST markdown) of a model run: what ran, how to reproduce it, the table, what each
    row under the bound means (NOTES) and the bounds with their sources."""
    low = [r for r in rows if r.get("bound") is not None and r["bound"] / r["cycles"] < MIN_FRACTION]
    notes = [text for cpus, ops, text in NOTES if any(r["cpu"] in cpus and r["op"] in ops for r in low)]
    out = ["# Kernel throughput model (llvm-mca)", "",
           f"<!-- Generated by `{command}`: regenerate, do not edit. -->", "",
           "No timing: each x86 kernel file is compiled as `setup.py` compiles it, the installed gemmkit is "
           "asked which configuration its dispatcher picks for each target CPU and which kernels that holds, "
           "each kernel's k loop (the innermost loop reachable from the kernel with the most multiply-adds) is "
           f"taken from the assembly and `llvm-mca -mcpu=CPU -iterations={ITERATIONS}` gives its cycles. The "
           "bound is the CPU's documented multiply-add issue rate (the last table); % of bound = bound cycles / "
           f"llvm-mca cycles, ✗ under {MIN_FRACTION:.0%}. \"What limits it\" is read from llvm-mca's resource "
           "pressure (the busiest pipe or port, and the instructions on it per pass of the loop). A complex op "
           "without a native kernel runs by the 1m method on the real one.", "",
           f"- **llvm-mca**: {version}",
           f"- **compiler**: {_compiler()}, `-O3 -std=c11 -fno-strict-aliasing` and each file's ISA flags "
           "from `setup.py`",
           f"- **gemmkit**: {_gemmkit_version()} (the dispatcher's choices)",
           f"- **command**: `{command}`", "",
           "## How to reproduce", "",
           "In a checkout with gemmkit installed and `llvm-mca-19` on the PATH (Debian 12: "
           "`apt-get install llvm-19`):", "", "```sh", command,
           "python -m bench.model --cpu znver4 --op sgemm --show-loop   # one kernel's k loop", "```", "",
           "## Every selected kernel per target CPU", "", table(rows), ""]
    if notes:
        out += [f"## The rows under {MIN_FRACTION:.0%}", ""] + [f"- {n}" for n in notes] + [""]
    out += ["## Bounds", "", "Multiply-add instructions issued per cycle (`bench/model.py`, `CPUS`):", "",
            sources_table(), ""]
    return "\n".join(out)


def main(argv=None):
    p = argparse.ArgumentParser(prog="python -m bench.model",
                                description="llvm-mca model of each selected kernel's k loop per target CPU "
                                            "against its multiply-add bound")
    p.add_argument("--cpu", action="append", help="only these llvm -mcpu names (repeatable)")
    p.add_argument("--op", action="append", choices=OPS, help="only these ops (repeatable)")
    p.add_argument("--show-loop", action="store_true", help="print each kernel's extracted k loop")
    p.add_argument("--sources", action="store_true", help="print the bound table with its sources")
    p.add_argument("--page", metavar="FILE.md", help="also write the docs page (the table, what each row under "
                   "the bound means, the bounds): docs/performance/kernel_model.md")
    a = p.parse_args(argv)
    mca = llvm_mca_path()
    if mca is None:
        print(f"{LLVM_MCA} not found: install it (Debian 12: apt-get install llvm-19)", file=sys.stderr)
        return 1
    rows = model(a.cpu, tuple(a.op or OPS), mca=mca)
    version = llvm_version(mca)
    print(f"llvm-mca {version} ({mca}), {ITERATIONS} iterations; kernels compiled as setup.py does; "
          f"configs as gemmkit {_gemmkit_version()} dispatches them\n")
    print(table(rows))
    if a.sources:
        print("\n" + sources_table())
    if a.page:
        command = "python -m bench.model" + "".join(f" --cpu {c}" for c in a.cpu or ()) + \
            "".join(f" --op {o}" for o in a.op or ()) + " --page docs/performance/kernel_model.md"
        with open(a.page, "w", encoding="utf-8") as f:
            f.write(page(rows, version, command))
        print(f"\nwrote {a.page}")
    if a.show_loop:
        seen = set()
        for r in rows:
            if r.get("loop") is not None and r["kernel"] not in seen:
                seen.add(r["kernel"])
                print(f"\n{r['kernel']} (in {r['loop'].function}):\n{r['loop'].mca_text()}")
    low = [r for r in rows if r.get("bound") is not None and r["bound"] / r["cycles"] < MIN_FRACTION]
    missing = [r for r in rows if "error" in r]
    if low or missing:
        print(f"\n{len(low)} kernel/CPU pairs model under {MIN_FRACTION:.0%} of their bound, {len(missing)} without "
              f"a k loop", file=sys.stderr)
    return 0


def _gemmkit_version():
    import gemmkit
    return getattr(gemmkit, "__version__", "?")


def _drop_checkout_from_path():
    """`python -m bench.model` in a checkout puts it first on sys.path, where gemmkit/ is the source folder
    without its compiled extension: use the installed gemmkit."""
    sys.path[:] = [p for p in sys.path if os.path.abspath(p or os.curdir) != REPO]


_drop_checkout_from_path()

if __name__ == "__main__":
    sys.exit(main())
