"""Escapes from the tracer or the filter: each asserts on the process table, the kernel's
answer or the exit status, never on ztsa's report alone."""

from __future__ import annotations

import errno
import fcntl
import os
import signal
import subprocess
import sys
import tempfile
import time

import pytest

from conftest import ensure_user, pids_with, ztsa_pid

# root, an unprivileged user, and an unprivileged user without user namespaces (no file
# helper: CMD is ztsa's direct child, and the C loop handles the process events)
RUN_MODES = ("root", "user", "nouserns")


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ")[1][0] != "Z"
    except FileNotFoundError:  # reaped between the two looks
        return False


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
def test_sigkill_to_ztsa_kills_the_tree(run, log):
    """ztsa killed from outside (the tree cannot signal it): every process of the tree
    ends with it."""
    digits = f"{int.from_bytes(os.urandom(3), 'big'):08d}1"
    token = f"300.{digits}"  # built inside, so that only the sleeper's argv holds it
    marker = run.workspace / "ready"
    code = ("import os, signal, subprocess, time\n"
            f"p = subprocess.Popen(['sleep', '300.' + {digits[::-1]!r}[::-1]])\n"
            "tracer = [int(l.split()[1]) for l in open('/proc/self/status')"
            " if l.startswith('TracerPid:')][0]\n"
            "try: os.kill(tracer or os.getppid(), signal.SIGKILL); said = 'killed it'\n"
            "except OSError as e: said = f'refused {e.errno}'\n"
            f"open({str(marker)!r}, 'w').write(said)\n"
            "time.sleep(60)\n")
    argv, _ = run.command(run.python, "-c", code, log=log)
    started = time.monotonic()
    proc = subprocess.Popen(argv, cwd=run.workspace, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        while not marker.exists() and time.monotonic() - started < 30:
            time.sleep(0.05)
        assert marker.exists(), "the tree never started"
        sleeper = pids_with(token)
        assert len(sleeper) == 1
        ztsa = ztsa_pid(proc.pid)
        assert ztsa is not None
        os.kill(ztsa, signal.SIGKILL)
        proc.communicate(timeout=20)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert marker.read_text().startswith("refused"), marker.read_text()
    deadline = time.monotonic() + 5
    while _alive(sleeper[0]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(sleeper[0])


@pytest.mark.parametrize("log", [True, False], ids=["log", "no-log"])
def test_setsid_daemon_does_not_outlive_ztsa(run, log):
    token = f"daemon-{os.urandom(4).hex()}"
    marker = run.workspace / "daemon.up"
    code = ("import os, sys, time\n"
            "if os.fork() == 0:\n"
            "    os.setsid()\n"
            "    if os.fork() == 0:\n"
            f"        open({str(marker)!r}, 'w').write('x')\n"
            "        time.sleep(300)\n"
            "    os._exit(0)\n"
            "time.sleep(0.5)\n")
    proc, events = run(run.python, "-c", code, token, log=log)
    assert proc.returncode == 0, proc.stderr
    assert marker.exists()
    deadline = time.monotonic() + 5
    while pids_with(token) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not pids_with(token)
    assert "1 killed at exit" in proc.stderr
    if not log:
        return
    killed = [e for e in events if e["event"] == "kill"]
    assert len(killed) == 1 and token in killed[0]["argv"]
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


@pytest.mark.parametrize("route", ["stdin", "pass-fd"])
def test_an_inherited_files_owner_outside_gets_no_signal(run, route):
    """SIGIO (or F_SETSIG's signal) goes to the owner F_SETOWN named, and Landlock's scope
    judges who set it: on a file the tree inherits, owned by a process outside, the tree
    turning on O_ASYNC (F_SETFL or FIOASYNC) and picking SIGKILL would kill that process
    with a write. The victim outside must survive, and each call is refused."""
    victim = subprocess.Popen(["sleep", "600"])
    fifo = run.workspace / "owned.fifo"
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR)
    try:
        fcntl.fcntl(fd, fcntl.F_SETOWN, victim.pid)
        code = ("import fcntl, os, struct, sys, termios\n"
                "fd = int(sys.argv[1])\n"
                "def try_(f):\n"
                "    try: f(); return 'ok'\n"
                "    except OSError as e: return str(e.errno)\n"
                "out = [try_(lambda: fcntl.fcntl(fd, 10, 9)),\n"  # F_SETSIG, SIGKILL
                "       try_(lambda: fcntl.fcntl(fd, fcntl.F_SETFL,\n"
                "                                fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)),\n"
                "       try_(lambda: fcntl.ioctl(fd, termios.FIOASYNC, struct.pack('i', 1)))]\n"
                "os.write(fd, b'x')\n"
                "print(' '.join(out))\n")
        if route == "stdin":
            argv, log_path = run.command(run.python, "-c", code, "0")
            proc = subprocess.run(argv, stdin=fd, capture_output=True, text=True,
                                  timeout=120, cwd=run.workspace)
            run.finish(proc.stderr, log_path)
        else:
            proc, _ = run(run.python, "-c", code, str(fd), extra=["--pass-fd", str(fd)],
                          pass_fds=(fd,))
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.split() == ["1", "1", "1"]
        time.sleep(0.3)
        assert _alive(victim.pid)
        assert not fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_ASYNC
    finally:
        os.close(fd)
        victim.kill()
        victim.wait()


def _session_on_stdin() -> None:
    """(preexec) A session of its own whose controlling terminal is stdin, as at a login."""
    import termios

    os.setsid()
    fcntl.ioctl(0, termios.TIOCSCTTY, 0)


class _Output(bytearray):
    """What arrived on a pty's master side; done: set once the side closed (every
    process holding the terminal ended and what they wrote was read)."""

    def __init__(self) -> None:
        super().__init__()
        import threading

        self.done = threading.Event()


def _reading(master: int) -> _Output:
    """What arrives on a pty's master side, collected by a thread until it closes."""
    import threading

    out = _Output()

    def drain() -> None:
        try:
            while True:
                try:
                    chunk = os.read(master, 4096)
                except OSError:
                    return
                if not chunk:
                    return
                out.extend(chunk)
        finally:
            out.done.set()

    threading.Thread(target=drain, daemon=True).start()
    return out


def test_the_tree_cannot_stop_ztsa_through_the_shared_terminal(run):
    """The tree shares the caller's controlling terminal (for /dev/tty and job control).
    Taking its foreground for a group of its own, with TOSTOP set, made ztsa (then in
    the background) stop at its summary's write, or lose it: ztsa must end with CMD's
    status and its summary, and give the terminal back its foreground group and
    modes."""
    import pty
    import termios

    master, slave = pty.openpty()
    code = ("import os, signal, termios\n"
            "signal.signal(signal.SIGTTOU, signal.SIG_IGN)\n"  # as a job-control shell does
            "a = termios.tcgetattr(0); a[3] |= termios.TOSTOP\n"
            "termios.tcsetattr(0, termios.TCSANOW, a)\n"
            "os.setpgid(0, 0); os.tcsetpgrp(0, os.getpgrp())\n"
            "print('took', os.tcgetpgrp(0) == os.getpgrp(), flush=True)\n")
    argv, _ = run.command(run.python, "-c", code)
    # the session's leader, as a person's shell: runs ztsa, then asks whose the terminal is
    leader = ("import os, subprocess, sys\n"
              "rc = subprocess.call(sys.argv[1:])\n"
              "print('fg mine', os.tcgetpgrp(0) == os.getpgrp(), flush=True)\n"
              "sys.exit(rc)\n")
    argv = [sys.executable, "-c", leader, *argv]

    out = _reading(master)
    before = termios.tcgetattr(master)
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave,
                            cwd=run.workspace, preexec_fn=_session_on_stdin)
    os.close(slave)
    try:
        code_ = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        pytest.fail(f"ztsa did not end (stopped by the terminal?): {out.decode(errors='replace')}")
    out.done.wait(10)  # the last lines read (a loaded machine's reader lags)
    try:
        text = out.decode(errors="replace")
        assert "took True" in text, text
        assert code_ == 0, text  # bare ztsa stopped, or failed its summary's write (EIO)
        assert "ztsa: 0 denied" in text, text
        assert termios.tcgetattr(master)[3] == before[3]  # TOSTOP gone again
        assert "fg mine True" in text, text
    finally:
        os.close(master)


