"""Dangerous capabilities.

## What it checks
The effective (`CapEff`) and ambient (`CapAmb`) capability sets of
`/proc/self/status` against SYS_ADMIN, SYS_PTRACE, SYS_MODULE, SYS_RAWIO, SYS_BOOT,
NET_ADMIN, NET_RAW, DAC_READ_SEARCH, DAC_OVERRIDE, MAC_ADMIN, MAC_OVERRIDE, SYSLOG,
BPF, PERFMON and CHECKPOINT_RESTORE. The same capabilities present only in the
bounding set (`CapBnd`) are an advisory warning: a setuid or file-capability binary
could still obtain them.

## Why it matters
Each of these capabilities is a known route out of a sandbox or into other processes:
mounting filesystems, loading kernel modules, tracing processes, reading any file,
sniffing or forging network traffic, loading BPF programs.

## How to fix
Drop them: `bwrap --cap-drop ALL`, `docker run --cap-drop ALL`,
`setpriv --inh-caps=-all --ambient-caps=-all --bounding-set=-all`, or run as a
non-root user.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule

DANGEROUS = {
    1: "DAC_OVERRIDE", 2: "DAC_READ_SEARCH", 12: "NET_ADMIN", 13: "NET_RAW",
    16: "SYS_MODULE", 17: "SYS_RAWIO", 19: "SYS_PTRACE", 21: "SYS_ADMIN", 22: "SYS_BOOT",
    32: "MAC_OVERRIDE", 33: "MAC_ADMIN", 34: "SYSLOG", 38: "PERFMON", 39: "BPF",
    40: "CHECKPOINT_RESTORE",
}


def names(mask: int) -> list[str]:
    return [f"CAP_{name}" for bit, name in sorted(DANGEROUS.items()) if mask >> bit & 1]


@rule(id="ENV006", slug="dangerous-capabilities", title="Dangerous capabilities",
      severity=Severity.CRITICAL,
      nature=Nature.ENV_ESCAPE, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    status = ctx.host.proc_status()
    if status is None:
        return Outcome.unknown("/proc/self/status is absent")
    masks: dict[str, int] = {}
    for field in ("CapEff", "CapAmb", "CapBnd"):
        if field not in status:
            return Outcome.unknown(f"no {field}: line in /proc/self/status")
        try:
            masks[field] = int(status[field], 16)
        except ValueError:
            return Outcome.unknown(f"malformed {field}: value {status[field]!r}")
    held = {f: names(masks[f]) for f in ("CapEff", "CapAmb") if names(masks[f])}
    if held:
        return Outcome.failed(
            "dangerous capabilities held: " + ", ".join(
                sorted({c for caps in held.values() for c in caps})),
            [Evidence(f"{f}: {', '.join(caps)}", path="/proc/self/status")
             for f, caps in held.items()],
        )
    bounding = names(masks["CapBnd"])
    if bounding:
        return Outcome.failed(
            "dangerous capabilities in the bounding set only: " + ", ".join(bounding),
            [Evidence(f"CapBnd: {', '.join(bounding)}", path="/proc/self/status")],
            advisory=True,
        )
    return Outcome.passed("no dangerous capability in the effective, ambient or bounding set")
