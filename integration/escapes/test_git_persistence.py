"""Nothing the tree leaves in the workspace makes git run a program later, outside the
sandbox. Each test plants a vector inside, then runs the real git outside after ztsa
has exited (`status`, `commit`, `checkout`, as a person or an agent would) and judges
one thing: whether the planted program ran (a marker file it would create)."""

from __future__ import annotations

import json
import os
import shutil
import stat
import subprocess
import sys as _sys
from pathlib import Path

import pytest

RUN_MODES = ("root", "user", "nouserns")
GIT = shutil.which("git")
pytestmark = pytest.mark.skipif(GIT is None, reason="git is not installed")
ID = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
      "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid"}
# the tree's git: another uid owns the repositories in the unprivileged case
INSIDE = "git -c safe.directory='*' -c protocol.file.allow=always"


def git(*args: str | Path, cwd: Path, check: bool = True) -> subprocess.CompletedProcess[str]:
    """The real git, outside any sandbox, as the person who owns the workspace."""
    env = {**os.environ, **ID, "GIT_CONFIG_COUNT": "2",
           "GIT_CONFIG_KEY_0": "safe.directory", "GIT_CONFIG_VALUE_0": "*",
           "GIT_CONFIG_KEY_1": "protocol.file.allow", "GIT_CONFIG_VALUE_1": "always",
           "GIT_TERMINAL_PROMPT": "0", "GIT_EDITOR": "true"}
    assert GIT is not None
    return subprocess.run([GIT, *map(str, args)], cwd=cwd, env=env, capture_output=True,
                          text=True, check=check, timeout=60)


def open_up(path: Path) -> None:
    """Let the unprivileged case write what the test prepared as root (modes kept
    executable where they were)."""
    for d, _dirs, files in os.walk(path):
        os.chmod(d, 0o777)
        for f in files:
            p = os.path.join(d, f)
            if not os.path.islink(p):
                mode = os.stat(p).st_mode
                os.chmod(p, 0o777 if mode & 0o111 else 0o666)


def repo(path: Path) -> Path:
    path.mkdir(parents=True, exist_ok=True)
    git("init", "-q", "-b", "main", ".", cwd=path)
    (path / "README").write_text("hello\n")
    git("add", "README", cwd=path)
    git("commit", "-qm", "init", cwd=path)
    return path


def marker_script(marker: Path) -> str:
    return f"#!/bin/sh\ntouch {marker}\nexit 0\n"


def sh(run, script: str) -> subprocess.CompletedProcess[str]:
    proc, _ = run("/bin/sh", "-c", script)
    return proc


def afterwards(where: list[Path], marker: Path) -> None:
    """The person's git, outside: nothing planted may run."""
    for d in where:
        if not d.exists():
            continue
        git("status", cwd=d, check=False)
        git("diff", "HEAD", cwd=d, check=False)
        (d / "afterwards.txt").write_text("x\n")
        git("add", "afterwards.txt", cwd=d, check=False)
        git("commit", "-qm", "afterwards", cwd=d, check=False)
        git("checkout", "-q", "-b", f"after-{os.urandom(2).hex()}", cwd=d, check=False)
        git("log", "-1", cwd=d, check=False)
    assert not marker.exists(), "a program the tree planted ran outside the sandbox"


def test_an_existing_repositorys_config_commondir_and_hooks(run, tmp_path):
    ws = run.workspace
    repo(ws)
    marker = tmp_path / "ran"
    os.chmod(tmp_path, 0o777)
    evil = ws / "evil"
    open_up(ws)
    planted = marker_script(marker)
    proc = sh(run, f"""
        printf '[core]\\n\\tfsmonitor = touch {marker}\\n\\tpager = touch {marker}\\n' \
            >> .git/config
        {INSIDE} config core.hooksPath evil/hooks
        mkdir -p evil/hooks && printf '{planted}' > evil/hooks/pre-commit
        chmod +x evil/hooks/pre-commit
        printf '[core]\\n\\tfsmonitor = touch {marker}\\n' > evil/config
        echo evil > .git/commondir
        printf '{planted}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
        printf '{planted}' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout
        true""")
    assert proc.returncode == 0, proc.stderr
    assert evil.exists()  # the workspace itself stays writable
    afterwards([ws], marker)
    assert "fsmonitor" not in (ws / ".git" / "config").read_text()


