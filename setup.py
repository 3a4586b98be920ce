"""The native helper is built with cffi; setuptools takes cffi_modules here.

The `ztsa` command is a small shell launcher written here, not a console-script entry
point: a console script starts Python with the site module, which runs every `.pth` file
of site-packages and honours PYTHONPATH, PYTHONHOME and the user site-packages before
ztsa's first line. The launcher starts the interpreter this package is built for with
`-I -S` (isolated, no site start-up), and its boot code, ztsa/_boot.py, adds
site-packages itself; see docs/design.md, "Start-up".
"""

import os
import shlex
import sys

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))

# The Python code the launcher runs (`python -I -S -c BOOT LAUNCHER-PATH ARGS...`): the
# text of ztsa/_boot.py, a module of its own so that it is linted and type-checked, run
# as a script so that nothing of ztsa is imported before site-packages are on the path.
with open(os.path.join(HERE, "ztsa", "_boot.py"), encoding="utf-8") as f:
    BOOT = f.read()

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
