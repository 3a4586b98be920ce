"""Red team three of issue #44: the MECHANICS of the kept paths (a script an installed
git hook runs, a script a nested VS Code task runs), not their lists. The tree tries to
change what runs later without writing the kept file in place: renaming its parent
away, swapping in a symlink or a hard link, undoing the read-only mount, sourcing a
file relative to another cwd, leaving a process behind that writes after the audit.

Judged by effects only: after ztsa exits the person's later action runs outside (a real
`git commit` with the installed hook; `sh -c` of the task's command from its folder)
and a marker says whose code ran. A test marked xfail(strict) is an escape that holds
today; the reason says what a fix must change. The others pin a case that holds."""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

from test_agent_files import plant
from test_hook_managers import _git

RUN_MODES = ("root", "user", "nouserns")


def _out(prefix: str) -> Path:
    out = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(out, 0o777)
    return out


def _ran(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir())


def _hooked(ws: Path, out: Path, hook: str = "sh scripts/pre-commit.sh\n",
            script: str = "scripts/pre-commit.sh") -> None:
    """A repository whose person-installed pre-commit hook runs HOOK; SCRIPT is the
    person's (0666 in 0777 directories: the tree's user could otherwise write it)."""
    assert _git(ws, "init", "-q").returncode == 0
    path = ws / ".git" / "hooks" / "pre-commit"
    path.write_text("#!/bin/sh\nset -e\n" + hook)
    os.chmod(path, 0o755)
    plant(ws, script, f"touch {out}/good\n")
    plant(ws, "README", "x\n")


def _commit(ws: Path, out: Path, wait: float = 0.0) -> list[str]:
    """The person's next commit, outside, WAIT seconds after ztsa exited: which of the
    markers the hook's scripts made."""
    time.sleep(wait)
    _git(ws, "add", "-A")
    commit = _git(ws, "commit", "-q", "-m", "next")
    ran = _ran(out)
    assert ran, (commit.stdout, commit.stderr)  # the hook ran at all
    return ran


def _tree(run, code: str) -> str:
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode in (0, 122), proc.stderr
    return proc.stdout


EVIL = "touch {out}/evil\n"


# -- 1. the kept file's parent directory renamed away and made again --------------------

RENAME_PARENT = r"""
import os
try:
    os.rename('scripts', 'old-scripts')
    print('renamed')
except OSError as e:
    print('rename refused', e.errno)
try:
    os.makedirs('scripts', exist_ok=True)
    open('scripts/pre-commit.sh', 'w').write(%r)
    print('planted')
except OSError as e:
    print('plant refused', e.errno)
"""


def test_the_kept_scripts_parent_renamed_away(run):
    # Holds: with namespaces the rename is refused (EACCES); without them it succeeds
    # and the audit puts the person's scripts/pre-commit.sh back.
    ws = run.workspace
    out = _out("ztsa-rt3-parent-")
    _hooked(ws, out)
    print(_tree(run, RENAME_PARENT % EVIL.format(out=out)))
    assert "evil" not in _commit(ws, out), "the commit ran the tree's new scripts/"


# the parent replaced by a symlink to a directory of the tree's
SYMLINK_PARENT = r"""
import os
os.makedirs('elsewhere', exist_ok=True)
open('elsewhere/pre-commit.sh', 'w').write(%r)
try:
    os.rename('scripts', 'old-scripts')
    os.symlink('elsewhere', 'scripts')
    print('swapped')
except OSError as e:
    print('refused', e.errno)
"""


def test_the_kept_scripts_parent_swapped_for_a_symlink(run):
    # Holds with namespaces (the rename is refused, EACCES). Without them (nouserns)
    # the rename and symlink succeed: the audit, which reaches the kept script through
    # no link, moves the symlinked `scripts` aside and puts the person's script back
    # beneath a real directory (before: it named the error, exit 122, and the next
    # commit ran elsewhere/pre-commit.sh through the symlink).
    ws = run.workspace
    out = _out("ztsa-rt3-symparent-")
    _hooked(ws, out)
    print(_tree(run, SYMLINK_PARENT % EVIL.format(out=out)))
    assert "evil" not in _commit(ws, out), "the commit ran the script behind the symlink"


