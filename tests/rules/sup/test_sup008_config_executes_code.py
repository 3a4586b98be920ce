from ztsa.model import Status


def test_pass(machine):
    machine.fixture("yarn-berry-plain")
    machine.ws(".npmrc", "save-exact=true\nfund=false\n")
    assert machine.run("SUP008").status is Status.PASS


def test_fail(machine):
    machine.fixture("yarn-berry-yarnpath")
    machine.fixture("cargo-config-wrapper")
    machine.fixture("pnpm-requires-build")
    machine.ws(".cargo/config.toml", '[target.x86_64-unknown-linux-gnu]\nrunner = "./r.sh"\n'
               '[env]\nRUSTFLAGS = "-C x"\n', )
    machine.ws(".npmrc", "node-options=--require ./hook.js\n")
    out = machine.run("SUP008")
    assert out.status is Status.FAIL
    details = sorted(e.detail.split(" ")[0] for e in out.evidence)
    assert details == [".pnpmfile.cjs", "[env]", "[target.x86_64-unknown-linux-gnu]",
                       "node-options", "plugins", "yarnPath"]


def test_unknown(machine):
    machine.ws(".cargo/config.toml", "[build\n")
    assert machine.run("SUP008").status is Status.UNKNOWN


def test_pass_plain_env_values_and_system_cross_linkers(machine):
    """tauri and tokenizers: `[env] __TAURI_WORKSPACE__ = "true"`, and a cross-target
    linker that is the system's toolchain by name; a linker path into the checkout and
    an [env] that loads code still fail."""
    machine.ws(".cargo/config.toml",
               '[env]\n__TAURI_WORKSPACE__ = "true"\n'
               '[target.aarch64-unknown-linux-gnu]\nlinker = "aarch64-linux-gnu-gcc"\n'
               '[target.armv7-unknown-linux-gnueabihf]\nrunner = "qemu-arm -L /usr/arm"\n')
    assert machine.run("SUP008").status is Status.PASS
    machine.ws("sub/.cargo/config.toml",
               '[env]\nLD_PRELOAD = { value = "tools/hook.so", relative = true }\n'
               '[target.x86_64-unknown-linux-gnu]\nlinker = "tools/ld.sh"\n')
    out = machine.run("SUP008")
    assert out.status is Status.FAIL
    assert sorted(e.detail.split(" =")[0] for e in out.evidence) == [
        "[env] sets LD_PRELOAD", "[target.x86_64-unknown-linux-gnu] linker"]


def test_pass_a_yarn_path_that_is_a_released_yarn(machine, monkeypatch):
    """babel and jest vendor Yarn 4 (`yarnPath: .yarn/releases/yarn-4.17.0.cjs`) as `yarn
    set version` writes it: a released Yarn, byte for byte, is no repository code. The
    same name with other bytes, or a file outside the workspace, still fails."""
    import hashlib

    from ztsa.manifests import yarn_releases

    # babel's .yarn/releases/yarn-4.17.0.cjs is @yarnpkg/cli-dist 4.17.0's bin/yarn.js
    assert yarn_releases.RELEASES[
        "ea2af31ee4a6535e8559e3e1a6e34cb716112c9bed86edea71c3a5b36d472265"] == "4.17.0"
    release = b"#!/usr/bin/env node\n/* a released yarn, for the test */\n"
    monkeypatch.setitem(yarn_releases.RELEASES, hashlib.sha256(release).hexdigest(), "9.9.9")
    machine.ws(".yarnrc.yml", "yarnPath: .yarn/releases/yarn-9.9.9.cjs\n")
    machine.ws(".yarn/releases/yarn-9.9.9.cjs", release)
    assert machine.run("SUP008").status is Status.PASS
    machine.ws(".yarn/releases/yarn-9.9.9.cjs", release + b"require('./steal')\n")
    out = machine.run("SUP008")
    assert out.status is Status.FAIL and out.evidence[0].detail.startswith("yarnPath"), out
    machine.ws(".yarnrc.yml", "yarnPath: ../elsewhere/yarn.cjs\n")
    assert machine.run("SUP008").status is Status.FAIL


def test_fail_yarn_settings_in_the_old_syntax(machine):
    """Yarn reads a `.yarnrc.yml` headed `# yarn lockfile v1` with its old parser, where
    YAML sees one string: `yarnPath ".yarn/evil.cjs"` ran the file and SUP008 passed
    (found by helper-21, confirmed with Yarn 4.17.0). Yarn 1's `.yarnrc` `yarn-path`
    runs its file the same way."""
    machine.ws(".yarnrc.yml", '# yarn lockfile v1\nyarnPath ".yarn/evil.cjs"\n'
               'plugins ".yarn/p.cjs"\n')
    out = machine.run("SUP008")
    assert out.status is Status.FAIL, out
    assert sorted(e.detail.split(" ")[0] for e in out.evidence) == ["plugins", "yarnPath"]
    (machine.workspace / ".yarnrc.yml").unlink()
    machine.ws(".yarnrc", '# comment\nyarn-path ".yarn/releases/yarn-1.22.19.cjs"\n')
    out = machine.run("SUP008")
    assert out.status is Status.FAIL and out.evidence[0].detail.startswith("yarn-path"), out
    machine.ws(".yarnrc", 'registry "https://registry.yarnpkg.com"\n')
    assert machine.run("SUP008").status is Status.PASS


def test_node_options_that_load_nothing_pass_and_code_loading_ones_fail(machine):
    """trpc: `.npmrc` `node-options = --no-warnings # comment` quiets warnings (npm strips
    the inline comment); memory limits and source maps load nothing either. A flag that
    loads a file, opens a debugger port, reads an OpenSSL config or one ztsa does not
    know still fails."""
    machine.ws(".npmrc", "node-options = --no-warnings --max-old-space-size=8192 "
               "--enable-source-maps # deprecation noise\n")
    assert machine.run("SUP008").status is Status.PASS
    for bad in ("--no-warnings --import ./register.mjs", "--inspect=0.0.0.0:9229",
                "--openssl-config=./openssl.cnf", "--no-warnings --frobnicate"):
        machine.ws(".npmrc", f"node-options = {bad}\n")
        out = machine.run("SUP008")
        assert out.status is Status.FAIL and not out.advisory, (bad, out)


def test_fail_a_cargo_runner_or_linker_that_is_any_runner(machine):
    """A `[target.*] runner` that is Deno, Bun, npx or make runs whatever its arguments
    (a file of the checkout) say, as a shell does: `cargo test` then runs the repository's
    TypeScript outside any review. The old rule's list of shells and interpreters missed
    them; the catalogue's `system-program` predicate judges by the one vocabulary of
    runners. A system toolchain by name still passes."""
    machine.ws(".cargo/config.toml", '[target.x86_64-unknown-linux-gnu]\n'
               'runner = ["deno", "run", "-A", "tools/r.ts"]\n'
               '[target.aarch64-unknown-linux-gnu]\nlinker = "npx"\n')
    out = machine.run("SUP008")
    assert out.status is Status.FAIL and not out.advisory, out
    assert [(e.detail.split(" =")[0], e.line) for e in out.evidence] == [
        ("[target.x86_64-unknown-linux-gnu] runner", 2),
        ("[target.aarch64-unknown-linux-gnu] linker", 4)], out.evidence
    machine.ws(".cargo/config.toml", '[target.x86_64-unknown-linux-gnu]\n'
               'runner = ["wasmtime", "--dir=."]\nlinker = "clang"\n')
    assert machine.run("SUP008").status is Status.PASS
