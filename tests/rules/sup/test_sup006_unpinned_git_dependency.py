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


def test_pass_git_sources_the_lockfile_pins_to_a_commit(machine):
    """ruff and python-sdk: `[tool.uv.sources] black = { git = ... }` with uv.lock
    holding the commit; biome's fuzz/Cargo.toml with fuzz/Cargo.lock's. Without the
    lock's commit it still fails."""
    machine.ws("pyproject.toml", '[project]\nname = "p"\nversion = "1"\n'
               '[tool.uv.sources]\nblack = { git = "https://github.com/psf/black.git" }\n')
    machine.ws("uv.lock", '[[package]]\nname = "black"\nsource = { git = '
               '"https://github.com/psf/black.git#e34bb1bef70e83410c2816dfd07485ec026959aa" }\n')
    machine.ws("fuzz/Cargo.toml", '[package]\nname = "fuzz"\nversion = "0.0.0"\n'
               '[dependencies]\n'
               'libfuzzer-sys = { git = "https://github.com/rust-fuzz/libfuzzer" }\n')
    machine.ws("fuzz/Cargo.lock", '[[package]]\nname = "libfuzzer-sys"\nsource = '
               '"git+https://github.com/rust-fuzz/libfuzzer'
               '#719e4efb9b7b4b2fb1d9d3e3bb0c17c2b2f07f3a"\n')
    assert machine.run("SUP006").status is Status.PASS
    machine.ws("uv.lock", '[[package]]\nname = "black"\nversion = "24.1"\n')
    out = machine.run("SUP006")
    assert out.status is Status.FAIL
    assert [e.path for e in out.evidence] == ["pyproject.toml"]


def test_pass_a_js_git_dependency_the_lockfile_pins_to_a_commit(machine):
    """`"b": "github:a/b"` follows the default branch in package.json, but `npm ci`,
    `yarn install --frozen-lockfile` and `pnpm install --frozen-lockfile` fetch the
    commit their lockfile resolved it to. A lockfile that does not pin it still fails."""
    import json

    sha = "0123456789abcdef0123456789abcdef01234567"
    machine.ws("package.json", json.dumps({"name": "x", "dependencies": {"b": "github:a/b"}}))
    locks = {
        "package-lock.json": json.dumps({"lockfileVersion": 3, "packages": {
            "": {"name": "x", "dependencies": {"b": "github:a/b"}},
            "node_modules/b": {"version": "1.0.0",
                               "resolved": f"git+ssh://git@github.com/a/b.git#{sha}"}}}),
        "yarn.lock": ('# yarn lockfile v1\n\n"b@github:a/b":\n  version "1.0.0"\n'
                      f'  resolved "https://codeload.github.com/a/b/tar.gz/{sha}"\n'),
        "pnpm-lock.yaml": ("lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n"
                           "      b:\n        specifier: github:a/b\n"
                           f"        version: git+https://git@github.com:a/b.git#{sha}\n"
                           f"packages:\n  b@git+https://git@github.com:a/b.git#{sha}:\n"
                           f"    resolution: {{commit: {sha}, repo: git+https://git@github.com:a/b"
                           ".git, type: git}\n    version: 1.0.0\n"),
    }
    for name, text in locks.items():
        for other in locks:
            if (machine.workspace / other).exists():
                (machine.workspace / other).unlink()
        machine.ws(name, text)
        out = machine.run("SUP006")
        assert out.status is Status.PASS, (name, out)
        machine.ws(name, text.replace(sha, "main"))
        out = machine.run("SUP006")
        assert out.status is Status.FAIL, (name, out)


def test_a_vendored_packages_dev_dependencies_are_advisory(machine):
    """continue's core/vendor/modules/@xenova/transformers: a copy of a published
    package inside core/vendor (a project with its own lockfile); npm never installs a
    dependency's devDependencies. Its dependencies, and a project's own devDependencies,
    still gate."""
    import json

    machine.ws("core/vendor/package.json", json.dumps({"name": "vendor"}))
    machine.ws("core/vendor/package-lock.json", json.dumps({"lockfileVersion": 3}))
    vendored = "core/vendor/modules/@xenova/transformers/package.json"
    machine.ws(vendored, json.dumps({"name": "@xenova/transformers", "devDependencies": {
        "wavefile": "github:rochars/wavefile#master"}}))
    out = machine.run("SUP006")
    assert out.status is Status.FAIL and out.advisory, out
    assert [e.path for e in out.evidence] == [vendored]
    machine.ws(vendored, json.dumps({"name": "@xenova/transformers", "dependencies": {
        "wavefile": "github:rochars/wavefile#master"}}))
    out = machine.run("SUP006")
    assert out.status is Status.FAIL and not out.advisory, out
    machine.ws(vendored, json.dumps({"name": "@xenova/transformers", "devDependencies": {
        "wavefile": "github:rochars/wavefile#master"}}))
    machine.ws("core/vendor/modules/@xenova/transformers/package-lock.json", "{}")
    out = machine.run("SUP006")  # a lockfile of its own: a project someone installs
    assert out.status is Status.FAIL and not out.advisory, out


def test_a_workspace_members_dev_dependencies_still_gate(machine):
    import json

    machine.ws("package.json", json.dumps({"name": "root", "workspaces": ["packages/*"]}))
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3}))
    machine.ws("packages/a/package.json", json.dumps({"name": "a", "devDependencies": {
        "x": "github:o/x#main"}}))
    out = machine.run("SUP006")
    assert out.status is Status.FAIL and not out.advisory, out
