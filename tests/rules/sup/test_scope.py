"""Projects no root workspace lists, under examples, fixtures, docs or templates
(the corpus's largest group of false alarms): still reported, as advisory."""

import json

from ztsa.model import Status


def test_example_and_fixture_requirements_are_advisory(machine):
    """flask, python-sdk: examples/**/requirements.txt beside a locked root."""
    machine.ws("pyproject.toml", '[project]\nname = "app"\nversion = "1"\n')
    machine.ws("uv.lock", "version = 1\n")
    machine.ws("examples/tutorial/requirements.txt", "flask\n")
    machine.ws("tests/fixtures/proj/requirements.txt", "requests>=2\n")
    out = machine.run("SUP012")
    assert out.status is Status.FAIL and out.advisory, out
    assert all("advisory" in e.detail for e in out.evidence)
    machine.ws("requirements.txt", "flask\n")  # the root's own: gating again
    out = machine.run("SUP012")
    assert out.status is Status.FAIL and not out.advisory


def test_a_workspace_member_under_examples_is_in_play(machine):
    """npm workspaces that list examples/* install them with the root."""
    machine.ws("package.json", json.dumps({"name": "root", "workspaces": ["examples/*"]}))
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {}}))
    machine.ws("examples/demo/package.json", json.dumps({
        "name": "demo", "scripts": {"postinstall": "curl -s https://x.invalid/p"}}))
    out = machine.run("SUP004")
    assert out.status is Status.FAIL and not out.advisory


def test_templates_without_a_lockfile_and_broken_fixture_manifests_are_advisory(machine):
    """workers-sdk's create-cloudflare templates; babel's deliberately invalid
    package.json fixtures (unknown before)."""
    machine.ws("package.json", json.dumps({"name": "root"}))
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {}}))
    machine.ws("packages/create/templates/hello/py/pyproject.toml",
               '[project]\nname = "hello"\nversion = "0"\ndependencies = ["httpx"]\n')
    out = machine.run("SUP001")
    assert out.status is Status.FAIL and out.advisory, out
    machine.ws("packages/core/test/fixtures/invalid-pkg-json/package.json", '{ "babel": { foo')
    out = machine.run("SUP006")
    assert out.status is Status.FAIL and out.advisory, out
    assert "could not read" in out.evidence[0].detail


def test_a_workspace_lists_only_its_own_ecosystems_projects(machine):
    """vercel/ai's pnpm workspace lists examples/*: pnpm installs examples/next-fastapi's
    package.json, never its requirements.txt; python-sdk's uv members under examples/
    are in play, a requirements.txt deeper inside one is not what `uv sync` installs."""
    machine.ws("package.json", json.dumps({"name": "root"}))
    machine.ws("pnpm-workspace.yaml", "packages:\n  - examples/*\n")
    machine.ws("pnpm-lock.yaml", "lockfileVersion: '9.0'\n")
    machine.ws("examples/next-fastapi/requirements.txt", "fastapi==0.1\n")
    out = machine.run("SUP012")
    assert out.status is Status.FAIL and out.advisory, out
    machine.ws("pyproject.toml", '[project]\nname = "sdk"\nversion = "1"\n'
               '[tool.uv.workspace]\nmembers = ["examples/clients/*"]\n')
    machine.ws("uv.lock", "version = 1\n")
    machine.ws("examples/clients/chat/pkg/requirements.txt", "mcp>=1\n")
    out = machine.run("SUP012")
    assert out.status is Status.FAIL and out.advisory, out
    machine.ws("examples/clients/chat/requirements.txt", "mcp>=1\n")  # the member's own
    out = machine.run("SUP012")
    assert out.status is Status.FAIL and not out.advisory, out
