"""The bytecode audit without a sandbox: what the walk names, what is judged changed,
what is removed, moved aside or named (integration/escapes/test_bytecode.py judges the
effect, with the real interpreter, after real runs)."""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

from ztsa import gitlayout
from ztsa.sandbox import bytecode, gitguard

TAG = sys.implementation.cache_tag


def make_venv(ws: Path) -> Path:
    site = ws / ".venv" / "lib" / "python3.11" / "site-packages"
    site.mkdir(parents=True)
    (ws / ".venv" / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (ws / ".venv" / "bin").mkdir()
    (ws / ".venv" / "bin" / "python").symlink_to("/usr/bin/python3")
    return site


def audit(ws: Path, was: bytecode.Before, keep_pth: bool = False) -> bytecode.Result:
    return bytecode.audit(str(ws), was, gitlayout.find(str(ws)), "r1", keep_pth)


def test_the_walk_names_cache_entries_and_venvs(tmp_path):
    (tmp_path / "pkg" / "__pycache__" / "deeper").mkdir(parents=True)
    (tmp_path / "pkg" / "__pycache__" / f"m.{TAG}.pyc").write_bytes(b"x")
    (tmp_path / "pkg" / "__pycache__" / "deeper" / "n.pyc").write_bytes(b"x")
    (tmp_path / "odd").mkdir()
    (tmp_path / "odd" / "__pycache__").symlink_to("/tmp")
    iseq = tmp_path / "tmp" / "cache" / "bootsnap" / "compile-cache-iseq" / "ab"
    iseq.mkdir(parents=True)
    (iseq / "cdef").write_bytes(b"x")
    (iseq.parent.parent / "load-path-cache").write_bytes(b"x")
    (tmp_path / "node_modules" / "x" / "bootsnap").mkdir(parents=True)
    (tmp_path / "node_modules" / "x" / "bootsnap" / "lib.rb").write_text("")
    make_venv(tmp_path / "node_modules" / "deep")
    layout = gitlayout.find(str(tmp_path))
    assert sorted(os.path.relpath(p, tmp_path) for p in layout.caches) == [
        "odd/__pycache__", f"pkg/__pycache__/m.{TAG}.pyc",
        "tmp/cache/bootsnap/compile-cache-iseq/ab/cdef", "tmp/cache/bootsnap/load-path-cache"]
    assert layout.venvs == (str(tmp_path / "node_modules" / "deep" / ".venv"),)


def test_pth_lines_and_what_they_import():
    code, paths = bytecode.pth_lines(
        b"# a comment\n/abs/dir\nrel\nimport os; __import__('_hack').add()\n"
        b"import\tfoo.bar, baz\nimportant\n  import not_code\n")
    assert code == ["import os; __import__('_hack').add()", "import\tfoo.bar, baz"]
    assert paths == ["/abs/dir", "rel", "important", "  import not_code"]
    assert bytecode.imported(code) == ["os", "_hack", "foo.bar", "baz"]


def test_only_what_the_run_wrote_or_changed_is_removed(tmp_path):
    cache = tmp_path / "__pycache__"
    cache.mkdir()
    for name in ("kept", "rewritten", "touched"):
        (cache / f"{name}.{TAG}.pyc").write_bytes(b"old")
    was = bytecode.before(gitlayout.find(str(tmp_path)))
    (cache / f"rewritten.{TAG}.pyc").write_bytes(b"new")
    st = os.stat(cache / f"touched.{TAG}.pyc")
    os.utime(cache / f"touched.{TAG}.pyc", ns=(st.st_atime_ns, st.st_mtime_ns))  # ctime
    (cache / f"new.{TAG}.pyc").write_bytes(b"new")
    os.chmod(cache, 0o555)  # the tree takes write permission away: given back for it
    try:
        result = audit(tmp_path, was)
        mode = os.stat(cache).st_mode & 0o777
    finally:
        os.chmod(cache, 0o755)
    assert sorted(result.removed) == [f"__pycache__/{n}.{TAG}.pyc"
                                      for n in ("new", "rewritten", "touched")]
    assert result.moved == [] and result.reported == []
    assert os.listdir(cache) == [f"kept.{TAG}.pyc"]
    assert mode == 0o555  # closed again


def test_the_venvs_start_up(tmp_path):
    site = make_venv(tmp_path)
    (site / "hook.pth").write_text("import hookmod\n")
    (site / "hookmod.py").write_text("")
    (site / "old.pth").write_text("import os\n")
    was = bytecode.before(gitlayout.find(str(tmp_path)))
    (site / "hookmod.py").write_text("evil()\n")
    (site / "evil.pth").write_text("import os; os.system('x')\n")
    (site / "paths.pth").write_text("/somewhere\n")
    (site / "sitecustomize").mkdir()
    (site / "sitecustomize" / "__init__.py").write_text("evil()\n")
    (tmp_path / ".venv" / "bin" / "python").unlink()
    (tmp_path / ".venv" / "bin" / "python").write_text("#!/bin/sh\nevil\n")
    result = audit(tmp_path, was)
    s = ".venv/lib/python3.11/site-packages"
    assert [(m.path, m.error) for m in result.moved] == [
        (f"{s}/evil.pth", ""), (f"{s}/hook.pth", ""), (f"{s}/sitecustomize", "")]
    assert "hookmod.py" in result.moved[1].reason
    assert result.moved[0].runs == "import os; os.system('x')"
    assert [(r.path, r.kind, r.new) for r in result.reported] == [
        (".venv/bin/python", "interpreter", False), (f"{s}/paths.pth", "pth", True)]
    assert "'#!/bin/sh'" in result.reported[0].runs
    assert sorted(os.listdir(site)) == ["hookmod.py", "old.pth", "paths.pth"]
    manifest = json.loads(next((tmp_path / gitguard.QUARANTINE).iterdir()).joinpath(
        "manifest.json").read_text())
    assert [m["path"] for m in manifest] == [m.path for m in result.moved]


def test_keep_pth_keeps_only_what_a_record_of_the_run_lists(tmp_path):
    site = make_venv(tmp_path)
    (site / "old-1.0.dist-info").mkdir()
    (site / "old-1.0.dist-info" / "RECORD").write_text("forged.pth,,\n")
    was = bytecode.before(gitlayout.find(str(tmp_path)))
    (site / "pkg-1.0.dist-info").mkdir()
    (site / "pkg-1.0.dist-info" / "RECORD").write_text("pkg.pth,sha256=x,10\n")
    for name in ("pkg", "orphan", "forged"):  # forged: only an old RECORD lists it
        (site / f"{name}.pth").write_text("import os\n")
    result = audit(tmp_path, was, keep_pth=True)
    assert [m.path.rsplit("/", 1)[1] for m in result.moved] == ["forged.pth", "orphan.pth"]
    assert [r.path.rsplit("/", 1)[1] for r in result.reported] == ["pkg.pth"]
    assert "pkg-1.0" in result.reported[0].reason


def test_a_new_venv_is_named_whole(tmp_path):
    was = bytecode.before(gitlayout.find(str(tmp_path)))
    site = make_venv(tmp_path)
    (site / "a.pth").write_text("/x\n")
    result = audit(tmp_path, was)
    assert result.moved == []
    assert {(r.kind, r.new) for r in result.reported} == {
        ("config", True), ("interpreter", True), ("pth", True)}
    assert all(r.venv == ".venv" for r in result.reported)


def test_a_failure_is_a_result_not_an_exception(tmp_path):
    was = bytecode.Before({}, {}, {})
    result = bytecode.audit(str(tmp_path / "gone"), was, None, "r1")
    assert result.moved and result.moved[0].error


EXT = "m.cpython-311-x86_64-linux-gnu.so"


def test_the_walk_names_loose_code(tmp_path):
    ws = tmp_path / "site-packages" / "ws"  # a workspace beneath such a name: still seen
    for rel in ("json.pyc", f"pkg/{EXT}", "src/sitecustomize.py", "usercustomize.so",
                "src/sitecustomize/__init__.py", "lib/site-packages/sitecustomize.py",
                "lib/site-packages/numpy/x.so", "lib/dist-packages/y.pyc", "notes.txt",
                f"__pycache__/m.{TAG}.pyc", "libfoo.so.1"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_bytes(b"x")
    (ws / "src" / "sitecustomize" / "__pycache__").mkdir()
    layout = gitlayout.find(str(ws))
    assert sorted(os.path.relpath(p, ws) for p in layout.loose) == [
        "json.pyc", "lib/site-packages/sitecustomize.py", f"pkg/{EXT}",
        "src/sitecustomize", "src/sitecustomize.py", "src/sitecustomize/__init__.py",
        "usercustomize.so"]


def test_loose_code_the_run_made(tmp_path):
    (tmp_path / "app.py").write_text("")
    (tmp_path / "old.pyc").write_bytes(b"kept")
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "src").mkdir()
    (tmp_path / "ns").mkdir()  # a namespace package: an extension module comes first
    (tmp_path / "tool").write_text("#!/bin/sh\n")  # a script, no module
    was = bytecode.before(gitlayout.find(str(tmp_path)))
    for rel in ("json.pyc", "app.so", "select.abi3.so", f"pkg/{EXT}", "pkg/select.so",
                "libfoo-1.so", "a.b.c.so", "src/sitecustomize.pyc", "ns.so", "tool.so"):
        (tmp_path / rel).write_bytes(b"\x7fELF" if rel.endswith(".so") else b"x")
    result = audit(tmp_path, was)
    moved = {m.path: m for m in result.moved}
    assert sorted(moved) == ["app.so", "json.pyc", "ns.so", "select.abi3.so",
                             "src/sitecustomize.pyc"]
    assert all(not m.error and m.moved_to for m in moved.values())
    assert "app.py beside it" in moved["app.so"].reason
    assert "standard library's select" in moved["select.abi3.so"].reason
    assert "the package ns/ beside it" in moved["ns.so"].reason
    assert moved["json.pyc"].runs == "Python bytecode (1 bytes)"
    # in a package, shadowing nothing: a build's, kept and named
    assert [(r.path, r.kind, r.new) for r in result.reported] == [
        (f"pkg/{EXT}", "extension", True), ("pkg/select.so", "extension", True),
        ("tool.so", "extension", True)]
    assert result.reported[0].runs == "native code (4 bytes)"
    assert (tmp_path / "old.pyc").exists() and (tmp_path / "libfoo-1.so").exists()
    # a second run that changes nothing: nothing more
    again = audit(tmp_path, bytecode.before(gitlayout.find(str(tmp_path))))
    assert again.moved == [] and again.reported == []


def test_a_new_sitecustomize_package_goes_whole(tmp_path):
    (tmp_path / "src" / "usercustomize").mkdir(parents=True)
    (tmp_path / "src" / "usercustomize" / "__init__.py").write_text("")
    was = bytecode.before(gitlayout.find(str(tmp_path)))
    (tmp_path / "src" / "sitecustomize").mkdir()
    (tmp_path / "src" / "sitecustomize" / "__init__.py").write_text("evil()\n")
    (tmp_path / "src" / "usercustomize" / "__pycache__").mkdir()  # an import made it
    result = audit(tmp_path, was)
    assert [m.path for m in result.moved] == ["src/sitecustomize"]
    assert (tmp_path / "src" / "usercustomize" / "__init__.py").exists()


def test_a_venvs_new_programs(tmp_path, monkeypatch):
    site = make_venv(tmp_path)
    path = tmp_path / "path"
    path.mkdir()
    for name in ("git", "ls"):
        (path / name).write_text("#!/bin/sh\n")
        (path / name).chmod(0o755)
    monkeypatch.setenv("PATH", str(path))
    bin_ = tmp_path / ".venv" / "bin"
    (bin_ / "old").write_text("#!/bin/sh\n")
    was = bytecode.before(gitlayout.find(str(tmp_path)))
    (site / "tool-1.0.dist-info").mkdir()
    (site / "tool-1.0.dist-info" / "RECORD").write_text(
        "../../../bin/tool,,\n../../../bin/ls,,\ntool-1.0.dist-info/RECORD,,\n")
    for name in ("tool", "ls", "git", "make"):
        (bin_ / name).write_text("#!/bin/sh\nevil\n")
        (bin_ / name).chmod(0o755)
    (bin_ / "deactivate.bat").write_text("@echo off\n")  # uv's: nothing PATH runs
    (bin_ / "sub").mkdir()
    result = audit(tmp_path, was)
    assert [m.path for m in result.moved] == [".venv/bin/git", ".venv/bin/make"]
    assert f"in place of {path}/git" in result.moved[0].reason
    assert "no RECORD the run wrote lists" in result.moved[1].reason
    programs = [r for r in result.reported if r.kind == "program"]
    assert [(r.path, r.venv) for r in programs] == [(".venv/bin/ls", ".venv")]
    assert "tool-1.0" in programs[0].reason and f"{path}/ls" in programs[0].reason
    assert sorted(os.listdir(bin_)) == ["deactivate.bat", "ls", "old", "python", "sub",
                                        "tool"]


def test_the_submodule_a_pth_imports(tmp_path):
    site = make_venv(tmp_path)
    (site / "boot.pth").write_text("import bootpkg.start.deep\n")
    for rel in ("bootpkg/__init__.py", "bootpkg/other.py", "bootpkg/start/__init__.py",
                "bootpkg/start/deep.py", "bootpkg/start/side.py"):
        (site / rel).parent.mkdir(parents=True, exist_ok=True)
        (site / rel).write_text("")
    was = bytecode.before(gitlayout.find(str(tmp_path)))
    (site / "bootpkg" / "other.py").write_text("# not imported at start\n")
    (site / "bootpkg" / "start" / "side.py").write_text("# nor this\n")
    assert audit(tmp_path, was).moved == []
    was = bytecode.before(gitlayout.find(str(tmp_path)))
    (site / "bootpkg" / "start" / "deep.py").write_text("evil()\n")
    result = audit(tmp_path, was)
    assert [m.path.rsplit("/", 1)[1] for m in result.moved] == ["boot.pth"]
    assert "bootpkg/start/deep.py" in result.moved[0].reason


def test_an_extension_module_in_place_of_an_installed_one(tmp_path):
    site = make_venv(tmp_path)
    (site / "fakemod").mkdir()  # installed in the workspace venv
    (site / "fakemod" / "__init__.py").write_text("")
    (tmp_path / "vendor").mkdir()
    was = bytecode.before(gitlayout.find(str(tmp_path)))
    (tmp_path / "fakemod.abi3.so").write_bytes(b"\x7fELF")
    (tmp_path / "vendor" / "fakemod.abi3.so").write_bytes(b"\x7fELF")
    info = tmp_path / "vendor" / "fakemod-1.0.dist-info"  # pip install --target vendor
    info.mkdir()
    (info / "RECORD").write_text("fakemod.abi3.so,,\nfakemod-1.0.dist-info/RECORD,,\n")
    result = audit(tmp_path, was)
    assert [m.path for m in result.moved] == ["fakemod.abi3.so"]
    assert "the installed fakemod" in result.moved[0].reason
    assert [r.path for r in result.reported] == ["vendor/fakemod.abi3.so"]
    assert "RECORD of fakemod-1.0" in result.reported[0].reason


def test_the_walk_names_direnvs_and_devenvs_layout(tmp_path):
    """Every entry but a directory beneath .direnv and .devenv (and such a name that is
    a link), at any depth; not devenv's state/ (its services' data), nor what a venv
    there holds but its bin/ (less its interpreters)."""
    d = tmp_path / "pkg" / ".direnv"
    (d / "flake-inputs").mkdir(parents=True)
    (d / "flake-profile.rc").write_text("export X=1\n")
    (d / "flake-profile").symlink_to("/usr")
    (d / "flake-inputs" / "abc-source").symlink_to("/usr")
    site = make_venv(d / "python-3.11")
    (site / "pkg.py").write_text("")
    venv = d / "python-3.11" / ".venv"  # make_venv's own name: a venv there
    (venv / "bin" / "git").write_text("#!/bin/sh\n")
    (venv / "bin" / "activate").write_text("")
    dev = tmp_path / ".devenv"
    (dev / "state" / "postgres").mkdir(parents=True)
    (dev / "state" / "postgres" / "PG_VERSION").write_text("16\n")
    (dev / "nix-eval-cache.db").write_bytes(b"x")
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / ".direnv").symlink_to("/tmp")
    (tmp_path / ".direnvrc").write_text("")  # not the layout directory
    layout = gitlayout.find(str(tmp_path))
    assert sorted(os.path.relpath(p, tmp_path) for p in layout.caches) == [
        ".devenv/nix-eval-cache.db", "other/.direnv", "pkg/.direnv/flake-inputs/abc-source",
        "pkg/.direnv/flake-profile", "pkg/.direnv/flake-profile.rc",
        "pkg/.direnv/python-3.11/.venv/bin/activate", "pkg/.direnv/python-3.11/.venv/bin/git"]
    assert layout.venvs == (str(venv),)


def test_a_pyvenv_cfg_keeps_only_site_packages_in_a_layout(tmp_path):
    """A pyvenv.cfg the tree adds to direnv's perl layout does not make its modules
    (PERL5LIB comes first) anything but cache entries."""
    perl = tmp_path / ".direnv" / "perl5"
    (perl / "lib" / "perl5").mkdir(parents=True)
    (perl / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (perl / "lib" / "perl5" / "strict.pm").write_text("1;\n")
    (perl / "lib" / "python3.11" / "site-packages").mkdir(parents=True)
    (perl / "lib" / "python3.11" / "site-packages" / "x.py").write_text("")
    layout = gitlayout.find(str(tmp_path))
    assert [os.path.relpath(p, tmp_path) for p in layout.caches] == [
        ".direnv/perl5/lib/perl5/strict.pm"]
