"""The manylinux_2_28 x86_64 wheel, built with zig's C compiler against glibc 2.28 (as
native/zigwheel.py builds it), is one `auditwheel show` accepts for its tag: nothing in
the helper needs a newer glibc (a function newer than 2.28 already fails zig's link).

Skipped where the `ziglang` and `auditwheel` packages are not installed (the test
extra does not bring them: zig's first build of its C library for a target takes about
a minute, a build with it cached about 20 s; see docs/install.md, "Platforms")."""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]

for _module in ("ziglang", "auditwheel"):
    if importlib.util.find_spec(_module) is None:
        pytest.skip(f"{_module} is not installed (pip install ziglang auditwheel)",
                    allow_module_level=True)

sys.path.insert(0, str(ROOT / "native"))
import zigwheel  # noqa: E402

sys.path.remove(str(ROOT / "native"))


def _manylinux(tag: str) -> tuple[int, int]:
    m = re.fullmatch(r"manylinux_(\d+)_(\d+)_x86_64", tag)
    assert m, tag
    return int(m.group(1)), int(m.group(2))


def test_manylinux_2_28_wheel_is_auditwheels(tmp_path: Path) -> None:
    wheel = zigwheel.build("x86_64-linux-gnu.2.28", tmp_path)
    assert re.fullmatch(r"ztsa-[^-]+-cp310-abi3-manylinux_2_28_x86_64\.whl", wheel.name)
    with zipfile.ZipFile(wheel) as whl:  # what auditwheel judges: both ELF files
        names = whl.namelist()
    assert "ztsa/_native.abi3.so" in names
    assert any(n.endswith(".data/data/bin/ztsa-ns") for n in names), names
    proc = subprocess.run([sys.executable, "-m", "auditwheel", "show", str(wheel)],
                          capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    text = " ".join(proc.stdout.split())
    # the most compatible tag auditwheel finds, at least as old as the wheel's own
    found = re.search(r'consistent with the following platform tag: "([^"]+)"', text)
    assert found, text
    assert _manylinux(found.group(1)) <= (2, 28), text
    # only the C library, nothing to graft in
    assert "libpython" not in text
    versions = re.findall(r"GLIBC_(\d+)\.(\d+)", text)
    assert versions and max((int(a), int(b)) for a, b in versions) <= (2, 28), text
