"""Network escapes: each asserts on what arrived at loopback listeners."""

from __future__ import annotations

import pytest

# with an audit log, the tracer decides every connect in Python and logs it; without
# one, the file helper answers connects (user notifications) or, with no helper, the
# tracer's C loop does: every connect test runs both ways
LOG = pytest.mark.parametrize("log", [True, False], ids=["log", "no-log"])
# root, an unprivileged user, and an unprivileged user without user namespaces (no file
# helper: the tracer's C loop decides connects when there is no log)
RUN_MODES = ("root", "user", "nouserns")


@LOG
def test_direct_connect_to_denied_port(run, listeners, log):
    denied = listeners.add_tcp("denied")
    proc, events = run(run.python, "-c",
                       f"import socket; s=socket.socket(); s.connect(('127.0.0.1', {denied}))",
                       log=log)
    assert proc.returncode == 1 and "Operation not permitted" in proc.stderr
    assert listeners.settle()["denied"] == 0
    assert "ztsa: 1 denied" in proc.stderr
    if log:
        # one event per decision: the deny line alone, in one shape
        deny = [e for e in events if e["event"] == "deny"]
        assert len(deny) == 1 and deny[0]["address"] == f"127.0.0.1:{denied}"
        assert (deny[0]["syscall"], deny[0]["port"], deny[0]["protocol"]) == (
            "connect", denied, "tcp")
        assert not [e for e in events if e["event"] == "connect"]
        assert events[-1]["connects"] == 1 and events[-1]["denied"] == 1


@LOG
def test_allowed_tcp_and_udp_are_reached(run, listeners, log):
    tcp = listeners.add_tcp("tcp")
    udp = listeners.add_udp("udp")
    code = (f"import socket; s=socket.socket(); s.connect(('127.0.0.1', {tcp})); "
            f"u=socket.socket(socket.AF_INET, socket.SOCK_DGRAM); "
            f"u.sendto(b'x', ('127.0.0.1', {udp}))")
    proc, events = run(run.python, "-c", code,
                       allow=[f"127.0.0.1:{tcp}", f"127.0.0.1:{udp}"], log=log)
    assert proc.returncode == 0, proc.stderr
    counts = listeners.settle()
    assert counts == {"tcp": 1, "udp": 1}
    assert "ztsa: 0 denied" in proc.stderr
    if not log:
        return
    connects = [e for e in events if e["event"] == "connect"]
    assert connects[0]["decision"] == "allow" and connects[0]["protocol"] == "tcp"
    assert connects[0]["rule"] == f"--allow-net 127.0.0.1:{tcp}"


@pytest.mark.parametrize("log", [True, False], ids=["log", "fast-path"])
@pytest.mark.parametrize(("prog", "extra"), [
    ("flip_thread", ["10000"]),  # a thread flips the sockaddr
    ("flip_shared", ["3000"]),  # a second process, through MAP_SHARED memory
    ("flip_shared", ["3000", "vfork"]),  # a vfork child
], ids=["thread", "shared-memory", "vfork"])
def test_flipping_the_sockaddr_never_reaches_the_denied_port(run, listeners, progs, prog,
                                                             extra, log):
    """Without an audit log the tracer's C fast path performs allowed connects: the same
    races, against it too."""
    allowed, denied = listeners.add_tcp("allowed"), listeners.add_tcp("denied")
    proc, _ = run(str(progs / prog), str(allowed), str(denied), *extra,
                  allow=[f"127.0.0.1:{allowed}"], log=log)
    assert proc.returncode == 0, proc.stderr
    counts = listeners.settle()
    assert counts["denied"] == 0
    assert counts["allowed"] > 0  # the attack ran: some connects went through


def test_a_shutdown_during_an_allowed_connect_never_redirects_it(run, listeners, progs):
    """The tree's connect is decided on the helper's copy; a sibling thread's shutdown()
    of the connecting socket and a rewritten address must not make the kernel connect
    that socket again to the denied port."""
    allowed, denied = listeners.add_tcp("allowed"), listeners.add_tcp("denied")
    proc, _ = run(str(progs / "connect_shutdown"), str(allowed), str(denied), "2000",
                  allow=[f"127.0.0.1:{allowed}"], log=False)
    assert proc.returncode == 0, proc.stderr
    assert listeners.settle()["denied"] == 0
    assert listeners.settle()["allowed"] > 0


