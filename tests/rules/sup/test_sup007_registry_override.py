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