def test_the_directory_core_hookspath_names(run, tmp_path):
    ws = repo(run.workspace)
    (ws / ".githooks").mkdir()
    git("config", "core.hooksPath", ".githooks", cwd=ws)
    (ws / ".husky").mkdir()
    marker = tmp_path / "ran"
    os.chmod(tmp_path, 0o777)
    open_up(ws)
    planted = marker_script(marker)
    sh(run, f"""
        for d in .githooks .husky; do
          printf '{planted}' > $d/pre-commit; chmod +x $d/pre-commit
          printf '{planted}' > $d/post-checkout; chmod +x $d/post-checkout
        done
        mv .githooks gh-old; mkdir .githooks; printf '{planted}' > .githooks/pre-commit
        chmod +x .githooks/pre-commit; true""")
    # husky's own hooks run .husky/<name>: the person's commit must not reach one
    git("config", "core.hooksPath", ".husky", cwd=ws)
    afterwards([ws], marker)
    git("config", "core.hooksPath", ".githooks", cwd=ws)
    afterwards([ws], marker)


def test_a_submodules_git_directory_and_its_git_file(run, tmp_path):
    upstream = repo(tmp_path / "upstream")
    ws = repo(run.workspace)
    git("submodule", "add", "-q", str(upstream), "sub", cwd=ws)
    git("commit", "-qm", "sub", cwd=ws)
    assert (ws / ".git" / "modules" / "sub" / "config").exists()
    marker = tmp_path / "ran"
    os.chmod(tmp_path, 0o777)
    open_up(ws)
    planted = marker_script(marker)
    sh(run, f"""
        m=.git/modules/sub
        printf '{planted}' > $m/hooks/post-checkout; chmod +x $m/hooks/post-checkout
        printf '{planted}' > $m/hooks/pre-commit; chmod +x $m/hooks/pre-commit
        printf '[core]\\n\\tfsmonitor = touch {marker}\\n' >> $m/config
        mkdir -p fake/objects fake/refs fake/hooks && echo 'ref: refs/heads/main' > fake/HEAD
        printf '[core]\\n\\tfsmonitor = touch {marker}\\n' > fake/config
        printf '{planted}' > fake/hooks/pre-commit; chmod +x fake/hooks/pre-commit
        echo "gitdir: ../fake" > sub/.git
        true""")
    afterwards([ws / "sub", ws], marker)


def test_a_linked_worktree(run, tmp_path):
    ws = repo(run.workspace)
    git("worktree", "add", "-q", "wt", cwd=ws)
    marker = tmp_path / "ran"
    os.chmod(tmp_path, 0o777)
    open_up(ws)
    planted = marker_script(marker)
    sh(run, f"""
        mkdir -p evil/hooks evil/objects evil/refs && echo 'ref: refs/heads/main' > evil/HEAD
        printf '[core]\\n\\tfsmonitor = touch {marker}\\n' > evil/config
        printf '{planted}' > evil/hooks/pre-commit; chmod +x evil/hooks/pre-commit
        echo "$PWD/evil" > .git/worktrees/wt/commondir
        printf '[core]\\n\\tfsmonitor = touch {marker}\\n' > .git/worktrees/wt/config.worktree
        true""")
    afterwards([ws / "wt", ws], marker)