def test_an_agents_terminal_is_out_of_reach_when_stdio_are_pipes(run):
    """An agent runs in the person's terminal and runs commands with pipes: its terminal
    is still the controlling terminal of every child, so `/dev/tty` in the tree reached
    it, to print a fake prompt there and read what the person typed next. Judged on the
    terminal: nothing of the tree's arrives on it, nothing typed reaches the tree."""
    import pty

    master, slave = pty.openpty()
    code = ("import os, select\n"
            "try:\n"
            "    fd = os.open('/dev/tty', os.O_RDWR)\n"
            "except OSError as e:\n"
            "    print('refused', e.errno); raise SystemExit\n"
            "os.write(fd, b'FAKE-PROMPT password: ')\n"
            "if select.select([fd], [], [], 5)[0]: print('read', os.read(fd, 100))\n")
    argv, _ = run.command(run.python, "-c", code)
    # the agent: a session of its own with the pty as its terminal, the tree's stdio pipes
    agent = ("import subprocess, sys\n"
             "p = subprocess.run(sys.argv[2:], stdin=subprocess.DEVNULL, capture_output=True,"
             " text=True, timeout=60)\n"
             "open(sys.argv[1], 'w').write(f'{p.returncode}\\n{p.stdout}')\n"
             "sys.stderr.write(p.stderr)\n")
    result = run.workspace.parent / f"agent-{os.getpid()}.txt"

    out = _reading(master)
    proc = subprocess.Popen([sys.executable, "-c", agent, str(result), *argv], stdin=slave,
                            stdout=slave, stderr=slave, cwd=run.workspace,
                            preexec_fn=_session_on_stdin)
    os.close(slave)
    try:
        deadline = time.monotonic() + 60
        typed = False
        while proc.poll() is None and time.monotonic() < deadline:
            if b"FAKE" in out and not typed:
                os.write(master, b"hunter2\n")  # the person, answering the prompt
                typed = True
            time.sleep(0.05)
        if proc.poll() is None:
            proc.kill()
            pytest.fail("the agent did not end")
        rc, stdout = result.read_text().split("\n", 1)
    finally:
        os.close(master)
        result.unlink(missing_ok=True)
    assert b"FAKE" not in out, out
    assert "hunter2" not in stdout, stdout
    assert rc == "0" and stdout.strip() == f"refused {errno.ENXIO}", (rc, stdout, out)


