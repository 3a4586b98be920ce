"""NET004 is pointed only at loopback listeners: nothing here leaves the machine."""

import socket

from ztsa.engine import run
from ztsa.model import Status


def listener():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    s.listen(8)
    return s


def closed_port() -> int:
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def test_not_run_without_the_flag(machine):
    report = run(machine.context(), only={"NET004"})
    assert report.results == ()
    assert [n.id for n in report.not_run] == ["NET004"]
    assert "--probe-network" in report.not_run[0].reason


def test_pass_nothing_listens(machine):
    out = machine.run("NET004", options={"probe_network": True,
                                         "metadata_endpoints": [("127.0.0.1", closed_port())]})
    assert out.status is Status.PASS and "ECONNREFUSED" in out.evidence[0].detail


def test_fail_one_connection_per_endpoint(machine):
    with listener() as srv:
        port = srv.getsockname()[1]
        out = machine.run("NET004", options={"probe_network": True,
                                             "metadata_endpoints": [("127.0.0.1", port)]})
        srv.settimeout(2)
        conn, _ = srv.accept()
        conn.close()
        srv.settimeout(0.2)
        try:
            srv.accept()
            extra = True
        except TimeoutError:
            extra = False
    assert out.status is Status.FAIL
    assert not extra, "more than one connection per endpoint"


def test_unknown_for_a_name(machine):
    out = machine.run("NET004", options={"probe_network": True,
                                         "metadata_endpoints": [("metadata.invalid", 80)]})
    assert out.status is Status.UNKNOWN
