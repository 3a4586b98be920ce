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
    machine.ws("core/vendor/package-lock.json", json.dumps({"lockfileVersion": 3,
                                                            "packages": {}}))
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
    machine.ws("core/vendor/modules/@xenova/transformers/package-lock.json",
               json.dumps({"lockfileVersion": 3, "packages": {}}))
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


SHA = "0123456789abcdef0123456789abcdef01234567"


def test_fail_npm_specs_in_any_scheme_case_scp_form_or_shortcut(machine):
    """npm-package-arg reads URL schemes case-insensitively (`GIT+https:` is git,
    `HTTP:` a tarball), takes `git@host:owner/repo` for git over ssh, and every hosted
    shortcut for git: none of them is a registry dependency that passes."""
    import json

    specs = {
        "a": "GIT+https://github.com/o/a.git#main", "b": "Git://github.com/o/b.git",
        "c": "HTTP://example.invalid/c-1.0.0.tgz", "d": "HTTPS://example.invalid/d.tgz",
        "e": "git@github.com:o/e.git", "f": "deploy@git.example.invalid:o/f.git#v1",
        "g": "GitHub:o/g", "h": "gitlab:o/h#v1", "i": "bitbucket:o/i", "j": "gist:11081aaa",
        "k": "o/k#main", "l": "GIST:11081aaa", "m": "git+ssh://git@github.com:o/m.git#v2",
    }
    machine.ws("package.json", json.dumps({"name": "x", "dependencies": specs}))
    out = machine.run("SUP006")
    assert out.status is Status.FAIL
    assert {e.detail.split(" comes")[0] for e in out.evidence} == set(specs)
    pinned = {n: s.split("#")[0] + "#" + SHA for n, s in specs.items() if n not in "cd"}
    machine.ws("package.json", json.dumps({"name": "x", "dependencies": pinned}))
    assert machine.run("SUP006").status is Status.PASS


def test_fail_a_ref_that_only_contains_a_commit(machine):
    """`#release-<40 hex>` is a branch or tag named after a commit, movable at will:
    only a fragment that is the commit pins it (`commit=` as Yarn writes it too)."""
    import json

    machine.ws("package.json", json.dumps({"name": "x", "dependencies": {
        "a": f"github:o/a#release-{SHA}", "b": f"o/b#semver:{SHA}"}}))
    out = machine.run("SUP006")
    assert {e.detail.split(" comes")[0] for e in out.evidence} == {"a", "b"}


def test_fail_lock_entries_on_a_branch_or_tag(machine):
    """A dependency's own git dependency is in no package.json of the tree: only the
    lockfile says what `npm ci`, `yarn` and `pnpm install` fetch. An entry locked to a
    branch or tag (npm's `resolved` or a lockfile v1 `version` holding the spec) follows
    it; one locked to a commit passes."""
    import json

    machine.ws("package.json", json.dumps({"name": "x", "dependencies": {"a": "^1.0.0"}}))

    def locks(ref: str) -> dict[str, str]:
        return {
            "package-lock.json": json.dumps({"lockfileVersion": 3, "packages": {
                "": {"name": "x", "dependencies": {"a": "^1.0.0"}},
                "node_modules/a": {"version": "1.0.0", "integrity": "sha512-x",
                                   "resolved": "https://registry.npmjs.org/a/-/a-1.0.0.tgz"},
                "node_modules/y": {"version": "1.0.0",
                                   "resolved": f"git+ssh://git@github.com/o/y.git#{ref}"},
                "node_modules/z": {"version": f"GITHUB:o/z#{ref}"}}}, indent=2),
            "v1/package-lock.json": json.dumps({"lockfileVersion": 1, "dependencies": {
                "y": {"version": f"bitbucket:o/y#{ref}"},
                "z": {"version": f"Git+https://example.invalid/z.git#{ref}"}}}, indent=2),
            "yarn/yarn.lock": ('# yarn lockfile v1\n\n"y@github:o/y":\n  version "1.0.0"\n'
                               f'  resolved "git+https://github.com/o/y.git#{ref}"\n'),
            "pnpm/pnpm-lock.yaml": ("lockfileVersion: '9.0'\npackages:\n"
                                    f"  y@git+https://github.com/o/y.git#{ref}:\n"
                                    f"    resolution: {{commit: {ref}, repo: "
                                    "https://github.com/o/y.git, type: git}\n"
                                    "    version: 1.0.0\n"),
        }
    for rel, text in locks("v1.2.3").items():
        machine.ws(rel, text)
    out = machine.run("SUP006")
    assert out.status is Status.FAIL
    assert sorted(e.path for e in out.evidence) == [
        "package-lock.json", "package-lock.json", "pnpm/pnpm-lock.yaml",
        "v1/package-lock.json", "v1/package-lock.json", "yarn/yarn.lock"], out
    assert all(e.line and e.line > 1 for e in out.evidence), out
    for rel, text in locks(SHA).items():
        machine.ws(rel, text)
    assert machine.run("SUP006").status is Status.PASS


def test_unknown_when_a_js_lockfile_does_not_parse(machine):
    """Its git entries cannot be told pinned or not: unknown, not a pass."""
    import json

    machine.ws("package.json", json.dumps({"name": "x"}))
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3}))
    out = machine.run("SUP006")
    assert out.status is Status.UNKNOWN and "package-lock.json" in out.message, out


def test_every_lockfile_reads_a_scheme_in_any_case(machine):
    """npm, Yarn, pnpm and Bun take `GIT+https:` as `git+https:`: a git entry on a
    branch in any spelling fails; Bun's `name@git+ssh://git@host/...` keeps its name."""
    import json

    machine.ws("package.json", json.dumps({"name": "x"}))
    machine.ws("yarn/yarn.lock", '# yarn lockfile v1\n\n"y@github:o/y":\n  version "1.0.0"\n'
                                 '  resolved "GIT+https://github.com/o/y.git#main"\n')
    machine.ws("berry/yarn.lock", '__metadata:\n  version: 8\n\n"y@GIT+https://github.com/o/'
                                  'y.git#main":\n  version: 1.0.0\n  resolution: "y@GIT+https:'
                                  '//github.com/o/y.git#main"\n')
    machine.ws("bun/bun.lock", json.dumps({"lockfileVersion": 1, "workspaces": {
        "": {"name": "x"}}, "packages": {
        "y": ["y@GIT+ssh://git@github.com/o/y.git#main", {}, "o-y-main"]}}, indent=2))
    out = machine.run("SUP006")
    assert out.status is Status.FAIL
    assert sorted((e.path, e.detail.split("@")[0]) for e in out.evidence) == [
        ("berry/yarn.lock", "y"), ("bun/bun.lock", "y"), ("yarn/yarn.lock", "y")], out
