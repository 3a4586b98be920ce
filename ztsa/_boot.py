"""The code the `ztsa` shell launcher runs: `python -I -S -c CODE LAUNCHER ARGS...`.

setup.py embeds this file's text in the launcher it writes (see docs/install.md,
"The launcher"). It runs as a script, not as this module, and before site-packages are
on the import path: it imports nothing from ztsa until it has put them there.

-S skips site's start-up, so site-packages are added here, without running their .pth
files: a virtual environment's own (found as site finds it, by the pyvenv.cfg beside
the interpreter or one directory up), then the interpreter's, unless the environment
leaves them out. When ztsa is not found there (an editable install is a .pth file; a
--user install is the user site), site's full start-up runs, then the search again;
its user site is that of the launcher's installation (USERBASE/bin/ztsa), whatever
$PYTHONUSERBASE or $HOME say.

Before any of ztsa runs, the package found must be the one that installed LAUNCHER:
the ztsa-*.dist-info beside it (for an editable install, the first on the path) lists
LAUNCHER, resolved, among its files. Else nothing runs and the exit status is 125.
"""

import gc
import os
import site
import sys

# The launcher's interpreter record, beside it: a script whose `#!python` line the
# installer rewrites to the interpreter it installs for (setup.py writes it too).
INTERPRETER_FILE = "ztsa-interpreter"
REFUSED = 125  # ztsa's exit status when it fails itself


def site_prefixes() -> list[str] | None:
    """The prefixes whose site-packages go on the path: a virtual environment's own, then
    the interpreter's if the environment includes them; None outside a virtual
    environment (site's default, the interpreter's)."""
    exe_dir = os.path.dirname(os.path.abspath(sys.executable))
    for cfg in (exe_dir + "/pyvenv.cfg", os.path.dirname(exe_dir) + "/pyvenv.cfg"):
        try:
            with open(cfg, encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, ValueError):
            continue
        prefixes = [os.path.dirname(exe_dir)]
        for line in lines:
            key, _, value = line.partition("=")
            if (key.strip().lower() == "include-system-site-packages"
                    and value.strip().lower() == "true"):
                prefixes.append(sys.base_prefix)
        return prefixes
    return None


def site_dirs() -> list[str]:
    """The directories ztsa's imports are looked for in after the standard library, in
    order, whether or not each exists now (`ztsa exec` keeps every name of them that
    could hold one of ztsa's modules out of the tree's reach)."""
    prefixes = site_prefixes()
    found = site.getsitepackages(prefixes)
    if prefixes:
        # Debian's site lists only dist-packages for a prefix while the environment is
        # not yet its sys.prefix (-S): a venv's own lib/pythonX.Y/site-packages first
        # (lib64 only where the interpreter's own platform library is there)
        version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
        own = [os.path.join(prefixes[0], lib, version, "site-packages")
               for lib in dict.fromkeys(("lib", sys.platlibdir))]
        found = own + [p for p in found if p not in own]
    return found


def find_ztsa() -> str | None:
    """The directory of the ztsa package an import would load now, found as the import
    system finds it but without running any of it; None when there is none."""
    for finder in sys.meta_path:
        find = getattr(finder, "find_spec", None)
        spec = find("ztsa", None) if find is not None else None
        if spec is not None:  # the first finder that finds it decides, as in an import
            origin = getattr(spec, "origin", None)
            return os.path.dirname(os.path.abspath(origin)) if isinstance(origin, str) else None
    return None


def recorded(where: str) -> list[str]:
    """The paths, relative to WHERE, that the RECORD of each ztsa-*.dist-info in WHERE
    lists ([] for none; a RECORD that cannot be read lists nothing)."""
    try:
        infos = [name for name in os.listdir(where)
                 if name.startswith("ztsa-") and name.endswith(".dist-info")]
    except OSError:
        return []
    paths = []
    for info in infos:
        try:
            with open(os.path.join(where, info, "RECORD"), encoding="utf-8") as f:
                lines = f.read().splitlines()
        except (OSError, ValueError):
            continue
        for line in lines:
            path = line.rsplit(",", 2)[0]
            if path.startswith('"'):  # CSV: a path with a comma or a quote
                path = path[1:-1].replace('""', '"')
            paths.append(path)
    return paths


def installed_by(package: str, launcher: str) -> bool:
    """Whether the ztsa distribution of PACKAGE (the ztsa-*.dist-info beside it, else,
    an editable install, the first directory on the path that holds one) lists
    LAUNCHER, a resolved path, in its RECORD (paths relative to that directory)."""
    for where in (os.path.dirname(package), *sys.path):
        try:
            if not any(name.startswith("ztsa-") and name.endswith(".dist-info")
                       for name in os.listdir(where)):
                continue
        except OSError:
            continue
        return any(os.path.basename(path) == os.path.basename(launcher)
                   and os.path.realpath(os.path.join(where, path)) == launcher
                   for path in recorded(where))
    return False


def start_site(launcher: str) -> None:
    """site's full start-up, the user site that of LAUNCHER's installation (a --user
    install's launcher is USERBASE/bin/ztsa), not one $PYTHONUSERBASE or $HOME name."""
    site.USER_BASE = os.path.dirname(os.path.dirname(launcher))
    site.ENABLE_USER_SITE = True
    site.main()


def main() -> None:
    # No cycle collection while ztsa starts: its imports and the gate make tens of
    # thousands of objects that live until exit, and the collector would only rescan
    # them. `ztsa exec` turns it on again for the tracer's loop.
    gc.disable()
    named = sys.argv[1] if len(sys.argv) > 1 else ""
    launcher = os.path.realpath(named)
    sys.path += [p for p in site_dirs() if os.path.isdir(p)]
    started = False
    package = find_ztsa()
    if package is None:
        start_site(launcher)
        started = True
        package = find_ztsa()
    if package is None:
        sys.stderr.write(f"ztsa: {sys.executable}, the interpreter of the launcher {named}, "
                         "finds no ztsa package: refused (reinstall ztsa)\n")
        sys.exit(REFUSED)
    if not installed_by(package, launcher):
        sys.stderr.write(f"ztsa: {sys.executable} imports ztsa from {package}, which did "
                         f"not install the launcher {named}: refused (reinstall ztsa)\n")
        sys.exit(REFUSED)
    try:
        from ztsa.cli import entry
    except ImportError:
        if started:
            raise
        start_site(launcher)
        from ztsa.cli import entry
    sys.argv[0:2] = sys.argv[1:2]  # ["-c", LAUNCHER, ARGS...] -> [LAUNCHER, ARGS...]
    entry()


if __name__ == "__main__":
    main()
