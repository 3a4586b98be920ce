"""The host's on-link prefixes and the range guard that keeps a name's answers off them
(ztsa.sandbox.routes, native/allow.c ztsa_learnable)."""

from __future__ import annotations

import ipaddress
import sys

import pytest

from ztsa.sandbox import native as nat
from ztsa.sandbox import routes
from ztsa.sandbox.policy import PolicyError, parse_net


def _v4(ip: str) -> str:
    return f"{int.from_bytes(ipaddress.ip_address(ip).packed, sys.byteorder):08X}"


V4 = ("Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
      f"eth0\t00000000\t{_v4('198.51.100.1')}\t0003\t0\t0\t0\t00000000\t0\t0\t0\n"
      f"eth0\t{_v4('198.51.100.0')}\t00000000\t0001\t0\t0\t0\t{_v4('255.255.255.0')}\t0\t0\t0\n"
      f"eth1\t{_v4('203.0.113.0')}\t{_v4('198.51.100.9')}\t0003\t0\t0\t0\t"
      f"{_v4('255.255.255.0')}\t0\t0\t0\n"
      f"eth0\t{_v4('192.0.2.0')}\t00000000\t0201\t0\t0\t0\t{_v4('255.255.255.0')}\t0\t0\t0\n")
V6 = ("20010db8000000010000000000000000 40 00000000000000000000000000000000 00 "
      "00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n"
      "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
      "20010db8000000010000000000000001 00000400 00000002 00000000 00000003     eth0\n"
      "00000000000000000000000000000000 00 00000000000000000000000000000000 00 "
      "00000000000000000000000000000000 ffffffff 00000001 00000000 00200200       lo\n")


def test_on_link_prefixes_are_the_routes_without_a_gateway():
    assert routes.parse_v4(V4) == [(4, bytes([198, 51, 100, 0]), bytes([255, 255, 255, 0]))]
    assert routes.parse_v6(V6) == [(6, ipaddress.ip_address("2001:db8:0:1::").packed,
                                    b"\xff" * 8 + bytes(8))]


@pytest.mark.parametrize(("ip", "learnable"), [
    ("203.0.113.10", True),  # off-link, behind a gateway
    ("2001:db8:5::1", True),
    ("198.51.100.7", False),  # on the host's link
    ("::ffff:198.51.100.7", False),  # the same, IPv4-mapped
    ("64:ff9b::c633:6407", False),  # the same, through NAT64
    ("2002:c633:6407::1", False),  # the same, through 6to4
    ("2001:db8:0:1::99", False),  # the v6 on-link prefix
    ("127.0.0.1", False), ("169.254.169.254", False), ("10.1.2.3", False),
    ("100.64.0.1", False), ("224.0.0.1", False), ("fd00::1", False), ("fe80::1", False),
])
def test_the_range_guard(ip, learnable):
    onlink = tuple(routes.parse_v4(V4) + routes.parse_v6(V6))
    a = ipaddress.ip_address(ip)
    assert nat.learnable(onlink, a.version, a.packed) is learnable


def test_the_hosts_own_address_is_never_learnt():
    own = ipaddress.ip_address("127.0.0.1")  # always the host's own; no other is sure
    assert not nat.learnable((), own.version, own.packed)


def test_unreadable_tables_make_everything_on_link(monkeypatch):
    """Uncertainty is no permission: without the routes, no answer opens anything."""
    real_open = open

    def refuse(path, *a, **k):
        if str(path).startswith("/proc/net/"):
            raise PermissionError(13, "Permission denied", path)
        return real_open(path, *a, **k)

    monkeypatch.setattr("builtins.open", refuse)
    onlink = routes.onlink()
    assert onlink == routes.EVERYTHING
    for ip in ("203.0.113.10", "2001:db8:5::1"):
        a = ipaddress.ip_address(ip)
        assert not nat.learnable(onlink, a.version, a.packed)


def test_a_name_resolved_at_start_only_to_special_addresses_is_refused():
    """Without a network namespace a name rule is resolved when ztsa starts: the same
    guard judges its addresses (localhost: loopback only)."""
    with pytest.raises(PolicyError, match="never opens"):
        parse_net("localhost:8080")
    assert parse_net("127.0.0.1:8080").networks  # the address itself stays allowed
