import socket

from ztsa.model import Status

MOUNTS = "22 1 8:1 / / rw - ext4 /dev/sda1 rw\n"


def bind(machine, path: str) -> socket.socket:
    real = machine.host().path(path)
    import os
    os.makedirs(os.path.dirname(real), exist_ok=True)
    s = socket.socket(socket.AF_UNIX)
    s.bind(real)
    return s


def test_pass_regular_file_is_not_a_socket(machine):
    machine.write("/proc/self/mountinfo", MOUNTS)
    machine.write("/var/run/docker.sock", "not a socket")
    assert machine.run("FS001").status is Status.PASS


def test_fail_docker_sock(machine):
    machine.write("/proc/self/mountinfo", MOUNTS)
    with bind(machine, "/var/run/docker.sock"):
        out = machine.run("FS001")
    assert out.status is Status.FAIL
    assert out.evidence[0].path == "/var/run/docker.sock"


def test_fail_xdg_podman_and_bind_mounted_sock(machine):
    machine.environ["XDG_RUNTIME_DIR"] = "/run/user/1000"
    machine.write("/proc/self/mountinfo",
                  MOUNTS + "30 22 8:1 /x /srv/agent.sock rw - ext4 /dev/sda1 rw\n")
    with bind(machine, "/run/user/1000/podman/podman.sock"), bind(machine, "/srv/agent.sock"):
        out = machine.run("FS001")
    assert {e.path for e in out.evidence} == {"/run/user/1000/podman/podman.sock",
                                              "/srv/agent.sock"}


def test_unknown_without_mountinfo(machine):
    assert machine.run("FS001").status is Status.UNKNOWN


def test_unknown_unreadable(machine, unreadable):
    machine.write("/proc/self/mountinfo", MOUNTS)
    unreadable(machine, "/run/docker.sock")
    assert machine.run("FS001").status is Status.UNKNOWN
