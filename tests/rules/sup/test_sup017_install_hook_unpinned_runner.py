import json

from ztsa.model import Status


def test_pass(machine):
    machine.ws("package.json", json.dumps({"scripts": {
        "prepare": "npx --no-install lefthook install", "postinstall": "node scripts/x.js"}}))
    assert machine.run("SUP017").status is Status.PASS


def test_fail_a_package_runner_fetching_an_unpinned_package(machine):
    """vite and vue: `"preinstall": "npx only-allow pnpm"` runs whatever the registry
    serves as only-allow that day; lefthook's `npx --no-install` runs what is installed,
    and a pinned version is a version."""
    machine.ws("package.json", json.dumps({"scripts": {"preinstall": "npx only-allow pnpm"}}))
    machine.ws("a/package.json", json.dumps({"scripts": {"prepare": "pnpm dlx @acme/setup"}}))
    machine.ws("ok/package.json", json.dumps({"scripts": {
        "prepare": "npx --no-install lefthook install",
        "postinstall": "npx only-allow@1.2.1 pnpm && bunx @scope/tool@2.0.0"}}))
    out = machine.run("SUP017")
    assert out.status is Status.FAIL
    assert sorted((e.path, e.detail.split(",")[0]) for e in out.evidence) == [
        ("a/package.json", "prepare runs pnpm dlx @acme/setup"),
        ("package.json", "preinstall runs npx only-allow")]


def test_unknown(machine):
    machine.ws("package.json", "{ not json")
    assert machine.run("SUP017").status is Status.UNKNOWN


def test_fail_dist_tags_ranges_and_other_spellings(machine):
    import json

    machine.ws("package.json", json.dumps({"name": "x", "scripts": {
        "preinstall": "npx only-allow@latest pnpm", "postinstall": "bun x husky@^9",
        "prepare": "npm x tool@1 && npx ./local.js && npx --package=a@1.2.3 b"}}, indent=2))
    out = machine.run("SUP017")
    assert out.status is Status.FAIL
    runs = sorted(e.detail.split(",")[0] for e in out.evidence)
    assert runs == ["postinstall runs bun x husky@^9", "preinstall runs npx only-allow@latest",
                    "prepare runs npm x tool@1"]


def test_pass_exact_versions_local_files_and_package_options(machine):
    import json

    machine.ws("package.json", json.dumps({"name": "x", "scripts": {
        "preinstall": "npx only-allow@1.2.0 pnpm", "prepare": "npx ./scripts/setup.js",
        "postinstall": "npx --package=@scope/tool@2.0.1 tool"}}))
    assert machine.run("SUP017").status is Status.PASS


def test_fail_a_package_option_that_names_no_fixed_version(machine):
    """`npx --package=x@latest x` fetches x at its latest version: the option names what
    runs, and was skipped whatever it said."""
    import json

    for spec in ("create-thing@latest", "create-thing", "@scope/tool@^2"):
        machine.ws("package.json", json.dumps({"name": "x", "scripts": {
            "postinstall": f"npx --yes --package={spec} thing init"}}))
        out = machine.run("SUP017")
        assert out.status is Status.FAIL and f"--package={spec}" in out.evidence[0].detail, out


def test_fail_a_script_an_install_hook_runs_by_name(machine):
    """`"prepare": "npm run setup"` with `"setup": "npx husky-init"`: the runner is one
    name away from the hook (also through yarn's bare `yarn X` and a preX)."""
    import json

    machine.ws("package.json", json.dumps({"name": "x", "scripts": {
        "postinstall": "npm run setup && yarn build",
        "setup": "npx husky-init",
        "prebuild": "pnpm dlx only-allow pnpm",
        "build": "tsc",
        "unrelated": "npx cowsay"}}, indent=1))
    out = machine.run("SUP017")
    assert out.status is Status.FAIL
    assert sorted(e.detail.split(",")[0] for e in out.evidence) == [
        "postinstall -> prebuild runs pnpm dlx only-allow",
        "postinstall -> setup runs npx husky-init"]
    assert [e.line for e in out.evidence if "setup runs" in e.detail] == [5]


def test_a_bootstrap_file_the_hook_runs_is_judged_the_same_way(machine):
    """Roo-Code: `"preinstall": "node scripts/bootstrap.mjs"`, whose file installs pnpm
    with `npm install --no-save pnpm` (no version) when it is absent: SUP017's shape one
    file deeper. The same bootstrap installing a pinned pnpm, or running the lockfile's
    install, passes; one that requires a file that cannot be read is unknown."""
    import json

    machine.ws("package.json", json.dumps({"name": "x", "scripts": {
        "preinstall": "node scripts/bootstrap.mjs",
        "install": "node scripts/bootstrap.mjs"}}, indent=2))
    boot = ('import { spawnSync } from "child_process"\n'
            'const probe = spawnSync("pnpm", ["-v"], { shell: true })\n'
            "if (probe.status !== 0) {\n"
            '  spawnSync("npm", ["install", "--no-save", "pnpm@9.15.0"], { stdio: "inherit" })\n'
            "}\n"
            'spawnSync("pnpm", ["install", "--frozen-lockfile"], { stdio: "inherit" })\n')
    machine.ws("scripts/bootstrap.mjs", boot)
    assert machine.run("SUP017").status is Status.PASS
    machine.ws("scripts/bootstrap.mjs", boot.replace("pnpm@9.15.0", "pnpm"))
    out = machine.run("SUP017")
    assert out.status is Status.FAIL and not out.advisory
    assert [(e.path, e.line) for e in out.evidence] == [("scripts/bootstrap.mjs", 4)]
    assert "npm install pnpm" in out.evidence[0].detail
    machine.ws("scripts/bootstrap.mjs", boot + 'import "./helper.mjs"\n')
    machine.ws("scripts/helper.mjs", b"\xff\xfe not text")
    assert machine.run("SUP017").status is Status.UNKNOWN
