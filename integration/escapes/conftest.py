"""Escape-suite fixtures: compiled attack programs, counting loopback listeners, and a
runner for the installed ztsa as root and as an unprivileged user."""

from __future__ import annotations

import json
import os
import pwd
import shutil
import socket
import stat
import subprocess
import sys
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

PROGS = Path(__file__).parent / "progs"
NOUSERNS = Path(__file__).parent / "nouserns.py"
# One user a pytest-xdist worker (ztsa-escape, ztsa-escape-gw1, ...): what the kernel
# counts by user (RLIMIT_NPROC without a PID namespace, inotify instances) is then
# only the one worker's, as in a run in one process.
_WORKER = os.environ.get("PYTEST_XDIST_WORKER", "gw0")
TEST_USER = "ztsa-escape" + ("" if _WORKER == "gw0" else f"-{_WORKER}")
# The modes of the `run` fixture: a test module may set RUN_MODES to add "nouserns",
# the unprivileged case on a kernel without user namespaces (no file helper: the
# tracer decides connects itself). Its file-system controls are weaker by design, so
# only the network and process modules run in it.
RUN_MODES = ("root", "user")


@pytest.fixture(scope="session", autouse=True)
def _scratch_dir() -> Iterator[None]:
    """Every workspace and outside directory of the suite lives in one directory that
    is removed at the end (a /tmp with thousands of leftovers would change what the
    Landlock read rules must list)."""
    top = tempfile.mkdtemp(prefix="ztsa-escapes-")
    os.chmod(top, 0o755)
    saved, tempfile.tempdir = tempfile.tempdir, top
    try:
        yield
    finally:
        tempfile.tempdir = saved
        shutil.rmtree(top, ignore_errors=True)


@pytest.fixture(scope="session")
def progs() -> Iterator[Path]:
    gcc = shutil.which("gcc")
    if gcc is None:
        pytest.fail("gcc is required to build the escape programs (apt-get install gcc)")
    out = Path(tempfile.mkdtemp(prefix="ztsa-progs-"))
    os.chmod(out, 0o755)
    for src in PROGS.glob("*.c"):
        subprocess.run([gcc, "-O1", "-pthread", "-o", str(out / src.stem), str(src)],
                       check=True, capture_output=True)
    yield out
    shutil.rmtree(out, ignore_errors=True)


class Listeners:
    """TCP and UDP listeners on 127.0.0.1 that count what arrives.

    A thread per socket accepts (or receives) as things arrive; `settle` takes, under
    the same lock, whatever the kernel already holds for each socket (connections
    queued to be accepted, datagrams in the receive buffer), so that the counts are
    whole without a wait. A tree has ended when the test calls settle: everything it
    sent over loopback is queued at the listener by then."""

    def __init__(self) -> None:
        self.tcp: dict[str, socket.socket] = {}
        self.udp: dict[str, socket.socket] = {}
        self.counts: dict[str, int] = {}
        self.lock = threading.Lock()
        self.stop = False
        self.threads: list[threading.Thread] = []
        # written to on close: wakes every thread at once (no timeout to poll with)
        self._wake_r, self._wake_w = os.pipe()

    def add_tcp(self, name: str) -> int:
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        s.listen(4096)
        self.tcp[name] = s
        return self._serve(name, s)

    def add_udp(self, name: str) -> int:
        s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        s.bind(("127.0.0.1", 0))
        self.udp[name] = s
        return self._serve(name, s)

    def _serve(self, name: str, s: socket.socket) -> int:
        s.setblocking(False)
        self.counts[name] = 0
        t = threading.Thread(target=self._loop, args=(name, s), daemon=True)
        t.start()
        self.threads.append(t)
        return int(s.getsockname()[1])

    def _take(self, name: str, s: socket.socket) -> None:
        """Count what the kernel holds for s now (the caller holds the lock)."""
        while True:
            try:
                if s.type == socket.SOCK_STREAM:
                    s.accept()[0].close()
                else:
                    s.recv(65536)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                return
            self.counts[name] += 1

    def _loop(self, name: str, s: socket.socket) -> None:
        import select

        while not self.stop:
            try:
                ready, _, _ = select.select([s, self._wake_r], [], [])
            except (OSError, ValueError):
                return
            if self._wake_r in ready:
                return
            with self.lock:
                self._take(name, s)

    def settle(self) -> dict[str, int]:
        """Counts of everything that has arrived (what the threads have not taken yet
        is taken here)."""
        with self.lock:
            for name, s in [*self.tcp.items(), *self.udp.items()]:
                self._take(name, s)
            return dict(self.counts)

    def close(self) -> None:
        self.stop = True
        os.write(self._wake_w, b"x")
        for t in self.threads:
            t.join(2)
        for s in [*self.tcp.values(), *self.udp.values()]:
            s.close()
        os.close(self._wake_r)
        os.close(self._wake_w)


