import os

from ztsa.model import Status


def test_pass_allowlisted_in_deny_toml(machine):
    machine.fixture("cargo-build-rs-cc")
    assert machine.run("SUP011").status is Status.PASS


def test_pass_policy_allowlist(machine):
    machine.fixture("cargo-build-rs-ssh")
    assert machine.run("SUP011", options={"allow_build_scripts": ["fastcsv"]}).status \
        is Status.PASS


def test_fail_with_shipped_program(machine):
    machine.fixture("cargo-build-rs-ssh")
    machine.ws("tools/fetch.sh", "#!/bin/sh\nexit 0\n")
    os.chmod(machine.workspace / "tools/fetch.sh", 0o644)
    out = machine.run("SUP011")
    assert out.status is Status.FAIL
    assert [e.path for e in out.evidence] == ["build.rs", "tools/fetch.sh"]


def test_unknown_bad_deny_toml(machine):
    machine.fixture("cargo-build-rs-ssh")
    machine.ws("deny.toml", "[bans.build\n")
    assert machine.run("SUP011").status is Status.UNKNOWN
