"""Checks the installed gemmkit's public docstrings: each public function, class and public method has one in
NumPy style (Parameters, Returns, Raises, Examples), and runs every docstring example (the Cython core's too)."""
import doctest
import importlib
import inspect
import sys

MODULES = ["gemmkit", "gemmkit.blas", "gemmkit.onnx", "gemmkit.quant", "gemmkit.dask"]
EXTRA = {"gemmkit.onnx": ["gemm", "gemm_version", "Gemm", "matmul_integer_to_float", "dynamic_quantize_matmul",
                          "resolve_operand"]}
NO_EXAMPLES = {"gemmkit.onnx.Gemm"}  # an OpRun, shown with a model in docs/guide/onnx.rst
# Returns: every callable that takes arguments or gives a value says what it returns (a context manager
# what it gives the with block), except these, which return None and say so in their summary.
RETURNS_NONE = {"gemmkit.set_num_threads", "gemmkit.set_arch"}
# Raises: every callable that takes arguments says what bad input raises, except these, which accept any
# value of what they take.
NO_RAISES = {"gemmkit.show_config", "gemmkit.blas.error", "gemmkit.quant.PackedWeight", "gemmkit.onnx.Gemm"}


def public_objects():
    """(qualified name, object) of each public function and class, and of each public method (and
    ``__call__``) that a public class defines itself (not what it inherits from onnx or Exception)."""
    for modname in MODULES:
        mod = importlib.import_module(modname)
        for name in getattr(mod, "__all__", []) or EXTRA.get(modname, []):
            obj = getattr(mod, name)
            if callable(obj):
                yield f"{modname}.{name}", obj
                if inspect.isclass(obj):
                    for attr, member in vars(obj).items():
                        if isinstance(member, (classmethod, staticmethod)):
                            member = getattr(obj, attr)
                        if (attr == "__call__" or not attr.startswith("_")) and inspect.isroutine(member):
                            yield f"{modname}.{name}.{attr}", member


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
    if (not inspect.isclass(obj) and qualname not in RETURNS_NONE
            and "Returns\n-------" not in doc and "Yields\n------" not in doc):
        problems.append("no Returns section")
    if params and qualname not in NO_RAISES and "Raises\n------" not in doc:
        problems.append("no Raises section")
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