@LOG
def test_ipv4_mapped_ipv6_is_normalised(run, listeners, log):
    allowed, denied = listeners.add_tcp("allowed"), listeners.add_tcp("denied")
    code = ("import socket\n"
            f"for port in ({allowed}, {denied}):\n"
            "    s = socket.socket(socket.AF_INET6)\n"
            "    try: s.connect(('::ffff:127.0.0.1', port)); print('ok', port)\n"
            "    except OSError as e: print('no', port, e.errno)\n")
    proc, _ = run(run.python, "-c", code, allow=[f"127.0.0.1:{allowed}"], log=log)
    assert f"ok {allowed}" in proc.stdout and f"no {denied} 1" in proc.stdout
    assert listeners.settle() == {"allowed": 1, "denied": 0}


def test_udp_sendto_sendmsg_sendmmsg_every_message_checked(run, listeners, progs):
    allowed, denied = listeners.add_udp("allowed"), listeners.add_udp("denied")
    proc, _ = run(str(progs / "udp_send"), str(allowed), str(denied),
                  allow=[f"127.0.0.1:{allowed}"])
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout
    assert "sendto allowed 1" in out and "sendto denied -1 errno 1" in out
    assert "sendmsg denied -1 errno 1" in out and "sendmsg allowed 1" in out
    assert "sendmmsg 2 lens 1 1" in out  # stops at the denied third message
    assert "sendto unspec -1 errno 1" in out
    counts = listeners.settle()
    assert counts == {"allowed": 4, "denied": 0}


def test_tcp_fast_open_to_denied_port(run, listeners, progs):
    denied = listeners.add_tcp("denied")
    proc, _ = run(str(progs / "tfo"), str(denied))
    assert proc.returncode == 0, proc.stderr
    assert "fastopen sendto -1 errno 1" in proc.stdout
    assert "fastopen connect -1 errno 1" in proc.stdout
    assert listeners.settle()["denied"] == 0


@LOG
def test_unix_socket_standing_in_for_docker_sock(run, log):
    import os
    import socket
    import tempfile
    from pathlib import Path

    d = Path(tempfile.mkdtemp(prefix="ztsa-daemon-"))  # reachable by the tree's user
    os.chmod(d, 0o755)
    path = str(d / "docker.sock")
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(path)
    os.chmod(path, 0o777)
    srv.listen(8)
    srv.settimeout(1)
    code = (f"import socket; s=socket.socket(socket.AF_UNIX); s.connect({path!r})")
    proc, events = run(run.python, "-c", code, log=log)
    assert proc.returncode == 1 and "Operation not permitted" in proc.stderr
    try:
        srv.accept()
        arrived = True
    except TimeoutError:
        arrived = False
    srv.close()
    assert not arrived
    assert "ztsa: 1 denied" in proc.stderr
    if log:
        assert any(e["event"] == "deny" and e["address"] == path for e in events)


@LOG
def test_fork_storm_of_500_each_connecting(run, listeners, log):
    denied = listeners.add_tcp("denied")
    code = ("import os, socket\n"
            "pids = []\n"
            "for i in range(500):\n"
            "    pid = os.fork()\n"
            "    if pid == 0:\n"
            "        s = socket.socket()\n"
            f"        try: s.connect(('127.0.0.1', {denied}))\n"
            "        except OSError: pass\n"
            "        os._exit(0)\n"
            "    pids.append(pid)\n"
            "for p in pids: os.waitpid(p, 0)\n")
    proc, events = run(run.python, "-c", code, timeout=300, log=log)
    assert proc.returncode == 0, proc.stderr
    assert listeners.settle()["denied"] == 0
    assert "ztsa: 500 denied" in proc.stderr
    if log:
        assert len([e for e in events if e["event"] == "deny"]) == 500


@LOG
def test_64_threads_connecting_at_once(run, listeners, log):
    allowed, denied = listeners.add_tcp("allowed"), listeners.add_tcp("denied")
    code = ("import socket, threading\n"
            "def go(port):\n"
            "    s = socket.socket()\n"
            "    try: s.connect(('127.0.0.1', port))\n"
            "    except OSError: pass\n"
            f"ts = [threading.Thread(target=go, args=({allowed} if i % 2 else {denied},))"
            " for i in range(64)]\n"
            "[t.start() for t in ts]; [t.join() for t in ts]\n")
    proc, _ = run(run.python, "-c", code, allow=[f"127.0.0.1:{allowed}"], log=log)
    assert proc.returncode == 0, proc.stderr
    assert listeners.settle() == {"allowed": 32, "denied": 0}


