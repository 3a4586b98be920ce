"""Host namespaces shared.

## What it checks
Whether the process shares the host's PID namespace (kernel threads such as
`kthreadd` are visible, and processes of other users can be seen) and the host's
network namespace (host bridge or veth interfaces such as `docker0` and `veth*` in
`/proc/net/dev`).

## Why it matters
In the host PID namespace, code can signal, inspect and sometimes trace the user's
other processes and read their command lines and environments. In the host network
namespace it can reach every service bound to loopback and the host's bridges.

## How to fix
Run the agent in its own PID and network namespaces: `bwrap --unshare-pid
--unshare-net`, `unshare --pid --fork --net`, or a container without `--pid=host` and
`--network=host`.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.host import ProbeError
from ztsa.lazy import LazyRe
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule

# bridges and veth ends of container runtimes: Docker, podman (netavark's podman0,
# CNI's cni-podman0), CNI's cni0, libvirt, LXC
HOST_IFACES = LazyRe(
    r"^(docker\d+|veth\w*|br-[0-9a-f]+|virbr\d+|cni\d+|cni-\w+|podman\d+|lxcbr\d+)$")


def _real_uid(status: dict[str, str] | None) -> int | None:
    if status is None or "Uid" not in status:
        return None
    try:
        return int(status["Uid"].split()[0])
    except (ValueError, IndexError):
        return None


@rule(id="ENV008", slug="host-namespaces-shared", title="Host namespaces shared",
      severity=Severity.MEDIUM,
      nature=Nature.ENV_HARDENING, actions="-/W/B")
def check(ctx: Context) -> Outcome:
    host = ctx.host
    found: list[Evidence] = []
    me = _real_uid(host.proc_status())
    if me is None:
        return Outcome.unknown("cannot read own uid from /proc/self/status")
    kthread = (host.read_text("/proc/2/comm") or "").strip()
    init = (host.read_text("/proc/1/comm") or "").strip()
    if kthread == "kthreadd":
        other = None
        for pid in host.pids():
            try:
                st = host.stat(f"/proc/{pid}")  # owned by the process's effective uid
            except ProbeError:
                continue  # processes come and go
            if st is not None and st.st_uid != me:
                other = (pid, st.st_uid)
                break
        if other:
            found.append(Evidence(
                f"host PID namespace: pid 1 is {init or '?'}, kernel threads visible, "
                f"processes of other users visible (pid {other[0]}, uid {other[1]})",
                path="/proc"))
    dev = host.read_text("/proc/net/dev")
    if dev is None:
        return Outcome.unknown("/proc/net/dev is absent", found)
    ifaces = [ln.split(":", 1)[0].strip() for ln in dev.splitlines()[2:] if ":" in ln]
    shared = [i for i in ifaces if HOST_IFACES.match(i)]
    if shared:
        found.append(Evidence("host network interfaces present: " + ", ".join(shared),
                              path="/proc/net/dev"))
    if found:
        return Outcome.failed("host namespaces are shared", found)
    return Outcome.passed("no host PID or network namespace sign")
