"""What the tree may reach: the --allow-net / --allow-unix allowlist and its decisions."""

from __future__ import annotations

import os
import struct

from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:  # ipaddress is imported where addresses are made
    import ipaddress
    from typing import Any

    IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
    IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class PolicyError(ValueError):
    """A --allow-net or --allow-unix spec that cannot be understood (exit 2)."""


class NetRule(NamedTuple):
    spec: str  # as given on the command line
    networks: tuple[IPNetwork, ...]
    port: int | None  # None: any port
    suffix: str | None = None  # "*.example.com": ".example.com", learnt at run time
    name: str | None = None  # a host name, followed when the tree resolves it (netns)
    # a policy's rule for these programs only (resolved executables); () for any
    binaries: tuple[str, ...] = ()
    # a name rule's "/raw", "/udp" (ZTSA_CARRIES_*): what its port carries besides TLS and
    # HTTP/1 naming an allowed name (with a network namespace, a TCP connection to an
    # address only a name opened must name it in its first bytes; UDP is refused)
    carries: int = 0


class Decision(NamedTuple):
    allowed: bool
    rule: str  # the spec that allowed it, or why it was denied


def normalise(addr: IPAddress) -> IPAddress:
    """IPv4-mapped IPv6 (::ffff:a.b.c.d) is the IPv4 address it maps."""
    import ipaddress

    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


def _is_address(text: str) -> bool:
    import ipaddress

    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return False


def _split_port(spec: str) -> tuple[str, int | None]:
    if spec.startswith("["):
        host, sep, rest = spec[1:].partition("]")
        if not sep:
            raise PolicyError(f"{spec!r}: missing ']'")
        if not rest:
            return host, None
        if not rest.startswith(":"):
            raise PolicyError(f"{spec!r}: expected :PORT after ']'")
        return host, _port(spec, rest[1:])
    if spec.count(":") == 1:
        host, port = spec.split(":")
        return host, _port(spec, port)
    return spec, None  # a bare IPv6 address or CIDR, or a name


def _port(spec: str, text: str) -> int:
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise PolicyError(f"{spec!r}: port must be 1-65535")
    return int(text)


def resolve(name: str) -> tuple[IPAddress, ...]:
    """A host name's addresses, looked up once when ztsa starts."""
    import ipaddress
    import socket  # only for names: socket.py's import is not free

    try:
        infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise PolicyError(f"cannot resolve {name!r}: {exc.strerror}") from exc
    return tuple(dict.fromkeys(normalise(ipaddress.ip_address(str(i[4][0]).split("%")[0]))
                               for i in infos))


CARRIES_RAW, CARRIES_UDP = 1, 2  # ztsa_native.h: ZTSA_CARRIES_*
CARRIES = {"raw": CARRIES_RAW, "udp": CARRIES_UDP}


def _carries(spec: str) -> tuple[str, int]:
    """A name rule's trailing /raw, /udp or /raw,udp: the spec without it, and the
    ZTSA_CARRIES_* bits."""
    head, sep, tail = spec.rpartition("/")
    words = tail.lower().split(",")
    if not sep or not all(w in CARRIES for w in words):
        return spec, 0
    import ipaddress

    host, _, port = head.rpartition(":")
    if not port.isdigit() or not host:
        host = head
    try:
        ipaddress.ip_network(host.strip("[]"), strict=False)
        address = True
    except ValueError:
        address = False
    if address:
        raise PolicyError(f"{spec!r}: /{tail} is for a name; an address rule already "
                          "allows every protocol to that address")
    bits = 0
    for w in words:
        bits |= CARRIES[w]
    return head, bits


