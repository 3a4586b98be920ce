"""Kernel escape surfaces writable.

## What it checks
`os.access(W_OK)` on `/proc/sys/kernel/core_pattern`, `/sys/kernel/uevent_helper`,
`/proc/sys/fs/binfmt_misc/register`, `/proc/sysrq-trigger` and every cgroup v1
`release_agent` under `/sys/fs/cgroup`; and whether `/sys` or `/proc/sys` is mounted
read-write according to `/proc/self/mountinfo`.

## Why it matters
Each of these files makes the kernel run a program of the writer's choice as host
root (a core dump handler, a hotplug helper, a binary format interpreter, a cgroup
release agent) or reboots the machine. They are the classic container escapes.

## How to fix
Run unprivileged, or in a container runtime that mounts `/proc/sys` and `/sys`
read-only (the default for Docker and podman without `--privileged`).
"""

from __future__ import annotations

import os

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

SURFACES = (
    "/proc/sys/kernel/core_pattern",
    "/sys/kernel/uevent_helper",
    "/proc/sys/fs/binfmt_misc/register",
    "/proc/sysrq-trigger",
    "/sys/fs/cgroup/release_agent",
)
RW_MOUNTS = ("/sys", "/proc/sys")


@rule(id="ENV007", slug="kernel-escape-writable", title="Kernel escape surfaces writable",
      severity=Severity.CRITICAL,
      nature=Nature.ENV_ESCAPE, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    host = ctx.host
    f = Findings()
    agents = [f"/sys/fs/cgroup/{sub}/release_agent"
              for sub in f.attempt(host.listdir, "/sys/fs/cgroup") or []]
    f.access(host, [*SURFACES, *agents], os.W_OK, "writable")
    mounts = f.attempt(host.mounts)
    if mounts is None and not f.errors:
        f.error("/proc/self/mountinfo is absent")
    for m in mounts or []:
        if m.mount_point in RW_MOUNTS and "rw" in m.options:
            f.fail(f"{m.mount_point} is mounted read-write ({m.fstype})",
                   path="/proc/self/mountinfo")
    return f.outcome("no kernel escape surface is writable",
                     f"{len(f.found)} kernel escape surface(s) writable")