@pytest.fixture
def listeners() -> Iterator[Listeners]:
    ls = Listeners()
    yield ls
    ls.close()


def _reachable(path: str) -> tuple[str, list[tuple[str, str]]]:
    """(a path to `path` an unprivileged user can reach, the bind mounts that make it so):
    the nearest ancestor under an unsearchable parent (e.g. /root) is mounted under /tmp."""
    anc = path
    while anc != "/":
        parent = os.path.dirname(anc)
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            mnt = "/tmp/ztsa-escape-" + anc.strip("/").replace("/", "-")
            return os.path.join(mnt, os.path.relpath(path, anc)), [(anc, mnt)]
        anc = parent
    return path, []


def _python_for_user() -> tuple[list[str], list[str]]:
    """(mount commands, python argv) so that an unprivileged user can run this Python:
    bind-mount its installation out of an unreadable parent (e.g. a 0700 temporary
    directory, or /root where pyenv keeps the interpreter a venv links to), and name
    site-packages explicitly (the interpreter's site module may not find them there)."""
    import sysconfig

    in_venv = sys.prefix != sys.base_prefix
    real = os.path.realpath(sys.executable)
    purelib = os.path.realpath(sysconfig.get_paths()["purelib"])
    if in_venv and not _base_hidden():
        # the venv's own link, reached where it is mounted: its pyvenv.cfg beside it
        exe, mounts = _reachable(os.path.abspath(sys.executable))
    else:  # the interpreter itself (a venv's base under /root: without its pyvenv.cfg)
        exe, mounts = _reachable(real)
    lib, lib_mounts = _reachable(purelib)
    mounts += [m for m in lib_mounts if m not in mounts]
    if not mounts:
        return [], [os.path.abspath(sys.executable) if in_venv else real]
    cmds: list[str] = []
    for src, mnt in mounts:
        os.makedirs(mnt, exist_ok=True)
        os.chmod(mnt, 0o755)
        cmds += [*(["&&"] if cmds else []), "mount", "--bind", src, mnt]
    return cmds, ["env", f"PYTHONPATH={lib}", exe]


def _base_hidden() -> bool:
    """Does the interpreter a venv links to lie where the test user cannot reach it (and
    so its packages only through PYTHONPATH)?"""
    return bool(_reachable(os.path.realpath(sys.executable))[1])


def ensure_user() -> str:
    try:
        pwd.getpwnam(TEST_USER)
    except KeyError:
        made = subprocess.run(["useradd", "--system", "--no-create-home", "--shell",
                               "/bin/sh", TEST_USER], capture_output=True, text=True)
        # 9: made meanwhile by another test process (a parallel worker, another run)
        if made.returncode not in (0, 9):
            raise AssertionError(f"useradd {TEST_USER}: {made.stderr}") from None
    return TEST_USER


