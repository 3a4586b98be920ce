"""Sensitive system paths writable.

## What it checks
`os.access(W_OK)` on `/etc`, `/etc/passwd`, `/etc/shadow`, `/etc/sudoers`,
`/etc/sudoers.d`, `/etc/ld.so.preload`, `/etc/cron.d`, `/etc/systemd/system`,
`/usr/bin`, `/usr/local/bin`, `/usr/lib`, `/bin`, `/sbin`, `/root` and `/boot`; and
`os.access(R_OK)` on `/etc/shadow` and `/proc/1/environ`. For `/etc/ld.so.preload`,
which is normally absent, a writable `/etc` counts.

## Why it matters
Writing any of these gives persistence or root: a new user, a sudo rule, a cron job,
a preloaded library, a replaced system binary. Reading `/etc/shadow` exposes password
hashes; reading `/proc/1/environ` exposes the secrets given to the init process.

## How to fix
Run the agent as an unprivileged user, or in a sandbox that mounts the system
read-only (`bwrap --ro-bind / /`, a container with a read-only root filesystem).
"""

from __future__ import annotations

import os

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

WRITE = ("/etc", "/etc/passwd", "/etc/shadow", "/etc/sudoers", "/etc/sudoers.d",
         "/etc/ld.so.preload", "/etc/cron.d", "/etc/systemd/system", "/usr/bin",
         "/usr/local/bin", "/usr/lib", "/bin", "/sbin", "/root", "/boot")
READ = ("/etc/shadow", "/proc/1/environ")


@rule(id="FS004", slug="system-paths-writable", title="Sensitive system paths writable",
      severity=Severity.CRITICAL,
      nature=Nature.ENV_ESCAPE, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    f.access(ctx.host, WRITE, os.W_OK, "writable")
    f.access(ctx.host, READ, os.R_OK, "readable")
    return f.outcome("no sensitive system path is writable or readable",
                     f"{len(f.found)} sensitive system path(s) exposed")
