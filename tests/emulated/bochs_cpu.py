"""Runs functions of this process's own compiled libraries on an emulated x86-64 CPU (Bochs, through
bochscpu-python), on the host's own memory: the ISA lane's way to execute AVX-512 / VNNI code anywhere.

How: guest virtual address = host virtual address. Page tables (4 KiB pages, built from
/proc/self/maps) send each host page to a guest-physical page that bochscpu maps onto the host page, so
emulated code reads and writes the process's real buffers, globals and TLS (FS base = the host thread's).
A call follows the System V ABI on a private stack and returns to an unmapped magic address, whose
page fault ends the run. `syscall` is taken through LSTAR to another unmapped address; a few harmless
ones (madvise, futex, sched_getaffinity, ...) are performed on the host and the emulation resumes. brk /
mmap cannot be (malloc makes them holding its arena lock, which Python on the host would then wait for):
grow_heap() makes them unneeded. Any other exception is an error. One CPU, one thread: call it from one
Python thread only; emulated code cannot start threads.

AMX (`Emulator(amx=True)`): bochscpu-python's Bochs is built without AMX (no tile instructions, no AMX bits in
CPUID, no tile state in XCR0's supported mask), so the tile unit is modelled here: XCR0 enables the tile
state, CPUID.(7,0).EDX reports AMX-TILE + AMX-INT8 + AMX-BF16 to the feature-detection call (detect_cpu_features),
arch_prctl(ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA) is answered 0 in the emulation (never made on the host),
and each tile instruction (#UD on Bochs) is decoded and executed by AmxUnit, after the Intel SDM, on the host
memory; the rest of the code (the kernel's loops, addressing, packers, epilogue) still runs on Bochs.
"""
import atexit
import ctypes
import gc
import os
import shutil
import struct
import subprocess
import sys
import sysconfig
import tempfile

import numpy as np

# Bochs's cpudb order, as bochscpu lists its "cpu.model" choices (src/sim.rs).
CPU_MODELS = {"tigerlake": 29, "sapphire_rapids": 30, "arrow_lake": 31}

_SHIM_C = r"""
/* glibc 2.38 names the bochscpu-python wheel links to, for older glibc (Debian 12 has 2.36). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
unsigned long long __isoc23_strtoull(const char *s, char **e, int b) { return strtoull(s, e, b); }
int __isoc23_sscanf(const char *s, const char *f, ...) {
    va_list ap; va_start(ap, f); int r = vsscanf(s, f, ap); va_end(ap); return r;
}
"""

PAGE = 4096
MAGIC_RETURN = 0x1000   # never mapped (mmap_min_addr >= 64 KiB): fetching it ends a call
MAGIC_SYSCALL = 0x2000  # LSTAR: a syscall lands here and is done on the host
GPA_TABLES = 0x100000   # guest-physical home of the page-table pages
GPA_SLOT_BITS = 30      # host VA space is cut into 1 GiB regions, each given a 1 GiB guest-physical slot
_libc = ctypes.CDLL(None, use_errno=True)
_libc.syscall.restype = ctypes.c_long
# Served on the host: madvise (huge-page hint on workspaces), sched_getaffinity / sched_yield,
# getpid / gettid, clock_gettime, futex, rt_sigprocmask.
SAFE_SYSCALLS = {28, 204, 24, 39, 186, 228, 202, 14}
# Answered in the emulation, never made on the host (whose CPU may have no AMX): arch_prctl (158) with
# ARCH_REQ_XCOMP_PERM (0x1023) for XFEATURE_XTILEDATA (18), gemmkit's request for the AMX tile state. The
# emulated CPU needs no OS permission: 0 where the Emulator models AMX, else -EINVAL (Linux on a CPU without
# it). Any other arch_prctl is not served.
SYS_ARCH_PRCTL, ARCH_REQ_XCOMP_PERM, XFEATURE_XTILEDATA = 158, 0x1023, 18
XCR0_BASE = 0xE7          # x87 SSE AVX opmask ZMM_Hi256 Hi16_ZMM
XCR0_TILES = 0x60000      # XTILECFG (17) + XTILEDATA (18)
CPUID7_EDX_AMX = (1 << 22) | (1 << 24) | (1 << 25)  # AMX-BF16, AMX-TILE, AMX-INT8
FLT_MIN = np.float32(np.finfo(np.float32).tiny)  # smallest normal float32: tdpbf16ps's DAZ / FTZ bound


class EmulationError(RuntimeError):
    pass


