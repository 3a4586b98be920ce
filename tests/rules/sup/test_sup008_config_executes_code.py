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
