"""The name checked at the connection (issue #45, native/relay.c): a TCP connection to an
address that only a name rule opened reaches it only once its first bytes name an
allowed name for that address, a TLS ClientHello's server name or an HTTP/1 request's
Host. The CDN stand-in is test_dns_egress.py's test world: api.corp.test and
registry.corp.test both resolve to 203.0.113.10 (behind a router, in a namespace the
test made), where a listener records the bytes each connection brought. Only
api.corp.test is allowed: every other name sent to that address must bring no byte
there. Judged by what the listener received (byte counts), and by what the tree's
client saw (errno, getpeername)."""

from __future__ import annotations

import contextlib
import os
import select
import shutil
import socket
import ssl
import struct
import subprocess
import threading
from collections.abc import Iterator
from pathlib import Path

import pytest
import test_dns_egress
from test_dns_egress import API, World, in_world

world = test_dns_egress.world  # the fixture: the test world with its CDN stand-in

RUN_MODES = ("root", "user")
CDN = "203.0.113.10"
OTHER = "registry.corp.test"  # the same address, not allowed


def client_hello(name: str | None, alpn: bool = True) -> bytes:
    """A real ClientHello (Python's ssl, TLS 1.2-1.3) naming name (None: no SNI)."""
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    if alpn:
        ctx.set_alpn_protocols(["http/1.1"])
    inc, out = ssl.MemoryBIO(), ssl.MemoryBIO()
    obj = ctx.wrap_bio(inc, out, server_hostname=name)
    with contextlib.suppress(ssl.SSLWantReadError):
        obj.do_handshake()
    return out.read()


def with_extension(hello: bytes, ext_type: int, body: bytes) -> bytes:
    """hello (one record) with an extension appended, every length made right."""
    rec = bytearray(hello[5:])
    i = 4 + 2 + 32
    i += 1 + rec[i]
    i += 2 + struct.unpack_from(">H", rec, i)[0]
    i += 1 + rec[i]
    ext_len = struct.unpack_from(">H", rec, i)[0]
    rec[i:i + 2] = struct.pack(">H", ext_len + 4 + len(body))
    rec += struct.pack(">HH", ext_type, len(body)) + body
    n = len(rec) - 4
    rec[1:4] = bytes([n >> 16 & 255, n >> 8 & 255, n & 255])
    return hello[:3] + struct.pack(">H", len(rec)) + bytes(rec)


class _Listener:
    """A listener on 203.0.113.10 (the far namespace), each connection served by
    `_conn` in a thread of its own; `pending` counts the connections accepted and not
    yet served to their end."""

    def __init__(self, w: World) -> None:
        self.s = w.in_ns(lambda: socket.create_server((CDN, 0), backlog=64), far=True)
        self.port = self.s.getsockname()[1]
        self.s.setblocking(False)
        self.cond = threading.Condition()
        self.pending = 0
        self._wake_r, self._wake_w = os.pipe()  # written to on close: ends the loop
        self.t = threading.Thread(target=self._serve, daemon=True)
        self.t.start()

    def _serve(self) -> None:
        while True:
            try:
                ready, _, _ = select.select([self.s, self._wake_r], [], [])
            except (OSError, ValueError):
                return
            if self._wake_r in ready:
                return
            self.take()

    def take(self) -> None:
        """Start serving every connection queued now."""
        with self.cond:
            while True:
                try:
                    c, _ = self.s.accept()
                except OSError:  # BlockingIOError: none left
                    return
                c.setblocking(True)
                self.pending += 1
                threading.Thread(target=self._served, args=(c,), daemon=True).start()

    def _served(self, c: socket.socket) -> None:
        try:
            self._conn(c)
        finally:
            with self.cond:
                self.pending -= 1
                self.cond.notify_all()

    def _conn(self, c: socket.socket) -> None:
        raise NotImplementedError

    def close(self) -> None:
        os.write(self._wake_w, b"x")
        self.t.join(2)
        self.s.close()
        os.close(self._wake_r)
        os.close(self._wake_w)


class Sink(_Listener):
    """A listener that records the bytes each connection brought before it ended."""

    def __init__(self, w: World) -> None:
        self.got: list[int] = []
        self.lock = threading.Lock()
        super().__init__(w)

    def _conn(self, c: socket.socket) -> None:
        c.settimeout(15)
        n = 0
        with contextlib.suppress(OSError):
            while data := c.recv(65536):
                n += len(data)
                if n >= 5 and data.endswith(b"\r\n\r\n"):
                    c.sendall(b"HTTP/1.1 204 No Content\r\nConnection: close\r\n\r\n")
        c.close()
        with self.lock:
            self.got.append(n)

    def settle(self) -> list[int]:
        """The bytes of each connection that arrived, once each has ended (the tree has
        ended by now: what it connected is queued, and its end is on the way)."""
        self.take()
        with self.cond:
            ended = self.cond.wait_for(lambda: self.pending == 0, timeout=30)
        assert ended, "a connection never ended"
        with self.lock:
            return sorted(self.got)


