"""Build of gemmkit's C core and Cython extension.

Each ISA kernel file is compiled with its own instruction-set flags (and only that file), so the rest
of the library stays baseline x86-64 (or the platform's baseline) and runtime dispatch decides what
runs. Non-x86 targets compile only the portable kernels.
"""
import glob
import os
import sys
import sysconfig
import tempfile
from concurrent.futures import ThreadPoolExecutor

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext


def read_sources(path="csrc/SOURCES", groups_of=None):
    """csrc/SOURCES (also read by .ci/): the portable sources, and each kernel file (in the file's order)
    with its flag group's target and (gcc/clang flags, MSVC flags); `groups_of` (a dict), when given, gets
    each kernel file's group name."""
    portable, groups, kernels = [], {}, []
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line.startswith("flags "):
                head, gnu, msvc = line[len("flags "):].split("|")
                name, target = head.split()
                groups[name] = (target, gnu.split(), msvc.split())
            elif line:
                src, group = line.split()
                if group == "portable":
                    portable.append(src)
                else:
                    target, gnu, msvc = groups[group]
                    kernels.append((src, target, gnu, msvc))
                    if groups_of is not None:
                        groups_of[src] = group
    return portable, kernels


_GROUPS = {}
CORE_SOURCES, _KERNELS = read_sources(groups_of=_GROUPS)
# kernel file -> (gcc/clang flags, MSVC flags); compiled only for x86-64 targets.
X86_KERNELS = {src: (gnu, msvc) for src, target, gnu, msvc in _KERNELS if target == "x86_64"}
# Built only where the compiler knows their flags (group target x86_64-probe: AVX-VNNI, AMX; with MSVC where the
# group names MSVC flags), each defining GEMMKIT_HAVE_<GROUP> for the C sources:
# kernel file -> (gcc/clang flags, MSVC flags, macro).
PROBE_KERNELS = {src: (gnu, msvc, "GEMMKIT_HAVE_" + _GROUPS[src].upper())
                 for src, target, gnu, msvc in _KERNELS if target == "x86_64-probe"}
# AArch64 kernel file -> gcc/clang flags; compiled only for aarch64 / arm64 targets with a gcc-style compiler
# (the Windows-on-ARM build stays portable). Dispatch decides at run time.
ARM_KERNELS = {src: gnu for src, target, gnu, msvc in _KERNELS if target == "aarch64"}


def target_is_aarch64():
    if os.name == "nt":
        return False
    plat = sysconfig.get_platform().lower()
    archflags = os.environ.get("ARCHFLAGS", "")
    if plat.startswith("macosx") and archflags:
        return "arm64" in archflags and "x86_64" not in archflags
    return plat.endswith("aarch64") or plat.endswith("arm64")


def target_is_x86_64():
    if os.name == "nt" and os.environ.get("VSCMD_ARG_TGT_ARCH"):  # MSVC cross builds (e.g. ARM64)
        return os.environ["VSCMD_ARG_TGT_ARCH"].lower() in ("x64", "amd64")
    plat = sysconfig.get_platform().lower()  # honours _PYTHON_HOST_PLATFORM (cross builds)
    archflags = os.environ.get("ARCHFLAGS", "")
    if plat.startswith("macosx") and archflags:
        return "x86_64" in archflags and "arm64" not in archflags
    return any(t in plat for t in ("x86_64", "amd64", "win-amd64")) or plat in ("linux-x86_64",)


def build_jobs():
    """Compile jobs: GEMMKIT_BUILD_JOBS, else one per CPU this process may run on."""
    env = os.environ.get("GEMMKIT_BUILD_JOBS", "")
    if env.isdigit() and int(env) > 0:
        return int(env)
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def compile_weight(src):
    """A rough cost of compiling src, to start the heaviest first: its bytes and those of the local headers it
    includes (the kernel templates), the generated Cython module counted as heavy as it is."""
    size = os.path.getsize(src)
    folder = os.path.dirname(src)
    with open(src, encoding="utf-8", errors="replace") as f:
        for line in f:
            line = line.strip()
            if line.startswith("#include \""):
                header = os.path.normpath(os.path.join(folder, line.split('"')[1]))
                if os.path.exists(header):
                    size += os.path.getsize(header)
    return size


