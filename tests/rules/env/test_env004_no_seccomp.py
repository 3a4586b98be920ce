from ztsa.model import Status


def test_pass(machine):
    machine.status(Seccomp="2", Seccomp_filters="3")
    out = machine.run("ENV004")
    assert out.status is Status.PASS and "3 filter" in out.message


def test_fail(machine):
    machine.status(Seccomp="0", Seccomp_filters="0")
    assert machine.run("ENV004").status is Status.FAIL


def test_unknown(machine):
    machine.status(Seccomp="7")
    assert machine.run("ENV004").status is Status.UNKNOWN


def test_unknown_field_missing(machine):
    machine.write("/proc/self/status", "Name:\tx\n")
    assert machine.run("ENV004").status is Status.UNKNOWN
