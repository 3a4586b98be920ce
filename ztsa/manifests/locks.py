"""Every lockfile of the workspace, parsed into LockEntry lists (memoised per run)."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.manifests.project import PY_LOCKS, is_pylock, load, matching

if TYPE_CHECKING:
    from ztsa.manifests.lock import LockEntry

DEFAULT_HOSTS = frozenset({
    "registry.npmjs.org", "registry.yarnpkg.com",
    "index.crates.io", "static.crates.io", "github.com/rust-lang/crates.io-index",
    "pypi.org", "files.pythonhosted.org",
})


def _entries(ctx: Context, rel: str) -> list[LockEntry]:
    # parsers are imported only when there is a lockfile: start-up cost matters
    from ztsa.manifests.bun import parse_bun_lock
    from ztsa.manifests.cargo import parse_cargo_lock
    from ztsa.manifests.npm import parse_package_lock
    from ztsa.manifests.pnpm import parse_pnpm_lock
    from ztsa.manifests.python import PYTHON_LOCKS, parse_pylock
    from ztsa.manifests.yarn import parse_yarn_lock

    base = posixpath.basename(rel)
    if base in ("package-lock.json", "npm-shrinkwrap.json"):
        return load(ctx, rel, parse_package_lock).entries
    if base == "yarn.lock":
        return load(ctx, rel, parse_yarn_lock)[1]
    if base == "pnpm-lock.yaml":
        return load(ctx, rel, parse_pnpm_lock).entries
    if base == "bun.lock":
        return load(ctx, rel, parse_bun_lock)
    if base == "Cargo.lock":
        return load(ctx, rel, parse_cargo_lock)[1]
    if base in PYTHON_LOCKS:
        return load(ctx, rel, PYTHON_LOCKS[base])
    if is_pylock(base):
        return load(ctx, rel, parse_pylock)
    return []


LOCK_NAMES = frozenset({"package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
                        "pnpm-lock.yaml", "bun.lock", "Cargo.lock",
                        *(n for n in PY_LOCKS if n != "pylock.toml")})


def lockfiles(ctx: Context) -> list[str]:
    return matching(ctx, lambda p: (b := posixpath.basename(p)) in LOCK_NAMES or is_pylock(b))


def lock_entries(ctx: Context, f: Findings) -> list[LockEntry]:
    """All entries of all readable lockfiles; unreadable ones are recorded in ``f``."""
    out: list[LockEntry] = []
    for rel in lockfiles(ctx):
        entries = f.attempt(_entries, ctx, rel)
        if entries is not None:
            out.extend(entries)
    return out


def allowed_hosts(ctx: Context) -> frozenset[str]:
    extra = ctx.options.get("allow_registry") or ()
    return DEFAULT_HOSTS | frozenset(extra)


_KNOWN_PREFIXES = {f"https://{h}/": h for h in DEFAULT_HOSTS if "/" not in h}


def host_of(url: str) -> str | None:
    """The host (with the crates.io-index path kept) of an http(s) URL or cargo source."""
    end = url.find("/", 8)
    if end > 0 and url[: end + 1] in _KNOWN_PREFIXES and "@" not in url[:end]:
        return _KNOWN_PREFIXES[url[: end + 1]]  # the common case, without urlsplit
    from urllib.parse import urlsplit

    u = url.split("+", 1)[1] if url.startswith(("registry+", "sparse+", "git+")) else url
    try:
        parts = urlsplit(u)
    except ValueError:
        return None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        return None
    if parts.hostname == "github.com" and parts.path.rstrip("/") == "/rust-lang/crates.io-index":
        return "github.com/rust-lang/crates.io-index"
    return parts.hostname
