"""The benchmark's cases, one module per op; each module defines OPS, a list of common.Op (one table each).
A new op is a new module here: it is found by name (every module but `common`), ordered by its ORDER; a
heavy one sets DEFAULT = False and runs only when named (--only)."""
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


def runs_by_default(module):
    """Whether a run that names no modules includes this one (its DEFAULT, True when it has none)."""
    return getattr(module, "DEFAULT", True)


def default_modules():
    """Names of the modules a run includes when --only names none, in report order."""
    return [name for name, m in modules().items() if runs_by_default(m)]


def selected_ops(groups=None):
    """The Op objects of the modules named in `groups` (when None: every module with DEFAULT not False), in
    report order."""
    mods = modules()
    unknown = set(groups or ()) - set(mods)
    if unknown:
        raise KeyError(f"unknown case module(s): {', '.join(sorted(unknown))}; known: {', '.join(mods)}")
    return [op for name, m in mods.items() if (name in groups if groups is not None else runs_by_default(m))
            for op in m.OPS]
