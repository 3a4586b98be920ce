"""The code the `ztsa` shell launcher runs: `python -I -S -c CODE LAUNCHER ARGS...`.

setup.py embeds this file's text in the launcher it writes (see docs/design.md,
"Start-up cost"). It runs as a script, not as this module, and before site-packages are
on the import path: it imports nothing from ztsa until it has put them there.

-S skips site's start-up, so site-packages are added here, without running their .pth
files: a virtual environment's own (found as site finds it, by the pyvenv.cfg beside
the interpreter or one directory up), then the interpreter's, unless the environment
leaves them out. When ztsa is not found there (an editable install is a .pth file; a
--user install is the user site), site's full start-up runs, then the import again.
"""

import gc
import os
import site
import sys


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


def main() -> None:
    # No cycle collection while ztsa starts: its imports and the gate make tens of
    # thousands of objects that live until exit, and the collector would only rescan
    # them. `ztsa exec` turns it on again for the tracer's loop.
    gc.disable()
    sys.path += [p for p in site_dirs() if os.path.isdir(p)]
    try:
        from ztsa.cli import entry
    except ImportError:
        site.ENABLE_USER_SITE = True
        site.main()
        from ztsa.cli import entry
    sys.argv[0:2] = sys.argv[1:2]  # ["-c", LAUNCHER, ARGS...] -> [LAUNCHER, ARGS...]
    entry()


if __name__ == "__main__":
    main()
