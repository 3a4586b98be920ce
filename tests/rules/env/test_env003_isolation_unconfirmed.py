from ztsa.model import Status


def bare(machine):
    machine.write("/proc/self/uid_map", "         0          0 4294967295\n")
    machine.write("/proc/cpuinfo", "processor\t: 0\nflags\t\t: fpu vme sse2\n")
    machine.write("/proc/version", "Linux version 6.1.0 (gcc) #1 SMP\n")
    machine.write("/proc/self/cgroup", "0::/user.slice\n")
    machine.write("/proc/self/mountinfo", "22 1 8:1 / / rw,relatime - ext4 /dev/sda1 rw\n")


def test_fail_bare_metal(machine):
    bare(machine)
    out = machine.run("ENV003")
    assert out.status is Status.FAIL
    assert "none" in out.message


def test_pass_docker_and_vm_names_every_sign(machine):
    bare(machine)
    machine.write("/.dockerenv")
    machine.write("/proc/cpuinfo", "flags\t\t: fpu hypervisor sse2\n")
    machine.write("/sys/class/dmi/id/sys_vendor", "QEMU\n")
    out = machine.run("ENV003")
    assert out.status is Status.PASS
    details = [e.detail for e in out.evidence]
    assert "container (docker): /.dockerenv exists" in details
    assert any("hypervisor" in d for d in details)
    assert any("QEMU" in d for d in details)


def test_pass_user_namespace_sandbox(machine):
    bare(machine)
    machine.write("/proc/self/uid_map", "1000 0 1\n")
    out = machine.run("ENV003")
    assert out.status is Status.PASS
    assert "user-namespace sandbox" in out.message


def test_pass_gvisor_and_podman(machine):
    bare(machine)
    machine.write("/proc/version", "Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016\n")
    machine.write("/run/.containerenv")
    out = machine.run("ENV003")
    assert "gvisor" in out.message and "container (podman)" in out.message


def test_wsl_is_not_isolation(machine):
    bare(machine)
    machine.write("/proc/version", "Linux version 5.15.90.1-microsoft-standard-WSL2\n")
    out = machine.run("ENV003")
    assert out.status is Status.FAIL
    assert "WSL" in out.message


def test_unknown_when_a_sign_cannot_be_read(machine, unreadable):
    bare(machine)
    unreadable(machine, "/proc/cpuinfo")
    out = machine.run("ENV003")
    assert out.status is Status.UNKNOWN
    assert any("/proc/cpuinfo" in e.detail for e in out.evidence)
