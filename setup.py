"""The native helper is built with cffi; setuptools takes cffi_modules here.

The `ztsa` command is a small shell launcher written here, not a console-script entry
point: a console script starts Python with the site module, which runs every `.pth` file
of site-packages and honours PYTHONPATH, PYTHONHOME and the user site-packages before
ztsa's first line. The launcher starts the interpreter ztsa was installed for with
`-I -S` (isolated, no site start-up), and its boot code, ztsa/_boot.py, adds
site-packages itself; see docs/install.md, "The launcher".

Which interpreter that is, only the installer knows: nothing here names one (this may
run in a build machine's throw-away environment). Beside the launcher goes a second
script, `ztsa-interpreter`, whose first line is `#!python`: pip, uv and pipx write the
interpreter they install for in its place, and the launcher reads it from there.
Beside them goes `ztsa-ns`, the child's set-up compiled as an executable of its own
(docs/install.md, "ztsa-ns").
"""

import ast
import os
import shlex
import sys
import sysconfig
from pathlib import Path

from setuptools import setup

HERE = os.path.dirname(os.path.abspath(__file__))

# The Python code the launcher runs (`python -I -S -c BOOT LAUNCHER-PATH ARGS...`): the
# text of ztsa/_boot.py, a module of its own so that it is linted and type-checked, run
# as a script so that nothing of ztsa is imported before site-packages are on the path.
with open(os.path.join(HERE, "ztsa", "_boot.py"), encoding="utf-8") as f:
    BOOT = f.read()
# the name of the interpreter's record, as _boot.py (and ztsa exec's protection) know it
RECORD = next(node.value.value for node in ast.parse(BOOT).body
              if isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
              and [getattr(t, "id", None) for t in node.targets] == ["INTERPRETER_FILE"])

LAUNCHER = r"""#!/bin/sh
# ztsa's launcher, written by setup.py. It starts the interpreter ztsa was installed for,
# which the installer wrote into the first line of @RECORD@ beside this file's real
# path (a link to it, as pipx and uv tool make, is followed first): never one named when
# ztsa was built, never one beside a link. What it cannot find so, it refuses (125).
# Python starts isolated (-I: no PYTHON* variables, no user site, no current directory on
# the import path) and without the site module's start-up (-S: no .pth file runs before
# ztsa); the boot code refuses a ztsa package that did not install this launcher.
refuse() { printf 'ztsa: %s\n' "$*" >&2; exit 125; }
self=$0
if [ -h "$self" ]; then
    self=$(readlink -f -- "$0" 2>/dev/null || realpath -- "$0" 2>/dev/null) && [ -n "$self" ] ||
        refuse "$0: cannot resolve this link (neither readlink -f nor realpath works)"
fi
case $self in */*) dir=${self%/*} ;; *) dir=. ;; esac
rec=$dir/@RECORD@
[ -f "$rec" ] && [ -r "$rec" ] ||
    refuse "$rec: missing, so no interpreter is known for this launcher (reinstall ztsa)"
unquote() {  # $1, one shell word as shlex.quote writes it, into $py
    case $1 in *[!A-Za-z0-9_@%+=:,./-]*) ;; *) py=$1; return 0 ;; esac
    case $1 in \'*\') ;; *) return 1 ;; esac
    rest=${1#\'}; rest=${rest%\'}; py=
    while :; do
        case $rest in
        *\'\"\'\"\'*) py=$py${rest%%\'\"\'\"\'*}\'; rest=${rest#*\'\"\'\"\'} ;;
        *\'*) return 1 ;;
        *) py=$py$rest; return 0 ;;
        esac
    done
}
{ IFS= read -r first; IFS= read -r second; } <"$rec"
case $first in
'#!/bin/sh')
    # a path with a space or longer than a shebang line: uv and installer write
    # '''exec' WORD "$0" "$@"; WORD is relative to the record in a relocatable venv
    word=${second#"'''exec' "}; word=${word%' "$0" "$@"'}
    case $word in
    '"$(dirname -- "$(realpath -- "$0")")"/'*)
        unquote "${word#'"$(dirname -- "$(realpath -- "$0")")"/'}" && py=$dir/$py ;;
    *) unquote "$word" ;;
    esac || refuse "$rec: its second line names no interpreter" ;;
'#!/'*)  # pip writes any path, spaces too; pipx adds ` -E` (its options are -I's)
    py=${first#'#!'}
    while [ ! -f "$py" ]; do
        case ${py##* -} in ''|*[!A-Za-z]*|"$py") break ;; esac
        py=${py% -*}
    done ;;
*) refuse "$rec: its first line names no interpreter (did pip, uv or pipx install it?)" ;;
esac
case $py in /*) ;; *) refuse "$rec: $py is not an absolute path" ;; esac
[ -f "$py" ] && [ -x "$py" ] || refuse "$py (named by $rec): not an executable file"
exec "$py" -I -S -c @BOOT@ "$0" "$@"
"""

# the set-up's executable (ztsa.sandbox.offer finds it beside the launcher)
NS = "ztsa-ns"

# Run directly, the record is a Python script: it says what it is for.
INTERPRETER = """#!python
# ztsa's launcher (`ztsa`, beside this file) reads the line above, which the installer
# wrote: the interpreter it installed ztsa for. This file is no command of its own.
import sys

sys.exit("ztsa-interpreter names the interpreter of ztsa's launcher: run ztsa")
"""


# cffi compiles the helper against the limited API (`_native.abi3.so`) wherever it can
# (CPython, not a debug or free-threaded build): tag the wheel so (cp310-abi3), one wheel
# for every CPython from 3.10 on, which is what the release workflow builds.
ABI3 = (sys.implementation.name == "cpython" and not hasattr(sys, "gettotalrefcount")
        and not sysconfig.get_config_var("Py_GIL_DISABLED"))


def scripts() -> list[str]:
    os.makedirs(os.path.join(HERE, "build", "launcher"), exist_ok=True)
    out = []
    for name, text in (("ztsa", LAUNCHER.replace("@RECORD@", RECORD)
                        .replace("@BOOT@", shlex.quote(BOOT))),
                       (RECORD, INTERPRETER)):
        rel = os.path.join("build", "launcher", name)
        with open(os.path.join(HERE, rel), "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(os.path.join(HERE, rel), 0o755)
        out.append(rel)
    return out


# The setup commands that compile (native/build_native.py's list): only they build
# ztsa-ns; metadata and the sdist need no compiler.
def ns_files() -> list[tuple[str, list[str]]]:
    """ztsa-ns, the child's set-up as an executable (native/nsmain.c), installed beside
    the launcher: `bin` of the install's data directory is its scripts directory in
    every scheme (a venv's, --user's ~/.local/bin, /usr/local/bin). A data file, not a
    script: build_scripts would read an executable as text."""
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "ztsa_build_native", os.path.join(HERE, "native", "build_native.py"))
    assert spec is not None and spec.loader is not None
    native = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(native)
    if not native.COMPILING.intersection(sys.argv[1:]):
        return []
    rel = os.path.join("build", "launcher", NS)
    native.build_ns(Path(HERE) / rel)
    return [("bin", [rel])]


setup(cffi_modules=["native/build_native.py:ffibuilder"], scripts=scripts(),
      data_files=ns_files(),
      # `#!python` stays so in every wheel, editable ones too: the installer writes the
      # interpreter, never setuptools the one it runs on
      options={"build_scripts": {"executable": "python"},
               **({"bdist_wheel": {"py_limited_api": "cp310"}} if ABI3 else {})})
