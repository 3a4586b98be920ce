from ztsa.model import Status


def test_pass(machine):
    machine.fixture("py-pth-paths")
    assert machine.run("SUP015").status is Status.PASS


def test_fail(machine):
    machine.fixture("py-pth-import")
    machine.ws("lib/sitecustomize.py", "import os\n")
    out = machine.run("SUP015")
    assert out.status is Status.FAIL and not out.advisory
    assert {e.path for e in out.evidence} == {"src/zz_boot.pth", "lib/sitecustomize.py"}


def test_conftest_is_an_advisory_warning(machine):
    machine.ws("tests/conftest.py", "import pytest\n")
    out = machine.run("SUP015")
    assert out.status is Status.FAIL and out.advisory


def test_unknown(machine):
    machine.ws("x.pth", b"\xff\xfeimport os")
    assert machine.run("SUP015").status is Status.UNKNOWN
