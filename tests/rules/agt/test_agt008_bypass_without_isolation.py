from ztsa.model import Status


def chain(machine, parent_argv: list[str]) -> None:
    machine.write("/proc/self/stat", "500 (python3) S 400 500 1 0")
    machine.write("/proc/400/stat", "400 (node (main)) S 1 400 1 0")
    machine.write("/proc/400/cmdline", "\0".join(parent_argv) + "\0")
    machine.write("/proc/1/stat", "1 (init) S 0 1 1 0")
    machine.write("/proc/1/cmdline", "/sbin/init\0")
    # a bare machine: no sign of isolation
    machine.write("/proc/self/uid_map", "0 0 4294967295\n")
    machine.write("/proc/self/mountinfo", "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n")


def test_pass_no_flag(machine):
    chain(machine, ["node", "/usr/bin/claude", "--permission-mode", "plan"])
    assert machine.run("AGT008").status is Status.PASS


def test_fail_bypass_without_isolation(machine):
    chain(machine, ["node", "/usr/bin/claude", "--dangerously-skip-permissions"])
    out = machine.run("AGT008")
    assert out.status is Status.FAIL
    assert out.evidence[0].detail == (
        "ancestor pid 400 (node) runs with --dangerously-skip-permissions")


def test_pass_bypass_inside_isolation(machine):
    chain(machine, ["codex", "--sandbox", "danger-full-access"])
    machine.write("/.dockerenv")
    out = machine.run("AGT008")
    assert out.status is Status.PASS and "container (docker)" in out.message


def test_permission_mode_forms(machine):
    chain(machine, ["claude", "--permission-mode", "bypassPermissions"])
    assert machine.run("AGT008").status is Status.FAIL


def test_unknown_without_stat(machine):
    assert machine.run("AGT008").status is Status.UNKNOWN
