from ztsa.model import Profile, Status


def test_pass(machine):
    machine.fixture("py-requirements-hashed")
    machine.ws("requirements.in", "requests\n")  # pip-compile input: not checked
    assert machine.run("SUP012").status is Status.PASS


def test_repo_profile_needs_pins_not_hashes(machine):
    machine.ws("requirements.txt", "flask==3.0.3\nclick==8.1.7 ; python_version >= '3.8'\n")
    assert machine.run("SUP012", profile=Profile.REPO).status is Status.PASS
    assert machine.run("SUP012", profile=Profile.DEPENDENCY).status is Status.FAIL


def test_fail_follows_includes_and_flags_kinds(machine):
    machine.ws("requirements.txt", "-r base/requirements-base.txt\nrequests>=2\n"
               "-e ./local\nfile:./pkg.tar.gz\nhttps://x.invalid/p-1.0.whl\n")
    machine.ws("base/requirements-base.txt", "-r common.txt\n")
    machine.ws("base/common.txt", "idna\n")
    out = machine.run("SUP012", profile=Profile.REPO)
    assert {(e.path, e.line) for e in out.evidence} == {
        ("requirements.txt", 2), ("requirements.txt", 3), ("requirements.txt", 4),
        ("requirements.txt", 5), ("base/common.txt", 1)}


def test_unknown_include_outside_workspace(machine):
    machine.ws("requirements.txt", "-r ../../etc/reqs.txt\n")
    out = machine.run("SUP012")
    assert out.status is Status.UNKNOWN and "outside the workspace" in out.message


def test_unknown_bad_requirement(machine):
    machine.ws("requirements.txt", "flask[async\n")
    assert machine.run("SUP012").status is Status.UNKNOWN
