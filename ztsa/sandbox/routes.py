"""The host's on-link prefixes, v4 and v6, read from its routing tables when ztsa starts:
the networks it reaches without a gateway. An address a name's answer gives that lies
in one of them is never learnt (native/allow.c, ztsa_learnable): an attacker's zone
under an allowed name must not open the host's own link. Read by the unconfined ztsa
in the host's network namespace; routes that change during the run are not followed."""

from __future__ import annotations

import sys

RTF_GATEWAY = 0x2
RTF_REJECT = 0x200
# when the tables cannot be read: every address is taken as on-link, so no answer opens
# anything (uncertainty is never permission)
EVERYTHING: tuple[tuple[int, bytes, bytes], ...] = (
    (4, bytes(4), bytes(4)), (6, bytes(16), bytes(16)))

Prefix = tuple[int, bytes, bytes]  # (version, network, mask), network byte order


def _mask(version: int, length: int) -> bytes:
    bits = 32 if version == 4 else 128
    return (((1 << length) - 1) << (bits - length)).to_bytes(bits // 8, "big")


def parse_v4(text: str) -> list[Prefix]:
    """/proc/net/route: Iface Destination Gateway Flags RefCnt Use Metric Mask ...,
    addresses as the kernel's 32-bit values in this machine's byte order."""
    out: list[Prefix] = []
    for line in text.splitlines()[1:]:
        f = line.split()
        if len(f) < 8:
            continue
        dest, gateway, flags, mask = (int(f[1], 16), int(f[2], 16), int(f[3], 16),
                                      int(f[7], 16))
        if flags & (RTF_GATEWAY | RTF_REJECT) or gateway or not mask:
            continue
        m = mask.to_bytes(4, sys.byteorder)
        out.append((4, bytes(a & b for a, b in zip(dest.to_bytes(4, sys.byteorder), m,
                                                      strict=True)), m))
    return out


def parse_v6(text: str) -> list[Prefix]:
    """/proc/net/ipv6_route: dest plen src splen nexthop metric refcnt use flags dev."""
    out: list[Prefix] = []
    for line in text.splitlines():
        f = line.split()
        if len(f) < 10:
            continue
        dest, plen, nexthop, flags = (bytes.fromhex(f[0]), int(f[1], 16), f[4],
                                      int(f[8], 16))
        if flags & (RTF_GATEWAY | RTF_REJECT) or int(nexthop, 16) or not plen:
            continue
        m = _mask(6, plen)
        out.append((6, bytes(a & b for a, b in zip(dest, m, strict=True)), m))
    return out


def onlink() -> tuple[Prefix, ...]:
    """The host's on-link prefixes; EVERYTHING when a table cannot be read (v6 absent
    from the kernel is no table: nothing on-link there)."""
    try:  # bytes, decoded here: no codec module imported for it
        with open("/proc/net/route", "rb") as f:
            v4 = parse_v4(f.read().decode("latin-1"))
    except (OSError, ValueError):
        return EVERYTHING
    try:
        with open("/proc/net/ipv6_route", "rb") as f:
            v6 = parse_v6(f.read().decode("latin-1"))
    except FileNotFoundError:
        v6 = []
    except (OSError, ValueError):
        return EVERYTHING
    return tuple(dict.fromkeys([*v4, *v6]))