@pytest.fixture
def sink(world: World) -> Iterator[Sink]:
    s = Sink(world)
    yield s
    s.close()


# python -c SENDER NAME PORT MODE HEX...: resolve NAME (ztsa's DNS), connect, send each
# HEX as a segment (MODE "split": one byte a segment), then read to the end; prints
# `peer IP PORT`, `sent N`, `end B` (bytes read back) or `error ERRNO`
SENDER = r"""
import binascii, select, socket, sys, time
name, port, mode = sys.argv[1], int(sys.argv[2]), sys.argv[3]
ip = socket.getaddrinfo(name, port, socket.AF_INET, socket.SOCK_STREAM)[0][4][0]
s = socket.socket()
s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
try:
    if mode == "nonblock":
        s.setblocking(False)
        r = s.connect_ex((ip, port))
        print("connect_ex", r, flush=True)
        select.select([], [s], [], 10)
        print("so_error", s.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR), flush=True)
        s.setblocking(True)
    else:
        s.connect((ip, port))
except OSError as e:
    print("error", e.errno); sys.exit(0)
print("peer", *s.getpeername(), flush=True)
s.settimeout(15)
sent = 0
try:
    for h in sys.argv[4:]:
        data = binascii.unhexlify(h)
        if mode == "split":
            for i in range(len(data)):
                s.send(data[i:i + 1]); time.sleep(0.002)
        else:
            s.sendall(data)
        sent += len(data)
    print("sent", sent, flush=True)
    s.shutdown(socket.SHUT_WR)
    back = b""
    while (d := s.recv(4096)):
        back += d
    print("end", len(back))
except OSError as e:
    print("error", e.errno)
"""


def send(run, world, sink, name: str, *flights: bytes, mode: str = "whole",
         allow: list[str] | None = None, port: int | None = None) -> tuple[str, list]:
    port = sink.port if port is None else port
    proc, events = in_world(run, world, run.python, "-c", SENDER, name, str(port), mode,
                            *[f.hex() for f in flights],
                            allow=allow if allow is not None else [f"{API}:{port}"])
    assert proc.returncode == 0, proc.stderr
    return proc.stdout, events


HTTP_API = f"GET / HTTP/1.1\r\nHost: {API}\r\nUser-Agent: t\r\n\r\n".encode()


def test_the_allowed_names_bytes_arrive_and_another_names_do_not(run, world, sink):
    hello = client_hello(API)
    out, _ = send(run, world, sink, API, hello)
    assert f"peer {CDN} {sink.port}" in out, out  # getpeername: the real destination
    assert sink.settle() == [len(hello)], out
    sink.got.clear()
    for flight in (client_hello(OTHER), client_hello("evil.test"),
                   HTTP_API.replace(API.encode(), OTHER.encode()),
                   f"GET http://{OTHER}/ HTTP/1.1\r\nHost: {API}\r\n\r\n".encode(),
                   b"GET / HTTP/1.1\r\nHost: " + API.encode() + b"\r\nHost: evil.test\r\n\r\n"):
        out, events = send(run, world, sink, API, flight)
        assert "sent" in out or "error" in out, out
    # each connection reached the address (made when the tree connected), none of the
    # bytes did
    assert sink.settle() == [0] * 5, out
    denied = [e for e in events if e["event"] == "deny"]  # the last: two Hosts
    assert [(e["syscall"], e["first_flight"]) for e in denied] == [("send", "bad")], events


def test_an_http_request_for_the_allowed_name_arrives(run, world, sink):
    out, _ = send(run, world, sink, API, HTTP_API)
    assert sink.settle() == [len(HTTP_API)], out
    assert "end 0" not in out  # the stand-in's answer came back through


def test_encrypted_client_hello_is_refused(run, world, sink):
    hello = with_extension(client_hello(API), 0xFE0D, b"\x00" + os.urandom(40))
    out, events = send(run, world, sink, API, hello)
    assert sink.settle() == [0], out
    assert [e.get("first_flight") for e in events if e["event"] == "deny"] == ["ech"]


def test_another_protocol_needs_a_rule_that_says_so(run, world, sink):
    banner = b"SSH-2.0-OpenSSH_9.6\r\n"
    out, _ = send(run, world, sink, API, banner)
    assert sink.settle() == [0], out
    sink.got.clear()
    out, _ = send(run, world, sink, API, banner, allow=[f"{API}:{sink.port}/raw"])
    assert sink.settle() == [len(banner)], out


