"""The tuning file: its format, where it lives, and applying a matching one at import (GEMMKIT_TUNING,
GEMMKIT_BLOCKING); gemmkit/_tune.py's `gemmkit tune` writes it. Only the core below it."""
import json
import os
import stat
import warnings

from . import _core
from ._version import __version__

FORMAT = "gemmkit-tuning"
FORMAT_VERSION = 1
FILE_NAME = "tuning.json"
MAX_FILE_BYTES = 64 << 10  # a tuning file is about 1 KiB; anything much larger is not ours
ENV = "GEMMKIT_TUNING"          # "off", or the path of a tuning file (default: the user cache dir's)
BLOCKING_ENV = "GEMMKIT_BLOCKING"  # "hand" (tables and hand configs), "model" (the model everywhere)

# What the last load did, for show_config() and `gemmkit tune --show`.
state = {"status": "not loaded", "path": None, "params": {}}


class TuningWarning(UserWarning):
    """A tuning file was found but not applied (another CPU or version, or not a valid file)."""


class SaveError(Exception):
    """The tuning file cannot be saved where asked: found before any measuring (check_destination)."""


# ---- where the file lives and what it is keyed by -------------------------------------------------

def default_path():
    """The tuning file in the user's cache dir (platformdirs), or None without platformdirs."""
    try:
        import platformdirs
    except ImportError:
        return None
    return os.path.join(platformdirs.user_cache_dir("gemmkit", appauthor=False), FILE_NAME)


def _stepping():
    """The CPU's stepping where the OS tells it (Linux /proc/cpuinfo), else None."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("stepping"):
                    return int(line.split(":", 1)[1])
                if not line.strip():
                    break
    except (OSError, ValueError):
        pass
    return None


def machine_key():
    """What a tuning file must match: CPU vendor / family / model / stepping, the cache sizes and ways,
    the default kernel path and gemmkit's version."""
    cpu = _core.cpu_identity()
    caches = _core.cache_hierarchy()
    return {
        "gemmkit": __version__,
        "cpu": {"vendor": cpu["vendor"], "family": cpu["family"], "model": cpu["model"], "stepping": _stepping()},
        "caches": {k: [caches[k]["size"], caches[k]["ways"], caches[k]["line"]] for k in ("L1d", "L2", "L3")},
    }




def check_destination(path=None):
    """The path the tuning file will be saved to (default_path() when None), once it is known that its folder
    exists or can be made and a file can be created there; else SaveError saying why, in one line."""
    path = path or default_path()
    if path is None:
        raise SaveError("platformdirs is not installed, so there is no default place for the tuning file; "
                        "give --output PATH")
    folder = os.path.dirname(os.path.abspath(path))
    try:
        os.makedirs(folder, exist_ok=True)
        if os.path.isdir(path):
            raise SaveError(f"cannot save the tuning file to {path}: it is a directory")
        tmp = path + ".tmp"
        existed = os.path.lexists(tmp)
        # non-blocking: a FIFO left at the temporary's name must fail here, not hang
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | getattr(os, "O_NONBLOCK", 0), 0o644)
        os.close(fd)
        if not existed:
            os.remove(tmp)
    except OSError as e:
        raise SaveError(f"cannot save the tuning file to {path}: {e.strerror or e}") from None
    return path


# ---- reading and applying a file ---------------------------------------------------------------------

def _check(doc):
    """The reason `doc` (a parsed file) is not a tuning file for this machine and version, or None."""
    if not isinstance(doc, dict):
        return "not a JSON object"
    if doc.get("format") != FORMAT:
        return f"format is {doc.get('format')!r}, not {FORMAT!r}"
    if doc.get("version") != FORMAT_VERSION or isinstance(doc.get("version"), bool):
        return f"format version {doc.get('version')!r}, this gemmkit reads {FORMAT_VERSION}"
    key = machine_key()
    for field in ("gemmkit", "cpu", "caches"):
        if doc.get(field) != key[field]:
            return f"made for {field} {doc.get(field)!r}, this is {key[field]!r}"
    if not isinstance(doc.get("arch"), str) or doc["arch"] not in _core.ARCHS:
        return f"arch {doc.get('arch')!r} is not a kernel path"
    params = doc.get("params")
    if not isinstance(params, dict) or len(params) > 2 * len(_core.param_names()):
        return "params is not an object of parameter values"
    names = set(_core.param_names())
    for name, value in params.items():
        if name not in names:
            return f"unknown parameter {name!r}"
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            return f"{name}: {value!r} is not a number"
    return None


