from ztsa.model import Status

DEV = ("Inter-|   Receive\n face |bytes\n"
       "    lo: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n  eth0: 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0 0\n")


def test_pass(machine):
    machine.status()
    machine.status(pid="1", Uid="1000\t1000\t1000\t1000")
    machine.write("/proc/1/comm", "sh\n")
    machine.write("/proc/net/dev", DEV)
    assert machine.run("ENV008").status is Status.PASS


def test_fail_host_pid_namespace(machine):
    machine.status()
    machine.status(pid="1", Uid="0\t0\t0\t0")
    machine.write("/proc/1/comm", "systemd\n")
    machine.write("/proc/2/comm", "kthreadd\n")
    machine.status(pid="2", Uid="0\t0\t0\t0")
    machine.write("/proc/net/dev", DEV)
    out = machine.run("ENV008")
    assert out.status is Status.FAIL
    assert "host PID namespace" in out.evidence[0].detail


def test_fail_host_interfaces(machine):
    machine.status()
    machine.write("/proc/net/dev", DEV + "docker0: 0 0\nveth12ab: 0 0\n")
    out = machine.run("ENV008")
    assert out.status is Status.FAIL
    assert "docker0, veth12ab" in out.evidence[0].detail


def test_fail_podman_cni_bridge_without_a_running_container(machine):
    """podman with CNI (Debian 12's podman 4.3) leaves its bridge, cni-podman0, when no
    container runs: seen from a container with --network host, the only sign."""
    machine.status()
    machine.write("/proc/net/dev", DEV + "cni-podman0: 0 0\n")
    out = machine.run("ENV008")
    assert out.status is Status.FAIL
    assert "cni-podman0" in out.evidence[0].detail


def test_unknown(machine):
    machine.status()
    assert machine.run("ENV008").status is Status.UNKNOWN
