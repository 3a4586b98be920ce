from ztsa.model import Status


def test_pass(machine):
    machine.fixture("cargo-build-rs-cc")
    assert machine.run("SUP009").status is Status.PASS


def test_fail_build_rs_reads_ssh_through_dirs_home_dir(machine):
    machine.fixture("cargo-build-rs-ssh")
    out = machine.run("SUP009")
    assert out.status is Status.FAIL
    assert [(e.path, e.line) for e in out.evidence] == [("build.rs", 4), ("build.rs", 5)]
    assert "finds the home directory" in out.evidence[0].detail


def test_fail_proc_macro_and_vendored_crate(machine):
    machine.ws("macros/Cargo.toml", '[package]\nname = "derive-x"\nversion = "0.1.0"\n'
               "[lib]\nproc-macro = true\n")
    machine.ws("macros/src/lib.rs", 'fn f() { let t = std::env::var("CARGO_REGISTRY_TOKEN"); }\n')
    machine.ws("vendor/walker/build.rs", 'fn main() { for e in WalkDir::new("/") {} '
               'std::fs::read("../../secrets").ok(); }\n')
    out = machine.run("SUP009")
    assert {e.path for e in out.evidence} == {"macros/src/lib.rs", "vendor/walker/build.rs"}
    assert any("proc macro of derive-x" in e.detail for e in out.evidence)


def test_unknown(machine):
    machine.ws("Cargo.toml", '[package]\nname = "x"\nversion = "0.1.0"\nbuild = "gen.rs"\n')
    machine.ws("gen.rs", b"\xff\xfe not utf8")
    assert machine.run("SUP009").status is Status.UNKNOWN


def test_pass_relative_paths_inside_the_workspace_and_test_modules(machine):
    """biome: a build script reading ../../packages/... stays in the workspace; uv:
    crates/uv/tests/build/build.rs is a test module of crates/uv, not a build script."""
    pkg = '[package]\nname = "{}"\nversion = "0.1.0"\n'
    machine.ws("crates/biome_aria_metadata/Cargo.toml", pkg.format("biome_aria_metadata"))
    machine.ws("crates/biome_aria_metadata/build.rs",
               'const WAI_ARIA: &str = "../../packages/aria-data/wai-aria-1-3.json";\n'
               'fn main() { std::fs::read(WAI_ARIA).unwrap(); }\n')
    machine.ws("crates/uv/Cargo.toml", pkg.format("uv"))
    machine.ws("crates/uv/tests/build/build.rs",
               'fn f() { let p = std::env::current_dir()?.join("../../test/links/ok.whl");'
               ' dirs::home_dir(); }\n')
    assert machine.run("SUP009").status is Status.PASS
    machine.ws("crates/evil/Cargo.toml", pkg.format("evil"))
    machine.ws("crates/evil/build.rs", 'fn main() { std::fs::read("../../../../etc/x"); }\n')
    out = machine.run("SUP009")
    assert out.status is Status.FAIL
    assert [e.path for e in out.evidence] == ["crates/evil/build.rs"]
