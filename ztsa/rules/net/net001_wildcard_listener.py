"""Wildcard TCP listener.

## What it checks
Rows of `/proc/net/tcp` and `/proc/net/tcp6` in state LISTEN bound to `0.0.0.0`,
`::` or `::ffff:0.0.0.0`. The report names each port and, where visible, the owning
process (by matching the socket inode against `/proc/*/fd`).

## Why it matters
A service listening on every interface is reachable from the network the machine is
on. A dev server or debugger started by untrusted code, or already running next to
it, becomes a way in.

## How to fix
Bind development servers to `127.0.0.1`/`::1`, stop services you do not need, or run
the agent in its own network namespace (`bwrap --unshare-net`, `unshare -n`).
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.netinfo import listeners, owners
from ztsa.registry import rule


@rule(id="NET001", slug="wildcard-listener", title="Wildcard TCP listener",
      severity=Severity.MEDIUM,
      nature=Nature.ENV_HARDENING, actions="-/W/B")
def check(ctx: Context) -> Outcome:
    wild = [ln for ln in listeners(ctx.host) if ln.wildcard]
    if not wild:
        return Outcome.passed("no TCP listener on a wildcard address")
    who = owners(ctx.host, {ln.inode for ln in wild})
    evidence = []
    for ln in sorted(set(wild), key=lambda x: (x.port, x.table)):
        owner = who.get(ln.inode, "owner not visible")
        evidence.append(Evidence(f"port {ln.port} listens on {ln.show()} ({owner})",
                                 path=ln.table))
    ports = sorted({ln.port for ln in wild})
    return Outcome.failed("wildcard TCP listener(s) on port(s) " +
                          ", ".join(map(str, ports)), evidence)
