"""gemmkit's C entry points run on an emulated CPU: a private copy of the installed gemmkit/_core
extension, never executed natively, whose functions are called through bochs_cpu on NumPy buffers.

The copy picks its kernel path by its own CPUID (the emulated CPU's), so `set_arch("avx512")` etc.
succeed on hosts without AVX-512; each call runs the whole C path (driver, packers, kernels) emulated.
With amx=True the emulated CPU also has AMX-TILE / AMX-INT8 / AMX-BF16 (modelled: bochs_cpu.AmxUnit), so
`set_arch("avx512_amx")` succeeds on hosts without AMX.
"""
import ctypes
import os
import struct

import numpy as np

import gemmkit._core
from bochs_cpu import load_private_copy, shared_emulator

_SIG_CACHE = {}


class KernelInfo(ctypes.Structure):
    _fields_ = [("kernel", ctypes.c_char_p), ("uarch", ctypes.c_char_p), ("mr", ctypes.c_int),
                ("nr", ctypes.c_int), ("k_group", ctypes.c_int), ("elem", ctypes.c_int),
                ("mc", ctypes.c_int64), ("kc", ctypes.c_int64), ("nc", ctypes.c_int64), ("kb", ctypes.c_int64)]


class QTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("type", ctypes.c_int), ("strides", ctypes.c_void_p),
                ("scale", ctypes.c_void_p), ("scale_strides", ctypes.c_void_p),
                ("zero_point", ctypes.c_void_p), ("zero_point_strides", ctypes.c_void_p)]


def _bits(fmt, *vals):
    return int.from_bytes(struct.pack("<" + fmt, *vals), "little")


def _ptr(a):
    if a is None:
        return 0
    if isinstance(a, np.ndarray):
        return a.ctypes.data
    return ctypes.addressof(a)


