"""DNS and egress through ztsa's own network namespace: the tree has only loopback, every
address is local there, ztsa answers its DNS on port 53 of any address and performs the
allowed outside connects itself.

The test world is two network namespaces of its own (`ip netns add ztsa-dns-...`): the
world, where ztsa runs (`ip netns exec`, which also puts /etc/netns/NAME/resolv.conf,
`nameserver 203.0.113.53`, over /etc/resolv.conf: nothing listens there, `--dns
127.0.0.1`), with a fake upstream resolver on 127.0.0.1:53 (UDP and TCP) that records
every message it receives and a counting listener on 127.0.0.1; and behind a veth pair
(192.0.2.1 - 192.0.2.2) the far side, with 203.0.113.10, 203.0.113.11, 169.254.169.254
and 10.0.0.7 on its loopback and counting listeners on each (addresses of the world
itself would be the host's own, which no answer opens). Every assertion is on what
arrived at the fake resolver or at a listener, or what the tree itself saw; nothing
leaves the two namespaces (they have no route anywhere else)."""

from __future__ import annotations

import contextlib
import ctypes
import errno
import functools
import http.server
import json
import os
import pwd
import select
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import Runner, ensure_user

# no network namespace without user namespaces (and not root): those runs are the
# nouserns test alone
RUN_MODES = ("root", "user")

CLONE_NEWNET = 0x40000000
LOCAL = ("203.0.113.10", "203.0.113.11", "169.254.169.254", "10.0.0.7")  # on the lo
LISTENING = ("203.0.113.10", "203.0.113.11", "127.0.0.1", "169.254.169.254", "10.0.0.7")
NAMESERVER = "203.0.113.53"  # the tree's resolv.conf: nothing listens there
# the world's own address (ztsa's namespace), on its veth: in no range an answer never
# opens, so only its being the host's own keeps an answer naming it from opening it
WORLD_ADDR, FAR_ADDR = "192.0.2.1", "192.0.2.2"
ANSWERS = {
    "api.corp.test": "203.0.113.10",
    "registry.corp.test": "203.0.113.10",
    "rebind.corp.test": "127.0.0.1",
    "meta.corp.test": "169.254.169.254",
    "lan.corp.test": "10.0.0.7",
    "self.corp.test": WORLD_ADDR,  # an address of the host's own (ztsa's namespace)
    "link.corp.test": FAR_ADDR,  # another host on the host's own link (on-link prefix)
}
ALIAS, ALIAS_TO = "alias.corp.test", "evil.corp.test"  # a CNAME to another name
# 203.0.113.10 spelt as IPv6: NAT64 and 6to4
SIX = {"nat64.corp.test": "64:ff9b::cb00:710a", "sixtofour.corp.test": "2002:cb00:710a::1"}
MOVING = "moving.corp.test"  # 203.0.113.10 for its first 2 A queries, then 203.0.113.11
NEVER = "203.0.113.99"  # any other name: ztsa must never ask
API = "api.corp.test"


