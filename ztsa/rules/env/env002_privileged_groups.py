"""Member of a privilege-granting group.

## What it checks
The supplementary groups (`Groups:`) and the effective gid (`Gid:`) of
`/proc/self/status`, named through `/etc/group`, against docker, lxd, sudo, wheel,
root, adm and disk.

## Why it matters
Each of these groups is root by another name: docker and lxd start privileged
containers, sudo and wheel grant root, disk reads raw block devices, adm reads system
logs and root owns system files.

## How to fix
Run the agent as a user outside these groups (`gpasswd -d USER GROUP`), or inside a
sandbox that drops supplementary groups (`bwrap --unshare-user`, `setpriv --clear-groups`).
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule

PRIVILEGED = frozenset({"docker", "lxd", "sudo", "wheel", "root", "adm", "disk"})


@rule(id="ENV002", slug="privileged-groups", title="Member of a privilege-granting group",
      severity=Severity.HIGH,
      nature=Nature.ENV_HARDENING, actions="-/W/B")
def check(ctx: Context) -> Outcome:
    status = ctx.host.proc_status()
    if status is None or "Groups" not in status or "Gid" not in status:
        return Outcome.unknown("no Groups:/Gid: line in /proc/self/status")
    try:
        gids = {int(g) for g in status["Groups"].split()}
        gids.add(int(status["Gid"].split()[1]))
    except (ValueError, IndexError):
        return Outcome.unknown(f"malformed Groups:/Gid: lines {status['Groups']!r}")
    names = ctx.host.group_names()
    if names is None:
        names = {}
    names.setdefault(0, "root")
    unnamed = sorted(g for g in gids if g not in names)
    bad = sorted((names[g], g) for g in gids if names.get(g) in PRIVILEGED)
    if bad:
        return Outcome.failed(
            "member of " + ", ".join(f"{n} (gid {g})" for n, g in bad),
            [Evidence(f"group {n} (gid {g})", path="/proc/self/status") for n, g in bad],
        )
    if unnamed and ctx.host.group_names() is None:
        return Outcome.unknown(f"/etc/group is absent: cannot name gids {unnamed}")
    return Outcome.passed(f"no privilege-granting group among {len(gids)} group(s)")