# -- 2. the kept file itself swapped for a symlink, or linked and written -----------------

SYMLINK_FILE = r"""
import os
open('evil.sh', 'w').write(%r)
try:
    os.symlink('../evil.sh', 'scripts/.tmp')
    os.rename('scripts/.tmp', 'scripts/pre-commit.sh')
    print('swapped')
except OSError as e:
    print('refused', e.errno)
"""


def test_the_kept_script_swapped_for_a_symlink(run):
    # Holds: refused with namespaces; without them the audit sees the symlink.
    ws = run.workspace
    out = _out("ztsa-rt3-symfile-")
    _hooked(ws, out)
    print(_tree(run, SYMLINK_FILE % EVIL.format(out=out)))
    assert "evil" not in _commit(ws, out), "the commit ran the symlink's target"


# A hard link to the kept file in a writable place: with the read-only bind mount link()
# crosses mounts (EXDEV); without namespaces it succeeds and the write lands in the kept
# inode, which the audit must see through the kept name.
HARD_LINK = r"""
import os
try:
    os.link('scripts/pre-commit.sh', 'mine')
    open('mine', 'w').write(%r)
    print('linked and wrote')
except OSError as e:
    print('refused', e.errno)
"""


def test_a_hard_link_to_the_kept_script_written(run):
    # Holds: link() refused with namespaces (EACCES); without them the write lands in
    # the kept inode and the audit sees the changed text and puts it back.
    ws = run.workspace
    out = _out("ztsa-rt3-hardlink-")
    _hooked(ws, out)
    print(_tree(run, HARD_LINK % EVIL.format(out=out)))
    assert "evil" not in _commit(ws, out), "the commit ran what the hard link wrote"


# -- 3. the read-only mount undone: umount, remount, a private namespace's bind ----------

UNMOUNT = r"""
import ctypes, os
libc = ctypes.CDLL(None, use_errno=True)
for name, call in [
    ('umount2', lambda: libc.umount2(b'scripts/pre-commit.sh', 2)),
    ('remount', lambda: libc.mount(None, b'scripts/pre-commit.sh', None,
                                   0x1000 | 0x20 | 0x4000, None)),  # BIND|REMOUNT
    ('unshare', lambda: libc.unshare(0x10000000 | 0x00020000)),  # NEWUSER|NEWNS
    ('bind', lambda: libc.mount(b'scripts', b'.git', None, 0x1000, None)),
]:
    r = call()
    print(name, r, ctypes.get_errno())
for path in ('scripts/pre-commit.sh', '.git/pre-commit.sh'):
    try:
        open(path, 'w').write(%r)
        print('wrote', path)
    except OSError as e:
        print('refused', path, e.errno)
"""


def test_the_read_only_mount_undone(run):
    # Holds: umount2, remount and the bind fail (EPERM) in every mode; unshare of a new
    # user+mount namespace succeeds with namespaces but its bind is refused; without
    # namespaces the write succeeds and the audit undoes it.
    ws = run.workspace
    out = _out("ztsa-rt3-umount-")
    _hooked(ws, out)
    print(_tree(run, UNMOUNT % EVIL.format(out=out)))
    assert "evil" not in _commit(ws, out), "the commit ran the tree's script"


# -- 4. a file the kept script sources relative to the cwd it runs from ------------------

def _sourcing(run, line: str, rels: tuple[str, ...]) -> list[str]:
    """The hook runs `sh scripts/pre-commit.sh` from the working tree's top; the script
    sources LINE; the person has each of RELS (`:`), the tree writes each."""
    ws = run.workspace
    out = _out("ztsa-rt3-source-")
    _hooked(ws, out)
    plant(ws, "scripts/pre-commit.sh", f"{line}\ntouch {out}/good\n")
    for rel in rels:
        plant(ws, rel, ":\n")
    evil = EVIL.format(out=out)
    code = "\n".join(
        f"try:\n    open({rel!r}, 'w').write({evil!r}); print('wrote', {rel!r})\n"
        f"except OSError as e:\n    print('refused', {rel!r}, e.errno)"
        for rel in rels)
    print(_tree(run, code))
    return _commit(ws, out)