def test_audit_log_follows_its_schema(run, listeners):
    import json
    from pathlib import Path

    import jsonschema

    schema = json.loads((Path(__file__).parents[2] / "docs" / "audit-schema.json").read_text())
    allowed, denied = listeners.add_tcp("allowed"), listeners.add_tcp("denied")
    code = ("import socket, subprocess\n"
            f"socket.socket().connect(('127.0.0.1', {allowed}))\n"
            "try:\n"
            f"    socket.socket().connect(('127.0.0.1', {denied}))\n"
            "except OSError: pass\n"
            "subprocess.Popen(['sleep', '30'])\n")
    proc, events = run(run.python, "-c", code, allow=[f"127.0.0.1:{allowed}"])
    assert proc.returncode == 0, proc.stderr
    kinds = {e["event"] for e in events}
    assert {"exec", "connect", "deny", "exit", "kill", "summary"} <= kinds
    for e in events:
        jsonschema.validate(e, schema)
    assert events[-1]["event"] == "summary" and events[-1]["denied"] == 1
    assert "1 denied" in proc.stderr and "audit log:" in proc.stderr


@LOG
def test_unix_symlink_swapped_between_workspace_and_outside_socket(run, log):
    """A symlink in the workspace flips between an allowed socket (in the workspace) and
    a stand-in for docker.sock while the tree connects through it: the outside socket
    must never see a connection."""
    import os
    import socket
    import tempfile
    import threading
    from pathlib import Path

    outside_dir = Path(tempfile.mkdtemp(prefix="ztsa-outside-"))  # reachable by the tree
    os.chmod(outside_dir, 0o755)
    counts = {"outside": 0}
    servers = []
    # the allowed socket is the tree's own server in the workspace (a socket there that a
    # process outside the tree bound is not the tree's to reach)
    for name, path in (("outside", str(outside_dir / "docker.sock")),):
        srv = socket.socket(socket.AF_UNIX)
        srv.bind(path)
        os.chmod(path, 0o777)
        srv.listen(512)
        srv.settimeout(0.2)
        servers.append(srv)

        def accept(srv=srv, name=name):
            while True:
                try:
                    c, _ = srv.accept()
                except TimeoutError:
                    continue
                except OSError:
                    return
                counts[name] += 1
                c.close()

        threading.Thread(target=accept, daemon=True).start()
    link = str(run.workspace / "s")
    code = ("import os, socket, threading\n"
            f"link, a, b = {link!r}, {str(run.workspace / 'ok.sock')!r}, "
            f"{str(outside_dir / 'docker.sock')!r}\n"
            "stop = False\n"
            "def flip():\n"
            "    i = 0\n"
            "    while not stop:\n"
            "        tmp = link + '.tmp'\n"
            "        try: os.unlink(tmp)\n"
            "        except FileNotFoundError: pass\n"
            "        os.symlink(a if i % 2 else b, tmp); os.replace(tmp, link); i += 1\n"
            "srv = socket.socket(socket.AF_UNIX); srv.bind(a); srv.listen(512)\n"
            "accepted = 0\n"
            "def serve():\n"
            "    global accepted\n"
            "    while True:\n"
            "        try: c, _ = srv.accept()\n"
            "        except OSError: return\n"
            "        accepted += 1; c.close()\n"
            "threading.Thread(target=serve, daemon=True).start()\n"
            "os.symlink(a, link)\n"
            "t = threading.Thread(target=flip); t.start()\n"
            "ok = 0\n"
            "for _ in range(2000):\n"
            "    s = socket.socket(socket.AF_UNIX)\n"
            "    try: s.connect(link); ok += 1\n"
            "    except OSError: pass\n"
            "    s.close()\n"
            "stop = True; t.join(); print('connected', ok, 'accepted', accepted)\n")
    proc, _ = run(run.python, "-c", code, log=log)
    import time

    time.sleep(0.5)
    for srv in servers:
        srv.close()
    assert proc.returncode == 0, proc.stderr
    assert counts["outside"] == 0
    ok = int(proc.stdout.split()[1])
    assert ok > 0, proc.stdout


@LOG
def test_abstract_unix_sockets_only_when_named(run, log):
    """An abstract socket (a D-Bus bus, an X server) is reachable only when
    --allow-unix names it; the denied one must see no connection."""
    import os
    import socket

    names = {k: f"ztsa-test-{k}-{os.getpid()}-{os.urandom(3).hex()}" for k in ("ok", "no")}
    servers = {}
    for k, name in names.items():
        srv = socket.socket(socket.AF_UNIX)
        srv.bind("\0" + name)
        srv.listen(8)
        srv.settimeout(1)
        servers[k] = srv
    code = ("import socket, sys\n"
            "for name in sys.argv[1:]:\n"
            "    s = socket.socket(socket.AF_UNIX)\n"
            "    try: s.connect('\\0' + name); print('ok', name)\n"
            "    except OSError as e: print('no', name, e.errno)\n")
    proc, _ = run(run.python, "-c", code, names["ok"], names["no"],
                  extra=[f"--allow-unix=@{names['ok']}"], log=log)
    arrived = {}
    for k, srv in servers.items():
        try:
            srv.accept()[0].close()
            arrived[k] = True
        except TimeoutError:
            arrived[k] = False
        srv.close()
    assert proc.returncode == 0, proc.stderr
    assert f"ok {names['ok']}" in proc.stdout and f"no {names['no']} 1" in proc.stdout
    assert arrived == {"ok": True, "no": False}


