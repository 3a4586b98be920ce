"""AGT012: catalogued install and build settings that run code from an unexpected place."""

from __future__ import annotations

from ztsa.model import Status

WRAPPER = "gradle/wrapper/gradle-wrapper.properties"


def test_pass_released_distributions(machine):
    machine.ws(WRAPPER, "distributionUrl=https\\://services.gradle.org/distributions/g.zip\n")
    machine.ws("package.json", '{"packageManager": "yarn@4.5.0"}')
    machine.ws("go.mod", "module x\n\ngo 1.23\ntoolchain go1.23.2\n")
    assert machine.run("AGT012").status is Status.PASS


def test_pass_another_host_with_a_checksum(machine):
    machine.ws(WRAPPER, "distributionUrl=https\\://mirror.corp.example/g.zip\n"
                        "distributionSha256Sum=" + "0" * 64 + "\n")
    assert machine.run("AGT012").status is Status.PASS


def test_fail_another_host_without_a_checksum(machine):
    machine.ws(WRAPPER, "distributionUrl=https\\://mirror.corp.example/g.zip\n")
    out = machine.run("AGT012")
    assert out.status is Status.FAIL
    [e] = out.evidence
    assert e.path == WRAPPER and e.line == 1
    assert "mirror.corp.example" in e.detail and "inside: the build" in e.detail


def test_fail_linker_in_rustflags_string(machine):
    machine.ws(".cargo/config.toml", '[target.x86_64-unknown-linux-gnu]\n'
                                     'rustflags = "-Clinker=tools/ld"\n')
    assert machine.run("AGT012").status is Status.FAIL


def test_unknown_when_pyproject_does_not_parse(machine):
    machine.ws("pyproject.toml", "[tool.setuptools\n")
    out = machine.run("AGT012")
    assert out.status is Status.UNKNOWN and "pyproject.toml" in out.message