class Runner:
    def __init__(self, mode: str, workspace: Path, log: bool = True) -> None:
        self.mode = mode
        self.workspace = workspace
        self.log = log  # a call's default: with an audit log or without

    @property
    def python(self) -> str:
        """The interpreter path CMD can use (the bind-mounted one for the user case)."""
        if self.mode == "root":
            return sys.executable
        _mount, python = _python_for_user()
        return python[-1]

    @property
    def python_needs_path(self) -> bool:
        """CMD's Python (self.python) finds its packages only through PYTHONPATH: the
        unprivileged case where the venv's base interpreter is hidden (pyenv's in /root)."""
        return self.mode != "root" and sys.prefix != sys.base_prefix and _base_hidden()

    def visible(self, path: str) -> tuple[str, list[tuple[str, str]]]:
        """(a path to `path` the tree's user can reach, the bind mounts that make it so):
        a tool installed under an unreadable directory (e.g. /root/.cargo) is mounted
        read-only under /tmp for the unprivileged case."""
        # resolve the directories only: a rustup proxy decides by its own name
        real = os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))
        if self.mode == "root":
            return real, []
        return _reachable(real)

    def command(self, *cmd: str, allow: list[str] = (), extra: list[str] = (),
                mounts: list[tuple[str, str]] = (), wrap: list[str] = (),
                profile: str = "repo", log: bool | None = None,
                pythonpath: bool = True, env: dict[str, str] | None = None,
                launcher: str | None = None) -> tuple[list[str], Path]:
        """(the argv that runs `ztsa exec ... -- cmd` in this mode, its audit log path).
        pythonpath: pass PYTHONPATH to CMD in the unprivileged case (a Python CMD on the
        bind-mounted interpreter needs it); env: variables set for ztsa itself;
        launcher: a `ztsa` command to run instead of this interpreter's `-m ztsa`."""
        setenv = ["env", *(f"{k}={v}" for k, v in (env or {}).items())] if env else []
        log = self.log if log is None else log
        log_path = self.workspace / f"audit-{os.urandom(4).hex()}.jsonl"
        logging = ["--audit-log", str(log_path)] if log else []
        ztsa_args = ["exec", "--profile", profile, "--workspace", str(self.workspace),
                     *logging, *[f"--allow-net={a}" for a in allow],
                     *extra, "--", *cmd]
        if self.mode == "root":  # root, or the suite's own unprivileged user
            # -I: the installed ztsa whatever the caller's directory (a checkout's own
            # has no native module), as the launcher starts it
            ztsa = [launcher] if launcher else [sys.executable, "-I", "-m", "ztsa"]
            argv = [*setenv, *wrap, *ztsa, *ztsa_args]
        else:  # user, nouserns
            user = ensure_user()
            mount, python = _python_for_user()
            for src, dst in mounts:
                os.makedirs(dst, exist_ok=True)
                os.chmod(dst, 0o755)
                mount = [*mount, *(["&&"] if mount else []), "mount", "--bind", src, dst]
            # the bind-mounted interpreter finds its site-packages through PYTHONPATH only,
            # and ztsa passes CMD a minimal environment: name it
            if pythonpath:
                ztsa_args = [ztsa_args[0], "--env", "PYTHONPATH", *ztsa_args[1:]]
            # -P: not the caller's directory first (a checkout's ztsa has no native
            # module); PYTHONPATH still names the installed one
            safe = ["-P"] if sys.version_info >= (3, 11) else []
            ztsa = [launcher] if launcher else [*python, *safe, "-m", "ztsa"]
            inner = " ".join(map(_q, [*setenv, *wrap, *ztsa, *ztsa_args]))
            setpriv = (f"setpriv --reuid {user} --regid {user} --clear-groups "
                       f"--inh-caps=-all --bounding-set=-all {inner}")
            script = (" ".join(a if a == "&&" else _q(a) for a in mount) + " && "
                      if mount else "") + setpriv
            argv = ["unshare", "-m", "--propagation", "private", "sh", "-c", script]
            if self.mode == "nouserns":
                argv = [sys.executable, str(NOUSERNS), *argv]
        return argv, log_path

    def __call__(self, *cmd: str, allow: list[str] = (), extra: list[str] = (),
                 timeout: float = 180, pass_fds: tuple[int, ...] = (),
                 mounts: list[tuple[str, str]] = (), wrap: list[str] = (),
                 profile: str = "repo", log: bool | None = None, pythonpath: bool = True,
                 env: dict[str, str] | None = None, launcher: str | None = None
                 ) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
        argv, log_path = self.command(*cmd, allow=allow, extra=extra, mounts=mounts,
                                      wrap=wrap, profile=profile, log=log,
                                      pythonpath=pythonpath, env=env, launcher=launcher)
        proc = subprocess.run(argv, capture_output=True, text=True, timeout=timeout,
                              cwd=self.workspace, pass_fds=pass_fds)
        return proc, self.finish(proc.stderr, log_path)

    def finish(self, stderr: str, log_path: Path) -> list[dict[str, Any]]:
        if self.mode == "nouserns":
            # the mode tests what it claims: no user namespaces, so no file helper
            assert "lacks user namespaces" in stderr, stderr
        events = []
        if log_path.exists():
            events = [json.loads(line) for line in log_path.read_text().splitlines()]
        return events


