"""Where the emulated ISA lane cannot run (not x86-64 Linux, no bochscpu-python) an emulated test module is skipped;
where it must run (.ci/isa-lane sets GEMMKIT_ISA_LANE=1) the cause is raised instead."""
import os
import platform
import sys

import pytest

LANE = os.environ.get("GEMMKIT_ISA_LANE") == "1"


def require_lane():
    """Call at the top of a test module, before importing what needs the emulator."""
    try:
        if platform.machine().lower() not in ("x86_64", "amd64") or not sys.platform.startswith("linux"):
            raise ImportError("the emulated lane runs on x86-64 Linux only")
        import bochs_cpu
        bochs_cpu._import_bochscpu()
    except Exception as e:  # noqa: BLE001
        if LANE:
            raise
        pytest.skip(f"emulated ISA lane not available ({e}); run `bash .ci/isa-lane`", allow_module_level=True)
