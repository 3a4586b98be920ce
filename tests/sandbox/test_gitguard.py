"""The after-run audit of git's control files, on real repositories made by the real
git (the escape suite runs it around real confined runs)."""

from __future__ import annotations

import os
import shutil
import subprocess

import pytest

from ztsa import gitlayout
from ztsa.sandbox import gitguard

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(*args, cwd):
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid"}
    return subprocess.run(["git", *map(str, args)], cwd=cwd, env=env, check=True,
                          capture_output=True, text=True).stdout


@pytest.fixture
def ws(tmp_path):
    w = tmp_path / "ws"
    w.mkdir()
    git("init", "-q", ".", cwd=w)
    git("commit", "-q", "--allow-empty", "-m", "a", cwd=w)
    return w


def test_rendered_configs_read_back_the_same(tmp_path):
    entries = [("core.bare", "false"), ("remote.my.host.url", "/a b/#c;d"),
               ("remote.my.host.fetch", "+refs/heads/*:refs/remotes/x/*"),
               ('branch.we"ird\\.merge', 'tab\there "quote" back\\slash'),
               ("user.name", " spaced "), ("user.email", "line\nbreak")]
    text = gitguard.render_config(entries)
    assert gitguard.config_entries(text) == entries


def test_git_reads_no_include_while_judging(tmp_path):
    secret = tmp_path / "inc"
    secret.write_text("[core]\n\tfsmonitor = x\n")
    text = f"[include]\n\tpath = {secret}\n".encode()
    assert gitguard.config_entries(text) == [("include.path", str(secret))]


@pytest.mark.parametrize("key,value,runs,safe", [
    ("core.fsmonitor", "false", False, True), ("core.fsmonitor", "./x", True, False),
    ("core.hooksPath", ".githooks", True, False), ("remote.o.url", "/x", False, True),
    ("remote.o.url", "ext::sh -c evil", False, False), ("filter.lfs.smudge", "x", True, False),
    ("submodule.s.update", "!evil", True, False), ("submodule.s.update", "rebase", False,
                                                     False),
    ("alias.st", "!evil", True, False), ("gui.wmstate", "normal", False, False),
    ("includeIf.gitdir:~/.path", "x", True, False),
])
def test_keys_are_judged_by_what_git_does_with_them(key, value, runs, safe):
    assert gitlayout.runs_code(key, value) is runs
    assert gitlayout.safe(key, value) is safe


def test_a_changed_config_of_an_existing_repository_gets_its_old_text(ws):
    before = gitguard.before(str(ws))
    config = ws / ".git" / "config"
    old = config.read_bytes()
    git("config", "core.fsmonitor", "touch pwned", cwd=ws)
    git("config", "user.name", "new", cwd=ws)
    moved = gitguard.audit(str(ws), before, "r1")
    assert [(m.path, m.replaced) for m in moved] == [(".git/config", "restored")]
    assert config.read_bytes() == old
    assert b"fsmonitor" in (ws / moved[0].moved_to).read_bytes()


def test_safe_changes_and_samples_stay(ws):
    git("remote", "add", "origin", "/upstream", cwd=ws)
    before = gitguard.before(str(ws))
    git("config", "user.name", "new", cwd=ws)
    git("config", "branch.main.remote", "origin", cwd=ws)  # an upstream, as git sets it
    git("config", "branch.main.merge", "refs/heads/main", cwd=ws)
    git("config", "submodule.lib.url", "../lib", cwd=ws)
    (ws / ".git" / "hooks" / "pre-commit.sample").write_text("#!/bin/sh\n")
    assert gitguard.audit(str(ws), before, "r1") == []
    assert git("config", "user.name", cwd=ws).strip() == "new"


@pytest.mark.parametrize("where,text,kept", [
    ("rebase-merge/strategy", "ort\n", True),
    ("rebase-merge/strategy", "recursive\n", True),
    ("rebase-merge/strategy", "../../evil\n", False),
    ("rebase-merge/strategy", "evil\n", False),
    ("rebase-merge/strategy", "ort \n", False),  # git runs `git-merge-ort ` from PATH
    ("rebase-merge/strategy", "ort\n\n", False),
    ("rebase-merge/strategy", "ort", True),
    ("sequencer/opts", '[options]\n\tstrategy = "ort "\n', False),
    ("sequencer/opts", "[options]\n\tstrategy = ort\n\tstrategy-option = theirs\n", True),
    ("sequencer/opts", "[options]\n\tsignoff = true\n", True),
    ("sequencer/opts", "[options]\n\tstrategy = ../../evil\n", False),
    ("sequencer/opts", "[options\n", False),  # git cannot read it: not judged safe
])
def test_a_stopped_sequence_keeps_only_gits_own_merge_strategies(ws, where, text, kept):
    """git runs any other strategy as `git-merge-NAME` at `--continue`."""
    before = gitguard.before(str(ws))
    path = ws / ".git" / where
    path.parent.mkdir()
    path.write_text(text)
    moved = gitguard.audit(str(ws), before, "r1")
    if kept:
        assert moved == [] and path.read_text() == text
    else:
        assert [m.path for m in moved] == [f".git/{where}"] and not path.exists()
        assert "merge strategy" in moved[0].reason


