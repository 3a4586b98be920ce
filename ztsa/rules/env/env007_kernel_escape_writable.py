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
from ztsa.host import ProbeError
from ztsa.model import Evidence, Outcome, Severity
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
      severity=Severity.CRITICAL, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    host = ctx.host
    found: list[Evidence] = []
    errors: list[str] = []
    paths = list(SURFACES)
    try:
        for sub in host.listdir("/sys/fs/cgroup") or []:
            if host.exists(f"/sys/fs/cgroup/{sub}/release_agent"):
                paths.append(f"/sys/fs/cgroup/{sub}/release_agent")
    except ProbeError as exc:
        errors.append(str(exc))
    for p in paths:
        try:
            if host.access(p, os.W_OK):
                found.append(Evidence(f"{p} is writable", path=p))
        except ProbeError as exc:
            errors.append(str(exc))
    mounts = host.mounts()
    if mounts is None:
        errors.append("/proc/self/mountinfo is absent")
    for m in mounts or []:
        if m.mount_point in RW_MOUNTS and "rw" in m.options:
            found.append(Evidence(f"{m.mount_point} is mounted read-write ({m.fstype})",
                                  path="/proc/self/mountinfo"))
    if found:
        return Outcome.failed(f"{len(found)} kernel escape surface(s) writable", found)
    if errors:
        return Outcome.unknown("could not check every surface", [Evidence(e) for e in errors])
    return Outcome.passed("no kernel escape surface is writable")
