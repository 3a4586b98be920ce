"""The person's tool configuration inside the private home: a filtered, read-only copy
(ztsa.sandbox.toolconf) that the real tools use, and that holds no credential."""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

from test_positive_controls import cargo_for

TOKEN = "npm_" + "Zt5aT0k3n" * 4  # every planted secret holds it


def _home(files: dict[str, str]) -> Path:
    """A home the runner's user can read, with these files."""
    home = Path(tempfile.mkdtemp(prefix="ztsa-home-"))
    for rel, text in files.items():
        path = home / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    for d, _, names in os.walk(home):
        os.chmod(d, 0o755)
        for n in names:
            os.chmod(os.path.join(d, n), 0o644)
    return home


def _vendored_crate(ws: Path) -> None:
    """A binary crate whose dependency is found only through a source replacement."""
    (ws / "src").mkdir()
    (ws / "Cargo.toml").write_text('[package]\nname = "app"\nversion = "0.1.0"\n'
                                   'edition = "2021"\n\n[dependencies]\nleftpad = "1.0"\n')
    (ws / "src" / "main.rs").write_text('fn main() { println!("{}", leftpad::pad("7", 3)); }\n')
    dep = ws / "vendor" / "leftpad"
    (dep / "src").mkdir(parents=True)
    (dep / "Cargo.toml").write_text('[package]\nname = "leftpad"\nversion = "1.0.0"\n'
                                    'edition = "2021"\n')
    (dep / "src" / "lib.rs").write_text(
        'pub fn pad(s: &str, n: usize) -> String { format!("{:0>1$}", s, n) }\n')
    (dep / ".cargo-checksum.json").write_text('{"files":{},"package":"' + "0" * 64 + '"}')
    for d, _, names in os.walk(ws):
        os.chmod(d, 0o777)
        for n in names:
            os.chmod(os.path.join(d, n), 0o666)


def test_cargo_and_npm_see_the_configuration_without_its_secrets(run):
    ws = run.workspace
    home = _home({
        ".cargo/config.toml": (
            '[source.crates-io]\nreplace-with = "vendored"\n\n'
            f'[source.vendored]\ndirectory = "{ws / "vendor"}"\n\n'
            f'[registry]\ntoken = "{TOKEN}"\n\n'
            f'[registries.corp]\nindex = "https://ci:{TOKEN}@crates.corp.example/"\n'
            f'token = "{TOKEN}"\n\n'
            '[target.x86_64-unknown-linux-gnu]\nlinker = "/nonexistent/linker"\n'),
        ".npmrc": ("registry=https://registry.corp.example/npm/\n"
                   f"//registry.npmjs.org/:_authToken={TOKEN}\n"
                   f"_auth={TOKEN}\n"),
    })
    script = ('cat "$HOME/.cargo/config.toml"; echo ---; cat "$HOME/.npmrc"; echo ---; '
              '(echo "_auth=x" >> "$HOME/.npmrc") 2>/dev/null && echo writable || '
              f'echo read-only; grep -rl {TOKEN} "$HOME" {home} 2>/dev/null; echo end')
    proc, _ = run("sh", "-c", script, env={"HOME": str(home)})
    assert proc.returncode == 0, proc.stderr
    cargo, npm, tail = proc.stdout.split("---\n")
    written, rest = tail.split("\n", 1)
    assert cargo == ('[source.crates-io]\nreplace-with = "vendored"\n\n'
                     f'[source.vendored]\ndirectory = "{ws / "vendor"}"\n')
    assert npm == "registry=https://registry.corp.example/npm/\n"
    assert written == "read-only"
    assert rest == "end\n"  # no token anywhere the tree can read, the real home hidden
    assert TOKEN not in proc.stderr

    # --no-tool-config: nothing of it
    proc, _ = run("sh", "-c", 'ls -A "$HOME/.cargo" "$HOME/.npmrc"', extra=["--no-tool-config"],
                  env={"HOME": str(home)})
    assert proc.returncode != 0 and proc.stdout == "", (proc.stdout, proc.stderr)


def test_cargo_builds_through_the_source_replacement_in_the_home(run):
    """The issue's case: ~/.cargo/config.toml replaces crates.io with a vendored
    directory, and cargo inside uses it (it would go to index.crates.io otherwise)."""
    ws = run.workspace
    _vendored_crate(ws)
    home = _home({".cargo/config.toml": (
        f'[source.crates-io]\nreplace-with = "vendored"\n\n'
        f'[source.vendored]\ndirectory = "{ws / "vendor"}"\n')})
    cargo, env, mounts = cargo_for(run)
    proc, events = run("sh", "-c", f"{cargo} build -q && ./target/debug/app", extra=env,
                       mounts=mounts, env={"HOME": str(home)}, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "007"
    assert not [e for e in events if e["event"] in ("dns", "deny")
                and "crates.io" in str(e)], events
    shutil.rmtree(ws / "target", ignore_errors=True)
