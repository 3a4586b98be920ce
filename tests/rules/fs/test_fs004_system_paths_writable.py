import os

from ztsa.model import Status


def system(machine):
    for d in ("/etc", "/usr/bin", "/bin", "/root"):
        os.makedirs(machine.host().path(d), mode=0o755, exist_ok=True)
    machine.write("/etc/passwd", "root:x:0:0::/root:/bin/sh\n", mode=0o644)
    machine.write("/etc/shadow", "root:*:19000::::::\n", mode=0o640)
    machine.write("/proc/1/environ", "SECRET=1\0", mode=0o400)


def test_pass_as_unprivileged_user(machine):
    system(machine)
    assert machine.run_unprivileged("FS004").status is Status.PASS


def test_fail_writable_etc_and_readable_shadow(machine):
    system(machine)
    os.chmod(machine.host().path("/etc"), 0o777)
    os.chmod(machine.host().path("/etc/shadow"), 0o644)
    out = machine.run_unprivileged("FS004")
    assert out.status is Status.FAIL
    details = {e.detail for e in out.evidence}
    assert details == {"/etc is writable", "/etc/shadow is readable"}


def test_unknown(machine, unreadable):
    system(machine)
    unreadable(machine, "/etc/sudoers")
    assert machine.run_unprivileged("FS004").status is Status.UNKNOWN