def pids_with(token: str) -> list[int]:
    """The host's pids of the processes whose command line holds token (how a test finds
    a process of the tree it started: inside, pids are those of the tree's namespace)."""
    found = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/cmdline", "rb") as f:
                if token.encode() in f.read():
                    found.append(int(entry))
        except OSError:
            continue
    return found


def ztsa_pid(root: int) -> int | None:
    """The ztsa process at or below root (the runner's process: ztsa itself as root, a
    wrapper otherwise), by walking root's descendants."""
    todo = [root]
    while todo:
        pid = todo.pop()
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if b"-m\0ztsa\0exec" in f.read():
                    return pid
            with open(f"/proc/{pid}/task/{pid}/children") as f:
                todo += [int(c) for c in f.read().split()]
        except OSError:
            continue
    return None


def _q(s: str) -> str:
    import shlex

    return shlex.quote(s)


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "run" in metafunc.fixturenames:
        modes = getattr(metafunc.module, "RUN_MODES", RUN_MODES)
        if getattr(metafunc.module, "BOTH_LOG_MODES", False):
            # with a log the file helper performs every creation (and logs refusals);
            # without one it lets most O_CREAT opens run in the caller, where CMD's
            # second Landlock ruleset alone keeps protected names from being made
            modes = [f"{m}/{kind}" for m in modes for kind in ("log", "no-log")]
        metafunc.parametrize("run", modes, indirect=True)


@pytest.fixture
def run(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Runner:
    mode, _, kind = request.param.partition("/")
    if mode == "root" and os.geteuid() != 0:
        pytest.skip("the root case needs root")
    if mode == "nouserns" and os.geteuid() != 0:
        pytest.skip("making a user namespace with uids 0-65535 mapped needs root")
    if mode == "user" and os.geteuid() != 0:
        # already unprivileged: the plain runner is the unprivileged case
        mode = "root"
    ws = Path(tempfile.mkdtemp(prefix="ztsa-ws-"))
    os.chmod(ws, 0o777)
    return Runner(mode, ws, log=kind != "no-log")


@pytest.fixture
def user_run() -> Runner:
    """The unprivileged case alone (for controls that only an unprivileged caller
    lacks)."""
    ws = Path(tempfile.mkdtemp(prefix="ztsa-ws-"))
    os.chmod(ws, 0o777)
    return Runner("user" if os.geteuid() == 0 else "root", ws)


@pytest.fixture
def pester() -> str:
    """Python code to put before a loop: a thread sends the process SIGUSR1 every 0.1 ms,
    counted in hits[0] by a handler installed without SA_RESTART (as Python installs
    them); `stop.append(1); pest.join()` ends it (joined: a signal sent after the
    interpreter has reset its handlers at exit would kill it)."""
    return ("import os, signal, threading, time\n"
            "hits = [0]\n"
            "signal.signal(signal.SIGUSR1, lambda *a: hits.__setitem__(0, hits[0] + 1))\n"
            "pid, stop = os.getpid(), []\n"
            "def pester():\n"
            "    while not stop:\n"
            "        os.kill(pid, signal.SIGUSR1); time.sleep(0.0001)\n"
            "pest = threading.Thread(target=pester, daemon=True)\n"
            "pest.start()\n")
