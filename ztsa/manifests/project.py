"""Finding and loading the manifests of a workspace, memoised per run."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable

from ztsa.context import Context
from ztsa.host import ProbeError
from ztsa.manifests import BUNDLE_BYTES, MAX_LOCK_BYTES
from ztsa.manifests.common import ancestors
from ztsa.walk import all_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from ztsa.manifests.parsecache import ParseCache
    T = TypeVar("T")


NPM_LOCKS = ("package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml",
             "bun.lock", "bun.lockb")
MANIFEST_NAMES = frozenset({"package.json", "Cargo.toml", "pyproject.toml", "deny.toml",
                            "config.toml", "pnpm-workspace.yaml", ".yarnrc.yml", "Pipfile"})
PY_LOCKS = ("uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "pylock.toml")


def is_pylock(name: str) -> bool:
    """pylock.toml or pylock.NAME.toml (PEP 751)."""
    return name == "pylock.toml" or (name.startswith("pylock.") and name.endswith(".toml"))


def _by_name(ctx: Context) -> dict[str, list[int]]:
    """Each file name of the walk, with the positions of its paths in it (cached per run):
    rules look files up by name many times over, and a large checkout has 25,000."""
    cached = ctx.cache.get("byname")
    if isinstance(cached, dict):
        return cached
    index: dict[str, list[int]] = {}
    for i, p in enumerate(all_files(ctx)):
        index.setdefault(p[p.rfind("/") + 1:], []).append(i)
    ctx.cache["byname"] = index
    return index


def named(ctx: Context, *names: str) -> list[str]:
    """The paths whose file name is one of names, in the walk's order."""
    index, files = _by_name(ctx), all_files(ctx)
    return [files[i] for i in sorted(i for n in set(names) for i in index.get(n, ()))]


def named_where(ctx: Context, pred: Callable[[str], bool]) -> list[str]:
    """The paths whose file name pred holds for, in the walk's order (pred sees each
    distinct name once)."""
    index, files = _by_name(ctx), all_files(ctx)
    return [files[i] for i in sorted(i for n, at in index.items() if pred(n) for i in at)]


def matching(ctx: Context, pred: Callable[[str], bool]) -> list[str]:
    return [p for p in all_files(ctx) if pred(p)]


def file_set(ctx: Context) -> set[str]:
    cached = ctx.cache.get("fileset")
    if not isinstance(cached, set):
        cached = set(all_files(ctx))
        ctx.cache["fileset"] = cached
    return cached


def nearest(ctx: Context, directory: str, names: Iterable[str]) -> str | None:
    """The first of ``names`` in ``directory`` or an ancestor up to the workspace root."""
    files = file_set(ctx)
    names = tuple(names)
    for d in ancestors(directory):
        for n in names:
            cand = posixpath.join(d, n) if d else n
            if cand in files:
                return cand
    return None


def parse_cache(ctx: Context) -> ParseCache:
    """This run's parse cache (see ztsa.manifests.parsecache); off with --no-cache."""
    from ztsa.manifests.parsecache import ParseCache, cache_dir

    cache = ctx.cache.get("parse_cache")
    if not isinstance(cache, ParseCache):
        # ztsa's own directory, not the audited machine's
        directory = None if ctx.options.get("no_cache") else cache_dir()
        cache = ctx.cache["parse_cache"] = ParseCache(directory, ctx.workspace)
    return cache


def load(ctx: Context, rel: str, parser: Callable[[str, str], T],
         limit: int = MAX_LOCK_BYTES) -> T:
    """Parse a workspace file once per run; a failure is remembered and raised again."""
    memo: dict[tuple[str, Any], Any] = ctx.cache.setdefault("parsed", {})
    key = (rel, parser)
    if key not in memo:
        memo[key] = _parse(ctx, rel, parser, limit)
    value = memo[key]
    if isinstance(value, ProbeError):
        raise value
    return value  # type: ignore[no-any-return]


def _parse(ctx: Context, rel: str, parser: Callable[[str, str], Any], limit: int) -> Any:
    """The parser's result or its ProbeError: from a worker that `locks.prefetch`
    started, from the parse cache, or parsed here (and then stored)."""
    cache_key = ctx.cache.get("parse_keys", {}).get((rel, parser))
    if cache_key:
        got, value = parse_cache(ctx).collect(cache_key)
        if got:
            return value
    try:
        text = ctx.ws_text(rel, limit)
        if text is None:
            raise ProbeError(rel, "vanished during the audit")
    except ProbeError as exc:
        return exc
    small = len(text) < BUNDLE_BYTES
    cache = parse_cache(ctx) if not small or _bundle_pays(ctx) else None
    if cache is not None and cache.directory is not None and cache_key is None:
        cache_key = cache.key(parser, rel, text)
        got, value = cache.get(cache_key, small)
        if got:
            return value
    try:
        value = parser(text, rel)
    except ProbeError as exc:
        value = exc
    if cache is not None and cache_key:
        from ztsa.manifests.parsecache import encode

        cache.put(cache_key, encode(value), small)
    return value


BUNDLE_MIN_FILES = 40


def _bundle_pays(ctx: Context) -> bool:
    """Small manifests go through the workspace's bundle only in a workspace with many
    of them (a monorepo): for a few, importing the cache costs more than parsing."""
    worth = ctx.cache.get("bundle_pays")
    if not isinstance(worth, bool):
        n = sum(1 for p in all_files(ctx) if posixpath.basename(p) in MANIFEST_NAMES
                or posixpath.basename(p).startswith("requirements"))
        worth = ctx.cache["bundle_pays"] = n >= BUNDLE_MIN_FILES
    return worth


def by_dir(ctx: Context) -> dict[str, list[str]]:
    """Workspace directory ("" for the root) -> base names of the files in it."""
    cached = ctx.cache.get("bydir")
    if not isinstance(cached, dict):
        cached = {}
        for p in all_files(ctx):
            d, _, base = p.rpartition("/")
            cached.setdefault(d, []).append(base)
        ctx.cache["bydir"] = cached
    return cached