def test_repositories_the_tree_makes(run, tmp_path):
    ws = run.workspace
    os.chmod(ws, 0o777)
    marker = tmp_path / "ran"
    os.chmod(tmp_path, 0o777)
    planted = marker_script(marker)
    proc = sh(run, f"""
        set -e
        {INSIDE} init -q -b main top && cd top
        {INSIDE} config core.fsmonitor 'touch {marker}'
        {INSIDE} config core.pager 'touch {marker}; cat'
        {INSIDE} config alias.st '!touch {marker}'
        {INSIDE} config include.path ../inc.cfg
        {INSIDE} config user.name tree
        printf '[core]\\n\\tfsmonitor = touch {marker}\\n' > ../inc.cfg
        printf '{planted}' > .git/hooks/pre-commit; chmod +x .git/hooks/pre-commit
        printf '{planted}' > .git/hooks/post-checkout; chmod +x .git/hooks/post-checkout
        echo hi > f && {INSIDE} add f && {INSIDE} -c user.email=t@e.invalid commit -qm one \
            --no-verify
        mkdir -p src ../bare/objects ../bare/refs ../bare/hooks
        echo 'ref: refs/heads/main' > ../bare/HEAD
        printf '[core]\\n\\tfsmonitor = touch {marker}\\n' > ../bare/config
        echo "gitdir: ../../bare" > src/.git
        cd .. && ln -s top/.git/hooks linked-hooks
        {INSIDE} init -q -b main other && rm -rf other/.git/hooks
        ln -s "$PWD/top/.git/hooks" other/.git/hooks
        """)
    assert proc.returncode == 0, proc.stderr
    assert "moved aside" in proc.stderr
    top = ws / "top"
    afterwards([top, top / "src", ws / "other"], marker)
    assert git("st", cwd=top, check=False).returncode != 0  # the alias is gone
    # the repository itself still works, with the keys git wrote for it
    assert git("log", "--format=%s", cwd=top).stdout.split() == ["afterwards", "one"]
    assert git("config", "user.name", cwd=top).stdout.strip() == "tree"
    runs = list((ws / ".ztsa-quarantine").iterdir())
    manifest = json.loads((runs[0] / "manifest.json").read_text())
    moved = {m["path"] for m in manifest}
    # src/.git leads to a repository in the workspace, whose config is judged in turn
    assert {"top/.git/config", "top/.git/hooks/pre-commit", "top/.git/hooks/post-checkout",
            "bare/config", "other/.git/hooks"} <= moved, moved
    for m in manifest:  # what was moved aside cannot run from where it is
        st = os.lstat(ws / m["moved_to"])
        assert stat.S_ISLNK(st.st_mode) or not st.st_mode & 0o111, m


def test_the_audit_log_names_what_was_moved_aside(run, tmp_path):
    if not run.log:
        pytest.skip("needs the audit log")
    ws = run.workspace
    proc, events = run("/bin/sh", "-c", f"{INSIDE} init -q r && "
                       "printf '#!/bin/sh\\n' > r/.git/hooks/pre-push && "
                       "chmod +x r/.git/hooks/pre-push")
    assert proc.returncode == 0, proc.stderr
    import jsonschema

    schema = json.loads((Path(__file__).parents[2] / "docs" / "audit-schema.json").read_text())
    for e in events:
        jsonschema.validate(e, schema)
    moved = [e for e in events if e["event"] == "quarantine"]
    assert [e["path"] for e in moved] == ["r/.git/hooks/pre-push"]
    assert moved[0]["run"] == events[0]["run"]
    assert [e["quarantined"] for e in events if e["event"] == "summary"] == [1]
    assert not (ws / "r" / ".git" / "hooks" / "pre-push").exists()


def test_git_keeps_working_inside(run, tmp_path):
    """init, add, commit, branch, checkout, stash, merge, rebase, tag, a clone and a
    fetch from a local path inside the workspace, and a repository with submodules:
    all inside the sandbox, and nothing of it moved aside afterwards."""
    upstream = repo(run.workspace / "upstream")
    ws = repo(run.workspace / "main")
    git("submodule", "add", "-q", str(upstream), "sub", cwd=ws)
    git("commit", "-qm", "sub", cwd=ws)
    open_up(run.workspace)
    g = "git"
    proc = sh(run, f"""
        set -e
        # the tree's own HOME: its global config (upload-pack reads no -c safe.directory)
        git config --global safe.directory '*' && git config --global user.name t
        git config --global user.email t@e.invalid
        git config --global protocol.file.allow always
        cd main
        echo a >> README && {g} commit -qam a
        {g} branch feature && {g} checkout -q feature
        echo b > b && {g} add b && {g} commit -qm b
        {g} checkout -q main && echo c > c && {g} add c && {g} commit -qm c
        echo dirty >> README && {g} stash -q && {g} stash pop -q && {g} checkout -q README
        {g} merge -q --no-edit feature
        {g} checkout -q -b topic HEAD~1 && echo d > d && {g} add d && {g} commit -qm d
        {g} rebase -q main
        {g} tag v1
        cd ..
        {g} clone -q --recurse-submodules main deep
        {g} -C main/sub log --oneline >/dev/null && echo s >> main/sub/README
        {g} -C main/sub commit -qam s && {g} -C main add sub && {g} -C main commit -qm bump
        {g} -C main submodule status >/dev/null
        {g} init -q -b main fresh && cd fresh && echo x > x && {g} add x && {g} commit -qm x
        cd .. && {g} clone -q main copy && {g} -C copy fetch -q origin
        {g} init -q --template= bare-template && {g} init -q .
        {g} -C copy log --oneline | wc -l
        """)
    assert proc.returncode == 0, proc.stderr
    assert "moved aside" not in proc.stderr
    assert int(proc.stdout.split()[-1]) >= 6
    assert git("tag", cwd=ws).stdout.split() == ["v1"]
    assert (run.workspace / "deep" / "sub" / "README").exists()
    assert (run.workspace / ".git" / "hooks").is_dir()  # a new top-level repository
    assert not (run.workspace / ".ztsa-quarantine").exists()


