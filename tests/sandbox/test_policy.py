import ipaddress

import pytest

from ztsa.sandbox.policy import Policy, PolicyError, parse_net


def policy(*specs, unix=(), dns=()):
    return Policy([parse_net(s) for s in specs], list(unix), "/work/ws",
                  [ipaddress.ip_address(d) for d in dns])


@pytest.mark.parametrize(("spec", "addr", "port", "allowed"), [
    ("127.0.0.1", "127.0.0.1", 1, True),
    ("127.0.0.1:8080", "127.0.0.1", 8080, True),
    ("127.0.0.1:8080", "127.0.0.1", 8081, False),
    ("10.0.0.0/8", "10.255.0.1", 22, True),
    ("10.0.0.0/8:443", "10.1.1.1", 80, False),
    ("[::1]:443", "::1", 443, True),
    ("::1", "::2", 443, False),
    ("127.0.0.1:80", "::ffff:127.0.0.1", 80, True),  # mapped address normalised
    ("::ffff:10.0.0.0/104", "10.9.9.9", 1, True),  # mapped network normalised
])
def test_decisions(spec, addr, port, allowed):
    decision = policy(spec).decide_ip(ipaddress.ip_address(addr), port)
    assert decision.allowed is allowed
    if allowed:
        assert decision.rule == f"--allow-net {spec}"


def test_nothing_is_allowed_by_default_loopback_included():
    assert not policy().decide_ip(ipaddress.ip_address("127.0.0.1"), 80).allowed


def test_dns_only_to_the_resolvers_on_port_53():
    p = policy(dns=["192.0.2.53"])
    assert p.decide_ip(ipaddress.ip_address("192.0.2.53"), 53).allowed
    assert not p.decide_ip(ipaddress.ip_address("192.0.2.53"), 80).allowed
    assert not p.decide_ip(ipaddress.ip_address("192.0.2.54"), 53).allowed


@pytest.mark.parametrize("bad", ["1.2.3.4:0", "1.2.3.4:70000", "[::1", "[::1]x",
                                 "*.com", "*.", "*.a*.b", "no-such-host.invalid", ":80"])
def test_bad_specs(bad):
    with pytest.raises(PolicyError):
        parse_net(bad)


def test_unix_sockets():
    p = policy(unix=["/run/allowed.sock", "@named"])
    assert p.decide_unix("/run/allowed.sock", False).allowed
    assert p.decide_unix("/work/ws/sub/app.sock", False).allowed  # inside the workspace
    assert not p.decide_unix("/var/run/docker.sock", False).allowed
    assert not p.decide_unix("/work/ws/../docker.sock", False).allowed
    assert p.decide_unix("named", True).allowed
    assert not p.decide_unix("other", True).allowed


def test_wildcards_are_learnt_not_resolved():
    p = policy("*.corp.test:443")
    rule = p.wildcard_for("api.corp.test")
    assert rule is not None and p.wildcard_for("corp.test.evil.invalid") is None
    addr = ipaddress.ip_address("203.0.113.7")
    assert not p.decide_ip(addr, 443).allowed
    p.learn(rule, "api.corp.test", [(4, addr.packed)])
    assert p.decide_ip(addr, 443).rule == "--allow-net *.corp.test:443 (api.corp.test)"
    assert not p.decide_ip(addr, 80).allowed
