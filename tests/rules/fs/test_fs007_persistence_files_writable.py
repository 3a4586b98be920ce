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


def test_fail_writable_rc_and_autostart(machine):
    home(machine)
    os.chmod(machine.host().path("/home/agent/.bashrc"), 0o666)
    os.makedirs(machine.host().path("/home/agent/.config/autostart"), mode=0o777)
    os.chmod(machine.host().path("/home/agent/.config/autostart"), 0o777)
    out = machine.run_unprivileged("FS007")
    assert out.status is Status.FAIL
    assert {e.path for e in out.evidence} == {"/home/agent/.bashrc",
                                              "/home/agent/.config/autostart"}


def test_pass_private_empty_home_even_if_writable(machine):
    os.makedirs(machine.host().path("/home/agent"), mode=0o777)
    os.chmod(machine.host().path("/home/agent"), 0o777)
    assert machine.run_unprivileged("FS007").status is Status.PASS


def test_unknown(machine, unreadable):
    home(machine)
    os.remove(machine.host().path("/home/agent/.bashrc"))
    unreadable(machine, "/home/agent/.bashrc")
    assert machine.run_unprivileged("FS007").status is Status.UNKNOWN