def parse_net(spec: str, resolve_names: bool = True) -> NetRule:
    """HOST, HOST:PORT, IP, IP:PORT, CIDR, CIDR:PORT, [IPv6]:PORT, *.example.com[:PORT],
    and a name's HOST:PORT/raw, /udp or /raw,udp (what the port carries besides TLS and
    HTTP/1 that name the host). A HOST is resolved now, or (resolve_names False: the
    tree has a network namespace, whose DNS ztsa answers) kept as a name whose answers
    the run follows."""
    import ipaddress

    given = spec
    spec, carries = _carries(spec.strip())

    if "://" in spec:
        raise PolicyError(f"{spec!r}: drop the scheme (write HOST or HOST:PORT, e.g. "
                          f"{spec.split('://', 1)[1].split('/')[0]!r})")
    stripped = spec.strip()
    if not stripped.startswith("[") and stripped.count(":") >= 2 and "/" not in stripped:
        head, _, tail = stripped.rpartition(":")
        if tail.isdigit() and _is_address(head):
            raise PolicyError(f"{spec!r}: ambiguous; write [{head}]:{tail} for a port, or "
                              f"[{stripped}] for the address alone")
    host, port = _split_port(stripped)
    if not host:
        raise PolicyError(f"{spec!r}: empty host")
    try:
        net = ipaddress.ip_network(host, strict=False)
    except ValueError:
        net = None
        if ":" in host or "/" in host or all(c.isdigit() or c == "." for c in host):
            raise PolicyError(f"{spec!r}: not a valid IP address or network") from None
    if net is not None:
        if isinstance(net, ipaddress.IPv6Network) and net.network_address.ipv4_mapped:
            mapped = net.network_address.ipv4_mapped
            net = ipaddress.ip_network(f"{mapped}/{max(net.prefixlen - 96, 0)}")
        return NetRule(spec, (net,), port)
    if host.startswith("*."):
        rest = host[2:].lower().rstrip(".")
        if not rest or "*" in rest or "." not in rest:
            raise PolicyError(f"{spec!r}: a wildcard needs a domain, like *.example.com")
        return NetRule(given, (), port, "." + rest, carries=carries)
    name = host.lower().rstrip(".")
    if not resolve_names:
        if not all(c.isalnum() or c in "-._" for c in name) or ".." in name or not name:
            raise PolicyError(f"{spec!r}: not a valid host name")
        return NetRule(given, (), port, None, name, carries=carries)
    addrs = resolve(host)
    from ztsa.sandbox import native as nat
    from ztsa.sandbox import routes

    onlink = routes.onlink()
    kept = tuple(a for a in addrs if nat.learnable(onlink, a.version, a.packed))
    if not kept:  # the range guard, as for an answer in a network namespace
        raise PolicyError(
            f"{name!r} resolves only to addresses a name never opens (loopback, private, "
            f"link-local, the host's own or on its link: {', '.join(map(str, addrs))}); "
            "name the address itself (--allow-net IP:PORT) if you mean it")
    # resolved once (no network namespace): its addresses are address rules, every
    # protocol allowed to them (nothing can read a connection's first bytes there)
    return NetRule(given, tuple(ipaddress.ip_network(a) for a in kept), port, None, name,
                   carries=carries)


# the native decision's reasons (ztsa_native.h: enum ztsa_why; > 0 allows), as the log
# words them
ALLOW_RULE, ALLOW_PEER, ALLOW_UNIX, DENY_UNNAMED = 1, 3, 5, -4
REASONS = {
    2: "disconnect", 3: "no destination", 4: "no destination", 6: "inside the workspace",
    -1: "not in --allow-net", -2: "unsupported family",
    -3: "abstract Unix socket not in --allow-unix", -4: "unnamed Unix socket",
    -5: "Unix socket outside the workspace, not in --allow-unix",
    -6: "unresolvable path, or a socket file with a second name (a hard link)",
}
RULE_DNS = -2  # ztsa_native.h: a resolver on port 53
CONNECT, SEND = 0, 1  # enum ztsa_call


