"""Editor auto-approve or auto-run.

## What it checks
`.vscode/settings.json`: `chat.tools.autoApprove` or `chat.tools.edits.autoApprove`
turned on (true or a non-empty rule set), and `task.allowAutomaticTasks` set to
`"on"`. `.vscode/tasks.json`: a task with `runOptions.runOn` set to `"folderOpen"`.
Both files are JSON with comments and trailing commas; a file that does not parse
makes the rule unknown.

## Why it matters
Auto-approved tool calls let an editor agent run commands without asking; a
folder-open task runs a command the moment the repository is opened.

## How to fix
Remove these settings from the repository's `.vscode/` files and keep
`task.allowAutomaticTasks` off in user settings.
"""

from __future__ import annotations

from ztsa.agentfiles import get, json_file, settings
from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.model import Outcome, Severity
from ztsa.parsing import line_of
from ztsa.registry import rule

SETTINGS = ".vscode/settings.json"
TASKS = ".vscode/tasks.json"


def _on(value: object) -> bool:
    return value is True or (isinstance(value, dict | list) and bool(value))


@rule(id="AGT005", slug="editor-auto-run", title="Editor auto-approve or auto-run",
      severity=Severity.MEDIUM, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    found = settings(f, ctx, SETTINGS)
    if found is not None:
        doc, text = found
        for key in ("chat.tools.autoApprove", "chat.tools.edits.autoApprove"):
            if _on(doc.get(key)):
                f.fail(f"{key} is on", SETTINGS, line_of(text, f'"{key}"'))
        if doc.get("task.allowAutomaticTasks") == "on":
            f.fail("task.allowAutomaticTasks is on", SETTINGS,
                   line_of(text, "task.allowAutomaticTasks"))
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
    return f.outcome("no editor auto-approve or auto-run setting",
                     f"{len(f.found)} auto-approve or auto-run setting(s)")
