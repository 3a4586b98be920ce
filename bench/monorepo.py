"""Generate the large monorepo that bench/preflight audits (issue: SUP speed).

A package-lock with 3,000 packages, a pnpm lock with 3,000, a Cargo.lock with 500 crates
and 100 crates with build.rs files, and 50 requirements files. Everything is benign and
well-formed, so the time measured is the time of a full, passing read."""

from __future__ import annotations

import json
import os

INTEG = "sha512-" + "A" * 86 + "=="
SHA256 = "a" * 64


def generate(root: str) -> None:
    def w(rel: str, text: str) -> None:
        p = os.path.join(root, rel)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        with open(p, "w") as f:
            f.write(text)

    # npm workspace with a 3,000-package lockfile
    packages = {"": {"name": "mono", "version": "1.0.0"}}
    for i in range(3000):
        packages[f"node_modules/pkg-{i}"] = {
            "version": f"1.{i % 50}.0",
            "resolved": f"https://registry.npmjs.org/pkg-{i}/-/pkg-{i}-1.{i % 50}.0.tgz",
            "integrity": INTEG, "dependencies": {f"pkg-{(i + 1) % 3000}": "^1.0.0"}}
    w("web/package.json", json.dumps({"name": "mono", "version": "1.0.0",
                                      "scripts": {"test": "jest"}}))
    w("web/package-lock.json", json.dumps({"name": "mono", "lockfileVersion": 3,
                                           "requires": True, "packages": packages}, indent=2))
    # pnpm project with 3,000 packages (lockfile v6 records requiresBuild)
    lines = ["lockfileVersion: '6.0'", "", "dependencies:", "  pkg-0:",
             "    specifier: ^1.0.0", "    version: 1.0.0", "", "packages:", ""]
    for i in range(3000):
        lines += [f"  /pkg-{i}@1.0.{i}:", f"    resolution: {{integrity: {INTEG}}}",
                  "    dependencies:", f"      pkg-{(i + 1) % 3000}: 1.0.0", "    dev: false", ""]
    w("app/package.json", json.dumps({"name": "app", "version": "1.0.0"}))
    w("app/pnpm-lock.yaml", "\n".join(lines))
    # Cargo workspace: 500 locked crates, 100 member crates with build scripts
    lock = ["version = 3", ""]
    for i in range(500):
        lock += ["[[package]]", f'name = "crate{i}"', f'version = "0.{i}.0"',
                 'source = "registry+https://github.com/rust-lang/crates.io-index"',
                 f'checksum = "{SHA256}"', ""]
    w("rust/Cargo.lock", "\n".join(lock))
    members = [f"crates/c{i}" for i in range(100)]
    w("rust/Cargo.toml", "[workspace]\nmembers = [" + ", ".join(f'"{m}"' for m in members)
      + "]\n")
    allow = ", ".join(f'{{ name = "c{i}" }}' for i in range(100))
    w("rust/deny.toml", f"[bans.build]\nallow-build-scripts = [{allow}]\n")
    for i, m in enumerate(members):
        w(f"rust/{m}/Cargo.toml", f'[package]\nname = "c{i}"\nversion = "0.1.0"\n'
          'edition = "2021"\n\n[build-dependencies]\ncc = "1"\n')
        w(f"rust/{m}/build.rs", 'fn main() {\n    cc::Build::new().file("src/x.c")'
          '.compile("x");\n    println!("cargo:rerun-if-changed=src/x.c");\n}\n')
        w(f"rust/{m}/src/lib.rs", "pub fn f() {}\n")
    # 50 hashed requirements files
    for i in range(50):
        reqs = "".join(f"pkg{i}-{j}=={j}.0 --hash=sha256:{SHA256}\n" for j in range(20))
        w(f"py/svc{i}/requirements.txt", reqs)


def generate_large(root: str, files: int = 25_000) -> None:
    """generate()'s monorepo grown to `files` files, as a real one is: an npm workspace of
    packages (each a package.json, sources, tests, fixtures and docs), so that the walk and
    every rule that looks at each manifest or file meet as many as a large checkout has."""
    generate(root)
    with open(os.path.join(root, "package.json"), "w") as f:
        json.dump({"name": "large", "private": True, "workspaces": ["packages/*"]}, f)
    have = sum(len(names) for _, _, names in os.walk(root))
    per = 100
    for i in range(max(0, (files - have) // per + 1)):
        pkg = os.path.join(root, "packages", f"p{i}")
        for d in ("src/lib", "test/fixtures", "docs"):
            os.makedirs(os.path.join(pkg, d), exist_ok=True)
        with open(os.path.join(pkg, "package.json"), "w") as f:
            json.dump({"name": f"@large/p{i}", "version": "1.0.0",
                       "scripts": {"build": "tsc", "test": "jest"},
                       "dependencies": {f"pkg-{i}": "^1.0.0"}}, f)
        for k in range(per - 1):
            rel = ("src/lib/m{k}.ts" if k < 60 else "test/t{k}.test.ts" if k < 85
                   else "test/fixtures/f{k}.json" if k < 95 else "docs/d{k}.md").format(k=k)
            with open(os.path.join(pkg, rel), "w") as f:
                f.write(f"export const v{k} = {k};\n")


if __name__ == "__main__":
    import sys

    generate(sys.argv[1])
