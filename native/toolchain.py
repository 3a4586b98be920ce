"""Whether this machine can build the native helper: a C compiler and the Python headers.

build_native.py runs `problem()` before anything is compiled, so that an install from
the sdist on a machine without them stops with one line naming the packages to install,
not a compiler's error. Standard library only: build_native.py loads this file by path.
"""

from __future__ import annotations

import os
import shlex
import shutil
import sysconfig
from collections.abc import Callable, Mapping

PACKAGES = ("apt-get install gcc python3-dev (Debian/Ubuntu), "
            "dnf install gcc python3-devel (Fedora), "
            "apk add build-base python3-dev (Alpine)")


def compiler(environ: Mapping[str, str], config: Callable[[str], object]) -> list[str]:
    """The compiler commands the build may use, in setuptools' order: $CC, else the
    interpreter's configured CC, else `cc` or `gcc` (either will do)."""
    for value in (environ.get("CC"), config("CC")):
        if isinstance(value, str) and value.strip():
            try:
                words = shlex.split(value)
            except ValueError:
                words = value.split()
            return words[:1]
    return ["cc", "gcc"]


def problem(environ: Mapping[str, str] | None = None,
            config: Callable[[str], object] = sysconfig.get_config_var,
            include_dirs: list[str] | None = None,
            which: Callable[[str], str | None] = shutil.which) -> str | None:
    """The one-line error for a missing compiler or Python.h, or None when both exist."""
    environ = os.environ if environ is None else environ
    missing = []
    names = compiler(environ, config)
    if not any(which(name) for name in names):
        missing.append("no C compiler: " + " or ".join(f"`{n}`" for n in names) + " not found")
    if include_dirs is None:
        include_dirs = [sysconfig.get_path("include"), sysconfig.get_path("platinclude")]
        include_dirs.append(str(config("INCLUDEPY") or ""))
    dirs = [d for d in dict.fromkeys(include_dirs) if d]
    if not any(os.path.isfile(os.path.join(d, "Python.h")) for d in dirs):
        missing.append("no Python.h in " + (", ".join(dirs) or "any include directory"))
    if not missing:
        return None
    return ("ztsa: building the native helper needs a C compiler and the Python headers ("
            + "; ".join(missing) + "): " + PACKAGES)
