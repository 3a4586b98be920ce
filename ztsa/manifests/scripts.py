"""Which dependencies run install scripts, and who allowed them (SUP003, SUP016); the
install hooks of the workspace's own package.json files (SUP004, SUP017, scope)."""

from __future__ import annotations

import os
import posixpath
import re

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.host import ProbeError
from ztsa.lazy import LazyRe
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.project import load, named
from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterator
    from typing import Any

    from ztsa.manifests.npm import PackageJson

MAX_INSTALLED = 20_000


class Scripted(NamedTuple):
    name: str
    project: str  # directory of the lockfile ("" = root)
    where: str  # e.g. node_modules/esbuild
    source: str  # the file that says so
    line: int | None
    manager: str  # npm, yarn, pnpm, bun
    allowed_by: str | None  # "lavamoat.allowScripts (package.json:12)" or None


class Allowlist:
    __slots__ = ("denied", "names")

    def __init__(self, names: dict[str, str], denied: set[str]) -> None:
        self.names = names  # package -> source description
        self.denied = denied


def _root_package(ctx: Context, f: Findings, d: str) -> PackageJson | None:
    from ztsa.manifests.npm import parse_package_json

    rel = posixpath.join(d, "package.json") if d else "package.json"
    if not ctx.ws_exists(rel):
        return None
    return f.attempt(load, ctx, rel, parse_package_json, MAX_MANIFEST_BYTES)


def allowlist(ctx: Context, f: Findings, d: str, pj: PackageJson | None) -> Allowlist:
    from ztsa.manifests.common import load_yaml
    from ztsa.manifests.pnpm import only_built

    al = Allowlist({}, set())
    for name, value in (ctx.options.get("allow_scripts") or {}).items():
        al.names[name] = f"ztsa policy ({value})"
    if pj is None:
        return al
    data = pj.data
    lava = (data.get("lavamoat") or {}).get("allowScripts") if isinstance(
        data.get("lavamoat"), dict) else None
    if isinstance(lava, dict):
        for key, value in lava.items():
            name = str(key).split(">")[-1]
            quoted = '"' + str(key) + '"'
            where = f"lavamoat.allowScripts ({pj.path}:{pj.line(quoted) or '?'})"
            if value is True:
                al.names.setdefault(name, where)
            else:
                al.denied.add(name)
    pnpm_cfg = data.get("pnpm")
    for name in only_built(pnpm_cfg) or []:
        al.names.setdefault(name, f"pnpm.onlyBuiltDependencies ({pj.path})")
    ws_rel = posixpath.join(d, "pnpm-workspace.yaml") if d else "pnpm-workspace.yaml"
    if ctx.ws_exists(ws_rel):
        ws = f.attempt(load, ctx, ws_rel, load_yaml, MAX_MANIFEST_BYTES)
        for name in only_built(ws) or []:
            al.names.setdefault(name, f"onlyBuiltDependencies ({ws_rel})")
    meta = data.get("dependenciesMeta")
    if isinstance(meta, dict):
        for key, value in meta.items():
            name = re.sub(r"(?<=.)@.*$", "", str(key))
            if isinstance(value, dict) and value.get("built") is True:
                al.names.setdefault(name, f"dependenciesMeta.built ({pj.path})")
            elif isinstance(value, dict) and value.get("built") is False:
                al.denied.add(name)
    trusted = data.get("trustedDependencies")
    if isinstance(trusted, list):
        for name in trusted:
            al.names.setdefault(str(name), f"trustedDependencies ({pj.path})")
    return al


