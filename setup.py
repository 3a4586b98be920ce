"""The native helper is built with cffi; setuptools takes cffi_modules here.

The `ztsa` command is a small shell launcher written here, not a console-script entry
point: a console script starts Python with the site module, which runs every `.pth` file
of site-packages and honours PYTHONPATH, PYTHONHOME and the user site-packages before
ztsa's first line. The launcher starts the interpreter this package is built for with
`-I -S` (isolated, no site start-up) and adds site-packages itself; see
docs/design.md, "Start-up".
"""

import os
import shlex
import sys

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))

# The Python code the launcher runs (`python -I -S -c BOOT LAUNCHER-PATH ARGS...`).
# No cycle collection while ztsa starts (its imports and the gate make tens of
# thousands of objects that live until exit; the collector rescanned them several
# times, about a millisecond); `ztsa exec` turns it on again for the tracer's loop.
# Site-packages first, without their .pth files: a virtual environment's own (found
# as site finds it, by the pyvenv.cfg beside the interpreter or one directory up; -S
# skips that too), then the interpreter's, unless the environment leaves them out.
# When ztsa is not found there (an editable install is a .pth file; a --user install is
# the user site), site's full start-up, then the import again.
BOOT = """\
import gc, os, sys, site
gc.disable()
exe_dir = os.path.dirname(os.path.abspath(sys.executable))
prefixes = None
for cfg in (exe_dir + "/pyvenv.cfg", os.path.dirname(exe_dir) + "/pyvenv.cfg"):
    try:
        with open(cfg, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, ValueError):
        continue
    prefixes = [os.path.dirname(exe_dir)]
    for line in lines:
        key, _, value = line.partition("=")
        if key.strip().lower() == "include-system-site-packages" and \\
                value.strip().lower() == "true":
            prefixes.append(sys.base_prefix)
    break
sys.path += site.getsitepackages(prefixes)
try:
    from ztsa.cli import entry
except ImportError:
    site.ENABLE_USER_SITE = True
    site.main()
    from ztsa.cli import entry
sys.argv[0:2] = sys.argv[1:2]
entry()
"""

LAUNCHER = f"""\
#!/bin/sh
# ztsa's launcher, written by setup.py for the interpreter below. Python starts isolated
# (-I: no PYTHON* variables, no user site, no current directory on the import path) and
# without the site module's start-up (-S: no .pth file runs before ztsa).
py={shlex.quote(sys.executable)}
# installed from a wheel built by another interpreter: the one beside this script
[ -x "$py" ] || py="${{0%/*}}/python3"
exec "$py" -I -S -c {shlex.quote(BOOT)} "$0" "$@"
"""


def launcher() -> str:
    out = os.path.join("build", "launcher", "ztsa")
    os.makedirs(os.path.join(HERE, "build", "launcher"), exist_ok=True)
    with open(os.path.join(HERE, out), "w", encoding="utf-8") as f:
        f.write(LAUNCHER)
    os.chmod(os.path.join(HERE, out), 0o755)
    return out


setup(cffi_modules=["native/build_native.py:ffibuilder"], scripts=[launcher()])
