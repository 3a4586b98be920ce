import json

import pytest

from ztsa.model import Status

INTEG = "sha512-" + "A" * 86 + "=="


def lock(**pkgs):
    return json.dumps({"lockfileVersion": 3, "packages": {
        "": {"name": "app"}, **{f"node_modules/{k}": v for k, v in pkgs.items()}}}, indent=2)


def test_pass_allowlisted_reports_source(machine):
    machine.fixture("npm-postinstall-benign")
    out = machine.run("SUP003")
    assert out.status is Status.PASS
    assert out.evidence[0].detail.startswith("node_modules/esbuild allowed by "
                                             "lavamoat.allowScripts (package.json:")


def test_fail_message_is_actionable(machine):
    machine.ws("package.json", json.dumps({"name": "app"}))
    machine.ws("package-lock.json", lock(esbuild={"version": "0.21.5", "integrity": INTEG,
                                                  "hasInstallScript": True}))
    out = machine.run("SUP003")
    assert out.status is Status.FAIL
    assert out.evidence[0].detail == (
        "node_modules/esbuild (package-lock.json:7) has an install script and is not "
        'allowlisted; allow it with "lavamoat": {"allowScripts": {"esbuild": true}} '
        "in package.json")


def test_ignore_scripts_and_yarn_enable_scripts_false(machine):
    machine.ws("package-lock.json", lock(x={"version": "1", "hasInstallScript": True}))
    machine.ws(".npmrc", "ignore-scripts=true\n")
    machine.ws("y/yarn.lock", "# yarn lockfile v1\n")
    machine.ws("y/.yarnrc.yml", "enableScripts: false\n")
    assert machine.run("SUP003").status is Status.PASS


@pytest.mark.parametrize(("npmrc", "status"), [
    ("ignore-scripts\n", Status.PASS),  # a bare key is true to npm's ini
    ('ignore-scripts = "true"\n', Status.PASS),
    ("ignore-scripts=true ; scripts are built by CI\n", Status.PASS),
    ("[x]\nignore-scripts=true\n", Status.FAIL),  # section x's, not npm's
    ("registry=https://r.test/\n[x]\nignore-scripts=true\n", Status.FAIL),
    ("ignore-scripts=true\nignore-scripts=false\n", Status.FAIL),  # the last one counts
    ("ignore-scripts=truely\n", Status.FAIL),
])
def test_ignore_scripts_as_npm_reads_the_npmrc(machine, npmrc, status):
    machine.ws("package-lock.json", lock(x={"version": "1", "hasInstallScript": True}))
    machine.ws(".npmrc", npmrc)
    assert machine.run("SUP003").status is status


def test_pnpm_v9_decided_by_pnpm_10_default(machine):
    machine.ws("package.json", json.dumps({"name": "p", "packageManager": "pnpm@10.2.0"}))
    machine.ws("pnpm-lock.yaml", "lockfileVersion: '9.0'\npackages: {}\n")
    assert machine.run("SUP003").status is Status.PASS


def test_fail_installed_binding_gyp(machine):
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 1, "dependencies": {}}))
    machine.ws("node_modules/@acme/native/package.json", json.dumps({"name": "@acme/native"}))
    machine.ws("node_modules/@acme/native/binding.gyp", "{}")
    out = machine.run("SUP003")
    assert out.status is Status.FAIL and "node_modules/@acme/native" in out.evidence[0].detail


def test_unknown_lockfile_v1_without_node_modules(machine):
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 1, "dependencies": {}}))
    out = machine.run("SUP003")
    assert out.status is Status.UNKNOWN and "does not record install scripts" in out.message


def test_pass_an_empty_lockfile_of_a_project_that_declares_nothing(machine):
    """A tooling root's lockfile with no package in it (npm v1, Yarn classic, a Berry
    lockfile holding only the workspace itself, pnpm): an install installs nothing. A
    dependency declared beside an empty lockfile is a stale lockfile: still unknown."""
    berry = ('__metadata:\n  version: 8\n  cacheKey: 10c0\n\n"x@workspace:.":\n'
             '  version: 0.0.0-use.local\n  resolution: "x@workspace:."\n'
             '  languageName: unknown\n  linkType: soft\n')
    for name, text in (("package-lock.json", json.dumps({"lockfileVersion": 1,
                                                          "dependencies": {}})),
                       ("yarn.lock", "# yarn lockfile v1\n\n"), ("yarn.lock", berry),
                       ("pnpm-lock.yaml", "lockfileVersion: '9.0'\n")):
        for old in ("package-lock.json", "yarn.lock", "pnpm-lock.yaml"):
            if (machine.workspace / old).exists():
                (machine.workspace / old).unlink()
        machine.ws("package.json", json.dumps({"name": "x", "scripts": {"fmt": "prettier"}}))
        machine.ws(name, text)
        out = machine.run("SUP003")
        assert out.status is Status.PASS, (name, text[:30], out)
        machine.ws("package.json", json.dumps({"name": "x", "devDependencies": {"a": "1"}}))
        out = machine.run("SUP003")
        assert out.status is Status.UNKNOWN, (name, out)


