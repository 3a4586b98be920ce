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
from ztsa.host import ProbeError
from ztsa.model import Evidence, Outcome, Severity
from ztsa.registry import rule

WRITE = ("/etc", "/etc/passwd", "/etc/shadow", "/etc/sudoers", "/etc/sudoers.d",
         "/etc/ld.so.preload", "/etc/cron.d", "/etc/systemd/system", "/usr/bin",
         "/usr/local/bin", "/usr/lib", "/bin", "/sbin", "/root", "/boot")
READ = ("/etc/shadow", "/proc/1/environ")


@rule(id="FS004", slug="system-paths-writable", title="Sensitive system paths writable",
      severity=Severity.CRITICAL, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    host = ctx.host
    found: list[Evidence] = []
    errors: list[str] = []
    for paths, mode, verb in ((WRITE, os.W_OK, "writable"), (READ, os.R_OK, "readable")):
        for p in paths:
            try:
                if host.access(p, mode):
                    found.append(Evidence(f"{p} is {verb}", path=p))
            except ProbeError as exc:
                errors.append(str(exc))
    if found:
        return Outcome.failed(f"{len(found)} sensitive system path(s) exposed", found)
    if errors:
        return Outcome.unknown("could not check every path", [Evidence(e) for e in errors])
    return Outcome.passed("no sensitive system path is writable or readable")
