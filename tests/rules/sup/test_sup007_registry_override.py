from ztsa.model import Status


def test_pass(machine):
    machine.fixture("npm-lock-https")  # .npmrc pointing at the npm registry itself
    machine.fixture("py-uv-locked")
    assert machine.run("SUP007").status is Status.PASS


def test_fail_every_source(machine):
    machine.fixture("npm-lock-http")
    machine.fixture("cargo-config-wrapper")
    machine.fixture("py-uv-git-branch")
    machine.ws("r/requirements.txt", "--extra-index-url https://x.invalid/simple\n"
               "--trusted-host x.invalid\nflask==3.0.0\n")
    machine.ws("poetry/pyproject.toml", '[[tool.poetry.source]]\nname = "corp"\n'
               'url = "https://x.invalid"\n')
    machine.environ["PIP_EXTRA_INDEX_URL"] = "https://x.invalid/simple"
    out = machine.run("SUP007")
    assert out.status is Status.FAIL
    assert {(e.path, e.line) for e in out.evidence} == {
        (".npmrc", 1), (".cargo/config.toml", 5), ("pyproject.toml", 9),
        ("r/requirements.txt", 1), ("r/requirements.txt", 2), ("poetry/pyproject.toml", 1),
        (None, None)}
    assert "environment variable PIP_EXTRA_INDEX_URL is set" in [e.detail for e in out.evidence]


def test_unknown(machine):
    machine.ws(".yarnrc.yml", "npmRegistryServer: [unclosed\n")
    assert machine.run("SUP007").status is Status.UNKNOWN


def test_pass_the_default_index_named_explicitly(machine):
    """Real projects spell PyPI out: `--index-url https://pypi.org/simple` in a
    requirements file, a uv index whose url is PyPI's."""
    machine.ws("requirements.txt", "--index-url https://pypi.org/simple/\nrequests==2.32.3\n")
    machine.ws("pyproject.toml", '[project]\nname = "x"\nversion = "1"\n'
               '[[tool.uv.index]]\nname = "pypi"\nurl = "https://pypi.org/simple"\n')
    assert machine.run("SUP007").status is Status.PASS


def test_fail_an_index_beside_pypi_still_counts(machine):
    machine.ws("requirements.txt", "--index-url https://pypi.org/simple\n"
               "--extra-index-url https://pypi.example.invalid/simple\nx==1\n")
    out = machine.run("SUP007")
    assert out.status is Status.FAIL
    assert [e.line for e in out.evidence] == [2]


def test_pass_an_explicit_uv_index_and_poetrys_own_pypi_source(machine):
    """polars pins torch to PyTorch's index with `explicit = true` (uv then asks it for
    torch alone); Poetry projects set PyPI's priority with a source named PyPI."""
    machine.ws("pyproject.toml", '[project]\nname = "x"\nversion = "1"\n'
               'dependencies = ["torch"]\n'
               '[[tool.uv.index]]\nname = "pytorch"\n'
               'url = "https://download.pytorch.org/whl/cpu"\nexplicit = true\n'
               '[tool.uv.sources]\ntorch = { index = "pytorch" }\n')
    machine.ws("p/pyproject.toml", '[tool.poetry]\nname = "p"\n'
               '[[tool.poetry.source]]\nname = "PyPI"\npriority = "primary"\n')
    assert machine.run("SUP007").status is Status.PASS


def test_fail_an_index_that_is_not_explicit_or_a_pypi_named_elsewhere(machine):
    machine.ws("pyproject.toml", '[project]\nname = "x"\nversion = "1"\n'
               '[[tool.uv.index]]\nname = "pytorch"\n'
               'url = "https://download.pytorch.org/whl/cpu"\nexplicit = "yes"\n')
    machine.ws("p/pyproject.toml", '[tool.poetry]\nname = "p"\n'
               '[[tool.poetry.source]]\nname = "PyPI"\nurl = "https://x.invalid/simple"\n')
    out = machine.run("SUP007")
    assert out.status is Status.FAIL
    assert {e.path for e in out.evidence} == {"pyproject.toml", "p/pyproject.toml"}


def test_the_registry_of_the_projects_own_scope_with_a_hashed_lock_is_advice(machine):
    """gemini-cli: `@google:registry=` names Google's publish proxy for the project's own
    `@google/*` packages, and package-lock.json pins every `@google` dependency with its
    sha512: advice. A scope the project only consumes, a scoped dependency the lockfile
    does not hold, or an entry without its hash, still fail."""
    import json

    def lock(with_hash: bool = True) -> str:
        entry = {"version": "1.30.0",
                 "resolved": "https://registry.npmjs.org/@acme/genai/-/genai-1.30.0.tgz"}
        if with_hash:
            entry["integrity"] = "sha512-3MRcgczBFbUat1wIlZoLJ0vCCfXgm7Qxjh59cZi2X08Rg=="
        return json.dumps({"name": "root", "lockfileVersion": 3, "packages": {
            "": {"name": "root", "workspaces": ["packages/*"]},
            "node_modules/@acme/cli-core": {"resolved": "packages/core", "link": True},
            "packages/core": {"name": "@acme/cli-core", "version": "1.0.0"},
            "node_modules/@acme/genai": entry}}, indent=2)
    machine.ws("package.json", json.dumps({"name": "root", "workspaces": ["packages/*"]}))
    machine.ws("packages/core/package.json", json.dumps(
        {"name": "@acme/cli-core", "dependencies": {"@acme/genai": "1.30.0"}}))
    machine.ws("package-lock.json", lock())
    machine.ws(".npmrc", "@acme:registry=https://publish-proxy.acme.example\n")
    out = machine.run("SUP007")
    assert out.status is Status.FAIL and out.advisory, out
    machine.ws(".npmrc", "@other:registry=https://publish-proxy.acme.example\n")
    assert not machine.run("SUP007").advisory  # a scope it does not publish under
    machine.ws(".npmrc", "@acme:registry=https://publish-proxy.acme.example\n")
    machine.ws("packages/core/package.json", json.dumps({"name": "@acme/cli-core",
               "dependencies": {"@acme/genai": "1.30.0", "@acme/new": "^1"}}))
    assert not machine.run("SUP007").advisory  # a dependency the lockfile does not hold
    machine.ws("packages/core/package.json", json.dumps(
        {"name": "@acme/cli-core", "dependencies": {"@acme/genai": "1.30.0"}}))
    machine.ws("package-lock.json", lock(with_hash=False))
    out = machine.run("SUP007")
    assert out.status is Status.FAIL and not out.advisory
