"""Registry or index override.

## What it checks
Settings that send installs to another package source: `.npmrc` `registry=` and
`@scope:registry=` (other than the npm registry itself; the registry of a scope the
project publishes under is advice when the lockfile beside it holds every package of
that scope the project depends on, each with its integrity hash: the bytes are fixed
wherever they come from), `.yarnrc` `registry`,
`.yarnrc.yml` `npmRegistryServer` (also per scope), requirements options `-i`,
`--index-url`, `--extra-index-url` (other than PyPI itself), `--trusted-host`,
`-f`/`--find-links`, `[[tool.uv.index]]` and `index-url`/`extra-index-url` under
`[tool.uv]` (other than PyPI; an `explicit = true` index, which uv asks only for the
packages `[tool.uv.sources]` pins to it, redirects no other name and is not counted),
`[[tool.poetry.source]]` (other than the one Poetry names `PyPI`), `.cargo/config.toml`
source replacement (`replace-with`) and `[registries]`, and the environment variables
`PIP_*INDEX*`, `UV_*INDEX*`, `PIP_TRUSTED_HOST`, `PIP_FIND_LINKS` and `npm_config_registry`.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
Whoever controls the index chooses the code behind every package name: an extra
index enables dependency confusion, `--trusted-host` turns off TLS checks, and a
repository can redirect your installs to a host it controls.

## How to fix
Remove the override from the repository, or, for a registry you operate, pin it in
your own user configuration and keep integrity hashes in the lockfile.
"""

from __future__ import annotations

import posixpath

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.common import load_yaml
from ztsa.manifests.project import load, matching, named, named_where
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.parsing import line_of, load_toml, parse_ini_pairs
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEFAULT_NPM = ("https://registry.npmjs.org", "https://registry.yarnpkg.com")
DEFAULT_PYPI = ("https://pypi.org/simple", "https://pypi.python.org/simple")


def _pypi(url: object) -> bool:
    """The default index itself (PyPI's simple API), named explicitly: no override."""
    return isinstance(url, str) and url.strip().rstrip("/") in DEFAULT_PYPI
ENV = LazyRe(r"^(PIP_\w*INDEX\w*|UV_\w*INDEX\w*|PIP_TRUSTED_HOST|PIP_FIND_LINKS|"
             r"npm_config_registry|NPM_CONFIG_REGISTRY)$")


def _non_default(url: str) -> bool:
    return url.rstrip("/") not in DEFAULT_NPM


def _npmrc(ctx: Context, f: Findings, rel: str) -> None:
    text = f.attempt(ctx.ws_text, rel, MAX_MANIFEST_BYTES)
    for key, value, line in parse_ini_pairs(text or ""):
        if (key == "registry" or key.endswith(":registry")) and _non_default(value):
            scope = key.rpartition(":")[0]
            if scope.startswith("@") and f.attempt(_scope_locked, ctx, rel, scope):
                f.advise(f"{key} = {value[:80]}: the lockfile pins every {scope} package "
                         "to its bytes, so the override serves only a package added later "
                         "(and publishing)", path=rel, line=line)
                continue
            f.fail(f"{key} = {value[:80]}", path=rel, line=line)


NPM_LOCKS = ("package-lock.json", "npm-shrinkwrap.json", "pnpm-lock.yaml", "yarn.lock",
             "bun.lock")


def _scope_locked(ctx: Context, rel: str, scope: str) -> bool:
    """gemini-cli's `@google:registry=` (Google's publish proxy): does the project publish
    under that scope (a package.json of its own is named in it), and does the lockfile
    beside the .npmrc hold, with an integrity hash, every package of that scope that the
    project's package.json files (its own packages aside) depend on? Then an install
    fetches bytes the lockfile fixes, wherever they come from."""
    from ztsa.manifests import MAX_MANIFEST_BYTES as LIMIT
    from ztsa.manifests.locks import entries
    from ztsa.manifests.npm import parse_package_json

    d = posixpath.dirname(rel)
    locks = [posixpath.join(d, n) for n in NPM_LOCKS if ctx.ws_exists(posixpath.join(d, n))]
    if not locks:
        return False
    locked: set[str] = set()
    for lock in locks:
        for e in entries(ctx, lock):
            if e.name.startswith(scope + "/"):
                if e.kind in ("registry", "url") and not e.integrity:
                    return False
                locked.add(e.name)
    manifests = [p for p in named(ctx, "package.json")
                 if (not d or p.startswith(d + "/")) and "node_modules/" not in p]
    own, wanted = set(), set()
    for pj_rel in manifests:
        pj = load(ctx, pj_rel, parse_package_json, LIMIT)
        own.add(str(pj.data.get("name")))
        wanted |= {n for _f, n, _s in pj.deps() if n.startswith(scope + "/")}
    # the project publishes under that scope (its own packages' names): the registry is
    # where it publishes; a scope the project only consumes stays an override
    mine = any(n.startswith(scope + "/") for n in own)
    return mine and bool(locked) and not (wanted - own - locked)