def test_a_client_hello_one_byte_a_segment_is_still_judged(run, world, sink):
    good, bad = client_hello(API), client_hello(OTHER)
    out, _ = send(run, world, sink, API, good, mode="split")
    out2, events = send(run, world, sink, API, bad, mode="split")
    assert sink.settle() == [0, len(good)], (out, out2)
    assert [(e["first_flight"], e["server_name"]) for e in events
            if e["event"] == "deny"] == [("tls", OTHER)], events


def test_a_client_hello_in_several_records_is_judged(run, world, sink):
    def records(hello: bytes) -> bytes:
        body = hello[5:]
        return b"".join(hello[:3] + struct.pack(">H", len(body[i:i + 7])) + body[i:i + 7]
                        for i in range(0, len(body), 7))

    good, bad = records(client_hello(API)), records(client_hello(OTHER))
    send(run, world, sink, API, good)
    send(run, world, sink, API, bad)
    assert sink.settle() == [0, len(good)]


def test_a_refusing_address_fails_the_connect(run, world, sink):
    free = world.free_port()
    out, _ = send(run, world, sink, API, b"x", port=free, allow=[f"{API}:{free}"])
    assert "error 111" in out, out  # ECONNREFUSED, as bare


def test_a_non_blocking_connect_and_poll(run, world, sink):
    hello = client_hello(API)
    out, _ = send(run, world, sink, API, hello, mode="nonblock")
    assert "so_error 0" in out and f"peer {CDN} {sink.port}" in out, out
    assert out.split()[1] in ("0", "115"), out  # connected, or EINPROGRESS
    assert sink.settle() == [len(hello)], out


UDP = r"""
import socket, sys
ip = socket.getaddrinfo(sys.argv[1], int(sys.argv[2]), socket.AF_INET, socket.SOCK_DGRAM)[0][4][0]
u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
try:
    u.sendto(b"quic?", (ip, int(sys.argv[2]))); print("sent")
except OSError as e:
    print("error", e.errno)
"""


def test_udp_to_a_learnt_address_needs_a_rule_that_says_so(run, world):
    got: list[bytes] = []
    u = world.in_ns(lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM), far=True)
    u.bind((CDN, 0))
    port = u.getsockname()[1]
    u.settimeout(2)
    proc, _ = in_world(run, world, run.python, "-c", UDP, API, str(port),
                       allow=[f"{API}:{port}"])
    assert "error 1" in proc.stdout, proc.stdout + proc.stderr
    proc, _ = in_world(run, world, run.python, "-c", UDP, API, str(port),
                       allow=[f"{API}:{port}/udp"])
    assert "sent" in proc.stdout, proc.stdout + proc.stderr
    with contextlib.suppress(TimeoutError):
        got.append(u.recv(100))
    u.close()
    assert got == [b"quic?"]


# -- positive controls: real clients over TLS to the allowed name --------------------------

def _tls_files(tmp: Path) -> tuple[Path, Path, Path]:
    """A test CA, and a server certificate for api.corp.test and registry.corp.test
    (openssl, on files only)."""
    if shutil.which("openssl") is None:
        pytest.skip("openssl is not installed")
    ca, ca_key, cert, key = (tmp / n for n in ("ca.pem", "ca.key", "cert.pem", "key.pem"))
    csr, ext = tmp / "cert.csr", tmp / "ext.cnf"
    ext.write_text(f"subjectAltName=DNS:{API},DNS:{OTHER}\nextendedKeyUsage=serverAuth\n")
    for argv in (["req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                  "-nodes", "-keyout", ca_key, "-out", ca, "-days", "2",
                  "-subj", "/CN=ztsa test CA"],
                 ["req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                  "-keyout", key, "-out", csr, "-subj", f"/CN={API}"],
                 ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", ca_key,
                  "-CAcreateserial", "-out", cert, "-days", "2", "-extfile", ext]):
        subprocess.run(["openssl", *map(str, argv)], check=True, capture_output=True)
    for p in (ca, cert, key):
        os.chmod(p, 0o644)
    return ca, cert, key


def _readable(run, ca: Path) -> Path:
    """The CA in the workspace, where the tree's user can read it."""
    mine = run.workspace / "ca.pem"
    shutil.copy(ca, mine)
    os.chmod(mine, 0o644)
    return mine


class TlsServer(_Listener):
    """An HTTPS server on 203.0.113.10 serving BODY for every GET, recording the SNI of
    each handshake."""

    BODY = b"hello through the name check\n"

    def __init__(self, w: World, cert: Path, key: Path, body: bytes = BODY) -> None:
        self.snis: list[str | None] = []
        self.body = body
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(cert, key)
        self.ctx.sni_callback = lambda obj, name, ctx: self.snis.append(name)
        super().__init__(w)

    def _conn(self, c: socket.socket) -> None:
        c.settimeout(15)
        try:
            t = self.ctx.wrap_socket(c, server_side=True)
            head = b""
            while b"\r\n\r\n" not in head:
                d = t.recv(4096)
                if not d:
                    return
                head += d
            t.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\nConnection: close\r\n\r\n"
                      % len(self.body) + self.body)
            t.close()
        except OSError:
            c.close()


