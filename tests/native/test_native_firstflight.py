"""The relay's reader of a connection's first bytes (native/firstflight.c, issue #45),
called directly through cffi: what a TLS ClientHello's server name or an HTTP/1 request
head's Host names. Hand-made cases first (real ClientHellos from Python's ssl, and the
ambiguous shapes a server might read otherwise), then hypothesis: ClientHellos built
from random parts read back as built, every truncation a prefix (read on) and never
another name, every split into records the same name, and random and mutated bytes
never crash, never read past their length (placed against an unreadable page, as in
test_native_parsers.py) and never yield a name that is not a host name."""

from __future__ import annotations

import contextlib
import os
import re
import ssl
import struct

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_native_parsers import DATA

from ztsa._native import ffi, lib

EXAMPLES = int(os.environ.get("ZTSA_FUZZ_EXAMPLES", "100"))
FUZZ = settings(max_examples=EXAMPLES, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

MORE, TLS, HTTP, NONE, ECH, BAD = (lib.ZTSA_FF_MORE, lib.ZTSA_FF_TLS, lib.ZTSA_FF_HTTP,
                                   lib.ZTSA_FF_NONE, lib.ZTSA_FF_ECH, lib.ZTSA_FF_BAD)
HOST = re.compile(r"^(?!-)[a-z0-9_-]{1,63}(\.[a-z0-9_-]{1,63})*$")


def judge(data: bytes) -> tuple[int, str, str]:
    out = ffi.new("struct ztsa_ff_result *")
    r = lib.ztsa_first_flight(DATA.place(data), len(data), out)
    assert r in (MORE, TLS, HTTP, NONE, ECH, BAD)
    name, name2 = ffi.string(out.name).decode(), ffi.string(out.name2).decode()
    if r in (TLS, HTTP):
        assert HOST.match(name) and not name.replace(".", "").isdigit(), name
        assert 0 < out.used <= len(data)
        assert not name2 or HOST.match(name2)
    else:
        assert name == name2 == ""
    return r, name, name2


def python_hello(name: str | None, ech: bool = False) -> bytes:
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
    ctx.check_hostname = False
    ctx.verify_mode = ssl.CERT_NONE
    obj = ctx.wrap_bio(ssl.MemoryBIO(), out := ssl.MemoryBIO(), server_hostname=name)
    with contextlib.suppress(ssl.SSLWantReadError):
        obj.do_handshake()
    return out.read()


def hello(exts: list[tuple[int, bytes]], session: bytes = b"", suites: bytes = b"\x13\x01",
          version: bytes = b"\x03\x03") -> bytes:
    """A ClientHello of these extensions, in one record."""
    ext = b"".join(struct.pack(">HH", t, len(d)) + d for t, d in exts)
    body = (b"\x03\x03" + bytes(32) + bytes([len(session)]) + session
            + struct.pack(">H", len(suites)) + suites + b"\x01\x00"
            + struct.pack(">H", len(ext)) + ext)
    hs = b"\x01" + len(body).to_bytes(3, "big") + body
    return b"\x16" + version + struct.pack(">H", len(hs)) + hs


def sni(*names: bytes, kind: int = 0) -> tuple[int, bytes]:
    entries = b"".join(bytes([kind]) + struct.pack(">H", len(n)) + n for n in names)
    return 0, struct.pack(">H", len(entries)) + entries


def records(data: bytes, size: int) -> bytes:
    body = data[5:]
    return b"".join(data[:3] + struct.pack(">H", len(body[i:i + size])) + body[i:i + size]
                    for i in range(0, len(body), size))


# ---- TLS ----

def test_a_real_client_hello_names_its_server():
    assert judge(python_hello("api.corp.test"))[:2] == (TLS, "api.corp.test")
    assert judge(python_hello("API.Corp.Test."))[:2] == (TLS, "api.corp.test")


def test_a_client_hello_without_a_name_names_nothing():
    assert judge(python_hello(None))[0] == NONE
    assert judge(hello([]))[0] == NONE


@pytest.mark.parametrize("ext", [0xFE0D, 0xFE0A, 0xFF02, 0xFFCE])
def test_encrypted_client_hello_is_refused(ext):
    assert judge(hello([sni(b"api.corp.test"), (ext, b"\x00\x01")]))[0] == ECH


@pytest.mark.parametrize("exts", [
    [sni(b"a.test"), sni(b"b.test")],             # the extension twice
    [sni(b"a.test", b"b.test")],                  # two names in one
    [sni(b"a.test", kind=1)],                     # not a host_name entry
    [sni(b"1.2.3.4")],                            # an address is no server name
    [sni(b"a..test")], [sni(b"a test")], [sni(b"")], [sni(b"a" * 64 + b".test")],
    [(0, b"\x00\x05\x00\x00\x09a.test")],         # a name longer than its entry
    [(0x10, b"\x00")] * 2,                        # any extension twice
])
def test_ambiguous_or_malformed_client_hellos_are_refused(exts):
    assert judge(hello(exts))[0] == BAD


def test_a_record_that_is_not_a_handshake_comes_first():
    h = hello([sni(b"a.test")])
    assert judge(b"\x15\x03\x03\x00\x02\x02\x28" + h)[0] == NONE  # an alert: no TLS hello
    assert judge(h[:5] + b"\x02" + h[6:])[0] == BAD  # a ServerHello


def test_a_client_hello_followed_by_more_is_judged_on_the_hello():
    h = hello([sni(b"a.test")])
    r = judge(h + b"\x17\x03\x03\x00\x05hello")
    assert r[:2] == (TLS, "a.test")


def test_a_record_that_joins_the_hello_to_what_follows_is_refused():
    h = hello([sni(b"a.test")])
    body = h[5:] + b"\x16\x00"  # the record holds two more bytes than the hello
    assert judge(h[:3] + struct.pack(">H", len(body)) + body)[0] == BAD


def test_a_hello_over_the_cap_is_refused():
    big = hello([sni(b"a.test"), (0x15, bytes(20000))])
    assert judge(records(big, 16000))[0] == BAD


@given(st.lists(st.tuples(st.integers(0, 0xFDFF).filter(lambda t: t not in (0, 0x15)),
                          st.binary(max_size=40)), max_size=8, unique_by=lambda e: e[0]),
       st.from_regex(r"[a-z0-9]([a-z0-9-]{0,10}[a-z0-9])?(\.[a-z]{1,8}){1,3}", fullmatch=True),
       st.integers(0, 9), st.binary(max_size=32))
@FUZZ
def test_client_hellos_read_back_as_built(others, name, at, session):
    exts = list(others)
    exts.insert(min(at, len(exts)), sni(name.encode()))
    h = hello(exts, session=session)
    assert judge(h)[:2] == (TLS, name)
    for size in (1, 7, 300):
        assert judge(records(h, size))[:2] == (TLS, name)


@given(st.integers(1, 4096))
@FUZZ
def test_every_truncation_of_a_hello_is_read_on(cut):
    h = python_hello("api.corp.test")
    cut = cut % len(h)
    assert judge(h[:cut])[0] == MORE
    r = records(h, 5)
    assert judge(r[:cut % len(r)])[0] == MORE


@given(st.data())
@FUZZ
def test_mutated_hellos_never_name_another_host_unnoticed(data):
    h = bytearray(python_hello("api.corp.test"))
    for _ in range(data.draw(st.integers(1, 4))):
        i = data.draw(st.integers(0, len(h) - 1))
        h[i] = data.draw(st.integers(0, 255))
    judge(bytes(h))  # the properties of judge() hold whatever the bytes


# ---- HTTP/1 ----

@pytest.mark.parametrize("head,want", [
    (b"GET / HTTP/1.1\r\nHost: api.corp.test\r\n\r\n", (HTTP, "api.corp.test", "")),
    (b"GET / HTTP/1.1\r\nhOsT:API.corp.test:8080 \r\nAccept: */*\r\n\r\n",
     (HTTP, "api.corp.test", "")),
    (b"GET http://a.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n", (HTTP, "a.test", "a.test")),
    (b"GET http://b.test/x HTTP/1.1\r\nHost: a.test\r\n\r\n", (HTTP, "a.test", "b.test")),
    (b"GET http://b.test:80/x HTTP/1.0\r\n\r\n", (HTTP, "b.test", "")),
    (b"CONNECT b.test:443 HTTP/1.1\r\nHost: b.test:443\r\n\r\n", (HTTP, "b.test", "b.test")),
    (b"POST /x HTTP/1.1\r\nHost: a.test\r\nContent-Length: 3\r\n\r\nabc",
     (HTTP, "a.test", "")),
])
def test_request_heads_name_their_hosts(head, want):
    assert judge(head) == want


@pytest.mark.parametrize("head", [
    b"GET / HTTP/1.1\r\nHost: a.test\r\nHost: b.test\r\n\r\n",   # two Hosts
    b"GET / HTTP/1.1\r\nHost : b.test\r\n\r\n",                  # space before the colon
    b"GET / HTTP/1.1\r\nX: y\r\n Host: b.test\r\n\r\n",          # a folded line
    b"GET / HTTP/1.1\nHost: b.test\r\n\r\n",                     # a bare LF
    b"GET / HTTP/1.1\r\nHost: b.test\rX\r\n\r\n",                # a bare CR
    b"GET / HTTP/1.1\r\nHost: a\x00.test\r\n\r\n",               # a control byte
    b"GET / HTTP/1.1\r\nHost: user@b.test\r\n\r\n",              # userinfo
    b"GET / HTTP/2.0\r\nHost: a.test\r\n\r\n",
    b"GET /  HTTP/1.1\r\nHost: a.test\r\n\r\n",
    b"GET http:/b.test HTTP/1.1\r\nHost: a.test\r\n\r\n",
])
def test_ambiguous_heads_are_refused(head):
    assert judge(head)[0] == BAD


@pytest.mark.parametrize("head", [
    b"GET / HTTP/1.0\r\n\r\n",                                   # no Host
    b"GET / HTTP/1.1\r\nHost: 10.0.0.1\r\n\r\n",                 # an address
    b"GET / HTTP/1.1\r\nHost: [::1]:80\r\n\r\n",
    b"get / HTTP/1.1\r\nHost: a.test\r\n\r\n",                   # not a method
    b"SSH-2.0-OpenSSH_9.6\r\n", b"\x00\x00\x00\x10", b"PING\r\n",
])
def test_heads_that_name_nothing(head):
    assert judge(head)[0] == NONE


def test_a_head_not_yet_whole_is_read_on():
    head = b"GET / HTTP/1.1\r\nHost: a.test\r\n\r\n"
    for cut in range(1, len(head)):
        assert judge(head[:cut])[0] == MORE, head[:cut]
    assert judge(b"GET / HTTP/1.1\r\nX: " + b"y" * 20000)[0] == BAD  # past the cap


@given(st.binary(min_size=1, max_size=2000))
@FUZZ
def test_random_bytes(data):
    judge(data)
    judge(b"\x16\x03\x01" + data)
    judge(b"GET / HTTP/1.1\r\n" + data)


def test_rule_names_match_as_the_dns_service_matches_them():
    m = lib.ztsa_ff_matches
    assert m(b"a.test", b"a.test", 0) and not m(b"b.a.test", b"a.test", 0)
    assert m(b"b.a.test", b".a.test", 1) and not m(b"a.test", b".a.test", 1)
    assert not m(b"evila.test", b".a.test", 1)


def test_a_label_starting_with_a_hyphen_names_no_host():
    """Found by the mutation test in CI: `-pi.corp.test` (a hostname's labels never start
    with `-`) is no name, so no wildcard rule can match it."""
    for bad in ("-pi.corp.test", "api.-corp.test"):
        assert judge(python_hello(bad))[1] != bad
    assert judge(python_hello("a-pi.corp.test"))[:2] == (TLS, "a-pi.corp.test")