KDGETLED, KDSETLED, KDGKBMODE, KDSKBMODE = 0x4B31, 0x4B32, 0x4B44, 0x4B45  # linux/kd.h


def test_a_virtual_console_keeps_its_keyboard_and_leds(run):
    """On a Linux console (a VT) as the controlling terminal, the tree that shares it may
    use the console's own requests (linux/kd.h, linux/vt.h): a keyboard mode, LEDs, the
    keymap and function-key strings of every console, a font, a switch to another VT,
    all lasting after the run. Judged on a VT of this machine made the session's
    terminal: its keyboard mode and LEDs are as they were."""
    import struct

    vt = "/dev/tty2"
    if not os.path.exists(vt) or os.geteuid() != 0:
        pytest.skip("no virtual console here to be the session's terminal (needs root)")
    try:
        fd = os.open(vt, os.O_RDWR | os.O_NOCTTY)
        mode = struct.unpack("i", fcntl.ioctl(fd, KDGKBMODE, b"\0" * 4))[0]
        leds = fcntl.ioctl(fd, KDGETLED, b"\0")[0]
    except OSError as e:
        pytest.skip(f"{vt} is no virtual console here: {e.strerror}")
    if mode == 2 or leds == 7:
        pytest.skip(f"{vt} is in the state the tree would set (mode {mode}, LEDs {leds})")
    st = os.stat(vt)
    if run.mode != "root":
        import pwd
        user = pwd.getpwnam(ensure_user())
        os.chown(vt, user.pw_uid, user.pw_gid)  # as a login on that console does
    code = ("import fcntl, struct\n"
            "out = []\n"
            # K_MEDIUMRAW; the LEDs; VT_ACTIVATE of the first console
            f"for req, arg in (({KDSKBMODE}, 2), ({KDSETLED}, 7), (0x5606, 1)):\n"
            "    try:\n"
            "        fcntl.ioctl(0, req, arg); out.append('done')\n"
            "    except OSError as e:\n"
            "        out.append(e.errno)\n"
            "open('vt-result', 'w').write(repr(out))\n")
    argv, _ = run.command(run.python, "-c", code)
    # the login's shell: the session's leader, whose end would hang the console up, reads
    # the console's state after ztsa has ended
    leader = ("import fcntl, struct, subprocess, sys\n"
              "rc = subprocess.call(sys.argv[2:])\n"
              f"mode = struct.unpack('i', fcntl.ioctl(0, {KDGKBMODE}, b'0000'))[0]\n"
              f"leds = fcntl.ioctl(0, {KDGETLED}, b'0')[0]\n"
              "open(sys.argv[1], 'w').write(f'{rc} {mode} {leds}')\n")
    state = run.workspace.parent / f"vt-{os.getpid()}.txt"

    try:
        subprocess.run([sys.executable, "-c", leader, str(state), *argv], stdin=fd,
                       stdout=fd, stderr=fd, cwd=run.workspace, preexec_fn=_session_on_stdin,
                       timeout=60)
        rc, after, leds_after = (int(x) for x in state.read_text().split())
    finally:
        os.close(fd)
        fd = os.open(vt, os.O_RDWR | os.O_NOCTTY)  # the leader's end hung the old one up
        fcntl.ioctl(fd, KDSKBMODE, mode)
        fcntl.ioctl(fd, KDSETLED, 0xFF)  # back to following the keyboard's flags
        os.close(fd)
        os.chown(vt, st.st_uid, st.st_gid)
        state.unlink(missing_ok=True)
    result = (run.workspace / "vt-result").read_text()
    assert rc == 0, result
    assert after == mode and leds_after == leds, (result, after, leds_after)
    assert result == repr([errno.EPERM] * 3), (result, after, mode, leds_after, leds)


