"""Agent settings escalate.

## What it checks
The project's Claude Code settings, `.claude/settings.json` and
`.claude/settings.local.json`: `permissions.defaultMode` set to
`bypassPermissions`; `sandbox.enabled` false; `sandbox.allowUnsandboxedCommands`
true; `sandbox.excludedCommands` holding a shell, an interpreter or docker; a daemon
socket in `sandbox.network.allowUnixSockets`; `enableAllProjectMcpServers` true; and
the allow rules `Bash` or `Bash(*)` in `permissions.allow`, and `Bash(...)` rules
whose command runs whatever the repository or its arguments say: a shell or an
interpreter, `find` (`-exec`), `xargs`, `env`, build and task runners (`make`, `just`,
`cargo run`/`test`/`build`, `npm run`, `npx`, `pnpm`, `yarn`, `uv run`, `pytest`,
`tox`, ...) and a script path inside the repository. A file that does not parse makes
the rule unknown.

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
# a pre-approved command that runs code the repository (a Makefile, package.json's
# scripts, build.rs, conftest.py, a script the pull request rewrites) or its own
# arguments choose: approving it approves anything
RUNS_ANYTHING = LazyRe(
    r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*("
    r"(bash|sh|zsh|dash|fish|ksh|python\d*(\.\d+)?|node|deno|bun|bunx|ruby|perl|php|"
    r"docker|podman|kubectl|sudo|env|xargs|eval|exec|find|make|gmake|just|task|rake|"
    r"ninja|bazel|gradle|mvn|npx|pnpx|pnpm|yarn|uvx|tox|nox|pytest|py\.test|"
    r"\./\S+|\.\./\S+|scripts/\S+)(\s|$)"
    r"|cargo\s+(run|test|build|check|bench|clippy|insta|nextest|doc|install|xtask)\b"
    r"|npm\s+(run|run-script|test|start|exec|x|install|i|ci|rebuild)\b"
    r"|uv\s+(run|tool\s+run|sync|pip\s+install)\b"
    r"|(poetry|pdm|hatch|rye)\s+run\b|go\s+(run|test|generate)\b"
    r"|dotnet\s+(run|test)\b|pip\d*\s+install\b"
    r"|python\d*(\.\d+)?\s+-m\s+\S+)")


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
        if not isinstance(entry, str):
            continue
        if entry.replace(" ", "") in ("Bash", "Bash(*)", "Bash(:*)"):
            hit(f"permissions.allow holds {entry!r}: every shell command is pre-approved",
                f'"{entry}"')
            continue
        command = entry.strip()
        if command.startswith("Bash(") and command.endswith(")"):
            command = command[5:-1].strip()
            command = command.removesuffix(":*").removesuffix("*").strip()
            m = RUNS_ANYTHING.match(command)
            if m:
                hit(f"permissions.allow holds {entry!r}: {m.group(1).split()[0]} runs "
                    "whatever the repository or its arguments say, without a prompt",
                    f'"{entry}"')


@rule(id="AGT001", slug="agent-settings-escalate", title="Agent settings escalate",
      severity=Severity.CRITICAL, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    for rel in CLAUDE_SETTINGS:
        audit(ctx, f, rel)
    return f.outcome("project agent settings do not escalate",
                     f"{len(f.found)} escalating agent setting(s)")
