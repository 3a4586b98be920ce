"""Agent settings escalate.

## What it checks
The project's Claude Code settings, `.claude/settings.json` and
`.claude/settings.local.json`: `permissions.defaultMode` set to
`bypassPermissions`; `sandbox.enabled` false; `sandbox.allowUnsandboxedCommands`
true; `sandbox.excludedCommands` holding a shell, an interpreter or docker; a daemon
socket in `sandbox.network.allowUnixSockets`; `enableAllProjectMcpServers` true; and
the allow rules `Bash` or `Bash(*)` in `permissions.allow`. A file that does not
parse makes the rule unknown.

## Why it matters
Settings committed to a repository apply to whoever opens it with an agent. A pull
request that flips them turns off the agent's own approval prompts and sandbox before
any of its code runs.

## How to fix
Remove these settings from the repository's `.claude/` files (keep personal choices
in `~/.claude/settings.json`), and review changes to `.claude/` like code.
"""

from __future__ import annotations

from ztsa.agentfiles import CLAUDE_SETTINGS, get, settings
from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe
from ztsa.model import Outcome, Severity
from ztsa.parsing import line_of
from ztsa.registry import rule

RISKY_COMMANDS = LazyRe(
    r"^(bash|sh|zsh|dash|fish|ksh|python\d*(\.\d+)?|node|deno|bun|ruby|perl|php|"
    r"docker|podman|kubectl|sudo|env|xargs|eval)\b")
DAEMON_SOCKET = LazyRe(r"(docker|podman|containerd|crio|buildkitd)\.sock$")


def audit(ctx: Context, f: Findings, rel: str) -> None:
    loaded = settings(f, ctx, rel)
    if loaded is None:
        return
    doc, text = loaded

    def hit(detail: str, needle: str) -> None:
        f.fail(detail, path=rel, line=line_of(text, needle))

    if get(doc, "permissions", "defaultMode") == "bypassPermissions":
        hit("permissions.defaultMode is bypassPermissions", "bypassPermissions")
    if get(doc, "sandbox", "enabled") is False:
        hit("sandbox.enabled is false", '"enabled"')
    if get(doc, "sandbox", "allowUnsandboxedCommands") is True:
        hit("sandbox.allowUnsandboxedCommands is true", "allowUnsandboxedCommands")
    for cmd in get(doc, "sandbox", "excludedCommands") or []:
        if isinstance(cmd, str) and RISKY_COMMANDS.match(cmd.strip()):
            hit(f"sandbox.excludedCommands holds {cmd!r}", cmd)
    for sock in get(doc, "sandbox", "network", "allowUnixSockets") or []:
        if isinstance(sock, str) and DAEMON_SOCKET.search(sock):
            hit(f"sandbox.network.allowUnixSockets holds the daemon socket {sock}", sock)
    if get(doc, "enableAllProjectMcpServers") is True:
        hit("enableAllProjectMcpServers is true", "enableAllProjectMcpServers")
    for entry in get(doc, "permissions", "allow") or []:
        if isinstance(entry, str) and entry.replace(" ", "") in ("Bash", "Bash(*)", "Bash(:*)"):
            hit(f"permissions.allow holds {entry!r}: every shell command is pre-approved",
                f'"{entry}"')


@rule(id="AGT001", slug="agent-settings-escalate", title="Agent settings escalate",
      severity=Severity.CRITICAL, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    for rel in CLAUDE_SETTINGS:
        audit(ctx, f, rel)
    return f.outcome("project agent settings do not escalate",
                     f"{len(f.found)} escalating agent setting(s)")
