"""Build script uses network or a shell.

## What it checks
Every `build.rs` (with the files it compiles in: its `mod` and `include!` files, and
the sources of the repository's crates its `[build-dependencies]` name by path) and
proc-macro source for `std::net`, `TcpStream`, `UdpSocket` and the HTTP crates
(`reqwest`, `ureq`, `curl`, `hyper`, `attohttpc`, `isahc`, `minreq`); `Command::new` of
`curl`, `wget`, `sh`, `bash`, `nc`, `python` and friends, and of `git` with a network
subcommand (`clone`, `fetch`, `pull`, `ls-remote`, `submodule`; `git log` for a version
stamp is fine), also through a wrapper of the build code's own (`fn git(dir, args)` and
`git(dir, ["fetch", ...])`, in any of its files: when it only fetches one revision it
names (`fetch … rev`) and the repository's TOML data pins every `rev` to a full commit,
as helix's languages.toml does its grammars, it is advisory: pinned like a lockfile);
a function reached only when an opt-in environment variable is set (`if
env::var("FETCH_FEED").is_ok() { download() }`, every call of it so guarded) is
advisory, since the ordinary build never runs it; network crates in
`[build-dependencies]` (`cc`, `cmake`, `pkg-config` and the like are fine); and
compile-time database queries: a crate depending on `sqlx` whose sources use its
`query!` macros, with a `.env` naming `DATABASE_URL` and neither `SQLX_OFFLINE=true`
nor an offline `.sqlx/` directory, connects to that database while compiling.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
A build that downloads or shells out at build time runs code that was never in the
reviewed source and can send what it finds anywhere.

## How to fix
Vendor what the build needs and build offline (`cargo build --offline`); replace
shell-outs with the `cc`/`cmake` crates; report network access in third-party build
scripts upstream.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe, line_hits
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.rust import crates
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

NET_CRATES = frozenset({"reqwest", "ureq", "curl", "hyper", "attohttpc", "isahc", "minreq",
                        "surf", "http_req", "ftp", "ssh2", "git2", "tokio"})
SOURCE = (
    (LazyRe(r"\bstd::net\b|\b(?:TcpStream|UdpSocket|TcpListener)\b"), "opens sockets"),
    (LazyRe(r"\b(?:reqwest|ureq|curl|hyper|attohttpc|isahc|minreq)::"), "uses an HTTP client"),
    (LazyRe(r"Command::new\s*\(\s*\"(?:[^\"]*/)?(curl|wget|sh|bash|zsh|dash|nc|ncat|"
            r"python3?|perl|ruby|node|powershell|pwsh|cmd)(?:\.exe)?\""),
     "runs a shell or a download tool"),
    # git of the network (a build that clones its grammars); `git log` or `rev-parse`
    # for a version stamp reads only the checkout
    (LazyRe(r"Command::new\s*\(\s*\"(?:[^\"]*/)?git(?:\.exe)?\"\s*\)[^;]{0,400}?\""
            r"(clone|fetch|pull|ls-remote|submodule|remote)\b"), "runs git over the network"),
)


# git run through a wrapper of the crate's own (`fn git(dir, args)` making the Command,
# `git(dir, ["fetch", ...])` elsewhere, in another file too): both in the build code
GIT_COMMAND = LazyRe(r"Command::new\s*\(\s*\"(?:[^\"]*/)?git(?:\.exe)?\"\s*\)")
GIT_NETWORK_ARG = LazyRe(r"\"(clone|fetch|pull|ls-remote|submodule)\"")


def _git_wrapper(ctx: Context, texts: dict[str, str], f: Findings, crate_name: str,
                 reported: set[str]) -> None:
    """A build's git over the network where the subcommand is not beside the Command:
    the crate's build code makes a git Command and names a network subcommand."""
    if not any(GIT_COMMAND.search(t) for t in texts.values()):
        return
    for rel, text in texts.items():
        m = GIT_NETWORK_ARG.search(text)
        if m and rel not in reported:
            line = text.count("\n", 0, m.start()) + 1
            what = (f"build code of {crate_name} runs git over the network (through a "
                    f"wrapper): {m.group(1)!r}")
            # helix: `git fetch --depth 1 origin <rev>` of grammars whose revisions
            # languages.toml pins to commits, as a lockfile would
            pinned = f.attempt(pinned_revisions, ctx) if all(
                REV_FETCH.search(t[g.start():g.start() + 200])
                for t in texts.values() for g in GIT_NETWORK_ARG.finditer(t)
                if g.group(1) == "fetch") and not any(
                g.group(1) in ("clone", "pull", "submodule") for t in texts.values()
                for g in GIT_NETWORK_ARG.finditer(t)) else None
            if pinned:
                f.advise(f"{what}, of the revisions the repository pins ({pinned}): "
                         "advisory", path=rel, line=line)
            else:
                f.fail(what, path=rel, line=line)
            return


