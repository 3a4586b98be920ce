from ztsa.model import Status


def test_pass_unprivileged(machine):
    machine.status()
    out = machine.run("ENV001")
    assert out.status is Status.PASS
    assert "uid 1000" in out.message


def test_fail_root(machine):
    machine.status(Uid="0\t0\t0\t0")
    machine.write("/proc/self/uid_map", "0 0 4294967295\n")
    out = machine.run("ENV001")
    assert out.status is Status.FAIL and not out.advisory


def test_fail_saved_uid_root_only(machine):
    machine.status(Uid="1000\t1000\t0\t1000")
    out = machine.run("ENV001")
    assert out.status is Status.FAIL
    assert "saved" in out.message


def test_root_in_user_namespace_is_reported_as_such(machine):
    machine.status(Uid="0\t0\t0\t0")
    machine.write("/proc/self/uid_map", "0 1000 1\n")
    out = machine.run("ENV001")
    assert out.status is Status.FAIL and out.advisory
    assert "host uid 1000" in out.message


def test_unknown_without_status(machine):
    assert machine.run("ENV001").status is Status.UNKNOWN


def test_unknown_malformed(machine):
    machine.status(Uid="zero")
    assert machine.run("ENV001").status is Status.UNKNOWN


def test_unknown_unreadable(machine, unreadable):
    unreadable(machine, "/proc/self/status")
    out = machine.run("ENV001")
    assert out.status is Status.UNKNOWN
    assert "/proc/self/status" in out.message
