"""cffi builder for ztsa._native (API mode, compiled by `pip install .`).

The interface is ztsa_native.h (its ztsa_syscalls() hands Python the table of system calls
that ztsa_nr.h holds as a C macro, which cdef cannot read); the sources are split by the
process that runs them (see ztsa_native.h)."""

import importlib.util
import os
import sys
from pathlib import Path

from cffi import FFI

HERE = Path(__file__).resolve().parent

# Before anything compiles, a machine without a C compiler or the Python headers gets one
# line naming the packages to install (native/toolchain.py), not a compiler's error. Only
# for the setup commands that compile (cffi runs this file for every command; metadata
# and the sdist need neither). Here rather than in a build_ext subclass in setup.py: a
# command class there is a build-time hook, which ztsa's own SUP013 rightly blocks.
COMPILING = {"build", "build_ext", "bdist_wheel", "bdist_egg", "editable_wheel", "develop",
             "install"}
if __name__ == "__main__" or COMPILING.intersection(sys.argv[1:]):
    _spec = importlib.util.spec_from_file_location("ztsa_build_toolchain",
                                                   HERE / "toolchain.py")
    assert _spec is not None and _spec.loader is not None
    _toolchain = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(_toolchain)
    _problem = _toolchain.problem()
    if _problem:
        sys.exit(_problem)

# The compiler records the directory it compiles in (the debug information's
# DW_AT_comp_dir): the project root, recorded as `.`, so that no path of the building
# machine goes into the wheel's extension. Each name the compiler may know the root by
# (gcc takes $PWD where that is the current directory).
_root = [str(HERE.parent), os.getcwd(), os.path.realpath(os.getcwd())]
if os.environ.get("PWD") and os.path.isdir(os.environ["PWD"]) and os.path.samefile(
        os.environ["PWD"], os.getcwd()):
    _root.append(os.environ["PWD"])
PREFIX_MAPS = [f"-ffile-prefix-map={d}=." for d in dict.fromkeys(_root)]
# by role (each file opens with the process that runs it; common.h, helper.h, child.h);
# nsmain.c is ztsa-ns's main, not the extension's
NS_MAIN = "nsmain.c"
SOURCES = sorted(p.name for p in HERE.glob("*.c") if p.name != NS_MAIN)
CFLAGS = ["-O2", "-Wall", "-Wextra", "-Werror", *PREFIX_MAPS]

ffibuilder = FFI()
ffibuilder.cdef((HERE / "ztsa_native.h").read_text().replace("/*", "\n/*"))
ffibuilder.set_source(
    "ztsa._native",
    '#include "ztsa_nr.h"\n#include "ztsa_native.h"\n',
    # relative to the project root: setuptools refuses absolute source paths
    sources=[f"native/{name}" for name in SOURCES],
    # a header changed (ztsa_nr.h's table too) rebuilds the module, as a source does
    depends=[f"native/{p.name}" for p in sorted(HERE.glob("*.h"))],
    include_dirs=["native"],
    extra_compile_args=CFLAGS,
)


def build_ns(out: Path) -> None:
    """ztsa-ns (native/nsmain.c and the sources it calls), the child's set-up as an
    executable of its own, compiled to out with the extension's warnings as errors;
    what it does not call is left out by the linker. The C compiler is the one the
    extension is built with (CC, else the interpreter's)."""
    import shlex
    import subprocess
    import sysconfig

    cc = shlex.split(os.environ.get("CC") or sysconfig.get_config_var("CC") or "cc")
    out.parent.mkdir(parents=True, exist_ok=True)
    # relative to the project root, as the extension's: no build path in the binary
    sources = [f"native/{name}" for name in [*SOURCES, NS_MAIN]]
    subprocess.run([*cc, *CFLAGS, "-Inative", "-ffunction-sections", "-fdata-sections",
                    "-Wl,--gc-sections", "-s", "-o", str(out), *sources],
                   check=True, cwd=HERE.parent)


if __name__ == "__main__":
    ffibuilder.compile(verbose=True)
