"""Build ztsa's wheel for an older glibc, for musl or for aarch64 with zig's C compiler.

    python native/zigwheel.py TARGET [--outdir DIR]

TARGET is zig's: x86_64-linux-gnu.2.28, aarch64-linux-gnu.2.28, x86_64-linux-musl or
aarch64-linux-musl. zig (the `ziglang` package on PyPI, in this interpreter) compiles
against its own headers and links against a C library of exactly that version, so a
function newer than glibc 2.28 fails the link here rather than on a user's machine;
`auditwheel show` then judges the wheel's tag. The release builds its wheels with
cibuildwheel in the manylinux and musllinux images instead ([tool.cibuildwheel]); this
is the check a machine without those images can make, and tests/native/test_zig_wheel.py
makes it.

The wheel is built as a release builds it (`python -m build --wheel`, isolated, from a
copy of the tree) with CC and LDSHARED naming zig, and tagged cp310-abi3 with the
target's platform (bdist_wheel's --plat-name). The Python headers are this interpreter's
(the limited API's declarations are the same on every Linux: LP64, little-endian), so a
musl or aarch64 wheel built here is compiled and linked, not run. Standard library only.
"""

from __future__ import annotations

import argparse
import os
import re
import shlex
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
# zig's target -> the wheel's platform tag
PLATFORMS = {
    "x86_64-linux-gnu.2.28": "manylinux_2_28_x86_64",
    "aarch64-linux-gnu.2.28": "manylinux_2_28_aarch64",
    "x86_64-linux-musl": "musllinux_1_2_x86_64",
    "aarch64-linux-musl": "musllinux_1_2_aarch64",
}
IGNORE = shutil.ignore_patterns(".git", "build", "dist", "*.so", "*.egg-info", "__pycache__",
                                ".*_cache", ".hypothesis", ".venv", "wheelhouse")


def python_headers(into: Path) -> Path:
    """A directory whose Python.h is this interpreter's and whose pyconfig.h is the real
    one: Debian's pyconfig.h only includes <MULTIARCH/pythonX.Y/pyconfig.h> from
    /usr/include, a directory zig must not search (the host's C library is there)."""
    include = Path(sysconfig.get_paths()["include"])
    shutil.copytree(include, into, symlinks=False)
    config = (include / "pyconfig.h").read_text(errors="replace")
    for name in re.findall(r"#\s*include\s*<([^>]*pyconfig\.h)>", config):
        for base in ("/usr/include", "/usr/local/include"):
            real = Path(base, name)
            if real.is_file():
                (into / name).parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(real, into / name)
                break
    return into


def build(target: str, outdir: Path, *, timeout: float = 600) -> Path:
    """Build the wheel for target into outdir; its path."""
    platform = PLATFORMS[target]
    with tempfile.TemporaryDirectory(prefix="ztsa-zigwheel-") as tmp:
        work = Path(tmp)
        src = work / "ztsa"
        shutil.copytree(ROOT, src, ignore=IGNORE)
        headers = python_headers(work / "python-include")
        cc = f"{shlex.quote(sys.executable)} -m ziglang cc -target {target}"
        env = {
            **os.environ,
            "CC": cc,
            "LDSHARED": f"{cc} -shared",
            "CFLAGS": f"-I{shlex.quote(str(headers))}",
            "LDFLAGS": "",
            "TMPDIR": str(work),
            # zig's cache of the C libraries it builds for each target, kept between runs
            "ZIG_GLOBAL_CACHE_DIR": os.environ.get(
                "ZIG_GLOBAL_CACHE_DIR", str(Path.home() / ".cache" / "ztsa-zig")),
        }
        options = f"-C--build-option=--plat-name={platform}"
        if _has("build"):
            argv = [sys.executable, "-m", "build", "--wheel", options, "--outdir", str(work)]
        else:
            argv = [sys.executable, "-m", "pip", "wheel", "--no-deps",
                    f"--config-settings=--build-option=--plat-name={platform}", "-w",
                    str(work)]
        proc = subprocess.run([*argv, str(src)], env=env, cwd=work, capture_output=True,
                              text=True, stdin=subprocess.DEVNULL, timeout=timeout)
        if proc.returncode != 0:
            raise RuntimeError(f"building for {target} failed:\n"
                               + proc.stdout[-4000:] + proc.stderr[-4000:])
        (wheel,) = work.glob(f"ztsa-*-cp310-abi3-{platform}.whl")
        outdir.mkdir(parents=True, exist_ok=True)
        return Path(shutil.copy2(wheel, outdir / wheel.name))


def _has(module: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(module) is not None


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=sorted(PLATFORMS))
    parser.add_argument("--outdir", type=Path, default=ROOT / "wheelhouse")
    args = parser.parse_args()
    print(build(args.target, args.outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