# a condition that holds only when a variable is set: `env::var("X").is_ok()`,
# `.is_some()`, `Ok(..)`, `== "1"`; `.is_err()` (set to turn it off) is no opt-in
OPT_IN = LazyRe(r"env::var(?:_os)?\s*\(\s*\"(\w+)\"\s*\)\s*(?:\.is_ok\(\)|\.is_some\(\)|"
                r"\.as_deref\(\)\s*==\s*Ok|\.ok\(\)\s*==\s*Some|==\s*Ok)|"
                r"if\s+let\s+(?:Ok|Some)\s*\([^)]*\)\s*=\s*(?:std::)?env::var(?:_os)?\s*\(\s*\"(\w+)\"")
FN_NAME = LazyRe(r"\bfn\s+(\w+)\s*[<(]")


def opt_in(text: str, at: int) -> str | None:
    """The environment variable that must be set for the function holding offset `at` to
    run, when every call of it in text sits under such a condition (amazon-q's build.rs
    curls its feed only `if std::env::var("FETCH_FEED").is_ok()`); else None."""
    import re

    fns = [m for m in FN_NAME.finditer(text, 0, at)]
    if not fns:
        return None
    name = fns[-1].group(1)
    calls = [m for m in re.finditer(rf"(?<![\w:])(?<!fn )\b{re.escape(name)}\s*\(", text)
             if text[max(0, m.start() - 3):m.start()] != "fn "]
    if not calls:
        return None  # nothing here calls it: another file might, unguarded
    found = None
    for call in calls:
        before = text[max(0, call.start() - 240):call.start()]
        guard = [g for g in OPT_IN.finditer(before)]
        if not guard or "}" in before[guard[-1].end():]:
            return None
        found = guard[-1].group(1) or guard[-1].group(2)
    return found


# a git fetch of one revision the build names (`git fetch --depth 1 origin <rev>` then
# `checkout <rev>`), where the repository's data pins every revision to a commit
REV_FETCH = LazyRe(r"\"fetch\"[^;\n]*\b(?:rev|revision|commit|sha)\b")
PINNED_REV = LazyRe(r"(?<![\w-])(?:rev|revision|commit)\s*=\s*\"([^\"]*)\"")


def pinned_revisions(ctx: Context) -> str | None:
    """'languages.toml: 303 revisions, each a full commit' when the TOML files at the
    root hold `rev = "…"` entries and every one is a full commit hash; else None."""
    import re

    from ztsa.manifests.project import matching

    counts = []
    for rel in matching(ctx, lambda p: "/" not in p and p.endswith(".toml")):
        text = ctx.ws_text(rel, MAX_MANIFEST_BYTES) or ""
        revs = PINNED_REV.compiled.findall(text)
        if revs and not all(re.fullmatch(r"[0-9a-f]{40}|[0-9a-f]{64}", r) for r in revs):
            return None
        if revs:
            counts.append(f"{rel}: {len(revs)} revisions, each a full commit")
    return "; ".join(counts) or None


SQLX_QUERY = LazyRe(r"\bsqlx::query(?:_as|_scalar|_file|_file_as)?(?:_unchecked)?!\s*\(|"
                    r"\bquery(?:_as|_scalar)?!\s*\(")


