"""Agent control files writable.

## What it checks
Write access (`os.access(W_OK)`) to the agent control files of the workspace that
exist: `.claude/`, `.mcp.json`, `CLAUDE.md`, `AGENTS.md`, `.codex/`,
`.vscode/settings.json`, `.git/config` and `.git/hooks`; and to the user-level agent
settings: `~/.claude/settings.json`, `~/.claude.json`, `~/.codex/config.toml` and
`~/.gemini/settings.json`.

## Why it matters
Code that can rewrite these files rewrites the agent's own leash: it can grant
itself permissions, add hooks that run on the host, or plant instructions for the
next session.

## How to fix
Make them read-only for the agent: `ztsa exec` confines writes away from them, or
mount them read-only in the sandbox (`bwrap --ro-bind`). Keep user-level settings out
of the sandbox's home.
"""

from __future__ import annotations

import os

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

IN_WORKSPACE = (".claude", ".mcp.json", "CLAUDE.md", "AGENTS.md", ".codex",
                ".vscode/settings.json", ".git/config", ".git/hooks")
IN_HOME = (".claude/settings.json", ".claude.json", ".codex/config.toml",
           ".gemini/settings.json")


@rule(id="AGT007", slug="agent-files-writable", title="Agent control files writable",
      severity=Severity.HIGH,
      nature=Nature.ENV_HARDENING, actions="-/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    for rel in IN_WORKSPACE:
        if f.attempt(ctx.ws_access, rel, os.W_OK):
            f.fail(f"{rel} is writable", path=rel)
    home = ctx.host.home
    if home:
        f.access(ctx.host, [f"{home}/{rel}" for rel in IN_HOME], os.W_OK, "writable")
    return f.outcome("agent control files are read-only",
                     f"{len(f.found)} agent control file(s) writable")
