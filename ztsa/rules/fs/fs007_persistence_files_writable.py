"""Persistence files writable.

## What it checks
Write access to `~/.bashrc`, `~/.profile`, `~/.zshrc`, `~/.gitconfig`,
`~/.ssh/authorized_keys`, `~/.config/autostart` and `/etc/profile.d`. A file that
does not exist counts as writable when its nearest existing parent directory is
writable, since it can be created.

## Why it matters
Code that writes these files runs again later, outside any sandbox: in your next
shell, your next `git` command, your next login, or as an SSH login for the attacker.

## How to fix
Give the agent a private home (`HOME=$(mktemp -d)`, `ztsa exec`), or mount the real
home read-only in the sandbox.
"""

from __future__ import annotations

import os
import posixpath

from ztsa.context import Context
from ztsa.host import ProbeError
from ztsa.model import Evidence, Outcome, Severity
from ztsa.registry import rule

IN_HOME = (".bashrc", ".profile", ".zshrc", ".gitconfig", ".ssh/authorized_keys",
           ".config/autostart")


def writable(ctx: Context, p: str) -> tuple[bool, str]:
    """(writable, how): the path itself, or its nearest existing parent if absent."""
    cur = p
    while True:
        ok = ctx.host.access(cur, os.W_OK)
        if ok is not None:
            return ok, ("" if cur == p else f" (absent; {cur} is writable, so it can be created)")
        parent = posixpath.dirname(cur)
        if parent == cur:
            return False, ""
        cur = parent


@rule(id="FS007", slug="persistence-files-writable", title="Persistence files writable",
      severity=Severity.HIGH, actions="-/W/B")
def check(ctx: Context) -> Outcome:
    home = ctx.host.home
    if home is None:
        return Outcome.unknown("HOME is not set to an absolute path")
    found: list[Evidence] = []
    errors: list[str] = []
    for p in [f"{home}/{rel}" for rel in IN_HOME] + ["/etc/profile.d"]:
        try:
            ok, how = writable(ctx, p)
        except ProbeError as exc:
            errors.append(str(exc))
            continue
        if ok:
            found.append(Evidence(f"{p} is writable{how}", path=p))
    if found:
        return Outcome.failed(f"{len(found)} persistence file(s) writable", found)
    if errors:
        return Outcome.unknown("could not check every file", [Evidence(e) for e in errors])
    return Outcome.passed("no persistence file writable")
