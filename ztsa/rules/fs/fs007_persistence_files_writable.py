"""Persistence files writable.

## What it checks
Write access (`os.access(W_OK)`) to `~/.bashrc`, `~/.profile`, `~/.zshrc`,
`~/.gitconfig`, `~/.ssh/authorized_keys`, `~/.config/autostart` and
`/etc/profile.d`, where they exist. Absent files are not reported: in a private,
empty home (what the fix recommends) nothing written there survives the run.

## Why it matters
Code that writes these files runs again later, outside any sandbox: in your next
shell, your next `git` command, your next login, or as an SSH login for the attacker.

## How to fix
Give the agent a private home (`HOME=$(mktemp -d)`, `ztsa exec`), or mount the real
home read-only in the sandbox.
"""

from __future__ import annotations

import os

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

IN_HOME = (".bashrc", ".profile", ".zshrc", ".gitconfig", ".ssh/authorized_keys",
           ".config/autostart")


@rule(id="FS007", slug="persistence-files-writable", title="Persistence files writable",
      severity=Severity.HIGH,
      nature=Nature.ENV_HARDENING, actions="-/W/B")
def check(ctx: Context) -> Outcome:
    home = ctx.host.home
    if home is None:
        return Outcome.unknown("HOME is not set to an absolute path")
    f = Findings()
    f.access(ctx.host, [*(f"{home}/{rel}" for rel in IN_HOME), "/etc/profile.d"], os.W_OK,
             "writable")
    return f.outcome("no persistence file writable",
                     f"{len(f.found)} persistence file(s) writable")