def test_an_existing_config_gains_no_place_to_send_git(ws):
    """A new remote, a push URL or a mirror sends a later fetch or push elsewhere: an
    existing repository's config gets its old text back (a new repository may)."""
    git("remote", "add", "origin", "/upstream", cwd=ws)
    for key, value in (("remote.evil.url", "/elsewhere"),
                       ("remote.origin.pushurl", "/elsewhere"),
                       ("remote.origin.mirror", "true"),
                       ("branch.main.remote", "/elsewhere")):
        before = gitguard.before(str(ws))
        old = (ws / ".git" / "config").read_text()
        git("config", key, value, cwd=ws)
        moved = gitguard.audit(str(ws), before, "r1")
        assert [(m.path, m.replaced) for m in moved] == [(".git/config", "restored")], key
        assert (ws / ".git" / "config").read_text() == old


def test_a_new_repository_keeps_only_its_safe_keys(ws):
    before = gitguard.before(str(ws))
    sub = ws / "sub"
    git("init", "-q", str(sub), cwd=ws)
    git("config", "core.pager", "evil", cwd=sub)
    git("config", "user.name", "kept", cwd=sub)
    moved = gitguard.audit(str(ws), before, "r1")
    assert [(m.path, m.replaced) for m in moved] == [("sub/.git/config", "safe keys")]
    assert git("config", "user.name", cwd=sub).strip() == "kept"
    assert "pager" not in (sub / ".git" / "config").read_text()


def test_a_planted_symlink_never_turns_the_moves_outward(ws, tmp_path):
    """The quarantine directory planted as a symlink to a directory outside: what is
    moved aside goes nowhere outside (removed instead), and nothing is written there."""
    outside = tmp_path / "outside"
    outside.mkdir()
    before = gitguard.before(str(ws))
    (ws / gitguard.QUARANTINE).symlink_to(outside)
    hook = ws / ".git" / "hooks" / "post-checkout"
    hook.write_text("#!/bin/sh\n")
    os.chmod(hook, 0o755)
    moved = gitguard.audit(str(ws), before, "r1")
    assert [(m.path, m.moved_to) for m in moved] == [(".git/hooks/post-checkout", None)]
    assert not hook.exists()
    assert list(outside.iterdir()) == []


def test_a_symlinked_hooks_directory_is_moved_not_followed(ws, tmp_path):
    before = gitguard.before(str(ws))
    elsewhere = tmp_path / "hooks"
    elsewhere.mkdir()
    (elsewhere / "pre-commit").write_text("#!/bin/sh\n")
    shutil.rmtree(ws / ".git" / "hooks")
    (ws / ".git" / "hooks").symlink_to(elsewhere)
    moved = gitguard.audit(str(ws), before, "r1")
    assert [m.path for m in moved] == [".git/hooks"]
    assert (elsewhere / "pre-commit").exists()  # the target itself is not touched
    assert not os.path.lexists(ws / ".git" / "hooks")


def test_the_walk_finds_every_kind_of_repository(ws, tmp_path):
    up = tmp_path / "up"
    git("init", "-q", str(up), cwd=tmp_path)
    git("commit", "-q", "--allow-empty", "-m", "a", cwd=up)
    git("-c", "protocol.file.allow=always", "submodule", "add", "-q", str(up), "sub", cwd=ws)
    git("worktree", "add", "-q", "wt", cwd=ws)
    git("init", "-q", "--bare", "deep/er/bare.git", cwd=ws)
    layout = gitlayout.find(str(ws))
    rel = sorted(os.path.relpath(g, ws) for g in layout.gitdirs)
    assert rel == [".git", ".git/modules/sub", ".git/worktrees/wt", "deep/er/bare.git"]
    assert sorted(os.path.relpath(g, ws) for g in layout.gitfiles) == ["sub/.git", "wt/.git"]


