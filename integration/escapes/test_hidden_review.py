"""What hides the tree's change from the person's review, and direnv's layout
directory (issue #44; the escapes are in test_redteam_later.py): the other side of
each fix, judged by what git shows outside and what the person's tools find after
the run. A sparse checkout and the person's own assume-unchanged bits stay; git's
ordinary work in the run (an add, a commit, a sparse checkout of its own, a new
repository) leaves nothing to clear or move aside; a skip-worktree bit the tree set on
a file it then edited is cleared; what `pip install` put into direnv's venv stays."""

from __future__ import annotations

import subprocess

from test_bytecode import marker_in, schema_valid
from test_git_persistence import git, open_up
from test_redteam_later import _project, _tree

RUN_MODES = ("root", "user", "nouserns")


def _tags(ws) -> dict[str, str]:
    """`git ls-files -v` outside: path -> its tag (lower case: assume-unchanged, S:
    skip-worktree)."""
    out = git("ls-files", "-v", "-z", cwd=ws).stdout
    return {rec[2:]: rec[0] for rec in out.split("\0") if rec}


def test_the_persons_own_bits_and_sparse_checkout_stay(run):
    ws = run.workspace
    _project(ws)
    for name in ("local.cfg", "docs/a.md", "docs/b.md"):
        (ws / name).parent.mkdir(exist_ok=True)
        (ws / name).write_text("x\n")
    git("add", "-A", cwd=ws)
    git("commit", "-q", "-m", "more", cwd=ws)
    git("update-index", "--assume-unchanged", "local.cfg", cwd=ws)
    git("sparse-checkout", "set", "--no-cone", "/*", "!/docs/", cwd=ws)
    assert _tags(ws)["local.cfg"] == "h" and _tags(ws)["docs/a.md"] == "S"
    open_up(ws)
    # the tree's ordinary work: a new file added and committed (the index rewritten)
    proc = _tree(run, """
        echo 'print(1)' > new.py
        git -c safe.directory='*' add new.py
        git -c safe.directory='*' -c user.name=t -c user.email=t@t commit -q -m new
        """)
    assert proc.returncode == 0, proc.stderr
    tags = _tags(ws)
    assert tags["local.cfg"] == "h" and tags["docs/a.md"] == "S" and tags["new.py"] == "H"
    assert "cleared" not in proc.stderr, proc.stderr


def test_a_sparse_checkout_the_tree_narrows_stays(run):
    """The person's sparse checkout (its config is theirs), narrowed by the tree."""
    ws = run.workspace
    _project(ws)
    (ws / "docs").mkdir()
    (ws / "docs" / "a.md").write_text("x\n")
    git("add", "-A", cwd=ws)
    git("commit", "-q", "-m", "docs", cwd=ws)
    git("sparse-checkout", "set", "--no-cone", "/*", cwd=ws)
    open_up(ws)
    git("update-index", "-q", "--refresh", cwd=ws)  # the stat data after open_up's chmod
    open_up(ws / ".git")
    # checkStat minimal: the owner a user namespace shows is not the index's
    proc = _tree(run, "git -c safe.directory='*' -c core.checkStat=minimal "
                      "sparse-checkout set --no-cone '/*' '!/docs/'")
    assert proc.returncode == 0, proc.stderr
    assert not (ws / "docs" / "a.md").exists()
    assert _tags(ws)["docs/a.md"] == "S"  # nothing there to hide: kept
    assert git("status", "--porcelain", cwd=ws).stdout == ""


def test_a_skip_worktree_bit_on_an_edited_file_is_cleared(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    proc, events = run("/bin/sh", "-c", f"""set -e
        git -c safe.directory='*' update-index --skip-worktree app.py
        printf 'open("{marker}", "w").close()\\n' >> app.py
        """)
    assert proc.returncode == 0, proc.stderr
    assert "app.py" in git("status", "--porcelain", cwd=ws).stdout  # the review sees it
    assert _tags(ws)["app.py"] == "H"
    if events:
        schema_valid(events)
        index = [e for e in events if e["event"] == "index"]
        assert [(e["path"], e["flag"]) for e in index] == [("app.py", "skip-worktree")]
        assert next(e for e in events if e["event"] == "summary")["index_cleared"] == 1


def test_a_new_repository_keeps_its_exclude(run):
    ws = run.workspace
    _project(ws)
    proc = _tree(run, "git init -q sub && echo x > sub/f")
    assert proc.returncode == 0, proc.stderr
    assert (ws / "sub" / ".git" / "info" / "exclude").exists()
    assert "moved aside" not in proc.stderr, proc.stderr


def test_the_persons_exclude_is_given_back(run, tmp_path):
    """The run may write it (git's own commands never do): the person's text comes
    back after it."""
    ws = run.workspace
    _project(ws)
    exclude = ws / ".git" / "info" / "exclude"
    exclude.write_text("# mine\nscratch/\n")
    open_up(ws)
    _tree(run, "printf '*.py\\n' >> .git/info/exclude || true; touch hidden.py")
    assert exclude.read_text() == "# mine\nscratch/\n"
    assert "hidden.py" in git("status", "--porcelain", cwd=ws).stdout


def test_what_pip_put_into_direnvs_venv_stays(run):
    """direnv's `layout python` venv: the run's packages stay (site-packages is the venv
    audit's), a program it left in bin/, which direnv puts first on PATH, does not."""
    ws = run.workspace
    _project(ws)
    venv = ws / ".direnv" / "python-3.11"
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip", str(venv)],
                   check=True, capture_output=True)
    site = next(venv.glob("lib/python3*/site-packages"))
    open_up(ws)
    rel = site.relative_to(ws)
    proc = _tree(run, f"""
        mkdir {rel}/pkg && echo 'VALUE = 7' > {rel}/pkg/__init__.py
        printf '#!/bin/sh\\necho tool\\n' > .direnv/python-3.11/bin/tool
        chmod 755 .direnv/python-3.11/bin/tool
        """)
    assert proc.returncode == 0, proc.stderr
    got = subprocess.run([str(venv / "bin" / "python"), "-c", "import pkg; print(pkg.VALUE)"],
                         capture_output=True, text=True, cwd=ws)
    assert got.stdout.strip() == "7", got.stderr
    assert not (venv / "bin" / "tool").exists()
    assert (venv / "bin" / "python").exists()
    assert ".direnv/python-3.11/bin/tool" in proc.stderr  # named