class Policy:
    """The allowlist of one run. Its decisions are the native module's ztsa_decide (one
    function for the Python tracer, the C wait loop and the file helper); this class
    builds the table it reads and words its answers for the log."""

    def __init__(self, net: list[NetRule], unix: list[str], workspace: str,
                 dns: list[IPAddress], listen: tuple[int, ...] = (),
                 deny: list[tuple[NetRule, str]] | None = None) -> None:
        """deny: a policy's net.deny entries with their origin (ztsa.tiers): a denied
        name is NXDOMAIN whatever rule allows it, a denied network never learnt."""
        self.net = net
        self.listen = listen  # --allow-listen
        # as given (made absolute): the decision compares where a socket really is, and
        # an entry is never followed through a symlink the tree may have planted there
        self.unix = [p if p.startswith("@") else os.path.abspath(p) for p in unix]
        self.workspace = os.path.realpath(workspace)
        self.dns = dns
        self.wildcards = [r for r in net if r.suffix]
        # (version, network, mask, port or 0, id); id indexes self.reasons
        self.rules: list[tuple[int, int, int, int, int]] = []
        self.reasons: list[str] = []
        # the names the rules name, for the tree's DNS (netns): (name or ".suffix",
        # suffix?, port or 0, index of self.reasons)
        self.names: list[tuple[str, bool, int, int, bool, int]] = []
        self.deny_nets: list[tuple[int, bytes, bytes]] = []
        for rule, origin in deny or []:  # before every allowing name: the first decides
            if rule.suffix or rule.name:
                self.names.append((rule.suffix or rule.name or "", bool(rule.suffix), 0,
                                   len(self.reasons), True, 0))
                self.reasons.append(f"denied by {origin}")
            for n in rule.networks:
                self.deny_nets.append((n.version, n.network_address.packed, n.netmask.packed))
        # reason id -> the programs a policy's rule is for (ztsa_allow.programs)
        self.programs: dict[int, tuple[str, ...]] = {}
        for rule in net:
            what = f"--allow-net {rule.spec}" + (
                f" (for {', '.join(rule.binaries)})" if rule.binaries else "")
            for n in rule.networks:
                if rule.binaries:
                    self.programs[len(self.reasons)] = rule.binaries
                self._add(n.version, int(n.network_address), int(n.netmask), rule.port or 0,
                          what)
            if rule.suffix or rule.name:
                if rule.binaries:
                    self.programs[len(self.reasons)] = rule.binaries
                self.names.append((rule.suffix or rule.name or "", bool(rule.suffix),
                                   rule.port or 0, len(self.reasons), False, rule.carries))
                self.reasons.append(what)
        self._dns = {(a.version, int(a)) for a in dns}
        for version, value in sorted(self._dns):
            self.rules.append((version, value, _full(version), 53, RULE_DNS))
        self._table: Any = None
        self._onlink: tuple[tuple[int, bytes, bytes], ...] | None = None

    def net_plan(self, listen: tuple[int, ...] = ()) -> Any:
        """The plan of the tree's network namespace (ztsa.sandbox.plan.NetPlan)."""
        from ztsa.sandbox.plan import NetPlan

        return NetPlan(names=tuple(self.names),
                       resolvers=tuple((a.version, a.packed) for a in self.dns),
                       rule_specs=tuple(self.reasons), listen=tuple(self.listen or listen),
                       deny_nets=tuple(self.deny_nets),
                       # only names learn addresses: no routes read for a run without
                       onlink=self.onlink if self.names else ())

    @property
    def onlink(self) -> tuple[tuple[int, bytes, bytes], ...]:
        """The host's on-link prefixes, read once (ztsa.sandbox.routes)."""
        if self._onlink is None:
            from ztsa.sandbox import routes

            self._onlink = routes.onlink()
        return self._onlink

    def _add(self, version: int, net: int, mask: int, port: int, reason: str) -> None:
        self.rules.append((version, net, mask, port, len(self.reasons)))
        self.reasons.append(reason)

    @property
    def table(self) -> Any:
        """The native allow table (ztsa.sandbox.native.AllowTable), made on first use."""
        if self._table is None:
            from ztsa.sandbox import native as nat

            self._table = nat.AllowTable(self.rules, self.unix, self.workspace,
                                         self.programs)
        return self._table

    def wildcard_for(self, name: str) -> NetRule | None:
        for rule in self.wildcards:
            if rule.suffix and name.endswith(rule.suffix):
                return rule
        return None

    def is_resolver(self, version: int, value: int, port: int) -> bool:
        return port == 53 and (version, value) in self._dns

    def learn(self, rule: NetRule, name: str, addresses: list[tuple[int, bytes]]
              ) -> list[tuple[int, bytes]]:
        """Allow the addresses a wildcard name resolved to, on the rule's port; never a
        name or a network a policy denies, nor what the range guard refuses. The
        addresses it allowed."""
        kept: list[tuple[int, bytes]] = []
        if any(n[4] and (name == n[0] or (n[1] and name.endswith(n[0]))) for n in self.names):
            return kept
        from ztsa.sandbox import native as nat

        for version, raw in addresses:
            value = int.from_bytes(raw, "big")
            if self.denied(version, raw) or not nat.learnable(self.onlink, version, raw):
                continue  # the range guard: the helper's DNS service judges the same
            if self.is_resolver(version, value, 53):
                continue
            kept.append((version, raw))
            if any(r[:4] == (version, value, _full(version), rule.port or 0)
                   for r in self.rules):
                continue
            self._add(version, value, _full(version), rule.port or 0,
                      f"--allow-net {rule.spec} ({name})")
            if self._table is not None:
                self._table.replace(self.rules)
        return kept

    def denied(self, version: int, packed: bytes) -> bool:
        """Does a policy's net.deny cover this address?"""
        if version == 6 and packed[:12] in (b"\0" * 10 + b"\xff\xff",
                                            b"\0\x64\xff\x9b" + b"\0" * 8):
            version, packed = 4, packed[12:]  # IPv4-mapped, NAT64
        elif version == 6 and packed[:2] == b"\x20\x02" and self.denied(4, packed[2:6]):
            return True  # 6to4
        return any(v == version
                   and all(a & m == n for a, m, n in zip(packed, mask, net, strict=True))
                   for v, net, mask in self.deny_nets)

    def decide(self, call: int, domain: int, sockaddr: bytes,
               unix_real: str | None = None) -> Decision:
        """The decision for a connect or send (CONNECT, SEND) to sockaddr (raw bytes) on a
        socket of family domain; unix_real: where an AF_UNIX path really is."""
        why, rule = self.table.decide(call, domain, sockaddr, unix_real)
        return Decision(why > 0, self.explain(why, rule))

    def explain(self, why: int, rule: int) -> str:
        if why == ALLOW_RULE:
            return "dns" if rule == RULE_DNS else self.reasons[rule]
        if why == ALLOW_UNIX:
            return f"--allow-unix {self.unix[rule]}"
        return REASONS.get(why, f"reason {why}")

    def decide_ip(self, addr: IPAddress, port: int) -> Decision:
        """A connect to addr:port (for tests and callers with an address object)."""
        import ipaddress

        packed = addr.packed
        if isinstance(addr, ipaddress.IPv4Address):
            raw = struct.pack("<H", 2) + struct.pack(">H", port) + packed + bytes(8)
        else:
            raw = struct.pack("<H", 10) + struct.pack(">H", port) + bytes(4) + packed + \
                bytes(4)
        return self.decide(CONNECT, 0, raw)

    def decide_unix(self, path: str | None, abstract: bool) -> Decision:
        """A connect to a Unix socket path (decided on its real place) or abstract name."""
        name = os.fsencode(path or "")
        raw = struct.pack("<H", 1) + (b"\0" + name if abstract else name + b"\0" * bool(name))
        real = None if abstract or not path else os.path.realpath(path)
        return self.decide(CONNECT, 1, raw, real)