def _installed(ctx: Context, d: str) -> list[tuple[str, str]] | None:
    """(name, node_modules path) of installed packages with install scripts, or None
    when there is no node_modules directory."""
    from ztsa.manifests.npm import LIFECYCLE, parse_package_json

    nm = posixpath.join(d, "node_modules") if d else "node_modules"
    root = ctx.ws_path(nm)
    if not os.path.isdir(root) or os.path.islink(root):
        return None
    out: list[tuple[str, str]] = []
    stack = [nm]
    seen = 0
    while stack:
        cur = stack.pop()
        names = _listing(ctx, cur)
        for n in names:
            if n == ".pnpm" and cur == nm:
                # pnpm's layout: each package really lies in .pnpm/NAME@VERSION/node_modules
                # (what node_modules holds beside it are links)
                for entry in _listing(ctx, f"{cur}/.pnpm"):
                    store = f"{cur}/.pnpm/{entry}/node_modules"
                    if entry != "node_modules" and os.path.isdir(ctx.ws_path(store)) and \
                            not os.path.islink(ctx.ws_path(f"{cur}/.pnpm/{entry}")):
                        stack.append(store)
                continue
            if n.startswith("."):
                continue
            rel = f"{cur}/{n}"
            real = ctx.ws_path(rel)
            if os.path.islink(real) or not os.path.isdir(real):
                continue
            if n.startswith("@") and cur.endswith("node_modules"):
                stack.append(rel)
                continue
            seen += 1
            if seen > MAX_INSTALLED:
                raise ProbeError(nm, f"more than {MAX_INSTALLED} installed packages")
            pj_rel = f"{rel}/package.json"
            text = ctx.ws_text(pj_rel, MAX_MANIFEST_BYTES)
            if text is not None:
                pj = parse_package_json(text, pj_rel)
                name = str(pj.data.get("name") or rel.rsplit("node_modules/", 1)[-1])
                gyp = ctx.ws_exists(f"{rel}/binding.gyp") and pj.data.get("gypfile") is not False
                if any(s in pj.scripts for s in LIFECYCLE) or gyp:
                    out.append((name, rel))
            if os.path.isdir(real + "/node_modules"):
                stack.append(rel + "/node_modules")
    return out


def _pnpm_builds_all(ctx: Context, d: str, pj: PackageJson | None) -> bool:
    """pnpm 10's `dangerouslyAllowAllBuilds: true` (pnpm-workspace.yaml, or package.json's
    "pnpm" object): every dependency's build scripts run again, as before pnpm 10."""
    from ztsa.manifests.common import load_yaml

    cfg = pj.data.get("pnpm") if pj is not None else None
    if isinstance(cfg, dict) and cfg.get("dangerouslyAllowAllBuilds") is True:
        return True
    ws_rel = posixpath.join(d, "pnpm-workspace.yaml") if d else "pnpm-workspace.yaml"
    if not ctx.ws_exists(ws_rel):
        return False
    ws = load(ctx, ws_rel, load_yaml, MAX_MANIFEST_BYTES)
    return isinstance(ws, dict) and ws.get("dangerouslyAllowAllBuilds") is True


def _listing(ctx: Context, rel: str) -> list[str]:
    try:
        return sorted(os.listdir(ctx.ws_path(rel)))
    except OSError as exc:
        raise ProbeError(rel, exc.strerror or "cannot list") from exc


def _npmrc_ignores_scripts(ctx: Context, d: str) -> bool:
    rel = posixpath.join(d, ".npmrc") if d else ".npmrc"
    text = ctx.ws_text(rel, MAX_MANIFEST_BYTES) or ""
    from ztsa.parsing import npmrc_top_level

    return npmrc_top_level(text).get("ignore-scripts", ("", 0))[0] == "true"


def _yarn_scripts_disabled(ctx: Context, d: str) -> bool:
    from ztsa.manifests.common import load_yaml

    rel = posixpath.join(d, ".yarnrc.yml") if d else ".yarnrc.yml"
    text = ctx.ws_text(rel, MAX_MANIFEST_BYTES)
    doc: Any = load_yaml(text, rel) if text else None
    return isinstance(doc, dict) and doc.get("enableScripts") is False


