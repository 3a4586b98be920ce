"""Rust crates of the workspace: build scripts and proc-macro sources (SUP009-SUP011, SUP016)."""

from __future__ import annotations

import posixpath

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.project import load, named
from ztsa.walk import all_files

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.manifests.cargo import CargoToml


class Crate:
    __slots__ = ("build_script", "dir", "manifest", "proc_macro", "sources")

    def __init__(self, dir: str, manifest: CargoToml | None, build_script: str | None,
                 proc_macro: bool, sources: list[str] | None = None) -> None:
        self.dir = dir
        self.manifest = manifest
        self.build_script = build_script
        self.proc_macro = proc_macro
        self.sources: list[str] = sources or []  # files to scan

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
            script = cand if cand in set(files) else None
        if script is None and not ct.proc_macro:
            continue
        crate = Crate(d, ct, script, ct.proc_macro)
        if script:
            crate.sources.append(script)
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