@pytest.fixture
def tls(world: World, tmp_path: Path) -> Iterator[tuple[TlsServer, Path]]:
    tmp_path.chmod(0o755)
    ca, cert, key = _tls_files(tmp_path)
    server = TlsServer(world, cert, key)
    yield server, ca
    server.close()


def test_curl_reaches_the_allowed_name_over_tls(run, world, tls):
    curl = shutil.which("curl")
    if curl is None:
        pytest.skip("curl is not installed")
    server, ca = tls
    ca = _readable(run, ca)
    url = f"https://{API}:{server.port}/"
    proc, _ = in_world(run, world, curl, "-sS", "--max-time", "20", "--cacert", str(ca), url,
                       allow=[f"{API}:{server.port}"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.encode() == TlsServer.BODY
    # the other name on the same address: resolved by the tree, refused at its first bytes
    proc, _ = in_world(run, world, curl, "-sS", "--max-time", "20", "--cacert", str(ca),
                       "--connect-to", f"{OTHER}:{server.port}:{API}:{server.port}",
                       f"https://{OTHER}:{server.port}/", allow=[f"{API}:{server.port}"])
    assert proc.returncode != 0 and not proc.stdout
    assert server.snis == [API], server.snis


URLLIB = r"""
import ssl, sys, urllib.request
ctx = ssl.create_default_context(cafile=sys.argv[2])
print(urllib.request.urlopen(sys.argv[1], context=ctx, timeout=20).read().decode(), end="")
"""


def test_urllib_reaches_the_allowed_name_over_tls(run, world, tls):
    server, ca = tls
    ca = _readable(run, ca)
    proc, _ = in_world(run, world, run.python, "-c", URLLIB,
                       f"https://{API}:{server.port}/", str(ca),
                       allow=[f"{API}:{server.port}"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.encode() == TlsServer.BODY


NODE = """
fetch(process.argv[1]).then(r => r.text()).then(t => process.stdout.write(t),
  e => { console.error(String(e.cause || e)); process.exit(1); });
"""


def test_node_fetch_reaches_the_allowed_name_over_tls(run, world, tls):
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed")
    version = subprocess.run([node, "--version"], capture_output=True, text=True).stdout
    if int(version.lstrip("v").split(".")[0]) < 18:
        pytest.skip(f"node {version.strip()} has no fetch")
    server, ca = tls
    ca = _readable(run, ca)
    node, mounts = run.visible(node)
    proc, _ = in_world(run, world, node, "-e", NODE, f"https://{API}:{server.port}/",
                       allow=[f"{API}:{server.port}"], mounts=mounts,
                       extra=["--env", f"NODE_EXTRA_CA_CERTS={ca}"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.encode() == TlsServer.BODY


GO_GET = """package main

import (
\t"fmt"
\t"io"
\t"net/http"
\t"os"
\t"time"
)

func main() {
\tc := &http.Client{Timeout: 20 * time.Second}
\tr, err := c.Get(os.Args[1])
\tif err != nil {
\t\tfmt.Fprintln(os.Stderr, err)
\t\tos.Exit(1)
\t}
\tdefer r.Body.Close()
\tio.Copy(os.Stdout, r.Body)
}
"""


@pytest.fixture(scope="module")
def go_client(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Go's net/http client, built once outside the sandbox (static: no cgo, so its own
    resolver and nothing of the host's libc)."""
    go = shutil.which("go")
    if go is None:
        pytest.skip("go is not installed")
    d = tmp_path_factory.mktemp("goget")
    d.chmod(0o755)
    (d / "main.go").write_text(GO_GET)
    (d / "go.mod").write_text("module goget\n\ngo 1.18\n")
    env = {**os.environ, "CGO_ENABLED": "0", "GOFLAGS": "-mod=mod", "GOPROXY": "off",
           "GOCACHE": os.environ.get("GOCACHE", str(Path.home() / ".cache" / "go-build"))}
    subprocess.run([go, "build", "-o", str(d / "goget"), "."], cwd=d, env=env, check=True,
                   capture_output=True, timeout=300)
    (d / "goget").chmod(0o755)
    return d / "goget"


def test_go_net_http_reaches_the_allowed_name_over_tls(run, world, tls, go_client):
    server, ca = tls
    ca = _readable(run, ca)
    client = run.workspace / "goget"
    shutil.copy(go_client, client)
    client.chmod(0o755)
    proc, _ = in_world(run, world, str(client), f"https://{API}:{server.port}/",
                       allow=[f"{API}:{server.port}"], extra=["--env", f"SSL_CERT_FILE={ca}"])
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.encode() == TlsServer.BODY
    assert server.snis == [API], server.snis
