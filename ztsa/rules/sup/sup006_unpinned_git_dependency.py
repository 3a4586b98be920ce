"""Git or URL dependency not pinned to a commit.

## What it checks
Declared dependencies that come from git or a URL without a full 40-hex commit:
npm `git+…`, `git://…` (schemes in any case, as npm reads them), scp-like
`git@host:owner/repo`, `github:`/`gitlab:`/`bitbucket:`/`gist:` and `owner/repo`
shorthands, and tarball URLs, in every `package.json`; a spec of a protocol no package
manager knows fails too. Only a ref that is the commit pins it: `#release-<sha>` names a
branch or tag. Every git entry of `package-lock.json`, `npm-shrinkwrap.json`,
`yarn.lock`, `pnpm-lock.yaml` and `bun.lock` not locked to a commit fails as well: a
dependency's own git dependency is in no `package.json` of the tree (a lockfile that
does not parse makes the rule unknown). Cargo dependencies with `git =` but no `rev` (a
`branch` or `tag` can move); pip `git+…` requirements without `@<40 hex>` in
requirements files and `pyproject.toml`; `[tool.uv.sources]` and Poetry git
dependencies without `rev`. A Cargo or uv git source that the nearest `Cargo.lock` or
`uv.lock` pins to a commit passes: `cargo build` and `uv sync` use that commit.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory, and so are the
`devDependencies` of a vendored package: a `package.json` without a lockfile of its own,
below a project with one that does not list it as a workspace (continue's
`core/vendor/modules/@xenova/transformers`): npm installs a dependency's
`dependencies`, never its `devDependencies`.

## Why it matters
A branch, tag or URL can be pointed at different code after review. Whoever controls
the remote repository decides what your next install runs.

## How to fix
Pin the full commit: `github:owner/repo#<40-hex sha>`, `git = "…", rev = "<sha>"`,
`pkg @ git+https://…@<sha>`; or depend on a published, hashed release instead.
"""

from __future__ import annotations

import posixpath

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.host import ProbeError
from ztsa.lazy import LazyRe
from ztsa.manifests import MAX_LOCK_BYTES, MAX_MANIFEST_BYTES
from ztsa.manifests.project import load, named, named_where
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ztsa.manifests.lock import LockEntry

SHA = LazyRe(r"(?<![0-9a-f])[0-9a-f]{40}(?![0-9a-f])")
PIP_VCS = LazyRe(r"(?:^|\s|@\s*)((?:git|hg|svn|bzr)\+\S+)")
MAX_REPORTS = 50


def npm_unpinned(spec: str) -> str | None:
    """What a package.json spec fetches unpinned ("git", "URL", "unknown protocol"),
    or None. Classified as npm reads it (ztsa.manifests.npm.spec_kind)."""
    from ztsa.manifests.npm import commit_pinned, spec_kind

    kind = spec_kind(spec)
    if kind == "git":
        return None if commit_pinned(spec) else "git"
    if kind == "url":
        return None if SHA.search(spec) else "URL"
    return "unknown protocol" if kind == "other" else None


def pip_unpinned(text: str) -> bool:
    m = PIP_VCS.search(text)
    if not m:
        return False
    url = m.group(1).split("#", 1)[0]
    at = url.rfind("@")
    return at < url.find("://") or not SHA.fullmatch(url[at + 1 :])


def _git_without_rev(spec: Any) -> bool:
    return isinstance(spec, dict) and "git" in spec and "rev" not in spec


def _locked(ctx: Context, rel: str, lock: str, url: str) -> bool:
    """Does the nearest `lock` (Cargo.lock, uv.lock) at or above rel's directory pin
    url to a 40-hex commit? `cargo build` and `uv sync` use the locked commit."""
    import re

    d: str | None = posixpath.dirname(rel)
    while d is not None:
        path = posixpath.join(d, lock) if d else lock
        if ctx.ws_exists(path):
            text = ctx.ws_text(path, MAX_LOCK_BYTES) or ""
            return re.search(re.escape(url.rstrip("/")) + r"[^\"#\s]*#[0-9a-f]{40}\b",
                             text) is not None
        d = None if not d else posixpath.dirname(d)
    return False


