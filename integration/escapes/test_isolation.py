"""The tree is isolated rather than listed: its own processes, IPC, /dev/shm, keyring
and /proc view; signals that stay inside; nothing of ztsa's or the helper's reachable
through the helper; nothing it starts outlives ztsa; an audit log it cannot touch.
Each test judges an effect: what the tree saw or read, what survived, what changed."""

from __future__ import annotations

import ctypes
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import ensure_user, pids_with

# root, an unprivileged user, and that user without user namespaces (no helper, no PID
# namespace: what must hold there holds through Landlock's signal scope)
RUN_MODES = ("root", "user", "nouserns")


def _victim(run, token: str) -> subprocess.Popen[bytes]:
    """A process outside the tree, of the tree's own user, in a session of its own."""
    argv = ["sleep", token]
    if run.mode != "root":
        user = ensure_user()
        argv = ["setpriv", "--reuid", user, "--regid", user, "--clear-groups", *argv]
    return subprocess.Popen(argv, start_new_session=True)


def test_the_tree_sees_only_its_own_processes(run):
    token = f"6{int.from_bytes(os.urandom(3), 'big')}1"
    victim = _victim(run, token)
    try:
        code = ("import os\n"
                "pids = [p for p in os.listdir('/proc') if p.isdigit()]\n"
                "seen = []\n"
                "for p in pids:\n"
                "    try: seen.append(open(f'/proc/{p}/cmdline', 'rb').read())\n"
                "    except OSError: pass\n"
                f"print(len(pids), any(b'sleep\\0' + {token[::-1]!r}[::-1].encode() in c"
                " for c in seen))\n")
        proc, _ = run(run.python, "-c", code)
    finally:
        victim.kill()
        victim.wait()
    assert proc.returncode == 0, proc.stderr
    count, saw_victim = proc.stdout.split()
    if run.mode == "nouserns":
        assert "lacks PID and IPC namespaces" in proc.stderr
        return
    assert saw_victim == "False"
    assert int(count) <= 4, proc.stdout  # the helper, CMD, and what CMD started


def test_kill_minus_one_and_the_process_group_spare_everything_outside(run):
    """kill(-1) from a tree of an ordinary user killed ztsa, its caller and an unrelated
    process of that user."""
    token = f"7{int.from_bytes(os.urandom(3), 'big')}1"
    victim = _victim(run, token)
    try:
        code = ("import os, signal\n"
                "try: os.kill(-1, signal.SIGKILL)\n"
                "except OSError as e: print('-1:', e.errno)\n"
                f"try: os.kill({victim.pid}, signal.SIGKILL)\n"
                "except OSError as e: print('victim:', e.errno)\n"
                "print('alive')\n")
        proc, _ = run(run.python, "-c", code)
        time.sleep(0.2)
        assert victim.poll() is None, "the victim outside the tree was killed"
    finally:
        victim.kill()
        victim.wait()
    assert "alive" in proc.stdout, proc.stderr
    assert proc.returncode == 0


