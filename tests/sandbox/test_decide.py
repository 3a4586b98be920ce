"""The one connect/send decision (native/allow.c: ztsa_decide), called directly through
the cffi module, as the Python tracer calls it; the C wait loop and the file helper
call the same function (the escape suite checks their effects end to end)."""

import ipaddress
import os
import socket
import struct

import pytest

from ztsa.sandbox import native as nat
from ztsa.sandbox.policy import CONNECT, RULE_DNS, SEND, Policy, parse_net

ALLOW_RULE, ALLOW_DISCONNECT, ALLOW_PEER, ALLOW_KERNEL, ALLOW_UNIX, ALLOW_WORKSPACE = (
    1, 2, 3, 4, 5, 6)
DENY_NET, DENY_FAMILY, DENY_ABSTRACT, DENY_UNNAMED, DENY_OUTSIDE, DENY_UNRESOLVED = (
    -1, -2, -3, -4, -5, -6)
AF_UNSPEC, AF_UNIX, AF_INET, AF_INET6, AF_NETLINK = 0, 1, 2, 10, 16


def v4(ip: str, port: int, family: int = AF_INET) -> bytes:
    return struct.pack("<H", family) + struct.pack(">H", port) + \
        ipaddress.IPv4Address(ip).packed + bytes(8)


def v6(ip: str, port: int) -> bytes:
    return struct.pack("<H", AF_INET6) + struct.pack(">H", port) + bytes(4) + \
        ipaddress.IPv6Address(ip).packed + bytes(4)


def unix(path: bytes) -> bytes:
    return struct.pack("<H", AF_UNIX) + path


def table(*specs: str, unix_paths=(), dns=(), workspace="/work/ws") -> nat.AllowTable:
    policy = Policy([parse_net(s) for s in specs], list(unix_paths), workspace,
                    [ipaddress.ip_address(d) for d in dns])
    return policy.table


def decide(t, raw, call=CONNECT, domain=0, real=None):
    return t.decide(call, domain, raw, real)


@pytest.mark.parametrize(("spec", "raw", "expected"), [
    ("127.0.0.1:8080", v4("127.0.0.1", 8080), ALLOW_RULE),
    ("127.0.0.1:8080", v4("127.0.0.1", 8081), DENY_NET),
    ("127.0.0.1", v4("127.0.0.1", 0), ALLOW_RULE),  # a rule without a port: any, 0 too
    ("127.0.0.1:80", v4("127.0.0.1", 0), DENY_NET),  # port 0 is no wildcard
    ("10.0.0.0/8", v4("10.255.0.1", 22), ALLOW_RULE),
    ("10.0.0.0/8", v4("11.0.0.1", 22), DENY_NET),
    ("[::1]:443", v6("::1", 443), ALLOW_RULE),
    ("::1", v6("::2", 443), DENY_NET),
    ("127.0.0.1:80", v6("::ffff:127.0.0.1", 80), ALLOW_RULE),  # mapped: decided as IPv4
    ("::ffff:10.0.0.0/104", v4("10.9.9.9", 1), ALLOW_RULE),  # mapped network: IPv4
    ("::ffff:10.0.0.0/104", v6("::ffff:10.9.9.9", 1), ALLOW_RULE),
    ("::/0", v6("::ffff:127.0.0.1", 80), DENY_NET),  # an IPv6 rule never opens IPv4
    ("127.0.0.1", v4("127.0.0.1", 80)[:6], DENY_FAMILY),  # truncated
    ("::1", v6("::1", 80)[:20], DENY_FAMILY),
    ("0.0.0.0/0", struct.pack("<H", AF_NETLINK) + bytes(10), DENY_FAMILY),
])
def test_addresses(spec, raw, expected):
    assert decide(table(spec), raw)[0] == expected


def test_the_rule_that_allowed_is_named():
    t = table("192.0.2.1:1", "127.0.0.0/8:80")
    assert decide(t, v4("127.0.0.9", 80)) == (ALLOW_RULE, 1)
    p = Policy([parse_net("127.0.0.0/8:80")], [], "/w", [])
    assert p.decide(CONNECT, 0, v4("127.1.1.1", 80)).rule == "--allow-net 127.0.0.0/8:80"


def test_nothing_is_allowed_by_default_loopback_included():
    t = table()
    assert decide(t, v4("127.0.0.1", 80))[0] == DENY_NET
    assert decide(t, v6("::1", 80))[0] == DENY_NET


def test_resolvers_only_on_port_53():
    t = table(dns=["192.0.2.53", "2001:db8::53"])
    assert decide(t, v4("192.0.2.53", 53)) == (ALLOW_RULE, RULE_DNS)
    assert decide(t, v6("2001:db8::53", 53)) == (ALLOW_RULE, RULE_DNS)
    assert decide(t, v4("192.0.2.53", 80))[0] == DENY_NET
    assert decide(t, v4("192.0.2.54", 53))[0] == DENY_NET
    assert decide(t, v4("192.0.2.53", 53), call=SEND, domain=AF_INET)[0] == ALLOW_RULE


