from ztsa.model import Status

RO = (
    "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"
    "23 22 0:5 / /sys ro,nosuid - sysfs sysfs ro\n"
    "24 22 0:6 / /proc rw - proc proc rw\n"
    "25 24 0:6 /sys /proc/sys ro - proc proc rw\n"
)


def test_pass(machine):
    machine.write("/proc/self/mountinfo", RO)
    assert machine.run("ENV007").status is Status.PASS


def test_fail_core_pattern_and_rw_sys(machine):
    machine.write("/proc/self/mountinfo", RO.replace("/sys ro,nosuid", "/sys rw,nosuid"))
    machine.write("/proc/sys/kernel/core_pattern", "core\n")
    machine.write("/sys/fs/cgroup/memory/release_agent", "")
    out = machine.run("ENV007")
    assert out.status is Status.FAIL
    paths = {e.path for e in out.evidence}
    assert "/proc/sys/kernel/core_pattern" in paths
    assert "/sys/fs/cgroup/memory/release_agent" in paths
    assert any("/sys is mounted read-write" in e.detail for e in out.evidence)


def test_unknown_without_mountinfo(machine):
    assert machine.run("ENV007").status is Status.UNKNOWN


def test_unknown_surface_unreadable(machine, unreadable):
    machine.write("/proc/self/mountinfo", RO)
    unreadable(machine, "/proc/sysrq-trigger")
    assert machine.run("ENV007").status is Status.UNKNOWN
