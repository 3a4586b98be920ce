"""Small pieces of `ztsa exec` that stand in for stdlib helpers (not imported, to keep
every run's start-up short): they must behave as those do."""

from __future__ import annotations

import os
import shutil
import stat

from ztsa.sandbox.paths import find_program, private_dir, remove_tree


def test_remove_tree_never_follows_links(tmp_path):
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep.txt").write_text("keep")
    (outside / "sub").mkdir()
    (outside / "sub" / "keep2").write_text("keep")
    root = tmp_path / "private"
    (root / "home" / "deep" / "er").mkdir(parents=True)
    (root / "home" / "deep" / "er" / "f").write_text("x")
    (root / "tmp").mkdir()
    (root / "tmp" / "file").write_text("x")
    os.symlink(outside, root / "tmp" / "dirlink")
    os.symlink(outside / "keep.txt", root / "tmp" / "filelink")
    os.symlink(tmp_path / "nowhere", root / "home" / "dangling")
    os.mkfifo(root / "tmp" / "fifo")
    (root / "home" / "ro").mkdir()
    (root / "home" / "ro" / "f").write_text("x")
    os.chmod(root / "home" / "ro", 0o500)  # the owner (root or not) may still remove it
    remove_tree(str(root))
    assert not root.exists() or os.geteuid() != 0
    assert (outside / "keep.txt").read_text() == "keep"
    assert (outside / "sub" / "keep2").read_text() == "keep"
    if os.geteuid() == 0:
        assert not os.path.lexists(root)


def test_remove_tree_of_a_missing_path_is_quiet(tmp_path):
    remove_tree(str(tmp_path / "absent"))


def test_private_dir_is_new_private_and_unique(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    made = {private_dir() for _ in range(20)}
    assert len(made) == 20
    for path in made:
        assert os.path.dirname(path) == str(tmp_path)
        st = os.lstat(path)
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
        assert st.st_uid == os.geteuid()


def test_find_program_agrees_with_shutil_which(tmp_path, monkeypatch):
    a, b, c = tmp_path / "a", tmp_path / "b", tmp_path / "c"
    for d in (a, b, c):
        d.mkdir()
    (a / "tool").write_text("#!/bin/sh\n")  # not executable
    (b / "tool").mkdir()  # a directory
    (c / "tool").write_text("#!/bin/sh\n")
    os.chmod(c / "tool", 0o755)
    (c / "other").write_text("")
    os.chmod(c / "other", 0o755)
    monkeypatch.chdir(c)
    paths = [f"{a}:{b}:{c}", f"{a}:{b}", f"{a}::{b}", "", f"{c}", f"{b}:{c}:{a}"]
    for path in paths:
        for name in ("tool", "other", "absent", "sh"):
            assert find_program(name, path) == shutil.which(name, path=path), (name, path)
    assert find_program(str(c / "tool"), "") == str(c / "tool")
    assert find_program(str(c / "absent"), "") is None