def _import_bochscpu():
    try:
        import bochscpu  # noqa: F401
    except ImportError as e:
        if "__isoc23" not in str(e) and "GLIBC_2.38" not in str(e):
            raise
        cache = os.path.join(tempfile.gettempdir(), f"gemmkit-bochs-shim-{os.getuid()}")
        os.makedirs(cache, exist_ok=True)
        so = os.path.join(cache, "isoc23_shim.so")
        if not os.path.exists(so):
            src = os.path.join(cache, "isoc23_shim.c")
            with open(src, "w") as f:
                f.write(_SHIM_C)
            cc = os.environ.get("CC") or sysconfig.get_config_var("CC").split()[0] or "cc"
            subprocess.run([cc, "-shared", "-fPIC", "-O2", "-o", so + ".tmp", src], check=True)
            os.replace(so + ".tmp", so)
        ctypes.CDLL(so, mode=ctypes.RTLD_GLOBAL)
        import bochscpu  # noqa: F401
    import bochscpu
    import bochscpu.cpu
    import bochscpu.memory
    return bochscpu


def _select_model(bochscpu, model):
    """Sets Bochs's cpu.model parameter (read when a CPU is created). bochscpu's choice strings are not
    searchable by name (find_by_name fails), so the index is set directly."""
    lib = ctypes.CDLL(bochscpu._bochscpu.__file__)
    lib.sim_get_param_enum.restype = ctypes.c_void_p
    lib.sim_get_param_enum.argtypes = [ctypes.c_char_p]
    param = lib.sim_get_param_enum(b"cpu.model")
    if not param:
        raise EmulationError("bochscpu has no cpu.model parameter")
    setter = lib._ZN15bx_param_enum_c3setEl
    setter.argtypes = [ctypes.c_void_p, ctypes.c_long]
    setter(param, CPU_MODELS[model])


def host_fs_base():
    val = ctypes.c_uint64()
    if _libc.syscall(158, 0x1003, ctypes.byref(val)) != 0:  # arch_prctl(ARCH_GET_FS)
        raise OSError(ctypes.get_errno(), "arch_prctl(ARCH_GET_FS)")
    return val.value


def _host_maps():
    """(start, end, writable) of every readable mapping of this process, [vsyscall] excluded."""
    out = []
    with open("/proc/self/maps") as f:
        text = f.read()
    for line in text.splitlines():
        parts = line.split()
        lo, hi = (int(x, 16) for x in parts[0].split("-"))
        perms = parts[1]
        if perms[0] != "r" or lo >= (1 << 47):
            continue
        out.append((lo, hi, perms[1] == "w"))
    return text, out


