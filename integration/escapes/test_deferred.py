"""Calls the file helper answers later (native/waits.c): a send without room, a connect
to a full backlog, a TCP connect in progress. Each must complete once the receiver makes
room, time out as SO_SNDTIMEO says, and never hold the tree (or ztsa) once it is told to
stop. Judged by what the receiver got and by how the tree ended."""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import threading
import time

import pytest

from conftest import pids_with, ztsa_pid

# with a log and without: the helper defers in both (no helper, no deferral: nouserns)
BOTH_LOG_MODES = True

# The tree's own Unix datagram receiver, drained only after a while: every datagram a
# sender had to wait for arrives, by sendto, sendmsg and sendmmsg alike.
DGRAM_LATER = r"""
import os, socket, sys, threading, time
rx_path, call, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
rx.bind(rx_path)
got = []
def drain():
    time.sleep(0.5)
    while len(got) < n:
        got.append(rx.recv(65536))
t = threading.Thread(target=drain, daemon=True)
t.start()
tx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
for i in range(n):
    data = b"%06d" % i + b"x" * 2000
    if call == "sendto":
        tx.sendto(data, rx_path)
    else:
        tx.sendmsg([data], [], 0, rx_path)
t.join(20)
print("got", len(got), "in order", [int(g[:6]) for g in got] == list(range(n)), flush=True)
"""

# A sender with SO_SNDTIMEO to a receiver that never reads: EAGAIN once it passes.
DGRAM_TIMEOUT = r"""
import socket, struct, sys, time
rx_path = sys.argv[1]
rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
rx.bind(rx_path)
tx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
tx.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, struct.pack("ll", 0, 300000))
sent, start = 0, time.monotonic()
try:
    for _ in range(100000):
        tx.sendto(b"y" * 2000, rx_path)
        sent += 1
except BlockingIOError:
    print("EAGAIN after", sent, "waited %.1f" % (time.monotonic() - start), flush=True)
"""

# The tree's own Unix stream listener with a full backlog: the next connect waits for an
# accept, then completes.
STREAM_BACKLOG = r"""
import socket, sys, threading, time
path = sys.argv[1]
srv = socket.socket(socket.AF_UNIX)
srv.bind(path)
srv.listen(0)
early = []
for _ in range(3):  # fill the backlog without waiting
    c = socket.socket(socket.AF_UNIX)
    c.setblocking(False)
    try:
        c.connect(path)
        early.append(c)
    except BlockingIOError:
        c.close()
        break
accepted = []
def accept_later():
    time.sleep(0.5)
    srv.settimeout(5)
    for _ in range(len(early) + 1):
        accepted.append(srv.accept()[0])
t = threading.Thread(target=accept_later, daemon=True)
t.start()
c = socket.socket(socket.AF_UNIX)
c.connect(path)  # blocks until there is room
c.sendall(b"late")
t.join(10)
print("early", len(early), "accepted", len(accepted), accepted[-1].recv(4).decode(),
      flush=True)
"""

# A TCP connect whose SYN the listener drops (its accept queue is full): in progress in
# the helper, answered when the listener makes room.
TCP_IN_PROGRESS = r"""
import socket, sys, time
port = int(sys.argv[1])
s = socket.socket()
s.settimeout(20)
start = time.monotonic()
s.connect(("127.0.0.1", port))
s.sendall(b"tree")
print("connected after %.1f" % (time.monotonic() - start), flush=True)
"""

# A send that waits forever: nobody drains the receiver and there is no timeout.
DGRAM_FOREVER = r"""
import socket, sys
rx_path = sys.argv[1]
rx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
rx.bind(rx_path)
tx = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
print("sending", flush=True)
while True:
    tx.sendto(b"z" * 2000, rx_path)
"""


@pytest.mark.parametrize("call", ["sendto", "sendmsg"])
def test_a_datagram_send_without_room_goes_once_the_receiver_drains(run, call):
    rx = run.workspace / "rx.sock"
    proc, _ = run(run.python, "-c", DGRAM_LATER, str(rx), call, "300", timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert "got 300 in order True" in proc.stdout, proc.stdout + proc.stderr


def test_a_datagram_send_without_room_times_out_as_sndtimeo_says(run):
    rx = run.workspace / "rx.sock"
    proc, _ = run(run.python, "-c", DGRAM_TIMEOUT, str(rx), timeout=60)
    assert proc.returncode == 0, proc.stderr
    out = proc.stdout.split()
    assert out[:2] == ["EAGAIN", "after"], proc.stdout + proc.stderr
    assert 0 < int(out[2]) < 100000 and float(out[4]) < 5, proc.stdout


def test_a_connect_to_a_full_backlog_completes_once_accepted(run):
    path = run.workspace / "srv.sock"
    proc, _ = run(run.python, "-c", STREAM_BACKLOG, str(path), timeout=60)
    assert proc.returncode == 0, proc.stderr
    words = proc.stdout.split()
    assert words[0] == "early" and words[2:] == ["accepted", str(int(words[1]) + 1), "late"], \
        proc.stdout + proc.stderr


def test_a_tcp_connect_in_progress_completes_once_the_listener_has_room(run):
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(0)
    port = srv.getsockname()[1]
    fillers = []
    for _ in range(3):  # the accept queue full: further SYNs are dropped
        c = socket.socket()
        c.setblocking(False)
        with contextlib.suppress(BlockingIOError):
            c.connect(("127.0.0.1", port))
        fillers.append(c)
    got: list[bytes] = []

    def accept_later() -> None:
        time.sleep(1.0)
        srv.settimeout(0.5)
        end = time.monotonic() + 30
        while time.monotonic() < end and b"tree" not in got:
            try:
                a, _ = srv.accept()
            except TimeoutError:
                continue
            a.settimeout(0.2)
            try:
                got.append(a.recv(4))
            except TimeoutError:
                got.append(b"")
            a.close()

    t = threading.Thread(target=accept_later, daemon=True)
    t.start()
    try:
        proc, _ = run(run.python, "-c", TCP_IN_PROGRESS, str(port),
                      allow=[f"127.0.0.1:{port}"], timeout=60)
        t.join(30)
    finally:
        srv.close()
        for c in fillers:
            c.close()
    assert proc.returncode == 0, proc.stderr
    assert "connected after" in proc.stdout, proc.stdout + proc.stderr
    assert b"tree" in got


def test_sigterm_ends_a_run_whose_send_waits_forever(run):
    rx = run.workspace / "rx.sock"
    token = f"ztsa-forever-{os.urandom(4).hex()}"
    argv, _ = run.command(run.python, "-c", DGRAM_FOREVER + f"# {token}\n", str(rx))
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=run.workspace)
    try:
        assert proc.stdout is not None
        assert proc.stdout.readline().strip() == "sending"
        time.sleep(1.0)  # the receiver is full by now and the send waits
        assert pids_with(token), "the tree should still be waiting"
        pid = ztsa_pid(proc.pid)
        assert pid is not None
        os.kill(pid, signal.SIGTERM)
        proc.wait(timeout=15)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    end = time.monotonic() + 5
    while pids_with(token) and time.monotonic() < end:
        time.sleep(0.1)
    assert not pids_with(token), "the tree outlived ztsa"
    assert proc.returncode != 0
