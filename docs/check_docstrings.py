"""Checks the installed gemmkit's public docstrings: each public function and class has one in NumPy style
(Parameters where it takes arguments, Examples), and runs every docstring example (the Cython core's too)."""
import doctest
import importlib
import inspect
import sys

MODULES = ["gemmkit", "gemmkit.blas", "gemmkit.onnx", "gemmkit.quant", "gemmkit.dask"]
EXTRA = {"gemmkit.onnx": ["gemm", "gemm_version", "Gemm"]}   # gemmkit.onnx has no __all__
NO_EXAMPLES = {"gemmkit.quant.PackedWeight", "gemmkit.blas.error", "gemmkit.onnx.Gemm"}  # classes, shown elsewhere


def public_objects():
    for modname in MODULES:
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", []) or EXTRA.get(modname, []):
            obj = getattr(mod, name)
            if callable(obj):
                yield f"{modname}.{name}", obj


def check_style(qualname, obj):
    doc = inspect.getdoc(obj) or ""
    problems = []
    if not doc.strip():
        return ["no docstring"]
    if qualname not in NO_EXAMPLES and "Examples\n--------" not in doc:
        problems.append("no Examples section")
    try:
        params = [p for p in inspect.signature(obj).parameters if p not in ("self", "args", "kwargs")]
    except (TypeError, ValueError):
        params = []
    if params and not inspect.isclass(obj) and "Parameters\n----------" not in doc:
        problems.append("no Parameters section")
    return problems


def main():
    flags = doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE
    finder, runner = doctest.DocTestFinder(recurse=False), doctest.DocTestRunner(optionflags=flags)
    bad, examples, seen = [], 0, set()
    for qualname, obj in public_objects():
        bad += [f"{qualname}: {p}" for p in check_style(qualname, obj)]
        if id(obj) in seen:
            continue
        seen.add(id(obj))
        for test in finder.find(obj, qualname, globs={}):
            examples += len(test.examples)
            runner.run(test)
    result = runner.summarize(verbose=False)
    print(f"{len(seen)} public objects, {examples} docstring examples run, {result.failed} failed")
    for line in bad:
        print("docstring style:", line)
    if result.failed or bad or examples == 0:
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
