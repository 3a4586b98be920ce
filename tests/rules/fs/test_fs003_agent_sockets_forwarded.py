import os
import socket

from ztsa.model import Status


def sock(machine, path):
    real = machine.host().path(path)
    os.makedirs(os.path.dirname(real), exist_ok=True)
    s = socket.socket(socket.AF_UNIX)
    s.bind(real)
    return s


def test_pass(machine):
    machine.environ["SSH_AUTH_SOCK"] = "/tmp/ssh-gone/agent.1"  # stale: no socket
    assert machine.run("FS003").status is Status.PASS


def test_fail_ssh_agent_gpg_and_bus(machine):
    machine.environ.update(SSH_AUTH_SOCK="/tmp/ssh-x/agent.1", XDG_RUNTIME_DIR="/run/user/1000")
    with sock(machine, "/tmp/ssh-x/agent.1"), sock(machine, "/run/user/1000/bus"), \
            sock(machine, "/run/user/1000/gnupg/S.gpg-agent"):
        out = machine.run("FS003")
    assert out.status is Status.FAIL
    assert {e.path for e in out.evidence} == {"/tmp/ssh-x/agent.1", "/run/user/1000/bus",
                                              "/run/user/1000/gnupg/S.gpg-agent"}


def test_fail_dbus_address_mentions_systemd_run(machine):
    machine.environ["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=/run/user/1000/bus"
    out = machine.run("FS003")
    assert out.status is Status.FAIL and "systemd-run" in out.evidence[0].detail
    from ztsa.registry import load_rules
    assert "systemd-run --user" in load_rules()["FS003"].doc


def test_unknown(machine, unreadable):
    machine.environ["SSH_AUTH_SOCK"] = "/tmp/loop"
    unreadable(machine, "/tmp/loop")
    assert machine.run("FS003").status is Status.UNKNOWN
