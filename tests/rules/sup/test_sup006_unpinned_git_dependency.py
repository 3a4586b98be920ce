from ztsa.model import Status


def test_pass(machine):
    machine.fixture("npm-git-pinned")
    machine.fixture("cargo-build-rs-cc")
    machine.fixture("py-uv-locked")
    assert machine.run("SUP006").status is Status.PASS


def test_fail_npm(machine):
    machine.fixture("npm-git-main")
    out = machine.run("SUP006")
    assert {e.detail.split(" comes")[0] for e in out.evidence} == {"left-pad", "utils", "legacy"}


def test_fail_cargo_pip_uv_poetry(machine):
    machine.fixture("cargo-build-rs-ssh")
    machine.fixture("py-requirements-git-main")
    machine.ws("p/pyproject.toml", '[project]\nname = "p"\nversion = "1"\n'
               'dependencies = ["lib @ git+https://github.com/example/lib@v1.2"]\n'
               '[tool.poetry.dependencies]\nold = { git = "https://github.com/example/old", '
               'tag = "v1" }\n')
    out = machine.run("SUP006")
    assert out.status is Status.FAIL
    assert {e.path for e in out.evidence} == {"Cargo.toml", "requirements.txt",
                                              "p/pyproject.toml"}
    assert any("branch main" in e.detail for e in out.evidence)
    assert len([e for e in out.evidence if e.path == "p/pyproject.toml"]) == 2


def test_unknown(machine):
    machine.ws("requirements.txt", "requests ==\n")
    assert machine.run("SUP006").status is Status.UNKNOWN
