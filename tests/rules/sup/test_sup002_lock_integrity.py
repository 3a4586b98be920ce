import json

from ztsa.model import Status


def test_pass(machine):
    machine.fixture("npm-lock-https")
    machine.fixture("cargo-build-rs-cc")
    machine.fixture("py-uv-locked")
    assert machine.run("SUP002").status is Status.PASS


def test_fail_npm_http_host_and_missing_integrity(machine):
    machine.fixture("npm-lock-http")
    out = machine.run("SUP002")
    assert out.status is Status.FAIL
    details = [e.detail for e in out.evidence]
    assert any("chalk@5.3.0" in d and "plain http" in d for d in details)
    assert any("ms@2.1.3" in d and "npm.evil.invalid" in d for d in details)
    assert all(e.line for e in out.evidence)


def test_allow_registry_option(machine):
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {
        "node_modules/ms": {"version": "2.1.3", "integrity": "sha512-x",
                            "resolved": "https://npm.corp.invalid/ms/-/ms-2.1.3.tgz"}}}))
    assert machine.run("SUP002").status is Status.FAIL
    assert machine.run("SUP002", options={"allow_registry": ["npm.corp.invalid"]}).status \
        is Status.PASS


def test_fail_cargo_and_yarn_and_pnpm_without_checksums(machine):
    machine.ws("Cargo.lock", 'version = 3\n[[package]]\nname = "serde"\nversion = "1.0.0"\n'
               'source = "registry+https://github.com/rust-lang/crates.io-index"\n')
    machine.ws("y/yarn.lock", '# yarn lockfile v1\n\nms@2.1.3:\n  version "2.1.3"\n'
               '  resolved "https://registry.yarnpkg.com/ms/-/ms-2.1.3.tgz"\n')
    machine.ws("p/pnpm-lock.yaml", "lockfileVersion: '9.0'\npackages:\n  ms@2.1.3:\n"
               "    resolution: {tarball: 'http://registry.npmjs.org/ms/-/ms-2.1.3.tgz'}\n")
    out = machine.run("SUP002")
    assert {e.path for e in out.evidence} == {"Cargo.lock", "y/yarn.lock", "p/pnpm-lock.yaml"}


def test_unknown_lockfile_version(machine):
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 7, "packages": {}}))
    out = machine.run("SUP002")
    assert out.status is Status.UNKNOWN and "lockfileVersion 7" in out.message


def test_unknown_truncated_lock(machine):
    machine.ws("pnpm-lock.yaml",
               "lockfileVersion: '6.0'\npackages:\n  /ms@2.1.3:\n    resolution: {in")
    assert machine.run("SUP002").status is Status.UNKNOWN


BERRY = """__metadata:
  version: 8
  cacheKey: 10c0

"@esbuild/darwin-arm64@npm:0.28.1":
  version: 0.28.1
  resolution: "@esbuild/darwin-arm64@npm:0.28.1"
  conditions: os=darwin & cpu=arm64
  languageName: node
  linkType: hard

"@esbuild/linux-x64@npm:0.28.1":
  version: 0.28.1
  resolution: "@esbuild/linux-x64@npm:0.28.1"
  conditions: os=linux & cpu=x64
  languageName: node
  linkType: hard
"""


def test_berry_entries_of_other_platforms_are_not_judged(machine):
    """babel: Yarn records no checksum for the platforms it did not fetch; the entry
    this machine would fetch without one still fails."""
    import platform

    machine.ws("yarn.lock", BERRY)
    out = machine.run("SUP002")
    names = [e.detail.split("@npm")[0] for e in out.evidence]
    assert not any("darwin-arm64" in n for n in names)
    if platform.machine() == "x86_64":
        assert out.status is Status.FAIL and any("linux-x64" in n for n in names)