def test_bun_runs_only_its_allowlists_whatever_the_lockfile(machine):
    """Bun (claude-code-action, hono, elysia): without trustedDependencies, Bun still runs
    no dependency script but its built-in default list's; a binary bun.lockb is the
    same."""
    machine.ws("package.json", json.dumps({"name": "app", "dependencies": {"esbuild": "1"}}))
    machine.ws("bun.lock", '{"lockfileVersion": 1, "workspaces": {"": {"name": "app"}},'
                           ' "packages": {}}')
    assert machine.run("SUP003").status is Status.PASS
    machine.ws("b/bun.lockb", b"\x00\x01bun-lockfile-format-v0\x00")
    assert machine.run("SUP003").status is Status.PASS


def test_nested_pnpm_lock_takes_the_nearest_package_manager_above(machine):
    """vercel/ai: packages/x/src/bridge/pnpm-lock.yaml (lockfile 9.0) beside a
    package.json without packageManager; the root names pnpm@10."""
    machine.ws("package.json", json.dumps({"name": "root", "packageManager": "pnpm@10.33.4"}))
    machine.ws("packages/x/src/bridge/package.json", json.dumps({
        "name": "bridge", "dependencies": {"ws": "8.18.0"}}))
    machine.ws("packages/x/src/bridge/pnpm-lock.yaml",
               "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      ws:\n"
               "        specifier: 8.18.0\n        version: 8.18.0\npackages:\n"
               f"  ws@8.18.0:\n    resolution: {{integrity: {INTEG}}}\n")
    assert machine.run("SUP003").status is Status.PASS
    machine.ws("package.json", json.dumps({"name": "root", "packageManager": "pnpm@9.1.0"}))
    out = machine.run("SUP003")
    assert out.status is Status.UNKNOWN and "bridge/pnpm-lock.yaml" in out.message


def test_pnpm_10_known_from_dev_engines(machine):
    """`devEngines.packageManager` names the manager as `packageManager` does: pnpm ^10
    builds no dependency unless allowed; a range that admits pnpm 9 (`>=9`) does not
    tell, nor does `<11`."""
    machine.ws("packages/x/pnpm-lock.yaml", "lockfileVersion: '9.0'\nimporters:\n  .:\n"
               "    dependencies:\n      ws:\n        specifier: 8.18.0\n"
               "        version: 8.18.0\npackages:\n  ws@8.18.0:\n"
               f"    resolution: {{integrity: {INTEG}}}\n")
    for version, status in (("^10.4.0", Status.PASS), ("10.x", Status.PASS),
                            (">=9", Status.UNKNOWN), ("<11", Status.UNKNOWN)):
        machine.ws("packages/x/package.json", json.dumps({
            "name": "x", "dependencies": {"ws": "8.18.0"},
            "devEngines": {"packageManager": {"name": "pnpm", "version": version}}}))
        assert machine.run("SUP003").status is status, version


def test_a_package_npm_never_installs_on_this_machine_runs_no_script(machine):
    """fsevents is darwin-only: npm skips it on Linux, and so does the rule. A package
    for this machine's os, cpu and libc still counts, and so does a negated list."""
    import platform

    from ztsa.manifests.npm import NODE_ARCH

    arch = NODE_ARCH.get(platform.machine().lower(), platform.machine().lower())
    other = "s390x" if arch != "s390x" else "x64"
    script = {"version": "1", "integrity": INTEG, "hasInstallScript": True}
    machine.ws("package.json", json.dumps({"name": "app"}))
    machine.ws("package-lock.json", lock(**{
        "fsevents": {**script, "os": ["darwin"], "optional": True},
        "win-only": {**script, "os": ["win32"]},
        "not-linux": {**script, "os": ["!linux"]},
        "other-cpu": {**script, "os": ["linux"], "cpu": [other]},
        "here": {**script, "os": ["linux"], "cpu": [arch]},
        "not-darwin": {**script, "os": ["!darwin"]},
        "anywhere": script,
    }))
    out = machine.run("SUP003")
    assert out.status is Status.FAIL
    flagged = {e.detail.split(" ", 1)[0] for e in out.evidence}
    assert flagged == {"node_modules/here", "node_modules/not-darwin", "node_modules/anywhere"}


