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

import numpy
from Cython.Build import cythonize
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

CORE_SOURCES = [
    "csrc/frontend.c",
    "csrc/gemm_driver.c",
    "csrc/gemm_real.c",
    "csrc/gemm_small.c",
    "csrc/gemm_types.c",
    "csrc/gemm_int8.c",
    "csrc/gemm_wrap.c",
    "csrc/pack_real.c",
    "csrc/pack_complex.c",
    "csrc/pack_int8.c",
    "csrc/dispatch.c",
    "csrc/threading.c",
    "csrc/config/generic.c",
    "csrc/config/avx2.c",
    "csrc/config/avx_vnni.c",
    "csrc/config/avx512.c",
    "csrc/config/avx512_vnni.c",
    "csrc/config/zen2.c",
    "csrc/config/zen4.c",
    "csrc/config/arm64.c",
    # cache hierarchy, analytical blocking model, tuning overrides (issue 26)
    "csrc/cache_info.c",
    "csrc/blocking_model.c",
    "csrc/tuning.c",
    "csrc/kernels/sgemm_generic.c",
    "csrc/kernels/dgemm_generic.c",
    "csrc/kernels/int8_generic.c",
    # quantized elementwise add
    "csrc/qadd.c",
    "csrc/kernels/qadd_generic.c",
    # per-token activation quantization
    "csrc/quantize.c",
    "csrc/kernels/quantize_generic.c",
]

_AVX2 = (["-mavx2", "-mfma"], ["/arch:AVX2"])
# The int8 kernels' float16 epilogue converts with F16C (dispatch requires it with AVX2).
_AVX2_F16C = (["-mavx2", "-mfma", "-mf16c"], ["/arch:AVX2"])
_AVX512 = (["-mavx512f", "-mavx512bw", "-mavx512dq", "-mavx512vl", "-mfma", "-mavx2"], ["/arch:AVX512"])
_AVX512_VNNI = (["-mavx512f", "-mavx512bw", "-mavx512dq", "-mavx512vl", "-mavx512vnni", "-mfma", "-mavx2"],
                ["/arch:AVX512"])
# kernel file -> (gcc/clang flags, MSVC flags); compiled only for x86-64 targets.
X86_KERNELS = {
    "csrc/kernels/sgemm_avx2.c": _AVX2,
    "csrc/kernels/dgemm_avx2.c": _AVX2,
    "csrc/kernels/int8_avx2.c": _AVX2_F16C,
    "csrc/kernels/sgemm_avx512.c": _AVX512,
    "csrc/kernels/dgemm_avx512.c": _AVX512,
    "csrc/kernels/int8_avx512.c": _AVX512,
    "csrc/kernels/int8_avx512_vnni.c": _AVX512_VNNI,
    "csrc/kernels/half_avx2.c": _AVX2_F16C,
    "csrc/kernels/wrap_avx2.c": _AVX2,
    # quantized elementwise add
    "csrc/kernels/qadd_avx2.c": _AVX2,
    "csrc/kernels/qadd_avx512.c": _AVX512,
    # per-token activation quantization
    "csrc/kernels/quantize_avx2.c": _AVX2_F16C,
    "csrc/kernels/quantize_avx512.c": _AVX512,
}
# Built only where the compiler knows AVX-VNNI (gcc >= 11, clang >= 12, MSVC 2019 16.10+).
AVX_VNNI_KERNEL = ("csrc/kernels/int8_avx_vnni.c", (["-mavx2", "-mfma", "-mf16c", "-mavxvnni"], ["/arch:AVX2"]))


# AArch64 kernel file -> gcc/clang flags (Advanced SIMD is baseline there); compiled only for aarch64 / arm64
# targets with a gcc-style compiler (the Windows-on-ARM build stays portable). Dispatch decides at run time.
ARM_KERNELS = {
    "csrc/kernels/sgemm_neon.c": [],
    "csrc/kernels/dgemm_neon.c": [],
    "csrc/kernels/int8_dotprod.c": ["-march=armv8.2-a+dotprod"],
    "csrc/kernels/int8_i8mm.c": ["-march=armv8.2-a+i8mm"],
    "csrc/kernels/qadd_neon.c": [],
}


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


class BuildExtWithKernels(build_ext):
    """Compiles the per-ISA kernel files with their own flags and links them into the extension."""

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

    def build_extension(self, ext):
        if target_is_x86_64():
            ext.define_macros.append(("GEMMKIT_X86_KERNELS", "1"))
            kernels = dict(X86_KERNELS)
            path, (gnu, msvc) = AVX_VNNI_KERNEL
            if self._is_msvc() or self._compiler_accepts(gnu):
                kernels[path] = (gnu, msvc)
                ext.define_macros.append(("GEMMKIT_HAVE_AVX_VNNI", "1"))
            objects = []
            base_args = list(ext.extra_compile_args or [])
            for src, (gnu, msvc) in kernels.items():
                flags = base_args + (msvc if self._is_msvc() else gnu)
                objects += self.compiler.compile(
                    [src], output_dir=self.build_temp, macros=ext.define_macros,
                    include_dirs=ext.include_dirs, extra_postargs=flags, debug=self.debug)
            ext.extra_objects = list(ext.extra_objects or []) + objects
        elif target_is_aarch64() and not self._is_msvc():
            ext.define_macros.append(("GEMMKIT_ARM_KERNELS", "1"))
            objects = []
            for src, flags in ARM_KERNELS.items():
                objects += self.compiler.compile(
                    [src], output_dir=self.build_temp, macros=ext.define_macros, include_dirs=ext.include_dirs,
                    extra_postargs=list(ext.extra_compile_args or []) + flags, debug=self.debug)
            ext.extra_objects = list(ext.extra_objects or []) + objects
        super().build_extension(ext)


def extra_compile_args():
    if sys.platform == "win32":
        return ["/O2"]
    return ["-O3", "-std=c11", "-fno-strict-aliasing"]


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
    )
]

setup(
    ext_modules=cythonize(extensions, language_level=3,
                          compiler_directives={"boundscheck": False, "wraparound": False}),
    cmdclass={"build_ext": BuildExtWithKernels},
)
