"""Agent sockets forwarded.

## What it checks
`SSH_AUTH_SOCK` pointing at a socket; a gpg-agent socket (`$XDG_RUNTIME_DIR/gnupg/`,
`~/.gnupg/`); and a reachable D-Bus session bus: `DBUS_SESSION_BUS_ADDRESS` set, or a
`$XDG_RUNTIME_DIR/bus` socket.

## Why it matters
An SSH or GPG agent signs for whoever asks: code in the sandbox can push with your
keys or sign releases without ever reading a key file. The D-Bus session bus is an
escape route: `systemd-run --user` asks the user's service manager to start a
process outside the audited process tree, where no sandbox or tracer applies.

## How to fix
Unset `SSH_AUTH_SOCK`, `GPG_AGENT_INFO` and `DBUS_SESSION_BUS_ADDRESS` for the agent,
and do not bind the agent or bus sockets into the sandbox (`bwrap` without
`--bind $XDG_RUNTIME_DIR`; `ztsa exec` starts the tree with a minimal environment).
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule


@rule(id="FS003", slug="agent-sockets-forwarded", title="Agent sockets forwarded",
      severity=Severity.HIGH,
      nature=Nature.ENV_HARDENING, actions="-/W/B")
def check(ctx: Context) -> Outcome:
    host, env = ctx.host, ctx.host.environ
    found: list[Evidence] = []
    ssh = env.get("SSH_AUTH_SOCK")
    if ssh and ssh.startswith("/") and host.is_socket(ssh):
        found.append(Evidence(f"SSH_AUTH_SOCK points to the socket {ssh}", path=ssh))
    xdg = env.get("XDG_RUNTIME_DIR")
    gpg = [f"{xdg}/gnupg/S.gpg-agent"] if xdg and xdg.startswith("/") else []
    if host.home:
        gpg.append(f"{host.home}/.gnupg/S.gpg-agent")
    for p in gpg:
        if host.is_socket(p):
            found.append(Evidence(f"gpg-agent socket {p}", path=p))
    bus = env.get("DBUS_SESSION_BUS_ADDRESS")
    if bus:
        found.append(Evidence("DBUS_SESSION_BUS_ADDRESS is set: the session bus can start "
                              "processes outside the tree (systemd-run --user)"))
    if xdg and xdg.startswith("/") and host.is_socket(f"{xdg}/bus"):
        found.append(Evidence(f"session bus socket {xdg}/bus", path=f"{xdg}/bus"))
    if found:
        return Outcome.failed(f"{len(found)} agent or bus socket(s) reachable", found)
    return Outcome.passed("no SSH agent, gpg-agent or session bus socket reachable")