# ---- vectors found by attacking the first version ----

def _planted(run, tmp_path, script: str, where: list[str], setup=None) -> Path:
    ws = repo(run.workspace)
    if setup is not None:
        setup(ws)
    marker = tmp_path / "ran"
    os.chmod(tmp_path, 0o777)
    open_up(ws)
    proc = sh(run, f"""
        git config --global safe.directory '*'; git config --global user.name t
        git config --global user.email t@e.invalid
        M='{marker}'
        {script}
        true""")
    assert proc.returncode == 0, proc.stderr
    afterwards([ws / w for w in where], marker)
    return ws


def test_a_repository_hidden_in_the_quarantine_directory(run, tmp_path):
    _planted(run, tmp_path, """
        git init -q .ztsa-quarantine && git -C .ztsa-quarantine commit -q --allow-empty -m x
        git -C .ztsa-quarantine config core.fsmonitor "touch $M; false"
        git add .ztsa-quarantine""", ["", ".ztsa-quarantine"])


def test_a_repository_behind_names_that_look_like_a_git_directory(run, tmp_path):
    _planted(run, tmp_path, """
        touch HEAD objects && git init -q logs && git -C logs commit -q --allow-empty -m x
        git -C logs config core.fsmonitor "touch $M; false"; git add logs""", ["", "logs"])


@pytest.mark.parametrize("commondir", ["../../c \\n", "lnk/../../../c\\n"],
                         ids=["a-trailing-space", "a-symlink-then-dot-dot"])
def test_a_commondir_git_reads_otherwise_than_it_is_written(run, tmp_path, commondir):
    """A repository's commondir as git reads it: only its trailing CRs and LFs dropped,
    and a symlink in it followed before the `..` after it. The audit read it stripped
    and normalised, so it approved a clean bare repository `c` while git used another
    directory, with no HEAD (never found as a repository) and a config of the tree's
    (helper-4)."""
    _planted(run, tmp_path, f"""
        git init -q --bare c
        mkdir -p "c /objects" "c /refs/heads" x/y/z/w x/c/objects x/c/refs/heads
        for d in "c " x/c; do
            printf '[core]\\n\\tbare = false\\n\\tfsmonitor = "touch %s; false"\\n' "$M" \\
                > "$d/config"
        done
        mkdir -p sub/.git && echo 'ref: refs/heads/main' > sub/.git/HEAD
        ln -s ../../x/y/z/w sub/.git/lnk
        printf '{commondir}' > sub/.git/commondir""", ["", "sub"])


def test_a_redirect_through_a_symlink_into_git_objects(run, tmp_path):
    _planted(run, tmp_path, """
        H=.git/objects/ev; git init -q y; mkdir -p $H/a/b; git init -q --bare $H/y/.git
        git config -f $H/y/.git/config core.bare false
        git config -f $H/y/.git/config core.fsmonitor "touch $M; false"
        mkdir x; ln -s ../$H/a/b x/l; echo 'gitdir: l/../../y/.git' > x/.git
        git -C x commit -q --allow-empty -m x; git add x""", ["", "x"])


