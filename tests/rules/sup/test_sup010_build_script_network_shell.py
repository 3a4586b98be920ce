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


def test_fail_git_modules_path_build_deps_and_compile_time_databases(machine):
    """A build script that clones with git, a network call in a module it compiles in
    (build/net.rs) and in a path build-dependency's code, and sqlx's query! macros
    with DATABASE_URL in a parent .env, which connect while compiling."""
    machine.ws("Cargo.toml", '[workspace]\nmembers = ["app", "helper", "db"]\n')
    machine.ws("app/Cargo.toml", '[package]\nname = "app"\nbuild = "build/main.rs"\n'
               '[build-dependencies]\nhelper = { path = "../helper" }\n')
    machine.ws("app/build/main.rs", "mod net;\nfn main() {\n"
               '    std::process::Command::new("git").args(["clone", "https://x.example/g"]);\n'
               "    net::fetch();\n}\n")
    machine.ws("app/build/net.rs",
               "pub fn fetch() { let _ = std::net::TcpStream::connect(\"x:80\"); }\n")
    machine.ws("helper/Cargo.toml", '[package]\nname = "helper"\n')
    machine.ws("helper/src/lib.rs", "pub fn get() { let _ = reqwest::blocking::get(\"u\"); }\n")
    machine.ws("db/Cargo.toml", '[package]\nname = "db"\n[dependencies]\nsqlx = "0.8"\n')
    machine.ws("db/src/lib.rs", "pub async fn f() {\n"
               "    sqlx::query!(\"SELECT 1\").fetch_one(&p).await;\n}\n")
    machine.ws(".env", "DATABASE_URL=postgres://localhost/dev\n")
    out = machine.run("SUP010")
    assert out.status is Status.FAIL
    assert sorted(e.path for e in out.evidence) == [
        "app/build/main.rs", "app/build/net.rs", "db/src/lib.rs", "helper/src/lib.rs"]
    assert any("runs git over the network" in e.detail for e in out.evidence)
    assert any("connects to DATABASE_URL from .env while compiling" in e.detail
               for e in out.evidence)


def test_pass_git_for_a_version_stamp(machine):
    """ruff and uv: `git log -1` and `rev-parse` in build.rs read the checkout only."""
    machine.ws("Cargo.toml", '[package]\nname = "x"\n')
    machine.ws("build.rs", 'fn main() {\n    let out = std::process::Command::new("git")\n'
               '        .arg("log").arg("-1").output();\n'
               '    let _ = Command::new("git").args(["rev-parse", "HEAD"]).output();\n}\n')
    assert machine.run("SUP010").status is Status.PASS


def test_pass_sqlx_offline(machine):
    machine.ws("Cargo.toml", '[package]\nname = "db"\n[dependencies]\nsqlx = "0.8"\n')
    machine.ws("src/lib.rs", 'fn f() { sqlx::query!("SELECT 1"); }\n')
    machine.ws(".env", "DATABASE_URL=postgres://localhost/dev\nSQLX_OFFLINE=true\n")
    assert machine.run("SUP010").status is Status.PASS


def test_fail_git_over_the_network_through_a_wrapper(machine):
    """helix's build: a path build-dependency whose `fn git(dir, args)` makes the
    Command, called as `git(dir, ["fetch", ...])` in another file. A wrapper used only
    for `rev-parse` reads the checkout: it passes."""
    machine.ws("Cargo.toml", '[package]\nname = "app"\nversion = "0.1.0"\n'
               '[build-dependencies]\nloader = { path = "loader" }\n')
    machine.ws("build.rs", "fn main() { loader::build_grammars(); }\n")
    machine.ws("loader/Cargo.toml", '[package]\nname = "loader"\nversion = "0.1.0"\n')
    machine.ws("loader/src/lib.rs", "mod git;\npub fn build_grammars() { git::sync(); }\n")
    machine.ws("loader/src/git.rs",
               "use std::process::Command;\n"
               "fn git(dir: &str, args: &[&str]) { Command::new(\"git\").args(args)"
               ".current_dir(dir).output().unwrap(); }\n"
               "pub fn sync() { git(\"grammars\", &[\"fetch\", \"--depth\", \"1\"]); }\n")
    out = machine.run("SUP010")
    assert out.status is Status.FAIL, out
    assert [(e.path, e.line) for e in out.evidence] == [("loader/src/git.rs", 3)], out
    machine.ws("loader/src/git.rs",
               "use std::process::Command;\n"
               "fn git(args: &[&str]) { Command::new(\"git\").args(args).output().unwrap(); }\n"
               "pub fn sync() { git(&[\"rev-parse\", \"HEAD\"]); }\n")
    assert machine.run("SUP010").status is Status.PASS


