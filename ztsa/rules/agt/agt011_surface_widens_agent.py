"""A catalogued surface widens an agent's reach or feeds it instructions.

## What it checks
Every setting of the surface catalogue (`ztsa/surfaces.py`, `docs/surfaces.md`) that
widens what an agent may do, redirects where it sends, or loads instructions into it:
tools approved in advance (a skill's or command's `allowed-tools`, Gemini's
`tools.allowed`, Cursor CLI's `permissions.allow` and `.cursor/permissions.json`, Codex
`.codex/rules` `prefix_rule`s, OpenCode `permission`, Amazon Q agents' `allowedTools`,
every MCP tool auto-approved in Kiro, Amazon Q or Roo, Windsurf `// turbo` workflows; a
list of the tools an agent may ask for is not a grant), reach
(`permissions.additionalDirectories` out of the repository, devcontainer and Compose
mounts of the home directory, credentials or a daemon socket), endpoints and credentials
(a telemetry endpoint off this machine, an MCP server over plain `http://` sent
`${TOKEN}` headers, a Gemini base URL in `.gemini/.env` or `.env`), instructions
(`CLAUDE.md` and `.claude/rules` importing files outside the repository, a download run
as code in rules, plugin skills, Roo modes and OpenHands microagents), and credentials
committed in `.env` or `.docker/config.json` (never shown). Each value is judged by the
catalogue's safe predicate for it. A file that does not parse, or a symlink out of the
workspace, makes the rule unknown; a plugin that no project setting enables is advice.

## Why it matters
A repository's agent configuration applies to whoever opens it: a grant of the shell or
the web, a directory such as `~/.aws`, a host that receives prompts or tokens, or an
imported instruction turns the agent against the person who runs it, without a prompt.

## How to fix
Remove the setting from the repository, or narrow it to what the catalogue calls safe
(`docs/surfaces.md`); rotate a committed credential and keep it out of the checkout.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule


@rule(id="AGT011", slug="surface-widens-agent", title="A catalogued surface widens an "
      "agent's reach or feeds it instructions", severity=Severity.HIGH,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    from ztsa.surfacecheck import check as judge

    return judge(ctx, "AGT011", "no catalogued surface widens an agent's reach",
                 "{n} catalogued setting(s) widen an agent's reach, redirect it or "
                 "instruct it")
