"""No resource limits.

## What it checks
Whether the process's cgroup (v2, or the v1 memory and pids controllers) or any of
its ancestors sets `memory.max` and `pids.max`, and whether `RLIMIT_NPROC`
("Max processes" in `/proc/self/limits`) is limited. It fails when memory and pids
are both unlimited in the cgroup and `RLIMIT_NPROC` is unlimited too.

## Why it matters
A fork bomb or a runaway build in untrusted code can take the whole machine down,
including the processes that would stop it.

## How to fix
Run the agent in a cgroup with limits (`systemd-run --user --scope -p MemoryMax=8G
-p TasksMax=2048 ...`, `docker run --memory --pids-limit`) or set `ulimit -u`.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule

UNLIMITED_V1 = 1 << 62  # memory.limit_in_bytes reads as a huge page-rounded number


def _limit(ctx: Context, base: str, rel: str, name: str) -> str | None:
    """The first limit set on the cgroup or an ancestor, or None for unlimited."""
    parts = [p for p in rel.split("/") if p]
    while True:
        value = ctx.host.read_text("/".join([base, *parts, name]))
        if value is not None:
            v = value.strip()
            if v != "max" and not (v.isdigit() and int(v) >= UNLIMITED_V1):
                return v
        if not parts:
            return None
        parts.pop()


def _cgroup_limits(ctx: Context, cgroup: str) -> dict[str, str]:
    """memory and pids limits from cgroup v2 (pure or hybrid) and v1 controllers."""
    found: dict[str, str] = {}
    for line in cgroup.splitlines():
        hid, _, rest = line.partition(":")
        ctrls, _, rel = rest.partition(":")
        if hid == "0" and ctrls == "":
            base = ("/sys/fs/cgroup" if ctx.host.exists("/sys/fs/cgroup/cgroup.controllers")
                    else "/sys/fs/cgroup/unified")
            for name in ("memory.max", "pids.max"):
                v = _limit(ctx, base, rel, name)
                if v:
                    found[name] = v
        elif "memory" in ctrls.split(","):
            v = _limit(ctx, "/sys/fs/cgroup/memory", rel, "memory.limit_in_bytes")
            if v:
                found["memory.limit_in_bytes"] = v
        elif "pids" in ctrls.split(","):
            v = _limit(ctx, "/sys/fs/cgroup/pids", rel, "pids.max")
            if v:
                found["pids.max"] = v
    return found


@rule(id="ENV011", slug="no-resource-limits", title="No resource limits",
      severity=Severity.LOW,
      nature=Nature.ENV_LIMITS, actions="-/-/W")
def check(ctx: Context) -> Outcome:
    cgroup = ctx.host.read_text("/proc/self/cgroup")
    limits = ctx.host.read_text("/proc/self/limits")
    if cgroup is None or limits is None:
        return Outcome.unknown("/proc/self/cgroup or /proc/self/limits is absent")
    nproc = next((ln for ln in limits.splitlines() if ln.startswith("Max processes")), None)
    if nproc is None or len(nproc.split()) < 3:
        return Outcome.unknown("no 'Max processes' line in /proc/self/limits")
    soft = nproc.split()[2]
    ev = [Evidence(f"cgroup {k} {v}", path="/proc/self/cgroup")
          for k, v in _cgroup_limits(ctx, cgroup).items()]
    if soft != "unlimited":
        ev.append(Evidence(f"RLIMIT_NPROC {soft}", path="/proc/self/limits"))
    if ev:
        return Outcome.passed("resource limits set", ev)
    return Outcome.failed("memory.max and pids.max are max and RLIMIT_NPROC is unlimited",
                          [Evidence("no memory or pids limit on the cgroup or its ancestors",
                                    path="/proc/self/cgroup"),
                           Evidence("RLIMIT_NPROC unlimited", path="/proc/self/limits")])
