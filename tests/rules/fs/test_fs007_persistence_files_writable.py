import os

from ztsa.model import Status


def home(machine):
    for d in ("/home/agent/.ssh", "/home/agent/.config", "/etc/profile.d"):
        os.makedirs(machine.host().path(d), mode=0o755, exist_ok=True)
    for f in (".bashrc", ".profile", ".gitconfig"):
        machine.write(f"/home/agent/{f}", "# rc\n", mode=0o644)


def test_pass_as_another_user(machine):
    home(machine)
    assert machine.run_unprivileged("FS007").status is Status.PASS


def test_fail_writable_rc_and_creatable_autostart(machine):
    home(machine)
    os.chmod(machine.host().path("/home/agent/.bashrc"), 0o666)
    os.chmod(machine.host().path("/home/agent/.config"), 0o777)
    out = machine.run_unprivileged("FS007")
    assert out.status is Status.FAIL
    assert {e.path for e in out.evidence} == {"/home/agent/.bashrc",
                                              "/home/agent/.config/autostart"}
    assert "can be created" in out.evidence[1].detail


def test_unknown(machine, unreadable):
    home(machine)
    os.remove(machine.host().path("/home/agent/.bashrc"))
    unreadable(machine, "/home/agent/.bashrc")
    assert machine.run_unprivileged("FS007").status is Status.UNKNOWN
