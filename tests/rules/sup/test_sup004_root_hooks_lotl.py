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


def test_fail_a_package_runner_fetching_an_unpinned_package(machine):
    """vite and vue: `"preinstall": "npx only-allow pnpm"` runs whatever the registry
    serves as only-allow that day; lefthook's `npx --no-install` runs what is installed,
    and a pinned version is a version."""
    machine.ws("package.json", json.dumps({"scripts": {"preinstall": "npx only-allow pnpm"}}))
    machine.ws("a/package.json", json.dumps({"scripts": {"prepare": "pnpm dlx @acme/setup"}}))
    machine.ws("ok/package.json", json.dumps({"scripts": {
        "prepare": "npx --no-install lefthook install",
        "postinstall": "npx only-allow@1.2.1 pnpm && bunx @scope/tool@2.0.0"}}))
    out = machine.run("SUP004")
    assert out.status is Status.FAIL
    assert sorted((e.path, e.detail.split(",")[0]) for e in out.evidence) == [
        ("a/package.json", "prepare runs pnpm dlx @acme/setup"),
        ("package.json", "preinstall runs npx only-allow")]