# -- the test world --------------------------------------------------------------------
def parse_query(packet: bytes) -> tuple[bytes, str, int] | None:
    """(the question section, its name, its type) of a DNS query, or None."""
    if len(packet) < 17:
        return None
    _qid, flags, qd = struct.unpack_from(">HHH", packet)
    if flags & 0x8000 or qd != 1:
        return None
    labels, i = [], 12
    while i < len(packet):
        n = packet[i]
        if n == 0:
            if i + 5 > len(packet) or not labels:
                return None
            qtype = struct.unpack_from(">H", packet, i + 1)[0]
            return packet[12 : i + 5], ".".join(labels).lower(), qtype
        if n & 0xC0 or i + 1 + n > len(packet):
            return None
        labels.append(packet[i + 1 : i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    return None


class Received:
    """One message at the fake resolver."""

    def __init__(self, transport: str, packet: bytes) -> None:
        self.transport = transport
        self.packet = packet
        parsed = parse_query(packet)
        self.name = parsed[1] if parsed else None
        self.qtype = parsed[2] if parsed else None

    def __repr__(self) -> str:
        return f"Received({self.transport}, {self.name or self.packet[:40]!r}, {self.qtype})"


class World:
    """The test world's namespace, its fake resolver and its counting listeners."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.lock = threading.Lock()
        self.received: list[Received] = []
        self.counts: dict[tuple[str, int], int] = {}
        self.http_requests = 0
        self.moving_asked = 0
        self.stop = threading.Event()
        self.sockets: list[socket.socket] = []
        self.threads: list[threading.Thread] = []
        self.servers: list[http.server.ThreadingHTTPServer] = []
        self.port = 0
        self.listeners: dict[tuple[str, int], socket.socket] = {}
        # written to on close: wakes the listeners' threads at once
        self._wake_r, self._wake_w = os.pipe()

    # code in the namespace: a thread of its own joins it (the network namespace is a
    # thread's); a socket made there stays there, whichever thread then uses it
    def in_ns(self, fn: Callable[..., Any], *args: Any, far: bool = False) -> Any:
        """far: in the namespace behind the world's veth, where the "public" test hosts
        are (addresses of ztsa's own namespace would be the host's own, which an answer
        never opens)."""
        out: dict[str, Any] = {}

        def target() -> None:
            try:
                libc = ctypes.CDLL(None, use_errno=True)
                fd = os.open(f"/run/netns/{self.name}{'-far' if far else ''}", os.O_RDONLY)
                try:
                    if libc.setns(fd, CLONE_NEWNET) != 0:
                        err = ctypes.get_errno()
                        raise OSError(err, f"setns: {os.strerror(err)}")
                finally:
                    os.close(fd)
                out["value"] = fn(*args)
            except BaseException as exc:  # handed to the caller
                out["error"] = exc

        t = threading.Thread(target=target)
        t.start()
        t.join()
        if "error" in out:
            raise out["error"]
        return out.get("value")

    def _thread(self, fn: Callable[..., None], *args: Any) -> None:
        t = threading.Thread(target=fn, args=args, daemon=True)
        t.start()
        self.threads.append(t)

    def start(self) -> None:
        def make() -> tuple[socket.socket, socket.socket, int, socket.socket]:
            udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
            udp.bind(("127.0.0.1", 53))
            tcp = socket.socket()
            tcp.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            tcp.bind(("127.0.0.1", 53))
            tcp.listen(64)
            return udp, tcp

        udp, tcp = self.in_ns(make)
        first = self.in_ns(lambda: socket.create_server((LISTENING[0], 0)), far=True)
        self.port = first.getsockname()[1]
        for s in (udp, tcp):
            s.settimeout(0.2)
            self.sockets.append(s)
        self._thread(self._serve_udp, udp)
        self._thread(self._serve_tcp, tcp)
        first.close()
        for ip in LISTENING:
            self.listen(ip, self.port)

    def listen(self, ip: str, port: int = 0) -> int:
        """A TCP listener on ip:port of the namespace that counts what it accepts."""

        def make() -> socket.socket:
            s = socket.socket()
            s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            s.bind((ip, port))
            s.listen(512)
            return s

        s = self.in_ns(make, far=ip in LOCAL)
        s.setblocking(False)
        self.sockets.append(s)
        port = s.getsockname()[1]
        self.counts[(ip, port)] = 0
        self.listeners[(ip, port)] = s
        self._thread(self._accept, s, (ip, port))
        return port

    def _take(self, s: socket.socket, key: tuple[str, int]) -> None:
        """Count the connections queued at s now (the caller holds the lock)."""
        while True:
            try:
                s.accept()[0].close()
            except OSError:  # BlockingIOError: none left
                return
            self.counts[key] += 1

    def _accept(self, s: socket.socket, key: tuple[str, int]) -> None:
        while not self.stop.is_set():
            try:
                ready, _, _ = select.select([s, self._wake_r], [], [])
            except (OSError, ValueError):
                return
            if self._wake_r in ready:
                return
            with self.lock:
                self._take(s, key)

    # the fake upstream resolver
    def answer(self, query: bytes, transport: str) -> bytes | None:
        got = Received(transport, query)
        with self.lock:
            self.received.append(got)
        parsed = parse_query(query)
        if parsed is None:
            return None
        question, name, qtype = parsed
        addr, ttl = None, 60
        if name == ALIAS and qtype == 1:  # a CNAME to another name, and its address
            target = b"".join(bytes([len(p)]) + p.encode() for p in ALIAS_TO.split(".")) + b"\0"
            header = query[:2] + struct.pack(">HHHHH", 0x8180, 1, 2, 0, 0)
            cname = b"\xc0\x0c" + struct.pack(">HHIH", 5, 1, 60, len(target)) + target
            a = (struct.pack(">H", 0xC000 | (12 + len(question)))
                 + struct.pack(">HHIH", 1, 1, 60, 4) + socket.inet_aton("203.0.113.10"))
            return header + question + cname + a
        if name in SIX and qtype == 28:
            header = query[:2] + struct.pack(">HHHHH", 0x8180, 1, 1, 0, 0)
            return header + question + b"\xc0\x0c" + struct.pack(">HHIH", 28, 1, 60, 16) + \
                socket.inet_pton(socket.AF_INET6, SIX[name])
        if qtype == 1:  # A; any other type: no records (NODATA)
            if name == MOVING:
                with self.lock:
                    self.moving_asked += 1
                    asked = self.moving_asked
                addr, ttl = ("203.0.113.10" if asked <= 2 else "203.0.113.11"), 0
            else:
                addr = ANSWERS.get(name, NEVER)
        header = query[:2] + struct.pack(">HHHHH", 0x8180, 1, 1 if addr else 0, 0, 0)
        record = (b"\xc0\x0c" + struct.pack(">HHIH", 1, 1, ttl, 4) + socket.inet_aton(addr)
                  if addr else b"")
        return header + question + record

    def _serve_udp(self, s: socket.socket) -> None:
        while not self.stop.is_set():
            try:
                q, peer = s.recvfrom(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            reply = self.answer(q, "udp")
            if reply is not None:
                with contextlib.suppress(OSError):
                    s.sendto(reply, peer)

    def _serve_tcp(self, s: socket.socket) -> None:
        while not self.stop.is_set():
            try:
                c, _ = s.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            self._thread(self._tcp_conn, c)

    def _tcp_conn(self, c: socket.socket) -> None:
        c.settimeout(5)
        try:
            while True:
                head = _read_exactly(c, 2)
                if head is None:
                    return
                body = _read_exactly(c, struct.unpack(">H", head)[0])
                if body is None:
                    with self.lock:  # a short message still arrived
                        self.received.append(Received("tcp", head))
                    return
                reply = self.answer(body, "tcp")
                if reply is not None:
                    c.sendall(struct.pack(">H", len(reply)) + reply)
        except OSError:
            return
        finally:
            c.close()

    def http(self, root: Path) -> int:
        """An HTTP server for root's files on 203.0.113.10 (port: the return value),
        counting requests."""
        world = self

        class Handler(http.server.SimpleHTTPRequestHandler):
            def log_message(self, *a: Any) -> None:
                pass

            def do_GET(self) -> None:
                with world.lock:
                    world.http_requests += 1
                super().do_GET()

        handler = functools.partial(Handler, directory=str(root))
        server = self.in_ns(lambda: http.server.ThreadingHTTPServer(("203.0.113.10", 0),
                                                                     handler), far=True)
        self.servers.append(server)
        self._thread(server.serve_forever, 0.05)  # shutdown() waits one poll
        return server.server_address[1]

    # what arrived
    def names(self) -> list[str | None]:
        with self.lock:
            return [r.name for r in self.received]

    def settle(self, port: int | None = None) -> dict[str, int]:
        """The listeners' counts on port (default: the world's port) by address, with
        the connections still queued to be accepted (a tree has ended by now: what it
        connected is queued)."""
        port = self.port if port is None else port
        with self.lock:
            for key, s in self.listeners.items():
                self._take(s, key)
            return {ip: n for (ip, p), n in self.counts.items() if p == port}

    # a client in the test world's namespace (ztsa's own)
    def client(self, ip: str, port: int) -> str:
        """'refused', 'timeout', another 'errno N', 'connected' (accepted but nothing
        said), or what the peer sent."""

        def go() -> str:
            s = socket.socket()
            s.settimeout(3)
            try:
                s.connect((ip, port))
            except ConnectionRefusedError:
                return "refused"
            except TimeoutError:
                return "timeout"
            except OSError as exc:
                return f"errno {exc.errno}"
            try:
                data = s.recv(64)
            except OSError:
                data = b""
            finally:
                s.close()
            return data.decode() if data else "connected"

        return self.in_ns(go)

    def free_port(self) -> int:
        def go() -> int:
            s = socket.socket()
            s.bind(("0.0.0.0", 0))
            port = s.getsockname()[1]
            s.close()
            return port

        return self.in_ns(go)

    def close(self) -> None:
        self.stop.set()
        os.write(self._wake_w, b"x")
        for server in self.servers:
            server.shutdown()
            server.server_close()
        for s in self.sockets:
            s.close()
        for t in self.threads:
            t.join(2)
        os.close(self._wake_r)
        os.close(self._wake_w)


def _read_exactly(c: socket.socket, n: int) -> bytes | None:
    data = b""
    while len(data) < n:
        chunk = c.recv(n - len(data))
        if not chunk:
            return None
        data += chunk
    return data


@pytest.fixture
def world() -> Iterator[World]:
    if os.geteuid() != 0:
        pytest.skip("the test world is a network namespace: making one needs root")
    if shutil.which("ip") is None:
        pytest.skip("the test world needs iproute2's `ip` (apt-get install iproute2)")
    name = f"ztsa-dns-{os.urandom(4).hex()}"
    made = subprocess.run(["ip", "netns", "add", name], capture_output=True, text=True)
    if made.returncode != 0:
        pytest.skip(f"`ip netns add` failed: {made.stderr.strip()}")
    had_etc = os.path.isdir("/etc/netns")
    etc = Path("/etc/netns") / name
    w = World(name)
    far = f"{name}-far"
    try:
        # the "public" test hosts live in a second namespace behind a veth pair, routed
        # from the world (where ztsa runs): an address of ztsa's own namespace is the
        # host's own, which no answer opens
        subprocess.run(["ip", "netns", "add", far], check=True, capture_output=True)
        for ns, cmd in ((name, ["link", "set", "lo", "up"]), (far, ["link", "set", "lo", "up"]),
                        (name, ["link", "add", "zw0", "type", "veth", "peer", "name", "zf0",
                                "netns", far]),
                        (name, ["addr", "add", f"{WORLD_ADDR}/30", "dev", "zw0"]),
                        (far, ["addr", "add", f"{FAR_ADDR}/30", "dev", "zf0"]),
                        (name, ["link", "set", "zw0", "up"]), (far, ["link", "set", "zf0", "up"]),
                        *[(far, ["addr", "add", f"{a}/32", "dev", "lo"]) for a in LOCAL],
                        *[(name, ["route", "add", f"{a}/32", "via", FAR_ADDR])
                          for a in LOCAL],
                        (far, ["route", "add", "default", "via", WORLD_ADDR])):
            subprocess.run(["ip", "-n", ns, *cmd], check=True, capture_output=True)
        etc.mkdir(parents=True)
        # short timeouts: a run whose DNS nobody answers fails in seconds, not minutes
        (etc / "resolv.conf").write_text(f"nameserver {NAMESERVER}\n"
                                         "options timeout:2 attempts:2\n")
        os.chmod(etc / "resolv.conf", 0o644)
        w.start()
        yield w
    finally:
        w.close()
        shutil.rmtree(etc, ignore_errors=True)
        if not had_etc:
            with contextlib.suppress(OSError):
                os.rmdir("/etc/netns")
        subprocess.run(["ip", "netns", "del", name], capture_output=True)
        subprocess.run(["ip", "netns", "del", far], capture_output=True)


def in_world(run: Runner, w: World, *cmd: str, allow: list[str] = (),
             extra: list[str] = (), log: bool | None = None, timeout: float = 120,
             **kw: Any) -> tuple[subprocess.CompletedProcess[str], list[dict[str, Any]]]:
    """`ztsa exec ... -- cmd` run by `run`'s mode inside the test world, with the world's
    fake resolver as upstream."""
    argv, log_path = run.command(*cmd, allow=allow, extra=["--dns", "127.0.0.1", *extra],
                                 log=log, **kw)
    proc = subprocess.run(["ip", "netns", "exec", w.name, *argv], capture_output=True,
                          text=True, timeout=timeout, cwd=run.workspace)
    return proc, run.finish(proc.stderr, log_path)


# -- the tree's client ----------------------------------------------------------------
# python -c CLIENT STEP...: ask:ROUTE[@SERVER]:NAME prints `ANSWER NAME rcode=R addrs=A,B`
# (for getaddrinfo rcode=3 is EAI_NONAME, "Name or service not known"); connect:PORT
# connects to the last answer's first address, connect:IP:PORT to IP; both print
# `CONNECT IP:PORT ok` or `... errno E`; sleep:S
CLIENT = r"""
import random, socket, struct, sys, time

def query(name):
    qid = random.randrange(1, 65536)
    labels = b"".join(bytes([len(p)]) + p.encode() for p in name.split("."))
    return qid, (struct.pack(">HHHHHH", qid, 0x0100, 1, 0, 0, 0) + labels + b"\0"
                 + struct.pack(">HH", 1, 1))

def skip(r, i):
    while r[i]:
        if r[i] & 0xC0 == 0xC0:
            return i + 2
        i += 1 + r[i]
    return i + 1

def parse(r):
    qid, flags, qd, an = struct.unpack_from(">HHHH", r)
    i = 12
    for _ in range(qd):
        i = skip(r, i) + 4
    addrs = []
    for _ in range(an):
        i = skip(r, i)
        rtype, _c, _t, n = struct.unpack_from(">HHIH", r, i)
        i += 10
        if rtype == 1 and n == 4:
            addrs.append(socket.inet_ntoa(r[i:i + 4]))
        i += n
    return qid, flags & 0xF, addrs

def nameserver():
    with open("/etc/resolv.conf") as f:
        for line in f:
            p = line.split()
            if p[:1] == ["nameserver"]:
                return p[1]

DEFAULT = {"sendto": None, "tcp": None, "connect": "8.8.8.8", "sendmsg": "127.0.0.53",
           "udp6": "2001:db8::53"}

def exchange(route, server, q):
    if route == "tcp":
        s = socket.socket()
        s.settimeout(3)
        try:
            s.connect((server, 53))
            s.sendall(struct.pack(">H", len(q)) + q)
            data = b""
            while len(data) < 2 or len(data) < 2 + struct.unpack(">H", data[:2])[0]:
                chunk = s.recv(4096)
                if not chunk:
                    raise ConnectionResetError("closed early")
                data += chunk
            return data[2:]
        finally:
            s.close()
    s = socket.socket(socket.AF_INET6 if route == "udp6" else socket.AF_INET,
                      socket.SOCK_DGRAM)
    s.settimeout(3)
    try:
        if route == "connect":
            s.connect((server, 53))
            s.send(q)
        elif route == "sendmsg":
            s.sendmsg([q], [], 0, (server, 53))
        else:
            s.sendto(q, (server, 53))
        return s.recv(4096)
    finally:
        s.close()

def ask(route, name):
    if route == "gai":
        try:
            infos = socket.getaddrinfo(name, None, socket.AF_UNSPEC, socket.SOCK_STREAM)
        except socket.gaierror as e:
            return (3 if e.errno == socket.EAI_NONAME else "gai%s" % e.errno), []
        return 0, sorted({i[4][0] for i in infos if i[0] == socket.AF_INET})
    route, _, server = route.partition("@")
    server = server or DEFAULT[route] or nameserver()
    qid, q = query(name)
    try:
        r = exchange(route, server, q)
    except TimeoutError:
        return "timeout", []
    except OSError as e:
        return "errno%s" % e.errno, []
    rid, rcode, addrs = parse(r)
    return (rcode if rid == qid else "wrong-id"), addrs

last = []
for step in sys.argv[1:]:
    kind, _, arg = step.partition(":")
    if kind == "ask":
        route, name = arg.split(":", 1)
        rcode, last = ask(route, name)
        print("ANSWER", name, "rcode=%s" % rcode, "addrs=" + ",".join(last), flush=True)
    elif kind == "connect":
        host, _, port = arg.rpartition(":")
        ip = host or (last[0] if last else None)
        if ip is None:
            print("CONNECT none:%s nothing" % port, flush=True)
            continue
        s = socket.socket()
        s.settimeout(3)
        try:
            s.connect((ip, int(port)))
            print("CONNECT %s:%s ok" % (ip, port), flush=True)
        except OSError as e:
            print("CONNECT %s:%s errno %s" % (ip, port, e.errno), flush=True)
        s.close()
    elif kind == "sleep":
        time.sleep(float(arg))
    elif kind == "nameserver":
        print("NAMESERVER", nameserver(), flush=True)
"""


def answers(out: str) -> dict[str, list[tuple[str, list[str]]]]:
    """NAME -> [(rcode, addresses)] of each ANSWER line, in order ('timeout' for the C
    program's unanswered query)."""
    found: dict[str, list[tuple[str, list[str]]]] = {}
    for line in out.splitlines():
        parts = line.split()
        if parts[:1] != ["ANSWER"] or len(parts) < 3:
            continue
        if parts[2] == "timeout":
            found.setdefault(parts[1], []).append(("timeout", []))
            continue
        rcode = parts[2].removeprefix("rcode=")
        addrs = parts[3].removeprefix("addrs=") if len(parts) > 3 else ""
        found.setdefault(parts[1], []).append((rcode, [a for a in addrs.split(",") if a]))
    return found


def connects(out: str) -> list[tuple[str, str]]:
    """(IP:PORT, 'ok' or 'errno E') of each CONNECT line, in order."""
    return [(p[1], " ".join(p[2:])) for p in (line.split() for line in out.splitlines())
            if p[:1] == ["CONNECT"]]


def refused_name() -> str:
    return f"secret-{os.urandom(4).hex()}.evil.test"


def _evil(names: list[str | None]) -> list[str]:
    return [n for n in names if n and ("evil" in n or "secret" in n or "other" in n)]


# -- the test world itself, without ztsa: what the counting sees -------------------------
def test_the_test_world_counts_what_arrives_without_ztsa(world, progs, tmp_path):
    """The same client and C program, unconfined in the test world: a refused name does
    reach the fake resolver (so 'never arrives' below can fail), every listener counts,
    the moving name moves, and nothing answers the tree's resolv.conf address."""
    p = world.port
    secret = refused_name()
    steps = ["nameserver", f"ask:sendto@127.0.0.1:{secret}", f"ask:tcp@127.0.0.1:{API}",
             f"connect:{p}", f"ask:sendto:{API}"]
    steps += [f"connect:{ip}:{p}" for ip in LISTENING]
    steps += [f"ask:sendto@127.0.0.1:{MOVING}"] * 3
    proc = subprocess.run(["ip", "netns", "exec", world.name, sys.executable, "-c", CLIENT,
                           *steps], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert f"NAMESERVER {NAMESERVER}" in proc.stdout
    ans = answers(proc.stdout)
    assert ans[secret] == [("0", [NEVER])]
    assert ans[API][0] == ("0", ["203.0.113.10"])
    assert ans[API][1][0] in ("timeout", f"errno{errno.ENETUNREACH}")  # 203.0.113.53
    assert [a for _rc, a in ans[MOVING]] == [["203.0.113.10"], ["203.0.113.10"],
                                              ["203.0.113.11"]]
    assert all(r == "ok" for _, r in connects(proc.stdout)), proc.stdout
    assert world.names().count(secret) == 1
    assert [r.transport for r in world.received if r.name == API] == ["tcp"]
    counts = world.settle()
    assert counts == {ip: (2 if ip == "203.0.113.10" else 1) for ip in LISTENING}
    # sendmmsg, and garbage: recorded as it arrives
    mm = subprocess.run(["ip", "netns", "exec", world.name, str(progs / "dns_routes"),
                         "127.0.0.1", str(p), secret, API], capture_output=True, text=True,
                        timeout=30)
    assert "sendmmsg 2" in mm.stdout, mm.stdout + mm.stderr
    assert answers(mm.stdout) == {secret: [("0", [NEVER])], API: [("0", ["203.0.113.10"])]}
    world.in_ns(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM).sendto(
        b"not dns", ("127.0.0.1", 53)))
    time.sleep(0.3)
    assert world.names()[-1] is None and world.received[-1].packet == b"not dns"
    # the outside client reaches a listener of the world, and the tree's server when
    # that runs unconfined in the world
    assert world.client("203.0.113.10", p) == "connected"
    port = world.free_port()
    ready, done = tmp_path / "ready", tmp_path / "done"
    out, err, got = _knock(world, ["ip", "netns", "exec", world.name, sys.executable, "-c",
                                   TREE_SERVER, str(port), str(ready), str(done)],
                           tmp_path, port, ready, done, ["127.0.0.1", WORLD_ADDR])
    assert "own own" in out, out + err
    assert got == {"127.0.0.1": "tree", WORLD_ADDR: "tree"}, (got, out, err)
    assert "accepted 2" in out, out + err


# -- every route to port 53 ---------------------------------------------------------------
ROUTES = ["gai", "sendto", "connect", "sendmsg", "udp6", "tcp", "sendmmsg"]


def _route_cmd(run: Runner, progs: Path, route: str, port: int, *names: str) -> list[str]:
    """The tree's command: ask each name by route, then connect to the last one's first
    address on port."""
    if route == "sendmmsg":  # one batch, to the resolv.conf address
        return [str(progs / "dns_routes"), NAMESERVER, str(port), *names]
    return [run.python, "-c", CLIENT, *[f"ask:{route}:{n}" for n in names], f"connect:{port}"]


def _assert_refused_and_allowed(proc, world: World, secret: str) -> None:
    assert proc.returncode == 0, proc.stderr
    ans = answers(proc.stdout)
    assert ans.get(secret) == [("3", [])], proc.stdout  # NXDOMAIN
    assert ans.get(API) == [("0", ["203.0.113.10"])], proc.stdout
    p = world.port
    assert connects(proc.stdout) == [(f"203.0.113.10:{p}", "ok")], proc.stdout
    names = world.names()
    assert secret not in names and not _evil(names), names  # not one byte upstream
    assert API in names
    assert world.settle() == {ip: (1 if ip == "203.0.113.10" else 0) for ip in LISTENING}


@pytest.mark.parametrize("route", ROUTES)
def test_each_route_to_port_53_is_answered_by_ztsa(run, world, progs, route):
    """getaddrinfo (A and AAAA by sendmmsg on a connected socket, to the resolv.conf
    address), sendto, connect+send (8.8.8.8), sendmsg (127.0.0.53), IPv6
    (2001:db8::53), TCP with its length prefix, and one sendmmsg batch: the refused
    name is NXDOMAIN and never reaches the upstream resolver; the allowed one resolves
    and connects end to end."""
    secret = refused_name()
    cmd = _route_cmd(run, progs, route, world.port, secret, API)
    proc, _ = in_world(run, world, *cmd, allow=[f"{API}:{world.port}"])
    if route == "sendmmsg":
        assert "sendmmsg 2" in proc.stdout, proc.stdout
    _assert_refused_and_allowed(proc, world, secret)


@pytest.mark.parametrize("route", ["gai", "sendto", "tcp"])
def test_refused_and_allowed_names_without_an_audit_log(run, world, progs, route):
    """The same without --audit-log: another decider may answer."""
    secret = refused_name()
    cmd = _route_cmd(run, progs, route, world.port, secret, API)
    proc, events = in_world(run, world, *cmd, allow=[f"{API}:{world.port}"], log=False)
    assert events == []
    _assert_refused_and_allowed(proc, world, secret)


def test_getaddrinfo_says_name_or_service_not_known(run, world):
    secret = refused_name()
    code = ("import socket, sys\n"
            "try: socket.getaddrinfo(sys.argv[1], 443)\n"
            "except socket.gaierror as e: print('gaierror', e.errno, e.strerror)\n")
    proc, _ = in_world(run, world, run.python, "-c", code, secret,
                       allow=[f"{API}:{world.port}"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == f"gaierror {socket.EAI_NONAME} Name or service not known"
    assert secret not in world.names()


def test_non_dns_messages_to_port_53_reach_nothing(run, world):
    """Garbage, a DNS response and a truncated header, by UDP to the resolv.conf address
    and to 127.0.0.1:53 and by TCP: nothing arrives at the fake resolver. The allowed
    query sent last shows the run's DNS works (and is all that arrives)."""
    code = ("import socket, struct\n"
            "msgs = [b'GET / HTTP/1.0\\r\\n\\r\\n', b'\\x12\\x34\\x81\\x80' + bytes(8),"
            " b'\\x00\\x01\\x01']\n"
            "for dst in ('203.0.113.53', '127.0.0.1'):\n"
            "    for m in msgs:\n"
            "        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "        try: u.sendto(m, (dst, 53)); print('sent', dst, len(m))\n"
            "        except OSError as e: print('send', dst, 'errno', e.errno)\n"
            "        u.close()\n"
            "t = socket.socket(); t.settimeout(3)\n"
            "try:\n"
            "    t.connect(('203.0.113.53', 53)); t.sendall(struct.pack('>H', 9) + b'not a dns')\n"
            "    t.shutdown(socket.SHUT_WR); print('tcp', t.recv(100))\n"
            "except OSError as e: print('tcp errno', e.errno)\n"
            "t.close()\n")
    proc, _ = in_world(run, world, "sh", "-c",
                       f"{run.python} -c \"$0\" && {run.python} -c \"$1\" ask:sendto:{API}",
                       code, CLIENT, allow=[f"{API}:{world.port}"])
    assert proc.returncode == 0, proc.stderr
    assert answers(proc.stdout) == {API: [("0", ["203.0.113.10"])]}, proc.stdout
    time.sleep(0.3)
    names = world.names()
    assert names and all(n == API for n in names), world.received


# -- which names open what -----------------------------------------------------------------
def test_an_exact_name_rule_opens_that_name_on_its_port_only(run, world):
    p = world.port
    q = world.listen("203.0.113.10")  # the same address, another port
    others = ["registry.corp.test", "api.corp.test.evil.test", "x.other.test"]
    steps = [f"ask:gai:{API}", f"connect:{p}", f"connect:{q}",
             *[f"ask:gai:{n}" for n in others]]
    proc, _ = in_world(run, world, run.python, "-c", CLIENT, *steps, allow=[f"{API}:{p}"])
    assert proc.returncode == 0, proc.stderr
    ans = answers(proc.stdout)
    assert ans[API] == [("0", ["203.0.113.10"])]
    assert {n: ans.get(n) for n in others} == {n: [("3", [])] for n in others}, proc.stdout
    got = dict(connects(proc.stdout))
    assert got[f"203.0.113.10:{p}"] == "ok" and got[f"203.0.113.10:{q}"] != "ok"
    names = world.names()
    assert API in names and not [n for n in names if n != API], world.received
    assert world.settle()["203.0.113.10"] == 1
    assert world.settle(q)["203.0.113.10"] == 0


def test_a_wildcard_rule_opens_the_names_under_it(run, world):
    p = world.port
    inside = [API, "registry.corp.test"]
    outside = ["x.evilcorp.test", "corp.test.evil.test", "api.corp.test.other.test"]
    steps = [s for n in inside for s in (f"ask:gai:{n}", f"connect:{p}")]
    steps += [f"ask:gai:{n}" for n in outside]
    proc, events = in_world(run, world, run.python, "-c", CLIENT, *steps,
                            allow=[f"*.corp.test:{p}"])
    assert proc.returncode == 0, proc.stderr
    ans = answers(proc.stdout)
    assert {n: ans.get(n) for n in inside} == {n: [("0", ["203.0.113.10"])] for n in inside}
    assert {n: ans.get(n) for n in outside} == {n: [("3", [])] for n in outside}, proc.stdout
    assert connects(proc.stdout) == [(f"203.0.113.10:{p}", "ok")] * 2
    names = world.names()
    assert set(inside) <= set(names) and not _evil(names), world.received
    assert world.settle()["203.0.113.10"] == 2
    allowed = [e for e in events if e.get("event") == "dns" and e.get("name") == API
               and e.get("type") == "A"]
    assert [e.get("rule") for e in allowed] == [f"--allow-net *.corp.test:{p}"], allowed


def test_rebinding_answers_open_nothing(run, world):
    """rebind -> 127.0.0.1 (loopback, and the resolver's own address), meta ->
    169.254.169.254, lan -> 10.0.0.7, all under *.corp.test: the tree gets the answers,
    its connects to them fail, and those listeners count nothing; api.corp.test in the
    same run connects."""
    p = world.port
    rebinding = {"rebind.corp.test": "127.0.0.1", "meta.corp.test": "169.254.169.254",
                 "lan.corp.test": "10.0.0.7"}
    steps = [s for n in [*rebinding, API] for s in (f"ask:gai:{n}", f"connect:{p}")]
    steps += [f"connect:{ip}:{p}" for ip in rebinding.values()]  # the literals too
    proc, _ = in_world(run, world, run.python, "-c", CLIENT, *steps,
                       allow=[f"*.corp.test:{p}"])
    assert proc.returncode == 0, proc.stderr
    ans = answers(proc.stdout)
    assert {n: ans.get(n) for n in rebinding} == {n: [("0", [ip])]
                                                  for n, ip in rebinding.items()}, proc.stdout
    got = connects(proc.stdout)
    assert (f"203.0.113.10:{p}", "ok") in got
    assert [r for a, r in got if not a.startswith("203.")] != []
    assert all(r != "ok" for a, r in got if not a.startswith("203.")), got
    assert set(rebinding) <= set(world.names())  # asked upstream, answered, not opened
    counts = world.settle()
    assert counts == {ip: (1 if ip == "203.0.113.10" else 0) for ip in LISTENING}, counts


def test_a_rule_naming_the_private_address_opens_it(run, world):
    p = world.port
    steps = ["ask:gai:lan.corp.test", f"connect:{p}", "ask:gai:meta.corp.test",
             f"connect:{p}"]
    proc, _ = in_world(run, world, run.python, "-c", CLIENT, *steps,
                       allow=[f"*.corp.test:{p}", f"10.0.0.7:{p}"])
    assert proc.returncode == 0, proc.stderr
    got = dict(connects(proc.stdout))
    assert got.get(f"10.0.0.7:{p}") == "ok", proc.stdout
    assert got.get(f"169.254.169.254:{p}") not in (None, "ok"), proc.stdout
    counts = world.settle()
    assert (counts["10.0.0.7"], counts["169.254.169.254"]) == (1, 0)


def test_a_name_whose_address_moves_is_followed(run, world):
    """moving.corp.test answers 203.0.113.10 twice, then 203.0.113.11 (TTL 0): the tree
    resolves it four times, connecting after each; the new address opens too."""
    p = world.port
    steps = [s for _ in range(4) for s in (f"ask:gai:{MOVING}", f"connect:{p}", "sleep:0.2")]
    proc, _ = in_world(run, world, run.python, "-c", CLIENT, *steps,
                       allow=[f"{MOVING}:{p}"])
    assert proc.returncode == 0, proc.stderr
    seen = [tuple(a) for _rc, a in answers(proc.stdout).get(MOVING, [])]
    assert len(seen) == 4 and seen[0] == ("203.0.113.10",) and seen[-1] == ("203.0.113.11",), \
        proc.stdout
    got = connects(proc.stdout)
    assert len(got) == 4 and all(r == "ok" for _, r in got), got
    counts = world.settle()
    assert counts["203.0.113.10"] + counts["203.0.113.11"] == 4
    assert counts["203.0.113.10"] >= 1 and counts["203.0.113.11"] >= 1


# -- the audit log ---------------------------------------------------------------------------
def test_audit_log_has_one_event_per_query(run, world):
    p = world.port
    secret = refused_name()
    steps = [f"ask:sendto:{API}", f"connect:{p}", "ask:sendto:rebind.corp.test",
             f"ask:sendto:{secret}"]
    proc, events = in_world(run, world, run.python, "-c", CLIENT, *steps,
                            allow=[f"{API}:{p}", f"rebind.corp.test:{p}"])
    assert proc.returncode == 0, proc.stderr
    assert events and all("run" in e for e in events)
    assert len({e["run"] for e in events}) == 1

    def about(name: str) -> list[dict[str, Any]]:
        return [e for e in events if e.get("name") == name]

    api = about(API)
    assert [(e["event"], e.get("type"), e.get("decision"), e.get("addresses"))
            for e in api] == [("dns", "A", "allow", ["203.0.113.10"])], api
    assert api[0].get("rule") == f"--allow-net {API}:{p}"
    rebind = about("rebind.corp.test")
    assert [(e["event"], e.get("type"), e.get("decision")) for e in rebind] == [
        ("dns", "A", "allow")], rebind
    assert "127.0.0.1" not in rebind[0].get("addresses", [])  # not learnt
    denied = about(secret)
    assert [(e["event"], e.get("syscall"), e.get("type")) for e in denied] == [
        ("deny", "dns", "A")], denied
    assert "rule" in denied[0]
    assert answers(proc.stdout)[secret] == [("3", [])]
    assert secret not in world.names()
    assert world.settle()["203.0.113.10"] == 1
    # every line follows the schema, and a query names the process that sent it
    import jsonschema

    schema = json.loads((Path(__file__).parents[2] / "docs" / "audit-schema.json").read_text())
    for e in events:
        jsonschema.validate(e, schema)
    assert all(isinstance(e["pid"], int) for e in [*api, *rebind, *denied])


# -- no inbound -------------------------------------------------------------------------------
TREE_SERVER = r"""
import os, socket, sys, time
port, ready, done = int(sys.argv[1]), sys.argv[2], sys.argv[3]
srv = socket.socket()
srv.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
srv.bind(("0.0.0.0", port))
srv.listen(16)
c = socket.create_connection(("127.0.0.1", port), timeout=3)  # the tree's own client
a, _ = srv.accept()
a.sendall(b"own")
print("own", c.recv(8).decode(), flush=True)
a.close()
c.close()
open(ready, "w").close()
srv.settimeout(0.2)
n, end = 0, time.time() + 30
def take():
    global n
    a, _ = srv.accept()
    n += 1
    a.sendall(b"tree")
    a.close()
while time.time() < end and not os.path.exists(done):
    try:
        take()
    except TimeoutError:
        pass
srv.setblocking(False)
while True:  # what is still queued
    try:
        take()
    except (BlockingIOError, TimeoutError):
        break
print("accepted", n, flush=True)
"""


def _knock(world: World, argv: list[str], cwd: Path, port: int, ready: Path, done: Path,
           outside: list[str]) -> tuple[str, str, dict[str, str]]:
    """Start argv (TREE_SERVER on port); once it listens, connect to it from the test
    world at each address of outside. (stdout, stderr, {address: what the client got})"""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            cwd=cwd)
    got: dict[str, str] = {}
    try:
        end = time.time() + 60
        while not ready.exists() and proc.poll() is None and time.time() < end:
            time.sleep(0.05)
        if ready.exists():
            got = {ip: world.client(ip, port) for ip in outside}
    finally:
        done.touch()
        try:
            out, err = proc.communicate(timeout=60)
        except subprocess.TimeoutExpired:
            proc.kill()
            out, err = proc.communicate()
    return out, err, got


def _serve_in_tree(run: Runner, world: World, port: int, extra: list[str],
                   outside: list[str]) -> tuple[str, str, dict[str, str], list[dict]]:
    ready, done = run.workspace / "ready", run.workspace / "done"
    argv, log_path = run.command(run.python, "-c", TREE_SERVER, str(port), str(ready),
                                 str(done), extra=["--dns", "127.0.0.1", *extra])
    out, err, got = _knock(world, ["ip", "netns", "exec", world.name, *argv], run.workspace,
                           port, ready, done, outside)
    return out, err, got, run.finish(err, log_path)


def test_the_trees_listener_cannot_be_reached_from_outside(run, world):
    port = world.free_port()
    out, err, got, _ = _serve_in_tree(run, world, port, [], ["127.0.0.1", WORLD_ADDR])
    assert "own own" in out, out + err  # its own loopback, no --allow-net needed
    assert got, out + err
    assert got["127.0.0.1"] == "refused", got
    assert all(v != "tree" for v in got.values()), got
    assert "accepted 0" in out, out + err


def test_allow_listen_opens_the_trees_listener_deliberately(run, world):
    port = world.free_port()
    out, err, got, events = _serve_in_tree(run, world, port, [f"--allow-listen={port}"],
                                           ["127.0.0.1"])
    assert "own own" in out, out + err
    assert got == {"127.0.0.1": "tree"}, (got, out, err)
    assert "accepted 1" in out, out + err
    listen = [e for e in events if e.get("event") == "listen"]
    assert listen and any(str(port) in json.dumps(e) for e in listen), events


# -- Unix sockets: decided by the socket itself ----------------------------------------------
HARDLINK = r"""
import os, socket, sys
outside, link, premade, own = sys.argv[1:5]
try:
    os.link(outside, link)
    print("link ok", flush=True)
except OSError as e:
    print("link errno", e.errno, flush=True)
for what, path in (("tree-link", link), ("pre-made", premade)):
    if not os.path.lexists(path):
        print(what, "absent", flush=True)
        continue
    s = socket.socket(socket.AF_UNIX)
    s.settimeout(3)
    try:
        s.connect(path)
        print(what, "connected", flush=True)
    except OSError as e:
        print(what, "errno", e.errno, flush=True)
    s.close()
srv = socket.socket(socket.AF_UNIX)
srv.bind(own)
srv.listen(1)
c = socket.socket(socket.AF_UNIX)
c.connect(own)
a, _ = srv.accept()
a.sendall(b"x")
print("own", c.recv(1).decode(), flush=True)
"""


def test_a_hard_link_to_an_outside_unix_socket_is_refused(run, world):
    """A server bound outside the tree in an --allow-write directory outside the
    workspace, hard-linked into the workspace: refused, nothing arrives; the tree's own
    server in the workspace works. The tree makes the link itself where its mounts let
    it (the workspace and an --allow-write directory are separate mounts of the tree's
    view, so link() may be EXDEV); the same link made from outside before the run is
    the end state such an attack aims for, and must be refused the same way."""
    outside = Path(tempfile.mkdtemp(prefix="ztsa-outside-"))
    os.chmod(outside, 0o777)
    path = outside / "daemon.sock"
    srv = socket.socket(socket.AF_UNIX)
    srv.bind(str(path))
    os.chmod(path, 0o777)
    if run.mode != "root":
        # fs.protected_hardlinks: a user may hard-link only what it owns (a socket is
        # no regular file); the tree's user owning it is the harder case anyway
        user = pwd.getpwnam(ensure_user())
        os.chown(path, user.pw_uid, user.pw_gid)
    srv.listen(8)
    srv.settimeout(1)
    premade = run.workspace / "premade.sock"
    os.link(path, premade)  # the same file system: both are in the suite's scratch dir
    try:
        proc, _ = in_world(run, world, run.python, "-c", HARDLINK, str(path),
                           str(run.workspace / "daemon.sock"), str(premade),
                           str(run.workspace / "own.sock"),
                           extra=["--allow-write", str(outside)])
        try:
            srv.accept()[0].close()
            arrived = True
        except TimeoutError:
            arrived = False
    finally:
        srv.close()
    out = proc.stdout
    assert proc.returncode == 0, proc.stderr
    assert "link ok" in out or f"link errno {errno.EXDEV}" in out, out
    assert "pre-made errno" in out, out
    if "link ok" in out:
        assert "tree-link errno" in out, out
    assert "connected" not in out, out
    assert not arrived
    assert "own x" in out, out


# -- positive controls by name ----------------------------------------------------------------
def test_pip_install_from_an_index_reached_by_name(run, world, tmp_path):
    from test_positive_controls import _wheel

    root = tmp_path / "srv"
    (root / "simple" / "ztsadns").mkdir(parents=True)
    wheel = _wheel(root / "simple" / "ztsadns", "ztsadns", "1.0")
    (root / "simple" / "ztsadns" / "index.html").write_text(
        f'<a href="{wheel.name}">{wheel.name}</a>\n')
    port = world.http(root)
    target = run.workspace / "site"
    proc, _ = in_world(run, world, run.python, "-m", "pip", "install", "--no-cache-dir",
                       "-q", "--disable-pip-version-check", "--no-deps", "--isolated",
                       "--index-url", f"http://registry.corp.test:{port}/simple",
                       "--trusted-host", "registry.corp.test", "--target", str(target),
                       "ztsadns", allow=[f"registry.corp.test:{port}"])
    assert proc.returncode == 0, proc.stderr
    assert (target / "ztsadns" / "__init__.py").read_text() == "VALUE = 42\n"
    assert world.http_requests >= 2  # the index page and the wheel
    assert "registry.corp.test" in world.names()


def _npm_registry(world: World, tmp_path: Path, name: str, version: str,
                  body: str) -> tuple[int, str, str]:
    """NAME@VERSION on a registry in the test world, its URLs by name. (port, tarball
    URL, integrity)"""
    from test_positive_controls import _npm_package

    root = tmp_path / "registry"
    root.mkdir(exist_ok=True)
    port = world.http(root)
    tarball, integrity = _npm_package(root, port, tmp_path, name, version, body)
    by_name = tarball.replace("127.0.0.1", "registry.corp.test")
    packument = root / name
    packument.write_text(packument.read_text().replace(tarball, by_name))
    return port, by_name, integrity


def _npm() -> str:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed: the npm positive controls need it")
    return npm


def test_npm_install_from_a_registry_reached_by_name(run, world, tmp_path):
    npm = _npm()
    port, _, _ = _npm_registry(world, tmp_path, "ztsa-dns-demo", "1.0.0",
                               "module.exports = 42;\n")
    ws = run.workspace
    (ws / "package.json").write_text(json.dumps({
        "name": "app", "version": "1.0.0", "dependencies": {"ztsa-dns-demo": "1.0.0"}}))
    os.chmod(ws / "package.json", 0o666)
    script = (f"HOME=$TMPDIR npm_config_cache=$TMPDIR/cache {npm} install --no-audit "
              f"--no-fund --no-update-notifier --registry http://registry.corp.test:{port}/"
              " && node -e \"console.log(require('ztsa-dns-demo'))\"")
    proc, _ = in_world(run, world, "sh", "-c", script,
                       allow=[f"registry.corp.test:{port}"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "42"
    assert world.http_requests >= 2  # the packument and the tarball
    assert "registry.corp.test" in world.names()


def test_npm_ci_from_a_registry_reached_by_name(run, world, tmp_path):
    npm = _npm()
    port, tarball, integrity = _npm_registry(world, tmp_path, "ztsa-dns-ci", "2.0.0",
                                             "module.exports = 'ci';\n")
    ws = run.workspace
    deps = {"ztsa-dns-ci": "2.0.0"}
    (ws / "package.json").write_text(json.dumps({"name": "app", "version": "1.0.0",
                                                 "dependencies": deps}))
    (ws / "package-lock.json").write_text(json.dumps({
        "name": "app", "version": "1.0.0", "lockfileVersion": 3, "requires": True,
        "packages": {"": {"name": "app", "version": "1.0.0", "dependencies": deps},
                     "node_modules/ztsa-dns-ci": {"version": "2.0.0", "resolved": tarball,
                                                  "integrity": integrity}}}))
    for f in ("package.json", "package-lock.json"):
        os.chmod(ws / f, 0o666)
    script = (f"HOME=$TMPDIR npm_config_cache=$TMPDIR/cache {npm} ci --no-audit --no-fund "
              f"--no-update-notifier --registry http://registry.corp.test:{port}/ && "
              "node -e \"console.log(require('ztsa-dns-ci'))\"")
    proc, _ = in_world(run, world, "sh", "-c", script,
                       allow=[f"registry.corp.test:{port}"], timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().splitlines()[-1] == "ci"
    assert (ws / "node_modules" / "ztsa-dns-ci" / "index.js").exists()
    assert world.http_requests >= 1
    assert "registry.corp.test" in world.names()


# -- without user namespaces: no network namespace, and ztsa says so -------------------------
def test_without_user_namespaces_the_missing_network_namespace_is_named():
    if os.geteuid() != 0:
        pytest.skip("making a user namespace with uids 0-65535 mapped needs root")
    ws = Path(tempfile.mkdtemp(prefix="ztsa-ws-"))
    os.chmod(ws, 0o777)
    runner = Runner("nouserns", ws)
    proc, events = runner(runner.python, "-c", "print('ran')", profile="repo")
    assert proc.returncode == 0, proc.stderr  # repo: runs with what there is
    assert proc.stdout.strip() == "ran"
    confinement = [e for e in events if e.get("event") == "confinement"]
    said = ("network namespace" in proc.stderr.lower()
            or any("network namespace" in json.dumps(e).lower() for e in confinement))
    assert said, (proc.stderr, confinement)


# -- a connect to an allowed host that never answers -------------------------------------
SILENT = "203.0.113.11"  # a listener there whose accept queue is full: SYNs vanish
WAITS = r"""
import os, signal, socket, sys, threading, time
ip, port, ws = sys.argv[1], int(sys.argv[2]), sys.argv[3]
# another thread keeps making files while the connect waits: the helper is not held
made = []
def files():
    for i in range(20):
        open(os.path.join(ws, f"f{i}"), "w").close(); made.append(i); time.sleep(0.02)
t = threading.Thread(target=files); t.start()
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO, (1).to_bytes(8, "little") + bytes(8))
t0 = time.monotonic()
try:
    s.connect((ip, port)); print("connected")
except OSError as e:
    print("sndtimeo", e.errno, round(time.monotonic() - t0, 1))
t.join(); print("files", len(made))
# a signal ends a blocking connect's wait, as without ztsa (PEP 475 retries, then the
# handler's exception)
class Alarm(Exception): pass
def on_alarm(*_): raise Alarm()
signal.signal(signal.SIGALRM, on_alarm); signal.setitimer(signal.ITIMER_REAL, 0.5)
s = socket.socket(); t0 = time.monotonic()
try:
    s.connect((ip, port)); print("connected")
except Alarm:
    print("alarm", round(time.monotonic() - t0, 1))
"""


def test_a_silent_host_holds_only_its_own_connect(run, world):
    """A blocking connect to an allowed host that never answers waits in the tree only:
    the helper goes on (another thread's files), SO_SNDTIMEO ends it, and so does a
    signal."""
    def full_listener() -> tuple[socket.socket, list[socket.socket]]:
        srv = socket.socket()
        srv.bind((SILENT, 0))
        srv.listen(0)
        fill = []
        for _ in range(3):  # the queue holds backlog + 1; the kernel drops later SYNs
            c = socket.socket()
            c.setblocking(False)
            with contextlib.suppress(BlockingIOError):
                c.connect((SILENT, srv.getsockname()[1]))
            fill.append(c)
        time.sleep(0.2)
        return srv, fill

    srv, fill = world.in_ns(full_listener, far=True)
    port = srv.getsockname()[1]
    world.sockets += [srv, *fill]
    proc, events = in_world(run, world, run.python, "-c", WAITS, SILENT, str(port),
                            str(run.workspace), allow=[f"{SILENT}:{port}"], timeout=60)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"sndtimeo {errno.EINPROGRESS} "), lines
    assert 0.8 <= float(lines[0].split()[2]) <= 3, lines  # SO_SNDTIMEO's second
    assert lines[1] == "files 20", lines
    assert lines[2].startswith("alarm "), lines
    assert float(lines[2].split()[1]) < 3, lines
    connects = [e for e in events if e["event"] == "connect" and e["address"] == SILENT]
    assert connects and connects[0]["result"] == "EINPROGRESS", connects


# -- what the attacks on it found --------------------------------------------------------
RAW_QUERIES = r"""
import random, socket, struct, sys
def q(labels, extra=b"", ar=0):
    body = b"".join(bytes([len(x)]) + x for x in labels) + b"\0" + struct.pack(">HH", 1, 1)
    return struct.pack(">HHHHHH", random.randrange(65536), 0x0100, 1, 0, 0, ar) + body + extra
s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3)
tests = {
    "nul": q([b"allowed", b"test\0", b"SECRET-nul", b"evil", b"example"]),
    "dot": q([b"SECRET-dot.corp", b"test"]),
    # an additional record beside EDNS: only the question (and a bare OPT) go upstream
    "extra": q([b"api", b"corp", b"test"], b"\x06SECRET\x04evil\x00\x00\x10\x00\x01"
               b"\x00\x00\x00\x3c\x00\x04data" + b"\0" * 900, ar=1),
    # EDNS's own fields as a channel: the UDP size and the extended flags spell SECRET,
    # and an option (code 65001, a local use) carries more
    "opt": q([b"allowed", b"test"], b"\x00\x00\x29SECRET\x00\x0b\xfd\xe9\x00\x07SECRET!",
             ar=1),
}
for name, packet in tests.items():
    s.sendto(packet, ("203.0.113.53", 53))
    try: print(name, s.recv(4096)[3] & 15)
    except OSError as e: print(name, "error", e)
"""


def test_a_query_is_rebuilt_from_the_name_it_was_decided_on(run, world):
    """NUL or dot bytes inside a label (the rule would see one name, the resolver send
    another on), records the tree adds to a query and the EDNS fields it chose: none of
    it goes upstream."""
    proc, _ = in_world(run, world, run.python, "-c", RAW_QUERIES,
                       allow=["allowed.test:443", "*.corp.test:443"], log=False)
    assert proc.returncode == 0, proc.stderr
    out = dict(line.split(" ", 1) for line in proc.stdout.splitlines())
    assert out["nul"] == "1" and out["dot"] == "1", out  # FORMERR
    assert out["extra"] == "0" and out["opt"] == "0", out
    got = [r.packet for r in world.received]
    assert not any(b"SECRET" in p for p in got), got
    assert len(got) == 2 and all(len(p) < 64 for p in got), got  # the two questions alone
    # a bare OPT upstream: a standard UDP size, no extended code or version, DO alone
    opt = next(p for p in got if b"\x07allowed" in p)[-11:]
    assert opt[:3] == b"\x00\x00\x29" and opt[-2:] == b"\x00\x00", opt
    assert int.from_bytes(opt[3:5], "big") == 4096, opt  # its 21,317 rounded down
    assert opt[5:9] in (b"\x00\x00\x00\x00", b"\x00\x00\x80\x00"), opt


def test_an_answer_naming_the_hosts_own_address_opens_nothing(run, world):
    p = world.port
    srv = world.in_ns(lambda: socket.create_server((WORLD_ADDR, p)))  # the host's own
    srv.settimeout(0.5)
    proc, events = in_world(run, world, run.python, "-c", CLIENT, "ask:sendto:self.corp.test",
                            f"connect:{p}", allow=[f"*.corp.test:{p}"])
    try:
        srv.accept()
        reached = True
    except TimeoutError:
        reached = False
    srv.close()
    assert proc.returncode == 0, proc.stderr
    assert not reached, proc.stdout
    dns = [e for e in events if e["event"] == "dns" and e["name"] == "self.corp.test"]
    assert dns and dns[0]["addresses"] == [] and WORLD_ADDR in dns[0]["refused"], dns


def test_an_answer_on_the_hosts_own_link_opens_nothing(run, world):
    """link.corp.test -> 192.0.2.2, the far side's address on the world's veth: a public
    address, but in a prefix on-link for the host, so the range guard refuses to learn
    it; api.corp.test (off-link, behind that router) in the same run connects."""
    p = world.port
    srv = world.in_ns(lambda: socket.create_server((FAR_ADDR, p)), far=True)
    srv.settimeout(0.5)
    proc, events = in_world(run, world, run.python, "-c", CLIENT, "ask:gai:link.corp.test",
                            f"connect:{p}", f"ask:gai:{API}", f"connect:{p}",
                            allow=[f"*.corp.test:{p}"])
    try:
        srv.accept()
        reached = True
    except TimeoutError:
        reached = False
    srv.close()
    assert proc.returncode == 0, proc.stderr
    assert not reached, proc.stdout
    got = connects(proc.stdout)
    assert (f"203.0.113.10:{p}", "ok") in got and (f"{FAR_ADDR}:{p}", "ok") not in got, got
    if run.log:
        dns = [e for e in events if e["event"] == "dns" and e["name"] == "link.corp.test"]
        assert dns and dns[0]["addresses"] == [] and FAR_ADDR in dns[0]["refused"], dns


def test_without_user_namespaces_answers_are_judged_by_the_same_range_guard(world):
    """No network namespace (no user namespaces): the tracer learns a wildcard's answers
    itself. Loopback, the metadata address, a private one, the host's own and an on-link
    neighbour's are never learnt; an off-link public answer is."""
    if os.geteuid() != 0:
        pytest.skip("making a user namespace with uids 0-65535 mapped needs root")
    ws = Path(tempfile.mkdtemp(prefix="ztsa-ws-"))
    os.chmod(ws, 0o777)
    runner = Runner("nouserns", ws)
    p = world.port
    srv = world.in_ns(lambda: socket.create_server((FAR_ADDR, p)), far=True)
    srv.settimeout(0.5)
    special = {"rebind.corp.test": "127.0.0.1", "meta.corp.test": "169.254.169.254",
               "lan.corp.test": "10.0.0.7", "self.corp.test": WORLD_ADDR,
               "link.corp.test": FAR_ADDR}
    steps = [s for n in [*special, API] for s in (f"ask:sendto@127.0.0.1:{n}", f"connect:{p}")]
    try:
        proc, _ = in_world(runner, world, runner.python, "-c", CLIENT, *steps,
                           allow=[f"*.corp.test:{p}"])
        try:
            srv.accept()
            reached = True
        except TimeoutError:
            reached = False
    finally:
        srv.close()
    assert proc.returncode == 0, proc.stderr
    got = connects(proc.stdout)
    assert (f"203.0.113.10:{p}", "ok") in got, proc.stdout + proc.stderr
    assert all(r != "ok" for a, r in got if not a.startswith("203.")), got
    assert not reached
    counts = world.settle()
    assert counts == {ip: (1 if ip == "203.0.113.10" else 0) for ip in LISTENING}, counts


def test_allow_listen_opens_no_host_service_on_that_port(run, world):
    """--allow-listen P: the tree's own listener is reachable; a host's service on
    127.0.0.1:P is not the tree's, and the tree cannot connect to it."""
    port = world.free_port()
    hits = world.listen("127.0.0.1", port)
    assert hits == port
    code = ("import socket, sys\n"
            "try: socket.create_connection(('127.0.0.1', int(sys.argv[1])), timeout=3);"
            " print('reached')\n"
            "except OSError as e: print('refused', e.errno)\n")
    proc, _ = in_world(run, world, run.python, "-c", code, str(port),
                       extra=[f"--allow-listen={port}"], log=False)
    assert proc.returncode == 0, proc.stderr
    assert "reached" not in proc.stdout, proc.stdout
    assert world.settle(port)["127.0.0.1"] == 0


def test_allow_listen_is_the_trees_address_not_only_its_port(run, world):
    """--allow-listen P: a loopback connect counted as the tree's own server whenever a
    listener of the tree's held port P, on any address: the tree listened on
    127.0.0.2:P and then reached the host's service on 127.0.0.1:P (helper-6)."""
    port = world.free_port()
    assert world.listen("127.0.0.1", port) == port
    code = ("import socket, sys\n"
            "p = int(sys.argv[1])\n"
            "own = socket.socket(); own.bind(('127.0.0.2', p)); own.listen(4)\n"
            "socket.create_connection(('127.0.0.2', p), timeout=3).close(); print('own')\n"
            "for host in ('127.0.0.1', '0.0.0.0', '::ffff:127.0.0.1'):\n"
            "    try:\n"
            "        socket.create_connection((host, p), timeout=3).close(); print('reached')\n"
            "    except OSError as e: print('refused', e.errno)\n")
    proc, _ = in_world(run, world, run.python, "-c", code, str(port),
                       extra=[f"--allow-listen={port}"], log=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split("\n")[0] == "own" and "reached" not in proc.stdout, proc.stdout
    assert world.settle(port)["127.0.0.1"] == 0


def test_a_send_to_an_af_unspec_address_is_its_af_inet_reading(run, world):
    """A UDPv4 sendto with an AF_UNSPEC address goes where the kernel reads it, as
    AF_INET: the helper decided on that reading but connected its host socket to the
    address as written, which is a disconnect, and gave the tree a host socket with no
    peer, open to datagrams from anyone once bound (helper-6). Judged by what arrives
    at the learnt address, and by the tree's socket's peer."""
    def receiver() -> socket.socket:
        u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
        u.bind(("203.0.113.10", 0))
        u.settimeout(5)
        return u

    far = world.in_ns(receiver, far=True)
    port = far.getsockname()[1]
    code = ("import ctypes, socket, struct, sys\n"
            "p = int(sys.argv[2]); socket.getaddrinfo(sys.argv[1], p)\n"
            "u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)\n"
            "sa = struct.pack('<H', 0) + struct.pack('>H', p) + "
            "socket.inet_aton('203.0.113.10') + bytes(8)\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "n = libc.sendto(u.fileno(), b'unspec', 6, 0, sa, len(sa))\n"
            "print(n if n >= 0 else -ctypes.get_errno())\n"
            "try: print(u.getpeername())\n"
            "except OSError as e: print('no peer', e.errno)\n")
    # UDP to a learnt address needs a rule that says so (test_name_at_connection.py)
    proc, _ = in_world(run, world, run.python, "-c", code, API, str(port),
                       allow=[f"{API}:{port}/udp"], log=False)
    assert proc.returncode == 0, proc.stderr
    got = far.recv(64) if proc.stdout.split("\n")[0] == "6" else b""
    far.close()
    assert got == b"unspec", proc.stdout + proc.stderr
    assert proc.stdout.split("\n")[1] == str(("203.0.113.10", port)), proc.stdout


def test_an_agent_preset_opens_its_api_hosts_and_no_other(run, world):
    """--agent codex names api.openai.com and chatgpt.com: their queries go upstream,
    Claude's API host and any other name never arrive."""
    home = tempfile.mkdtemp(prefix="ztsa-agent-home-")
    os.chmod(home, 0o777)
    names = ["api.openai.com", "chatgpt.com", "api.anthropic.com", refused_name()]
    proc, events = in_world(run, world, run.python, "-c", CLIENT,
                            *(f"ask:gai:{n}" for n in names), extra=["--agent", "codex"],
                            env={"HOME": home})
    assert proc.returncode == 0, proc.stderr
    asked = world.names()
    assert {"api.openai.com", "chatgpt.com"} <= set(asked), world.received
    assert not {"api.anthropic.com", names[-1]} & set(asked), world.received
    rules = {e.get("name"): e.get("rule") for e in events if e.get("event") == "dns"}
    assert rules.get("api.openai.com") == "--allow-net api.openai.com:443", rules


def test_codex_opens_the_api_base_its_configuration_names_and_no_other(run, world):
    """With a model provider in the person's ~/.codex/config.toml, --agent codex opens
    that provider's host alone: OpenAI's own names never arrive upstream."""
    home = tempfile.mkdtemp(prefix="ztsa-agent-home-")
    gateway = "gw-" + os.urandom(4).hex() + ".example.com"
    os.makedirs(os.path.join(home, ".codex"))
    with open(os.path.join(home, ".codex", "config.toml"), "w") as f:
        f.write(f'model_provider = "gw"\n[model_providers.gw]\nbase_url = "https://{gateway}/v1"\n')
    for p in (home, os.path.join(home, ".codex")):
        os.chmod(p, 0o777)
    os.chmod(os.path.join(home, ".codex", "config.toml"), 0o644)
    names = [gateway, "api.openai.com", "chatgpt.com"]
    proc, events = in_world(run, world, run.python, "-c", CLIENT,
                            *(f"ask:gai:{n}" for n in names), extra=["--agent", "codex"],
                            env={"HOME": home})
    assert proc.returncode == 0, proc.stderr
    asked = set(world.names())
    assert gateway in asked, world.received
    assert not {"api.openai.com", "chatgpt.com"} & asked, world.received
    rules = {e.get("name"): e.get("rule") for e in events if e.get("event") == "dns"}
    assert rules.get(gateway) == f"--allow-net {gateway}:443", rules


def test_a_network_preset_opens_its_hosts_on_443_only(run, world, monkeypatch):
    """--allow-net @pypi: the queries for both its hosts go upstream and their answers
    open port 443 and no other; another preset's host and any other name never arrive."""
    for name in ("pypi.org", "files.pythonhosted.org"):
        monkeypatch.setitem(ANSWERS, name, "203.0.113.10")
    https, p = world.listen("203.0.113.10", 443), world.port
    others = ["registry.npmjs.org", refused_name()]
    steps = ["ask:gai:pypi.org", f"connect:{https}", f"connect:{p}",
             "ask:gai:files.pythonhosted.org", f"connect:{https}",
             *(f"ask:gai:{n}" for n in others)]
    proc, events = in_world(run, world, run.python, "-c", CLIENT, *steps, allow=["@pypi"])
    assert proc.returncode == 0, proc.stderr
    ans = answers(proc.stdout)
    assert ans["pypi.org"] == ans["files.pythonhosted.org"] == [("0", ["203.0.113.10"])]
    assert {n: ans.get(n) for n in others} == {n: [("3", [])] for n in others}, proc.stdout
    assert [(to, ok == "ok") for to, ok in connects(proc.stdout)] == [
        (f"203.0.113.10:{https}", True), (f"203.0.113.10:{p}", False),
        (f"203.0.113.10:{https}", True)], proc.stdout
    assert world.settle(https)["203.0.113.10"] == 2
    assert world.settle()["203.0.113.10"] == 0
    assert set(world.names()) == {"pypi.org", "files.pythonhosted.org"}, world.received
    rules = {e.get("name"): e.get("rule") for e in events if e.get("event") == "dns"}
    assert rules.get("files.pythonhosted.org") == "--allow-net files.pythonhosted.org:443"


def _enterprise(text: str) -> dict[str, str]:
    """An enterprise policy file the run's user can read, as ZTSA_SYSTEM_POLICY."""
    d = tempfile.mkdtemp(prefix="ztsa-policy-")
    os.chmod(d, 0o755)
    path = os.path.join(d, "policy.toml")
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)
    return {"ZTSA_SYSTEM_POLICY": path, "XDG_CONFIG_HOME": d}


def test_a_name_the_enterprise_denies_is_never_asked_under_a_wildcard(run, world):
    p = world.port
    env = _enterprise('[net]\ndeny = ["registry.corp.test"]\n')
    proc, events = in_world(run, world, run.python, "-c", CLIENT, "ask:gai:registry.corp.test",
                            f"ask:gai:{API}", f"connect:{p}", allow=[f"*.corp.test:{p}"],
                            env=env)
    assert proc.returncode == 0, proc.stderr
    assert answers(proc.stdout)["registry.corp.test"] == [("3", [])]
    assert connects(proc.stdout) == [(f"203.0.113.10:{p}", "ok")]
    assert "registry.corp.test" not in world.names() and API in world.names()
    denied = [e for e in events if e.get("event") == "deny" and e.get("syscall") == "dns"]
    assert denied and {e["rule"] for e in denied} == {
        f"denied by {env['ZTSA_SYSTEM_POLICY']}:2"}  # A and AAAA


def test_an_address_the_enterprise_denies_is_never_learnt(run, world):
    p = world.port
    env = _enterprise('[net]\ndeny = ["203.0.113.10/32"]\n')
    proc, events = in_world(run, world, run.python, "-c", CLIENT, f"ask:gai:{API}",
                            f"connect:{p}", allow=[f"*.corp.test:{p}"], env=env)
    assert connects(proc.stdout) == [(f"203.0.113.10:{p}", "errno 111")] or \
        connects(proc.stdout)[0][1] != "ok", proc.stdout
    assert world.settle().get("203.0.113.10", 0) == 0
    asked = [e for e in events if e.get("event") == "dns" and e.get("name") == API]
    assert asked and asked[0]["refused"] == ["203.0.113.10"], asked
    # and a flag that names it is refused before anything starts
    argv, _ = run.command("true", allow=[f"203.0.113.10:{p}"], env=env)
    done = subprocess.run(argv, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "forbidden by" in done.stderr


def test_a_denied_name_behind_a_cname_and_a_denied_address_spelt_in_ipv6(run, world):
    """alias.corp.test is a CNAME to evil.corp.test, which the enterprise denies: the
    tree gets NXDOMAIN and learns nothing; 203.0.113.10 denied is never learnt as
    64:ff9b::cb00:710a (NAT64) or 2002:cb00:710a::1 (6to4) either."""
    p = world.port
    env = _enterprise(f'[net]\ndeny = ["{ALIAS_TO}", "203.0.113.10/32"]\n')
    proc, events = in_world(run, world, run.python, "-c", CLIENT, f"ask:gai:{ALIAS}",
                            *(f"ask:gai:{n}" for n in SIX), allow=[f"*.corp.test:{p}"],
                            env=env)
    assert proc.returncode == 0, proc.stderr
    assert answers(proc.stdout)[ALIAS] == [("3", [])], proc.stdout
    denied = [e for e in events if e.get("event") == "deny" and e.get("name") == ALIAS]
    assert denied and f"its answer names {ALIAS_TO}" in denied[0]["rule"]
    learnt = [a for e in events if e.get("event") == "dns" for a in e.get("addresses", [])]
    refused = [a for e in events if e.get("event") == "dns" for a in e.get("refused", [])]
    assert not set(SIX.values()) & set(learnt), learnt
    assert set(SIX.values()) <= set(refused), refused
    assert not [e for e in events if e.get("event") == "dns" and e.get("name") == ALIAS
                and e.get("addresses")]


def test_audit_only_asks_and_connects_what_it_would_refuse_and_says_so(run, world):
    """--audit-only: a name no rule names is asked upstream and its address reached,
    each logged as the enforced run's refusal ("enforced": false); what the enterprise
    denies stays refused and is never asked."""
    p = world.port
    env = _enterprise('[net]\ndeny = ["registry.corp.test", "169.254.169.254/32"]\n')
    proc, events = in_world(run, world, run.python, "-c", CLIENT, f"ask:gai:{API}",
                            f"connect:{p}", "ask:gai:registry.corp.test",
                            f"connect:169.254.169.254:{p}", env=env,
                            extra=["--audit-only"], log=True)
    assert proc.returncode == 0, proc.stderr
    assert answers(proc.stdout)[API] == [("0", ["203.0.113.10"])]
    assert answers(proc.stdout)["registry.corp.test"] == [("3", [])]
    got = dict(connects(proc.stdout))
    assert got[f"203.0.113.10:{p}"] == "ok" and got[f"169.254.169.254:{p}"] != "ok", got
    assert world.settle()["203.0.113.10"] == 1
    assert world.settle().get("169.254.169.254", 0) == 0
    assert API in world.names() and "registry.corp.test" not in world.names()
    would = [e for e in events if e.get("event") == "deny" and e.get("enforced") is False]
    assert {(e["syscall"], e.get("name") or e.get("address")) for e in would} >= {
        ("dns", API), ("connect", f"203.0.113.10:{p}")}, would
    enforced = [e for e in events if e.get("event") == "deny" and "enforced" not in e]
    assert {e.get("name") or e.get("address") for e in enforced} == {
        "registry.corp.test", f"169.254.169.254:{p}"}, enforced
    summary = next(e for e in events if e["event"] == "summary")
    assert summary["enforced"] is False and summary["would_deny"] >= 3, summary
    assert "audit only, nothing outside the workspace was enforced" in proc.stderr
