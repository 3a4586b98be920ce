"""Under `ztsa exec` the gate judges the environment CMD will run in: what the
confinement removes (root, no filter, no NoNewPrivs, capabilities, a writable system,
secrets in the environment) is reported as handled and does not block; what it does not
remove still blocks; a control this kernel lacks makes its findings block again."""

from __future__ import annotations

import os
import subprocess

import pytest

RUN_MODES = ("root", "user", "nouserns")


def gate_run(run, *cmd, **kw):
    """The run as a user would start it: in the unprivileged case, that user's own HOME
    and a PATH of system directories, not root's (the runner is root's child)."""
    if run.mode != "root":
        home = run.workspace.parent / "ztsa-escape-home"
        home.mkdir(exist_ok=True)
        os.chmod(home, 0o777)
        kw["wrap"] = ["env", f"HOME={home}", "PATH=/usr/local/bin:/usr/bin:/bin"]
    argv, _ = run.command(*cmd, pythonpath=False, log=False, **kw)
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                          cwd=run.workspace)
    return proc, []


def blocks(stderr: str) -> set[str]:
    return {line.split()[1] for line in stderr.splitlines()
            if line.startswith(("BLOCK ", "BLOCK?"))}


@pytest.mark.parametrize("profile", ["untrusted", "dependency", "repo"])
def test_a_clean_repository_runs_under_every_profile(run, profile):
    (run.workspace / "README.md").write_text("hello\n")
    marker = run.workspace / "ran"
    proc, _ = gate_run(run, "/bin/sh", "-c", f"touch {marker}", profile=profile)
    if run.mode == "nouserns" and profile != "repo":
        # the kernel lacks the namespaces: refused, and what blocks is their absence
        # (EXEC001 under untrusted) or a finding only they would have handled (here the
        # harness's writable /sys and shared PID namespace)
        assert proc.returncode == 3, proc.stderr
        assert blocks(proc.stderr) <= {"EXEC001", "ENV007", "ENV008", "AGT007"}, proc.stderr
        assert ("EXEC001" in blocks(proc.stderr)) == (profile == "untrusted")
        assert not marker.exists()
        return
    assert proc.returncode == 0, proc.stderr
    assert marker.exists()
    assert "gate FAILED" not in proc.stderr


def test_without_the_namespaces_their_findings_block_again(run):
    """AGT007 (agent files writable) is handled by the read-only mounts: without user
    namespaces there are none, and under untrusted it blocks on its own account."""
    if run.mode != "nouserns":
        pytest.skip("the case of a kernel without user namespaces")
    (run.workspace / "CLAUDE.md").write_text("rules\n")
    os.chmod(run.workspace / "CLAUDE.md", 0o666)
    proc, _ = gate_run(run, "/bin/true", profile="untrusted")
    assert proc.returncode == 3
    assert "AGT007" in blocks(proc.stderr), proc.stderr


def test_a_finding_the_confinement_keeps_still_blocks(run):
    """--keep-cap keeps a capability: ENV006 is the machine's finding and CMD's."""
    if run.mode != "root" or os.geteuid() != 0:
        pytest.skip("only root holds capabilities to keep")
    marker = run.workspace / "ran"
    proc, _ = gate_run(run, "/bin/sh", "-c", f"touch {marker}", profile="untrusted",
                       extra=["--keep-cap", "NET_RAW"])
    assert proc.returncode == 3, proc.stderr
    assert "BLOCK  ENV006" in proc.stderr
    assert not marker.exists()


def test_a_secret_passed_with_env_is_no_longer_handled(run):
    marker = run.workspace / "ran"
    argv = ["/bin/sh", "-c", f"touch {marker}"]
    proc, _ = gate_run(run, *argv, profile="untrusted",
                       extra=["--env", "GITHUB_TOKEN=ghp_" + "a1B2" * 9])
    # the token is set for CMD only: the caller's environment has none, and passes
    assert proc.returncode in (0, 3), proc.stderr
    os.environ["ZTSA_TEST_SECRET_TOKEN"] = "ghp_" + "a1B2" * 9
    try:
        proc, _ = gate_run(run, *argv, profile="untrusted",
                           extra=["--env", "ZTSA_TEST_SECRET_TOKEN"])
        assert proc.returncode == 3, proc.stderr
        assert "FS006" in blocks(proc.stderr), proc.stderr
        if run.mode == "nouserns":
            return
        proc, _ = gate_run(run, *argv, profile="untrusted")  # not passed: handled
        assert proc.returncode == 0, proc.stderr
    finally:
        del os.environ["ZTSA_TEST_SECRET_TOKEN"]