def _yarnrc_yml(ctx: Context, f: Findings, rel: str) -> None:
    doc: Any = f.attempt(load, ctx, rel, load_yaml, MAX_MANIFEST_BYTES)
    if not isinstance(doc, dict):
        return
    text = ctx.ws_text(rel, MAX_MANIFEST_BYTES) or ""
    server = doc.get("npmRegistryServer")
    if isinstance(server, str) and _non_default(server):
        f.fail(f"npmRegistryServer = {server[:80]}", path=rel,
               line=line_of(text, "npmRegistryServer"))
    scopes = doc.get("npmScopes")
    for scope, cfg in scopes.items() if isinstance(scopes, dict) else []:
        if isinstance(cfg, dict) and isinstance(cfg.get("npmRegistryServer"), str):
            f.fail(f"npmScopes.{scope}.npmRegistryServer = {cfg['npmRegistryServer'][:80]}",
                   path=rel, line=line_of(text, str(scope)))


def _cargo_config(ctx: Context, f: Findings, rel: str) -> None:
    doc = f.attempt(load, ctx, rel, load_toml, MAX_MANIFEST_BYTES)
    if doc is None:
        return
    text = ctx.ws_text(rel, MAX_MANIFEST_BYTES) or ""
    for name, src in (doc.get("source") or {}).items():
        if isinstance(src, dict) and "replace-with" in src:
            f.fail(f"[source.{name}] replace-with = {src['replace-with']}", path=rel,
                   line=line_of(text, "replace-with"))
    if doc.get("registries"):
        f.fail("[registries] defines alternative registries: "
               + ", ".join(map(str, doc["registries"])), path=rel,
               line=line_of(text, "[registries"))


@rule(id="SUP007", slug="registry-override", title="Registry or index override",
      severity=Severity.HIGH,
      nature=Nature.SUPPLY_ATTACK, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    from ztsa.manifests.python import parse_pyproject, parse_requirements  # lazily: start-up cost

    f = Findings()
    for rel in named(ctx, ".npmrc"):
        _npmrc(ctx, f, rel)
    for rel in named(ctx, ".yarnrc"):
        text = f.attempt(ctx.ws_text, rel, MAX_MANIFEST_BYTES) or ""
        for i, line in enumerate(text.splitlines(), start=1):
            parts = line.split(None, 1)
            if parts and parts[0] == "registry" and len(parts) == 2 and \
                    _non_default(parts[1].strip('"')):
                f.fail(f"registry {parts[1][:80]}", path=rel, line=i)
    for rel in named(ctx, ".yarnrc.yml"):
        _yarnrc_yml(ctx, f, rel)
    for rel in matching(ctx, lambda p: p.endswith(".cargo/config.toml")
                        or p.endswith(".cargo/config")):
        _cargo_config(ctx, f, rel)
    for rel in named_where(ctx, lambda b: b.startswith(("requirements", "constraints"))
                           and b.endswith((".txt", ".in"))):
        rf = f.attempt(load, ctx, rel, parse_requirements, MAX_MANIFEST_BYTES)
        for option, value, line in rf.options if rf else []:
            if option in ("--index-url", "--extra-index-url") and _pypi(value):
                continue
            if option in ("--index-url", "--extra-index-url", "--trusted-host",
                          "--find-links"):
                f.fail(f"{option} {value[:80]}", path=rel, line=line)
    for rel in named(ctx, "pyproject.toml"):
        pp = f.attempt(load, ctx, rel, parse_pyproject, MAX_MANIFEST_BYTES)
        if pp is None:
            continue
        for index in pp.table("tool", "uv", "index") or []:
            # an explicit index serves only the packages [tool.uv.sources] pins to it:
            # the project's own choice of source for them, like a URL dependency
            if isinstance(index, dict) and not _pypi(index.get("url")) and \
                    index.get("explicit") is not True:
                f.fail(f"[[tool.uv.index]] {index.get('url', '?')}", path=rel,
                       line=pp.line("[[tool.uv.index]]"))
        for key in ("index-url", "extra-index-url"):
            value = pp.table("tool", "uv", key)
            if value and not _pypi(value) and not (
                    isinstance(value, list) and all(_pypi(v) for v in value)):
                f.fail(f"[tool.uv] {key}", path=rel, line=pp.line(key))
        for source in pp.table("tool", "poetry", "source") or []:
            # Poetry's own name for PyPI, without a url of its own: PyPI's priority set
            pypi = str(source.get("name", "")).lower() == "pypi" if isinstance(
                source, dict) else False
            if isinstance(source, dict) and not (
                    pypi and ("url" not in source or _pypi(source.get("url")))):
                f.fail(f"[[tool.poetry.source]] {source.get('url', source.get('name', '?'))}",
                       path=rel, line=pp.line("[[tool.poetry.source]]"))
    for name in sorted(ctx.host.environ):
        if ENV.match(name) and ctx.host.environ[name]:
            f.fail(f"environment variable {name} is set")
    return f.outcome("no registry or index override",
                     f"{len(f.found)} registry or index override(s)",
                     scope=lambda rel: in_play(ctx, rel))