def test_signals_to_the_helper_and_ztsa_are_refused(run):
    code = ("import os, signal\n"
            "tracer = [int(l.split()[1]) for l in open('/proc/self/status')"
            " if l.startswith('TracerPid:')][0]\n"
            "for pid in sorted({os.getppid(), 1, tracer} - {0, os.getpid()}):\n"
            "    for sig in (signal.SIGTERM, signal.SIGSTOP, signal.SIGKILL):\n"
            "        try: os.kill(pid, sig); print('sent', pid, sig)\n"
            "        except OSError as e: pass\n"
            "print('done')\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines() == ["done"], proc.stdout


def test_dev_shm_and_sysv_ipc_are_the_trees_own(run):
    if run.mode == "nouserns":
        pytest.skip("no IPC namespace without user namespaces (named by ztsa)")
    name = f"ztsa-victim-{os.urandom(4).hex()}"
    outside = f"/dev/shm/{name}"
    with open(outside, "w") as f:
        f.write("host data")
    os.chmod(outside, 0o666)
    key = int.from_bytes(os.urandom(3), "big") | 0x1000000
    libc = ctypes.CDLL(None, use_errno=True)
    qid = libc.msgget(key, 0o1666)  # IPC_CREAT | 0666
    assert qid >= 0
    try:
        code = ("import os, ctypes\n"
                f"print(sorted(os.listdir('/dev/shm')), {name!r} in os.listdir('/dev/shm'))\n"
                f"for op in ('open', 'unlink'):\n"
                "    try:\n"
                f"        getattr(os, op)('/dev/shm/{name}', *([os.O_RDWR | os.O_APPEND]"
                " if op == 'open' else []))\n"
                "        print(op, 'worked')\n"
                "    except OSError as e: print(op, e.errno)\n"
                "libc = ctypes.CDLL(None, use_errno=True)\n"
                f"print('msgget', libc.msgget({key}, 0o666))\n"
                "open('/dev/shm/mine', 'w').write('x')\n"
                "print('own shm works')\n")
        proc, _ = run(run.python, "-c", code)
        assert proc.returncode == 0, proc.stderr
        assert "worked" not in proc.stdout, proc.stdout
        assert "msgget -1" in proc.stdout  # the host's queue is not in its namespace
        assert "own shm works" in proc.stdout
        with open(outside) as f:
            assert f.read() == "host data"
        assert not os.path.exists("/dev/shm/mine")
    finally:
        os.unlink(outside)
        libc.msgctl(qid, 0, None)  # IPC_RMID


def test_another_runs_private_home_is_out_of_reach(run):
    """Two runs of the same user at once: the second cannot read what the first keeps
    in its private HOME (an agent's copied credentials live there), by its path or by
    looking for it, nor see that the first's private directory exists."""
    if run.mode == "nouserns":
        pytest.skip("no mount namespace without user namespaces (named by ztsa)")
    first = ("import os, sys, time\n"
             "open(os.environ['HOME'] + '/secret', 'w').write('S3CRET-' + sys.argv[1])\n"
             "open('first-home', 'w').write(os.environ['HOME'])\n"
             "while not os.path.exists('done'): time.sleep(0.05)\n")
    token = os.urandom(4).hex()
    argv, _ = run.command(run.python, "-c", first, token, log=False)
    holder = subprocess.Popen(argv, cwd=run.workspace, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 60
        while not (run.workspace / "first-home").exists():
            assert holder.poll() is None and time.monotonic() < deadline, holder.communicate()
            time.sleep(0.05)
        time.sleep(0.2)
        home = (run.workspace / "first-home").read_text()
        second = ("import glob, os, sys\n"
                  "home = sys.argv[1]\n"
                  "try: print('read', open(home + '/secret').read())\n"
                  "except OSError as e: print('refused', e.errno)\n"
                  "print('sees', os.path.exists(os.path.dirname(home)))\n"
                  "base = os.path.dirname(os.path.dirname(home))\n"
                  "found = [open(f).read() for top in {base, os.path.dirname(base), '/tmp'}\n"
                  "         for pat in ('*/home/secret', '*/*/home/secret')\n"
                  "         for f in glob.glob(os.path.join(top, pat))\n"
                  "         if os.access(f, os.R_OK)]\n"
                  "print('found', [f for f in found if f.startswith('S3CRET-')])\n")
        proc, _ = run(run.python, "-c", second, home)
        assert proc.returncode == 0, proc.stderr
        assert token not in proc.stdout, proc.stdout
        assert proc.stdout.split("\n")[1:3] == ["sees False", "found []"], proc.stdout
    finally:
        (run.workspace / "done").write_text("")
        _, err = holder.communicate(timeout=60)
    assert holder.returncode == 0, err


def test_a_deep_private_directory_keeps_cmds_status_and_later_runs(run):
    """The tree nests directories in its TMPDIR far deeper than a recursive walk goes
    (helper-1: 1,200 levels made ztsa exit 125 instead of CMD's status, and every later
    run of the user exit 125 while reaping them): CMD's status comes back, the tree is
    removed, and the next run works."""
    code = ("import os\n"
            "fd = os.open(os.environ['TMPDIR'], os.O_RDONLY)\n"
            "for _ in range(3000):\n"
            "    os.mkdir('d', dir_fd=fd)\n"
            "    sub = os.open('d', os.O_RDONLY, dir_fd=fd); os.close(fd); fd = sub\n"
            "print(open('private', 'w').write(os.environ['TMPDIR']))\n"
            "raise SystemExit(7)\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode == 7, proc.stderr
    assert not os.path.lexists((run.workspace / "private").read_text())
    again, _ = run("true")
    assert again.returncode == 0, again.stderr


def test_a_workspace_under_dev_shm_works_by_relative_paths(run):
    """The private /dev/shm covered a workspace beneath it after the tree's working
    directory was set: every relative read from the workspace root was refused."""
    if not os.path.isdir("/dev/shm"):
        pytest.skip("no /dev/shm on this machine")
    from conftest import Runner

    ws = Path(tempfile.mkdtemp(prefix="ztsa-ws-", dir="/dev/shm"))
    try:
        os.chmod(ws, 0o777)
        (ws / "before.txt").write_text("made before\n")
        os.chmod(ws / "before.txt", 0o644)
        here = Runner(run.mode, ws, log=run.log)
        proc, _ = here("sh", "-c", "cat before.txt && echo made during > during.txt && "
                       "cat during.txt && mkdir d && echo deeper > d/f && cat d/f && pwd")
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines() == ["made before", "made during", "deeper", str(ws)]
        assert (ws / "during.txt").read_text() == "made during\n"
    finally:
        subprocess.run(["rm", "-rf", str(ws)], check=False)


def test_dev_shm_shows_what_allow_read_and_cmd_need(run):
    """The private /dev/shm hid an --allow-read directory there, and a program installed
    there: now both are shown read-only, and nothing else of the host's /dev/shm."""
    if run.mode == "nouserns":
        pytest.skip("no private /dev/shm without user namespaces (named by ztsa)")
    tag = os.urandom(4).hex()
    shared, tools = Path(f"/dev/shm/ztsa-read-{tag}"), Path(f"/dev/shm/ztsa-bin-{tag}")
    victim = Path(f"/dev/shm/ztsa-victim-{tag}")
    try:
        for d in (shared, tools):
            d.mkdir()
            os.chmod(d, 0o755)
        (shared / "data.txt").write_text("shared data\n")
        (tools / "tool").write_text("#!/bin/sh\necho tool ran\n")
        victim.write_text("host data\n")
        for f in (shared / "data.txt", tools / "tool", victim):
            os.chmod(f, 0o755)
        before = os.stat(shared / "data.txt")
        proc, _ = run(str(tools / "tool"), extra=[f"--allow-read={shared}"])
        assert proc.returncode == 0 and proc.stdout == "tool ran\n", proc.stderr
        code = (f"import os\nprint(open({str(shared / 'data.txt')!r}).read(), end='')\n"
                f"for op in ('write', 'chmod', 'unlink'):\n"
                "    try:\n"
                f"        p = {str(shared / 'data.txt')!r}\n"
                "        if op == 'write': open(p, 'a').write('x')\n"
                "        elif op == 'chmod': os.chmod(p, 0o777)\n"
                "        else: os.unlink(p)\n"
                "        print(op, 'worked')\n"
                "    except OSError as e: print(op, 'refused')\n"
                f"print(os.path.exists({str(victim)!r}))\n")
        proc, _ = run(run.python, "-c", code, extra=[f"--allow-read={shared}"])
        assert proc.returncode == 0, proc.stderr
        assert proc.stdout.splitlines() == ["shared data", "write refused", "chmod refused",
                                            "unlink refused", "False"], proc.stdout
        after = os.stat(shared / "data.txt")
        assert (after.st_mode, after.st_size, after.st_mtime_ns) == (
            before.st_mode, before.st_size, before.st_mtime_ns)
    finally:
        subprocess.run(["rm", "-rf", str(shared), str(tools), str(victim)], check=False)


def test_a_planted_git_file_shows_no_host_directory(run):
    """A repository's `.git` file naming a host directory (`gitdir: /dev/shm/...`) made
    ztsa bind it into the tree read-only, as it does a linked worktree's repository."""
    if run.mode == "nouserns":
        pytest.skip("no private /dev/shm without user namespaces (named by ztsa)")
    target = Path(f"/dev/shm/ztsa-gitdir-{os.urandom(4).hex()}")
    try:
        target.mkdir()
        os.chmod(target, 0o755)
        (target / "HEAD").write_text("ref: refs/heads/main\n")
        (target / "p").write_text("host data\n")
        os.chmod(target / "p", 0o644)
        (run.workspace / ".git").write_text(f"gitdir: {target}\n")
        proc, _ = run("sh", "-c", f"cat {target}/p || echo unreadable")
        assert "host data" not in proc.stdout and "unreadable" in proc.stdout, proc.stdout
    finally:
        (run.workspace / ".git").unlink(missing_ok=True)
        subprocess.run(["rm", "-rf", str(target)], check=False)


def _add_key(payload: bytes, keyring: int) -> int:
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.syscall(248, b"user", b"ztsa-test-secret", payload, len(payload), keyring)


def test_the_keyring_is_out_of_reach(run):
    """The tree inherited the caller's session keyring, and as root uid 0's user keyring
    too: keyctl is refused, so no payload can be read and no key left behind, and the
    tree's /proc/keys (which lists every key its user may view, with its description)
    and /proc/key-users are empty."""
    secret = f"SECRET-{os.urandom(6).hex()}"
    key = _add_key(secret.encode(), -3)  # KEY_SPEC_SESSION_KEYRING
    if key < 0:
        pytest.skip(f"this kernel has no keyrings here (errno {ctypes.get_errno()})")
    code = ("import ctypes, glob\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "buf = ctypes.create_string_buffer(256)\n"
            "for k in range(1, 4096):\n"  # every serial a small tree could guess
            "    if libc.syscall(250, 11, k, buf, 256) > 0: print('read', buf.raw)\n"
            f"print('keyctl read', libc.syscall(250, 11, {key}, buf, 256),"
            " ctypes.get_errno())\n"
            "print('add_key', libc.syscall(248, b'user', b'left', b'x', 1, -4),"
            " ctypes.get_errno())\n"
            "print(open('/proc/keys').read(), open('/proc/key-users').read())\n")
    proc, _ = run(run.python, "-c", code)
    libc = ctypes.CDLL(None, use_errno=True)
    libc.syscall(250, 3, key)  # KEYCTL_REVOKE
    assert proc.returncode == 0, proc.stderr
    assert secret not in proc.stdout + proc.stderr
    assert "ztsa-test-secret" not in proc.stdout  # the key's description
    assert "keyctl read -1 1" in proc.stdout  # EPERM
    assert "add_key -1 1" in proc.stdout


SPELLINGS = ["/proc/self/environ", "/proc/thread-self/../self/environ",
             "//proc/self/environ", "/proc/./self/environ", "/proc/1/environ",
             "/proc/1/mem", "/proc/1/cmdline", "/proc/self/../1/environ",
             "/proc/thread-self/../1/environ", "/dev/fd/../../proc/1/environ"]


@pytest.mark.parametrize("log", [True, False], ids=["log", "no-log"])
def test_the_helper_opens_no_proc_file_as_itself(run, monkeypatch, log):
    """An O_CREAT open goes to the file helper, which performs it: by no spelling may it
    open its own (or ztsa's, or the caller's environment) /proc files for the tree."""
    secret = f"ztsa-secret-{os.urandom(6).hex()}"
    monkeypatch.setenv("ZTSA_TEST_SECRET", secret)  # ztsa's environment, not the tree's
    code = ("import os, sys\n"
            "out = []\n"
            "for p in sys.argv[1:] + [f'/proc/{os.getppid()}/environ']:\n"
            "    try:\n"
            "        fd = os.open(p, os.O_RDONLY | os.O_CREAT)\n"
            "        out.append(os.read(fd, 1 << 16)); os.close(fd)\n"
            "    except OSError as e: out.append(str(e).encode())\n"
            "sys.stdout.buffer.write(b'\\n'.join(out))\n")
    proc, _ = run(run.python, "-c", code, *SPELLINGS, log=log)
    assert proc.returncode == 0, proc.stderr
    assert secret not in proc.stdout + proc.stderr
    # the tree's own environment stays its own to read
    assert "PATH=" in proc.stdout


NAME_SPELLINGS = ["/proc/self/cwd", "/proc/thread-self/cwd", "//proc/self/cwd",
                  "/proc/./self/cwd", "/proc/1/cwd", "/proc/self/root/proc/1/cwd",
                  "lnk-to-cwd", *(f"/proc/{who}/fd/{n}" for who in ("self", "1")
                                  for n in range(3, 20))]


@pytest.mark.parametrize("log", [True, False], ids=["log", "no-log"])
def test_the_helper_makes_no_name_through_its_own_proc_links(run, log):
    """mkdir, mknod, symlink, link, rename and bind go to the file helper, which makes
    the name: through a /proc magic link (its cwd, its descriptors: the workspace, the
    audit log, /proc) it would resolve its own, not the caller's. The tree works in a
    directory of its own: a name may appear there (where its own kernel would put it
    without a helper) and nowhere else, and the log gains no second link."""
    tok = f"ztsa-name-{os.urandom(4).hex()}"
    code = ("import ctypes, os, socket, sys\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "tok = sys.argv[1]; made = []\n"
            "os.mkdir('own'); os.chdir('own')\n"
            "os.symlink('/proc/self/cwd', 'lnk-to-cwd')\n"
            "open('src', 'w').close()\n"
            "for i, p in enumerate(sys.argv[2:]):\n"
            "    for op in ('mkdir', 'mknod', 'symlink', 'link', 'rename', 'bind', 'flink'):\n"
            "        t = f'{p}/{tok}-{op}-{i}'\n"
            "        try:\n"
            "            if op == 'mkdir': os.mkdir(t)\n"
            "            elif op == 'mknod': os.mknod(t, 0o600 | 0o10000)\n"
            "            elif op == 'symlink': os.symlink('/etc/passwd', t)\n"
            "            elif op == 'link': os.link('src', t)\n"
            "            elif op == 'rename': os.rename('src', t); os.rename(t, 'src')\n"
            "            elif op == 'bind': socket.socket(socket.AF_UNIX).bind(t)\n"
            "            elif libc.linkat(-100, p.encode(), -100, t[len(p) + 1:].encode(),\n"
            "                             0x400) < 0: continue  # AT_SYMLINK_FOLLOW\n"
            "            made.append(t)\n"
            "        except OSError: pass\n"
            "print('made', made)\n")
    proc, _ = run(run.python, "-c", code, tok, *NAME_SPELLINGS, log=log)
    assert proc.returncode == 0, proc.stderr
    own = run.workspace / "own"
    left = [str(p) for p in run.workspace.rglob(f"{tok}*") if p.parent != own]
    left += [f for f in os.listdir(tempfile.gettempdir()) if f.startswith(tok)]
    assert left == []
    for audit in run.workspace.glob("audit-*.jsonl"):
        assert os.stat(audit).st_nlink == 1


def test_ordinary_signal_dispositions(run):
    code = ("import signal, subprocess\n"
            "r = subprocess.run(['sh', '-c', 'yes | head -1; seq 1 100000 | head -1'],"
            " capture_output=True, text=True, timeout=20)\n"
            "print(r.returncode, r.stdout.split(), r.stderr.count('Broken pipe'))\n"
            "st = dict(l.split(':\\t') for l in open('/proc/self/status').read().splitlines()"
            " if ':\\t' in l)\n"
            "print(st['SigBlk'].strip(), int(st['SigIgn'], 16) & (1 << 12 | 1 << 24))\n")
    proc, _ = run(run.python, "-c", code, timeout=60)
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.strip().splitlines()
    assert first == "0 ['y', '1'] 0"
    # Python ignores SIGPIPE itself; SIGXFSZ (bit 24) stays default, the mask empty
    assert second.split()[0] == "0000000000000000"


def test_a_blocked_fifo_opener_does_not_outlive_ztsa(run):
    """An O_CREAT open of a FIFO makes the helper start an opener; it held ztsa's stdout
    after the run, so that `$(ztsa exec ...)` never returned."""
    if run.mode == "nouserns":
        pytest.skip("no file helper without user namespaces")
    code = ("import os, time\n"
            "os.mkfifo('fifo')\n"
            "if os.fork() == 0:\n"
            "    os.open('fifo', os.O_WRONLY | os.O_CREAT)\n"  # waits for a reader forever
            "    os._exit(0)\n"
            "time.sleep(0.5)\n")
    started = time.monotonic()
    proc, _ = run(run.python, "-c", code, timeout=30)  # stdout and stderr are pipes
    assert time.monotonic() - started < 20
    assert proc.returncode == 0, proc.stderr


def test_the_audit_log_cannot_be_touched(run):
    """The log lies in the workspace (as the README's example puts it): the tree can
    neither write, truncate, chmod, replace nor move it; every line names the run."""
    if run.mode == "nouserns":
        pytest.skip("without a mount namespace only Landlock guards it (not here: the "
                    "workspace is writable)")
    code = ("import glob, os\n"
            "log = glob.glob('audit-*.jsonl')[0]\n"
            "tries = {'append': lambda: open(log, 'a').write('{\"forged\": 1}\\n'),\n"
            "         'truncate': lambda: os.truncate(log, 0),\n"
            "         'chmod': lambda: os.chmod(log, 0o777),\n"
            "         'unlink': lambda: os.unlink(log),\n"
            "         'rename': lambda: os.rename(log, 'moved.jsonl'),\n"
            "         'replace': lambda: (open('f', 'w').write('{}'), os.rename('f', log)),\n"
            "         'link': lambda: os.link(log, 'hard.jsonl')}\n"
            "for name, f in tries.items():\n"
            "    try: f(); print(name, 'worked')\n"
            "    except OSError as e: print(name, 'refused')\n")
    proc, events = run(run.python, "-c", code, log=True)
    assert proc.returncode == 0, proc.stderr
    assert "worked" not in proc.stdout, proc.stdout
    assert proc.stdout.count("refused") == 7
    assert not (run.workspace / "moved.jsonl").exists()
    assert not (run.workspace / "hard.jsonl").exists()
    assert events and all("forged" not in e for e in events)
    runs = {e["run"] for e in events}
    assert len(runs) == 1 and all(isinstance(e.get("pid"), int) for e in events)
    assert events[0]["event"] == "env" and events[-1]["event"] == "summary"


def test_kill_events_name_host_pids_of_the_tree(run):
    token = f"k-{os.urandom(4).hex()}"
    code = ("import subprocess, sys\n"
            "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)',"
            f" {token!r}])\n")
    proc, events = run(run.python, "-c", code, log=True)
    assert proc.returncode == 0, proc.stderr
    killed = [e for e in events if e["event"] == "kill"]
    assert len(killed) == 1 and token in killed[0]["argv"]
    assert not pids_with(token)


def test_nothing_outside_the_writable_places_changes_in_any_way(run):
    """Landlock refuses writes outside the workspace but not chmod, utime, chown or
    extended attributes: the read-only system view refuses those too."""
    if run.mode == "nouserns":
        pytest.skip("no mount namespace without user namespaces (named by ztsa)")
    top = Path(tempfile.mkdtemp(prefix="ztsa-outside-"))  # reachable by the tree's user
    outside = top / "outside"
    outside.mkdir()
    victim = outside / "victim.txt"
    victim.write_text("original")
    if run.mode == "user":  # a file the tree's user owns, and may change without ztsa
        user = ensure_user()
        import pwd

        ids = pwd.getpwnam(user)
        os.chown(outside, ids.pw_uid, ids.pw_gid)
        os.chown(victim, ids.pw_uid, ids.pw_gid)
    os.chmod(top, 0o755)
    before = os.stat(victim)
    code = ("import os, sys\n"
            "v = sys.argv[1]\n"
            "tries = {'chmod': lambda: os.chmod(v, 0o777),\n"
            "         'utime': lambda: os.utime(v, (0, 0)),\n"
            "         'chown': lambda: os.chown(v, os.getuid(), os.getgid()),\n"
            "         'setxattr': lambda: os.setxattr(v, 'user.ztsa', b'x'),\n"
            "         'write': lambda: open(v, 'a').write('forged'),\n"
            "         'rename': lambda: os.rename(v, v + '.moved'),\n"
            "         'link': lambda: os.link(v, v + '.link'),\n"
            "         'mkfifo': lambda: os.mkfifo(v + '.fifo'),\n"
            "         'dev_null_chmod': lambda: os.chmod('/dev/null', 0o600)}\n"
            "for name, f in tries.items():\n"
            "    try: f(); print(name, 'worked')\n"
            "    except OSError as e: print(name, 'refused', e.errno)\n"
            "open('inside.txt', 'w').write('ok'); os.chmod('inside.txt', 0o600)\n"
            "open(os.environ['TMPDIR'] + '/t', 'w').write('ok')\n"
            "open('/dev/null', 'w').write('fine')\n"
            "print('writable places work')\n")
    proc, _ = run(run.python, "-c", code, str(victim))
    assert proc.returncode == 0, proc.stderr
    assert "worked" not in proc.stdout, proc.stdout
    assert "writable places work" in proc.stdout
    after = os.stat(victim)
    assert victim.read_text() == "original"
    assert (after.st_mode, after.st_mtime_ns, after.st_uid) == (
        before.st_mode, before.st_mtime_ns, before.st_uid)
    assert sorted(p.name for p in outside.iterdir()) == ["victim.txt"]
    assert os.stat("/dev/null").st_mode & 0o777 == 0o666
    assert (run.workspace / "inside.txt").read_text() == "ok"


def test_inherited_descriptors_keep_their_mode_times_owner_and_xattrs(run):
    """The read-only view covers the tree's own mounts only: a file it inherited as
    stdin or stdout (a redirect of the caller's), the caller's /dev/null, or any of
    them reached through /proc/self/fd or a symlink to it, lies on the caller's mounts.
    Its mode, times, owner and extended attributes must not change."""
    if run.mode == "nouserns":
        pytest.skip("no file helper without user namespaces (named by ztsa)")
    top = Path(tempfile.mkdtemp(prefix="ztsa-inherited-"))
    victim = top / "victim.txt"
    victim.write_text("original")
    out = top / "out.txt"
    out.write_text("")
    os.setxattr(victim, "user.kept", b"1")
    if run.mode == "user":  # files the tree's user owns, and may change without ztsa
        import pwd

        ids = pwd.getpwnam(ensure_user())
        for p in (top, victim, out):
            os.chown(p, ids.pw_uid, ids.pw_gid)
    os.chmod(top, 0o755)
    os.chmod(out, 0o644)
    os.utime(victim, (1_000_000, 1_000_000))
    before = [os.stat(p) for p in (victim, out, "/dev/null")]
    code = ("import os\n"
            "os.symlink('/proc/self/fd/0', 'via-link')\n"
            "tries = []\n"
            "for fd in (0, 1, int(os.environ['NULL_FD'])):\n"
            "    tries += [lambda fd=fd: os.fchmod(fd, 0o777),\n"
            "              lambda fd=fd: os.utime(fd, (0, 0)),\n"
            "              lambda fd=fd: os.utime(fd),\n"
            "              lambda fd=fd: os.chown(fd, os.getuid(), os.getgid()),\n"
            "              lambda fd=fd: os.setxattr(fd, 'user.ztsa', b'x'),\n"
            "              lambda fd=fd: os.removexattr(fd, 'user.kept')]\n"
            "for path in ('/dev/stdin', '/proc/self/fd/0', '/proc/thread-self/fd/0',\n"
            "             'via-link', '/dev/fd/1', '/dev/null'):\n"
            "    tries += [lambda p=path: os.chmod(p, 0o777),\n"
            "              lambda p=path: os.utime(p, (0, 0)),\n"
            "              lambda p=path: os.setxattr(p, 'user.ztsa', b'x'),\n"
            "              lambda p=path: os.removexattr(p, 'user.kept')]\n"
            "worked = 0\n"
            "for f in tries:\n"
            "    try: f(); worked += 1\n"
            "    except OSError: pass\n"
            "os.write(2, f'worked {worked}\\n'.encode())\n"
            "open('mine', 'w').close(); os.chmod('mine', 0o600); os.utime('mine', (5, 5))\n"
            "os.setxattr('mine', 'user.ok', b'1')\n"
            "os.write(2, b'own files work\\n')\n")
    with open(victim, "rb") as stdin, open(out, "ab") as stdout, \
            open("/dev/null", "rb") as null:
        fd = null.fileno()
        argv, log_path = run.command(run.python, "-c", code,
                                     extra=["--pass-fd", str(fd), "--env", f"NULL_FD={fd}"])
        proc = subprocess.run(argv, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE,
                              text=True, timeout=120, cwd=run.workspace, pass_fds=(fd,))
    run.finish(proc.stderr, log_path)
    assert proc.returncode == 0, proc.stderr
    assert "worked 0" in proc.stderr and "own files work" in proc.stderr, proc.stderr
    for path, was in zip((victim, out, Path("/dev/null")), before, strict=True):
        now = os.stat(path)
        assert (now.st_mode, now.st_mtime_ns, now.st_atime_ns, now.st_uid, now.st_gid) == (
            was.st_mode, was.st_mtime_ns, was.st_atime_ns, was.st_uid, was.st_gid), path
    assert os.listxattr(victim) == ["user.kept"]
    assert os.listxattr(out) == []
    assert os.getxattr(run.workspace / "mine", "user.ok") == b"1"


def test_proc_entries_keep_their_modes(run):
    """The tree's /proc is a writable mount of its own, but a mode set on a /proc entry
    is the kernel's, for every namespace until reboot: refused in every form."""
    if run.mode == "nouserns":
        pytest.skip("no file helper without user namespaces (named by ztsa)")
    targets = ["/proc/buddyinfo", "/proc/net/ptype"]
    before = {t: os.stat(t).st_mode for t in targets}
    code = ("import os\n"
            "tries = [lambda: os.fchmod(os.open('/proc/buddyinfo', os.O_RDONLY), 0o440),\n"
            "         lambda: os.fchmod(os.open('/proc/buddyinfo', os.O_PATH), 0o440),\n"
            "         lambda: os.chmod('/proc/self/net/ptype', 0o400),\n"
            "         lambda: os.chmod('//proc/./self/net/ptype', 0o400),\n"
            "         lambda: os.utime('/proc/buddyinfo', (0, 0))]\n"
            "worked = 0\n"
            "for f in tries:\n"
            "    try: f(); worked += 1\n"
            "    except OSError: pass\n"
            "print('worked', worked)\n")
    try:
        proc, _ = run(run.python, "-c", code)
        assert proc.returncode == 0, proc.stderr
        assert "worked 0" in proc.stdout, proc.stdout
        for t in targets:
            assert os.stat(t).st_mode == before[t], t
    finally:
        for t in targets:  # put back what a failing control changed
            if os.stat(t).st_mode != before[t]:
                os.chmod(t, before[t] & 0o7777)


def test_a_chroot_inside_the_tree_is_the_root_of_its_paths(run):
    """A process of the tree that chroots (in a user namespace of its own: a nested
    sandbox) names /outer.txt relative to its new root: the helper resolves it there
    too, changes nothing outside it, and makes names where the caller's kernel would."""
    if run.mode == "nouserns":
        pytest.skip("no file helper without user namespaces (named by ztsa)")
    outer = run.workspace / "outer.txt"
    outer.write_text("x")
    os.chmod(outer, 0o644)
    (run.workspace / "jail").mkdir()
    os.chmod(run.workspace / "jail", 0o777)
    code = ("import ctypes, errno, os, sys\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "if libc.unshare(0x10000000) != 0: print('no userns'); sys.exit(0)\n"
            "os.chroot('jail'); os.chdir('/')\n"
            "for f in (lambda: os.chmod(sys.argv[1], 0o600),\n"
            "          lambda: os.utime(sys.argv[1], (0, 0))):\n"
            "    try: f(); print('changed')\n"
            "    except OSError as e: print(errno.errorcode[e.errno])\n"
            "open('/inside', 'w').close(); os.mkdir('/d'); os.rename('/d', '/e')\n"
            "os.chmod('/inside', 0o600); print('inside ok')\n")
    proc, _ = run(run.python, "-c", code, str(outer))
    assert proc.returncode == 0, proc.stderr
    if "no userns" in proc.stdout:
        pytest.skip("the tree cannot make a user namespace of its own here")
    assert proc.stdout.split() == ["ENOENT", "ENOENT", "inside", "ok"], proc.stdout
    assert outer.stat().st_mode & 0o777 == 0o644
    assert (run.workspace / "jail" / "inside").stat().st_mode & 0o777 == 0o600
    assert (run.workspace / "jail" / "e").is_dir()  # creations by absolute path too


def test_a_memfd_and_an_unnamed_file_change_as_without_ztsa(run):
    if run.mode == "nouserns":
        pytest.skip("no file helper without user namespaces (named by ztsa)")
    code = ("import os\n"
            "fd = os.memfd_create('x'); os.fchmod(fd, 0o600); os.utime(fd, (5, 5))\n"
            "t = os.open('.', os.O_TMPFILE | os.O_WRONLY, 0o644); os.fchmod(t, 0o600)\n"
            "print(oct(os.fstat(fd).st_mode & 0o777), oct(os.fstat(t).st_mode & 0o777))\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["0o600", "0o600"]


@pytest.mark.parametrize("log", [True, False], ids=["log", "no-log"])
def test_refused_writes_removals_and_changes_are_counted(run, log):
    """A write to an existing file, truncate, unlink, rmdir, chmod and utime outside
    the writable places are refused by the kernel (EROFS) without any creation; each is
    counted, and logged with its path."""
    if run.mode == "nouserns":
        pytest.skip("no file helper without user namespaces (named by ztsa)")
    top = Path(tempfile.mkdtemp(prefix="ztsa-counted-"))
    (top / "d").mkdir()
    victim = top / "victim.txt"
    victim.write_text("original")
    if run.mode == "user":
        import pwd

        ids = pwd.getpwnam(ensure_user())
        for p in (top, top / "d", victim):
            os.chown(p, ids.pw_uid, ids.pw_gid)
    os.chmod(top, 0o755)
    v, d = str(victim), str(top / "d")
    code = ("import os, sys\n"
            "v, d = sys.argv[1], sys.argv[2]\n"
            "for f in (lambda: open(v, 'r+'), lambda: os.truncate(v, 0),\n"
            "          lambda: os.unlink(v), lambda: os.rmdir(d), lambda: os.chmod(v, 0o600),\n"
            "          lambda: os.utime(v, (0, 0)), lambda: os.setxattr(v, 'user.x', b'1')):\n"
            "    try: f(); print('done')\n"
            "    except OSError as e: print('refused', e.errno)\n"
            "open('w', 'w').close(); open('w', 'r+').close(); os.truncate('w', 0)\n"
            "os.unlink('w'); os.mkdir('e'); os.rmdir('e')\n")
    proc, events = run(run.python, "-c", code, v, d, log=log)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split().count("refused") == 7, proc.stdout
    assert "ztsa: 7 denied" in proc.stderr, proc.stderr
    assert victim.read_text() == "original" and (top / "d").is_dir()
    if log:
        denies = [e for e in events if e["event"] == "deny"]
        assert sorted(e["syscall"] for e in denies) == sorted(
            ["openat", "truncate", "unlink", "rmdir", "chmod", "utimensat", "setxattr"])
        assert all(e["path"] in (v, d) for e in denies), denies


def test_system_secrets_are_unreadable_even_started_by_root(run):
    targets = [p for p in ("/etc/shadow", "/etc/gshadow") if os.path.exists(p)]
    targets += [os.path.join("/etc/ssh", n) for n in sorted(os.listdir("/etc/ssh"))
                if n.startswith("ssh_host_") and n.endswith("_key")] \
        if os.path.isdir("/etc/ssh") else []
    if not targets:
        pytest.skip("no system secrets on this machine")
    code = ("import sys\n"
            "for p in sys.argv[1:]:\n"
            "    try: open(p, 'rb').read(1); print(p, 'read')\n"
            "    except OSError as e: print(p, 'refused')\n"
            "print(len(open('/etc/passwd').read()) > 0)\n")
    proc, _ = run(run.python, "-c", code, *targets)
    assert proc.returncode == 0, proc.stderr
    assert " read" not in proc.stdout, proc.stdout
    assert proc.stdout.strip().endswith("True")  # the rest of /etc stays readable


def test_other_terminals_are_out_of_reach(run):
    """A terminal of the person's (here a pty the test holds) could be read or given a
    fake prompt; the tree's own devpts has none of the host's."""
    if run.mode == "nouserns":
        pytest.skip("no devpts of its own without user namespaces (named by ztsa)")
    master, slave = os.openpty()
    try:
        name = os.ttyname(slave)
        os.chmod(name, 0o666)  # the tree's user could open it, were it reachable
        code = ("import os, sys\n"
                "for flags in (os.O_RDWR, os.O_WRONLY | os.O_NOCTTY):\n"
                "    try:\n"
                "        fd = os.open(sys.argv[1], flags); os.write(fd, b'FAKE PROMPT')\n"
                "        print('reached')\n"
                "    except OSError as e: print('refused', e.errno)\n"
                "import pty\n"
                "m, s = os.openpty(); os.write(s, b'x'); print('own pty', os.read(m, 1))\n")
        proc, _ = run(run.python, "-c", code, name)
        os.set_blocking(master, False)
        try:
            got = os.read(master, 4096)
        except BlockingIOError:
            got = b""
    finally:
        os.close(master)
        os.close(slave)
    assert proc.returncode == 0, proc.stderr
    assert "reached" not in proc.stdout, proc.stdout
    assert "own pty b'x'" in proc.stdout  # ptys of its own still work
    assert b"FAKE" not in got


SECRETS_IN_HOME = [".claude.json", ".bash_history", ".python_history", ".pgpass",
                   ".terraformrc", ".config/git/credentials", ".local/share/keyrings/login",
                   ".m2/settings.xml", ".gradle/gradle.properties", ".config/rclone/rclone.conf",
                   ".gemini/settings.json", ".config/github-copilot/hosts.json"]


def _fake_home():
    top = Path(tempfile.mkdtemp(prefix="ztsa-home-"))  # reachable by the tree's user
    home = top / "home"
    secret = f"SECRET-{os.urandom(6).hex()}"
    for rel in SECRETS_IN_HOME:
        f = home / rel
        f.parent.mkdir(parents=True, exist_ok=True)
        f.write_text(secret)
    (home / "bin").mkdir()
    tool = home / "bin" / "ztsa-demo-tool"
    tool.write_text("#!/bin/sh\necho tool ran\n")
    tool.chmod(0o755)
    (home / "shared").mkdir()
    (home / "shared" / "data.txt").write_text("readable")
    for d, _dirs, files in os.walk(top):  # readable by the tree's user, were it not hidden
        os.chmod(d, 0o755)
        for f in files:
            os.chmod(os.path.join(d, f), 0o755 if f == "ztsa-demo-tool" else 0o644)
    return home, secret


def test_the_real_home_is_hidden_but_what_the_command_needs(run, monkeypatch):
    """Credential files off FS002's list (agent state, histories, git, database, cloud
    tool and package manager credentials) are simply not there; what CMD's PATH names
    and --allow-read shows stay readable, and read-only."""
    if run.mode == "nouserns":
        pytest.skip("no mount namespace without user namespaces (named by ztsa)")
    home, secret = _fake_home()
    monkeypatch.setenv("HOME", str(home))  # ztsa's caller's home
    code = ("import os, subprocess, sys\n"
            "home = sys.argv[1]\n"
            "for rel in sys.argv[2:]:\n"
            "    try: print(rel, open(os.path.join(home, rel)).read())\n"
            "    except OSError as e: print(rel, 'absent', e.errno)\n"
            "print(subprocess.run(['ztsa-demo-tool'], capture_output=True, text=True).stdout)\n"
            "print(open(os.path.join(home, 'shared', 'data.txt')).read())\n"
            "for p in ('shared/new.txt', 'bin/new', 'new'):\n"
            "    try: open(os.path.join(home, p), 'w'); print('wrote', p)\n"
            "    except OSError as e: print('refused', p, e.errno)\n"
            "print(sorted(os.listdir(home)))\n")
    proc, _ = run(run.python, "-c", code, str(home), *SECRETS_IN_HOME,
                  extra=["--env", f"PATH={home / 'bin'}:/usr/bin:/bin",
                         "--allow-read", str(home / "shared")])
    assert proc.returncode == 0, proc.stderr
    assert secret not in proc.stdout + proc.stderr
    assert proc.stdout.count(" absent 2") == len(SECRETS_IN_HOME), proc.stdout
    assert "tool ran" in proc.stdout and "readable" in proc.stdout
    assert "wrote" not in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "['bin', 'shared']"
    assert sorted(p.name for p in (home / "shared").iterdir()) == ["data.txt"]


def test_a_workspace_in_the_home_stays_writable(run, monkeypatch):
    """The usual case, a project under the home: the workspace is shown (writable, its
    agent files still read-only), the rest of the home is not."""
    if run.mode == "nouserns":
        pytest.skip("no mount namespace without user namespaces (named by ztsa)")
    home = run.workspace.parent
    (run.workspace / "CLAUDE.md").write_text("# rules\n")
    monkeypatch.setenv("HOME", str(home))
    code = ("import os, sys\n"
            "open('made.txt', 'w').write('ok')\n"
            "try: open('CLAUDE.md', 'a').write('x'); print('agent file changed')\n"
            "except OSError: print('agent file read-only')\n"
            "print(os.listdir(sys.argv[1]))\n")
    proc, _ = run(run.python, "-c", code, str(home))
    assert proc.returncode == 0, proc.stderr
    assert (run.workspace / "made.txt").read_text() == "ok"
    assert "agent file read-only" in proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == f"[{run.workspace.name!r}]"


FORK_BOMB = ("import os, sys, time\n"
             "n = 0\n"
             "try:\n"
             "    for _ in range(int(sys.argv[1])):\n"
             "        if os.fork() == 0:\n"
             "            time.sleep(60); os._exit(0)\n"
             "        n += 1\n"
             "except OSError as e: print('refused after', n, e.errno)\n"
             "else: print('all', n)\n")


def test_a_fork_bomb_ends_in_a_clear_denial(run):
    """The PID namespace's pid_max (without one, RLIMIT_NPROC: every process of the user
    then counts, here only the tree's)."""
    proc, events = run(run.python, "-c", FORK_BOMB, "5000", timeout=120)
    assert proc.returncode == 0, proc.stderr
    said = proc.stdout.split()
    assert said[:2] == ["refused", "after"] and said[3] == "11", proc.stdout  # EAGAIN
    assert 4000 <= int(said[2]) < 4096
    proc, _ = run(run.python, "-c", FORK_BOMB, "5000", extra=["--max-procs", "300"])
    said = proc.stdout.split()
    assert said[:2] == ["refused", "after"] and int(said[2]) < 300, proc.stdout
    assert next(e for e in events if e["event"] == "env")["max_procs"] == 4096


def test_a_memory_balloon_ends_in_a_clear_denial(run):
    code = ("try: b = bytearray(int(2.5 * (1 << 30))); print('allocated')\n"
            "except MemoryError: print('refused')\n"
            "small = bytearray(64 << 20); print('a build-sized allocation works')\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == "refused"
    proc, _ = run(run.python, "-c", code.replace("2.5", "0.75"), extra=["--max-memory", "512M"])
    assert proc.stdout.split("\n")[0] == "refused", proc.stdout


def test_memory_no_rlimit_counts_is_bounded_or_taken_first(run):
    """Where rlimits are all there is (no cgroup), RLIMIT_DATA counts only private
    mappings: a process held any amount in SysV shared memory of its own IPC namespace,
    in shared anonymous mappings or memfds (helper-2). The tree is the first the OOM
    killer takes, so that the host's processes stay should it fill the machine; started
    by root, SysV segments are bounded by --max-memory in the tree's IPC namespace too
    (the kernel lets only a namespace's root set that, and an ordinary user's tree has
    none)."""
    code = ("import ctypes, os\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "libc.shmget.argtypes = (ctypes.c_int, ctypes.c_size_t, ctypes.c_int)\n"
            "made, refused, ids = [], [], []\n"
            "for size in (200 << 20, 96 << 20, 96 << 20):\n"
            "    sid = libc.shmget(0, size, 0o1600)\n"  # IPC_PRIVATE, IPC_CREAT | 0600
            "    (made if sid >= 0 else refused).append(size >> 20)\n"
            "    ids += [sid] if sid >= 0 else []\n"
            "for sid in ids: libc.shmctl(sid, 0, None)\n"  # IPC_RMID (nouserns: the host's)
            "print(open('/proc/self/oom_score_adj').read().strip(), made, refused)\n")
    proc, _ = run(run.python, "-c", code, extra=["--max-memory", "128M"])
    assert proc.returncode == 0, proc.stderr
    oom, rest = proc.stdout.split(" ", 1)
    assert oom == "1000", proc.stdout
    if run.mode == "root" and os.geteuid() == 0:  # ztsa started by root
        assert rest.strip() == "[96] [200, 96]", proc.stdout


BALLOONS = ("import os, sys, time\n"
            "kids = []\n"
            "for _ in range(int(sys.argv[1])):\n"
            "    pid = os.fork()\n"
            "    if pid == 0:\n"
            "        b = bytearray(int(sys.argv[2]) << 20)  # touched: zeroed pages\n"
            "        for i in range(0, len(b), 4096): b[i] = 1\n"
            "        time.sleep(3); os._exit(0)\n"
            "    kids.append(pid)\n"
            "ends = [os.waitstatus_to_exitcode(os.waitpid(k, 0)[1]) for k in kids]\n"
            "print('killed', ends.count(-9), 'ended', ends.count(0))\n")


def test_the_tree_cannot_leave_or_widen_its_cgroup(run):
    """Every spelling of a way out of the tree's group: moving itself to the root group
    or to ztsa's, raising the group's limits, making a group of its own. Judged by the
    tree's cgroup afterwards and by the limit ztsa set, read from outside."""
    code = ("import os, glob\n"
            "before = open('/proc/self/cgroup').read()\n"
            "tries = glob.glob('/sys/fs/cgroup/*/cgroup.procs') +"
            " glob.glob('/sys/fs/cgroup/cgroup.procs')\n"
            "for line in before.splitlines():\n"
            "    _, names, path = line.split(':', 2)\n"
            "    for c in (names.split(',') if names else ['']):\n"
            "        base = f'/sys/fs/cgroup/{c}' if c else '/sys/fs/cgroup'\n"
            "        parent = os.path.dirname(path.rstrip('/'))\n"
            "        tries += [f'{base}{parent}/cgroup.procs', f'{base}{path}/memory.max',\n"
            "                  f'{base}{path}/memory.limit_in_bytes', f'{base}{path}/pids.max']\n"
            "        try: os.mkdir(f'{base}{path}/escape'); print('made a group')\n"
            "        except OSError: pass\n"
            "for t in tries:\n"
            "    try:\n"
            "        with open(t, 'w') as f: f.write('max' if t.endswith('.max') else"
            " str(os.getpid()))\n"
            "        print('wrote', t)\n"
            "    except OSError: pass\n"
            "print('same' if open('/proc/self/cgroup').read() == before else 'moved')\n")
    proc, events = run(run.python, "-c", code, extra=["--max-memory", "300M"], log=True)
    assert proc.returncode == 0, proc.stderr
    assert "wrote" not in proc.stdout and "made a group" not in proc.stdout, proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "same", proc.stdout
    env = next(e for e in events if e["event"] == "env")
    if env.get("limits") in ("cgroup v1", "cgroup v2"):
        assert env["max_memory_total"] == 300 << 20


def test_a_balloon_of_many_processes_meets_the_trees_memory_total(run):
    """Each process under its own limit, together over the tree's: the tree's own cgroup
    (beneath ztsa's) holds the total, and the kernel kills at it; where ztsa may make no
    cgroup (an ordinary user without delegation) the log says that only each process's
    rlimits hold."""
    proc, events = run(run.python, "-c", BALLOONS, "6", "160", extra=["--max-memory", "400M"],
                       log=True, timeout=120)
    env = next(e for e in events if e["event"] == "env")
    if env["limits"] == "rlimits":
        # root may always make a group beneath its own in a v1 hierarchy
        assert os.geteuid() != 0 or run.mode != "root" or \
                not os.path.isdir("/sys/fs/cgroup/memory"), env
        assert env["limits_why"] and "max_memory_total" not in env
        return
    assert proc.returncode == 0, proc.stderr
    assert env["max_memory_total"] == 400 << 20 and env["max_memory"] == 400 << 20
    killed = int(proc.stdout.split()[1])
    assert killed >= 2, proc.stdout  # 6 x 160M cannot fit in 400M
    assert "the tree reached --max-memory" in proc.stderr, proc.stderr
    assert events[-1]["memory_killed"] >= killed
    # an ordinary run in the same group limits is untouched, and no group is left
    proc, events = run(run.python, "-c", BALLOONS, "2", "64", extra=["--max-memory", "400M"],
                       log=True)
    assert proc.stdout.split() == ["killed", "0", "ended", "2"], proc.stdout
    assert events[-1]["memory_killed"] == 0
    left = subprocess.run(["find", "/sys/fs/cgroup", "-maxdepth", "6", "-name",
                           f"ztsa-*-{events[0]['run']}"], capture_output=True, text=True)
    assert left.stdout == ""


@pytest.mark.parametrize("log", [True, False], ids=["log", "no-log"])
def test_file_system_denials_are_counted_and_logged(run, log):
    """`touch /tmp/x` failed and the summary said 0 denied: creations refused by the
    kernel (Landlock, the read-only system) are the helper's to count, with their
    paths, and their pids are the host's, as in every other line."""
    if run.mode == "nouserns":
        pytest.skip("no file helper without user namespaces (named by ztsa)")
    target = f"/tmp/ztsa-denied-{os.urandom(4).hex()}"
    code = ("import os, sys\n"
            "for f in (lambda: open(sys.argv[1], 'w'), lambda: os.mkdir(sys.argv[1] + 'd'),\n"
            "          lambda: os.symlink('x', sys.argv[1] + 'l')):\n"
            "    try: f(); print('made')\n"
            "    except OSError as e: print('refused', e.errno)\n"
            "print('pid', os.getpid())\n")
    proc, events = run(run.python, "-c", code, target, log=log)
    assert proc.returncode == 0, proc.stderr
    assert "made" not in proc.stdout
    assert "ztsa: 3 denied" in proc.stderr, proc.stderr
    assert not any(os.path.lexists(target + s) for s in ("", "d", "l"))
    if not log:
        return
    denies = [e for e in events if e["event"] == "deny"]
    assert len(denies) == 3
    assert {e["syscall"] for e in denies} == {"openat", "mkdir", "symlink"}
    assert all(target in e["path"] for e in denies)
    execs = {e["pid"] for e in events if e["event"] == "exec"}
    assert all(e["pid"] in execs for e in denies)  # host pids, like the exec lines
    assert events[-1]["denied"] == 3


@pytest.mark.parametrize("log", [True, False], ids=["log", "no-log"])
def test_a_refused_write_to_an_existing_file_is_counted(run, log):
    """open(existing, 'w') outside the writable places fails on the read-only mount;
    without a log the helper used to let such an O_CREAT open run in the caller, and
    nobody counted the refusal."""
    if run.mode == "nouserns":
        pytest.skip("no file helper without user namespaces (named by ztsa)")
    victim = Path(tempfile.mkdtemp(prefix="ztsa-victim-")) / "file"
    victim.write_text("before\n")
    os.chmod(victim.parent, 0o777)
    os.chmod(victim, 0o666)
    code = ("import sys\ntry: open(sys.argv[1], 'w').write('after')\n"
            "except OSError as e: print('refused', e.errno)\n")
    proc, events = run(run.python, "-c", code, str(victim), log=log)
    assert "refused 30" in proc.stdout, proc.stdout  # EROFS
    assert victim.read_text() == "before\n"
    assert "ztsa: 1 denied" in proc.stderr and str(victim) in proc.stderr, proc.stderr
    if log:
        assert [e["path"] for e in events if e["event"] == "deny"] == [str(victim)]


def test_no_setuid_or_setgid_file_is_left_behind(run):
    """A tree started by root keeps uid 0: a setuid-root copy of a shell left in the
    workspace would make anyone root after the run. chmod to the bits is refused, and
    the helper strips them from the modes of what it creates."""
    code = ("import os, shutil, stat\n"
            "shutil.copy('/bin/true', 'tool')\n"
            "for mode in (0o4755, 0o2755, 0o6755):\n"
            "    try: os.chmod('tool', mode); print('chmod', oct(mode), 'worked')\n"
            "    except OSError as e: print('chmod', oct(mode), 'refused', e.errno)\n"
            "try: os.close(os.open('made', os.O_CREAT | os.O_WRONLY, 0o4755))\n"
            "except OSError as e: print('create refused', e.errno)\n"  # no helper: EPERM
            "os.chmod('tool', 0o755)\n"
            "print('plain chmod works')\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert "worked" not in proc.stdout and "plain chmod works" in proc.stdout
    made = run.workspace / "made"
    assert made.exists() or "create refused 1" in proc.stdout  # stripped, or refused
    for path in (run.workspace / "tool", made):
        if path.exists():
            assert not path.stat().st_mode & 0o6000, (path, oct(path.stat().st_mode))


def test_a_symlink_at_the_audit_log_path_is_not_followed(run):
    """A tree may leave a symlink where the next run's --audit-log goes; ztsa, which is
    not confined, must not truncate and write whatever it names."""
    victim = Path(tempfile.mkdtemp(prefix="ztsa-victim-")) / "precious"
    victim.write_text("precious data\n")
    link = run.workspace / "planted.jsonl"
    link.symlink_to(victim)
    argv, _ = run.command("/bin/true", log=False, extra=["--audit-log", str(link)])
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                          cwd=run.workspace)
    assert proc.returncode == 2, proc.stderr  # a usage error: the file cannot be written
    assert victim.read_text() == "precious data\n"


def test_devices_are_read_only_where_programs_need_them(run):
    """A tree started by root reads every device root owns otherwise: block devices
    (the whole disk on an ordinary host), loop devices, the console's screen."""
    import stat as st

    raw = [os.path.join("/dev", n) for n in sorted(os.listdir("/dev"))
           if n.startswith(("loop", "vcs", "sd", "vd", "nvme", "tty1", "mem", "kmsg"))]
    raw = [p for p in raw if st.S_ISBLK(os.stat(p).st_mode) or st.S_ISCHR(os.stat(p).st_mode)]
    if not raw:
        pytest.skip("no raw device here to try")
    code = ("import os, sys\n"
            "for p in sys.argv[1:]:\n"
            "    try: os.close(os.open(p, os.O_RDONLY | os.O_NONBLOCK)); print(p, 'opened')\n"
            "    except OSError as e: print(p, 'refused')\n"
            "print(len(open('/dev/urandom', 'rb').read(4)), open('/dev/null').read() == '')\n")
    proc, _ = run(run.python, "-c", code, *raw)
    assert proc.returncode == 0, proc.stderr
    assert " opened" not in proc.stdout, proc.stdout
    assert proc.stdout.strip().splitlines()[-1] == "4 True"


def test_a_unix_path_through_proc_is_the_callers_not_the_deciders(run, monkeypatch):
    """The decider (the helper, or ztsa's tracer) opens a Unix socket path to decide on
    it. Through a /proc magic link that would be its own: its descriptors (the audit
    log, the host's /proc), or another process's root, where the tree's names are
    hidden. The tree's /proc/self/fd/N is its own file; other magic links lead nowhere,
    so the tree learns nothing of the decider's files, and a hidden file's existence
    answers the same as a missing one's."""
    home = Path(tempfile.mkdtemp(prefix="ztsa-realhome-"))
    os.chmod(home, 0o755)
    (home / "exists").write_text("x")
    monkeypatch.setenv("HOME", str(home))
    code = ("import os, socket, sys\n"
            "out = {}\n"
            "for name in ('exists', 'missing'):\n"
            "    seen = set()\n"
            "    for pid in ('1', 'self', sys.argv[1]):\n"
            "        for k in range(0, 16):\n"
            "            for tail in (f'/{sys.argv[1]}/root{sys.argv[2]}/{name}',\n"
            "                         f'/1/root{sys.argv[2]}/{name}', ''):\n"
            "                s = socket.socket(socket.AF_UNIX)\n"
            "                try: s.connect(f'/proc/{pid}/fd/{k}{tail}'); seen.add('ok')\n"
            "                except OSError as e: seen.add(e.errno)\n"
            "                s.close()\n"
            "    out[name] = sorted(map(str, seen))\n"
            "print(out['exists'] == out['missing'], out)\n")
    proc, events = run(run.python, "-c", code, str(os.getpid()), str(home), log=True)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("True"), proc.stdout
    shown = [e.get("address", "") for e in events if e.get("event") == "deny"]
    assert not [a for a in shown if a.endswith(".jsonl") or "exists" in a], shown


def test_a_grant_through_a_link_the_tree_left_in_dev_shm_is_refused(run):
    """Without a mount namespace the tree writes the host's /dev/shm: a link it left
    there, named by a later run's --allow-write, led into the home (helper-7)."""
    victim = Path(tempfile.mkdtemp(prefix="ztsa-victim-"))
    os.chmod(victim, 0o777)
    link = Path(f"/dev/shm/ztsa-cache-{os.urandom(4).hex()}")
    try:
        first, _ = run("sh", "-c", f"ln -s {victim} {link}; echo made")
        assert "made" in first.stdout, first.stderr
        if not os.path.islink(link):  # a private /dev/shm: nothing outlived the run
            link.symlink_to(victim)  # the person's own then, which is refused alike
        argv, _ = run.command("sh", "-c", f"echo PWNED > {link}/x; echo ran",
                              extra=["--allow-write", str(link)])
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=120,
                              cwd=run.workspace)
        assert proc.returncode == 2 and "ran" not in proc.stdout, proc.stderr
        assert "passes the symbolic link" in proc.stderr, proc.stderr
        assert not (victim / "x").exists()
    finally:
        link.unlink(missing_ok=True)