def _pnpm_major(ctx: Context, f: Findings, d: str, pj: PackageJson | None) -> int | None:
    """pnpm's major version from the nearest `packageManager`, at d or above (Corepack
    reads the nearest package.json that names one), or its `devEngines.packageManager`
    (`{"name": "pnpm", "version": "^10"}`: the least major the range admits)."""
    here: str | None = d
    while here is not None:
        pkg = pj if here == d else _root_package(ctx, f, here)
        pm = pkg.data.get("packageManager") if pkg else None
        if isinstance(pm, str):
            m = re.match(r"^pnpm@(\d+)", pm)
            return int(m.group(1)) if m else None
        dev = pkg.data.get("devEngines") if pkg else None
        engine = dev.get("packageManager") if isinstance(dev, dict) else None
        if isinstance(engine, dict) and isinstance(engine.get("name"), str):
            version = str(engine.get("version") or "")
            m = re.match(r"^\s*(?:\^|~|>=|=)?\s*v?(\d+)", version)
            return int(m.group(1)) if engine["name"] == "pnpm" and m else None
        here = None if not here else posixpath.dirname(here)
    return None


def scripted(ctx: Context, f: Findings) -> list[Scripted]:
    """Dependencies that run install scripts, per lockfile. Undecidable projects are
    recorded in ``f`` as errors (unknown)."""
    cached = ctx.cache.get("scripted")
    if cached is not None:
        out_cached, errors = cached
        for e, where in errors:
            f.error(e, where)
        return list(out_cached)
    local = Findings()
    out: list[Scripted] = []
    locks = named(ctx, "package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
                  "pnpm-lock.yaml", "bun.lock", "bun.lockb")
    if locks:  # parsers only when there is something to parse: start-up cost matters
        from ztsa.manifests.bun import parse_bun_lock
        from ztsa.manifests.lock import entry_line
        from ztsa.manifests.npm import parse_package_lock, skipped_here
        from ztsa.manifests.pnpm import parse_pnpm_lock
        from ztsa.manifests.yarn import parse_yarn_lock
    for lock_rel in locks:
        d = posixpath.dirname(lock_rel)
        base = posixpath.basename(lock_rel)
        pj = _root_package(ctx, local, d)
        al = allowlist(ctx, local, d, pj)
        manager = {"yarn.lock": "yarn", "pnpm-lock.yaml": "pnpm", "bun.lock": "bun",
                   "bun.lockb": "bun"}.get(base, "npm")
        if manager == "npm" and local.attempt(_npmrc_ignores_scripts, ctx, d):
            continue
        found: list[tuple[str, str, str, int | None]] = []  # name, where, source, line
        decided = False
        if manager == "npm":
            lock = local.attempt(load, ctx, lock_rel, parse_package_lock)
            if lock is None:
                continue
            if lock.version >= 2:
                decided = True
                # a package npm never installs on this machine (fsevents: darwin only)
                scripted_entries = [e for e in lock.entries if e.install_script
                                    and skipped_here(e.platform) is None]
                text = ctx.ws_text(lock_rel) if scripted_entries else None
                found = [(e.name, e.key or f"node_modules/{e.name}", lock_rel,
                          entry_line(text, e)) for e in scripted_entries]
        elif manager == "pnpm":
            plock = local.attempt(load, ctx, lock_rel, parse_pnpm_lock)
            if plock is None:
                continue
            if plock.records_build:
                decided = True
                found = [(e.name, f"node_modules/.pnpm/{e.name}@{e.version}", lock_rel, e.line)
                         for e in plock.entries if e.install_script
                         and skipped_here(e.platform) is None]
            elif (any(src.startswith(("pnpm.onlyBuiltDependencies", "onlyBuiltDependencies"))
                      for src in al.names.values()) or (_pnpm_major(ctx, local, d, pj) or 0) >= 10
                  ) and not local.attempt(_pnpm_builds_all, ctx, d, pj):
                decided = True  # only the listed packages are built (pnpm 10 default)
        elif manager == "yarn":
            if local.attempt(_yarn_scripts_disabled, ctx, d):
                continue
            if local.attempt(load, ctx, lock_rel, parse_yarn_lock) is None:
                continue
        elif manager == "bun":
            if base == "bun.lock" and local.attempt(load, ctx, lock_rel, parse_bun_lock) is None:
                continue
            # Bun runs no dependency's lifecycle script unless trustedDependencies names it
            # or it is on Bun's own built-in default list: the ecosystem's allowlist
            decided = True
        if not decided and local.attempt(_installs_nothing, ctx, lock_rel, pj) is True:
            decided = True  # an empty lockfile of a project that declares nothing
        if not decided:
            try:
                installed = _installed(ctx, d)
            except ProbeError as exc:
                local.error(exc)
                continue
            if installed is None and ctx.options.get("lookup") and base != "bun.lockb":
                try:  # --lookup: the registry's metadata says (sends only then)
                    found = _looked_up(ctx, lock_rel, d)
                except ProbeError as exc:
                    local.error(exc, lock_rel)
                    continue
            elif installed is None:
                if base == "bun.lockb":
                    local.error(f"{lock_rel}: binary bun.lockb cannot be read, and no "
                                "node_modules to inspect", lock_rel)
                else:
                    local.error(f"{lock_rel}: the {manager} lockfile does not record install "
                                "scripts and there is no node_modules to inspect: install "
                                "with --ignore-scripts and check again, or ask the registry "
                                "with --lookup", lock_rel)
                continue
            else:
                found = [(n, w, f"{w}/package.json", None) for n, w in installed]
        for name, where, source, line in found:
            if name in al.denied:
                continue
            out.append(Scripted(name, d, where, source, line, manager, al.names.get(name)))
    errors = tuple(zip(local.errors, local.error_paths, strict=True))
    ctx.cache["scripted"] = (tuple(out), errors)
    for e, where in errors:  # with the file each is about: scope judges it
        f.error(e, where)
    return out