def _reference_walk(root):
    """What the walk must find, by a plain scandir walk (the one it replaced)."""
    gitdirs, gitfiles, denied = [], [], []
    stack = [root]
    while stack:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except PermissionError:
            denied.append(d)
            continue
        except OSError:
            continue
        names = {e.name for e in entries}
        if "HEAD" in names and ("objects" in names or "commondir" in names):
            gitdirs.append(d)
        for e in entries:
            is_dir = e.is_dir(follow_symlinks=False)
            if e.name == ".git":
                (gitdirs if is_dir else gitfiles).append(e.path)
            if is_dir:
                stack.append(e.path)
    return sorted(set(gitdirs)), sorted(gitfiles), sorted(denied)


def test_the_native_walk_finds_what_a_plain_walk_finds(ws, tmp_path):
    """Every shape: a bare repository deep down, one inside .git/objects, a `.git` file,
    a `.git` symlink, a repository behind a symlinked directory (never followed), many
    directories, names with newlines and spaces, and (without root) an unlistable one."""
    outside = tmp_path / "outside"
    git("init", "-q", str(outside), cwd=tmp_path)
    git("init", "-q", "--bare", "a b/deep\nname/er/bare.git", cwd=ws)
    git("init", "-q", "--bare", ".git/objects/planted", cwd=ws)
    (ws / "gitfile").mkdir()
    (ws / "gitfile" / ".git").write_text("gitdir: ../.git\n")
    (ws / "gitlink").mkdir()
    (ws / "gitlink" / ".git").symlink_to(outside / ".git")
    (ws / "through").symlink_to(outside)
    for i in range(300):
        (ws / "node_modules" / f"p{i}" / "lib").mkdir(parents=True)
    (ws / "node_modules" / "p7" / "lib" / "HEAD").write_text("ref: refs/heads/x\n")
    (ws / "node_modules" / "p7" / "lib" / "commondir").write_text("..\n")
    closed = ws / "closed"
    closed.mkdir()
    (closed / "inner").mkdir()
    os.chmod(closed, 0)
    try:
        expected = _reference_walk(str(ws))
        layout = gitlayout.find(str(ws))
        denied: list[str] = []
        gitlayout.find(str(ws), retry=lambda d: bool(denied.append(d)))
    finally:
        os.chmod(closed, 0o755)
    assert sorted(layout.gitdirs) == expected[0]
    assert sorted(layout.gitfiles) == expected[1]
    assert sorted(denied) == expected[2]
    rel = [os.path.relpath(g, ws) for g in layout.gitdirs]
    assert {".git", ".git/objects/planted", "a b/deep\nname/er/bare.git",
            "node_modules/p7/lib"} <= set(rel)
    assert not any(g.startswith(str(outside)) or "through" in g for g in layout.gitdirs)
    assert sorted(os.path.relpath(g, ws) for g in layout.gitfiles) == ["gitfile/.git",
                                                                      "gitlink/.git"]
    if os.geteuid() != 0:
        assert denied == [str(closed)]
    assert gitlayout.find("/nonexistent-ztsa-dir").gitdirs == []
    # a root longer than any path the kernel resolves: nothing, as scandir's ENAMETOOLONG
    assert gitlayout.find("/" + "a" * 60000).gitdirs == []


def test_a_workspace_that_is_a_linked_worktree_shows_its_repository(tmp_path):
    main = tmp_path / "main"
    git("init", "-q", str(main), cwd=tmp_path)
    git("commit", "-q", "--allow-empty", "-m", "a", cwd=main)
    git("worktree", "add", "-q", str(tmp_path / "wt"), cwd=main)
    wt = str(tmp_path / "wt")
    shown = gitguard.outside_gitdirs(wt, gitlayout.find(wt))
    assert shown == [str(main / ".git" / "worktrees" / "wt"), str(main / ".git")]


def test_a_planted_git_file_shows_nothing(tmp_path):
    """A repository whose `.git` file names any directory (`gitdir: /dev/shm/x`,
    `gitdir: ~/notes`) made ztsa show that directory to the tree. Only a linked worktree
    whose gitdir names the workspace back, or a submodule's directory under a
    superproject that holds the workspace, is shown."""
    secret = tmp_path / "notes"
    secret.mkdir()
    (secret / "HEAD").write_text("ref: refs/heads/main\n")
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".git").write_text(f"gitdir: {secret}\n")
    assert gitguard.outside_gitdirs(str(ws), gitlayout.find(str(ws))) == []
    # another worktree's git directory, whose gitdir names that worktree, not this one
    main = tmp_path / "main"
    git("init", "-q", str(main), cwd=tmp_path)
    git("commit", "-q", "--allow-empty", "-m", "a", cwd=main)
    git("worktree", "add", "-q", str(tmp_path / "other"), cwd=main)
    (ws / ".git").write_text(f"gitdir: {main / '.git' / 'worktrees' / 'other'}\n")
    assert gitguard.outside_gitdirs(str(ws), gitlayout.find(str(ws))) == []
    # a submodule's checkout inside its superproject: shown
    sub = main / "lib" / "sub"
    sub.mkdir(parents=True)
    (main / ".git" / "modules" / "sub").mkdir(parents=True)
    (sub / ".git").write_text("gitdir: ../../.git/modules/sub\n")
    assert gitguard.outside_gitdirs(str(sub), gitlayout.find(str(sub))) == [
        str(main / ".git" / "modules" / "sub")]


