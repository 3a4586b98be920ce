"""The tree's share of its user's resources (issue #45): inotify instances, locks on
files outside, the private HOME and TMPDIR's disk. Each test takes what it can inside,
then judges from the host while the tree still holds it: the host user's own
inotify_init, a host-side `flock -n` and write lock, what reached the host's disk."""

from __future__ import annotations

import contextlib
import fcntl
import glob
import os
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ensure_user

# root, an unprivileged user, and one without user namespaces (no file helper, no user
# namespace of the tree's: there ztsa must say what it lacks)
RUN_MODES = ("root", "user", "nouserns")

HOLD = 20  # seconds the tree holds what it took; the test ends it sooner


def _as_tree_user(run, argv: list[str]) -> list[str]:
    """argv as the tree's user on the host (root; else the suite's user)."""
    if run.mode == "root":
        return argv
    user = ensure_user()
    return ["setpriv", "--reuid", user, "--regid", user, "--clear-groups", *argv]


def _start(run, *cmd: str, extra: tuple[str, ...] = ()) -> tuple[subprocess.Popen[str], Path]:
    argv, log_path = run.command(*cmd, extra=list(extra))
    # a session of its own: _end signals its whole group, so ztsa gets the SIGTERM also
    # where it runs under `unshare ... sh -c` (which would not pass it on)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True, cwd=run.workspace, start_new_session=True)
    return proc, log_path


def _wait_for(path: Path, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    end = time.monotonic() + timeout
    while not path.exists():
        if proc.poll() is not None:
            out, err = proc.communicate()
            pytest.fail(f"the tree ended before it was ready: {out} {err}")
        if time.monotonic() > end:
            proc.kill()
            pytest.fail("the tree never got ready")
        time.sleep(0.05)


def _end(run, proc: subprocess.Popen[str], log_path: Path
         ) -> tuple[str, str, list[dict[str, object]]]:
    """Stop the tree (SIGTERM to ztsa, forwarded) and read what it said."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(proc.pid, signal.SIGTERM)
    try:
        out, err = proc.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
    return out, err, run.finish(err, log_path)


HOST_INOTIFY = ("import ctypes; l = ctypes.CDLL(None, use_errno=True); "
                "fd = l.inotify_init1(0); print(fd, ctypes.get_errno())")


def test_the_tree_cannot_take_every_inotify_instance_of_its_user(run, progs):
    ready = run.workspace / "ready"
    proc, log_path = _start(run, str(progs / "res_hold"), "inotify", str(ready), str(HOLD))
    _wait_for(ready, proc)
    host = subprocess.run(_as_tree_user(run, ["/usr/bin/python3", "-c", HOST_INOTIFY]),
                          capture_output=True, text=True, timeout=30)
    out, err, events = _end(run, proc, log_path)
    taken = int(out.split()[1])
    env = next(e for e in events if e["event"] == "env")
    if run.mode == "nouserns":  # no user namespace of the tree's: said, not held
        assert "lacks inotify limits of the tree's own" in err
        assert any("inotify" in m for m in env["resources_missing"])  # type: ignore[union-attr]
        return
    fd, _errno = host.stdout.split()
    # the host user's own inotify_init still works while the tree holds all it could
    assert int(fd) >= 0, (host.stdout, out)
    assert taken > 0
    assert env["inotify"][0] == taken  # type: ignore[index]


def _outside_file() -> Path:
    d = Path(tempfile.mkdtemp(prefix="ztsa-locks-"))
    os.chmod(d, 0o755)
    f = d / "host.lock"
    f.write_text("the host's\n")
    os.chmod(f, 0o644)
    return f


def _host_can_lock(path: Path) -> tuple[bool, bool]:
    """(a host `flock -n` succeeds, a host fcntl write lock succeeds), each released."""
    flock = subprocess.run(["flock", "-n", str(path), "true"], timeout=30).returncode == 0
    with open(path, "r+") as f:
        try:
            fcntl.lockf(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            return flock, False
        fcntl.lockf(f, fcntl.LOCK_UN)
    return flock, True


def test_locks_on_a_file_outside_are_refused(run, progs):
    target = _outside_file()
    ready = run.workspace / "ready"
    proc, log_path = _start(run, str(progs / "res_hold"), "locks", str(target), str(ready),
                            str(HOLD))
    _wait_for(ready, proc)
    flock_ok, lockf_ok = _host_can_lock(target)
    out, err, events = _end(run, proc, log_path)
    if run.mode == "nouserns":  # no file helper: said, not held
        assert "lacks refusing locks on files outside the writable places" in err
        return
    # the host's lockers were not kept out while the tree ran
    assert flock_ok and lockf_ok, out
    assert "flock_sh -1 errno 37" in out and "flock_ex -1 errno 37" in out, out  # ENOLCK
    assert "setlk -1 errno 37" in out and "ofd -1 errno 37" in out, out
    denied = [e for e in events if e["event"] == "deny" and e.get("syscall") in
              ("flock", "fcntl")]
    assert denied and str(target) in str(denied[0]["path"])


def test_locks_in_the_workspace_hold(run, progs):
    """The positive control: the same locks on a workspace file are taken, and hold
    against the host's lockers (the helper's lock on its duplicate is the tree's)."""
    target = run.workspace / "tree.lock"
    target.write_text("the tree's\n")
    os.chmod(target, 0o666)
    ready = run.workspace / "ready"
    proc, log_path = _start(run, str(progs / "res_hold"), "locks", str(target), str(ready),
                            str(HOLD))
    _wait_for(ready, proc)
    flock_ok, lockf_ok = _host_can_lock(target)
    out, _err, _ = _end(run, proc, log_path)
    assert "flock_sh 0" in out and "flock_ex 0" in out, out
    assert "setlk 0" in out and "ofd 0" in out, out
    assert not flock_ok and not lockf_ok  # held for real while the tree ran


def test_a_lock_that_waits_is_taken_when_the_host_lets_go(run, progs):
    target = run.workspace / "wait.lock"
    target.write_text("x\n")
    os.chmod(target, 0o666)
    with open(target, "r+") as held, open(target, "r+") as held2:
        fcntl.flock(held, fcntl.LOCK_EX)
        fcntl.lockf(held2, fcntl.LOCK_EX)
        argv, _log = run.command(str(progs / "res_hold"), "wait", str(target))
        started = time.monotonic()
        proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                text=True, cwd=run.workspace)
        time.sleep(2)
        assert proc.poll() is None  # still waiting
        fcntl.flock(held, fcntl.LOCK_UN)
        time.sleep(1.5)
        fcntl.lockf(held2, fcntl.LOCK_UN)
        out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert out.split("\n")[:2] == ["flock 0", "ofd 0"], out
    assert time.monotonic() - started >= 3.5


