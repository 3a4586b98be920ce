"""The plan of agent-file protection: which paths get read-only mounts (the escape suite
checks what the kernel and the helper then refuse)."""

import os

import pytest

from ztsa.sandbox import protect


def test_existing_agent_files_are_mounted_absent_ones_are_not(tmp_path):
    (tmp_path / "CLAUDE.md").write_text("x")
    (tmp_path / ".claude").mkdir()
    (tmp_path / ".git" / "hooks").mkdir(parents=True)
    (tmp_path / "src").mkdir()
    plan = protect.plan(str(tmp_path), [])
    assert sorted(plan.ro_paths) == sorted(str(tmp_path / p) for p in
                                           ("CLAUDE.md", ".claude", ".git/hooks"))
    assert ".git/config" in plan.entries and "AGENTS.md" in plan.entries


def test_a_symlinked_agent_file_protects_its_target_and_a_dangling_one_nothing(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "rules.md").write_text("x")
    (tmp_path / "CLAUDE.md").symlink_to("docs/rules.md")
    (tmp_path / "AGENTS.md").symlink_to("missing.md")
    plan = protect.plan(str(tmp_path), [])
    assert plan.ro_paths == [str(tmp_path / "docs" / "rules.md")]


def test_other_hard_links_of_a_protected_file_are_mounted_too(tmp_path):
    (tmp_path / "CLAUDE.md").write_text("x")
    (tmp_path / "sub").mkdir()
    os.link(tmp_path / "CLAUDE.md", tmp_path / "sub" / "copy.md")
    plan = protect.plan(str(tmp_path), [])
    assert sorted(plan.ro_paths) == [str(tmp_path / "CLAUDE.md"),
                                     str(tmp_path / "sub" / "copy.md")]


def test_protect_paths_are_workspace_relative(tmp_path):
    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "CLAUDE.md").write_text("x")
    plan = protect.plan(str(tmp_path), ["docs/CLAUDE.md", "./docs/../x.md"])
    assert "docs/CLAUDE.md" in plan.entries and "x.md" in plan.entries
    assert str(tmp_path / "docs" / "CLAUDE.md") in plan.ro_paths


@pytest.mark.parametrize("bad", ["..", "../x", "/etc/passwd", "."])
def test_protect_outside_the_workspace_is_refused(tmp_path, bad):
    with pytest.raises(ValueError, match="not a path inside the workspace"):
        protect.normalise(str(tmp_path), bad)


def _ws(tmp_path):
    ws = tmp_path / "ws"
    for d in ("src/deep", ".git/objects", ".git/hooks", ".github/workflows", ".claude",
              "node_modules"):
        (ws / d).mkdir(parents=True)
    (ws / "README.md").write_text("x")
    (ws / "link").symlink_to("src")
    return ws


def test_names_are_made_below_the_chain_directories_never_in_them(tmp_path):
    ws = _ws(tmp_path)
    entries = protect.plan(str(ws), ["src/deep/CLAUDE.md"]).entries
    outside = tmp_path / "home"
    outside.mkdir()
    c = protect.creation(str(ws), entries, [str(ws), str(outside), "/dev/shm"])
    # the root, .git and .github hold protected paths; so do src and src/deep now
    assert sorted(c.chain) == ["", ".git", ".github", "src", "src/deep"]
    assert c.make is not None
    inside = sorted(os.path.relpath(p, ws) for p in c.make if p.startswith(str(ws)))
    # neither chain directories, nor protected ones (.claude, .git/hooks), nor the
    # symlink, nor plain files get a rule
    assert inside == [".git/objects", ".github/workflows", "node_modules"]
    assert str(outside) in c.make and "/dev/shm" in c.make and str(ws) not in c.make


def test_a_writable_root_around_the_workspace_is_granted_entry_by_entry(tmp_path):
    """A rule on a root that contains the workspace would grant the make rights in it
    too: the directories on the way down get none, their other directories do."""
    ws = _ws(tmp_path / "a" / "b")
    for d in ("a/sib", "a/b/other", "top"):
        (tmp_path / d).mkdir()
    (tmp_path / "a" / "file").write_text("x")
    (tmp_path / "a" / "lnk").symlink_to("sib")
    entries = protect.plan(str(ws), []).entries
    c = protect.creation(str(ws), entries, [str(tmp_path), str(ws), str(tmp_path / "a")])
    assert c.make is not None
    assert sorted(c.closed) == sorted(str(p) for p in (tmp_path, tmp_path / "a",
                                                       tmp_path / "a" / "b"))
    outside = sorted(p for p in c.make if not p.startswith(str(ws) + "/"))
    # no directory on the way, no file, no symlink; each other directory once
    assert outside == sorted(str(tmp_path / d) for d in ("a/b/other", "a/sib", "top"))
    assert not any(p == str(ws) or str(ws).startswith(p + "/") for p in c.make)
    assert {os.path.relpath(p, ws) for p in c.make if p.startswith(str(ws) + "/")} == {
        ".git/objects", ".github/workflows", "node_modules", "src"}
    # "/": every ancestor of the workspace is on the way
    c = protect.creation(str(ws), entries, ["/"], limit=10**6)
    assert c.make is not None and "/" in c.closed and str(tmp_path) in c.closed
    assert not any(p == str(ws) or str(ws).startswith(p + "/") for p in c.make)
    # too many entries on the way: no second ruleset rather than a partial one
    for i in range(5):
        (tmp_path / f"d{i}").mkdir()
    assert protect.creation(str(ws), entries, [str(tmp_path)], limit=4).make is None