class Emulator:
    """An emulated CPU (a Bochs model) that calls host functions: `call(addr, args, ret)`. One per process
    (shared_emulator): bochscpu-python aborts the process when a second Session is made."""

    made = False

    def __init__(self, model="sapphire_rapids", stack_bytes=8 << 20, amx=False):
        if Emulator.made:
            raise EmulationError("one Emulator per process (bochscpu cannot make a second Session): "
                                 "use shared_emulator()")
        Emulator.made = True
        grow_heap()
        self.bochscpu = bx = _import_bochscpu()
        _select_model(bx, model)
        self.model = model
        self.session = bx.Session()
        self.session.missing_page_handler = self._missing_page
        self.slots = {}        # host VA >> 30 -> guest-physical slot number (1 ...)
        self.slot_va = {}      # slot -> host VA base of that region
        self.table_pages = []  # host pages holding page tables (index i at GPA_TABLES + i*PAGE)
        self.maps_text = None
        self.inserted = np.zeros(0, np.uint64)  # guest-physical pages already mapped onto host pages
        self.stack = np.zeros(stack_bytes // 8, np.uint64)  # private stack (host memory)
        self.fs_base = host_fs_base()
        self.syscalls = []
        self.exc = None
        hook = bx.Hook()
        hook.exception = self._on_exception
        self.hooks = [hook]
        self.amx = AmxUnit() if amx else None  # the modelled tile unit (see AmxUnit), or None: no AMX
        self._cpuid_hook = None
        self._cpuid_leaf = None
        atexit.register(self.close)

    def close(self):
        """Drops the hooks, then the session, in that order and before interpreter shutdown: left to the
        final garbage collection (a cycle through the hook's bound method), bochscpu-python crashes."""
        self.hooks = None
        self._cpuid_hook = None
        self.session = None
        gc.collect()

    # ---- memory -------------------------------------------------------------------------------
    def _missing_page(self, gpa):
        # Only a fallback: refresh_page_tables maps every page beforehand.
        slot = gpa >> GPA_SLOT_BITS
        if slot == 0:
            idx = (gpa - GPA_TABLES) // PAGE
            if 0 <= idx < len(self.table_pages):
                self.bochscpu.memory.page_insert(gpa & ~(PAGE - 1), self.table_pages[idx])
                return
        elif slot in self.slot_va:
            hva = self.slot_va[slot] + (gpa & ((1 << GPA_SLOT_BITS) - 1) & ~(PAGE - 1))
            self.bochscpu.memory.page_insert(gpa & ~(PAGE - 1), hva)
            return
        raise EmulationError(f"guest-physical page {gpa:#x} has no host page")

    def _table_page(self, i):
        while len(self.table_pages) <= i:
            hva = self.bochscpu.memory.allocate_host_page()
            if not hva:
                raise MemoryError("allocate_host_page")
            ctypes.memset(hva, 0, PAGE)
            self.bochscpu.memory.page_insert(GPA_TABLES + PAGE * len(self.table_pages), hva)
            self.table_pages.append(hva)
        return self.table_pages[i]

    def _slot(self, region):
        slot = self.slots.get(region)
        if slot is None:
            slot = len(self.slots) + 1
            if slot >= 1 << (40 - GPA_SLOT_BITS):
                raise EmulationError("too many 1 GiB regions for a 40-bit guest-physical space")
            self.slots[region] = slot
            self.slot_va[slot] = region << GPA_SLOT_BITS
        return slot

    def refresh_page_tables(self, force=False):
        """Rebuilds the 4-level page tables from /proc/self/maps when the mappings changed, and maps
        every guest-physical page onto its host page now (a page mapped lazily from a Python callback
        could deadlock: emulated code may hold a lock the host's malloc needs, e.g. glibc's arena)."""
        text, maps = _host_maps()
        if text == self.maps_text and not force:
            return False
        self.maps_text = text
        va = np.concatenate([np.arange(lo, hi, PAGE, dtype=np.uint64) for lo, hi, _ in maps])
        flags = np.concatenate([np.full((hi - lo) // PAGE, 0x7 if w else 0x5, np.uint64) for lo, hi, w in maps])
        regions, inv = np.unique(va >> np.uint64(GPA_SLOT_BITS), return_inverse=True)
        slot_of = np.array([self._slot(int(r)) for r in regions], np.uint64)
        gpa = (slot_of[inv] << np.uint64(GPA_SLOT_BITS)) | (va & np.uint64((1 << GPA_SLOT_BITS) - 1))
        new = gpa[~np.isin(gpa, self.inserted)]
        insert = self.bochscpu.memory.page_insert
        for g, v in zip(new.tolist(), va[~np.isin(gpa, self.inserted)].tolist()):
            insert(g, v)
        self.inserted = np.union1d(self.inserted, new)
        # Tables: 0 = PML4, then the PDPTs, the PDs and the PTs.
        pt_keys, pt_inv = np.unique(va >> np.uint64(21), return_inverse=True)
        pd_keys, pd_inv = np.unique(pt_keys >> np.uint64(9), return_inverse=True)
        pdpt_keys, pdpt_inv = np.unique(pd_keys >> np.uint64(9), return_inverse=True)
        n_pdpt, n_pd, n_pt = len(pdpt_keys), len(pd_keys), len(pt_keys)
        base_pdpt, base_pd, base_pt = 1, 1 + n_pdpt, 1 + n_pdpt + n_pd
        n_tables = base_pt + n_pt
        tab = np.zeros((n_tables, 512), np.uint64)
        m9 = np.uint64(511)
        tab[base_pt + pt_inv, ((va >> np.uint64(12)) & m9).astype(np.intp)] = gpa | flags
        tab[base_pd + pd_inv, (pt_keys & m9).astype(np.intp)] = \
            np.uint64(GPA_TABLES) + np.uint64(PAGE) * (base_pt + np.arange(n_pt, dtype=np.uint64)) | np.uint64(7)
        tab[base_pdpt + pdpt_inv, (pd_keys & m9).astype(np.intp)] = \
            np.uint64(GPA_TABLES) + np.uint64(PAGE) * (base_pd + np.arange(n_pd, dtype=np.uint64)) | np.uint64(7)
        tab[0, (pdpt_keys & m9).astype(np.intp)] = \
            np.uint64(GPA_TABLES) + np.uint64(PAGE) * (base_pdpt + np.arange(n_pdpt, dtype=np.uint64)) | np.uint64(7)
        for i in range(n_tables):
            ctypes.memmove(self._table_page(i), tab[i].ctypes.data, PAGE)
        for i in range(n_tables, len(self.table_pages)):
            ctypes.memset(self.table_pages[i], 0, PAGE)
        return True

    # ---- running --------------------------------------------------------------------------------
    def _on_exception(self, sess, cpu_id, vector, error_code):
        self.exc = (vector, error_code)
        sess.stop()

    def _segments(self, st):
        bx = self.bochscpu
        cs = bx.Segment()
        cs.present, cs.selector, cs.base, cs.limit, cs.attr = True, 0x8, 0, 0xFFFFFFFF, 0x209B
        ds = bx.Segment()
        ds.present, ds.selector, ds.base, ds.limit, ds.attr = True, 0x10, 0, 0xFFFFFFFF, 0xC093
        fs = bx.Segment()
        fs.present, fs.selector, fs.base, fs.limit, fs.attr = True, 0, self.fs_base, 0xFFFFFFFF, 0xC093
        gs = bx.Segment()
        gs.present, gs.selector, gs.base, gs.limit, gs.attr = True, 0, 0, 0xFFFFFFFF, 0xC093
        st.cs, st.ss, st.ds, st.es = cs, ds, ds, ds
        st.fs, st.gs = fs, gs

    def _fresh_state(self, rip, rsp, iregs, xmm):
        bx = self.bochscpu
        st = bx.State()
        st.cr0 = 0x80010033           # PG WP NE ET MP PE
        st.cr4 = 0x50620              # OSXSAVE FSGSBASE OSXMMEXCPT OSFXSR PAE
        st.cr3 = GPA_TABLES
        st.efer = 0x501               # LMA LME SCE
        st.xcr0 = XCR0_BASE | (XCR0_TILES if self.amx is not None else 0)
        st.lstar = MAGIC_SYSCALL
        st.star = (0x10 << 48) | (0x8 << 32)
        st.sfmask = 0
        st.mxcsr = 0x1F80
        st.mxcsr_mask = 0xFFFF
        st.fpcw = 0x37F
        st.rflags = 0x2
        st.pat = 0x0007040600070406
        self._segments(st)
        st.rip, st.rsp = rip, rsp
        for name, v in zip(("rdi", "rsi", "rdx", "rcx", "r8", "r9"), iregs):
            setattr(st, name, v & (2**64 - 1))
        if xmm:
            zmm = st.zmm
            for i, (lo, hi) in enumerate(xmm):
                z = zmm[i]
                z.q = [lo, hi, 0, 0, 0, 0, 0, 0]
                zmm[i] = z
            st.zmm = zmm
        return st

    def detect_cpu_features(self, addr, ret="int"):
        """Calls the feature-detection function at `addr` (no arguments) with CPUID.(7,0).EDX reporting
        AMX-TILE + AMX-INT8 + AMX-BF16 where the Emulator models AMX: a per-instruction hook, for this call only
        (the code must cache what it found). AVX512_BF16 (CPUID.(7,1).EAX bit 5) needs no hook: Bochs's
        sapphire_rapids model reports it itself."""
        if self.amx is None:
            return self.call(addr, ret=ret)
        bx = self.bochscpu
        hook = bx.Hook()

        def before(sess, cpu_id, insn):
            cpu = sess.cpu
            rip = cpu.rip
            self._cpuid_leaf = (cpu.rax & 0xFFFFFFFF, cpu.rcx & 0xFFFFFFFF) \
                if ctypes.string_at(rip, 2) == b"\x0f\xa2" else None

        def after(sess, cpu_id, insn):
            if self._cpuid_leaf == (7, 0):
                cpu = sess.cpu
                cpu.rdx = cpu.rdx | CPUID7_EDX_AMX
            self._cpuid_leaf = None

        hook.before_execution, hook.after_execution = before, after
        self._cpuid_hook = hook
        try:
            return self.call(addr, ret=ret)
        finally:
            self._cpuid_hook = None
            self._cpuid_leaf = None

    def call(self, addr, iargs=(), xargs=(), ret="int"):
        """Calls the function at host address `addr` on the emulated CPU. iargs: integer class
        arguments (ints, pointers) in order; xargs: SSE class eightbyte pairs (lo, hi) per register in
        order. ret: "int" (rax, signed 32-bit as C int), "u64" or "void"."""
        self.refresh_page_tables()
        iargs = [int(a) for a in iargs]
        stack_args = iargs[6:]
        top = (self.stack.ctypes.data + self.stack.nbytes - 256) & ~0xF
        rsp = top - 8 * len(stack_args)
        rsp &= ~0xF
        words = [MAGIC_RETURN] + [a & (2**64 - 1) for a in stack_args]
        rsp -= 8  # return address; at entry rsp % 16 == 8
        ctypes.memmove(rsp, struct.pack(f"<{len(words)}Q", *words), 8 * len(words))
        st = self._fresh_state(addr, rsp, iargs[:6], list(xargs))
        cpu = self.session.cpu
        cpu.set_state(st)
        hooks = self.hooks if self._cpuid_hook is None else self.hooks + [self._cpuid_hook]
        while True:
            self.exc = None
            self.session.run(hooks)
            if self.exc is None:
                raise EmulationError("emulation stopped without an exception")
            vector, err = self.exc
            # Registers one at a time: emulated code may be stopped inside malloc holding its lock, so
            # nothing here may call malloc (a whole State is large) before the call has returned.
            cr2 = cpu.cr2
            if vector == 14 and cr2 == MAGIC_RETURN:
                rax = cpu.rax
                if ret == "int":
                    v = rax & 0xFFFFFFFF
                    return v - (1 << 32) if v >= 1 << 31 else v
                return rax if ret == "u64" else None
            if vector == 14 and cr2 == MAGIC_SYSCALL:
                self._do_syscall(cpu)
                continue
            if vector == 6 and self.amx is not None and self._do_amx(cpu):
                continue
            st = cpu.state
            raise EmulationError(
                f"exception {vector} (error code {err:#x}) at rip {st.rip:#x}, cr2 {st.cr2:#x} "
                f"on emulated {self.model}")

    def _do_amx(self, cpu):
        """A #UD: executes the tile instruction that raised it (AmxUnit) and resumes after it; False when
        the faulting instruction is no tile instruction. Bochs reports the #UD with RIP already past the
        instruction (its exception hook runs before RIP is rolled back), so the instruction is the one
        AMX encoding that ends there."""
        end = cpu.rip
        found = []
        for n in range(5, 16):
            d = decode_amx(ctypes.string_at(end - n, n))
            if d is not None and d[1] == n:
                found.append(d)
        if len(found) != 1:
            return False
        name, _, fields = found[0]
        self.amx.execute(cpu, name, fields, end)
        cpu.rip = end
        return True

    def _do_syscall(self, cpu):
        nr = cpu.rax
        if nr == SYS_ARCH_PRCTL and cpu.rdi == ARCH_REQ_XCOMP_PERM and cpu.rsi == XFEATURE_XTILEDATA:
            self.syscalls.append(nr)
            res = 0 if self.amx is not None else -22  # -EINVAL: no tile state on this emulated CPU
            rip, rflags = cpu.rcx, cpu.r11
            cpu.rax = res & (2**64 - 1)
            cpu.rflags = rflags | 0x2
            cpu.rip = rip
            return
        if nr not in SAFE_SYSCALLS:
            # brk / mmap come from inside malloc, which holds the arena lock: the host cannot serve
            # them from Python (it would deadlock on that lock). Say so and stop the process.
            os.write(2, b"\nbochs_cpu: emulated code made system call %d, which the lane cannot serve "
                        b"(grow the heap before calling); exiting\n" % nr)
            os._exit(70)
        res = _libc.syscall(ctypes.c_long(nr), ctypes.c_ulong(cpu.rdi), ctypes.c_ulong(cpu.rsi),
                            ctypes.c_ulong(cpu.rdx), ctypes.c_ulong(cpu.r10), ctypes.c_ulong(cpu.r8),
                            ctypes.c_ulong(cpu.r9))
        if res == -1:
            res = -ctypes.get_errno()
        self.syscalls.append(nr)
        rip, rflags = cpu.rcx, cpu.r11
        cpu.rax = res & (2**64 - 1)
        cpu.rflags = rflags | 0x2
        cpu.rip = rip


# ---- AMX: a software model of the tile instructions gemmkit uses -----------------------------------------
# bochscpu-python 0.4.0's Bochs is built without --enable-amx (BX_SUPPORT_AMX 0): its sapphire_rapids model
# reports no AMX-TILE / AMX-INT8 / AMX-BF16 in CPUID.(7,0).EDX, no tile state in CPUID.(0xD,0).EAX (0xe7), and
# every tile instruction raises #UD. With `amx=True` the Emulator stands in for the missing unit: CPUID.(7,0).EDX
# bits 22, 24, 25 are reported during the feature-detection call (detect_cpu_features), XCR0 enables XTILECFG +
# XTILEDATA (bits 17, 18; XFD is 0: Bochs has no IA32_XFD), and each tile instruction's #UD is caught and the
# instruction executed here, on the host's memory, after the Intel SDM's pseudo-code (vol. 2, "Intel AMX
# Instructions"), the SDM's #UD conditions enforced (no configuration, rows / colsb out of range, the
# tdpb* shape rules) as errors. Modelled: ldtilecfg / sttilecfg / tilerelease / tilezero, tileloadd(t1) /
# tilestored, the int8 products tdpb[su][su]d (AMX-INT8) and the bfloat16 product tdpbf16ps (AMX-BF16).
# Everything else still runs on Bochs.

AMX_VEX_OPS = {  # (opcode, pp, register form?) -> mnemonic; all VEX.128.0F38.W0
    (0x49, 0, False): "ldtilecfg", (0x49, 1, False): "sttilecfg", (0x49, 0, True): "tilerelease",
    (0x49, 3, True): "tilezero", (0x4B, 3, False): "tileloadd", (0x4B, 1, False): "tileloaddt1",
    (0x4B, 2, False): "tilestored", (0x5E, 1, True): "tdpbusd", (0x5E, 3, True): "tdpbssd",
    (0x5E, 2, True): "tdpbsud", (0x5E, 0, True): "tdpbuud", (0x5C, 2, True): "tdpbf16ps",
}
_GPR = ("rax", "rcx", "rdx", "rbx", "rsp", "rbp", "rsi", "rdi", "r8", "r9", "r10", "r11", "r12", "r13",
        "r14", "r15")


def decode_amx(code):
    """(mnemonic, length, fields) of the AMX instruction at the start of `code` (bytes), or None."""
    if len(code) < 5 or code[0] != 0xC4 or code[1] & 0x1F != 2 or code[2] & 0x84:  # map 0F38, W0, L0
        return None
    r_ext, x_ext, b_ext = (~code[1] >> 7) & 1, (~code[1] >> 6) & 1, (~code[1] >> 5) & 1
    vvvv, pp, op, modrm = (~code[2] >> 3) & 0xF, code[2] & 3, code[3], code[4]
    mod, reg, rm = modrm >> 6, (modrm >> 3) & 7 | r_ext << 3, modrm & 7
    name = AMX_VEX_OPS.get((op, pp, mod == 3))
    if name is None:
        return None
    f = {"reg": reg, "rm": rm | b_ext << 3, "vvvv": vvvv, "modrm": modrm}
    n = 5
    if mod != 3:  # memory operand: [base + index * scale + disp] (tile loads / stores: index * scale = stride)
        f["base"] = f["index"] = None
        f["scale"], f["riprel"] = 1, False
        if rm == 4:
            sib = code[5]
            n = 6
            f["scale"] = 1 << (sib >> 6)
            idx = (sib >> 3) & 7 | x_ext << 3
            f["index"] = None if idx == 4 else idx
            base = sib & 7
            if base == 5 and mod == 0:
                f["disp"] = int.from_bytes(code[n:n + 4], "little", signed=True)
                n += 4
            else:
                f["base"] = base | b_ext << 3
        elif rm == 5 and mod == 0:
            f["riprel"] = True
            f["disp"] = int.from_bytes(code[n:n + 4], "little", signed=True)
            n += 4
        else:
            f["base"] = rm | b_ext << 3
        if mod == 1:
            f["disp"] = int.from_bytes(code[n:n + 1], "little", signed=True)
            n += 1
        elif mod == 2:
            f["disp"] = int.from_bytes(code[n:n + 4], "little", signed=True)
            n += 4
        f.setdefault("disp", 0)
    elif name == "tilerelease" and modrm != 0xC0:
        return None
    return name, n, f


class AmxUnit:
    """Eight tiles (16 rows x 64 bytes) and the palette-1 configuration, as the SDM describes them."""

    def __init__(self):
        self.release()
        self.executed = {}

    def release(self):
        self.palette = 0
        self.rows = [0] * 8
        self.colsb = [0] * 8
        self.tiles = np.zeros((8, 16, 64), np.uint8)

    def _tile(self, t, what):
        if self.palette == 0:
            raise EmulationError(f"{what}: tile instruction without a tile configuration (#UD)")
        if self.rows[t] == 0 or self.colsb[t] == 0:
            raise EmulationError(f"{what}: tmm{t} is not configured (#UD)")
        return self.rows[t], self.colsb[t]

    def _addr(self, cpu, f, next_rip):
        if f["riprel"]:
            return (next_rip + f["disp"]) & (2**64 - 1), 0
        base = getattr(cpu, _GPR[f["base"]]) if f["base"] is not None else 0
        stride = getattr(cpu, _GPR[f["index"]]) * f["scale"] if f["index"] is not None else 0
        return (base + f["disp"]) & (2**64 - 1), stride

    def execute(self, cpu, name, f, next_rip):
        self.executed[name] = self.executed.get(name, 0) + 1
        if name == "tilerelease":
            self.release()
        elif name == "ldtilecfg":
            addr, _ = self._addr(cpu, f, next_rip)
            cfg = ctypes.string_at(addr, 64)
            palette, start_row = cfg[0], cfg[1]
            colsb = struct.unpack_from("<16H", cfg, 16)
            rows = cfg[48:64]
            if palette == 0:
                self.release()
                return
            if palette != 1 or any(cfg[2:16]) or any(colsb[8:]) or any(rows[8:]) or start_row:
                raise EmulationError(f"ldtilecfg: configuration not valid for palette 1 (#GP): {cfg.hex()}")
            if any(c > 64 or r > 16 or (c == 0) != (r == 0) for c, r in zip(colsb[:8], rows[:8])):
                raise EmulationError(f"ldtilecfg: tile shape out of range (#GP): {cfg.hex()}")
            self.release()
            self.palette, self.rows, self.colsb = 1, list(rows[:8]), list(colsb[:8])
        elif name == "sttilecfg":
            addr, _ = self._addr(cpu, f, next_rip)
            cfg = bytearray(64)
            if self.palette:
                cfg[0] = self.palette
                struct.pack_into("<8H", cfg, 16, *self.colsb)
                cfg[48:56] = bytes(self.rows)
            ctypes.memmove(addr, bytes(cfg), 64)
        elif name == "tilezero":
            t = f["reg"] & 7
            self._tile(t, name)
            self.tiles[t] = 0
        elif name in ("tileloadd", "tileloaddt1"):
            t = f["reg"] & 7
            rows, colsb = self._tile(t, name)
            addr, stride = self._addr(cpu, f, next_rip)
            self.tiles[t] = 0  # rows and bytes past the configuration are zeroed
            for r in range(rows):
                self.tiles[t, r, :colsb] = np.frombuffer(ctypes.string_at((addr + r * stride) & (2**64 - 1), colsb),
                                                         np.uint8)
        elif name == "tilestored":
            t = f["reg"] & 7
            rows, colsb = self._tile(t, name)
            addr, stride = self._addr(cpu, f, next_rip)
            for r in range(rows):
                ctypes.memmove((addr + r * stride) & (2**64 - 1), self.tiles[t, r, :colsb].tobytes(), colsb)
        else:  # tdpb[su][su]d / tdpbf16ps: dst(reg) += src1(rm) . src2(vvvv), over 4-byte groups
            d, a, b = f["reg"] & 7, f["rm"] & 7, f["vvvv"] & 7
            if f["reg"] > 7 or f["rm"] > 7 or f["vvvv"] > 7 or len({d, a, b}) < 3:
                raise EmulationError(f"{name}: tmm{d}, tmm{a}, tmm{b} not three distinct tiles (#UD)")
            (dr, dc), (ar, ac), (br, bc) = self._tile(d, name), self._tile(a, name), self._tile(b, name)
            if dc % 4 or ac % 4 or dr != ar or ac // 4 != br or dc != bc:
                raise EmulationError(f"{name}: tile shapes {dr}x{dc} += {ar}x{ac} . {br}x{bc} do not fit (#UD)")
            if name == "tdpbf16ps":
                self._dpbf16ps(d, a, b, dr, dc, br)
                return
            # int32 wrapping sums of byte products
            sa = np.int8 if name[4] == "s" else np.uint8
            sb = np.int8 if name[5] == "s" else np.uint8
            A = self.tiles[a, :ar, :ac].view(sa).astype(np.int64)                 # ar x (4 k)
            B = self.tiles[b, :br, :bc].view(sb).astype(np.int64)                 # k x (4 n)
            B = B.reshape(br, bc // 4, 4).transpose(0, 2, 1).reshape(4 * br, bc // 4)
            acc = self.tiles[d, :dr, :dc].copy().view(np.int32).astype(np.int64) + A @ B
            out = np.zeros((16, 64), np.uint8)
            out[:dr, :dc] = acc.astype(np.uint32).view(np.uint8).reshape(dr, dc)
            self.tiles[d] = out  # dst's rows / bytes past its configuration are zeroed

    def _dpbf16ps(self, d, a, b, rows, colsb, pairs):
        """tdpbf16ps after the SDM's pseudo-code (vol. 2, TDPBF16PS): per row, two float32 partial sums per
        dst element, one over the even bfloat16 lanes and one over the odd, each starting at 0 and taking one
        fused product-add per k pair; then the two are added, then that sum is added to dst. Each step rounds
        to nearest even in float32 with DAZ and FTZ (denormal inputs read as zero, denormal results flushed to a
        zero of their sign); MXCSR plays no part. Vectorised over rows and columns, in k order. (The Intrinsics
        Guide's older text, one running sum per element seeded with dst, rounds differently; the SDM is followed.)"""
        with np.errstate(over="ignore", invalid="ignore"):  # Inf / NaN results are values here, not errors
            self._dpbf16ps_rows(d, a, b, rows, colsb, pairs)

    def _dpbf16ps_rows(self, d, a, b, rows, colsb, pairs):
        n = colsb // 4
        A = _bf16_daz(self.tiles[a, :rows, :4 * pairs].view(np.uint16))   # rows x (2 pairs)
        B = _bf16_daz(self.tiles[b, :pairs, :colsb].view(np.uint16))      # pairs x (2 n)
        acc = np.zeros((rows, 2 * n), np.float32)                          # lane 2j: even sums, 2j+1: odd
        for k in range(pairs):
            # A's pair k against B's row k, the even bfloat16 with the even, the odd with the odd. Products of
            # two bfloat16 and their sums with a float32 are exact in float64 (or far enough apart that rounding
            # to float64 first cannot change the float32 result): one rounding, as a fused product-add has.
            a_lanes = np.tile(A[:, 2 * k:2 * k + 2], n)
            acc = _ftz32(acc.astype(np.float64) + a_lanes * B[k])
        pair_sum = _ftz32(acc[:, 0::2].astype(np.float64) + acc[:, 1::2])
        c = _daz32(self.tiles[d, :rows, :colsb].copy().view(np.float32))
        out = np.zeros((16, 64), np.uint8)
        out[:rows, :colsb] = _ftz32(c.astype(np.float64) + pair_sum).view(np.uint8).reshape(rows, colsb)
        self.tiles[d] = out  # dst's rows / bytes past its configuration are zeroed


def _bf16_daz(u16):
    """bfloat16 bit patterns as float64 values, denormals (exponent field 0) read as zeros of their sign."""
    u16 = np.where(u16 & 0x7F80, u16, u16 & 0x8000).astype(np.uint32)
    return (u16 << 16).view(np.float32).astype(np.float64)


def _ftz32(x):
    """x rounded to float32 (nearest even), results below FLT_MIN in magnitude flushed to a zero of their sign."""
    return _daz32(np.asarray(x).astype(np.float32))


def _daz32(r):
    return np.where(np.abs(r) < FLT_MIN, np.copysign(np.float32(0), r), r).astype(np.float32)


_SHARED = []


def shared_emulator(model="sapphire_rapids", amx=False):
    """The process's Emulator, made on first use, so that test modules run in one process share it; asking
    it later for another model or AMX setting is an error (it cannot be remade)."""
    if not _SHARED:
        _SHARED.append(Emulator(model, amx=amx))
    emu = _SHARED[0]
    if (emu.model, emu.amx is not None) != (model, bool(amx)):
        raise EmulationError(f"the process's Emulator is {emu.model} with amx={emu.amx is not None}, "
                             f"not {model} with amx={bool(amx)}")
    return emu


def grow_heap(mib=256):
    """Makes glibc's malloc serve up to about `mib` MiB (blocks under 32 MiB) from the heap it already
    has, with no system call: emulated code cannot make brk / mmap calls from inside malloc."""
    M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3
    _libc.mallopt(M_MMAP_THRESHOLD, 32 << 20)
    _libc.mallopt(M_TRIM_THRESHOLD, 1 << 30)
    _libc.mallopt(M_TOP_PAD, 16 << 20)
    _libc.malloc.restype = ctypes.c_void_p
    _libc.free.argtypes = [ctypes.c_void_p]
    blocks = [_libc.malloc(16 << 20) for _ in range(mib // 16)]
    for p in reversed(blocks):
        _libc.free(p)


def load_private_copy(path):
    """dlopens a copy of the shared object at `path` under a new name (its own globals, never run
    natively), all symbols bound now (no lazy PLT resolution inside the emulation)."""
    d = tempfile.mkdtemp(prefix="gemmkit-emu-")
    dst = os.path.join(d, "emulated_" + os.path.basename(path))
    shutil.copyfile(path, dst)
    return ctypes.CDLL(dst, mode=os.RTLD_NOW | os.RTLD_LOCAL)


if __name__ == "__main__":  # smoke check: CPUID of the emulated model
    emu = Emulator(sys.argv[1] if len(sys.argv) > 1 else "sapphire_rapids")
    print("ok", emu.model)