def test_a_worktree_through_a_symlink_out_of_the_workspace(run, tmp_path):
    home = tmp_path / "home"
    home.mkdir()
    os.chmod(home, 0o777)
    _planted(run, tmp_path, f"""
        mkdir n; cd n; git init -q -b empty; git commit -q --allow-empty -m e
        git checkout -q -b main; mkdir -p .config/git
        printf '[core]\\n\\tfsmonitor = "touch $M; false"\\n' > .config/git/config
        git add .config; git commit -qm x; git checkout -q empty; ln -s {home} ../home
        git config core.worktree ../../home; rm .git/index""", [])
    git("checkout", "-q", "main", cwd=run.workspace / "n", check=False)
    assert not (home / ".config").exists(), "a checkout wrote outside the workspace"


def test_a_directory_made_unreadable_hides_nothing(run, tmp_path):
    _planted(run, tmp_path, """
        mkdir d; git init -q d/r; git -C d/r commit -q --allow-empty -m x
        git -C d/r config core.fsmonitor "touch $M; false"
        git init -q n; printf '#!/bin/sh\\ntouch %s\\n' "$M" > n/.git/hooks/pre-commit
        chmod +x n/.git/hooks/pre-commit; chmod 311 n/.git/hooks d""", ["d/r", "n"])


def test_a_relative_hooks_path_of_a_submodule(run, tmp_path):
    def setup(ws: Path) -> None:
        upstream = repo(tmp_path / "up")
        git("submodule", "add", "-q", str(upstream), "sub", cwd=ws)
        (ws / "sub" / ".githooks").mkdir()
        git("config", "core.hooksPath", ".githooks", cwd=ws / "sub")
    _planted(run, tmp_path, """
        printf '#!/bin/sh\\ntouch %s\\n' "$M" > sub/.githooks/pre-commit
        chmod +x sub/.githooks/pre-commit""", ["sub"], setup)


def test_a_file_an_existing_config_includes_or_runs(run, tmp_path):
    def setup(ws: Path) -> None:
        git("config", "include.path", "../.gitconfig", cwd=ws)
        (ws / ".gitconfig").write_text("[user]\n\tname = t\n")
        (ws / "clean.sh").write_text("#!/bin/sh\ncat\n")
        os.chmod(ws / "clean.sh", 0o755)
        git("config", "filter.x.clean", "./clean.sh", cwd=ws)
        (ws / ".gitattributes").write_text("*.txt filter=x\n")
    _planted(run, tmp_path, """
        printf '[core]\\n\\tfsmonitor = "touch %s; false"\\n' "$M" > .gitconfig
        printf '#!/bin/sh\\ntouch %s\\ncat\\n' "$M" > clean.sh
        echo t > a.txt""", [""], setup)


@pytest.mark.parametrize("how", ["an-argument", "a-module", "a-nested-include"])
def test_what_an_existing_config_runs_or_includes_further(run, tmp_path, how):
    """helper-7: only the first word of a code-running value was a program ztsa kept,
    and only the repository's own configs were read for includes. A filter running
    `sh tools/clean.sh`, one running `python3 -m nbstripout` (as `nbstripout --install`
    writes it: git runs it in the working tree's top, first on Python's path), and a
    tracked include that includes an optional local file: the tree changed or made the
    script, the module or the local file, and the person's next `git status` ran it."""
    def setup(ws: Path) -> None:
        if how == "an-argument":
            (ws / "tools").mkdir()
            (ws / "tools" / "clean.sh").write_text("cat\n")
            git("config", "filter.x.clean", "sh tools/clean.sh", cwd=ws)
        elif how == "a-module":
            git("config", "filter.x.clean", f'"{_sys.executable}" -m nbstripout', cwd=ws)
        else:
            git("config", "include.path", "../.gitconfig", cwd=ws)
            (ws / ".gitconfig").write_text("[include]\n\tpath = .gitconfig.local\n")
        (ws / ".gitattributes").write_text("*.txt filter=x\n")
        (ws / "a.txt").write_text("a\n")
        git("add", "-A", cwd=ws)
        git("commit", "-qm", "setup", cwd=ws)
    _planted(run, tmp_path, {
        "an-argument": """printf 'touch %s; cat\\n' "$M" > tools/clean.sh""",
        "a-module": """printf 'open("%s", "w")\\n' "$M" > nbstripout.py""",
        "a-nested-include": """printf '[core]\\n\\tfsmonitor = "touch %s; false"\\n' "$M" \\
            > .gitconfig.local""",
    }[how] + "\n        echo b > a.txt", [""], setup)


