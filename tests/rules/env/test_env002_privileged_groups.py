from ztsa.model import Status

GROUPS = "root:x:0:\nadm:x:4:\nsudo:x:27:\ndocker:x:999:\nagent:x:1000:\n"


def test_pass(machine):
    machine.status()
    machine.write("/etc/group", GROUPS)
    assert machine.run("ENV002").status is Status.PASS


def test_fail_docker(machine):
    machine.status(Groups="1000 999")
    machine.write("/etc/group", GROUPS)
    out = machine.run("ENV002")
    assert out.status is Status.FAIL
    assert "docker (gid 999)" in out.message


def test_fail_root_gid_without_group_file(machine):
    machine.status(Gid="0\t0\t0\t0", Groups="")
    out = machine.run("ENV002")
    assert out.status is Status.FAIL and "root" in out.message


def test_unknown_unnamed_groups_without_group_file(machine):
    machine.status(Groups="1000 999")
    assert machine.run("ENV002").status is Status.UNKNOWN


def test_unknown_group_file_unreadable(machine, unreadable):
    machine.status()
    unreadable(machine, "/etc/group")
    assert machine.run("ENV002").status is Status.UNKNOWN
