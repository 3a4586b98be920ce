from ztsa.model import Status


def test_pass(machine):
    machine.status(CapBnd="0000000000000400")  # NET_BIND_SERVICE only
    assert machine.run("ENV006").status is Status.PASS


def test_fail_effective(machine):
    machine.status(CapEff=f"{1 << 21 | 1 << 13:016x}", CapBnd="000001ffffffffff")
    out = machine.run("ENV006")
    assert out.status is Status.FAIL and not out.advisory
    assert "CAP_SYS_ADMIN" in out.message and "CAP_NET_RAW" in out.message


def test_fail_ambient(machine):
    machine.status(CapAmb=f"{1 << 19:016x}")
    out = machine.run("ENV006")
    assert out.status is Status.FAIL and "CAP_SYS_PTRACE" in out.message


def test_bounding_only_is_advisory(machine):
    machine.status(CapBnd="000001ffffffffff")
    out = machine.run("ENV006")
    assert out.status is Status.FAIL and out.advisory


def test_unknown(machine):
    machine.status(CapEff="not-hex")
    assert machine.run("ENV006").status is Status.UNKNOWN
