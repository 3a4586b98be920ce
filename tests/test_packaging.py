"""How ztsa is installed: the docs never install a package called ztsa from an index
(none is published yet, and a name in a security tool's own instructions is one anybody
can register), and a build without a C compiler or Python.h stops with one line."""

from __future__ import annotations

import importlib.util
import re
import runpy
import shlex
import sys
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parent.parent

# A command that installs (or runs) a package from an index, and what follows it on the
# line up to a shell separator or the end of inline code.
INSTALLER = re.compile(
    r"(?:\b(?:python3?\s+-m\s+)?pip3?\s+install|\bpipx\s+install|\buv\s+tool\s+install"
    r"|\buv\s+pip\s+install|\buv\s+add|\bpipx\s+run|\buv\s+tool\s+run|\buvx)"
    r"(?P<rest>[^`;&|#\n]*)")
RUNNERS = ("pipx run", "uv tool run", "uvx")
# A requirement naming the package ztsa (PEP 503: names compare case-insensitively, with
# runs of -, _ and . alike); never a path (./, /x/ztsa, ztsa-0.1.0.tar.gz) or a URL.
ZTSA = re.compile(r"ztsa\s*(\[[^\]]*\])?\s*((===?|[<>!~]=?)\s*[\w.*+!-]+\s*,?\s*)*(;.*)?"
                  r"|ztsa\s*(\[[^\]]*\])?\s*@.*", re.IGNORECASE)
# options of these commands that take a value (a file, a URL, a version, an interpreter)
VALUED = {"-r", "--requirement", "-c", "--constraint", "-i", "--index-url",
          "--extra-index-url", "-f", "--find-links", "--python", "-p", "--target", "-t",
          "--prefix", "--root", "--src", "--pip-args", "--with", "-w", "--spec",
          "--from", "--suffix", "--index", "--default-index", "--python-platform"}


def ztsa_installs(text: str) -> list[str]:
    """Each install (or run) command of `text` that takes ztsa from an index."""
    found = []
    for match in INSTALLER.finditer(text):
        try:
            words = shlex.split(match["rest"])
        except ValueError:
            words = match["rest"].split()
        runner = match[0].lstrip().startswith(RUNNERS)
        i = 0
        while i < len(words):
            word = words[i]
            if word in ("--from", "--spec") and i + 1 < len(words):
                if ZTSA.fullmatch(words[i + 1]):
                    found.append(match[0].strip())
                i += 2
                continue
            if word in VALUED:
                i += 2
                continue
            if not word.startswith("-"):
                if ZTSA.fullmatch(word):
                    found.append(match[0].strip())
                if runner:  # the rest are the run program's arguments
                    break
            i += 1
    return found


@pytest.mark.parametrize("line", [
    "pip install ztsa", "pip3 install -U ztsa", "python -m pip install --user ZTSA",
    "pipx install ztsa", "uv tool install ztsa", "uv pip install 'ztsa[trace]'",
    "`pip install 'ztsa[trace]'` for", "pip install ztsa==0.1.0", "pip install 'ztsa>=0.1'",
    "uvx ztsa check", "pipx run ztsa check", "uvx --from ztsa ztsa check",
    "pip install -r req.txt ztsa", "- run: pip install ztsa   # or: a clone",
])
def test_matcher_finds_an_index_install(line: str) -> None:
    assert ztsa_installs(line), line


@pytest.mark.parametrize("line", [
    "pip install .", "pipx install ./", "uv tool install ./", "pip install '.[test]'",
    "~/.venvs/ztsa/bin/pip install .", 'pip install "$RUNNER_TEMP/ztsa-src"',
    "pip install ./ztsa", "pip install /tmp/ztsa", "pip install dist/ztsa-0.1.0.tar.gz",
    "pip install git+https://github.com/OWNER/ztsa@v0.1.0", "uvx ruff check ztsa",
    "pip install ztsa-helper", "pip install --python ztsa other", "pip install && ztsa check",
])
def test_matcher_leaves_paths_and_other_packages(line: str) -> None:
    assert not ztsa_installs(line), line


def test_no_doc_installs_ztsa_from_an_index() -> None:
    docs = sorted(ROOT.glob("*.md")) + sorted((ROOT / "docs").glob("*.md"))
    assert ROOT / "README.md" in docs and ROOT / "docs" / "ci.md" in docs
    bad = [f"{path.relative_to(ROOT)}:{n}: {cmd}"
           for path in docs
           for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
           for cmd in ztsa_installs(line)]
    assert not bad, "install ztsa from its repository, not from an index:\n" + "\n".join(bad)


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


def _run_build_native(monkeypatch: pytest.MonkeyPatch, *argv: str) -> None:
    """native/build_native.py as cffi runs it for setup.py's command `argv`."""
    monkeypatch.setattr(sys, "argv", ["setup.py", *argv])
    monkeypatch.setenv("CC", "/nonexistent/cc")
    runpy.run_path(str(ROOT / "native" / "build_native.py"), run_name="__cffi__")


def test_build_stops_before_compiling(monkeypatch: pytest.MonkeyPatch) -> None:
    with pytest.raises(SystemExit) as stop:
        _run_build_native(monkeypatch, "bdist_wheel", "--dist-dir", "/tmp/x")
    assert str(stop.value.code).startswith("ztsa: building the native helper needs")
    assert "`/nonexistent/cc` not found" in str(stop.value.code)


def test_metadata_and_sdist_need_no_compiler(monkeypatch: pytest.MonkeyPatch) -> None:
    _run_build_native(monkeypatch, "egg_info")
    _run_build_native(monkeypatch, "sdist", "--dist-dir", "/tmp/x")
