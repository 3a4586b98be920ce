"""Requirements not pinned and hashed.

## What it checks
Every requirement in `requirements*.txt` files, and in the files they include with
`-r`, is pinned with `==` (or `===`). In the `dependency` and `untrusted` profiles every
requirement also carries `--hash=sha256:…`. Editable (`-e`), local path, `file:` and
URL requirements are flagged. Files are parsed with `packaging`; nothing is resolved
or downloaded. `requirements*.in` files (pip-compile inputs) are not checked.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
An unpinned requirement installs whatever is newest at install time; a pinned one
without a hash installs whatever bytes the index serves under that version.

## How to fix
Generate the file with hashes: `pip-compile --generate-hashes requirements.in` or
`uv pip compile --generate-hashes`, and install with `pip install --require-hashes`.
"""

from __future__ import annotations

import posixpath

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.host import ProbeError
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.project import load, named_where
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Profile, Severity
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.manifests.python import RequirementsFile


def _resolve(ctx: Context, including: str, target: str) -> str:
    joined = posixpath.normpath(posixpath.join(posixpath.dirname(including), target))
    if joined.startswith("../") or joined == ".." or target.startswith("/"):
        raise ProbeError(including, f"includes {target}, outside the workspace (not followed)")
    return joined


def audit(ctx: Context, f: Findings, rf: RequirementsFile, need_hash: bool) -> None:
    for req in rf.requirements:
        problems = []
        if req.editable:
            problems.append("is editable (-e)")
        elif req.kind != "named":
            problems.append(f"is a {req.kind} requirement")
        elif not req.pinned:
            problems.append(f"is not pinned with == ({req.specifier or 'no version'})")
        if need_hash and not req.hashes:
            problems.append("has no --hash")
        if problems:
            f.fail(f"{req.text[:70]!r} " + " and ".join(problems), path=rf.path, line=req.line)


@rule(id="SUP012", slug="requirements-unpinned", title="Requirements not pinned and hashed",
      severity=Severity.MEDIUM,
      nature=Nature.HYGIENE, actions="W/W/W")
def check(ctx: Context) -> Outcome:
    from ztsa.manifests.python import parse_requirements  # lazily: start-up cost

    f = Findings()
    need_hash = ctx.profile is not Profile.REPO
    todo = named_where(ctx, lambda b: b.startswith("requirements") and b.endswith(".txt"))
    seen: set[str] = set()
    while todo:
        rel = todo.pop(0)
        if rel in seen:
            continue
        seen.add(rel)
        rf = f.attempt(load, ctx, rel, parse_requirements, MAX_MANIFEST_BYTES)
        if rf is None:
            continue
        audit(ctx, f, rf, need_hash)
        for kind, target, _line in rf.includes:
            if kind != "-r":
                continue
            inc = f.attempt(_resolve, ctx, rel, target)
            if inc is None:
                continue
            if not ctx.ws_exists(inc):
                f.error(f"{rel}: included file {target} does not exist")
            elif inc not in seen:
                todo.append(inc)
    what = "pinned and hashed" if need_hash else "pinned"
    return f.outcome(f"every requirement is {what}",
                     f"{len(f.found)} requirement(s) not {what}",
                     scope=lambda rel: in_play(ctx, rel))