def test_pass_a_pnpm_runtime_with_an_integrity_per_platform(machine):
    """pnpm 10's `node@runtime:24.6.0`: `resolution.type: variations`, an archive and an
    integrity per platform, from nodejs.org. A variant of this machine's without one
    fails; another platform's is never fetched here."""
    import platform

    from ztsa.manifests.npm import NODE_ARCH

    arch = NODE_ARCH.get(platform.machine().lower(), platform.machine().lower())

    def lock(here_integrity: str, other_integrity: str) -> str:
        def variant(os_: str, cpu: str, integrity: str) -> str:
            line = f"            integrity: {integrity}\n" if integrity else ""
            return ("        - resolution:\n            archive: tarball\n"
                    f"{line}            type: binary\n            url: https://nodejs.org/"
                    f"download/release/v24.6.0/node-v24.6.0-{os_}-{cpu}.tar.gz\n"
                    f"          targets:\n            - cpu: {cpu}\n              os: {os_}\n")
        return ("lockfileVersion: '9.0'\nimporters:\n  .:\n    devDependencies:\n"
                "      node:\n        specifier: runtime:24.6.0\n"
                "        version: runtime:24.6.0\npackages:\n  node@runtime:24.6.0:\n"
                "    hasBin: true\n    resolution:\n      type: variations\n      variants:\n"
                + variant("darwin", "arm64", other_integrity)
                + variant("linux", arch, here_integrity))
    machine.ws("pnpm-lock.yaml", lock("sha256-abc=", "sha256-def="))
    assert machine.run("SUP002").status is Status.PASS
    machine.ws("pnpm-lock.yaml", lock("sha256-abc=", ""))
    assert machine.run("SUP002").status is Status.PASS
    machine.ws("pnpm-lock.yaml", lock("", "sha256-def="))
    out = machine.run("SUP002")
    assert out.status is Status.FAIL and "no integrity" in out.evidence[0].detail, out
    machine.ws("pnpm-lock.yaml", lock("sha256-abc=", "sha256-def=").replace(
        "https://nodejs.org/", "https://nodejs.evil.invalid/"))
    assert machine.run("SUP002").status is Status.FAIL


def test_fail_upper_case_http_and_other_schemes(machine):
    """URL schemes are case-insensitive: `HTTP://` is plain http to npm too. A
    registry or tarball entry resolved over another scheme (`ftp:`) comes from no allowed
    registry; Yarn's `resolved` holding a `GIT+https:` URL is git, SUP006's."""
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {
        "node_modules/ms": {"version": "2.1.3", "integrity": "sha512-x",
                            "resolved": "HTTP://registry.npmjs.org/ms/-/ms-2.1.3.tgz"},
        "node_modules/ok": {"version": "1.0.0", "integrity": "sha512-x",
                            "resolved": "HTTPS://registry.npmjs.org/ok/-/ok-1.0.0.tgz"},
        "node_modules/ftp": {"version": "1.0.0", "integrity": "sha512-x",
                             "resolved": "ftp://example.invalid/ftp-1.0.0.tgz"}}}))
    machine.ws("y/yarn.lock", '# yarn lockfile v1\n\ngy@1.0.0:\n  version "1.0.0"\n'
               '  resolved "GIT+https://github.com/o/gy.git#main"\n  integrity sha512-x\n')
    machine.ws("p/pnpm-lock.yaml", "lockfileVersion: '9.0'\npackages:\n  pm@1.0.0:\n"
               "    resolution: {integrity: sha512-x, "
               "tarball: 'HTTP://registry.npmjs.org/pm/-/pm-1.0.0.tgz'}\n")
    out = machine.run("SUP002")
    assert out.status is Status.FAIL
    details = {e.detail.split("@")[0]: e.detail for e in out.evidence}
    assert set(details) == {"ms", "ftp", "pm"}, out
    assert "plain http" in details["ms"] and "plain http" in details["pm"]
    gy = machine.run("SUP006")
    assert [e.path for e in gy.evidence] == ["y/yarn.lock"], gy


