"""Agent hooks run host commands.

## What it checks
The surface catalogue's settings of this rule (`docs/surfaces.md`, rule AGT002), at any
depth where the agent or editor reads the files of the folder it is started in or opens
(all but Copilot's, Kiro's, Cline's and the Codex app's, read at the top). In the
project's `.claude/settings.json` and `.claude/settings.local.json`: every hook
command (`hooks.<Event>[].hooks[].command`; in exec form, its `command` with its
`args`, run without a shell and without a shell prefix), a `statusLine.command`, and the keys that
run a program for credentials or telemetry (`apiKeyHelper`, `awsAuthRefresh`,
`awsCredentialExport`, `otelHeadersHelper`). The same hooks in Gemini CLI's
`.gemini/settings.json`, which takes Claude's shape, and Gemini CLI's (and Qwen Code's)
tool commands (`tools.discoveryCommand`, `tools.callCommand`, and their older names),
which it runs at session start and on a tool call. In `.codex/config.toml`: a `notify`
program; every hook command of `.codex/hooks.json` (Claude's shape too); and the `[setup]
script` of `.codex/environments/*.toml`, which the Codex app runs when it creates a
worktree (its `[[actions]]` run only when clicked). The hook files of the other agents:
Cursor's `.cursor/hooks.json`, Windsurf's `.windsurf/hooks.json` and GitHub Copilot's
`.github/hooks/*.json` (an event's entries with a `command`, `bash` or `powershell`),
Kiro's `.kiro/hooks/*.kiro.hook` (a `runCommand` action's `command`), and every script in
Cline's `.clinerules/hooks/` (its `.md` and `.txt` files are notes, not hooks). And
Cursor's `.cursor/environment.json`, whose `install`, `start` and terminal commands its
background agents run when their machine starts. And hooks a Claude Code skill, subagent
or command defines in its YAML front matter (`.claude/skills/*/SKILL.md`,
`.claude/agents/*.md`, `.claude/commands/*.md`), which run while it is active; front
matter that no YAML reader agrees on is read leniently, unless a key holds a nested
block (then the rule is unknown).

Each command is judged by what it runs (`ztsa.follow.judge`), as git hooks are: a
download piped or saved and run, a fetched string run as code, a download tool run as a
command (`curl`, `wget`), a package fetched at no fixed version (`npx x`), a download
installed as a program, a write to a shell start-up file or a read of a credential path
fails, in the command itself, its `sh -c` programs, the package.json scripts it runs by
name (`pnpm fix`) or the repository files those run (`bash .claude/hooks/x.sh`,
`uv run tools/x.py`, up to 3 files deep); a file that cannot be judged is unknown. A
hook that runs a formatter, a linter, a test run or a tool by name is advice.
`apiKeyHelper` and the other credential keys fail whatever they run: the repository
chooses the program that hands over the agent's credentials.

When an agent directory (`.claude`, `.codex`, `.cursor`, ...) is a git submodule not
checked out, or a symlink out of the workspace, the rule is unknown: what it will hold
cannot be judged.

## Why it matters
Hooks run shell commands on the host each time the agent starts, edits or stops,
with the developer's permissions and outside the agent's own sandbox. A repository
that ships them runs its code as soon as an agent opens it.

## How to fix
Remove the download from the hook (install tools from a package manager with a lockfile
or a signed system package), or remove hooks from the repository's agent settings and
keep personal hooks in user-level settings.
"""

from __future__ import annotations

import re

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.surfacecheck import Hit
    from ztsa.surfaces import Setting

# how a finding names what runs, by catalogue entry (the rest: "<event> hook")
NAMES = {
    "claude-status-line": "statusLine",
    "codex-notify": "notify",
    "codex-environment-setup": "[setup] script (at worktree creation)",
    "gemini-tool-commands": "{key} (at session start)",
    "cursor-environment": "Cursor's background agent ({key} command, at machine start)",
}


def what(s: Setting, hit: Hit) -> str:
    """How a finding names the command: its event's hook, or the key that runs it."""
    import posixpath

    if s.id == "cline-hook-scripts":
        return f"Cline's hook script {posixpath.basename(hit.rel)!r}"
    if s.id == "kiro-hooks":
        when = hit.parents[0].get("when") if hit.parents else None
        event = when.get("type") if isinstance(when, dict) else None
        return f"{event or 'an event'} hook"
    if s.id in NAMES:
        key = "terminal" if hit.path.startswith("terminals") else hit.key
        return NAMES[s.id].format(key=key)
    event = hit.path.split("/")[1] if "/" in hit.path else hit.path
    event = re.sub(r"\[[0-9]+\]$", "", event)  # `PostToolUse[0]`: the event's first group
    return f"{event} hook"


def word(s: Setting, hit: Hit, why: str) -> str:
    """apiKeyHelper and the other credential keys: whatever they run."""
    return f"{hit.key} runs {str(hit.value)[:80]!r}"


@rule(id="AGT002", slug="agent-hooks", title="Agent hooks run host commands",
      severity=Severity.HIGH,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    from ztsa.agentfiles import out_of_reach
    from ztsa.surfacecheck import older

    f = Findings()
    older(ctx, f, "AGT002", word, what)
    # a submodule not checked out, or a symlink out: what it will hold is unknown
    out_of_reach(ctx, f, (".claude", ".codex", ".cursor", ".gemini", ".github", ".windsurf",
                          ".clinerules", ".kiro", ".qwen"))
    return f.outcome("no agent hook runs a host command that downloads or runs fetched code",
                     f"{len(f.found)} agent hook(s) run host commands that download or run "
                     "fetched code", advised="agent hooks run host commands, judged by what "
                     "they run: nothing downloaded and run")
