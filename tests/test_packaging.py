"""How ztsa is installed: a build without a C compiler or Python.h stops with one line."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent

def _toolchain() -> ModuleType:
    spec = importlib.util.spec_from_file_location("ztsa_build_toolchain",
                                                  ROOT / "native" / "toolchain.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _header_dir(tmp_path: Path) -> str:
    (tmp_path / "Python.h").write_text("/* a stand-in */\n")
    return str(tmp_path)


def test_toolchain_present(tmp_path: Path) -> None:
    tc = _toolchain()
    assert tc.problem(environ={}, config={"CC": "gcc -pthread"}.get,
                      include_dirs=[_header_dir(tmp_path)],
                      which={"gcc": "/usr/bin/gcc"}.get) is None


def test_no_compiler_is_one_line_naming_the_packages(tmp_path: Path) -> None:
    tc = _toolchain()
    msg = tc.problem(environ={}, config={"CC": "x86_64-linux-gnu-gcc -pthread"}.get,
                     include_dirs=[_header_dir(tmp_path)], which=lambda name: None)
    assert msg is not None and "\n" not in msg
    assert msg.startswith("ztsa: building the native helper needs a C compiler")
    assert "`x86_64-linux-gnu-gcc` not found" in msg and "Python.h" not in msg
    for packages in ("apt-get install gcc python3-dev", "dnf install gcc python3-devel",
                     "apk add build-base python3-dev"):
        assert packages in msg


def test_compiler_order(tmp_path: Path) -> None:
    tc = _toolchain()
    seen: list[str] = []

    def which(name: str) -> str | None:
        seen.append(name)
        return None

    # $CC first, as setuptools; then the interpreter's CC; then cc or gcc
    tc.problem(environ={"CC": "clang"}, config={"CC": "gcc"}.get,
               include_dirs=[str(tmp_path)], which=which)
    tc.problem(environ={}, config={"CC": "gcc"}.get, include_dirs=[str(tmp_path)],
               which=which)
    tc.problem(environ={}, config=lambda key: None, include_dirs=[str(tmp_path)],
               which=which)
    assert seen == ["clang", "gcc", "cc", "gcc"]
    assert tc.problem(environ={}, config=lambda key: None,
                      include_dirs=[_header_dir(tmp_path)],
                      which={"gcc": "/usr/bin/gcc"}.get) is None


def test_no_python_headers(tmp_path: Path) -> None:
    tc = _toolchain()
    msg = tc.problem(environ={}, config={"CC": "gcc"}.get,
                     include_dirs=[str(tmp_path / "include" / "python3.11")],
                     which={"gcc": "/usr/bin/gcc"}.get)
    assert msg is not None and "\n" not in msg
    assert f"no Python.h in {tmp_path}/include/python3.11" in msg
    assert "no C compiler" not in msg and "python3-dev" in msg


def test_this_interpreter_has_a_toolchain() -> None:
    # the tests run where ztsa was built, so both exist here
    assert _toolchain().problem() is None


def test_sdist_ships_the_check() -> None:
    manifest = (ROOT / "MANIFEST.in").read_text(encoding="utf-8")
    assert "native/toolchain.py" in manifest.split()