def test_a_pnpm_package_for_another_platform_runs_no_script(machine):
    """fsevents in a pnpm 6-8 lockfile (`os: [darwin]`, `requiresBuild: true`): pnpm
    never installs it on Linux. One for this machine's os and cpu still counts."""
    import platform

    from ztsa.manifests.npm import NODE_ARCH

    arch = NODE_ARCH.get(platform.machine().lower(), platform.machine().lower())

    def entry(name: str, fields: str) -> str:
        return (f"  /{name}@1.0.0:\n    resolution: {{integrity: {INTEG}}}\n{fields}"
                "    requiresBuild: true\n    dev: false\n    optional: true\n\n")
    machine.ws("package.json", json.dumps({"name": "app"}))
    machine.ws("pnpm-lock.yaml", "lockfileVersion: '6.0'\n\npackages:\n\n"
               + entry("fsevents", "    os: [darwin]\n")
               + entry("other-cpu", f"    cpu: [{'s390x' if arch != 's390x' else 'x64'}]\n"))
    assert machine.run("SUP003").status is Status.PASS
    machine.ws("pnpm-lock.yaml", "lockfileVersion: '6.0'\n\npackages:\n\n"
               + entry("fsevents", "    os: [darwin]\n")
               + entry("here", f"    os: [linux]\n    cpu: [{arch}]\n"))
    out = machine.run("SUP003")
    assert out.status is Status.FAIL
    assert [e.detail.split(" ", 1)[0] for e in out.evidence] == ["node_modules/.pnpm/here@1.0.0"]


def test_pnpm_installed_tree_and_allow_all_builds(machine):
    """A pnpm 9 lockfile records no scripts: the installed tree decides, and pnpm keeps
    each package in node_modules/.pnpm/NAME@VERSION/node_modules (the top level holds
    links), which was never looked at: esbuild's postinstall passed. And pnpm 10 with
    `dangerouslyAllowAllBuilds: true` builds everything, as pnpm 9 did."""
    import os

    machine.ws("package.json", json.dumps({"name": "x", "dependencies": {"esbuild": "0.20.2"}}))
    machine.ws("pnpm-lock.yaml", "lockfileVersion: '9.0'\nimporters:\n  .:\n"
               "    dependencies:\n      esbuild:\n        specifier: 0.20.2\n"
               "        version: 0.20.2\npackages:\n  esbuild@0.20.2:\n"
               f"    resolution: {{integrity: {INTEG}}}\n")
    store = "node_modules/.pnpm/esbuild@0.20.2/node_modules/esbuild"
    machine.ws(f"{store}/package.json", json.dumps({
        "name": "esbuild", "version": "0.20.2", "scripts": {"postinstall": "node install.js"}}))
    os.symlink(".pnpm/esbuild@0.20.2/node_modules/esbuild",
               machine.workspace / "node_modules/esbuild")
    out = machine.run("SUP003")
    assert out.status is Status.FAIL and out.evidence[0].detail.startswith(store), out
    machine.ws("package.json", json.dumps({"name": "x", "packageManager": "pnpm@10.4.0",
                                           "dependencies": {"esbuild": "0.20.2"}}))
    assert machine.run("SUP003").status is Status.PASS  # pnpm 10 builds none of them
    machine.ws("pnpm-workspace.yaml", "dangerouslyAllowAllBuilds: true\n")
    out = machine.run("SUP003")
    assert out.status is Status.FAIL, out


YARN_LOCK = """# yarn lockfile v1


esbuild@^0.20.0:
  version "0.20.2"
  resolved "REG/esbuild/-/esbuild-0.20.2.tgz#abc"
  integrity sha512-x

left-pad@^1.3.0:
  version "1.3.0"
  resolved "REG/left-pad/-/left-pad-1.3.0.tgz#def"
  integrity sha512-y

"@scope/native@1.0.0":
  version "1.0.0"
  resolved "REG/@scope/native/-/native-1.0.0.tgz#ghi"
  integrity sha512-z
"""


