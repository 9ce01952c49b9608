"""The public namespaces hold the API and document it: dir(gemmkit) lists no module but gemmkit's own public
submodules, and every public callable of gemmkit and its front ends has a NumPy-style docstring.

(.ci/docs runs docs/check_docstrings.py, the full style check with every example, against the installed wheel;
this is the part that runs wherever the test suite does.)
"""
import importlib
import inspect
import types

import pytest

import gemmkit

PUBLIC_SUBMODULES = {"blas", "onnx", "quant", "dask"}
MODULES = ["gemmkit", "gemmkit.blas", "gemmkit.onnx", "gemmkit.quant", "gemmkit.dask"]
# gemmkit.onnx has no __all__ (its OpRun classes are made on first access, which needs onnx): its public
# names are those of dir() plus these
LAZY = {"gemmkit.onnx": ("Gemm", "DynamicQuantizeMatMul", "MatMulIntegerToFloat")}


def test_dir_of_gemmkit_lists_no_foreign_module():
    for name in PUBLIC_SUBMODULES - {"dask"}:  # imported, so that they are attributes of gemmkit
        importlib.import_module(f"gemmkit.{name}")
    modules = {name: obj for name, obj in vars(gemmkit).items() if isinstance(obj, types.ModuleType)}
    foreign = {name: obj.__name__ for name, obj in modules.items() if not obj.__name__.startswith("gemmkit.")}
    assert foreign == {}, f"dir(gemmkit) lists modules that are not gemmkit's: {foreign}"
    public = {name for name in modules if not name.startswith("_")}
    assert public <= PUBLIC_SUBMODULES, f"public module names beyond gemmkit's submodules: {public - PUBLIC_SUBMODULES}"
    assert {"blas", "onnx", "quant"} <= public
    assert {"os", "contextlib"}.isdisjoint(dir(gemmkit))
    assert set(gemmkit.__all__) <= set(dir(gemmkit))


def _public_callables(modname):
    try:
        mod = importlib.import_module(modname)
    except ImportError as e:
        pytest.skip(f"{modname} cannot be imported here: {e}")
    names = getattr(mod, "__all__", None)
    if names is None:
        names = [n for n in dir(mod) if not n.startswith("_")]
        for lazy in LAZY.get(modname, ()):
            try:
                getattr(mod, lazy)
            except ImportError:  # onnx is not installed: those classes do not exist
                continue
            names.append(lazy)
    for name in sorted(set(names)):
        obj = getattr(mod, name)
        if callable(obj) and not isinstance(obj, types.ModuleType):
            yield f"{modname}.{name}", obj


def _sections(doc):
    """The NumPy-style section headings of a docstring (a title line underlined with dashes)."""
    lines = doc.splitlines()
    return {lines[i].strip() for i in range(len(lines) - 1)
            if lines[i].strip() and set(lines[i + 1].strip()) == {"-"} and len(lines[i + 1].strip()) == len(lines[i].strip())}


@pytest.mark.parametrize("modname", MODULES)
def test_every_public_callable_has_a_numpy_docstring(modname):
    """Each public callable: a docstring of its own (not one inherited from a base class, Exception's say),
    a summary line, and a Parameters or Returns section (classes: Parameters, their constructor's)."""
    problems = []
    for qualname, obj in _public_callables(modname):
        doc = obj.__doc__ if inspect.isclass(obj) else inspect.getdoc(obj)
        if not doc or not doc.strip():
            problems.append(f"{qualname}: no docstring")
            continue
        doc = inspect.cleandoc(doc)
        sections = _sections(doc)
        wanted = {"Parameters"} if inspect.isclass(obj) else {"Parameters", "Returns", "Yields"}
        if not sections & wanted:
            problems.append(f"{qualname}: no {' or '.join(sorted(wanted))} section")
        if doc.splitlines()[0].strip() in ("", "Parameters", "Returns"):
            problems.append(f"{qualname}: no summary line")
    assert problems == [], "\n".join(problems)


def test_check_sees_the_documented_names():
    """The check above reads the names it should (guards against an empty walk passing)."""
    names = {q for q, _ in _public_callables("gemmkit.quant")} | {q for q, _ in _public_callables("gemmkit.blas")}
    assert {"gemmkit.quant.PackedWeight", "gemmkit.blas.error", "gemmkit.blas.get_blas_funcs"} <= names
    assert "gemmkit.onnx.resolve_operand" in {q for q, _ in _public_callables("gemmkit.onnx")}
    assert _sections("Summary.\n\nParameters\n----------\nx : int\n") == {"Parameters"}
