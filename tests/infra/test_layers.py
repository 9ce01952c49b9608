"""The Python layers keep to what they may call (docs/architecture.rst): gemmkit._core alone links the C core,
gemmkit._fastpaths reaches C only through `cimport gemmkit._core`, and no compiled module calls up into a front end.

The binary checks read the installed extensions; the source checks read the checkout or sdist this tests/ folder
sits in and skip elsewhere.
"""
import ast
import re
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest

import gemmkit
from gemmkit import _core, _fastpaths


def _source_root():
    for folder in Path(__file__).resolve().parents:
        if (folder / "setup.py").is_file() and (folder / "gemmkit" / "_core.pyx").is_file():
            return folder
    pytest.skip("the sources are not beside tests/ (not a checkout or sdist)")


def _symbols(path):
    """Every dynamic symbol (defined or undefined) of a shared object, by nm."""
    nm = shutil.which("nm")
    if nm is None:
        pytest.skip("nm (binutils) is not installed")
    out = subprocess.run([nm, "-D", path], capture_output=True, text=True)
    if out.returncode != 0:
        pytest.skip(f"nm -D cannot read {path}: {out.stderr.strip()}")
    return {line.split()[-1] for line in out.stdout.splitlines() if line.strip()}


def _c_core_symbols(path):
    return sorted(s for s in _symbols(path) if s.startswith("gemmkit_"))


def test_only_core_links_the_c_core():
    if not _core.__file__.endswith(".so"):
        pytest.skip("ELF extensions only")
    assert "gemmkit_sgemm_batch" in _c_core_symbols(_core.__file__)  # the check sees C symbols where they are
    assert _c_core_symbols(_fastpaths.__file__) == [], "gemmkit._fastpaths links or calls the C core itself"


def test_fastpaths_reach_c_only_through_core_pxd():
    root = _source_root()
    text = (root / "gemmkit" / "_fastpaths.pyx").read_text(encoding="utf-8")
    assert "cdef extern" not in text
    assert re.search(r"^from gemmkit\._core cimport", text, re.M)
    imports = re.findall(r"^\s*(?:from|import|cimport)\s+(\S+)", text, re.M)
    assert not [m for m in imports if m.startswith(("gemmkit", ".")) and m != "gemmkit._core"], imports
    # its extension is built from the .pyx alone: no csrc/ source of its own
    tree = ast.parse((root / "setup.py").read_text(encoding="utf-8"))
    exts = {node.args[0].value: node for node in ast.walk(tree) if isinstance(node, ast.Call)
            and getattr(node.func, "id", None) == "Extension" and node.args and isinstance(node.args[0], ast.Constant)}
    assert set(exts) == {"gemmkit._core", "gemmkit._fastpaths"}
    sources = next(k.value for k in exts["gemmkit._fastpaths"].keywords if k.arg == "sources")
    assert ast.literal_eval(sources) == ["gemmkit/_fastpaths.pyx"]


def test_no_module_calls_up_into_a_front_end():
    root = _source_root()
    core = (root / "gemmkit" / "_core.pyx").read_text(encoding="utf-8")
    assert not re.search(r"^\s*(from|import|cimport)\s+(gemmkit|\.)", core, re.M), "_core imports a gemmkit module"
    for path in sorted((root / "gemmkit").glob("*.py")):
        text = path.read_text(encoding="utf-8")
        # a front end registering a callback in (or patching) a compiled module
        bad = re.findall(r"\b_(?:core|fastpaths)\.\w+(?:\[[^\]]*\])?\s*=[^=]", text)
        assert not bad, f"{path.name} writes into a compiled module: {bad}"


def test_each_gemm_c_entry_is_called_in_one_place():
    """The GEMMs reach C through one function, gemm_nogil (one route for the 16-bit types too)."""
    text = (_source_root() / "gemmkit" / "_core.pyx").read_text(encoding="utf-8")
    calls = re.findall(r"\b(gemmkit_\w*gemm\w*)\(", text)
    gemm = [c for c in calls if not c.startswith(("gemmkit_gemm_s8s8_per_token", "gemmkit_gemm_u8s8s32",
                                                     "gemmkit_gemm_s8s8s32"))]
    assert sorted(gemm) == sorted(set(gemm)), f"called more than once: {sorted(gemm)}"
    assert not {"gemmkit_hgemm", "gemmkit_bf16gemm", "gemmkit_gemm_bf16bf16f32", "gemmkit_sgemm"} & set(gemm)


def test_dtype_table_is_keyed_by_numpy_type_number():
    for t in (np.float32, np.float64, np.complex64, np.complex128, np.float16, np.uint16, np.int32, np.int64,
              np.uint32, np.uint64, np.int8, np.uint8):
        assert _core.DTYPE_NAMES[np.dtype(t).num] == np.dtype(t).name
    assert gemmkit.sgemm is _core.sgemm


def test_lowest_python_layer_imports_no_front_end():
    """gemmkit._args and gemmkit._resolve, which every front end calls, import nothing of gemmkit but the core
    (a front end importing them is the only direction): checked on every import statement, nested ones too."""
    root = _source_root()
    for name in ("_args.py", "_resolve.py"):
        tree = ast.parse((root / "gemmkit" / name).read_text(encoding="utf-8"))
        found = []
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("gemmkit")):
                mods = [node.module] if node.module else [a.name for a in node.names]
                found += [m for m in mods if m not in ("_core", "gemmkit._core")]
            elif isinstance(node, ast.Import):
                found += [a.name for a in node.names if a.name.startswith("gemmkit") and a.name != "gemmkit._core"]
        assert not found, f"gemmkit/{name} imports {found}"


