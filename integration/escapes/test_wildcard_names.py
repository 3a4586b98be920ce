"""--allow-net '*.example.com' without a network namespace (the nouserns mode; the root
and user modes are test_dns_egress.py's): addresses learnt when the tree asks its
resolver. A fake resolver on 127.0.0.1:53 answers names under corp.test with 127.0.0.1
and every other name with 127.0.0.2: loopback, which no answer opens."""

from __future__ import annotations

import os
import socket
import struct
import threading

import pytest
from realenv import host_port_53

RUN_MODES = ("nouserns",)


def answer(query: bytes, addr: bytes) -> bytes:
    qid = query[:2]
    i = 12
    while query[i]:
        i += 1 + query[i]
    question = query[12 : i + 5]
    header = qid + struct.pack(">HHHHH", 0x8180, 1, 1, 0, 0)
    record = b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, 60, 4) + addr
    return header + question + record


@pytest.fixture
def resolver():
    if os.geteuid() != 0:
        pytest.skip("binding the fake resolver to port 53 needs root")
    with host_port_53():  # taken in turn with other test processes
        yield from _resolver()


def _resolver():
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    try:
        s.bind(("127.0.0.1", 53))
    except OSError as exc:
        pytest.skip(f"127.0.0.1:53 is taken: {exc}")
    s.settimeout(0.2)
    stop = threading.Event()

    def serve():
        while not stop.is_set():
            try:
                q, peer = s.recvfrom(512)
            except TimeoutError:
                continue
            except OSError:
                return
            ip = "127.0.0.1" if b"\x04corp\x04test" in q else "127.0.0.2"
            s.sendto(answer(q, socket.inet_aton(ip)), peer)

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    yield
    stop.set()
    t.join(2)
    s.close()


CLIENT = """
import random, socket, struct, sys
port = int(sys.argv[1])
for name in sys.argv[2:]:
    q = struct.pack('>HHHHHH', random.randrange(65536), 0x0100, 1, 0, 0, 0)
    q += b''.join(bytes([len(p)]) + p.encode() for p in name.split('.')) + b'\\0'
    q += struct.pack('>HH', 1, 1)
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.connect(('127.0.0.1', 53))   # like glibc: a connected UDP socket, then send
    u.send(q)
    ip = socket.inet_ntoa(u.recv(512)[-4:])
    s = socket.socket()
    try:
        s.connect((ip, port)); print(name, 'connected')
    except OSError as e:
        print(name, 'denied', e.errno)
"""


def test_a_loopback_answer_under_a_wildcard_opens_nothing(run, resolver, listeners):
    """The range guard without a network namespace: a name under the wildcard answered
    with 127.0.0.1 (rebinding to the host's loopback) is not learnt, and a name under no
    wildcard is not either. (An off-link answer that is learnt: test_dns_egress.py's
    test_without_user_namespaces_answers_are_judged_by_the_same_range_guard.)"""
    port = listeners.add_tcp("svc")
    other = socket.socket()  # the address the other name resolves to, same port
    other.bind(("127.0.0.2", port))
    other.listen(8)
    other.setblocking(False)  # judged after the run: a connection made is queued by then
    proc, events = run(run.python, "-c", CLIENT, str(port), "api.corp.test",
                       "evil.example.invalid",
                       allow=[f"*.corp.test:{port}"], extra=["--dns", "127.0.0.1"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.splitlines() == ["api.corp.test denied 1",
                                        "evil.example.invalid denied 1"]
    assert listeners.settle()["svc"] == 0
    try:
        other.accept()
        reached = True
    except BlockingIOError:
        reached = False
    other.close()
    assert not reached
    learnt = [e for e in events if e["event"] == "learn"]
    assert [(e["name"], e["addresses"], e["refused"]) for e in learnt] == [
        ("api.corp.test", [], ["127.0.0.1"])]
