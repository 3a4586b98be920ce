"""Wildcard names (--allow-net '*.example.com'): learn their addresses when the tree asks.

A wildcard cannot be resolved ahead of time. When the tree sends a DNS query to one of
the allowed resolvers for a name under an allowed wildcard, ztsa sends the same query
from its own socket to the same resolver, reads the A and AAAA records of the answer,
and allows those addresses (on the rule's port) for the rest of the run; then it relays
the tree's own query. If the two answers differ (round-robin DNS), a connection to an
address ztsa did not see is denied: the failure is closed, never open."""

from __future__ import annotations

import socket
import struct

MAX_NAME = 255


def query_name(packet: bytes) -> str | None:
    """The first question's name of a DNS query, or None if it is not one."""
    if len(packet) < 17:
        return None
    _id, flags, qdcount = struct.unpack_from(">HHH", packet)
    if flags & 0x8000 or qdcount < 1:  # a response, or no question
        return None
    labels: list[str] = []
    i = 12
    while i < len(packet):
        n = packet[i]
        if n == 0:
            name = ".".join(labels).lower()
            return name if 0 < len(name) <= MAX_NAME else None
        if n & 0xC0 or i + 1 + n > len(packet):
            return None  # no compression in a question we accept
        labels.append(packet[i + 1 : i + 1 + n].decode("ascii", "replace"))
        i += 1 + n
    return None


def _skip_name(packet: bytes, i: int) -> int:
    while i < len(packet):
        n = packet[i]
        if n == 0:
            return i + 1
        if n & 0xC0 == 0xC0:
            return i + 2
        i += 1 + n
    raise ValueError("truncated name")


def answer_addresses(packet: bytes) -> list[tuple[int, bytes]]:
    """(4 or 6, address bytes) of the A and AAAA records in a DNS response."""
    if len(packet) < 12:
        return []
    _id, flags, qd, an = struct.unpack_from(">HHHH", packet)
    if not flags & 0x8000:
        return []
    i = 12
    out: list[tuple[int, bytes]] = []
    try:
        for _ in range(qd):
            i = _skip_name(packet, i) + 4
        for _ in range(an):
            i = _skip_name(packet, i)
            rtype, _cls, _ttl, length = struct.unpack_from(">HHIH", packet, i)
            i += 10
            if i + length > len(packet):
                break  # cut short: no address is made of what is not there
            data = packet[i : i + length]
            i += length
            if rtype == 1 and length == 4:
                out.append((4, data))
            elif rtype == 28 and length == 16:
                out.append((6, data))
    except (ValueError, struct.error):
        return out
    return out


def ask(resolver: tuple[int, bytes], packet: bytes, timeout: float = 2.0) -> bytes | None:
    """Send the query from ztsa's own socket to the resolver (port 53); the answer."""
    version, addr = resolver
    family = socket.AF_INET if version == 4 else socket.AF_INET6
    host = socket.inet_ntop(family, addr)
    with socket.socket(family, socket.SOCK_DGRAM) as s:
        s.settimeout(timeout)
        try:
            s.sendto(packet, (host, 53))
            return s.recv(65535)
        except OSError:
            return None
