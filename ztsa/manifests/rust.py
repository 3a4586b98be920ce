"""Rust crates of the workspace: build scripts and proc-macro sources (SUP009-SUP011, SUP016)."""

from __future__ import annotations

import posixpath

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.project import file_set, load, named
from ztsa.walk import all_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.manifests.cargo import CargoToml


class Crate:
    __slots__ = ("build_deps", "build_script", "dir", "manifest", "proc_macro", "sources")

    def __init__(self, dir: str, manifest: CargoToml | None, build_script: str | None,
                 proc_macro: bool, sources: list[str] | None = None) -> None:
        self.dir = dir
        self.manifest = manifest
        self.build_script = build_script
        self.proc_macro = proc_macro
        self.sources: list[str] = sources or []  # files to scan
        # the sources of the repository's crates [build-dependencies] names by path (their
        # code runs in the build script: SUP010 reads them)
        self.build_deps: list[str] = []

    @property
    def name(self) -> str:
        if self.manifest and self.manifest.name:
            return self.manifest.name
        return posixpath.basename(self.dir) or "(workspace root)"


def crates(ctx: Context, f: Findings) -> list[Crate]:
    """Crates with a build script or a proc-macro library; every stray build.rs too."""
    cached = ctx.cache.get("crates")
    if isinstance(cached, list):
        return cached
    files = all_files(ctx)
    out: dict[str, Crate] = {}
    tomls = named(ctx, "Cargo.toml")
    if tomls:  # the parser only when there is something to parse
        from ztsa.manifests.cargo import parse_cargo_toml
    for rel in tomls:
        d = posixpath.dirname(rel)
        ct = f.attempt(load, ctx, rel, parse_cargo_toml, MAX_MANIFEST_BYTES)
        if ct is None or not ct.package:
            continue
        build = ct.package.get("build")
        script: str | None = None
        if isinstance(build, str):
            script = posixpath.join(d, build) if d else build
        elif build is not False:
            cand = posixpath.join(d, "build.rs") if d else "build.rs"
            script = cand if cand in file_set(ctx) else None
        if script is None and not ct.proc_macro:
            continue
        crate = Crate(d, ct, script, ct.proc_macro)
        if script:
            crate.sources += _with_modules(ctx, script, file_set(ctx))
            crate.build_deps = _path_build_deps(ctx, f, d, ct, files)
        if ct.proc_macro:
            src = posixpath.join(d, "src/") if d else "src/"
            crate.sources += [p for p in files if p.startswith(src) and p.endswith(".rs")]
        out[d] = crate
    packages = {posixpath.dirname(t) for t in tomls}
    for rel in named(ctx, "build.rs"):
        d = posixpath.dirname(rel)
        if d in out or any(c.build_script == rel for c in out.values()):
            continue
        # a build.rs inside a package (crates/uv/tests/build/build.rs) is one of its
        # modules: a package's build script is its root's build.rs or what `build` names
        above = d
        while above and posixpath.dirname(above) not in packages:
            above = posixpath.dirname(above)
        if d in packages or not above:
            out[d] = Crate(d, None, rel, False, [rel])
    result = sorted(out.values(), key=lambda c: c.dir)
    ctx.cache["crates"] = result
    return result


def _with_modules(ctx: Context, script: str, files: set[str], limit: int = 64) -> list[str]:
    """A build script and the files it compiles in: its `mod name;` (name.rs or
    name/mod.rs beside it, or a `#[path]`) and `include!("file")`, followed through the
    files they name, at most `limit` files."""
    import re

    out: list[str] = []
    todo = [script]
    while todo and len(out) < limit:
        rel = todo.pop(0)
        if rel in out:
            continue
        out.append(rel)
        try:
            text = ctx.ws_text(rel, MAX_MANIFEST_BYTES) or ""
        except Exception:
            continue
        d = posixpath.dirname(rel)
        here = d if posixpath.basename(rel) in ("build.rs", "main.rs", "mod.rs", "lib.rs") \
            else posixpath.join(d, posixpath.basename(rel)[:-3])
        for path, name in re.findall(
                r'(?:#\[path\s*=\s*"([^"]+)"\]\s*)?\bmod\s+([A-Za-z_]\w*)\s*;', text):
            cands = [posixpath.normpath(posixpath.join(d, path))] if path else [
                posixpath.join(here, f"{name}.rs"), posixpath.join(here, name, "mod.rs")]
            todo += [c for c in cands if c in files]
        for inc in re.findall(r'\binclude!\s*\(\s*"([^"]+\.rs)"\s*\)', text):
            c = posixpath.normpath(posixpath.join(d, inc))
            if c in files:
                todo.append(c)
    return out


def _path_build_deps(ctx: Context, f: Findings, d: str, ct: CargoToml,
                     files: list[str]) -> list[str]:
    """The sources of the crates in the repository that [build-dependencies] name by
    path: their code runs inside the build script."""
    bdeps = ct.data.get("build-dependencies")
    out: list[str] = []
    for spec in bdeps.values() if isinstance(bdeps, dict) else ():
        path = spec.get("path") if isinstance(spec, dict) else None
        if not isinstance(path, str):
            continue
        dep = posixpath.normpath(posixpath.join(d, path)) if d else posixpath.normpath(path)
        if dep.startswith(".."):
            continue
        src = posixpath.join(dep, "src") + "/" if dep != "." else "src/"
        out += [p for p in files if p.startswith(src) and p.endswith(".rs")][:256]
    return out
