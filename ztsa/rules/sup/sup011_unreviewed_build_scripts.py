"""Unreviewed build scripts.

## What it checks
Crates in the workspace (including vendored ones) that have a build script or are
procedural macros, and are not listed in cargo-deny's `[bans.build]
allow-build-scripts` (`deny.toml`) or the ztsa policy; and executables or scripts
(an executable bit or a `#!` line) shipped inside such crates.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
Every build script is a program that runs on `cargo build`. An explicit allowlist
means someone looked at each one, and a new one shows up as a change to review.

## How to fix
Review the build script, then list the crate under `[bans.build]
allow-build-scripts` in `deny.toml` (and run `cargo deny check bans` in CI).
"""

from __future__ import annotations

import posixpath
import stat

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.project import load, nearest
from ztsa.manifests.rust import Crate, crates
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.parsing import load_toml
from ztsa.registry import rule
from ztsa.walk import all_files


def shipped_programs(ctx: Context, f: Findings, crate: Crate) -> list[str]:
    prefix = crate.dir + "/" if crate.dir else ""
    out = []
    for rel in all_files(ctx):
        if not rel.startswith(prefix) or rel == crate.build_script:
            continue
        if crate.dir == "" and "/" in rel and any(
                c.dir and rel.startswith(c.dir + "/") for c in crates(ctx, f)):
            continue
        st = f.attempt(ctx.ws_lstat, rel)
        if st is None or not stat.S_ISREG(st.st_mode):
            continue
        if st.st_mode & 0o111:
            out.append(rel)
            continue
        head = f.attempt(ctx.ws_head, rel, 2)
        if head is not None and head.startswith(b"#!") and not rel.endswith(".rs"):
            out.append(rel)
    return out


@rule(id="SUP011", slug="unreviewed-build-scripts", title="Unreviewed build scripts",
      severity=Severity.MEDIUM,
      nature=Nature.HYGIENE, actions="W/W/W")
def check(ctx: Context) -> Outcome:
    from ztsa.manifests.cargo import deny_allowed_build_scripts  # lazily: start-up cost

    f = Findings()
    policy = set(ctx.options.get("allow_build_scripts") or ())
    for crate in crates(ctx, f):
        deny_rel = nearest(ctx, crate.dir, ["deny.toml"])
        allowed = set(policy)
        if deny_rel:
            deny = f.attempt(load, ctx, deny_rel, load_toml, MAX_MANIFEST_BYTES)
            if deny is None:
                continue  # cannot tell whether it is allowlisted: unknown, recorded
            allowed |= deny_allowed_build_scripts(deny)
        if crate.name in allowed:
            continue
        what = "build script" if crate.build_script else "proc macro"
        path = crate.build_script or (crate.manifest.path if crate.manifest else crate.dir)
        f.fail(f"{crate.name} has a {what} not allowlisted in deny.toml "
               "[bans.build] allow-build-scripts", path=path)
        for prog in shipped_programs(ctx, f, crate):
            f.fail(f"{crate.name} ships the program {posixpath.basename(prog)}", path=prog)
    return f.outcome("every build script is allowlisted",
                     f"{len(f.found)} unreviewed build script(s) or shipped program(s)",
                     scope=lambda rel: in_play(ctx, rel))
