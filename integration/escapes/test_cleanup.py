"""The clean-up after the run cannot be blocked by the tree: directories it made
read-only are opened up again to move what it planted aside; what still cannot be moved
is emptied in place, named, and makes the run unclean (its own exit status), never a
claim that it was moved. Judged by what runs afterwards outside (the person's git, a
later ztsa run started there)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from test_git_persistence import INSIDE, afterwards, git

RUN_MODES = ("root", "user", "nouserns")
EXIT_UNCLEAN = 122  # ztsa.sandbox.run.EXIT_UNCLEAN, documented in the README


def test_a_hook_and_fsmonitor_behind_a_read_only_directory(run, tmp_path):
    ws = run.workspace
    marker = tmp_path / "ran"
    os.chmod(tmp_path, 0o777)
    proc, _ = run("/bin/sh", "-c", f"""
        set -e
        {INSIDE} init -q -b main r
        {INSIDE} -C r config core.fsmonitor 'touch {marker}; false'
        printf '#!/bin/sh\\ntouch {marker}\\n' > r/.git/hooks/pre-commit
        chmod +x r/.git/hooks/pre-commit
        chmod 555 r/.git/hooks r/.git r
        """)
    assert proc.returncode == 0, proc.stderr
    assert "could not" not in proc.stderr, proc.stderr
    assert "moved aside 2 file(s)" in proc.stderr, proc.stderr
    # the directories keep the modes the tree gave them: the person's git, run by a user
    # who is not root, needs to write there again (as the person would chmod them)
    for d in (ws / "r", ws / "r" / ".git", ws / "r" / ".git" / "hooks"):
        if os.stat(d).st_uid == os.geteuid():
            os.chmod(d, 0o755)
    afterwards([ws / "r"], marker)
    manifest = json.loads(next((ws / ".ztsa-quarantine").iterdir()).joinpath(
        "manifest.json").read_text())
    assert {m["path"] for m in manifest} == {"r/.git/config", "r/.git/hooks/pre-commit"}
    assert all(not m["error"] for m in manifest), manifest


def test_a_policy_file_behind_a_read_only_directory(run, tmp_path):
    ws = run.workspace
    proc, _ = run("/bin/sh", "-c",
                  "mkdir sub && printf '[exec]\\nallow_write = [\"/\"]\\n' > sub/.ztsa.toml "
                  "&& chmod 555 sub")
    assert proc.returncode == 0, proc.stderr
    assert "could not" not in proc.stderr, proc.stderr
    assert not (ws / "sub" / ".ztsa.toml").exists()
    # a later run started there obeys nothing the tree wrote
    show = subprocess.run([sys.executable, "-m", "ztsa", "policy", "show", "--workspace",
                           str(ws / "sub"), "--format", "json"], capture_output=True,
                          text=True, timeout=60)
    assert "sub/.ztsa.toml" not in show.stdout, show.stdout


def test_what_cannot_be_moved_is_emptied_named_and_makes_the_run_unclean(run, tmp_path):
    """A hook in a directory ztsa cannot write even after trying to open it up (another
    user's, here root's, with a hook file anybody may write). With namespaces the
    existing repository's hooks are read-only to the tree, so its write fails; without
    them (nouserns) ztsa cannot move the hook, so it empties it, names it, and exits
    with its own status unless CMD failed."""
    if run.mode == "root":
        import pytest

        pytest.skip("root is never refused the move")
    ws = run.workspace
    marker = tmp_path / "ran"
    os.chmod(tmp_path, 0o777)
    git("init", "-q", "-b", "main", ".", cwd=ws)
    hooks = ws / ".git" / "hooks"
    (hooks / "pre-commit").write_text("#!/bin/sh\nexit 0\n")
    os.chmod(hooks / "pre-commit", 0o777)
    os.chmod(hooks, 0o555)
    plant = f"printf '#!/bin/sh\\ntouch {marker}\\n' > .git/hooks/pre-commit"
    proc, _ = run("/bin/sh", "-c", plant)
    if (hooks / "pre-commit").read_text() == "#!/bin/sh\nexit 0\n":
        assert proc.returncode != 0  # refused while it ran: nothing to clean
    else:
        assert proc.returncode == EXIT_UNCLEAN, proc.stderr
        assert "could not move aside .git/hooks/pre-commit" in proc.stderr, proc.stderr
        assert "emptied it in place" in proc.stderr, proc.stderr
        assert "moved aside 1 file(s)" not in proc.stderr, proc.stderr
        assert (hooks / "pre-commit").read_bytes() == b""
    afterwards([ws], marker)
    # CMD's own failure still wins
    proc, _ = run("/bin/sh", "-c", plant + "; exit 7")
    assert proc.returncode == 7, proc.stderr
    afterwards([ws], marker)
