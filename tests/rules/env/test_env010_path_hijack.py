import os

from ztsa.model import Status


def test_pass(machine):
    for d in ("/usr/bin", "/bin"):
        os.makedirs(machine.host().path(d), mode=0o755)
    machine.environ["PATH"] = f"/usr/bin:/bin:{machine.workspace}/node_modules/.bin"
    assert machine.run("ENV010").status is Status.PASS


def test_fail_relative_empty_writable_workspace_first(machine):
    os.makedirs(machine.host().path("/opt/tools"))
    os.chmod(machine.host().path("/opt/tools"), 0o777)
    (machine.workspace / "bin").mkdir()
    machine.environ["PATH"] = f"{machine.workspace}/bin::bin:/opt/tools:/usr/bin"
    out = machine.run("ENV010")
    assert out.status is Status.FAIL
    details = " | ".join(e.detail for e in out.evidence)
    assert "inside the workspace" in details
    assert "empty" in details and "relative" in details and "world-writable" in details


def test_unknown_unreadable_entry(machine, unreadable):
    unreadable(machine, "/opt/loop")
    machine.environ["PATH"] = "/opt/loop:/usr/bin"
    assert machine.run("ENV010").status is Status.UNKNOWN