def _sqlx(ctx: Context, f: Findings) -> None:
    """sqlx's query macros connect to DATABASE_URL at compile time unless offline."""
    from ztsa.manifests.cargo import parse_cargo_toml
    from ztsa.manifests.project import load, named
    from ztsa.walk import all_files

    files = None
    for rel in named(ctx, "Cargo.toml"):
        ct = f.attempt(load, ctx, rel, parse_cargo_toml, MAX_MANIFEST_BYTES)
        deps = ct.data.get("dependencies") if ct else None
        if not isinstance(deps, dict) or "sqlx" not in deps:
            continue
        d = rel.rsplit("/", 1)[0] if "/" in rel else ""
        env = _dotenv(ctx, d)
        if env is None or env[1].get("SQLX_OFFLINE", "").lower() in ("true", "1") or any(
                ctx.ws_exists(f"{p}.sqlx") for p in _ancestors(d)):
            continue
        files = files if files is not None else all_files(ctx)
        src = f"{d}/src/" if d else "src/"
        for path in (p for p in files if p.startswith(src) and p.endswith(".rs")):
            text = f.attempt(ctx.ws_text, path, MAX_MANIFEST_BYTES) or ""
            m = SQLX_QUERY.search(text)
            if m:
                f.fail(f"{m.group(0).rstrip('(').strip()} connects to DATABASE_URL from "
                       f"{env[0]} while compiling", path=path,
                       line=text.count("\n", 0, m.start()) + 1)
                break


def _offset(text: str, lineno: int) -> int:
    """The offset of line lineno (1-based) in text."""
    at = 0
    for _ in range(lineno - 1):
        at = text.index("\n", at) + 1
    return at


def _ancestors(d: str) -> list[str]:
    """d's directory prefixes ('' for the root), nearest first, as 'a/b/' strings."""
    parts = d.split("/") if d else []
    return [("/".join(parts[:i]) + "/") if i else "" for i in range(len(parts), -1, -1)]


def _dotenv(ctx: Context, d: str) -> tuple[str, dict[str, str]] | None:
    """The nearest .env in d or above (as sqlx's dotenv reads it) naming DATABASE_URL."""
    for prefix in _ancestors(d):
        rel = f"{prefix}.env"
        if not ctx.ws_exists(rel):
            continue
        values = {}
        for line in (ctx.ws_text(rel, 1 << 20) or "").splitlines():
            key, sep, value = line.strip().removeprefix("export ").partition("=")
            if sep and not key.startswith("#"):
                values[key.strip()] = value.strip().strip("'\"")
        if values.get("DATABASE_URL"):
            return rel, values
    return None


@rule(id="SUP010", slug="build-script-network-shell", severity=Severity.HIGH,
      title="Build script uses network or a shell",
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    deps_seen: set[str] = set()
    for crate in crates(ctx, f):
        fresh = [r for r in crate.build_deps if r not in deps_seen]
        deps_seen.update(fresh)
        texts: dict[str, str] = {}
        git_direct: set[str] = set()
        for rel in [*crate.sources, *fresh]:
            text = f.attempt(ctx.ws_text, rel, MAX_MANIFEST_BYTES)
            texts[rel] = text or ""
            for lineno, i, m in line_hits(text or "", [rx for rx, _ in SOURCE]):
                var = f.attempt(opt_in, text or "", _offset(text or "", lineno))
                if var:
                    f.advise(f"build code of {crate.name} {SOURCE[i][1]}: "
                             f"{m.group(0)[:60]!r}, only when {var} is set (advisory)",
                             path=rel, line=lineno)
                    continue
                f.fail(f"build code of {crate.name} {SOURCE[i][1]}: {m.group(0)[:60]!r}",
                       path=rel, line=lineno)
                if i == len(SOURCE) - 1:
                    git_direct.add(rel)
        if not git_direct:
            _git_wrapper(ctx, texts, f, crate.name, git_direct)
        bdeps = crate.manifest.data.get("build-dependencies") if crate.manifest else None
        for name in sorted(bdeps) if isinstance(bdeps, dict) else []:
            if name in NET_CRATES and crate.manifest:
                f.fail(f"{crate.name} has the network crate {name} in [build-dependencies]",
                       path=crate.manifest.path, line=crate.manifest.line(name))
    _sqlx(ctx, f)
    return f.outcome("no build script uses the network or a shell",
                     f"{len(f.found)} network or shell use(s) in build code",
                     scope=lambda rel: in_play(ctx, rel))
