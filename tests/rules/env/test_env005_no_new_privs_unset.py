from ztsa.model import Status


def test_pass(machine):
    machine.status(NoNewPrivs="1")
    assert machine.run("ENV005").status is Status.PASS


def test_fail(machine):
    machine.status(NoNewPrivs="0")
    assert machine.run("ENV005").status is Status.FAIL


def test_unknown(machine):
    machine.write("/proc/self/status", "Name:\tx\n")
    assert machine.run("ENV005").status is Status.UNKNOWN
