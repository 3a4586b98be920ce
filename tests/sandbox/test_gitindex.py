"""The index audit without a sandbox, on real repositories and real git: which bits are
the run's, what is cleared, which entries' stat data is reset (forged by hand as a tree
would), that an unchanged index costs no git process, and what a failure says
(integration/escapes/test_hidden_review.py, test_redteam_later.py and
test_redteam_two.py judge the effect after real runs)."""

from __future__ import annotations

import os
import shutil
import struct
import subprocess
from pathlib import Path

import pytest

from ztsa import gitlayout
from ztsa.sandbox import gitindex

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
ENV = {**os.environ, "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
       "GIT_AUTHOR_NAME": "a", "GIT_AUTHOR_EMAIL": "a@a", "GIT_COMMITTER_NAME": "a",
       "GIT_COMMITTER_EMAIL": "a@a"}


def git(ws: Path, *args: str) -> str:
    return subprocess.run(["git", *args], cwd=ws, env=ENV, check=True, capture_output=True,
                          text=True).stdout


def tags(ws: Path) -> dict[str, str]:
    return {r[2:]: r[0] for r in git(ws, "ls-files", "-v", "-z").split("\0") if r}


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    for name in ("a.py", "b.py", "docs/c.md", "mine.cfg"):
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_text("x\n")
    git(tmp_path, "init", "-q", "-b", "main")
    git(tmp_path, "add", "-A")
    git(tmp_path, "commit", "-q", "-m", "base")
    git(tmp_path, "update-index", "--assume-unchanged", "mine.cfg")  # the person's
    return tmp_path


def forge(ws: Path, name: str) -> None:
    """What a tree does by hand: write the file's stat data now into NAME's entry (its
    blob unchanged), in a version 2 index, with the checksum recomputed, a second
    later (an entry as new as its index is racy: git would read the file anyway)."""
    import hashlib
    import time

    time.sleep(1.05)
    data = bytearray((ws / ".git" / "index").read_bytes())
    assert data[:4] == b"DIRC" and struct.unpack(">I", data[4:8])[0] == 2
    off = 12
    for _ in range(struct.unpack(">I", data[8:12])[0]):
        (flags,) = struct.unpack(">H", data[off + 60:off + 62])
        size = 62 + (flags & 0xfff) + (2 if flags & 0x4000 else 0)
        if bytes(data[off + size - (flags & 0xfff):off + size]) == name.encode():
            st = os.stat(ws / name)
            struct.pack_into(">4I", data, off, int(st.st_ctime), st.st_ctime_ns % 10**9,
                             int(st.st_mtime), st.st_mtime_ns % 10**9)
            struct.pack_into(">I", data, off + 20, st.st_ino & 0xFFFFFFFF)
            struct.pack_into(">I", data, off + 36, st.st_size)
        off += (size + 8) & ~7
    body = bytes(data[:-20])
    (ws / ".git" / "index").write_bytes(body + hashlib.sha1(body).digest())


def status(ws: Path) -> str:
    return git(ws, "status", "--porcelain", "--untracked-files=no")


def audit(ws: Path, was: gitindex.Before) -> list[gitindex.Cleared]:
    return gitindex.audit(str(ws), was, gitlayout.find(str(ws)))


def before(ws: Path) -> gitindex.Before:
    return gitindex.before(str(ws), gitlayout.find(str(ws)))


def test_the_bits_the_run_set_are_cleared_and_the_persons_stay(ws):
    was = before(ws)
    git(ws, "update-index", "--assume-unchanged", "a.py")
    git(ws, "update-index", "--skip-worktree", "b.py")
    git(ws, "update-index", "--skip-worktree", "docs/c.md")
    os.unlink(ws / "docs" / "c.md")  # what a sparse checkout does: nothing to hide
    got = audit(ws, was)
    assert sorted((c.path, c.flag, c.repository, c.error) for c in got) == [
        ("a.py", gitindex.ASSUME, ".", ""), ("b.py", gitindex.SKIP, ".", "")]
    assert tags(ws) == {"a.py": "H", "b.py": "H", "docs/c.md": "S", "mine.cfg": "h"}


def test_an_unchanged_index_runs_no_git(ws, monkeypatch):
    was = before(ws)
    monkeypatch.setattr(shutil, "which", lambda *_a, **_k: pytest.fail("git ran"))
    assert audit(ws, was) == []


def test_a_nested_repository_and_a_new_index(ws):
    sub = ws / "sub"
    sub.mkdir()
    (sub / "s.py").write_text("x\n")
    git(sub, "init", "-q")
    was = before(ws)  # sub has no index yet
    git(sub, "add", "s.py")
    git(sub, "update-index", "--assume-unchanged", "s.py")
    got = audit(ws, was)
    assert [(c.path, c.flag, c.repository) for c in got] == [
        ("sub/s.py", gitindex.ASSUME, "sub"), ("sub/s.py", gitindex.STAT, "sub")]
    assert tags(sub) == {"s.py": "H"}