JS_LOCKS = ("package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml",
            "bun.lock", "bun.lockb")


def _js_locked(ctx: Context, rel: str, name: str) -> bool:
    """Does the nearest JS lockfile at or above package.json rel's directory pin every
    git entry of the dependency name to a 40-hex commit? `npm ci`, `yarn install
    --immutable` and `pnpm install --frozen-lockfile` fetch the locked commit."""
    from ztsa.manifests.locks import entries

    d: str | None = posixpath.dirname(rel)
    while d is not None:
        for lock in JS_LOCKS[:5]:  # not the binary bun.lockb
            path = posixpath.join(d, lock) if d else lock
            if ctx.ws_exists(path):
                try:
                    mine = [e for e in entries(ctx, path) if e.name == name and e.kind in (
                        "git", "url")]
                except ProbeError:
                    return False  # an unreadable lockfile pins nothing
                return bool(mine) and all(_lock_pinned(e) for e in mine)
        d = None if not d else posixpath.dirname(d)
    return False


def _lock_pinned(e: LockEntry) -> bool:
    from ztsa.manifests.npm import commit_pinned

    if e.kind == "git":
        return commit_pinned(e.resolved or e.version)  # bun.lock keeps the ref in version
    return SHA.search(e.resolved or "") is not None


def _check_js_locks(ctx: Context, f: Findings) -> None:
    """Git entries of JS lockfiles not pinned to a commit. A dependency's own git
    dependency is in no package.json of the tree: its lockfile entry is what `npm ci`,
    `yarn install` and `pnpm install` fetch."""
    from ztsa.manifests.lock import entry_line
    from ztsa.manifests.locks import entries, lockfiles

    reported = 0
    for rel in lockfiles(ctx):
        if posixpath.basename(rel) not in JS_LOCKS:
            continue
        found = f.attempt(entries, ctx, rel)
        bad = [e for e in found or [] if e.kind == "git" and not _lock_pinned(e)]
        text = ctx.ws_text(rel, MAX_LOCK_BYTES) if bad else None
        room = max(0, MAX_REPORTS - reported)
        for e in bad[:room]:
            f.fail(f"{e.name}@{e.version} ({rel}) is locked to git "
                   f"{(e.resolved or e.version)[:80]!r}, not a 40-hex commit", path=rel,
                   line=entry_line(text, e))
        if len(bad) > room:
            f.fail(f"{len(bad) - room} more git entries not pinned to a commit in {rel}",
                   path=rel)
        reported += len(bad)


def _vendored(ctx: Context, rel: str) -> bool:
    """Is package.json rel a package inside another project, whose devDependencies no
    install of that project fetches? No lockfile beside it; an enclosing directory with a
    package.json and a lockfile whose workspaces do not name it."""
    import fnmatch

    from ztsa.manifests.npm import parse_package_json

    d = posixpath.dirname(rel)
    if not d or any(ctx.ws_exists(posixpath.join(d, lock)) for lock in JS_LOCKS):
        return False
    up = d
    while up:
        up = posixpath.dirname(up)
        if not any(ctx.ws_exists(posixpath.join(up, lock)) for lock in JS_LOCKS):
            continue
        top = posixpath.join(up, "package.json")
        if not ctx.ws_exists(top):
            continue
        try:
            pj = load(ctx, top, parse_package_json, MAX_MANIFEST_BYTES)
        except ProbeError:
            return False
        below = posixpath.relpath(d, up or ".")
        return not any(fnmatch.fnmatchcase(below, g.strip("/").removeprefix("./"))
                       for g in pj.workspaces)
    return False


