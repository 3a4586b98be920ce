"""Agent hooks run host commands.

## What it checks
In the project's `.claude/settings.json` and `.claude/settings.local.json`: every
hook of type `command` (`hooks.<Event>[].hooks[].type == "command"`; in exec form,
its `command` with its `args`), a
`statusLine.command`, and the keys that run a program for credentials or telemetry
(`apiKeyHelper`, `awsAuthRefresh`, `awsCredentialExport`, `otelHeadersHelper`). The
same hooks in Gemini CLI's `.gemini/settings.json`, which takes Claude's shape. In
`.codex/config.toml`: a `notify` program; every `command` hook of `.codex/hooks.json`
(Claude's shape too); and the `[setup] script` of `.codex/environments/*.toml`, which
the Codex app runs when it creates a worktree (its `[[actions]]` run only when clicked).
The hook files of the other agents: Cursor's `.cursor/hooks.json`, Windsurf's
`.windsurf/hooks.json` and GitHub Copilot's `.github/hooks/*.json` (an event's entries
with a `command`, `bash` or `powershell`), Kiro's `.kiro/hooks/*.kiro.hook` (a
`runCommand` action), and every script in Cline's `.clinerules/hooks/` (its `.md` and
`.txt` files are notes, not hooks). And Cursor's `.cursor/environment.json`, whose
`install`, `start` and terminal commands its background agents run when their machine
starts. And hooks a Claude Code skill, subagent or command defines in its YAML front
matter (`.claude/skills/*/SKILL.md`, `.claude/agents/*.md`, `.claude/commands/*.md`),
which run while it is active.

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
import shlex

from ztsa.agentfiles import CLAUDE_SETTINGS, get, json_file, out_of_reach, settings, toml_file
from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.follow import judge
from ztsa.manifests.project import matching
from ztsa.model import Nature, Outcome, Severity
from ztsa.parsing import ParseError, line_of
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def claude(ctx: Context, f: Findings, rel: str) -> None:
    loaded = settings(f, ctx, rel)
    if loaded is None:
        return
    doc, text = loaded
    command_hooks(ctx, f, rel, text, doc.get("hooks"))
    status = doc.get("statusLine")
    if isinstance(status, dict) and status.get("command"):
        judge(ctx, f, "statusLine", str(status["command"]), "", rel,
              line_of(text, '"statusLine"'))
    for key in COMMAND_KEYS:
        if doc.get(key):
            f.fail(f"{key} runs {str(doc[key])[:80]!r}", path=rel, line=line_of(text, f'"{key}"'))


def command_hooks(ctx: Context, f: Findings, rel: str, text: str, hooks: Any) -> None:
    """Claude's shape: `hooks.<Event>[].hooks[]` entries of type `command`, each judged
    by what it runs (ztsa.follow.judge)."""
    for event, groups in hooks.items() if isinstance(hooks, dict) else ():
        for group in groups if isinstance(groups, list) else []:
            for hook in get(group, "hooks") or []:
                if isinstance(hook, dict) and hook.get("type") == "command":
                    cmd = str(hook.get("command", ""))
                    args = hook.get("args")
                    # exec form (Claude Code 2.1): the program and its arguments, run
                    # without a shell (and without a shell prefix), judged as one line
                    line = shlex.join([cmd, *(str(a) for a in args)]) if isinstance(
                        args, list) else cmd
                    judge(ctx, f, f"{event} hook", line, "", rel,
                          line_of(text, cmd) if cmd else line_of(text, event))


# where a skill, subagent or command of Claude Code can define hooks of its own, in its
# YAML front matter (they run while it is active)
FRONT_MATTER = (".claude/agents/", ".claude/skills/", ".claude/commands/")


def front_matter_hooks(ctx: Context, f: Findings) -> None:
    from ztsa.manifests.common import load_yaml

    for rel in matching(ctx, lambda p: p.startswith(FRONT_MATTER) and p.endswith(".md")):
        text = f.attempt(ctx.ws_text, rel, 1 << 20)
        if not text or not text.startswith("---"):
            continue
        end = text.find("\n---", 3)
        # no hooks key, nothing to judge: real front matter is often not strict YAML (an
        # unquoted description with a colon), which Claude Code reads leniently
        if end < 0 or "hooks" not in text[3:end]:
            continue
        try:
            doc = load_yaml(text[3:end], rel)
        except ParseError as exc:
            if re.search(r"[\"']?\bhooks[\"']?\s*:", text[3:end]):
                f.error(exc, rel)  # a hooks key, maybe, in what no parser agrees on
            continue
        if isinstance(doc, dict):
            command_hooks(ctx, f, rel, text, doc.get("hooks"))


# Claude Code settings whose value is a program it runs (credentials, telemetry headers)
COMMAND_KEYS = ("apiKeyHelper", "awsAuthRefresh", "awsCredentialExport", "otelHeadersHelper")
# the hook files of the agents whose hooks are event -> [{command|bash|powershell: ...}]
EVENT_HOOK_FILES = (".cursor/hooks.json", ".windsurf/hooks.json")


def event_hooks(ctx: Context, f: Findings, rel: str) -> None:
    """Cursor's, Windsurf's and Copilot's hook files: `hooks.<event>` lists entries that
    name a command (`command`; Copilot's `bash` and `powershell`)."""
    loaded = settings(f, ctx, rel)
    if loaded is None:
        return
    doc, text = loaded
    hooks = doc.get("hooks")
    for event, entries in hooks.items() if isinstance(hooks, dict) else ():
        for entry in entries if isinstance(entries, list) else []:
            cmd = next((entry[k] for k in ("command", "bash", "powershell")
                        if isinstance(entry, dict) and isinstance(entry.get(k), str)
                        and entry[k].strip()), None)
            if cmd is not None:
                judge(ctx, f, f"{event} hook", cmd, "", rel, line_of(text, cmd))


def kiro_hook(ctx: Context, f: Findings, rel: str) -> None:
    loaded = settings(f, ctx, rel)
    if loaded is None:
        return
    doc, text = loaded
    then = doc.get("then")
    if isinstance(then, dict) and then.get("type") == "runCommand" and then.get("command"):
        when = get(doc, "when", "type") or "an event"
        judge(ctx, f, f"{when} hook", str(then["command"]), "", rel,
              line_of(text, str(then["command"])))


def _cursor_environment(ctx: Context, f: Findings) -> None:
    """Cursor's background agents run `.cursor/environment.json`'s `install` and `start`
    commands, and each terminal's `command`, when their machine starts."""
    rel = ".cursor/environment.json"
    loaded = f.attempt(json_file, ctx, rel)
    if loaded is None or not isinstance(loaded[0], dict):
        return
    doc, text = loaded
    commands = [(f"{k} command", doc.get(k)) for k in ("install", "start")]
    terminals = doc.get("terminals")
    commands += [("terminal command", t.get("command")) for t in terminals or []
                 if isinstance(t, dict)] if isinstance(terminals, list) else []
    for what, cmd in commands:
        if isinstance(cmd, str) and cmd.strip():
            judge(ctx, f, f"Cursor's background agent ({what}, at machine start)",
                  cmd.strip(), "", rel, line_of(text, cmd[:40]))


@rule(id="AGT002", slug="agent-hooks", title="Agent hooks run host commands",
      severity=Severity.HIGH,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    for rel in CLAUDE_SETTINGS:
        claude(ctx, f, rel)
    loaded = f.attempt(toml_file, ctx, ".codex/config.toml")
    if loaded is not None:
        doc, text = loaded
        notify = doc.get("notify")
        if notify:
            import shlex

            cmd = " ".join(shlex.quote(str(w)) for w in notify) if isinstance(
                notify, list) else str(notify)
            judge(ctx, f, "notify", cmd, "", ".codex/config.toml",
                  line_of(text, "notify"))
    claude(ctx, f, ".codex/hooks.json")  # Codex's and Gemini CLI's take Claude's shape
    claude(ctx, f, ".gemini/settings.json")
    for rel in [*EVENT_HOOK_FILES, *matching(ctx, lambda p: p.startswith(".github/hooks/")
                                             and p.endswith(".json") and p.count("/") == 2)]:
        event_hooks(ctx, f, rel)
    for rel in matching(ctx, lambda p: p.startswith(".kiro/hooks/") and p.endswith(".kiro.hook")):
        kiro_hook(ctx, f, rel)
    for rel in matching(ctx, lambda p: p.startswith(".clinerules/hooks/")
                        and not p.rsplit("/", 1)[-1].lower().endswith((".md", ".txt"))):
        judge(ctx, f, f"Cline's hook script {rel.rsplit('/', 1)[-1]!r}",
              f"./{rel}", "", rel, None)
    for rel in matching(ctx, lambda p: p.startswith(".codex/environments/")
                        and p.endswith(".toml")):
        env = f.attempt(toml_file, ctx, rel)
        if env is None:
            continue
        doc, text = env
        setup = doc.get("setup")
        script = setup.get("script") if isinstance(setup, dict) else None
        if isinstance(script, str) and script.strip():
            judge(ctx, f, "[setup] script (at worktree creation)", script.strip(), "",
                  rel, line_of(text, "[setup]"))
    _cursor_environment(ctx, f)
    front_matter_hooks(ctx, f)
    # a submodule not checked out, or a symlink out: what it will hold is unknown
    out_of_reach(ctx, f, (".claude", ".codex", ".cursor", ".gemini", ".github", ".windsurf",
                          ".clinerules", ".kiro"))
    return f.outcome("no agent hook runs a host command that downloads or runs fetched code",
                     f"{len(f.found)} agent hook(s) run host commands that download or run "
                     "fetched code", advised="agent hooks run host commands, judged by what "
                     "they run: nothing downloaded and run")
