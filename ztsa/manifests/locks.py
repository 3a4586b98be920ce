"""Every lockfile of the workspace, parsed into LockEntry lists (memoised per run)."""

from __future__ import annotations

import os
import posixpath
from collections.abc import Callable
from operator import attrgetter

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.host import ProbeError
from ztsa.manifests import BUNDLE_BYTES, MAX_LOCK_BYTES, PARALLEL_BYTES
from ztsa.manifests.project import PY_LOCKS, is_pylock, load, named_where, parse_cache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from ztsa.manifests.lock import LockEntry

DEFAULT_HOSTS = frozenset({
    "registry.npmjs.org", "registry.yarnpkg.com",
    "index.crates.io", "static.crates.io", "github.com/rust-lang/crates.io-index",
    "pypi.org", "files.pythonhosted.org",
})


def _first(pair: Any) -> Any:
    return pair[1]


def lock_parser(base: str) -> tuple[Callable[[str, str], Any],
                                    Callable[[Any], list[LockEntry]]] | None:
    """The parser of a lockfile base name, and how to take the entries from its result."""
    # parsers are imported only when there is a lockfile: start-up cost matters
    from ztsa.manifests.bun import parse_bun_lock
    from ztsa.manifests.cargo import parse_cargo_lock
    from ztsa.manifests.npm import parse_package_lock
    from ztsa.manifests.pnpm import parse_pnpm_lock
    from ztsa.manifests.python import PYTHON_LOCKS, parse_pylock
    from ztsa.manifests.yarn import parse_yarn_lock

    if base in ("package-lock.json", "npm-shrinkwrap.json"):
        return parse_package_lock, attrgetter("entries")
    if base == "yarn.lock":
        return parse_yarn_lock, _first
    if base == "pnpm-lock.yaml":
        return parse_pnpm_lock, attrgetter("entries")
    if base == "bun.lock":
        return parse_bun_lock, list
    if base == "Cargo.lock":
        return parse_cargo_lock, _first
    if base in PYTHON_LOCKS:
        return PYTHON_LOCKS[base], list
    if is_pylock(base):
        return parse_pylock, list
    return None


def entries(ctx: Context, rel: str) -> list[LockEntry]:
    """The entries of the lockfile rel (parsed once a run)."""
    found = lock_parser(posixpath.basename(rel))
    if found is None:
        return []
    parser, entries_of = found
    return entries_of(load(ctx, rel, parser))


def prefetch(ctx: Context) -> None:
    """Take large lockfiles from the parse cache, or start parsing them in workers while
    the other rules run (see ztsa.manifests.parsecache)."""
    try:
        names = lockfiles(ctx)
    except ProbeError:
        return  # the rules report the walk's error
    if not names:
        return
    big: list[tuple[int, str, Callable[[str, str], Any], str, str]] = []
    for rel in names:
        st = ctx.ws_lstat(rel)
        found = lock_parser(posixpath.basename(rel))
        if found is None or st is None or st.st_size < BUNDLE_BYTES:
            continue
        try:
            text = ctx.ws_text(rel, MAX_LOCK_BYTES)
        except ProbeError:
            continue  # load() reports it
        if text is None:
            continue
        parser = found[0]
        cache = parse_cache(ctx)
        key = cache.key(parser, rel, text)
        pending: dict[tuple[str, Any], str] = ctx.cache.setdefault("parse_keys", {})
        pending[(rel, parser)] = key
        hit, value = cache.get(key)
        if hit:
            ctx.cache.setdefault("parsed", {})[(rel, parser)] = value
        elif st.st_size >= PARALLEL_BYTES:
            big.append((st.st_size, key, parser, rel, text))
    workers = len(os.sched_getaffinity(0))
    if big and workers > 1:
        cache = parse_cache(ctx)
        for _, key, parser, rel, text in sorted(big, key=lambda b: -b[0])[:workers]:
            cache.start(key, parser, rel, text)


LOCK_NAMES = frozenset({"package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
                        "pnpm-lock.yaml", "bun.lock", "Cargo.lock",
                        *(n for n in PY_LOCKS if n != "pylock.toml")})


def lockfiles(ctx: Context) -> list[str]:
    return named_where(ctx, lambda b: b in LOCK_NAMES or is_pylock(b))


def lock_entries(ctx: Context, f: Findings) -> list[LockEntry]:
    """All entries of all readable lockfiles; unreadable ones are recorded in ``f``."""
    out: list[LockEntry] = []
    for rel in lockfiles(ctx):
        found = f.attempt(entries, ctx, rel)
        if found is not None:
            out.extend(found)
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