def _installs_nothing(ctx: Context, lock_rel: str, pj: PackageJson | None) -> bool:
    """Does an install here install no package at all: the lockfile holds no entry but
    the project's own (its root, workspaces, links) and the package.json beside it, which
    names no workspaces, declares no dependency (else the lockfile is stale, and an
    install would resolve them afresh)?"""
    from ztsa.manifests.locks import entries as lock_entries

    if pj is None or pj.deps() or pj.workspaces:
        return False
    return all(e.kind == "link" for e in lock_entries(ctx, lock_rel))


def _registry(ctx: Context, d: str) -> str:
    """The npm registry the project's .npmrc (or .yarnrc.yml's npmRegistryServer) names,
    nearest first, else the public one."""
    for rel in (posixpath.join(d, ".npmrc") if d else ".npmrc", ".npmrc",
                posixpath.join(d, ".yarnrc.yml") if d else ".yarnrc.yml", ".yarnrc.yml"):
        text = ctx.ws_text(rel, 1 << 20) if ctx.ws_exists(rel) else None
        m = re.search(r'(?m)^\s*(?:registry\s*=|npmRegistryServer:)\s*["\']?([^\s"\']+)',
                      text or "")
        if m:
            return m.group(1)
    return "https://registry.npmjs.org"


def _looked_up(ctx: Context, lock_rel: str, d: str) -> list[tuple[str, str, str, int | None]]:
    """--lookup: the lockfile's registry packages whose metadata names an install script."""
    from ztsa.manifests.locks import entries as lock_entries
    from ztsa.manifests.npm import skipped_here

    # not a package the manager never installs here (Yarn's conditions, pnpm's os/cpu)
    entries = [e for e in lock_entries(ctx, lock_rel) if e.kind == "registry" and e.version
               and skipped_here(e.platform) is None]
    pkgs = list(dict.fromkeys((e.name, e.version) for e in entries))
    if len(pkgs) > 5000:
        raise ProbeError(lock_rel, f"{len(pkgs)} packages: more than --lookup asks about")
    has = ctx.host.registry_scripts(_registry(ctx, d), pkgs)
    lines = {(e.name, e.version): e.line for e in entries}
    return [(n, f"{n}@{v} (registry metadata)", lock_rel, lines.get((n, v)))
            for n, v in pkgs if has.get((n, v))]