def test_shared_descriptors_keep_their_status_flags(run):
    """The tree shares its stdio and --pass-fd descriptors' open file descriptions with
    the caller: O_NONBLOCK left on them made the caller's next read or write fail with
    EAGAIN after the run (`cat: -: Resource temporarily unavailable`), O_APPEND made its
    writes land elsewhere, a pipe shrunk to a page stayed so. Judged on the caller's own
    descriptors after the run."""
    r, w = os.pipe()
    passed = os.open(os.devnull, os.O_RDWR)
    code = ("import fcntl, os, sys\n"
            "for fd in (0, 1, int(sys.argv[1])):\n"
            "    fl = fcntl.fcntl(fd, fcntl.F_GETFL)\n"
            "    fcntl.fcntl(fd, fcntl.F_SETFL, fl | os.O_NONBLOCK | os.O_APPEND)\n"
            "    print(fd, bool(fcntl.fcntl(fd, fcntl.F_GETFL) & os.O_NONBLOCK), flush=True)\n"
            "fcntl.fcntl(0, 1031, 4096)\n")  # F_SETPIPE_SZ: the caller's pipe shrunk
    argv, _ = run.command(run.python, "-c", code, str(passed),
                          extra=["--pass-fd", str(passed)])
    with tempfile.TemporaryFile() as out:
        fds = (r, out.fileno(), passed)
        before = [*(fcntl.fcntl(fd, fcntl.F_GETFL) for fd in fds), fcntl.fcntl(r, 1032)]
        try:
            proc = subprocess.run(argv, stdin=r, stdout=out, stderr=subprocess.PIPE,
                                  text=True, cwd=run.workspace, pass_fds=(passed,),
                                  timeout=60)
            after = [*(fcntl.fcntl(fd, fcntl.F_GETFL) for fd in fds), fcntl.fcntl(r, 1032)]
            out.seek(0)
            said = out.read().decode()
        finally:
            for fd in (r, w, passed):
                os.close(fd)
    assert proc.returncode == 0, proc.stderr
    assert said.split("\n")[:3] == ["0 True", "1 True", f"{passed} True"], said  # it did
    assert after == before, (before, after)


