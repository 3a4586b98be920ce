"""Small pieces of `ztsa exec` that stand in for stdlib helpers (not imported, to keep
every run's start-up short): they must behave as those do."""

from __future__ import annotations

import os
import shutil
import stat

from ztsa.sandbox.paths import find_program, private_dir, reap_stale, remove_tree


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


def test_remove_tree_shortcut_for_empty_directories_follows_no_link(tmp_path):
    """Empty HOME and TMPDIR go in three rmdir calls; a link to a directory in their
    place (empty, so the shortcut would otherwise apply) is removed, its target kept."""
    root = tmp_path / "private"
    (root / "home").mkdir(parents=True)
    (root / "tmp").mkdir()
    remove_tree(str(root))
    assert not os.path.lexists(root)
    target = tmp_path / "target"
    (target / "empty").mkdir(parents=True)
    (root / "home").mkdir(parents=True)
    os.symlink(target / "empty", root / "tmp")
    remove_tree(str(root))
    assert not os.path.lexists(root)
    assert (target / "empty").is_dir()


def test_remove_tree_of_any_depth_and_width(tmp_path):
    """A tree can nest its directories far deeper than Python's recursion limit or the
    descriptor limit (helper-1: 1,200 levels made every later run of the user exit 125),
    and make them wide: all go, with no descriptor left open."""
    root = tmp_path / "private"
    (root / "tmp").mkdir(parents=True)
    fd = os.open(root / "tmp", os.O_RDONLY | os.O_DIRECTORY)
    for i in range(3000):  # by descriptor: the path outgrows PATH_MAX
        os.mkdir("d", dir_fd=fd)
        if i % 500 == 0:
            with open(os.open("f", os.O_WRONLY | os.O_CREAT, dir_fd=fd), "w") as f:
                f.write("x")
        sub = os.open("d", os.O_RDONLY | os.O_DIRECTORY, dir_fd=fd)
        os.close(fd)
        fd = sub
    os.close(fd)
    for i in range(2000):
        (root / "home" / f"w{i}").mkdir(parents=True)
        (root / "home" / f"w{i}" / "f").write_text("x")
    (root / "home" / "locked" / "in").mkdir(parents=True)
    (root / "home" / "locked" / "in" / "f").write_text("x")
    os.chmod(root / "home" / "locked" / "in", 0)
    os.chmod(root / "home" / "locked", 0)
    # another test's objects that the collector finalises meanwhile close theirs (a
    # worker process runs many tests): settle them first, then judge only new ones
    import gc

    gc.collect()
    open_before = set(os.listdir("/proc/self/fd"))
    remove_tree(str(root))
    assert not os.path.lexists(root)
    assert set(os.listdir("/proc/self/fd")) <= open_before


def test_remove_tree_of_a_missing_path_is_quiet(tmp_path):
    remove_tree(str(tmp_path / "absent"))


def test_private_dir_is_new_private_and_unique(tmp_path, monkeypatch):
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    made = [private_dir() for _ in range(20)]
    assert len({path for path, _ in made}) == 20
    base = tmp_path / f"ztsa-{os.geteuid()}"  # the user's own, hidden from every run
    st = os.lstat(base)
    assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
    for path, fd in made:
        assert os.path.dirname(path) == str(base)
        assert os.path.basename(path).startswith(f"ztsa-run-{os.getpid()}-")
        st = os.lstat(path)
        assert stat.S_ISDIR(st.st_mode) and stat.S_IMODE(st.st_mode) == 0o700
        assert st.st_uid == os.geteuid()
        assert os.path.samestat(os.fstat(fd), st)
        os.close(fd)
    kept, fd = private_dir(reapable=False)
    os.close(fd)
    assert os.path.basename(kept).count("-") == 2  # no process ID: never reaped


def test_the_private_base_is_never_another_users_or_a_link(tmp_path, monkeypatch):
    """A name held by someone else (here a link to a directory of the caller's own, and a
    directory of another user) is never used: this run gets a new directory of its own;
    a base of the user's own that was opened up is closed again."""
    monkeypatch.setenv("TMPDIR", str(tmp_path))
    base = tmp_path / f"ztsa-{os.geteuid()}"
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    base.symlink_to(elsewhere)
    path, fd = private_dir()
    os.close(fd)
    parent = os.path.dirname(path)
    assert parent != str(base) and not os.path.islink(parent)
    assert os.path.basename(parent).startswith(f"ztsa-{os.geteuid()}-")
    st = os.lstat(parent)
    assert stat.S_IMODE(st.st_mode) == 0o700 and st.st_uid == os.geteuid()
    assert list(elsewhere.iterdir()) == []
    base.unlink()
    if os.geteuid() == 0:
        base.mkdir()
        os.chown(base, 65534, 65534)
        path, fd = private_dir()
        os.close(fd)
        assert os.path.dirname(path) != str(base) and list(base.iterdir()) == []
        base.rmdir()
    base.mkdir(mode=0o755)
    os.chmod(base, 0o755)
    path, fd = private_dir()
    os.close(fd)
    assert os.path.dirname(path) == str(base)
    assert stat.S_IMODE(os.lstat(base).st_mode) == 0o700


