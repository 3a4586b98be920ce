"""An ordinary project runs under ztsa exec: what a careful maintainer merely forgot (no
lockfile, no hashes) is a warning shown to the person, never a refusal (issue #41).

Real projects in real temporary git repositories, real pytest and node, the real gate:
before the principle, both exited 3 (SUP001, SUP012) and the command never ran."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

GIT_ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@e.invalid",
           "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@e.invalid",
           "GIT_CONFIG_NOSYSTEM": "1", "HOME": "/nonexistent"}


def _run(run, *cmd: str, **kw):
    """ztsa exec as a user would start it (test_gate_under_exec's way): in the
    unprivileged case that user's own HOME and a PATH of system directories, not root's,
    and no PYTHONPATH given back to CMD (ENV009 would rightly block it): the test venv's
    interpreter finds its packages by its own pyvenv.cfg."""
    if run.python_needs_path:
        pytest.skip("this venv's interpreter is hidden from the test user (pyenv's under "
                    "/root): its packages would need PYTHONPATH, which ENV009 blocks")
    if run.mode != "root":
        home = run.workspace.parent / "ztsa-escape-home"
        home.mkdir(exist_ok=True)
        os.chmod(home, 0o777)
        kw["wrap"] = ["env", f"HOME={home}", "PATH=/usr/local/bin:/usr/bin:/bin"]
    argv, _ = run.command(*cmd, pythonpath=False, log=False, **kw)
    return subprocess.run(argv, capture_output=True, text=True, timeout=180,
                          cwd=run.workspace)


def _git_project(ws: Path, files: dict[str, str]) -> None:
    """ws as a git repository that committed files (owned by whoever runs the tree)."""
    git = shutil.which("git")
    if git is None:
        pytest.fail("git is required")
    for rel, text in files.items():
        path = ws / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    env = {**os.environ, **GIT_ENV}
    subprocess.run([git, "init", "-q", str(ws)], check=True, env=env)
    subprocess.run([git, "-C", str(ws), "add", "."], check=True, env=env)
    subprocess.run([git, "-C", str(ws), "commit", "-qm", "init"], check=True, env=env)
    for dirpath, dirnames, filenames in os.walk(ws):  # the unprivileged case writes too
        for name in dirnames + filenames:
            os.chmod(os.path.join(dirpath, name), 0o777 if name in dirnames else 0o666)


PYPROJECT_TESTS = {
    # pinned, without hashes: SUP012 (and SUP001: no lockfile or fully hashed file)
    "requirements.txt": "requests==2.31.0\n",
    "test_sample.py": "import os\n\n\ndef test_it():\n"
                      "    assert os.environ.get('ZTSA_TEST_FAIL') != '1'\n",
}


@pytest.mark.parametrize("fails", [False, True], ids=["passing", "failing"])
def test_pytest_runs_in_a_pinned_python_project_under_the_default_profile(run, fails):
    _git_project(run.workspace, PYPROJECT_TESTS)
    marker = run.workspace / "ran"
    # the test module writes where the tree may write: proof that pytest itself ran it
    (run.workspace / "conftest.py").write_text(
        f"open({str(marker)!r}, 'w').write('yes')\n")
    os.chmod(run.workspace / "conftest.py", 0o666)
    env_flag = ["--env", "ZTSA_TEST_FAIL=1"] if fails else []
    # no --profile: exec's default (untrusted)
    proc = _run(run, run.python, "-m", "pytest", "-q", "-p", "no:cacheprovider",
                "test_sample.py", profile="untrusted", extra=env_flag)
    assert proc.returncode == (1 if fails else 0), proc.stderr + proc.stdout
    assert marker.read_text() == "yes"
    assert ("1 failed" if fails else "1 passed") in proc.stdout
    # the person is told what is missing, as a warning
    assert "gate passed" in proc.stderr and "WARN" in proc.stderr, proc.stderr
    assert "SUP012" in proc.stderr and "not pinned and hashed" in proc.stderr, proc.stderr
    assert "has no --hash" not in proc.stderr  # a line a warning: the evidence is check's
    assert "gate failed" not in proc.stderr


def test_quiet_keeps_the_warnings_to_itself(run):
    _git_project(run.workspace, PYPROJECT_TESTS)
    proc = _run(run, run.python, "-c", "print('ran')", profile="untrusted",
                extra=["--quiet"])
    assert proc.returncode == 0 and proc.stdout == "ran\n", proc.stderr
    assert "SUP012" not in proc.stderr


@pytest.mark.parametrize("profile", ["dependency", "untrusted"])
def test_node_runs_in_an_npm_project_without_a_lockfile(run, profile):
    if shutil.which("node") is None:
        pytest.fail("node is required")
    _git_project(run.workspace, {
        "package.json": json.dumps({"name": "app", "version": "1.0.0",
                                    "dependencies": {"left-pad": "^1.3.0"}}, indent=2),
        "index.js": "console.log('hello from the project');\n"})
    proc = _run(run, "node", "-e", "require('./index.js'); process.exit(7)",
                profile=profile)
    assert proc.returncode == 7, proc.stderr
    assert proc.stdout == "hello from the project\n"
    assert "SUP001" in proc.stderr and "gate passed" in proc.stderr, proc.stderr


def test_a_planted_install_redirect_still_blocks(run):
    """The malicious twin: the same npm project whose .npmrc sends the install to
    another registry (what an attacker plants) is refused, and the command never runs."""
    _git_project(run.workspace, {
        "package.json": json.dumps({"name": "app", "version": "1.0.0",
                                    "dependencies": {"left-pad": "^1.3.0"}}),
        ".npmrc": "registry=https://npm.evil.invalid/\n"})
    marker = run.workspace / "ran"
    proc = _run(run, "sh", "-c", f"echo yes > {marker}", profile="dependency")
    assert proc.returncode == 3, proc.stderr
    assert not marker.exists()
    assert "SUP007" in proc.stderr