def test_a_fetch_of_pinned_revisions_or_an_opt_in_download_is_advice(machine):
    """helix: the build fetches each grammar at the `rev` languages.toml names, every one
    a full commit: pinned as a lockfile pins, advisory. amazon-q: build.rs curls a data
    file only `if std::env::var("FETCH_FEED").is_ok()`: the ordinary build never does,
    advisory. A revision that is a branch, a clone of a default branch, or the same
    download guarded the other way round (`.is_err()`: on unless switched off) gate."""
    rev = "0123456789abcdef0123456789abcdef01234567"
    machine.ws("Cargo.toml", '[package]\nname = "app"\nversion = "0.1.0"\n'
               '[build-dependencies]\nloader = { path = "loader" }\n')
    machine.ws("build.rs", "fn main() { loader::fetch_grammars(); }\n")
    machine.ws("languages.toml", f'[[grammar]]\nname = "c"\nsource = {{ git = '
               f'"https://x.invalid/ts-c", rev = "{rev}" }}\n')
    machine.ws("loader/Cargo.toml", '[package]\nname = "loader"\nversion = "0.1.0"\n')
    git_rs = ("use std::process::Command;\n"
              "fn git(dir: &str, args: &[&str]) { Command::new(\"git\").args(args)"
              ".current_dir(dir).output().unwrap(); }\n"
              "pub fn fetch(dir: &str, rev: &str) {\n"
              "    git(dir, &[\"fetch\", \"--depth\", \"1\", \"origin\", rev]);\n"
              "    git(dir, &[\"checkout\", rev]);\n}\n")
    machine.ws("loader/src/lib.rs", "mod git;\npub fn fetch_grammars() {}\n")
    machine.ws("loader/src/git.rs", git_rs)
    out = machine.run("SUP010")
    assert out.status is Status.FAIL and out.advisory, out
    assert "pins" in out.evidence[0].detail
    machine.ws("languages.toml", '[[grammar]]\nname = "c"\nsource = { git = '
               '"https://x.invalid/ts-c", rev = "main" }\n')
    assert _gates(machine.run("SUP010"))
    machine.ws("languages.toml", f'[[grammar]]\nname = "c"\nsource = {{ git = '
               f'"https://x.invalid/ts-c", rev = "{rev}" }}\n')
    machine.ws("loader/src/git.rs", git_rs.replace('"fetch", "--depth", "1", "origin", rev',
                                                   '"clone", "https://x.invalid/ts-c"'))
    assert _gates(machine.run("SUP010"))
    (machine.workspace / "loader/src/git.rs").unlink()
    machine.ws("loader/src/lib.rs", "pub fn fetch_grammars() {}\n")
    feed = ("fn main() {\n    if std::env::var(\"FETCH_FEED\").is_ok() {\n"
            "        download_feed();\n    }\n}\n\nfn download_feed() {\n"
            "    let out = std::process::Command::new(\"curl\")\n"
            "        .args([\"-fsSL\", \"-o\", \"feed.json\", \"https://x.invalid/feed.json\"])"
            ".output();\n}\n")
    machine.ws("build.rs", feed)
    out = machine.run("SUP010")
    assert out.status is Status.FAIL and out.advisory, out
    assert "only when FETCH_FEED is set" in out.evidence[0].detail
    machine.ws("build.rs", feed.replace(".is_ok()", ".is_err()"))
    assert _gates(machine.run("SUP010"))
    machine.ws("build.rs", feed.replace("fn main() {\n", "fn main() {\n    download_feed();\n"))
    assert _gates(machine.run("SUP010"))


def _gates(out):  # type: ignore[no-untyped-def]
    return out.status is Status.FAIL and not out.advisory