def set_all(arch, params):
    """Sets `params` of path `arch` through the C entry, each value validated there. A block's MC, KC and
    NC are checked together with the values in use, so a set that fits may need another pass in another
    order; returns None when every value was taken, else the first reason (some may have been taken)."""
    left, why = dict(params), None
    for _ in range(3):
        failed = {}
        for name, value in left.items():
            r = _core.tuning_set(arch, name, value)
            if r is not None:
                failed[name] = value
                why = why if why and len(failed) > 1 else r
        if not failed:
            return None
        if len(failed) == len(left):
            break
        left, why = failed, None
    return why or "not accepted"


def apply(doc):
    """Applies a checked document's params; all or nothing: returns None when every value was taken, else
    the reason (then none is)."""
    _core.tuning_clear()
    why = set_all(doc["arch"], doc["params"])
    if why is not None:
        _core.tuning_clear()
    return why


def read(path):
    """(document, None) or (None, reason) for the file at `path`: only a regular file (after symlinks) of
    at most MAX_FILE_BYTES is read, so a FIFO or a device there cannot hang or exhaust the import."""
    try:
        real = os.path.realpath(path)
        if not stat.S_ISREG(os.stat(real).st_mode):
            return None, f"not a regular file ({real})"
        # non-blocking open: a FIFO swapped in after the check must not block; fstat re-checks the opened file
        fd = os.open(real, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
        with os.fdopen(fd, "rb") as f:
            info = os.fstat(f.fileno())
            if not stat.S_ISREG(info.st_mode):
                return None, f"not a regular file ({real})"
            if info.st_size > MAX_FILE_BYTES:
                return None, f"{info.st_size} bytes, more than a tuning file ({MAX_FILE_BYTES})"
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            return None, f"more than {MAX_FILE_BYTES} bytes, more than a tuning file"
        doc = json.loads(data.decode("utf-8"))
    except (OSError, ValueError, UnicodeDecodeError, RecursionError) as e:
        return None, f"unreadable ({type(e).__name__}: {e})"
    why = _check(doc)
    return (None, why) if why else (doc, None)


def load(path=None, warn=True):
    """Drops any applied tuning, then applies the file at `path` (default: GEMMKIT_TUNING's, else the
    user cache dir's) when it matches this machine and version; a file that does not match or is not
    valid is ignored with a TuningWarning. Returns the status string."""
    _core.tuning_clear()
    env = os.environ.get(ENV, "")
    state["params"] = {}
    if path is None and env.lower() in ("off", "0", "none", "no"):
        state.update(status="off (GEMMKIT_TUNING=off)", path=None)
        return state["status"]
    path = path or env or default_path()
    state["path"] = path
    if not path or not os.path.exists(path):
        state["status"] = "none (no tuning file; run `gemmkit tune`)"
        if env and warn and path:
            warnings.warn(f"GEMMKIT_TUNING={env!r}: no such file", TuningWarning, stacklevel=2)
        return state["status"]
    doc, why = read(path)
    if doc is not None:
        why = apply(doc)
    if why is not None:
        state["status"] = f"ignored: {why}"
        if warn:
            warnings.warn(f"gemmkit: tuning file {path} ignored: {why}; the defaults are in use", TuningWarning,
                          stacklevel=2)
        return state["status"]
    state["params"] = dict(doc["params"])
    state["status"] = f"applied ({doc['arch']})"
    return state["status"]


def apply_blocking_env():
    """GEMMKIT_BLOCKING: 'hand' (path tables and hand configs only), 'model' (the model everywhere, hand
    configs included), unset or 'auto' (the model where no hand config applies)."""
    v = os.environ.get(BLOCKING_ENV, "").lower()
    modes = {"": 1, "auto": 1, "hand": 0, "table": 0, "model": 2}
    if v not in modes:
        warnings.warn(f"{BLOCKING_ENV}={v!r} ignored: expected hand, model or auto", TuningWarning, stacklevel=2)
        return
    _core.blocking_model(modes[v])


def load_at_import():
    """At import: GEMMKIT_BLOCKING, then the tuning file (never raises: a bad file only warns)."""
    try:
        apply_blocking_env()
        load()
    except Exception as e:  # noqa: BLE001  (a tuning problem must never stop the import)
        _core.tuning_clear()
        state.update(status=f"ignored: {type(e).__name__}: {e}")
        warnings.warn(f"gemmkit: tuning not applied: {e}", TuningWarning, stacklevel=2)
