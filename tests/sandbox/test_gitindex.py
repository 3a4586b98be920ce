"""The index audit without a sandbox, on real repositories and real git: which bits are
the run's, what is cleared, that an unchanged index costs no git process, and what a
failure says (integration/escapes/test_hidden_review.py and test_redteam_later.py judge
the effect after real runs)."""

from __future__ import annotations

import os
import shutil
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
        ("sub/s.py", gitindex.ASSUME, "sub")]
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