def test_no_second_ruleset_where_it_cannot_be_exact(tmp_path):
    ws = _ws(tmp_path)
    entries = protect.plan(str(ws), []).entries
    # a chain directory that is a symlink leads the kernel somewhere the rules don't say
    (ws / ".github").rename(ws / "gh")
    (ws / ".github").symlink_to("gh")
    assert protect.creation(str(ws), entries, [str(ws)]).make is None


def test_own_installation_names_what_a_later_run_executes(tmp_path, monkeypatch):
    """ztsa in a venv in a writable place: the launcher (started through a link: the
    link and the file), the record of its interpreter beside it, the interpreter's
    names and links, both places of pyvenv.cfg, and in the venv's site-packages every
    name under which one of ztsa's imports could be found, whether or not it exists;
    nothing when the venv lies outside every writable place."""
    import importlib.machinery
    import sys

    venv = tmp_path / "ws" / ".venv"
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    site = venv / "lib" / version / "site-packages"
    site.mkdir(parents=True)
    (venv / "bin").mkdir()
    (venv / "pyvenv.cfg").write_text("home = /usr/bin\n")
    (venv / "bin" / "python3").symlink_to(sys.executable)
    (venv / "bin" / "python").symlink_to("python3")
    (venv / "bin" / "ztsa").write_text("#!/bin/sh\n")
    monkeypatch.setattr(sys, "executable", str(venv / "bin" / "python"))
    (tmp_path / "ws" / "links").mkdir()
    (tmp_path / "ws" / "links" / "ztsa").symlink_to(venv / "bin" / "ztsa")
    monkeypatch.setattr(sys, "argv", [str(tmp_path / "ws" / "links" / "ztsa"), "exec"])
    found = protect.own_installation([str(tmp_path / "ws")])
    assert str(tmp_path / "ws" / "links" / "ztsa") in found
    for rel in ("bin/ztsa", "bin/ztsa-interpreter", "bin/ztsa-ns", "bin/python", "bin/python3",
                "pyvenv.cfg", "bin/pyvenv.cfg"):
        assert str(venv / rel) in found, rel
    ext = importlib.machinery.EXTENSION_SUFFIXES[0]
    for name in ("ztsa", "yaml", "yaml.py", "cffi.pyc", f"_cffi_backend{ext}", "ptrace",
                 f"__pycache__/tomli.{sys.implementation.cache_tag}.pyc"):
        assert str(site / name) in found, name
    assert all(p.startswith(str(tmp_path / "ws") + "/") for p in found), found
    assert protect.own_installation([str(tmp_path / "elsewhere")]) == []


def test_a_link_the_tree_may_change_is_found_on_the_way(tmp_path):
    """Resolved as the kernel resolves it: a link outside the writable places (the
    person's own) is followed, one inside them is the answer, and a `..` after a link
    goes up from where the link led."""
    link_the_tree_may_change = protect.link_the_tree_may_change
    ws, outside = tmp_path / "ws", tmp_path / "outside"
    (ws / "real").mkdir(parents=True)
    (outside / "deep").mkdir(parents=True)
    os.symlink(outside / "deep", ws / "cache")
    os.symlink(ws, tmp_path / "ws-link")  # the person's own, outside the workspace
    os.symlink("loop", ws / "loop")
    writable = [str(ws)]
    assert link_the_tree_may_change(str(ws / "cache" / "x"), writable) == str(ws / "cache")
    assert link_the_tree_may_change(str(tmp_path / "ws-link" / "cache"), writable) == \
        str(ws / "cache")
    assert link_the_tree_may_change(str(tmp_path / "ws-link" / "real" / "x"), writable) is None
    assert link_the_tree_may_change(str(outside / "deep" / ".." / "x"), writable) is None
    assert link_the_tree_may_change(str(ws / "real" / ".." / "cache"), writable) == \
        str(ws / "cache")
    assert link_the_tree_may_change(str(ws / "loop"), writable) == str(ws / "loop")