def test_a_rebase_to_do_list_with_a_command(run, tmp_path):
    ws = _planted(run, tmp_path, """
        echo a > a && git add a && git commit -qm a
        GIT_SEQUENCE_EDITOR=true git rebase -q -i HEAD~1 --exec false
        echo "exec touch $M" > .git/rebase-merge/git-rebase-todo""", [""])
    git("rebase", "--continue", cwd=ws, check=False)
    assert not (tmp_path / "ran").exists()


@pytest.mark.parametrize("strategy", ["../../evil", "evil", "ort "])
def test_a_stopped_rebase_whose_merge_strategy_is_a_program(run, tmp_path, strategy):
    """At `git rebase --continue` git runs the strategy of a stopped rebase as
    `git-merge-NAME`: on PATH, and with a slash in NAME as a path from the working tree's
    top (found by helper-23: `../../evil` beside a directory `git-merge-..`). Only git's
    own strategies survive the run."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    if "/" not in strategy:  # on the person's PATH (`ort `: git does not strip it)
        (bindir / f"git-merge-{strategy}").write_text(marker_script(tmp_path / "ran"))
        os.chmod(bindir / f"git-merge-{strategy}", 0o755)
    os.chmod(bindir, 0o755)
    ws = _planted(run, tmp_path, f"""
        mkdir -p git-merge-.. && printf '#!/bin/sh\\ntouch %s\\nexit 1\\n' "$M" > evil
        chmod +x evil
        echo a > a && git add a && git commit -qm a && echo b > b && git add b
        git commit -qm b
        printf 'break\\npick %s\\n' "$(git rev-parse HEAD)" > "$TMPDIR/todo"
        GIT_SEQUENCE_EDITOR="cp $TMPDIR/todo" git rebase -q -i -s ort HEAD~1 || true
        printf '%s\\n' '{strategy}' > .git/rebase-merge/strategy""", [""])
    env_path = f"{bindir}:{os.environ.get('PATH', '')}"
    subprocess.run([GIT, "rebase", "--continue"], cwd=ws, capture_output=True,
                   env={**os.environ, **ID, "PATH": env_path, "GIT_EDITOR": "true",
                        "GIT_CONFIG_COUNT": "1", "GIT_CONFIG_KEY_0": "safe.directory",
                        "GIT_CONFIG_VALUE_0": "*"}, timeout=60)
    assert not (tmp_path / "ran").exists(), "the planted strategy ran outside the sandbox"


def test_a_stopped_cherry_pick_whose_options_name_a_program(run, tmp_path):
    """`git cherry-pick --continue` reads its strategy from .git/sequencer/opts."""
    ws = _planted(run, tmp_path, """
        mkdir -p git-merge-.. && printf '#!/bin/sh\\ntouch %s\\nexit 1\\n' "$M" > evil
        chmod +x evil; git add evil git-merge-.. 2>/dev/null; git commit -qm evil
        git checkout -q -b side HEAD~1 && echo s > s && git add s && git commit -qm s
        echo t > t && git add t && git commit -qm t
        git checkout -q main; echo s2 > s && git add s && git commit -qm s2
        git cherry-pick side~1 side >/dev/null 2>&1 || true
        printf '[options]\\n\\tstrategy = ../../evil\\n' > .git/sequencer/opts""", [""])
    git("checkout", "--theirs", ".", cwd=ws, check=False)
    git("add", "-A", cwd=ws, check=False)
    git("cherry-pick", "--continue", cwd=ws, check=False)
    assert not (tmp_path / "ran").exists(), "the planted strategy ran outside the sandbox"


def test_git_rewrites_an_existing_config_with_its_own_keys_only(run, tmp_path):
    """`git submodule update --init` and a branch's upstream rewrite the protected
    config (config.lock renamed onto it): the helper performs that rewrite when every
    added line is a key git writes in ordinary work, and refuses one that could run a
    program; what is refused never reaches the config, and nothing planted runs."""
    upstream = repo(run.workspace / "up")
    ws = repo(run.workspace / "main")
    git("submodule", "add", "-q", str(upstream), "sub", cwd=ws)
    git("commit", "-qm", "sub", cwd=ws)
    git("submodule", "deinit", "-q", "-f", "sub", cwd=ws)
    open_up(run.workspace)
    marker = tmp_path / "ran"
    os.chmod(tmp_path, 0o777)
    proc = sh(run, f"""
        git config --global safe.directory '*'; git config --global protocol.file.allow always
        cd main
        git submodule update -q --init && echo init-ok
        git checkout -q -b feat && git branch -q --set-upstream-to=main feat && echo up-ok
        git config core.fsmonitor 'touch {marker}' || echo fsmonitor-refused
        git config include.path ../evil.cfg || echo include-refused
        true""")
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.split()
    assert "init-ok" in out and "up-ok" in out, proc.stdout + proc.stderr
    assert (ws / "sub" / "README").exists()
    config = (ws / ".git" / "config").read_text()
    assert "fsmonitor" not in config and "evil.cfg" not in config
    if run.mode != "nouserns":
        assert "fsmonitor-refused" in out and "include-refused" in out
        assert "[submodule \"sub\"]" in config and "merge = refs/heads/main" in config
    else:  # no helper: the audit after the run gave the config its old text back
        assert "moved aside" in proc.stderr
    afterwards([ws, ws / "sub"], marker)


def test_a_lock_file_changed_after_the_rename_reaches_nothing(run, tmp_path):
    """The helper writes its own copy of config.lock: the tree's descriptor of the lock
    file, kept open across the rename, writes an orphan; a symlinked lock is refused."""
    if run.mode == "nouserns":
        pytest.skip("no file helper without user namespaces (named by ztsa)")
    ws = repo(run.workspace)
    open_up(ws)
    before = (ws / ".git" / "config").read_text()
    code = ("import os\n"
            "old = open('.git/config').read()\n"
            "fd = os.open('.git/config.lock', os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)\n"
            "os.write(fd, (old + '[user]\\n\\tname = t\\n').encode())\n"
            "os.rename('.git/config.lock', '.git/config')\n"
            "os.write(fd, b'[core]\\n\\tfsmonitor = touch /tmp/x\\n')\n"
            "os.symlink('/etc/hostname', '.git/config.lock')\n"
            "try: os.rename('.git/config.lock', '.git/config'); print('renamed')\n"
            "except OSError as e: print('refused', e.errno)\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert "refused" in proc.stdout
    config = (ws / ".git" / "config").read_text()
    assert config == before + "[user]\n\tname = t\n"


@pytest.mark.parametrize("payload", [
    '[includeIf "gitdir:/"] path = ../evil.cfg ;"]\n',
    '[remote "x.url=y"]\n\tuploadpack = touch MARK\n',
    '[submodule "s"]\n\tupdate = "" !touch MARK\n',
    '[submodule "s"]\n\turl = "" ext::sh -c touch% MARK\n',
    '[remote "origin"]\n\tpushurl = /elsewhere\n\tmirror = true\n',
    '[core]\n\trepositoryformatversion = 9\n',
], ids=["key-after-header", "equals-in-subsection", "empty-quotes-command", "ext-url",
        "push-elsewhere", "format"])
def test_a_rewrite_git_reads_differently_is_refused(run, tmp_path, payload):
    """Found by attacking the rewrite: lines the first parser read differently from git,
    and keys that send git elsewhere or break the repository. None reaches the config
    (or survives the audit without the helper), and a planted repository that made the
    audit raise no longer stops it."""
    ws = repo(run.workspace)
    git("remote", "add", "origin", str(tmp_path / "nowhere"), cwd=ws)
    before = (ws / ".git" / "config").read_text()
    marker = tmp_path / "ran"
    os.chmod(tmp_path, 0o777)
    open_up(ws)
    text = payload.replace("MARK", str(marker))
    (tmp_path / "payload").write_text(text)
    os.chmod(tmp_path / "payload", 0o644)
    sh(run, f"""
        printf '[core]\\n\\tfsmonitor = "touch {marker}; false"\\n' > evil.cfg
        cat .git/config {tmp_path / "payload"} > .git/config.lock
        mv .git/config.lock .git/config
        mkdir -p crash/objects crash/refs; echo 'ref: refs/heads/main' > crash/HEAD
        printf '[core]\\n\\tworktree = a\\000b\\n' > crash/config
        true""")
    assert (ws / ".git" / "config").read_text() == before
    afterwards([ws], marker)
    assert git("status", cwd=ws, check=False).returncode == 0


# the hook `pre-commit install` writes, in its shape: its marker, the config it names,
# and a body that runs each `entry:` of that config (here with the shell, as pre-commit
# does for `language: system`); the real tool when it is installed
PRE_COMMIT_HOOK = """#!/usr/bin/env bash
# File generated by pre-commit: https://pre-commit.com
# ID: 138fd403232d2ddd5efb44317e38bf03
ARGS=(hook-impl --config=.pre-commit-config.yaml --hook-type=pre-commit)
HERE="$(cd "$(dirname "$0")" && pwd)"
ARGS+=(--hook-dir "$HERE" -- "$@")
cd "$(git rev-parse --show-toplevel)" || exit 1
[ -f .pre-commit-config.yaml ] || exit 0
sed -n 's/^ *entry: *//p' .pre-commit-config.yaml | while read -r cmd; do sh -c "$cmd"; done
"""
LEFTHOOK_HOOK = """#!/bin/sh
# lefthook's pre-commit: runs `lefthook run pre-commit`, which reads lefthook.yml
cd "$(git rev-parse --show-toplevel)" || exit 1
for f in lefthook.yml .lefthook.yml; do
  [ -f "$f" ] && sed -n 's/^ *run: *//p' "$f" | while read -r cmd; do sh -c "$cmd"; done
