import json

from ztsa.model import Status


def test_pass_workspace_member_uses_root_lock(machine):
    machine.ws("package.json", json.dumps({"name": "root", "workspaces": ["packages/*"]}))
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {}}))
    machine.ws("packages/a/package.json", json.dumps({"name": "a"}))
    machine.ws("Cargo.toml", '[package]\nname = "lib"\nversion = "0.1.0"\n')  # a library
    machine.ws("pyproject.toml", '[project]\nname = "x"\nversion = "1"\n')  # no dependencies
    assert machine.run("SUP001").status is Status.PASS


def test_fail_each_ecosystem(machine):
    machine.ws("web/package.json", json.dumps({"name": "web", "devDependencies": {"vite": "5"}}))
    machine.ws("tool/Cargo.toml", '[package]\nname = "tool"\nversion = "0.1.0"\n')
    machine.ws("tool/src/main.rs", "fn main() {}\n")
    machine.ws("svc/pyproject.toml", '[project]\nname = "svc"\nversion = "1"\n'
               'dependencies = ["httpx"]\n')
    machine.ws("scripts/requirements.txt", "requests==2.32.3\n")  # pinned but not hashed
    out = machine.run("SUP001")
    assert out.status is Status.FAIL
    assert {e.path for e in out.evidence} == {"web/package.json", "tool/Cargo.toml",
                                              "svc/pyproject.toml", "scripts/requirements.txt"}


def test_pass_hashed_requirements_and_locks(machine):
    machine.fixture("py-requirements-hashed")
    machine.ws("tool/Cargo.toml", '[workspace]\nmembers = []\n')
    machine.ws("tool/Cargo.lock", "version = 4\n")
    assert machine.run("SUP001").status is Status.PASS


def test_unknown_unparseable_cargo_toml(machine):
    machine.ws("Cargo.toml", "[package\nname = ")
    out = machine.run("SUP001")
    assert out.status is Status.UNKNOWN and "Cargo.toml" in out.message


def test_pass_a_package_json_that_declares_nothing_to_install(machine):
    """esbuild's platform packages: a package.json with no dependencies at all."""
    machine.ws("npm/linux-x64/package.json", json.dumps(
        {"name": "@esbuild/linux-x64", "version": "0.24.0", "os": ["linux"]}))
    machine.ws("scripts/package.json", json.dumps({"private": True, "scripts": {"x": "y"}}))
    assert machine.run("SUP001").status is Status.PASS


def test_unknown_unparseable_package_json_without_a_lockfile(machine):
    machine.ws("web/package.json", '{"name": ')
    assert machine.run("SUP001").status is Status.UNKNOWN