def test_a_redirect_is_read_as_git_reads_it(tmp_path):
    """commondir and `.git` files: only trailing CRs and LFs go (a space is part of the
    name), a symlink is followed before the `..` after it, a NUL is no path, and a
    `.git` file needs `gitdir: ` exactly."""
    redirect_target, gitfile_target = gitlayout.redirect_target, gitlayout.gitfile_target
    (tmp_path / "x" / "y" / "z").mkdir(parents=True)
    (tmp_path / "g").mkdir()
    os.symlink(tmp_path / "x" / "y" / "z", tmp_path / "g" / "lnk")
    g = str(tmp_path / "g")
    assert redirect_target(b"../c \r\n\n", g) == str(tmp_path / "c ")
    assert redirect_target(b"lnk/../../c\n", g) == str(tmp_path / "x" / "c")
    assert redirect_target(b"../c\0junk\n", g) is None
    assert redirect_target(b"", g) == g
    for text, want in ((b"gitdir: ../c\n", str(tmp_path / "c")), (b"gitdir:../c\n", None),
                       (b"gitdir:  ../c\n", str(tmp_path / "g" / " ../c"))):
        (tmp_path / "g" / ".git").write_bytes(text)
        assert gitfile_target(str(tmp_path / "g" / ".git")) == want, text


def test_a_control_file_still_as_before_is_not_read_again(ws):
    config = str(ws / ".git" / "config")
    # a start 10 s from now: the config's ctime is older than the settled time
    since = __import__("time").time_ns() + 10_000_000_000
    before = gitguard.snapshot(gitlayout.find(str(ws)), since_ns=since)
    was = before[config]
    assert was.data == (ws / ".git" / "config").read_bytes()
    assert gitguard.snapshot(gitlayout.find(str(ws)), was=before, since_ns=since)[config] \
        is was
    # a hook that has been there a while: judged by what it is, its bytes not kept
    assert all(s.data is None for p, s in before.items() if "/hooks/" in p)


def test_a_change_in_the_snapshots_clock_tick_is_compared_by_its_bytes(ws):
    """The tree rewrites the config with as many bytes, within the clock tick of the
    snapshot before the run (coarse timestamps): same inode, size and ctime. A ctime
    not older than the run's start is never trusted: the bytes are read and differ."""
    config = ws / ".git" / "config"
    st = os.lstat(config)
    forged = gitguard.State("file", st.st_ino, st.st_ctime_ns, st.st_size,
                            b"x" * st.st_size)
    since = st.st_ctime_ns  # the run started in the tick the config was written in
    now = gitguard.snapshot(gitlayout.find(str(ws)), was={str(config): forged},
                            since_ns=since)[str(config)]
    assert now.data == config.read_bytes() and now != forged
    # and a hook written then keeps its bytes in the snapshot before the run
    hook = ws / ".git" / "hooks" / "pre-commit.sample"
    assert gitguard.snapshot(gitlayout.find(str(ws)), since_ns=os.lstat(hook).st_ctime_ns
                             )[str(hook)].data == hook.read_bytes()


def test_many_new_repositories_share_one_reading_of_their_config(ws, monkeypatch):
    """A run that makes many repositories with git's own config (git init, a clone's
    checkout): each is judged, the config text read by git once."""
    before = gitguard.before(str(ws))
    for i in range(30):
        git("init", "-q", f"sub/r{i}", cwd=ws)
    calls = []
    real = gitguard._config_entries
    monkeypatch.setattr(gitguard, "_config_entries",
                        lambda data: calls.append(data) or real(data))
    gitguard._ENTRIES.clear()
    assert gitguard.audit(str(ws), before, "r1") == []
    assert len(calls) == 1
    git("config", "core.fsmonitor", "touch pwned", cwd=ws / "sub" / "r7")
    moved = gitguard.audit(str(ws), before, "r2")
    assert [(m.path, m.replaced) for m in moved] == [("sub/r7/.git/config", "safe keys")]
