"""Escapes from the tracer or the filter: each asserts on the process table, the kernel's
answer or the exit status, never on ztsa's report alone."""

from __future__ import annotations

import os
import signal
import time

import pytest

# root, an unprivileged user, and an unprivileged user without user namespaces (no file
# helper: CMD is ztsa's direct child, and the C loop handles the process events)
RUN_MODES = ("root", "user", "nouserns")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with open(f"/proc/{pid}/stat") as f:
        return f.read().split(") ")[1][0] != "Z"


@pytest.mark.parametrize(("what", "expect"), [
    ("io_uring_setup", "-1 errno 1"),
    ("clone_untraced", "-1 errno 1"),
    ("clone3", "-1 errno 38"),
    ("seccomp", "-1 errno 1"),
    ("prctl_seccomp", "-1 errno 1"),
    ("traceme", "-1 errno 1"),
    ("attach_parent", "-1 errno 1"),
    ("vm_writev_parent", "-1 errno 1"),
    ("packet_socket", "-1 errno 97"),
])
def test_denied_syscalls(run, progs, what, expect):
    proc, _ = run(str(progs / "rawsys"), what)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"{what} {expect}"


def test_raw_socket_needs_a_capability_the_tree_lacks(run, progs):
    proc, _ = run(str(progs / "rawsys"), "raw_socket")
    assert proc.stdout.strip() == "raw_socket -1 errno 1"


@pytest.mark.parametrize("what", ["int80", "x32"])
def test_foreign_syscall_entry_kills_the_process(run, progs, what):
    proc, events = run(str(progs / "rawsys"), what)
    assert proc.returncode == 128 + signal.SIGSYS
    assert proc.stdout == ""  # killed before it could print
    assert any(e["event"] == "exit" and e["signal"] == "SIGSYS" for e in events)


TRACER = ("[int(line.split()[1]) for line in open('/proc/self/status') "
          "if line.startswith('TracerPid:')][0]")


@pytest.mark.parametrize("target", ["tracer", "helper"])
def test_write_to_tracer_memory_through_proc(run, target):
    """ztsa itself (the tracer), and CMD's parent (ztsa's file helper)."""
    pid = TRACER if target == "tracer" else "os.getppid()"
    code = ("import os\n"
            f"target = {pid}\n"
            "try:\n"
            "    fd = os.open(f'/proc/{target}/mem', os.O_RDWR); print('opened')\n"
            "except OSError as e: print('denied', e.errno)\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.stdout.startswith("denied"), proc.stdout


@pytest.mark.parametrize("log", [True, False], ids=["log", "no-log"])
def test_sigkill_to_ztsa_kills_the_tree(run, tmp_path, log):
    marker = run.workspace / "sleeper.pid"
    code = ("import os, signal, subprocess, time\n"
            "p = subprocess.Popen(['sleep', '300'])\n"
            f"open({str(marker)!r}, 'w').write(str(p.pid))\n"
            "time.sleep(0.2)\n"
            f"os.kill({TRACER}, signal.SIGKILL)\n"
            "time.sleep(30)\n")
    started = time.monotonic()
    run(run.python, "-c", code, log=log)
    assert time.monotonic() - started < 20
    sleeper = int(marker.read_text())
    deadline = time.monotonic() + 5
    while _alive(sleeper) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(sleeper)


@pytest.mark.parametrize("log", [True, False], ids=["log", "no-log"])
def test_setsid_daemon_does_not_outlive_ztsa(run, log):
    marker = run.workspace / "daemon.pid"
    code = ("import os, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            f"        open({str(marker)!r}, 'w').write(str(os.getpid()))\n"
            "        time.sleep(300)\n"
            "    os._exit(0)\n"
            "time.sleep(0.5)\n")
    proc, events = run(run.python, "-c", code, log=log)
    assert proc.returncode == 0, proc.stderr
    daemon = int(marker.read_text())
    deadline = time.monotonic() + 5
    while _alive(daemon) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(daemon)
    assert "1 killed at exit" in proc.stderr
    if not log:
        return
    killed = [e for e in events if e["event"] == "kill"]
    assert [e["pid"] for e in killed] == [daemon]
    assert killed[0]["argv"][0].endswith(("python3", "python3.11", "python"))


def test_memfd_execveat_is_logged_with_the_real_executable(run, progs):
    proc, events = run(str(progs / "memfd_exec"))
    assert proc.returncode == 0, proc.stderr
    execs = [e for e in events if e["event"] == "exec"]
    assert execs[-1]["executable"].startswith("/memfd:payload")
    assert execs[-1]["argv"] == ["payload"]


@pytest.mark.parametrize("log", [True, False], ids=["log", "no-log"])
def test_exit_codes(run, log):
    assert run(run.python, "-c", "raise SystemExit(42)", log=log)[0].returncode == 42
    killed = run(run.python, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGTERM)",
                 log=log)
    assert killed[0].returncode == 128 + signal.SIGTERM
    assert run("no-such-command-ztsa", log=log)[0].returncode == 127
    assert run(str(run.workspace), log=log)[0].returncode == 126  # a directory: not run


@pytest.mark.parametrize("log", [True, False], ids=["log", "no-log"])
def test_group_stop_and_continue(run, log):
    code = ("import os, signal, subprocess, time\n"
            "p = subprocess.Popen(['sleep', '30'])\n"
            "time.sleep(0.2)\n"
            "os.kill(p.pid, signal.SIGSTOP)\n"
            "time.sleep(0.3)\n"
            "state = open(f'/proc/{p.pid}/stat').read().split(') ')[1][0]\n"
            "os.kill(p.pid, signal.SIGCONT); os.kill(p.pid, signal.SIGTERM)\n"
            "print('state', state, 'status', p.wait())\n")
    proc, _ = run(run.python, "-c", code, log=log)
    assert proc.stdout.strip() in ("state T status -15", "state t status -15"), proc.stdout


@pytest.mark.parametrize("log", [True, False], ids=["log", "no-log"])
def test_exec_from_a_non_leader_thread_stays_traced(run, progs, listeners, log):
    denied = listeners.add_tcp("denied")
    code = (f"import socket, os; s = socket.socket()\n"
            f"try: s.connect(('127.0.0.1', {denied})); print('connected')\n"
            "except OSError as e: print('denied', e.errno)\n")
    proc, events = run(str(progs / "thread_exec"), run.python, code, log=log)
    assert proc.stdout.strip() == "denied 1", proc.stderr
    assert listeners.settle()["denied"] == 0
    assert "2 exec(s)" in proc.stderr  # the program, then Python from its thread
    if not log:
        return
    execs = [e for e in events if e["event"] == "exec"]
    assert execs[-1]["argv"][1:2] == ["-c"]
    assert events[-1]["event"] == "summary" and events[-1]["status"] == 0