@rule(id="SUP006", slug="unpinned-git-dependency", severity=Severity.HIGH,
      title="Git or URL dependency not pinned to a commit",
      nature=Nature.HYGIENE, actions="W/W/W")
def check(ctx: Context) -> Outcome:
    from ztsa.manifests.cargo import parse_cargo_toml  # lazily: start-up cost
    from ztsa.manifests.npm import parse_package_json  # lazily: start-up cost
    from ztsa.manifests.python import parse_pyproject, parse_requirements  # lazily: start-up cost

    f = Findings()
    for rel in named(ctx, "package.json"):
        pj = f.attempt(load, ctx, rel, parse_package_json, MAX_MANIFEST_BYTES)
        for field, name, spec in pj.deps() if pj else []:
            what = npm_unpinned(spec)
            if not what:
                continue
            if what == "git" and f.attempt(_js_locked, ctx, rel, name):
                continue  # the lockfile pins it
            detail = f"{name} comes from {what} {spec[:80]!r} without a 40-hex commit"
            line = pj.line(f'"{name}"') if pj else None
            if field == "devDependencies" and f.attempt(_vendored, ctx, rel):
                f.advise(detail + " (a vendored package's devDependencies, which no install "
                         "fetches: advisory)", rel, line)
            else:
                f.fail(detail, path=rel, line=line)
    _check_js_locks(ctx, f)
    for rel in named(ctx, "Cargo.toml"):
        ct = f.attempt(load, ctx, rel, parse_cargo_toml, MAX_MANIFEST_BYTES)
        for table, name, spec in ct.deps() if ct else []:
            if _git_without_rev(spec) and not f.attempt(_locked, ctx, rel, "Cargo.lock",
                                                        str(spec["git"])):
                moving = "branch " + str(spec["branch"]) if "branch" in spec else (
                    "tag " + str(spec["tag"]) if "tag" in spec else "the default branch")
                f.fail(f"[{table}] {name} follows git {moving}, not a rev", path=rel,
                       line=ct.line(str(spec["git"])) if ct else None)
    for rel in named_where(ctx, lambda b: b.startswith(("requirements", "constraints"))
                           and b.endswith((".txt", ".in"))):
        rf = f.attempt(load, ctx, rel, parse_requirements, MAX_MANIFEST_BYTES)
        for req in rf.requirements if rf else []:
            if req.kind == "vcs" and not req.vcs_pinned:
                f.fail(f"{req.text[:80]!r} is not pinned to a 40-hex commit", path=rel,
                       line=req.line)
    for rel in named(ctx, "pyproject.toml"):
        pp = f.attempt(load, ctx, rel, parse_pyproject, MAX_MANIFEST_BYTES)
        if pp is None:
            continue
        for dep in pp.dependency_strings():
            if pip_unpinned(dep):
                f.fail(f"{dep[:80]!r} is not pinned to a 40-hex commit", path=rel,
                       line=pp.line(dep[:40]))
        sources = pp.table("tool", "uv", "sources")
        for name, spec in sources.items() if isinstance(sources, dict) else []:
            if _git_without_rev(spec) and not f.attempt(_locked, ctx, rel, "uv.lock",
                                                        str(spec["git"])):
                f.fail(f"[tool.uv.sources] {name} follows git without rev", path=rel,
                       line=pp.line(str(spec["git"])))
        for name, spec in pp.poetry_dependencies().items():
            if _git_without_rev(spec):
                f.fail(f"Poetry dependency {name} follows git without rev", path=rel,
                       line=pp.line(str(spec["git"])))
    return f.outcome("every git or URL dependency is pinned to a commit",
                     f"{len(f.found)} unpinned git or URL dependenc(ies)",
                     scope=lambda rel: in_play(ctx, rel),
                     advised=f"{len(f.advised)} unpinned git or URL dependenc(ies), only in "
                     "vendored packages' devDependencies")
