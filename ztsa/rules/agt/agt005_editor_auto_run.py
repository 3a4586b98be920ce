"""Editor auto-approve or auto-run.

## What it checks
The surface catalogue's settings of this rule (`docs/surfaces.md`, rule AGT005), in
every folder VS Code may open (a `.vscode/` at any depth, a `*.code-workspace` wherever
it sits: VS Code obeys the files of the folder it opens). `.vscode/settings.json` and
the `settings` of a `*.code-workspace`: the agent auto-approve settings turned on, by
their current names (`chat.tools.global.autoApprove`,
`chat.tools.terminal.autoApprove`, `chat.tools.terminal.enableAutoApprove`,
`chat.tools.edits.autoApprove`, `chat.tools.urls.autoApprove`) and their older ones
(`chat.tools.autoApprove`, `chat.agent.terminal.autoApprove`,
`chat.agent.terminal.allowList`, `github.copilot.chat.agent.terminal.allowList`): true,
a list, or a rule set with an entry that approves (`true`, or `{"approve": true}`;
entries that deny are fine); and `task.allowAutomaticTasks` set to `"on"`.
`.vscode/tasks.json`: a task with `runOptions.runOn` set to `"folderOpen"` (a
`.code-workspace`'s own tasks are AGT010's). The files are JSON with comments and
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

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.surfacecheck import Hit
    from ztsa.surfaces import Setting


def word(s: Setting, hit: Hit, why: str) -> str:
    if s.id == "vscode-folder-open-task":
        task = hit.parents[-2] if len(hit.parents) >= 2 else None
        label = task.get("label") if isinstance(task, dict) else None
        return f"task {str(label or 'unnamed')!r} runs when the folder opens"
    return f"{hit.key} is on"


@rule(id="AGT005", slug="editor-auto-run", title="Editor auto-approve or auto-run",
      severity=Severity.MEDIUM,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    from ztsa.agentfiles import out_of_reach
    from ztsa.surfacecheck import older

    f = Findings()
    older(ctx, f, "AGT005", word)
    # a submodule not checked out, or a symlink out: what it will hold is unknown
    out_of_reach(ctx, f, (".vscode",))
    return f.outcome("no editor auto-approve or auto-run setting",
                     f"{len(f.found)} auto-approve or auto-run setting(s)")