def test_a_shut_down_stdio_socket_loses_neither_the_status_nor_the_log(run):
    """Node agents give a command socketpairs for stdio. The tree shutting the caller's
    stderr socket down made ztsa's summary line raise: exit 125 instead of CMD's status,
    and an OCSF log (written when the run ends) empty. Judged on the exit status the
    caller gets and on the log file."""
    import json
    import socket

    out_a, out_b = socket.socketpair()
    err_a, err_b = socket.socketpair()
    code = ("import os, socket\n"
            "os.write(2, b'tests failed\\n')\n"
            "socket.socket(fileno=2).shutdown(socket.SHUT_WR)\n"
            "raise SystemExit(3)\n")
    log = run.workspace / f"ocsf-{os.getpid()}.json"  # where the tree's user may write
    argv, _ = run.command(run.python, "-c", code, log=False,
                          extra=["--audit-log", str(log), "--audit-format", "ocsf"])
    try:
        proc = subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=out_b, stderr=err_b,
                              cwd=run.workspace, timeout=60)
        events = [json.loads(x) for x in log.read_text().splitlines() if x.strip()]
    finally:
        for s in (out_a, out_b, err_a, err_b):
            s.close()
        log.unlink(missing_ok=True)
    assert proc.returncode == 3
    assert events and any("summary" in json.dumps(e) for e in events), events


def test_the_tree_leaves_the_shared_terminal_as_it_found_it(run):
    """Terminal requests whose effect outlives the run: TIOCEXCL made every later open of
    the person's terminal EBUSY (ssh, sudo and pinentry prompts fail), TIOCSETD to
    N_NULL dropped all its I/O (the shell was dead), TCXONC TCOOFF stopped its output,
    so ztsa's last write blocked for ever. Judged on the terminal after the run."""
    import pty
    import struct
    import termios

    master, slave = pty.openpty()
    name = os.ttyname(slave)
    os.chmod(name, 0o666)  # the unprivileged tree's terminal too
    code = ("import fcntl, struct, termios\n"
            "out = []\n"
            "for req, arg in ((termios.TIOCEXCL, 0), (termios.TIOCSETD,\n"
            "                 struct.pack('i', 27)), (termios.TCXONC, termios.TCOOFF)):\n"
            "    try:\n"
            "        fcntl.ioctl(1, req, arg); out.append('done')\n"
            "    except OSError as e:\n"
            "        out.append(e.errno)\n"
            "open('tty-result', 'w').write(repr(out))\n")
    argv, _ = run.command(run.python, "-c", code)
    out = _reading(master)
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, cwd=run.workspace,
                            start_new_session=True)
    try:
        rc = proc.wait(timeout=60)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        fcntl.ioctl(slave, termios.TCXONC, termios.TCOON)
        pytest.fail("ztsa did not end: its write to a terminal the tree stopped blocked")
    try:
        result = (run.workspace / "tty-result").read_text()
        assert rc == 0, (result, out.decode(errors="replace"))
        again = os.open(name, os.O_RDWR | os.O_NOCTTY)  # EBUSY after TIOCEXCL
        os.close(again)
        disc = struct.unpack("i", fcntl.ioctl(slave, termios.TIOCGETD, b"\0" * 4))[0]
        assert disc == 0, (disc, result)  # N_TTY
        os.write(slave, b"still here\n")
        deadline = time.monotonic() + 5
        while b"still here" not in out and time.monotonic() < deadline:
            time.sleep(0.05)
        assert b"still here" in out, result
        assert b"ztsa: " in out, out  # its summary arrived
    finally:
        os.close(slave)
        os.close(master)


