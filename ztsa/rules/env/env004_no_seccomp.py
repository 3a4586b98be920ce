"""No seccomp filter.

## What it checks
The `Seccomp:` field of `/proc/self/status` must be 2 (filter mode); the report gives
`Seccomp_filters`, the number of filters stacked.

## Why it matters
A seccomp filter removes kernel attack surface (io_uring, ptrace, raw sockets, new
namespaces). Without one, a kernel bug reachable from any syscall is reachable by the
agent's code.

## How to fix
Run under a runtime that installs a filter (Docker and podman do by default, as does
`ztsa exec` and `bwrap --seccomp`), and do not run containers with
`--security-opt seccomp=unconfined`.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule

MODES = {"0": "disabled", "1": "strict", "2": "filter"}


@rule(id="ENV004", slug="no-seccomp", title="No seccomp filter",
      severity=Severity.MEDIUM,
      nature=Nature.ENV_HARDENING, actions="-/W/B")
def check(ctx: Context) -> Outcome:
    status = ctx.host.proc_status()
    if status is None or "Seccomp" not in status:
        return Outcome.unknown("no Seccomp: line in /proc/self/status")
    mode = status["Seccomp"]
    filters = status.get("Seccomp_filters", "not reported")
    ev = [Evidence(f"Seccomp: {mode} ({MODES.get(mode, 'unrecognised')}), "
                   f"Seccomp_filters: {filters}", path="/proc/self/status")]
    if mode == "2":
        return Outcome.passed(f"seccomp filter mode, {filters} filter(s)", ev)
    if mode in MODES:
        return Outcome.failed(f"seccomp is {MODES[mode]}, not filter mode", ev)
    return Outcome.unknown(f"unrecognised Seccomp: value {mode!r}", ev)