class EmulatedGemmkit:
    """The C API of gemmkit on an emulated CPU (default Bochs's Sapphire Rapids model: AVX-512
    F/BW/DQ/VL, VNNI, BF16, AVX-VNNI; amx=True adds AMX-TILE / AMX-INT8 / AMX-BF16 and the tile state, see
    bochs_cpu). All matrices row-major NumPy arrays; the caller keeps them alive."""

    def __init__(self, model="sapphire_rapids", amx=False):
        self.emu = shared_emulator(model, amx=amx)
        self.lib = load_private_copy(gemmkit._core.__file__)
        self.keep = []
        # First: the copy detects (and caches) its CPU's features, AMX included where the Emulator models it.
        self.emu.detect_cpu_features(self.addr("gemmkit_cpu_features"))
        self.call_i("gemmkit_set_num_threads", 1, ret="void")

    # ---- plumbing ---------------------------------------------------------------------------------
    def addr(self, name):
        return ctypes.cast(getattr(self.lib, name), ctypes.c_void_p).value

    def call(self, name, sig, *vals, ret="int"):
        """sig: one letter per argument: i (integer / pointer / char), f (float), d (double),
        c (complex64: one xmm), z (complex128: two xmm)."""
        iargs, xargs = [], []
        for kind, v in zip(sig, vals, strict=True):
            if kind == "i":
                iargs.append(ord(v) if isinstance(v, str) else int(v))
            elif kind == "f":
                xargs.append((_bits("f", v), 0))
            elif kind == "d":
                xargs.append((_bits("d", v), 0))
            elif kind == "c":
                v = complex(v)
                xargs.append((_bits("ff", v.real, v.imag), 0))
            elif kind == "z":
                v = complex(v)
                xargs.append((_bits("d", v.real), 0))
                xargs.append((_bits("d", v.imag), 0))
            else:
                raise ValueError(kind)
        if len(xargs) > 8:
            raise ValueError("more than 8 SSE arguments")
        return self.emu.call(self.addr(name), iargs, xargs, ret=ret)

    def call_i(self, name, *vals, ret="int"):
        return self.call(name, "i" * len(vals), *vals, ret=ret)

    def cstr(self, s):
        b = ctypes.create_string_buffer(s.encode())
        self.keep.append(b)
        return ctypes.addressof(b)

    # ---- configuration ----------------------------------------------------------------------------
    def set_arch(self, arch, uarch=None):
        if uarch:
            os.environ["GEMMKIT_UARCH"] = uarch
        else:
            os.environ.pop("GEMMKIT_UARCH", None)
        try:
            st = self.call_i("gemmkit_set_arch", self.cstr(arch))
        finally:
            os.environ.pop("GEMMKIT_UARCH", None)
        if st != 0:
            raise RuntimeError(f"emulated gemmkit_set_arch({arch!r}) returned {st}")
        got = self.get_arch()
        if got != arch:
            raise RuntimeError(f"emulated path is {got!r}, expected {arch!r}")

    def get_arch(self):
        return ctypes.string_at(self.call_i("gemmkit_get_arch", ret="u64")).decode()

    def cpu_features(self):
        return self.call_i("gemmkit_cpu_features")

    def kernel_info(self, op):
        info = KernelInfo()
        st = self.call_i("gemmkit_kernel_info", self.cstr(op), ctypes.addressof(info))
        assert st == 0
        return {"kernel": info.kernel.decode(), "uarch": info.uarch.decode(), "MR": info.mr, "NR": info.nr,
                "k_group": info.k_group, "KC": info.kc, "MC": info.mc, "NC": info.nc, "KB": info.kb}

    # ---- products -----------------------------------------------------------------------------------
    def gemm(self, kind, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
        """kind: s d c z h bf16 bf16f32 (gemmkit_sgemm ... gemmkit_gemm_bf16bf16f32)."""
        name, s = {"s": ("gemmkit_sgemm", "f"), "d": ("gemmkit_dgemm", "d"), "c": ("gemmkit_cgemm", "c"),
                   "z": ("gemmkit_zgemm", "z"), "h": ("gemmkit_hgemm", "f"),
                   "bf16": ("gemmkit_bf16gemm", "f"), "bf16f32": ("gemmkit_gemm_bf16bf16f32", "f")}[kind]
        sig = "iiiii" + s + "iiii" + s + "ii"
        return self.call(name, sig, ta, tb, M, N, K, alpha, _ptr(A), lda, _ptr(B), ldb, beta, _ptr(C), ldc)

    def gemm_int8(self, kind, ta, tb, offsetc, M, N, K, alpha, A, lda, ao, B, ldb, bo, beta, C, ldc, co):
        name = "gemmkit_gemm_u8s8s32" if kind == "u8" else "gemmkit_gemm_s8s8s32"
        return self.call(name, "iiiiii" + "f" + "iiiiii" + "f" + "iii", ta, tb, offsetc, M, N, K, alpha,
                         _ptr(A), lda, int(ao) & 0xFF, _ptr(B), ldb, int(bo) & 0xFF, beta, _ptr(C), ldc, _ptr(co))

    def gemm_int(self, int_type, ta, tb, M, N, K, alpha, A, lda, B, ldb, beta, C, ldc):
        """gemmkit_gemm_int_batch for one product (batch 1); alpha and beta as their 64 bits."""
        mask = (1 << 64) - 1
        return self.call_i("gemmkit_gemm_int_batch", int_type, ta, tb, M, N, K, int(alpha) & mask, _ptr(A), lda, 0,
                           _ptr(B), ldb, 0, int(beta) & mask, _ptr(C), ldc, 0, 1)

    def gemm_s8s8_per_token(self, ta, tb, layout_c, out_type, batch, M, N, K, A, lda, stride_a, B, ldb,
                            stride_b, deq_scale, token_scale, stride_ts, bias, C, ldc, stride_c):
        return self.call_i("gemmkit_gemm_s8s8_per_token", ta, tb, layout_c, out_type, batch, M, N, K,
                           _ptr(A), lda, stride_a, _ptr(B), ldb, stride_b, _ptr(deq_scale), _ptr(token_scale),
                           stride_ts, _ptr(bias), _ptr(C), ldc, stride_c)

    def quantized_add(self, formula, shape, a, b, out):
        """a, b, out: dicts with data (ndarray), type (0 u8, 1 s8), strides (elements), scale (float32
        array of one), zero_point (array of one of the type). Returns the status."""
        ndim = len(shape)
        shp = np.array(shape if ndim else [0], np.int64)
        keep = [shp]

        def qt(d):
            strides = np.array(d["strides"] if ndim else [0], np.int64)
            sc = np.asarray(d["scale"], np.float32).reshape(1)
            zp = np.asarray(d["zero_point"]).reshape(1)
            keep.extend([strides, sc, zp])
            t = QTensor(d["data"].ctypes.data, d["type"], strides.ctypes.data, sc.ctypes.data, None,
                        zp.ctypes.data, None)
            keep.append(t)
            return ctypes.addressof(t)

        pa, pb, po = qt(a), qt(b), qt(out)
        st = self.call_i("gemmkit_quantized_add", formula, ndim, shp.ctypes.data, pa, pb, po)
        del keep
        return st