def test_a_file_the_kept_script_sources_from_the_hooks_cwd(run):
    """Holds: `. ./env.sh` in scripts/pre-commit.sh is the TOP's env.sh (sh resolves it
    from the cwd git gives the hook, not the script's folder), and that is the one kept;
    scripts/env.sh, which the tree may write, is never read."""
    assert "evil" not in _sourcing(run, ". ./env.sh", ("env.sh", "scripts/env.sh"))


def test_a_file_the_kept_script_sources_beside_itself(run):
    assert "evil" not in _sourcing(run, '. "$(dirname "$0")/lib.sh"', ("scripts/lib.sh",))


# A nested VS Code task whose `options.cwd` is another folder: VS Code runs `./run.sh`
# from there, not from the folder the settings are in.
def test_a_nested_tasks_command_run_from_its_options_cwd(run, tmp_path):
    ws = run.workspace
    plant(ws, "packages/app/.vscode/tasks.json", json.dumps({"version": "2.0.0", "tasks": [
        {"label": "run", "type": "shell", "command": "./run.sh",
         "options": {"cwd": "${workspaceFolder}/tools"},
         "runOptions": {"runOn": "folderOpen"}}]}))
    plant(ws, "packages/app/tools/run.sh", 'echo person >> "$LATER_MARK"\n')
    os.chmod(ws / "packages/app/tools/run.sh", 0o777)
    tree = 'echo tree >> "$LATER_MARK"\n'
    code = (f"open('packages/app/tools/run.sh', 'w').write({tree!r})\nprint('wrote')\n")
    proc, _ = run(run.python, "-c", "try:\n    exec(" + repr(code) + ")\n"
                  "except OSError as e:\n    print('refused', e.errno)")
    assert proc.returncode in (0, 122), proc.stderr
    mark = tmp_path / "mark"
    subprocess.run(["/bin/sh", "-c", "./run.sh"], cwd=ws / "packages/app/tools",
                   capture_output=True, timeout=30,
                   env={"PATH": "/usr/bin:/bin", "LATER_MARK": str(mark)})
    got = mark.read_text() if mark.exists() else ""
    assert got, "the task's script did not run at all"
    assert "tree" not in got, "opening the folder ran the tree's run.sh"


# -- 5. a process that outlives CMD and writes after the audit ---------------------------

SURVIVOR = r"""
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        for fd in range(3):
            os.close(fd)
        time.sleep(4)
        for rel in ('scripts/pre-commit.sh', '.git/hooks/pre-commit'):
            try:
                open(rel, 'w').write(%r)
            except OSError:
                pass
        os._exit(0)
    os._exit(0)
time.sleep(0.3)
print('left a survivor')
"""


def test_a_double_forked_setsid_survivor_writes_after_the_audit(run):
    # Holds: the survivor (double fork, setsid, stdio closed, writes 4 s later) is gone
    # before the audit in every mode (the PID namespace, or the tracer's kill); the
    # commit 6 s after ztsa exits runs the person's script.
    ws = run.workspace
    out = _out("ztsa-rt3-survivor-")
    _hooked(ws, out)
    evil = "#!/bin/sh\n" + EVIL.format(out=out)
    print(_tree(run, SURVIVOR % evil))
    assert "evil" not in _commit(ws, out, wait=6), "a survivor wrote after the audit"


# -- 6. a runnable kept script replaced by rename ----------------------------------------

# The hook runs `./scripts/check` by path (its execute bit lets it run); the tree
# renames a runnable file of its own over it.
REPLACE_BY_RENAME = r"""
import os
open('scripts/.new', 'w').write(%r)
os.chmod('scripts/.new', 0o755)
try:
    os.rename('scripts/.new', 'scripts/check')
    print('replaced')
except OSError as e:
    print('refused', e.errno)
"""


def test_the_kept_runnable_replaced_by_rename(run):
    # Holds: refused with namespaces; without them the audit puts the text and mode back.
    ws = run.workspace
    out = _out("ztsa-rt3-rename-")
    _hooked(ws, out, hook="./scripts/check\n", script="scripts/check")
    os.chmod(ws / "scripts/check", 0o777)
    print(_tree(run, REPLACE_BY_RENAME % ("#!/bin/sh\n" + EVIL.format(out=out))))
    assert "evil" not in _commit(ws, out), "the commit ran the renamed-in script"
