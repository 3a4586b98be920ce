"""Which projects of the workspace the root's install, build and test use.

A manifest under an examples, fixtures, docs, templates or benchmarks directory that no
root workspace lists (npm/Yarn/Bun `workspaces`, `pnpm-workspace.yaml`, Cargo's
`[workspace] members`, uv's `[tool.uv.workspace] members`) is elsewhere: a test
fixture, a sample for readers, a template copied into someone else's project. Rules
still report what they find there, as advisory (`Findings.outcome(scope=...)`)."""

from __future__ import annotations

import posixpath

from ztsa.context import Context
from ztsa.host import ProbeError
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.project import load

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ELSEWHERE = frozenset({
    "examples", "example", "fixtures", "fixture", "__fixtures__", "testdata", "test-data",
    "docs", "doc", "docs-site", "website", "templates", "template", "benchmarks",
    "benchmark", "samples", "sample", "demos", "demo", "playground"})


def _members(ctx: Context) -> list[str]:
    """The workspace member globs the root manifests name (cached per run)."""
    cached = ctx.cache.get("scope.members")
    if cached is not None:
        return list(cached)
    globs: list[str] = []

    def attempt(rel: str, parser: Any, pick: Any) -> None:
        if not ctx.ws_exists(rel):
            return
        try:
            doc = load(ctx, rel, parser, MAX_MANIFEST_BYTES)
        except ProbeError:
            return
        globs.extend(str(g).strip("/").removeprefix("./") for g in pick(doc) or [])

    from ztsa.manifests.cargo import parse_cargo_toml
    from ztsa.manifests.common import load_yaml
    from ztsa.manifests.npm import parse_package_json
    from ztsa.manifests.python import parse_pyproject

    attempt("package.json", parse_package_json, lambda pj: pj.workspaces)
    attempt("pnpm-workspace.yaml", load_yaml,
            lambda doc: doc.get("packages") if isinstance(doc, dict) else None)
    attempt("Cargo.toml", parse_cargo_toml,
            lambda ct: (ct.data.get("workspace") or {}).get("members")
            if isinstance(ct.data.get("workspace"), dict) else None)
    attempt("pyproject.toml", parse_pyproject,
            lambda pp: pp.table("tool", "uv", "workspace", "members"))
    ctx.cache["scope.members"] = tuple(globs)
    return globs


def in_play(ctx: Context, rel: str) -> bool:
    """Is the file rel part of what the root installs, builds or tests?"""
    d = posixpath.dirname(rel)
    if not any(part.lower() in ELSEWHERE for part in d.split("/") if part):
        return True
    import fnmatch  # only for a path in such a directory

    return any(fnmatch.fnmatchcase(d, g) or d == g or d.startswith(g + "/")
               for g in _members(ctx) if g and not g.startswith("!"))