done
exit 0
"""


@pytest.mark.parametrize(("hook", "config", "key"), [
    (PRE_COMMIT_HOOK, ".pre-commit-config.yaml", "entry"),
    (LEFTHOOK_HOOK, "lefthook.yml", "run"),
    (LEFTHOOK_HOOK, ".lefthook.yml", "run"),
])
def test_the_configuration_an_installed_hook_manager_runs(run, tmp_path, hook, config, key):
    """With pre-commit's or lefthook's hook installed, git runs at every commit what
    their configuration in the working tree lists: a hook in all but name. Written or
    made by the tree (the hook itself untouched), it must not run at the person's next
    commit."""
    ws = repo(run.workspace)
    hook_path = ws / ".git" / "hooks" / "pre-commit"
    hook_path.write_text(hook)
    hook_path.chmod(0o755)
    marker = tmp_path / "ran"
    os.chmod(tmp_path, 0o777)
    (ws / config).write_text(f"# before the run\n  {key}: true\n")
    for fresh in (False, True):
        if fresh:
            (ws / config).unlink(missing_ok=True)
        open_up(ws)
        proc = sh(run, f"printf '  {key}: touch {marker}\\n' >> {config}; true")
        assert proc.returncode == 0, proc.stderr
        afterwards([ws], marker)
    assert hook_path.read_text() == hook  # the hook was never the way in


def test_a_value_longer_than_the_judge_reads_never_reaches_the_config(run, tmp_path):
    """The helper judged git's own rewrite of a protected config on each value cut to
    1,599 bytes, where git reads it whole: a core.worktree whose first 1,599 bytes stay
    in the workspace and whose rest climbs to /etc was accepted, live for the rest of
    the run (helper-6). Judged inside the run, by what git there reads."""
    if run.mode == "nouserns":
        pytest.skip("no file helper without user namespaces: the audit after the run "
                    "judges it (test_a_rewrite_git_reads_differently_is_refused)")
    ws = repo(run.workspace)
    open_up(ws)
    value = ".." + "/." * 800 + "/.." * 40 + "/etc"
    (tmp_path / "payload").write_text(f"[core]\n\tworktree = {value}\n")
    os.chmod(tmp_path, 0o777)
    os.chmod(tmp_path / "payload", 0o644)
    proc = sh(run, f"""
        cat .git/config {tmp_path / "payload"} > .git/config.lock
        mv .git/config.lock .git/config; echo "moved $?"
        {INSIDE} rev-parse --show-toplevel""")
    assert proc.stdout.split("\n")[1] == str(ws), proc.stdout  # not /etc
    assert "worktree" not in (ws / ".git" / "config").read_text()
