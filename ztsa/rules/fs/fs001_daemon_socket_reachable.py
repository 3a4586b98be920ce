"""Container daemon socket reachable.

## What it checks
Whether a container or build daemon socket exists and can be opened (write access,
which connecting needs): `/var/run/docker.sock`, `/run/docker.sock`,
`$XDG_RUNTIME_DIR/docker.sock`, `$XDG_RUNTIME_DIR/podman/podman.sock`,
`/run/podman/podman.sock`, `/run/containerd/containerd.sock`,
`/run/k3s/containerd/containerd.sock`, `/var/run/crio/crio.sock`,
`/run/buildkit/buildkitd.sock`, and any `*.sock` bind-mounted into the process's
mount namespace (from `/proc/self/mountinfo`).

## Why it matters
Whoever can talk to a container daemon can start a privileged container that mounts
the host's root filesystem: it is root on the host, one API call away.

## How to fix
Do not mount daemon sockets into agent sandboxes (`-v /var/run/docker.sock:...`),
run the agent as a user outside the `docker` group, or use a rootless daemon that
the agent's user does not own.
"""

from __future__ import annotations

import os
import stat

from ztsa.context import Context
from ztsa.host import ProbeError
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule

FIXED = (
    "/var/run/docker.sock", "/run/docker.sock", "/run/podman/podman.sock",
    "/run/containerd/containerd.sock", "/run/k3s/containerd/containerd.sock",
    "/var/run/crio/crio.sock", "/run/buildkit/buildkitd.sock",
)


@rule(id="FS001", slug="daemon-socket-reachable", title="Container daemon socket reachable",
      severity=Severity.CRITICAL,
      nature=Nature.ENV_ESCAPE, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    host = ctx.host
    candidates = list(FIXED)
    xdg = host.environ.get("XDG_RUNTIME_DIR")
    if xdg and xdg.startswith("/"):
        candidates += [f"{xdg}/docker.sock", f"{xdg}/podman/podman.sock"]
    errors: list[str] = []
    mounts = host.mounts()
    if mounts is None:
        errors.append("/proc/self/mountinfo is absent")
    candidates += [m.mount_point for m in mounts or [] if m.mount_point.endswith(".sock")]
    found: list[Evidence] = []
    seen: set[tuple[int, int]] = set()
    for p in dict.fromkeys(candidates):
        try:
            st = host.stat(p)
            if st is None or not stat.S_ISSOCK(st.st_mode) or (st.st_dev, st.st_ino) in seen:
                continue
            seen.add((st.st_dev, st.st_ino))
            if host.access(p, os.W_OK):
                found.append(Evidence(f"daemon socket {p} can be opened", path=p))
        except ProbeError as exc:
            errors.append(str(exc))
    if found:
        return Outcome.failed(f"{len(found)} container daemon socket(s) reachable", found)
    if errors:
        return Outcome.unknown("could not check every daemon socket",
                               [Evidence(e) for e in errors])
    return Outcome.passed("no container daemon socket reachable")