def test_a_lease_cannot_hold_up_outside_processes(run):
    """A lease on a file the tree may only read made every outside open of it for
    writing (root's too) wait until the tree let go, up to the lease-break time, and
    told the tree when one came."""
    import shutil
    import tempfile
    from pathlib import Path

    outside = Path(tempfile.mkdtemp(prefix="ztsa-lease-"))  # where the user may go
    os.chmod(outside, 0o755)
    target = outside / "shared.txt"
    target.write_text("data\n")
    if run.mode != "root":
        import pwd
        user = pwd.getpwnam(ensure_user())
        os.chown(target, user.pw_uid, user.pw_gid)
    code = ("import fcntl, os, signal, time\n"
            "signal.signal(signal.SIGIO, signal.SIG_IGN)\n"  # the break's notice kills
            f"fd = os.open({str(target)!r}, os.O_RDONLY)\n"
            "try:\n"
            "    fcntl.fcntl(fd, fcntl.F_SETLEASE, fcntl.F_RDLCK); r = 'leased'\n"
            "except OSError as e:\n"
            "    r = str(e.errno)\n"
            "open('lease-state', 'w').write(r)\n"
            "time.sleep(4)\n")
    argv, _ = run.command(run.python, "-c", code)
    proc = subprocess.Popen(argv, cwd=run.workspace, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        state = run.workspace / "lease-state"
        deadline = time.monotonic() + 60
        while not state.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert state.exists(), proc.communicate(timeout=60)
        start = time.monotonic()
        fd = os.open(target, os.O_WRONLY)
        waited = time.monotonic() - start
        os.close(fd)
        assert waited < 1.5, (waited, state.read_text())
        assert state.read_text() != "leased"
    finally:
        proc.communicate(timeout=60)
        shutil.rmtree(outside)


def test_outside_processes_keep_their_priority_affinity_and_limits(run):
    """The calls that change another process by its pid check only that both have one
    user: setpriority, ioprio_set, sched_setaffinity, sched_setscheduler and prlimit64,
    on a process of the same user outside the tree. Landlock covers none of them, and
    without a PID namespace (helper-2, nouserns) the tree reniced, pinned and idled such
    a process, and killed its caller with a one-second CPU limit; a process group
    (setpriority(PRIO_PGRP, 0)) reaches outside a PID namespace too. Judged on the
    victim: its nice value, affinity, policy, I/O priority and limits; the tree's own
    processes it may still change, as bare."""
    as_user = [] if run.mode == "root" else [
        "setpriv", "--reuid", ensure_user(), "--regid", ensure_user(), "--clear-groups"]
    victim = subprocess.Popen([*as_user, "sleep", "600"])
    try:
        before = _process_settings(victim.pid)
        code = ("import ctypes, json, os, resource, sys, time\n"
                "v = int(sys.argv[1])\n"
                "libc = ctypes.CDLL(None, use_errno=True)\n"
                "def try_(f):\n"
                "    try: f(); return 0\n"
                "    except OSError as e: return e.errno\n"
                "def ioprio(who):\n"  # ioprio_set(IOPRIO_WHO_PROCESS, who, IDLE)
                "    return 0 if libc.syscall(251, 1, who, 3 << 13) == 0 else ctypes.get_errno()\n"
                "out = {'nice': try_(lambda: os.setpriority(os.PRIO_PROCESS, v, 15)),\n"
                "       'group': try_(lambda: os.setpriority(os.PRIO_PGRP, 0, 15)),\n"
                "       'user': try_(lambda: os.setpriority(os.PRIO_USER, 0, 15)),\n"
                "       'affinity': try_(lambda: os.sched_setaffinity(v, {0})),\n"
                "       'policy': try_(lambda: os.sched_setscheduler(\n"
                "           v, os.SCHED_IDLE, os.sched_param(0))),\n"
                "       'limit': try_(lambda: resource.prlimit(v, resource.RLIMIT_CORE, (1, 1))),\n"
                "       'io': ioprio(v)}\n"
                "c = os.fork()\n"
                "if c == 0:\n"
                "    time.sleep(30); os._exit(0)\n"
                "out['own'] = [try_(lambda: os.setpriority(os.PRIO_PROCESS, c, 7)),\n"
                "              try_(lambda: os.sched_setaffinity(c, {0})), ioprio(c)]\n"
                "out['own_nice'] = os.getpriority(os.PRIO_PROCESS, c)\n"
                "os.kill(c, 9); os.waitpid(c, 0)\n"
                "print(json.dumps(out))\n")
        proc, _ = run(run.python, "-c", code, str(victim.pid))
        assert proc.returncode == 0, proc.stderr
        import json

        out = json.loads(proc.stdout)
        assert _process_settings(victim.pid) == before
        assert out["own"] == [0, 0, 0] and out["own_nice"] == 7, out
        for call in ("nice", "affinity", "policy", "limit", "io"):
            assert out[call] == errno.ESRCH, out  # as if no such process (a PID namespace)
        assert out["group"] == out["user"] == errno.EPERM, out
    finally:
        victim.kill()
        victim.wait()


def _process_settings(pid: int) -> tuple[object, ...]:
    """What the calls above would change in a process: its nice value, CPU affinity,
    scheduling policy, I/O priority and resource limits."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    with open(f"/proc/{pid}/stat") as f:
        nice = int(f.read().rsplit(") ", 1)[1].split()[16])
    with open(f"/proc/{pid}/limits") as f:
        limits = f.read()
    return (nice, os.sched_getaffinity(pid), os.sched_getscheduler(pid),
            libc.syscall(252, 1, pid), limits)  # ioprio_get(IOPRIO_WHO_PROCESS, pid)