def _full(version: int) -> int:
    return (1 << (32 if version == 4 else 128)) - 1


def resolvers(explicit: list[str]) -> list[IPAddress]:
    """--dns addresses, or the nameservers of /etc/resolv.conf."""
    import ipaddress

    if explicit:
        return [normalise(ipaddress.ip_address(a)) for a in explicit]
    out: list[IPAddress] = []
    try:
        with open("/etc/resolv.conf", encoding="utf-8", errors="replace") as f:
            for line in f:
                parts = line.split()
                if len(parts) >= 2 and parts[0] == "nameserver":
                    try:
                        out.append(normalise(ipaddress.ip_address(parts[1].split("%")[0])))
                    except ValueError:
                        continue
    except OSError:
        pass
    return out


def is_host_name(name: str) -> bool:
    """Is NAME a host name a rule may name, and not an address written as one? The tree
    may ask ztsa's DNS for `127.0.0.1` or `0x7f.1`: as a rule that is an address on
    every port. A last label of digits (or hex) is an address to every resolver
    library (inet_aton's forms); a colon is IPv6."""
    last = name.rstrip(".").rsplit(".", 1)[-1].lower()
    return bool(last) and ":" not in name and not last.isdigit() and not (
        last.startswith("0x") and all(c in "0123456789abcdef" for c in last[2:]))
