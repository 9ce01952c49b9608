"""The benchmark's cases, one module per op; each module defines OPS, a list of common.Op (one table each).
A new op is a new module here: it is found by name (every module but `common`), ordered by its ORDER."""
import importlib
import pkgutil

DEFAULT_ORDER = 50


def modules():
    """{module name: module} of every cases module, in ORDER then name order."""
    found = {}
    for info in pkgutil.iter_modules(__path__):
        if info.name != "common" and not info.name.startswith("_"):
            found[info.name] = importlib.import_module(f"{__name__}.{info.name}")
    return dict(sorted(found.items(), key=lambda kv: (getattr(kv[1], "ORDER", DEFAULT_ORDER), kv[0])))


def selected_ops(groups=None):
    """The Op objects of the modules named in `groups` (all when None), in report order."""
    mods = modules()
    unknown = set(groups or ()) - set(mods)
    if unknown:
        raise KeyError(f"unknown case module(s): {', '.join(sorted(unknown))}; known: {', '.join(mods)}")
    return [op for name, m in mods.items() if groups is None or name in groups for op in m.OPS]
