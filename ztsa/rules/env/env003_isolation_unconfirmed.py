"""Isolation not confirmed.

## What it checks
Looks for signs that the process runs inside a container (`/.dockerenv`,
`/run/.containerenv`, `/run/systemd/container`, `/run/host/container-manager`, cgroup
paths, an overlay root in mountinfo), a virtual machine (the `hypervisor` cpu flag,
DMI vendor strings, `/sys/hypervisor/type`), gVisor (its kernel version string), Kata
(the Kata agent on the kernel command line) or a user-namespace sandbox
(`/proc/self/uid_map` is not the identity map). It reports every sign and names the
kind of isolation. WSL is reported but does not count as isolation.

## Why it matters
Untrusted code run directly on a workstation reaches everything the user can reach.
A container, VM or sandbox bounds the damage when every other control fails.

## How to fix
Run the agent inside a disposable VM, a container, or a rootless sandbox such as
`bwrap --unshare-all --die-with-parent`. If the signs are hidden on purpose, run ztsa
where they are visible.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.isolation import detect
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule


@rule(id="ENV003", slug="isolation-unconfirmed", title="Isolation not confirmed",
      severity=Severity.HIGH,
      nature=Nature.ENV_ESCAPE, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    iso = detect(ctx)
    evidence = [Evidence(f"{kind}: {sign}") for kind, signs in iso.kinds.items()
                for sign in signs]
    evidence += [Evidence(w) for w in iso.wsl]
    if iso.isolated:
        return Outcome.passed("isolation: " + ", ".join(iso.kinds), evidence)
    if iso.errors:
        return Outcome.unknown(
            "no sign of isolation, and some signs could not be read",
            evidence + [Evidence(e) for e in iso.errors],
        )
    what = "WSL only, which is not isolation" if iso.wsl else "no container, VM or sandbox"
    return Outcome.failed(f"isolation: none ({what})", evidence)
