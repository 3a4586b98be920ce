"""What the tree may reach: the --allow-net / --allow-unix allowlist and its decisions."""

from __future__ import annotations

import os

from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:  # ipaddress is imported where addresses are made (a millisecond)
    import ipaddress

    IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
    IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network


class PolicyError(ValueError):
    """A --allow-net or --allow-unix spec that cannot be understood (exit 2)."""


class NetRule(NamedTuple):
    spec: str  # as given on the command line
    networks: tuple[IPNetwork, ...]
    port: int | None  # None: any port
    suffix: str | None = None  # "*.example.com": ".example.com", learnt at run time


class Decision(NamedTuple):
    allowed: bool
    rule: str  # the spec that allowed it, or why it was denied


def normalise(addr: IPAddress) -> IPAddress:
    """IPv4-mapped IPv6 (::ffff:a.b.c.d) is the IPv4 address it maps."""
    import ipaddress

    if isinstance(addr, ipaddress.IPv6Address) and addr.ipv4_mapped is not None:
        return addr.ipv4_mapped
    return addr


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
    import socket  # only for names: its import costs milliseconds

    try:
        infos = socket.getaddrinfo(name, None, proto=socket.IPPROTO_TCP)
    except socket.gaierror as exc:
        raise PolicyError(f"cannot resolve {name!r}: {exc.strerror}") from exc
    return tuple(dict.fromkeys(normalise(ipaddress.ip_address(str(i[4][0]).split("%")[0]))
                               for i in infos))


def parse_net(spec: str) -> NetRule:
    """HOST, HOST:PORT, IP, IP:PORT, CIDR, CIDR:PORT, [IPv6]:PORT, *.example.com[:PORT]."""
    import ipaddress

    host, port = _split_port(spec.strip())
    if not host:
        raise PolicyError(f"{spec!r}: empty host")
    try:
        net = ipaddress.ip_network(host, strict=False)
    except ValueError:
        net = None
    if net is not None:
        if isinstance(net, ipaddress.IPv6Network) and net.network_address.ipv4_mapped:
            mapped = net.network_address.ipv4_mapped
            net = ipaddress.ip_network(f"{mapped}/{max(net.prefixlen - 96, 0)}")
        return NetRule(spec, (net,), port)
    if host.startswith("*."):
        rest = host[2:].lower().rstrip(".")
        if not rest or "*" in rest or "." not in rest:
            raise PolicyError(f"{spec!r}: a wildcard needs a domain, like *.example.com")
        return NetRule(spec, (), port, "." + rest)
    addrs = resolve(host)
    return NetRule(spec, tuple(ipaddress.ip_network(a) for a in addrs), port)


DENIED_NET = Decision(False, "not in --allow-net")


class Policy:
    def __init__(self, net: list[NetRule], unix: list[str], workspace: str,
                 dns: list[IPAddress]) -> None:
        self.net = net
        self.unix = [p if p.startswith("@") else os.path.abspath(p) for p in unix]
        self.workspace = os.path.realpath(workspace)
        self.dns = dns
        # the tracer decides on integers: (version, network, mask, port or 0, decision)
        self._rules: list[tuple[int, int, int, int, Decision]] = [
            (n.version, int(n.network_address), int(n.netmask), rule.port or 0,
             Decision(True, f"--allow-net {rule.spec}"))
            for rule in net for n in rule.networks]
        self._dns = {(a.version, int(a)) for a in dns}
        self.wildcards = [r for r in net if r.suffix]

    def static_rules(self) -> list[tuple[int, int, int, int]]:
        """Every allow rule as (version, network, mask, port or 0), resolvers on port 53
        included: what the tracer's C fast path needs (no wildcards: those learn)."""
        out = [(v, net, mask, port) for v, net, mask, port, _ in self._rules]
        out += [(v, value, (1 << (32 if v == 4 else 128)) - 1, 53) for v, value in self._dns]
        return out

    def wildcard_for(self, name: str) -> NetRule | None:
        for rule in self.wildcards:
            if rule.suffix and name.endswith(rule.suffix):
                return rule
        return None

    def is_resolver(self, version: int, value: int, port: int) -> bool:
        return port == 53 and (version, value) in self._dns

    def learn(self, rule: NetRule, name: str, addresses: list[tuple[int, bytes]]) -> None:
        """Allow the addresses a wildcard name resolved to, on the rule's port."""
        for version, raw in addresses:
            value = int.from_bytes(raw, "big")
            mask = (1 << (32 if version == 4 else 128)) - 1
            entry = (version, value, mask, rule.port or 0,
                     Decision(True, f"--allow-net {rule.spec} ({name})"))
            if entry not in self._rules:
                self._rules.append(entry)

    def decide_ip(self, addr: IPAddress, port: int) -> Decision:
        addr = normalise(addr)
        return self.decide_int(addr.version, int(addr), port)

    def decide_int(self, version: int, value: int, port: int) -> Decision:
        """The decision for an address given as an integer (IPv4-mapped already mapped)."""
        for v, network, mask, rport, decision in self._rules:
            if v == version and value & mask == network and (rport == 0 or rport == port):
                return decision
        if port == 53 and (version, value) in self._dns:
            return Decision(True, "dns")
        return DENIED_NET

    def decide_unix(self, path: str | None, abstract: bool) -> Decision:
        if abstract:
            if path is not None and f"@{path}" in self.unix:
                return Decision(True, f"--allow-unix @{path}")
            return Decision(False, "abstract Unix socket not in --allow-unix")
        if path is None:
            return Decision(False, "unnamed Unix socket")
        if path in self.unix:
            return Decision(True, f"--allow-unix {path}")
        real = os.path.realpath(path)
        if real == self.workspace or real.startswith(self.workspace + os.sep):
            return Decision(True, "inside the workspace")
        return Decision(False, "Unix socket outside the workspace, not in --allow-unix")


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