class BuildExtWithKernels(build_ext):
    """Compiles the per-ISA kernel files with their own flags and links them into the extension; the core's
    sources compile in parallel (build_jobs()), heaviest first, each object rebuilt only when it is older than its
    source or any header of csrc/."""

    def _is_msvc(self):
        return self.compiler.compiler_type == "msvc"

    def _compiler_accepts(self, flags):
        with tempfile.TemporaryDirectory() as tmp:
            src = os.path.join(tmp, "probe.c")
            with open(src, "w") as f:
                f.write("#include <immintrin.h>\nint main(void){return 0;}\n")
            try:
                self.compiler.compile([src], output_dir=tmp, extra_postargs=flags)
                return True
            except Exception:
                return False

    def _compile_parallel(self, ext, jobs):
        """Objects of (source, extra flags) jobs, in their order; each compiled unless up to date."""
        headers = [h for h in DEPENDS if h.endswith(".h")]
        newest_header = max((os.path.getmtime(h) for h in headers), default=0.0)

        def one(job):
            src, flags = job
            obj = self.compiler.object_filenames([src], output_dir=self.build_temp)[0]
            if (not self.force and os.path.exists(obj) and
                    os.path.getmtime(obj) >= max(os.path.getmtime(src), newest_header)):
                return obj
            return self.compiler.compile([src], output_dir=self.build_temp, macros=ext.define_macros,
                                         include_dirs=ext.include_dirs, extra_postargs=flags, debug=self.debug)[0]

        order = sorted(range(len(jobs)), key=lambda i: -compile_weight(jobs[i][0]))
        objects = [None] * len(jobs)
        n = 1 if self._is_msvc() else build_jobs()  # MSVC's compiler object is not known to be thread-safe
        with ThreadPoolExecutor(max_workers=n) as pool:
            futures = {i: pool.submit(one, jobs[i]) for i in order}
            for i, fut in futures.items():
                objects[i] = fut.result()
        return objects

    def build_extension(self, ext):
        if ext.name != "gemmkit._core":  # the kernels link into the core alone
            return super().build_extension(ext)
        base_args = list(ext.extra_compile_args or [])
        jobs = []
        if target_is_x86_64():
            ext.define_macros.append(("GEMMKIT_X86_KERNELS", "1"))
            kernels = dict(X86_KERNELS)
            for path, (gnu, msvc, macro) in PROBE_KERNELS.items():
                if (msvc if self._is_msvc() else self._compiler_accepts(gnu)):
                    kernels[path] = (gnu, msvc)
                    ext.define_macros.append((macro, "1"))
            jobs += [(src, base_args + (msvc if self._is_msvc() else gnu)) for src, (gnu, msvc) in kernels.items()]
        elif target_is_aarch64() and not self._is_msvc():
            ext.define_macros.append(("GEMMKIT_ARM_KERNELS", "1"))
            jobs += [(src, base_args + flags) for src, flags in ARM_KERNELS.items()]
        sources = list(ext.sources)
        jobs += [(src, base_args) for src in sources]
        objects = self._compile_parallel(ext, jobs)
        # the objects are built: the base class only links them (always: a changed source may be any of them)
        ext.extra_objects = list(ext.extra_objects or []) + objects
        ext.sources, force = [], self.force
        self.force = True
        try:
            super().build_extension(ext)
        finally:
            ext.sources, self.force = sources, force


def extra_compile_args():
    if sys.platform == "win32":
        return ["/O2"]
    # Only GEMMKIT_API (csrc/include/gemmkit.h, gemmkit_introspect.h) and PyInit_ leave the extension
    # (.ci/check-symbols).
    return ["-O3", "-std=c11", "-fno-strict-aliasing", "-fvisibility=hidden"]


# Rebuild when any C source or header changes (kernel templates are headers).
DEPENDS = sorted(glob.glob("csrc/**/*.[ch]", recursive=True))

extensions = [
    Extension(
        "gemmkit._core",
        sources=["gemmkit/_core.pyx"] + CORE_SOURCES,
        depends=DEPENDS,
        include_dirs=["csrc", numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=extra_compile_args(),
        extra_link_args=[] if sys.platform in ("win32", "darwin") else ["-pthread"],
    ),
    # The front ends' fast paths: C only through `cimport gemmkit._core` (no csrc sources of their own).
    Extension(
        "gemmkit._fastpaths",
        sources=["gemmkit/_fastpaths.pyx"],
        depends=["gemmkit/_core.pxd"],
        include_dirs=["csrc", numpy.get_include()],
        define_macros=[("NPY_NO_DEPRECATED_API", "NPY_1_7_API_VERSION")],
        extra_compile_args=extra_compile_args(),
    ),
]

setup(
    ext_modules=cythonize(extensions, language_level=3,
                          compiler_directives={"boundscheck": False, "wraparound": False}),
    cmdclass={"build_ext": BuildExtWithKernels},
)
