"""Attacks on the tree's own network namespace (native/net.c), each found by attacking it
and each judged by what arrived: a descriptor swapped between a check and the kernel's
look-up, an IPv6 routing header, the host's abstract Unix names, a disconnected host
socket bound to listen, a raw socket, a helper held by a send that waits."""

from __future__ import annotations

import contextlib
import os
import socket
import threading
import time

import pytest

RUN_MODES = ("root", "user")  # the nouserns mode has no network namespace


def test_a_host_socket_swapped_onto_the_number_gets_no_call_of_the_trees(run, listeners,
                                                                          progs):
    allowed, denied = listeners.add_udp("allowed"), listeners.add_udp("denied")
    proc, _ = run(str(progs / "fd_swap"), str(allowed), str(denied), "5000",
                  allow=[f"127.0.0.1:{allowed}"], log=False)
    assert proc.returncode == 0 and "done" in proc.stdout, proc.stderr
    assert listeners.settle()["denied"] == 0


def test_source_routing_options_are_refused(run):
    code = ("import socket\n"
            "for level, opt in ((41, 57), (41, 5), (41, 6), (0, 4)):\n"
            "    s = socket.socket(socket.AF_INET6 if level == 41 else socket.AF_INET,"
            " socket.SOCK_DGRAM)\n"
            "    try: s.setsockopt(level, opt, bytes(8)); print(level, opt, 'set')\n"
            "    except OSError as e: print(level, opt, e.errno)\n")
    proc, _ = run(run.python, "-c", code, log=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[:4] == ["41 57 1", "41 5 1", "41 6 1", "0 4 1"]


def _abstract_server(name: str, got: list[bytes]) -> socket.socket:
    s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    s.bind("\0" + name)
    s.settimeout(0.2)

    def serve() -> None:
        while True:
            try:
                got.append(s.recv(100))
            except TimeoutError:
                continue
            except OSError:
                return

    threading.Thread(target=serve, daemon=True).start()
    return s


def test_a_host_abstract_socket_reaches_no_other_host_name(run):
    tag = os.urandom(4).hex()
    allowed_got: list[bytes] = []
    secret_got: list[bytes] = []
    servers = [_abstract_server(f"ztsa-allowed-{tag}", allowed_got),
               _abstract_server(f"ztsa-secret-{tag}", secret_got)]
    code = ("import socket, sys\n"
            "s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
            "s.connect('\\0ztsa-allowed-' + sys.argv[1]); s.send(b'ok')\n"
            "for step in ('connect', 'sendto', 'unspec', 'bind'):\n"
            "    try:\n"
            "        if step == 'connect': s.connect('\\0ztsa-secret-' + sys.argv[1]);"
            " s.send(b'escape')\n"
            "        if step == 'sendto': s.sendto(b'escape', '\\0ztsa-secret-' + sys.argv[1])\n"
            "        if step == 'unspec': s.connect(b'\\0\\0'.decode())\n"
            "        if step == 'bind': s.bind('\\0ztsa-squat-' + sys.argv[1])\n"
            "        print(step, 'ok')\n"
            "    except OSError as e: print(step, e.errno)\n")
    proc, _ = run(run.python, "-c", code, tag, allow=[],
                  extra=[f"--allow-unix=@ztsa-allowed-{tag}"], log=False)
    time.sleep(0.5)
    squat = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
    try:
        squat.bind(f"\0ztsa-squat-{tag}")  # free: the tree took no name of the host's
        squatted = False
    except OSError:
        squatted = True
    squat.close()
    for s in servers:
        s.close()
    assert proc.returncode == 0, proc.stderr
    assert allowed_got == [b"ok"], (allowed_got, proc.stdout)
    assert secret_got == [], proc.stdout
    assert not squatted, proc.stdout


def test_a_connected_host_socket_cannot_be_disconnected_and_bound(run, listeners):
    allowed = listeners.add_udp("allowed")
    probe = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    probe.bind(("127.0.0.1", 0))
    free = probe.getsockname()[1]
    probe.close()
    code = ("import socket, struct, sys\n"
            "s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "s.connect(('127.0.0.1', int(sys.argv[1]))); s.send(b'x')\n"
            "try: s.connect(socket.socket(socket.AF_INET).getsockname()[:0] or"
            " ('0.0.0.0', 0)); print('reconnect ok')\n"
            "except OSError as e: print('reconnect', e.errno)\n"
            "import ctypes; libc = ctypes.CDLL(None, use_errno=True)\n"
            "unspec = struct.pack('<H14x', 0)\n"
            "r = libc.connect(s.fileno(), unspec, len(unspec))\n"
            "print('unspec', r, ctypes.get_errno() if r else 0)\n"
            "try: s.bind(('0.0.0.0', int(sys.argv[2]))); print('bind ok')\n"
            "except OSError as e: print('bind', e.errno)\n")
    proc, _ = run(run.python, "-c", code, str(allowed), str(free),
                  allow=[f"127.0.0.1:{allowed}"], log=False)
    assert proc.returncode == 0, proc.stderr
    assert "bind ok" not in proc.stdout, proc.stdout
    assert "unspec -1 1" in proc.stdout, proc.stdout  # EPERM
    # nothing of the host's reaches the tree on that port
    c = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    c.sendto(b"inbound", ("127.0.0.1", free))
    c.close()


def test_a_raw_socket_is_never_made_in_the_hosts_namespace(run, listeners):
    if run.mode != "root" or os.geteuid() != 0:
        pytest.skip("--keep-cap NET_RAW is root's")
    listeners.add_tcp("allowed")
    code = ("import socket, sys\n"
            "s = socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_UDP)\n"
            "try: s.connect(('127.0.0.1', 0)); print('connect ok')\n"
            "except OSError as e: print('connect', e.errno)\n")
    proc, _ = run(run.python, "-c", code, allow=["127.0.0.1"], extra=["--keep-cap=NET_RAW"],
                  log=False)
    assert proc.returncode == 0, proc.stderr
    assert "connect ok" not in proc.stdout, proc.stdout
    assert listeners.settle()["allowed"] == 0


def test_a_send_that_waits_holds_only_its_own_thread(run):
    """A Unix datagram receiver of the tree's own that never reads: the sender waits,
    and another thread's file creation goes on (the helper is not held)."""
    code = ("import os, socket, threading, time, sys\n"
            "ws = sys.argv[1]\n"
            "r = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM); r.bind('\\0ztsa-full')\n"
            "w = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)\n"
            "def fill():\n"
            "    try:\n"
            "        for i in range(100000): w.sendto(b'x' * 1000, '\\0ztsa-full')\n"
            "    except OSError as e: print('send', e.errno)\n"
            "threading.Thread(target=fill, daemon=True).start()\n"
            "time.sleep(1)\n"
            "t0 = time.monotonic()\n"
            "open(os.path.join(ws, 'made'), 'w').close()\n"
            "print('made', round(time.monotonic() - t0, 1), flush=True)\n"
            "os._exit(0)\n")
    proc, _ = run(run.python, "-c", code, str(run.workspace), log=False, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "made 0.0" in proc.stdout, proc.stdout


def test_the_socket_ztsa_connects_keeps_what_the_tree_set_and_nothing_else(run, listeners):
    """Options the tree set before connecting are on the socket it gets; the ones it did
    not set keep their defaults (a buffer size copied at its default value would fix it,
    and turn TCP's buffer tuning off)."""
    allowed = listeners.add_tcp("allowed")
    code = ("import socket, sys\n"
            "fresh = socket.socket()\n"
            "s = socket.socket(); s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)\n"
            "s.setsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE, 1)\n"
            "s.connect(('127.0.0.1', int(sys.argv[1])))\n"
            "print(s.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY),"
            " s.getsockopt(socket.SOL_SOCKET, socket.SO_KEEPALIVE),"
            " s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) =="
            " fresh.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF))\n")
    proc, _ = run(run.python, "-c", code, str(allowed), allow=[f"127.0.0.1:{allowed}"],
                  log=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["1", "1", "True"], proc.stdout
    assert listeners.settle()["allowed"] == 1


def test_tcp_buffer_tuning_stays_on(run):
    """A download through the socket ztsa connected grows its receive buffer as any
    other would: no default-valued buffer size was set on it (which locks the size)."""
    srv = socket.create_server(("127.0.0.1", 0))
    port = srv.getsockname()[1]

    def send() -> None:
        with contextlib.suppress(OSError):
            c, _ = srv.accept()
            c.sendall(b"x" * (16 << 20))
            c.close()

    threading.Thread(target=send, daemon=True).start()
    code = ("import socket, sys\n"
            "s = socket.create_connection(('127.0.0.1', int(sys.argv[1])))\n"
            "before = s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF); n = 0\n"
            "while (d := s.recv(65536)): n += len(d)\n"
            "print(n, s.getsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF) > before)\n")
    proc, _ = run(run.python, "-c", code, str(port), allow=[f"127.0.0.1:{port}"], log=False)
    srv.close()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == [str(16 << 20), "True"], proc.stdout


def test_a_host_socket_is_never_bound_or_listening(run, progs):
    """A bind the helper let the kernel make (a Unix path the tree may create) would
    look the address up again: a thread flipping its family to AF_INET bound a host
    socket to a port of the host's. And a host TCP socket a failed connect left
    unbound must not listen (it would bind a host port, for anyone)."""
    refused = socket.socket()
    refused.bind(("127.0.0.1", 0))  # nothing listens: connects are refused
    port = refused.getsockname()[1]
    (run.workspace / "d1").write_text("")
    os.chmod(run.workspace / "d1", 0o666)
    proc, _ = run(str(progs / "bind_flip"), str(port), "20000", allow=[f"127.0.0.1:{port}"],
                  log=False, timeout=120)
    refused.close()
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["bound", "0", "listen", "0"], proc.stdout
    probe = socket.socket()
    try:
        probe.bind(("0.0.0.0", 0x6431))  # the port the flipped bytes name is free
        free = True
    except OSError:
        free = False
    probe.close()
    assert free
