from ztsa.model import Status


def test_pass(machine):
    machine.fixture("py-hatchling")
    machine.ws("legacy/pyproject.toml", "[tool.black]\nline-length = 100\n")
    machine.ws("s/pyproject.toml", '[build-system]\nrequires = ["setuptools>=68"]\n'
               'build-backend = "setuptools.build_meta"\n')
    assert machine.run("SUP014").status is Status.PASS


def test_fail(machine):
    machine.fixture("py-backend-path")
    machine.ws("u/pyproject.toml", '[build-system]\nrequires = ["mybuild @ '
               'https://x.invalid/mybuild.whl"]\nbuild-backend = "mybuild.api"\n')
    out = machine.run("SUP014")
    assert out.status is Status.FAIL
    assert {(e.path, e.line) for e in out.evidence} == {
        ("pyproject.toml", 4), ("pyproject.toml", 3), ("u/pyproject.toml", 2),
        ("u/pyproject.toml", 3)}


def test_unknown(machine):
    machine.ws("pyproject.toml", "[build-system\n")
    assert machine.run("SUP014").status is Status.UNKNOWN


def test_pass_uv_build_astrals_backend(machine):
    """fastmcp, ruff, uv: uv's own PEP 517 backend, from the index."""
    machine.ws("pyproject.toml", '[project]\nname = "p"\nversion = "1"\n'
                                 '[build-system]\nrequires = ["uv_build>=0.8.0,<0.9"]\n'
                                 'build-backend = "uv_build"\n')
    assert machine.run("SUP014").status is Status.PASS


def test_pass_older_spellings_and_other_published_backends(machine):
    for backend in ("pdm.pep517.api", "poetry.masonry.api", "flit.buildapi", "sipbuild.api",
                    "pbr.build", "py_build_cmake.build"):
        machine.ws("pyproject.toml", '[project]\nname = "p"\nversion = "1"\n'
                   f'[build-system]\nbuild-backend = "{backend}"\n')
        assert machine.run("SUP014").status is Status.PASS, backend
    machine.ws("pyproject.toml", '[build-system]\nbuild-backend = "poetryx.api"\n')
    assert machine.run("SUP014").status is Status.FAIL
