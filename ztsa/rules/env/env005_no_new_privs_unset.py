"""NoNewPrivs unset.

## What it checks
The `NoNewPrivs:` field of `/proc/self/status` must be 1.

## Why it matters
Without NoNewPrivs, executing a setuid or file-capability binary (`sudo`, `su`,
`ping`, `newuidmap`) can raise privileges that every other control assumed were gone.

## How to fix
Start the agent with NoNewPrivs set: `setpriv --no-new-privs CMD`, `bwrap` (sets it
always), Docker's `--security-opt no-new-privileges`, or `ztsa exec`.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule


@rule(id="ENV005", slug="no-new-privs-unset", title="NoNewPrivs unset",
      severity=Severity.MEDIUM,
      nature=Nature.ENV_HARDENING, actions="-/W/B")
def check(ctx: Context) -> Outcome:
    status = ctx.host.proc_status()
    if status is None or "NoNewPrivs" not in status:
        return Outcome.unknown("no NoNewPrivs: line in /proc/self/status")
    value = status["NoNewPrivs"]
    ev = [Evidence(f"NoNewPrivs: {value}", path="/proc/self/status")]
    if value == "1":
        return Outcome.passed("NoNewPrivs is set", ev)
    if value == "0":
        return Outcome.failed("NoNewPrivs is not set: setuid binaries can raise privileges", ev)
    return Outcome.unknown(f"unrecognised NoNewPrivs: value {value!r}", ev)