@LOG
def test_signals_do_not_turn_connects_into_eintr(run, listeners, log, pester):
    """A connect waiting for the helper (or stopped for the tracer) is not interrupted
    by a handled signal: 1,000 connects under a stream of SIGUSR1 all arrive, once."""
    allowed = listeners.add_tcp("allowed")
    code = (pester + "import socket\n"
            "for i in range(1000):\n"
            f"    s = socket.socket(); s.connect(('127.0.0.1', {allowed})); s.close()\n"
            "stop.append(1); pest.join()\n"
            "print(hits[0] > 0)\n")
    proc, _ = run(run.python, "-c", code, allow=[f"127.0.0.1:{allowed}"], log=log,
                  timeout=120)
    assert proc.returncode == 0, proc.stderr[-500:]
    assert proc.stdout.strip() == "True"
    assert listeners.settle()["allowed"] == 1000


def test_only_tcp_udp_and_icmp_sockets_of_the_ip_families(run):
    """SCTP binds and connects to further addresses through its socket options
    (SCTP_SOCKOPT_CONNECTX, BINDX_ADD), which no connect or bind that ztsa decides
    names; MPTCP opens subflows of its own; UDP-Lite is a transport nothing here needs.
    Their sockets are refused (EPROTONOSUPPORT, as a kernel without them answers); TCP,
    UDP and ping sockets are still made."""
    code = ("import socket\n"
            "out = []\n"
            "for fam in (socket.AF_INET, socket.AF_INET6):\n"
            "    for kind, proto in ((socket.SOCK_STREAM, 262), (socket.SOCK_STREAM, 132),\n"
            "                        (socket.SOCK_DGRAM, 136), (socket.SOCK_STREAM, 6),\n"
            "                        (socket.SOCK_DGRAM, 17), (socket.SOCK_STREAM, 0)):\n"
            "        try: socket.socket(fam, kind, proto).close(); out.append('ok')\n"
            "        except OSError as e: out.append(str(e.errno))\n"
            "print(' '.join(out))\n")
    proc, _ = run(run.python, "-c", code)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["93", "93", "93", "ok", "ok", "ok"] * 2, proc.stdout


@LOG
def test_a_refused_destination_is_said_at_once_and_once(run, listeners, log):
    """A person, or an agent waiting on a tool's retries, sees a refused destination on
    stderr within a second of its first refusal, not only in the summary at the end;
    each destination once; the summary names it once too."""
    import os
    import select
    import subprocess
    import time

    denied = listeners.add_tcp("denied")
    code = ("import socket, time\n"
            "for _ in range(5):\n"
            f"    try: socket.create_connection(('127.0.0.1', {denied}), 2)\n"
            "    except OSError: pass\n"
            "print('tried', flush=True)\n"
            "time.sleep(4)\n")
    argv, _ = run.command(run.python, "-c", code, log=log)
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            cwd=run.workspace)
    assert proc.stdout is not None and proc.stderr is not None
    os.set_blocking(proc.stderr.fileno(), False)
    err, tried_at, said_at = b"", None, None
    end = time.monotonic() + 60
    while proc.poll() is None and time.monotonic() < end and said_at is None:
        ready, _, _ = select.select([proc.stdout, proc.stderr], [], [], 0.1)
        if proc.stdout in ready and tried_at is None and proc.stdout.readline():
            tried_at = time.monotonic()
        if proc.stderr in ready:
            err += proc.stderr.read() or b""
            if f"refused connect 127.0.0.1:{denied}".encode() in err:
                said_at = time.monotonic()
    _, err_rest = proc.communicate(timeout=60)
    err += err_rest
    text = err.decode()
    assert said_at is not None, text
    # said before the tree ended (it sleeps 4 s after its tries), within a second of them
    assert tried_at is None or said_at - tried_at < 1.0, (said_at, tried_at, text)
    assert text.count(f"refused connect 127.0.0.1:{denied}") == 1, text
    assert f"--allow-net 127.0.0.1:{denied}" in text
    summary = [line for line in text.splitlines() if "denied, " in line]
    assert summary and summary[-1].count(f"connect 127.0.0.1:{denied}") == 1, summary
    assert listeners.settle()["denied"] == 0