def _registry(metadata: dict[str, dict]):
    """A fake npm registry on loopback: GET /NAME/VERSION -> the metadata given, and
    a count of what was asked."""
    import http.server
    import threading

    asked: list[str] = []

    class H(http.server.BaseHTTPRequestHandler):
        def do_GET(self):
            asked.append(self.path)
            from urllib.parse import unquote

            doc = metadata.get(unquote(self.path.strip("/")))
            body = json.dumps(doc).encode() if doc is not None else b"{}"
            self.send_response(200 if doc is not None else 404)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *a):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), H)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server, asked


def test_lookup_asks_the_registry_what_the_lockfile_does_not_record(machine):
    server, asked = _registry({
        "esbuild/0.20.2": {"name": "esbuild", "version": "0.20.2",
                           "scripts": {"postinstall": "node install.js"}},
        "left-pad/1.3.0": {"name": "left-pad", "version": "1.3.0", "scripts": {"test": "x"}},
        "@scope/native/1.0.0": {"name": "@scope/native", "version": "1.0.0",
                                "scripts": {"install": "node-gyp rebuild"}}})
    try:
        reg = f"http://127.0.0.1:{server.server_address[1]}"
        machine.ws("package.json", json.dumps({"name": "x", "dependencies": {
            "esbuild": "^0.20.0", "left-pad": "^1.3.0", "@scope/native": "1.0.0"}}))
        machine.ws("yarn.lock", YARN_LOCK.replace("REG", reg))
        machine.ws(".npmrc", f"registry={reg}/\n")
        without = machine.run("SUP003")
        assert without.status is Status.UNKNOWN and "--lookup" in without.message
        assert asked == []  # nothing is sent without the flag
        out = machine.run("SUP003", options={"lookup": True})
        assert out.status is Status.FAIL
        assert sorted(e.detail.split(" ")[0] for e in out.evidence) == [
            "@scope/native@1.0.0", "esbuild@0.20.2"]
        assert len(asked) == 3
    finally:
        server.shutdown()


def test_lookup_leaves_out_what_is_never_installed_here(machine):
    """A Yarn Berry lockfile's fsevents has `conditions: os=darwin`: Yarn never installs
    it on Linux, so --lookup neither asks about it nor reports its install script."""
    server, asked = _registry({
        "fsevents/2.3.3": {"name": "fsevents", "version": "2.3.3",
                           "scripts": {"install": "node-gyp rebuild"}},
        "esbuild/0.20.2": {"name": "esbuild", "version": "0.20.2",
                           "scripts": {"postinstall": "node install.js"}}})
    try:
        reg = f"http://127.0.0.1:{server.server_address[1]}"
        machine.ws("package.json", json.dumps({"name": "x", "dependencies": {
            "esbuild": "0.20.2", "fsevents": "2.3.3"}}))
        machine.ws("yarn.lock", "__metadata:\n  version: 8\n  cacheKey: 10c0\n\n"
                   '"esbuild@npm:0.20.2":\n  version: 0.20.2\n'
                   '  resolution: "esbuild@npm:0.20.2"\n  checksum: 10c0/aa\n'
                   "  languageName: node\n  linkType: hard\n\n"
                   '"fsevents@npm:2.3.3":\n  version: 2.3.3\n'
                   '  resolution: "fsevents@npm:2.3.3"\n  conditions: os=darwin\n'
                   "  languageName: node\n  linkType: hard\n")
        machine.ws(".yarnrc.yml", f'npmRegistryServer: "{reg}"\n')
        out = machine.run("SUP003", options={"lookup": True})
        assert out.status is Status.FAIL, out
        assert [e.detail.split(" ")[0] for e in out.evidence] == ["esbuild@0.20.2"]
        assert asked == ["/esbuild/0.20.2"]
    finally:
        server.shutdown()


def test_lookup_that_cannot_reach_the_registry_is_unknown(machine):
    machine.ws("package.json", json.dumps({"name": "x", "dependencies": {"left-pad": "^1"}}))
    machine.ws("yarn.lock", YARN_LOCK.replace("REG", "http://127.0.0.1:9"))
    machine.ws(".npmrc", "registry=http://127.0.0.1:9/\n")  # nothing listens there
    out = machine.run("SUP003", options={"lookup": True})
    assert out.status is Status.UNKNOWN and "registry metadata" in out.message