def _dead_pid() -> int:
    pid = os.fork()
    if pid == 0:
        os._exit(0)
    os.waitpid(pid, 0)
    return pid


def _stale(base, name: str):
    d = base / name
    (d / "home" / ".cache").mkdir(parents=True)
    (d / "home" / ".cache" / "f").write_text("x")
    (d / "tmp").mkdir()
    return d


def test_reap_stale_removes_only_the_dirs_of_dead_unlocked_runs(tmp_path):
    import fcntl
    import subprocess
    import sys

    dead = _dead_pid()
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "keep").write_text("keep")
    base = tmp_path / "tmp"
    base.mkdir()
    gone = _stale(base, f"ztsa-run-{dead}-aaaaaaaaaaaa")
    os.symlink(outside, gone / "tmp" / "link")  # never followed
    alive = _stale(base, f"ztsa-run-{os.getpid()}-bbbbbbbbbbbb")
    old_style = _stale(base, "ztsa-run-cccccccccccc")  # an older ztsa's, or --keep-tmp
    locked = _stale(base, f"ztsa-run-{dead}-dddddddddddd")
    os.symlink(outside, base / f"ztsa-run-{dead}-eeeeeeeeeeee")
    other = base / f"ztsa-run-{dead}-ffffffffffff"
    if os.geteuid() == 0:
        other.mkdir()
        os.chown(other, 65534, 65534)  # someone else's
    (base / f"ztsa-run-{dead}-notadir").write_text("x")
    # a run in another PID namespace: its ID is not alive here, but it holds its lock
    holder = subprocess.Popen(
        [sys.executable, "-c",
         "import fcntl, os, sys, time\n"
         f"fd = os.open({str(locked)!r}, os.O_RDONLY)\n"
         "fcntl.flock(fd, fcntl.LOCK_EX)\n"
         "print('locked', flush=True)\n"
         "time.sleep(60)\n"], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "locked"
        removed = reap_stale(str(base))
    finally:
        holder.kill()
        holder.wait()
    assert removed == [str(gone)]
    assert not os.path.lexists(gone)
    for d in (alive, old_style, locked, base / f"ztsa-run-{dead}-notadir"):
        assert d.exists(), d
    assert os.path.islink(base / f"ztsa-run-{dead}-eeeeeeeeeeee")
    assert (outside / "keep").read_text() == "keep"
    assert other.exists() or os.geteuid() != 0
    # the lock released: the next run reaps it
    assert reap_stale(str(base)) == [str(locked)]
    fd = os.open(alive, os.O_RDONLY)
    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # nothing else holds it
    os.close(fd)


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


def test_remove_tree_empties_what_the_tree_made_unreadable():
    """The tree owns its TMPDIR: chmod 000 on a directory there stopped the cleanup of
    an unprivileged ztsa (root is not stopped by it). Run unprivileged where we are
    root, so that the access checks are real."""
    import pickle
    import tempfile
    from pathlib import Path

    top = Path(tempfile.mkdtemp(prefix="ztsa-test-"))  # world-traversable, unlike tmp_path
    os.chmod(top, 0o755)
    try:
        base = top / "base"
        base.mkdir()
        outside = top / "outside"
        outside.mkdir()
        (outside / "keep").write_text("keep")
        os.chmod(outside, 0o777)
        rfd, wfd = os.pipe()
        pid = os.fork()
        if pid == 0:
            result: object = "not run"
            try:
                os.close(rfd)
                if os.geteuid() == 0:
                    os.chown(base, 65534, 65534)
                    os.setgroups([])
                    os.setresgid(65534, 65534, 65534)
                    os.setresuid(65534, 65534, 65534)
                root = base / "private"
                (root / "tmp" / "locked" / "deeper").mkdir(parents=True)
                (root / "tmp" / "locked" / "deeper" / "f").write_text("x")
                (root / "tmp" / "locked" / "f").write_text("x")
                os.symlink(outside, root / "tmp" / "locked" / "link")
                os.chmod(root / "tmp" / "locked" / "deeper", 0)
                os.chmod(root / "tmp" / "locked", 0)
                os.chmod(root / "tmp", 0o100)  # searchable, not listable
                remove_tree(str(root))
                result = os.path.lexists(root)
            except BaseException as exc:  # reported to the parent
                result = repr(exc)
            finally:
                with os.fdopen(wfd, "wb") as w:
                    w.write(pickle.dumps(result))
                os._exit(0)
        os.close(wfd)
        with os.fdopen(rfd, "rb") as r:
            left = pickle.loads(r.read())
        os.waitpid(pid, 0)
        assert left is False
        assert (outside / "keep").read_text() == "keep"
        assert stat.S_IMODE(os.stat(outside).st_mode) == 0o777  # no link is followed
    finally:
        shutil.rmtree(top, ignore_errors=True)
