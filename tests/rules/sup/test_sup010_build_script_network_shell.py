from ztsa.model import Status


def test_pass(machine):
    machine.fixture("cargo-build-rs-cc")
    assert machine.run("SUP010").status is Status.PASS


def test_fail(machine):
    machine.fixture("cargo-build-rs-ssh")
    machine.ws("net/Cargo.toml", '[package]\nname = "net"\nversion = "0.1.0"\n'
               '[build-dependencies]\nreqwest = "0.12"\ncc = "1"\n')
    machine.ws("net/build.rs", "fn main() { let s = std::net::TcpStream::connect(\"x:1\"); }\n")
    out = machine.run("SUP010")
    assert out.status is Status.FAIL
    assert {(e.path, e.line) for e in out.evidence} == {
        ("build.rs", 6), ("net/build.rs", 1), ("net/Cargo.toml", 5)}


def test_unknown(machine):
    machine.ws("Cargo.toml", "not toml [[[")
    assert machine.run("SUP010").status is Status.UNKNOWN
