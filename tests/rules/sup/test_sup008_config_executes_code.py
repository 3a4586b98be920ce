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