def how_to_allow(s: Scripted) -> str:
    return {
        "npm": f'"lavamoat": {{"allowScripts": {{"{s.name}": true}}}} in package.json',
        "pnpm": f'onlyBuiltDependencies: ["{s.name}"] in pnpm-workspace.yaml',
        "yarn": f'"dependenciesMeta": {{"{s.name}": {{"built": true}}}} in package.json',
        "bun": f'"trustedDependencies": ["{s.name}"] in package.json',
    }[s.manager]


HOOKS = ("preinstall", "install", "postinstall", "prepare")
# gyp's command expansions, run by the shell (or Python) while node-gyp configures
GYP_COMMAND = LazyRe(r"<!@?(?:pymod_do_main)?\(((?:[^()\n]|\([^()\n]*\))*)\)")
# a script of the same package.json run by name; yarn's and pnpm's bare `yarn X` too
RUNS_SCRIPT = LazyRe(r"(?:^|[\s;&|(])(?:(?:npm|pnpm|bun)\s+(?:run|run-script)|yarn(?:\s+run)?|"
                     r"pnpm)\s+(?:--?[\w-]+\s+)*(?P<name>[\w:.-]+)")


def install_hooks(ctx: Context, f: Findings) -> Iterator[tuple[str, str, str, int | None]]:
    """(package.json, hook, its command, its line) for the install hooks of every
    package.json of the workspace outside node_modules, and for the scripts they run by
    name ("postinstall -> setup", SUP004 and SUP017)."""
    from ztsa.manifests.npm import parse_package_json  # lazily: start-up cost

    for rel in named(ctx, "package.json"):
        pj = f.attempt(load, ctx, rel, parse_package_json, MAX_MANIFEST_BYTES)
        if pj is None:
            continue
        scripts = pj.scripts
        seen: set[str] = set()
        todo = [(hook, hook) for hook in reversed(HOOKS) if scripts.get(hook)]
        while todo:
            name, how = todo.pop()
            if name in seen:
                continue
            seen.add(name)
            cmd = scripts[name]
            yield rel, how, cmd, pj.line(f'"{name}"')
            called = [m.group("name") for m in RUNS_SCRIPT.finditer(cmd)]
            for c in reversed(called):  # X with its preX and postX, as npm runs them
                for s in (f"post{c}", c, f"pre{c}"):
                    if s in scripts and s not in seen:
                        todo.append((s, f"{how} -> {s}"))
        yield from _implied_gyp(ctx, rel, pj)


def _implied_gyp(ctx: Context, rel: str, pj: PackageJson) -> Iterator[
        tuple[str, str, str, int | None]]:
    """npm's implied `install: node-gyp rebuild` for a package with a binding.gyp and
    neither install nor preinstall, and the commands the binding.gyp has gyp run."""
    gyp = posixpath.join(posixpath.dirname(rel), "binding.gyp")
    if "install" in pj.scripts or "preinstall" in pj.scripts or \
            pj.data.get("gypfile") is False or not ctx.ws_exists(gyp):
        return
    yield rel, "install (implied by binding.gyp)", "node-gyp rebuild", None
    text = ctx.ws_text(gyp, MAX_MANIFEST_BYTES) or ""
    for m in GYP_COMMAND.finditer(text):
        line = text.count("\n", 0, m.start()) + 1
        yield gyp, "install (implied) -> binding.gyp command", m.group(1), line