def test_af_unspec():
    t = table("127.0.0.1:9")
    unspec = v4("10.1.1.1", 9, family=AF_UNSPEC)
    # connect: a disconnect, whatever the bytes after the family
    assert decide(t, unspec)[0] == ALLOW_DISCONNECT
    assert decide(t, struct.pack("<H", 0))[0] == ALLOW_DISCONNECT
    # a UDPv4 send goes to the address as if it were AF_INET
    assert decide(t, unspec, call=SEND, domain=AF_INET)[0] == DENY_NET
    assert decide(t, v4("127.0.0.1", 9, family=AF_UNSPEC), call=SEND,
                  domain=AF_INET)[0] == ALLOW_RULE
    assert decide(t, unspec[:6], call=SEND, domain=AF_INET)[0] == DENY_FAMILY
    # IPv6 and Unix sockets ignore or refuse it: the connected peer, checked at connect
    assert decide(t, unspec, call=SEND, domain=AF_INET6)[0] == ALLOW_PEER
    assert decide(t, unspec, call=SEND, domain=AF_UNIX)[0] == ALLOW_PEER
    assert decide(t, unspec, call=SEND, domain=AF_NETLINK)[0] == DENY_FAMILY
    # no family at all: the kernel refuses it (EINVAL)
    assert decide(t, b"\x02")[0] == ALLOW_KERNEL
    assert decide(t, b"")[0] == ALLOW_KERNEL


def test_abstract_unix_names():
    t = table(unix_paths=["@named", "/run/x.sock"])
    assert decide(t, unix(b"\0named")) == (ALLOW_UNIX, 0)
    assert decide(t, unix(b"\0other"))[0] == DENY_ABSTRACT
    assert decide(t, unix(b"\0named\0"))[0] == DENY_ABSTRACT  # the length is the name
    assert decide(t, unix(b"\0"))[0] == DENY_ABSTRACT
    assert decide(t, unix(b"\0" + b"a" * 200))[0] == DENY_ABSTRACT


def test_unix_paths_are_decided_on_where_they_really_are():
    t = table(unix_paths=["/run/allowed.sock"], workspace="/work/ws")
    assert decide(t, unix(b"x.sock\0"), real="/work/ws/sub/app.sock")[0] == ALLOW_WORKSPACE
    assert decide(t, unix(b"x\0"), real="/work/ws")[0] == ALLOW_WORKSPACE
    assert decide(t, unix(b"x\0"), real="/work/ws2/app.sock")[0] == DENY_OUTSIDE
    assert decide(t, unix(b"x\0"), real="/var/run/docker.sock")[0] == DENY_OUTSIDE
    assert decide(t, unix(b"x\0"), real="/run/allowed.sock") == (ALLOW_UNIX, 0)
    # the spelling in the address counts for nothing: only the resolved place
    assert decide(t, unix(b"/run/allowed.sock\0"), real="/tmp/evil.sock")[0] == DENY_OUTSIDE
    assert decide(t, unix(b"/run/allowed.sock\0"))[0] == DENY_UNRESOLVED
    assert decide(t, unix(b""))[0] == DENY_UNNAMED
    assert decide(t, unix(b"x\0"), call=SEND, real="/work/ws/a")[0] == ALLOW_WORKSPACE


def test_a_workspace_of_root_holds_every_path():
    t = table(workspace="/")
    assert decide(t, unix(b"x\0"), real="/run/a.sock")[0] == ALLOW_WORKSPACE


def test_allow_unix_entries_are_not_followed(tmp_path):
    """An entry is the socket's real path: a symlink there (which the tree may have
    planted) never makes its target allowed."""
    real = tmp_path / "real"
    real.mkdir()
    (tmp_path / "link").symlink_to(real)
    t = table(unix_paths=[str(tmp_path / "link" / "s.sock")])
    assert decide(t, unix(b"x\0"), real=str(real / "s.sock"))[0] == DENY_OUTSIDE
    assert decide(t, unix(b"x\0"), real=str(tmp_path / "link" / "s.sock")) == (ALLOW_UNIX, 0)


def test_unix_open_resolves_as_the_caller_would(tmp_path):
    real = tmp_path / "real"
    real.mkdir()
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(real / "s.sock"))
    (tmp_path / "link").symlink_to(real)
    try:
        fd, where = nat.unix_open(os.getpid(), os.fsencode(tmp_path / "link" / "s.sock"))
        os.close(fd)
        assert where == str(real / "s.sock")
        cwd = os.getcwd()
        os.chdir(tmp_path)
        try:  # relative to the caller's working directory (its /proc/PID/cwd)
            fd, where = nat.unix_open(os.getpid(), b"link/s.sock\0junk")
            os.close(fd)
        finally:
            os.chdir(cwd)
        assert where == str(real / "s.sock")
        with pytest.raises(nat.NativeError) as exc:
            nat.unix_open(os.getpid(), os.fsencode(tmp_path / "missing.sock"))
        assert exc.value.errno == 2
        with pytest.raises(nat.NativeError):
            nat.unix_open(os.getpid(), b"")
    finally:
        server.close()


def test_learned_addresses_join_the_table():
    p = Policy([parse_net("*.corp.test:443")], [], "/w", [])
    rule = p.wildcard_for("api.corp.test")
    assert rule is not None
    addr = ipaddress.ip_address("203.0.113.7")
    assert not p.decide_ip(addr, 443).allowed
    p.learn(rule, "api.corp.test", [(4, addr.packed)])
    assert p.decide_ip(addr, 443).rule == "--allow-net *.corp.test:443 (api.corp.test)"
    assert not p.decide_ip(addr, 80).allowed
