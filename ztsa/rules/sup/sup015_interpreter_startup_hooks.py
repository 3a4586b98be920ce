"""Interpreter startup hooks.

## What it checks
Committed `*.pth` files with `import` lines (Python executes those lines at every
interpreter start when the file is in a site directory), and `sitecustomize.py` or
`usercustomize.py` anywhere in the workspace (imported at start-up when their
directory is on `sys.path`). A `conftest.py` is an advisory warning: pytest imports it
on every test run.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
These files run before any code you chose to run, in every Python process: a
`.pth` line installed into a virtual environment or a `sitecustomize.py` on the path is
a silent, persistent hook.

## How to fix
Remove committed `.pth` and `sitecustomize.py`/`usercustomize.py` files; review
`conftest.py` files like code before running the tests of an untrusted repository.
"""

from __future__ import annotations

import posixpath

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.project import matching, named
from ztsa.manifests.scope import in_play
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule


@rule(id="SUP015", slug="interpreter-startup-hooks", title="Interpreter startup hooks",
      severity=Severity.HIGH,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    for rel in matching(ctx, lambda p: p.endswith(".pth")):
        text = f.attempt(ctx.ws_text, rel, MAX_MANIFEST_BYTES)
        for lineno, line in enumerate((text or "").splitlines(), start=1):
            if line.startswith(("import ", "import\t")):
                f.fail(f".pth line runs code at start-up: {line.strip()[:80]!r}", path=rel,
                       line=lineno)
    for rel in named(ctx, "sitecustomize.py", "usercustomize.py"):
        f.fail(f"{posixpath.basename(rel)} runs at interpreter start-up", path=rel)
    out = f.outcome("no interpreter start-up hook", f"{len(f.found)} start-up hook(s)",
                    scope=lambda rel: in_play(ctx, rel))
    conftests = named(ctx, "conftest.py")
    if out.status.value == "pass" and conftests:
        return Outcome.failed(
            f"{len(conftests)} conftest.py file(s): pytest imports them on every run",
            [Evidence("pytest imports this file", path=p) for p in conftests], advisory=True)
    if conftests:
        extra = tuple(Evidence("pytest imports this file (warning)", path=p) for p in conftests)
        return Outcome(out.status, out.message, out.evidence + extra, out.advisory)
    return out