WRITE = ("import errno, os, sys\n"
         "n = 0\n"
         "with open(os.path.join(os.environ['TMPDIR'], 'big'), 'wb') as f:\n"
         "    try:\n"
         "        for n in range(1, 129):\n"
         "            f.write(b'x' * (1 << 20)); f.flush()\n"
         "    except OSError as e:\n"
         "        print('stopped', n, errno.errorcode[e.errno])\n"
         "    else:\n"
         "        print('wrote', n)\n"
         "sys.stdout.flush()\n"
         "open(sys.argv[1], 'w').close()\n"
         "import time; time.sleep(int(sys.argv[2]))\n")


def _host_private_bigs() -> list[str]:
    return glob.glob("/tmp/ztsa-*/ztsa-run-*/tmp/big")


def test_the_private_tmpdir_is_bounded_and_off_the_hosts_disk(run):
    ready = run.workspace / "ready"
    proc, log_path = _start(run, run.python, "-c", WRITE, str(ready), str(HOLD),
                            extra=("--max-disk", "32M"))
    _wait_for(ready, proc)
    on_host = _host_private_bigs()
    out, err, events = _end(run, proc, log_path)
    env = next(e for e in events if e["event"] == "env")
    if run.mode == "nouserns":  # no mount namespace: said, not held
        assert "lacks a bound on the private HOME and TMPDIR" in err
        assert env["max_disk"] == 0
        return
    # ENOSPC inside at the bound; nothing of it on the host's disk
    words = out.split()
    assert words[0] == "stopped" and words[2] == "ENOSPC", out
    assert 24 <= int(words[1]) <= 33, out
    assert on_host == [], on_host
    assert env["max_disk"] == 32 << 20


def test_the_workspace_growth_is_in_the_summary(run):
    proc, events = run(run.python, "-c",
                       "open('grown.bin', 'wb').write(b'x' * (16 << 20))")
    assert proc.returncode == 0, proc.stderr
    summary = events[-1]
    assert summary["event"] == "summary"
    grown = summary["workspace_fs_used_after"] - summary["workspace_fs_used_before"]
    assert grown >= 8 << 20, summary  # other writers on that file system may differ
    assert (run.workspace / "grown.bin").stat().st_size == 16 << 20


def test_the_default_bound_leaves_an_ordinary_private_home_alone(run):
    """HOME's prepared files (git identity, tool configuration) are there, writable as
    before: `git config --global` and a write into ~/.cache work under the bound."""
    proc, _ = run("sh", "-c", "git config --global ztsa.test yes && "
                  "mkdir -p $HOME/.cache/x && echo ok > $HOME/.cache/x/f && "
                  "git config --global ztsa.test && cat $HOME/.cache/x/f")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["yes", "ok"]


if __name__ == "__main__":  # pragma: no cover
    sys.exit(pytest.main([__file__]))
