"""Prebuilt executables in hooked dependencies.

## What it checks
ELF (`\\x7fELF`) and PE (`MZ`) executables inside the dependencies that run build or
install code: the installed `node_modules` packages that SUP003 reports, and the crates
with build scripts that SUP011 reports. Only the first bytes of each file are read.
A hooked package of more than 20,000 files, or with a directory that cannot be
listed, makes the result unknown: a package is never audited in part.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
A package that both runs an install hook and ships a binary can execute code that no
one can review from source; it is how several npm and crates.io attacks delivered
their payloads.

## How to fix
Prefer packages that build from source or download platform binaries through
pinned, checksummed optional dependencies; review why the binary is there.
"""

from __future__ import annotations

import bisect
import os
import posixpath

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.manifests.rust import crates
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule
from ztsa.walk import all_files, files_below

MAX_FILES = 20_000
_NESTED = frozenset({"node_modules"})


def _magic(head: bytes | None) -> str | None:
    if not head:
        return None
    if head.startswith(b"\x7fELF"):
        return "ELF"
    if head.startswith(b"MZ"):
        return "PE"
    return None


def _tree(ctx: Context, top: str) -> list[str]:
    """Files below a package directory, not entering its own node_modules (the shared
    walk does not enter node_modules at all). More than MAX_FILES, or a directory that
    cannot be listed, is a ProbeError: the package is not audited in part."""
    return files_below(ctx.ws_path(top), top.rstrip("/") + "/", _NESTED, MAX_FILES)


@rule(id="SUP016", slug="prebuilt-executables", severity=Severity.MEDIUM,
      title="Prebuilt executables in hooked dependencies",
      nature=Nature.HYGIENE, actions="W/W/W")
def check(ctx: Context) -> Outcome:
    from ztsa.manifests.scripts import scripted  # lazily: start-up cost

    f = Findings()
    hooked: list[tuple[str, list[str]]] = []  # (package, files to inspect)
    for s in scripted(ctx, f):
        rel = posixpath.join(s.project, s.where) if s.project else s.where
        if "node_modules" in rel and os.path.isdir(ctx.ws_path(rel)):
            files_of = f.attempt(_tree, ctx, rel)
            if files_of is not None:
                hooked.append((s.name, files_of))
    files = sorted(all_files(ctx))  # a crate's files are one range of them: bisect
    for crate in crates(ctx, f):
        if crate.build_script:
            prefix = crate.dir + "/" if crate.dir else ""
            start = bisect.bisect_left(files, prefix)
            end = bisect.bisect_left(files, prefix + "\U0010ffff") if prefix else len(files)
            hooked.append((crate.name, files[start:end]))
    for name, candidates in hooked:
        for rel in candidates:
            kind = _magic(f.attempt(ctx.ws_head, rel, 4))
            if kind:
                f.fail(f"{name} ships the {kind} executable {rel}", path=rel)
    return f.outcome("no prebuilt executable in dependencies that run hooks",
                     f"{len(f.found)} prebuilt executable(s) in hooked dependencies",
                     scope=lambda rel: in_play(ctx, rel))
