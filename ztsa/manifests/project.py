"""Finding and loading the manifests of a workspace, memoised per run."""

from __future__ import annotations

import posixpath
from collections.abc import Callable, Iterable
from typing import Any, TypeVar

from ztsa.context import Context
from ztsa.host import ProbeError
from ztsa.manifests import MAX_LOCK_BYTES
from ztsa.manifests.common import ancestors
from ztsa.walk import all_files

T = TypeVar("T")

NPM_LOCKS = ("package-lock.json", "npm-shrinkwrap.json", "yarn.lock", "pnpm-lock.yaml",
             "bun.lock", "bun.lockb")
PY_LOCKS = ("uv.lock", "poetry.lock", "pdm.lock", "Pipfile.lock", "pylock.toml")


def is_pylock(name: str) -> bool:
    """pylock.toml or pylock.NAME.toml (PEP 751)."""
    return name == "pylock.toml" or (name.startswith("pylock.") and name.endswith(".toml"))


def named(ctx: Context, *names: str) -> list[str]:
    wanted = set(names)
    return [p for p in all_files(ctx) if posixpath.basename(p) in wanted]


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


def load(ctx: Context, rel: str, parser: Callable[[str, str], T],
         limit: int = MAX_LOCK_BYTES) -> T:
    """Parse a workspace file once per run; a failure is remembered and raised again."""
    memo: dict[tuple[str, Any], Any] = ctx.cache.setdefault("parsed", {})
    key = (rel, parser)
    if key not in memo:
        try:
            text = ctx.ws_text(rel, limit)
            if text is None:
                raise ProbeError(rel, "vanished during the audit")
            memo[key] = parser(text, rel)
        except ProbeError as exc:
            memo[key] = exc
    value = memo[key]
    if isinstance(value, ProbeError):
        raise value
    return value  # type: ignore[no-any-return]


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