def test_no_kernel_is_chosen_by_its_path_name():
    """Kernels are reached through configuration fields: outside dispatch (which matches configs to a CPU or a
    forced path) and tuning's table of overrides per path, no C source compares a configuration's path name."""
    root = _source_root()
    found = []
    for path in sorted((root / "csrc").rglob("*.[ch]")):
        if path.name in ("dispatch.c", "tuning.c"):
            continue
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if re.search(r"strcmp\([^;]*->arch|strcmp\([^;]*\barch\b", line):
                found.append(f"{path.relative_to(root)}:{n}: {line.strip()}")
    assert not found, found


def _c_code(text):
    """C source without its comments (calls in comments are not calls)."""
    return re.sub(r"//[^\n]*", "", re.sub(r"/\*.*?\*/", "", text, flags=re.S))


def _cycle(edges):
    """A cycle of the directed graph {node: set of nodes} as a list of nodes, or None."""
    state = {}

    def walk(u, path):
        state[u] = 1
        path.append(u)
        for v in sorted(edges[u]):
            if state.get(v) == 1:
                return path[path.index(v):] + [v]
            if not state.get(v):
                found = walk(v, path)
                if found:
                    return found
        state[u] = 2
        path.pop()
        return None

    for u in sorted(edges):
        if not state.get(u):
            found = walk(u, [])
            if found:
                return found
    return None


def test_no_circle_of_calls_among_the_c_files():
    """csrc/*.c call each other in layers: a file calls functions defined in another only where that one calls none
    of its own back, through any chain (frontend -> drivers -> dispatch -> tuning -> model; docs/architecture.rst)."""
    files = sorted((_source_root() / "csrc").glob("*.c"))
    code = {f.name: _c_code(f.read_text(encoding="utf-8")) for f in files}
    defined = {}  # external function -> the file that defines it
    for name, text in code.items():
        for m in re.finditer(r"^(?!static)[A-Za-z_][\w \*]*?\b((?:gk|gemmkit)_\w+)\s*\([^;{]*\)\s*\{", text, re.M):
            defined.setdefault(m.group(1), name)
    edges = {name: {owner for fn, owner in defined.items() if owner != name and re.search(rf"\b{fn}\s*\(", text)}
             for name, text in code.items()}
    assert len(defined) > 50, "the definitions were not found: the pattern no longer matches the sources"
    assert _cycle(edges) is None, f"a circle of calls among csrc/*.c: {' -> '.join(_cycle(edges))}"


def test_no_circle_of_imports_among_the_modules():
    """gemmkit's modules import each other in layers (_core, then _args / _resolve, then the front ends): no module
    imports, through any chain, one that imports it (module-level and function-level imports of a submodule, or of
    the package itself: `import gemmkit` inside a module that __init__ imports is a circle too)."""
    root = _source_root() / "gemmkit"
    paths = {p.stem: p for p in sorted(root.glob("*.py")) + sorted(root.glob("*.pyx"))}
    edges = {}
    for name, path in paths.items():
        text, deps = path.read_text(encoding="utf-8"), set()
        if path.suffix == ".py":
            for node in ast.walk(ast.parse(text)):
                if isinstance(node, ast.ImportFrom) and node.level == 1:
                    deps |= {a.name for a in node.names} if node.module is None else {node.module.split(".")[0]}
                elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("gemmkit."):
                    deps.add(node.module.split(".")[1])
                elif isinstance(node, ast.ImportFrom) and node.module == "gemmkit":
                    deps |= {a.name for a in node.names}
                elif isinstance(node, ast.Import):
                    deps |= {a.name.split(".")[1] for a in node.names if a.name.startswith("gemmkit.")}
                    if any(a.name == "gemmkit" for a in node.names):  # the package itself: all __init__ imports
                        deps.add("__init__")
        else:
            for m in re.finditer(r"^\s*(?:from\s+(?:gemmkit\.|\.)(\w+)|(?:c?import)\s+gemmkit\.(\w+))", text, re.M):
                deps.add(m.group(1) or m.group(2))
        edges[name] = {d for d in deps if d in paths and d != name}
    assert edges["_matmul"], "no imports found: the parser no longer reads the modules"
    assert _cycle(edges) is None, f"a circle of imports among gemmkit's modules: {' -> '.join(_cycle(edges))}"


# A measured figure: a rate, or a ratio to a peer library (the evidence belongs in docs/decisions.md)
_FIGURE = re.compile(r"GFLOP/s|GOP/s|GB/s|\b\d+(\.\d+)? ?x (MKL|oneDNN|NumPy|OpenBLAS|SciPy|ORT|ONNX Runtime)\b")


def test_no_measured_figure_in_a_code_comment():
    """Code says why, not what was measured: no rate (GFLOP/s, GOP/s, GB/s) nor ratio to a peer in a comment of
    csrc/ or gemmkit/ (strings, such as a report's units, are not comments)."""
    root, found = _source_root(), []
    for path in sorted((root / "csrc").rglob("*.[ch]")):
        for m in re.finditer(r"/\*.*?\*/|//[^\n]*", path.read_text(encoding="utf-8"), flags=re.S):
            if _FIGURE.search(m.group(0)):
                found.append(f"{path.relative_to(root)}: {_FIGURE.search(m.group(0)).group(0)}")
    for path in sorted((root / "gemmkit").glob("*.py*")):
        for line in path.read_text(encoding="utf-8").splitlines():
            comment = line.split("#", 1)[1] if "#" in line and not line.lstrip().startswith(("'", '"')) else ""
            if _FIGURE.search(comment):
                found.append(f"{path.relative_to(root)}: {comment.strip()[:80]}")
    assert not found, "measured figures in code comments (move them to docs/decisions.md): " + "; ".join(found)