def test_a_lock_left_behind_is_an_error(ws):
    was = before(ws)
    git(ws, "update-index", "--assume-unchanged", "a.py")
    (ws / ".git" / "index.lock").write_text("")
    got = audit(ws, was)
    assert [(c.path, c.flag) for c in got] == [("a.py", gitindex.ASSUME)]
    assert got[0].error
    assert tags(ws)["a.py"] == "h"


def test_an_index_git_cannot_read_is_an_error(ws):
    was = before(ws)
    (ws / ".git" / "index").write_bytes(b"DIRC garbage")
    got = audit(ws, was)
    assert len(got) == 1 and got[0].error and got[0].path == ".git/index"


def test_no_hook_runs(ws, tmp_path_factory):
    marker = tmp_path_factory.mktemp("m") / "ran"
    hook = ws / ".git" / "hooks" / "post-index-change"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)
    was = before(ws)
    subprocess.run(["git", "-c", "core.hooksPath=/dev/null", "update-index",
                    "--assume-unchanged", "a.py"], cwd=ws, env=ENV, check=True)
    got = audit(ws, was)
    assert [(c.path, c.error) for c in got] == [("a.py", "")]
    assert not marker.exists()


def edit_later(ws: Path, name: str, text: str) -> None:
    """Change NAME a second after its entry was written (a new mtime)."""
    import time

    time.sleep(1.05)
    with open(ws / name, "a") as f:
        f.write(text)


def test_stat_data_the_run_forged_is_reset(ws):
    was = before(ws)
    edit_later(ws, "a.py", "import evil\n")
    forge(ws, "a.py")
    assert status(ws) == ""  # the escape: git trusts the stat data
    got = audit(ws, was)
    assert [(c.path, c.flag, c.repository, c.error) for c in got] == [
        ("a.py", gitindex.STAT, ".", "")]
    assert status(ws) == " M a.py\n"
    assert tags(ws) == {"a.py": "H", "b.py": "H", "docs/c.md": "H", "mine.cfg": "h"}


def test_a_staged_entry_with_forged_stat_data_shows_its_later_change(ws):
    """`git add` stages a harmless version, the file then changes under stat data that
    vouches for it: `git diff --cached` alone would review the harmless one."""
    was = before(ws)
    edit_later(ws, "a.py", "harmless\n")
    git(ws, "add", "a.py")
    edit_later(ws, "a.py", "import evil\n")
    forge(ws, "a.py")
    assert status(ws) == "M  a.py\n"
    assert [(c.path, c.flag) for c in audit(ws, was)] == [("a.py", gitindex.STAT)]
    assert status(ws) == "MM a.py\n"


def test_a_refresh_by_git_is_reset_harmlessly(ws):
    """The person's `git status` during the run refreshes stat data: reset, git reads
    the file once more and finds it the same."""
    was = before(ws)
    edit_later(ws, "b.py", "")
    os.utime(ws / "b.py")  # the same content, a new mtime
    assert status(ws) == ""  # git refreshes b.py's entry
    got = audit(ws, was)
    assert [(c.path, c.flag, c.error) for c in got] == [("b.py", gitindex.STAT, "")]
    assert status(ws) == ""


def test_the_persons_bits_intent_to_add_and_conflicts_are_not_reset(ws):
    was = before(ws)
    edit_later(ws, "mine.cfg", "mine\n")  # the person's assume-unchanged: git looks not
    forge(ws, "mine.cfg")
    (ws / "new.py").write_text("x\n")
    git(ws, "add", "-N", "new.py")
    assert audit(ws, was) == []
    assert tags(ws)["mine.cfg"] == "h"
    assert git(ws, "diff", "--cached", "--name-only") == ""  # new.py is not staged
    assert status(ws) == " A new.py\n"


def test_a_lock_left_behind_fails_the_reset(ws):
    was = before(ws)
    edit_later(ws, "a.py", "import evil\n")
    forge(ws, "a.py")
    (ws / ".git" / "index.lock").write_text("")
    got = audit(ws, was)
    assert [(c.path, c.flag) for c in got] == [("a.py", gitindex.STAT)]
    assert "index-info" in got[0].error


def test_a_large_index_is_read_before_the_run(ws, monkeypatch):
    monkeypatch.setattr(gitindex, "MAX_KEPT", 10)
    was = before(ws)
    assert was[str(ws / ".git")].data is None
    edit_later(ws, "a.py", "import evil\n")
    forge(ws, "a.py")
    git(ws, "update-index", "--skip-worktree", "b.py")
    got = audit(ws, was)
    assert sorted((c.path, c.flag) for c in got) == [
        ("a.py", gitindex.STAT), ("b.py", gitindex.SKIP)]
    assert status(ws) == " M a.py\n"
