"""Running as root.

## What it checks
The real, effective, saved and filesystem user IDs on the `Uid:` line of
`/proc/self/status`. Any of them being 0 fails. When uid 0 lives inside a user
namespace that maps it to a non-zero host uid (`/proc/self/uid_map`), the finding
says so and is advisory: it is root only inside that namespace.

## Why it matters
Code run as root can rewrite the system, read every user's secrets and undo any
confinement that relies on file permissions. An agent running untrusted code must
never hold host root.

## How to fix
Run the agent and ztsa as an unprivileged user (`useradd -m agent; su agent`), or
inside a rootless sandbox such as `bwrap --unshare-user --uid 1000`.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule

FIELDS = ("real", "effective", "saved", "filesystem")


@rule(id="ENV001", slug="running-as-root", title="Running as root",
      severity=Severity.HIGH,
      nature=Nature.ENV_ESCAPE, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    status = ctx.host.proc_status()
    if status is None or "Uid" not in status:
        return Outcome.unknown("no Uid: line in /proc/self/status")
    parts = status["Uid"].split()
    if len(parts) != 4 or not all(p.isdigit() for p in parts):
        return Outcome.unknown(f"malformed Uid: line {status['Uid']!r}")
    uids = dict(zip(FIELDS, (int(p) for p in parts), strict=True))
    roots = [name for name, uid in uids.items() if uid == 0]
    ev = Evidence("Uid: " + " ".join(f"{k}={v}" for k, v in uids.items()),
                  path="/proc/self/status")
    if not roots:
        return Outcome.passed(f"running as uid {uids['effective']}", [ev])
    umap = ctx.host.uid_map()
    host_uid = None
    for inside, outside, count in umap or []:
        if inside <= 0 < inside + count:
            host_uid = outside + (0 - inside)
    if umap is not None and host_uid is not None and host_uid != 0:
        return Outcome.failed(
            f"uid 0 ({', '.join(roots)}) inside a user namespace, mapped to host uid {host_uid}",
            [ev, Evidence(f"uid_map maps 0 to host uid {host_uid}", path="/proc/self/uid_map")],
            advisory=True,
        )
    return Outcome.failed(f"running as root ({', '.join(roots)} uid 0)", [ev])
