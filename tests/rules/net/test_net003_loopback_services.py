from test_net001_wildcard_listener import HEAD, row

from ztsa.model import Status


def test_pass(machine):
    machine.write("/proc/net/tcp", HEAD + row("0100007F", 8080) + row("00000000", 5432))
    assert machine.run("NET003").status is Status.PASS


def test_fail(machine):
    machine.write("/proc/net/tcp", HEAD + row("0100007F", 6379) + row("0200007F", 2375))
    machine.write("/proc/net/tcp6", HEAD + row("00000000000000000000000001000000", 5432))
    out = machine.run("NET003")
    assert out.status is Status.FAIL
    assert out.message == "loopback service(s): Docker API (2375), PostgreSQL (5432), Redis (6379)"


def test_unknown(machine, unreadable):
    unreadable(machine, "/proc/net/tcp")
    assert machine.run("NET003").status is Status.UNKNOWN
