"""Editor auto-approve or auto-run.

## What it checks
`.vscode/settings.json` and the `settings` of a top-level `*.code-workspace`: the agent
auto-approve settings turned on, by their current names (`chat.tools.global.autoApprove`,
`chat.tools.terminal.autoApprove`, `chat.tools.terminal.enableAutoApprove`,
`chat.tools.edits.autoApprove`, `chat.tools.urls.autoApprove`) and their older ones
(`chat.tools.autoApprove`, `chat.agent.terminal.autoApprove`,
`chat.agent.terminal.allowList`, `github.copilot.chat.agent.terminal.allowList`): true,
or a rule set with an entry that approves (`true`, or `{"approve": true}`; entries that
deny are fine); and `task.allowAutomaticTasks` set to `"on"`. `.vscode/tasks.json`: a
task with `runOptions.runOn` set to `"folderOpen"`. The files are JSON with comments and
trailing commas; a file that does not parse makes the rule unknown.

When `.vscode` is a git submodule not checked out, or a symlink out of the workspace,
the rule is unknown: what it will hold cannot be judged.

## Why it matters
Auto-approved tool calls let an editor agent run commands without asking; a
folder-open task runs a command the moment the repository is opened.

## How to fix
Remove these settings from the repository's `.vscode/` files and keep
`task.allowAutomaticTasks` off in user settings.
"""

from __future__ import annotations

from ztsa.agentfiles import get, json_file, out_of_reach, settings
from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.manifests.project import matching
from ztsa.model import Nature, Outcome, Severity
from ztsa.parsing import line_of
from ztsa.registry import rule

SETTINGS = ".vscode/settings.json"
TASKS = ".vscode/tasks.json"


AUTO_APPROVE = ("chat.tools.global.autoApprove", "chat.tools.autoApprove",
                "chat.tools.terminal.autoApprove", "chat.tools.terminal.enableAutoApprove",
                "chat.tools.edits.autoApprove", "chat.tools.urls.autoApprove",
                "chat.agent.terminal.autoApprove", "chat.agent.terminal.allowList",
                "github.copilot.chat.agent.terminal.allowList")


def _on(value: object) -> bool:
    """True, a list of allowed patterns, or a rule set with an entry that approves."""
    if isinstance(value, dict):
        return any(v is True or (isinstance(v, dict) and v.get("approve") is True)
                   for v in value.values())
    return value is True or (isinstance(value, list) and bool(value))


def _settings(f: Findings, doc: dict[str, object], text: str, rel: str) -> None:
    for key in AUTO_APPROVE:
        if _on(doc.get(key)):
            f.fail(f"{key} is on", rel, line_of(text, f'"{key}"'))
    if doc.get("task.allowAutomaticTasks") == "on":
        f.fail("task.allowAutomaticTasks is on", rel, line_of(text, "task.allowAutomaticTasks"))


@rule(id="AGT005", slug="editor-auto-run", title="Editor auto-approve or auto-run",
      severity=Severity.MEDIUM,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    found = settings(f, ctx, SETTINGS)
    if found is not None:
        _settings(f, *found, SETTINGS)
    for rel in matching(ctx, lambda p: "/" not in p and p.endswith(".code-workspace")):
        workspace = settings(f, ctx, rel)
        inner = workspace[0].get("settings") if workspace is not None else None
        if workspace is not None and isinstance(inner, dict):
            _settings(f, inner, workspace[1], rel)
    loaded = f.attempt(json_file, ctx, TASKS)
    if loaded is not None:
        raw, text = loaded
        line = 1
        for task in get(raw, "tasks") or []:
            if get(task, "runOptions", "runOn") == "folderOpen":
                label = str(get(task, "label") or "unnamed")
                line = line_of(text, "folderOpen", line) or line
                f.fail(f"task {label!r} runs when the folder opens", TASKS, line)
                line += 1
    # a submodule not checked out, or a symlink out: what it will hold is unknown
    out_of_reach(ctx, f, (".vscode",))
    return f.outcome("no editor auto-approve or auto-run setting",
                     f"{len(f.found)} auto-approve or auto-run setting(s)")