def test_fail_a_git_file_source(machine):
    """`git+file:///path`: a repository on this machine, outside every registry and
    whatever the tree shows, even at a commit."""
    sha = "0123456789abcdef0123456789abcdef01234567"
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {
        "node_modules/a": {"version": "1.0.0", "resolved": f"git+file:///srv/a#{sha}"},
        "node_modules/b": {"version": "1.0.0", "resolved": "GIT+FILE:///srv/b#main"},
        "node_modules/c": {"version": "1.0.0",
                           "resolved": f"git+ssh://git@github.com/o/c.git#{sha}"}}}))
    out = machine.run("SUP002")
    assert out.status is Status.FAIL
    assert sorted(e.detail.split("@")[0] for e in out.evidence) == ["a", "b"], out


def test_fail_a_tarball_url_with_a_git_like_fragment(machine):
    """npm clones only a hosted-git URL (`https://github.com/o/r.git#<sha>`); any other
    http(s) URL it fetches as a tarball, fragment or not: it is judged as one."""
    sha = "0123456789abcdef0123456789abcdef01234567"
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {
        "node_modules/a": {"version": "1.0.0",
                           "resolved": f"https://evil.github.io/a.git#{sha}"},
        "node_modules/b": {"version": "1.0.0",
                           "resolved": f"https://github.com/o/b.git#{sha}"}}}))
    out = machine.run("SUP002")
    assert [e.detail.split("@")[0] for e in out.evidence] == ["a"], out


def test_a_missing_hash_is_hygiene_and_a_foreign_host_an_attack(machine):
    """An entry without a hash is what a maintainer forgot: advisory, never gating on its
    own. An entry from another host is what an attacker plants: it gates, and the
    entries without a hash are listed beside it."""
    entry = {"version": "2.1.3", "resolved": "https://registry.npmjs.org/ms/-/ms-2.1.3.tgz"}
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {
        "node_modules/ms": entry}}))
    out = machine.run("SUP002")
    assert out.status is Status.FAIL and out.advisory
    assert "without an integrity hash" in out.message
    planted = {"version": "1.0.0", "integrity": "sha512-x",
               "resolved": "https://npm.evil.invalid/left-pad/-/left-pad-1.0.0.tgz"}
    machine.ws("package-lock.json", json.dumps({"lockfileVersion": 3, "packages": {
        "node_modules/ms": entry, "node_modules/left-pad": planted}}))
    out = machine.run("SUP002")
    assert out.status is Status.FAIL and not out.advisory
    details = [e.detail for e in out.evidence]
    assert any("npm.evil.invalid" in d for d in details)
    assert any("ms@2.1.3" in d and "no integrity hash" in d for d in details)


def test_a_git_hosts_archive_of_one_commit_with_its_hash_is_pinned(machine):
    """oxc: pnpm's `gitHosted` tarball `codeload.github.com/o/r/tar.gz/<40 hex>` with
    its sha512 is a git source pinned to a commit and to its bytes: it passes. The same
    host at a branch, or without the hash, or another host's tarball, still fails."""
    sha = "2d8c023d796e1884e53ad527d3c68214c866a9e1"

    def lock(url: str, integrity: str = "sha512-7KYF6c0Bx==") -> str:
        res = f"integrity: {integrity}, " if integrity else ""
        return ("lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n"
                f"      lit:\n        specifier: {url}\n        version: {url}\n"
                f"packages:\n  lit@{url}:\n    resolution: {{gitHosted: true, {res}"
                f"tarball: {url}}}\n    version: 0.0.0\nsnapshots:\n  lit@{url}: {{}}\n")
    machine.ws("package.json", '{"name": "x"}')
    machine.ws("pnpm-lock.yaml", lock(f"https://codeload.github.com/lit/dist/tar.gz/{sha}"))
    assert machine.run("SUP002").status is Status.PASS
    for url, integrity in ((f"https://codeload.github.com/lit/dist/tar.gz/{sha}", ""),
                           ("https://codeload.github.com/lit/dist/tar.gz/main", "sha512-x=="),
                           (f"https://evil.invalid/lit/dist/tar.gz/{sha}", "sha512-x==")):
        machine.ws("pnpm-lock.yaml", lock(url, integrity))
        out = machine.run("SUP002")
        assert out.status is Status.FAIL and not out.advisory, (url, integrity, out)
