"""`ztsa hook claude [EXEC OPTIONS]`: a Claude Code PreToolUse hook that routes every Bash
command of the agent through `ztsa exec`.

Claude Code runs the hook before each tool call, with the event as JSON on standard
input. For the Bash tool the hook answers with `updatedInput`: the same call, its
command now `ztsa exec --workspace PROJECT [EXEC OPTIONS] -- bash -c COMMAND`. It makes
no permission decision: the person's own rules and prompts apply to the call as before.
Any other tool passes unchanged (no output). An event it cannot read blocks the call
(exit 2, Claude Code's "blocking error"), never lets it run unconfined.
"""

from __future__ import annotations

import json
import os
import shlex
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

BLOCK = 2  # Claude Code: the tool call is blocked and stderr goes to the model


def ztsa_argv() -> list[str]:
    """How the hook's own ztsa is started again from the agent's shell, in the project
    directory: the launcher (by any name that leads to it), else this interpreter
    isolated (-I), so that no `ztsa` package the tree left in the project is imported
    in place of this one, unconfined."""
    me = sys.argv[0] if sys.argv else ""
    if os.path.isfile(me) and os.path.basename(os.path.realpath(me)) == "ztsa":
        return [os.path.abspath(me)]
    return [sys.executable, "-I", "-m", "ztsa"]


def rewrite(event: dict[str, Any], options: list[str], ztsa: list[str]) -> dict[str, Any] | None:
    """The hook's answer to one event; None when the call passes unchanged. ValueError
    for an event that is not Claude Code's."""
    if event.get("hook_event_name", "PreToolUse") != "PreToolUse":
        raise ValueError(f"not a PreToolUse event: {event.get('hook_event_name')!r}")
    if event.get("tool_name") != "Bash":
        return None
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict) or not isinstance(tool_input.get("command"), str):
        raise ValueError("a Bash call without a command string")
    project = os.environ.get("CLAUDE_PROJECT_DIR") or event.get("cwd")
    if not isinstance(project, str) or not os.path.isabs(project):
        raise ValueError("the event names no project directory (cwd)")
    argv = [*ztsa, "exec", "--workspace", project, *options, "--", "bash", "-c",
            tool_input["command"]]
    return {"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "updatedInput": {**tool_input, "command": shlex.join(argv)},
        "additionalContext": "This Bash command runs confined by ztsa exec "
                             f"({' '.join(options) or 'default options'}).",
    }}


def main(agent: str, options: list[str]) -> int:
    if agent != "claude":
        print(f"ztsa hook: no hook for {agent!r} (claude)", file=sys.stderr)
        return BLOCK
    try:
        event = json.loads(sys.stdin.buffer.read())
        if not isinstance(event, dict):
            raise ValueError("the event is not a JSON object")
        answer = rewrite(event, options, ztsa_argv())
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else exc
        print(f"ztsa hook: refused: {why}", file=sys.stderr)
        return BLOCK
    if answer is not None:
        sys.stdout.write(json.dumps(answer) + "\n")
    return 0
