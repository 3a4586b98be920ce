"""`ztsa hook AGENT [EXEC OPTIONS]`: a pre-tool hook that routes every shell command of
a coding agent through `ztsa exec`, for the agents whose hook can rewrite a call without
approving it: Claude Code (`claude`, PreToolUse) and Gemini CLI (`gemini`, BeforeTool).

The agent runs the hook before each tool call, with the event as JSON on standard
input. For its shell tool (Bash; run_shell_command) the hook answers with the same
call, its command now `ztsa exec --workspace PROJECT [EXEC OPTIONS] -- bash -c COMMAND`
(Claude Code's `updatedInput`; Gemini CLI's `hookSpecificOutput.tool_input`). It makes
no permission decision: the person's own rules and prompts apply to the call as before.
Any other tool passes unchanged. An event it cannot read blocks the call (exit 2, a
"blocking error" to both agents), never lets it run unconfined.

`ztsa hook AGENT --install [...]` writes the hook's entry into the agent's settings:
ztsa by its absolute path, bounded by `timeout`, in shell text that turns every way of
not answering (ztsa missing, broken, crashed or hung) into exit 2 (see docs/agents.md).
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from dataclasses import dataclass

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable
    from typing import Any

BLOCK = 2  # both agents: the tool call is blocked and stderr is the reason given


def ztsa_argv() -> list[str]:
    """How the hook's own ztsa is started again from the agent's shell, in the project
    directory: the launcher (by any name that leads to it), else this interpreter
    isolated (-I), so that no `ztsa` package the tree left in the project is imported
    in place of this one, unconfined."""
    found = launcher()
    return [found] if found else [sys.executable, "-I", "-m", "ztsa"]


def confined(command: str, project: str, options: list[str], ztsa: list[str]) -> str:
    """The shell command that runs `command` under ztsa exec, its words quoted whole."""
    return shlex.join([*ztsa, "exec", "--workspace", project, *options, "--", "bash", "-c",
                       command])


def _claude_answer(tool_input: dict[str, Any], command: str, options: list[str]
                   ) -> dict[str, Any]:
    return {"hookSpecificOutput": {
        "hookEventName": "PreToolUse",
        "updatedInput": {**tool_input, "command": command},
        "additionalContext": "This Bash command runs confined by ztsa exec "
                             f"({' '.join(options) or 'default options'}).",
    }}


def _gemini_answer(tool_input: dict[str, Any], command: str, options: list[str]
                   ) -> dict[str, Any]:
    # the whole input, not the command alone: the documentation says tool_input "merges
    # with and overrides" the model's arguments, but Gemini CLI's scheduler builds the
    # call from tool_input alone (scheduler/hook-utils.ts, 0.56)
    return {"hookSpecificOutput": {"tool_input": {**tool_input, "command": command}}}


@dataclass(frozen=True)
class Agent:
    """What differs between the agents' hooks; the rewrite and the entry are shared."""

    name: str  # as in `ztsa hook NAME`
    event: str  # the hook event, and its key in the settings' `hooks`
    tool: str  # the shell tool's name, and the entry's matcher
    project_env: str  # the variable the agent sets to the project directory
    scopes: tuple[str, ...]
    timeout_unit: int  # the entry's `timeout` in seconds (1) or milliseconds (1000)
    # what the hook prints for a call it leaves unchanged: nothing (Claude Code), or an
    # empty JSON object (Gemini CLI takes stderr as the answer when stdout is empty, and
    # plain text with exit 0 as an `allow` (hooks/hookRunner.ts): ztsa answers JSON)
    unchanged: str
    answer: Callable[[dict[str, Any], str, list[str]], dict[str, Any]]
    # the `ztsa hook NAME` entries its settings may hold, which --install replaces: in
    # Gemini CLI's, also a Claude Code entry copied by `gemini hooks migrate`, which keeps
    # its timeout's number (45, seconds to Claude Code; milliseconds to Gemini CLI, which
    # then cancels the hook before it answers, and the call runs unconfined)
    entries: tuple[str, ...]


CLAUDE = Agent("claude", "PreToolUse", "Bash", "CLAUDE_PROJECT_DIR",
               ("user", "project", "local"), 1, "", _claude_answer, ("claude",))
GEMINI = Agent("gemini", "BeforeTool", "run_shell_command", "GEMINI_PROJECT_DIR",
               ("user", "project"), 1000, "{}\n", _gemini_answer, ("gemini", "claude"))
AGENTS = {agent.name: agent for agent in (CLAUDE, GEMINI)}


def rewrite(event: dict[str, Any], options: list[str], ztsa: list[str],
            agent: Agent = CLAUDE) -> dict[str, Any] | None:
    """The hook's answer to one event; None when the call passes unchanged. ValueError
    for an event that is not the agent's."""
    if event.get("hook_event_name", agent.event) != agent.event:
        raise ValueError(f"not a {agent.event} event: {event.get('hook_event_name')!r}")
    if event.get("tool_name") != agent.tool:
        return None
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict) or not isinstance(tool_input.get("command"), str):
        raise ValueError(f"a {agent.tool} call without a command string")
    project = os.environ.get(agent.project_env) or event.get("cwd")
    if not isinstance(project, str) or not os.path.isabs(project):
        raise ValueError("the event names no project directory (cwd)")
    return agent.answer(tool_input, confined(tool_input["command"], project, options, ztsa),
                        options)


def main(name: str, options: list[str]) -> int:
    agent = AGENTS.get(name)
    if agent is None:
        print(f"ztsa hook: no hook for {name!r} ({', '.join(AGENTS)})", file=sys.stderr)
        return BLOCK
    try:
        flags, options = split_setup(options, agent)
    except ValueError as exc:
        print(f"ztsa hook: error: {exc}", file=sys.stderr)
        return BLOCK
    if flags:
        return setup(flags, options, agent)
    try:
        event = json.loads(sys.stdin.buffer.read())
        if not isinstance(event, dict):
            raise ValueError("the event is not a JSON object")
        answer = rewrite(event, options, ztsa_argv(), agent)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        why = "nested too deeply" if isinstance(exc, RecursionError) else exc
        print(f"ztsa hook: refused: {why}", file=sys.stderr)
        return BLOCK
    sys.stdout.write(agent.unchanged if answer is None else json.dumps(answer) + "\n")
    return 0


# -- installing the hook into the agent's settings -------------------------------------------
# Both agents block a tool call only on the hook's exit 2 (or a JSON deny). Any other
# failure (127 when the command is not found, 126, a crash's 1) is a "non-blocking error"
# (Claude Code) or a "warning" (Gemini CLI) and the call runs; so does a hook cancelled at
# its `timeout`. ztsa cannot act when ztsa does not run, so the entry fails closed by its
# own shell text: whatever is not ztsa's answer (exit 0) becomes exit 2, with a line on
# stderr (Gemini CLI takes an exit 2 with nothing on stdout or stderr for no answer).
BUDGET = 30  # seconds the hook may take (it starts in ~0.1 s: it only rewrites JSON)
KILL_GRACE = 5  # seconds from timeout's TERM to its KILL
MARGIN = 10  # the agent's own timeout for the entry is BUDGET + KILL_GRACE + MARGIN
BLOCKED_MESSAGE = "ztsa hook: ztsa failed or could not run (exit $?); the call is blocked"
_SWITCHES = ("--install", "--uninstall", "--dry-run")
_VALUED = ("--scope", "--launcher", "--budget")


class Refused(Exception):
    """The settings are left as they are (exit 2)."""


def launcher() -> str | None:
    """The installed `ztsa` launcher this process was started by (as named), if any."""
    me = sys.argv[0] if sys.argv else ""
    if os.path.isfile(me) and os.path.basename(os.path.realpath(me)) == "ztsa":
        return os.path.abspath(me)
    return None


def entry_command(ztsa: str, options: list[str], budget: int, timeout: str,
                  agent: Agent = CLAUDE) -> str:
    """The entry's shell text, POSIX (Claude Code runs it with `sh -c`, Gemini CLI with
    `bash -c`): ztsa under `timeout`, and exit 2 with a line on stderr whenever that did
    not exit 0."""
    words = [timeout, "-k", str(KILL_GRACE), str(budget), ztsa, "hook", agent.name,
             *options]
    quoted = shlex.quote(BLOCKED_MESSAGE).replace("$?", "'$?'")
    return f"{shlex.join(words)} || {{ echo {quoted} >&2; exit 2; }}"


def entry(ztsa: str, options: list[str], budget: int, timeout: str,
          agent: Agent = CLAUDE) -> dict[str, Any]:
    """The handler: the agent's own timeout (in its unit) outlasts `timeout`'s KILL."""
    return {"type": "command",
            "command": entry_command(ztsa, options, budget, timeout, agent),
            "timeout": (budget + KILL_GRACE + MARGIN) * agent.timeout_unit}


def is_ztsa_hook(handler: object, agent: Agent = CLAUDE) -> bool:
    """A command hook that runs `ztsa hook AGENT` (or another of agent.entries), as
    written by --install, by hand or by a migration."""
    if not isinstance(handler, dict) or handler.get("type") != "command":
        return False
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return any(os.path.basename(word) == "ztsa" and words[i + 1:i + 2] == ["hook"]
               and i + 2 < len(words) and words[i + 2] in agent.entries
               for i, word in enumerate(words))


def settings_path(scope: str, agent: Agent = CLAUDE) -> str:
    """The settings file of a scope. Claude Code: the user's (in $CLAUDE_CONFIG_DIR or
    ~/.claude), or the project's shared or local one, in the current directory's
    .claude/. Gemini CLI: ~/.gemini/settings.json ($GEMINI_CLI_HOME in place of the
    home), or .gemini/settings.json in the current directory."""
    if agent is GEMINI:
        if scope == "user":
            home = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
            return os.path.join(os.path.abspath(home), ".gemini", "settings.json")
        return os.path.join(os.getcwd(), ".gemini", "settings.json")
    if scope == "user":
        home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(
            os.path.expanduser("~"), ".claude")
        return os.path.join(os.path.abspath(home), "settings.json")
    name = "settings.json" if scope == "project" else "settings.local.json"
    return os.path.join(os.getcwd(), ".claude", name)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load_settings(path: str, agent: Agent = CLAUDE) -> tuple[str | None, dict[str, Any]]:
    """The file's text (None when there is none) and its settings; Refused when it is not
    a JSON object whose `hooks` and `hooks.EVENT` have the agent's shapes (Gemini CLI
    also reads comments in it: such a file is refused, ztsa would not keep them)."""
    try:
        with open(path, "rb") as f:
            raw = f.read()
    except FileNotFoundError:
        return None, {}
    except OSError as exc:
        raise Refused(f"cannot read {path}: {exc.strerror}") from None
    try:
        text = raw.decode("utf-8")
        settings = json.loads(text, parse_constant=_no_constant)
    except (ValueError, RecursionError) as exc:
        raise Refused(f"{path} is not valid JSON ({exc}); it is left as it is") from None
    if not isinstance(settings, dict):
        raise Refused(f"{path} does not hold a JSON object; it is left as it is")
    hooks = settings.get("hooks", {})
    if not isinstance(hooks, dict) or not isinstance(hooks.get(agent.event, []), list):
        raise Refused(f"{path}: `hooks` is not an object of lists; it is left as it is")
    return text, settings


def _groups(settings: dict[str, Any], agent: Agent) -> list[Any]:
    groups: list[Any] = settings.get("hooks", {}).get(agent.event, [])
    return groups


def _has_hooks(group: object) -> bool:
    return isinstance(group, dict) and isinstance(group.get("hooks"), list)


def with_entry(settings: dict[str, Any], handler: dict[str, Any],
               agent: Agent = CLAUDE) -> dict[str, Any]:
    """The settings with one ztsa hook, `handler`: in place of the first ztsa hook of a
    group matching the shell tool by name, else in a new group at the end; every other
    ztsa hook goes."""
    new = without_entry(settings, keep_first=handler, agent=agent)
    if not any(_has_hooks(g) and handler in g["hooks"] for g in _groups(new, agent)):
        new.setdefault("hooks", {}).setdefault(agent.event, []).append(
            {"matcher": agent.tool, "hooks": [handler]})
    return new


def without_entry(settings: dict[str, Any], keep_first: dict[str, Any] | None = None,
                  agent: Agent = CLAUDE) -> dict[str, Any]:
    """The settings without ztsa's hooks (and without a group, an event's list or a
    `hooks` object that only they made non-empty). keep_first: put in the place of the
    first one in a group whose matcher is the shell tool's name instead."""
    import copy

    new = copy.deepcopy(settings)
    groups = _groups(new, agent)
    kept: list[Any] = []
    removed = False
    for group in groups:
        if not _has_hooks(group) or not any(is_ztsa_hook(h, agent) for h in group["hooks"]):
            kept.append(group)
            continue
        removed = True
        handlers = []
        for handler in group["hooks"]:
            if not is_ztsa_hook(handler, agent):
                handlers.append(handler)
            elif keep_first is not None and group.get("matcher") == agent.tool:
                handlers.append(keep_first)
                keep_first = None
        if handlers:
            kept.append({**group, "hooks": handlers})
    if removed:
        if kept:
            new["hooks"][agent.event] = kept
        else:
            del new["hooks"][agent.event]
            if not new["hooks"]:
                del new["hooks"]
    return new


def dump(settings: dict[str, Any]) -> str:
    return json.dumps(settings, indent=2, ensure_ascii=False) + "\n"


def write_settings(path: str, text: str) -> None:
    """Replace the file (the target of a symbolic link, which stays) by a new one in the
    same directory, renamed over it: with the old file's mode, or the umask's for a new
    one."""
    import contextlib
    import tempfile

    real = os.path.realpath(path)
    folder = os.path.dirname(real)
    os.makedirs(folder, exist_ok=True)
    try:
        mode = os.stat(real).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0o022)
        os.umask(umask)
        mode = 0o666 & ~umask
    fd, temp = tempfile.mkstemp(prefix=".settings.", suffix=".ztsa-new", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(temp, mode)
        os.replace(temp, real)
    except BaseException:
        with contextlib.suppress(OSError):
            os.unlink(temp)
        raise


def split_setup(options: list[str], agent: Agent = CLAUDE
                ) -> tuple[dict[str, str], list[str]]:
    """--install/--uninstall and their flags, the first words after AGENT, apart from
    the EXEC OPTIONS that follow. ValueError for a misplaced or malformed one."""
    flags: dict[str, str] = {}
    i = 0
    while i < len(options):
        name, eq, value = options[i].partition("=")
        if name in _SWITCHES and not eq:
            flags[name] = ""
        elif name in _VALUED:
            if not eq:
                if i + 1 >= len(options):
                    raise ValueError(f"{name} needs a value")
                i += 1
                value = options[i]
            flags[name] = value
        else:
            break
        i += 1
    rest = options[i:]
    for word in rest:
        if word.partition("=")[0] in (*_SWITCHES, *_VALUED):
            raise ValueError(f"{word} goes right after `{agent.name}`, before the EXEC "
                             "OPTIONS")
    if not flags:
        return flags, rest
    if "--install" in flags and "--uninstall" in flags:
        raise ValueError("--install or --uninstall, not both")
    if "--install" not in flags and "--uninstall" not in flags:
        raise ValueError(f"{next(iter(flags))} goes with --install or --uninstall")
    if "--uninstall" in flags:
        for name in ("--launcher", "--budget"):
            if name in flags:
                raise ValueError(f"{name} goes with --install")
        if rest:
            raise ValueError("--uninstall takes no EXEC OPTIONS")
    return flags, rest


def _launcher_for_entry(given: str | None) -> str:
    if given is None:
        given = launcher()
        if given is None:
            raise Refused("this ztsa was not started by an installed `ztsa` command (e.g. "
                          "`python -m ztsa` in a checkout), so there is none for the entry "
                          "to name: run the `ztsa` that `pip install` wrote, or name one "
                          "with --launcher PATH")
    path = os.path.realpath(given)
    if not os.path.isfile(path) or not os.access(path, os.X_OK):
        raise Refused(f"--launcher {given}: not an executable file")
    return path


def _budget(given: str | None) -> int:
    if given is None:
        return BUDGET
    try:
        budget = int(given)
    except ValueError:
        budget = 0
    if not 1 <= budget <= 3600:
        raise Refused(f"--budget {given}: a whole number of seconds from 1 to 3600")
    return budget


def _timeout_command() -> str:
    """`timeout` by its absolute path: the entry looks nothing up on PATH, which may
    name the project directory the hook runs in."""
    import shutil

    found = shutil.which("timeout")
    if found is None:
        raise Refused("no `timeout` command (coreutils) on PATH; the entry needs one to "
                      "bound the hook")
    return os.path.abspath(found)


def _check_exec_options(options: list[str]) -> None:
    """Options `ztsa exec` would refuse would fail every shell call: refused now."""
    from ztsa.cli import build_parser

    try:
        args, unknown = build_parser().parse_known_args(["exec", *options])
        if unknown:
            args.parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit:
        raise Refused("the EXEC OPTIONS are not those of `ztsa exec` (above)") from None


def setup(flags: dict[str, str], options: list[str], agent: Agent = CLAUDE) -> int:
    """--install or --uninstall: the unified diff on stdout, then the file written
    (unless --dry-run)."""
    import difflib

    scope = flags.get("--scope", "user")
    try:
        if scope not in agent.scopes:
            raise Refused(f"--scope {scope}: one of {', '.join(agent.scopes)}")
        path = settings_path(scope, agent)
        old_text, settings = load_settings(path, agent)
        if "--install" in flags:
            handler = entry(_launcher_for_entry(flags.get("--launcher")), options,
                            _budget(flags.get("--budget")), _timeout_command(), agent)
            _check_exec_options(options)
            new = with_entry(settings, handler, agent)
        else:
            new = without_entry(settings, agent=agent)
    except Refused as exc:
        print(f"ztsa hook: refused: {exc}", file=sys.stderr)
        return BLOCK
    if new == settings and old_text is not None:
        print(f"ztsa hook: {path} " + ("already holds this entry" if "--install" in flags
                                       else "holds no ztsa hook") + "; left as it is",
              file=sys.stderr)
        return 0
    if new == settings:
        print(f"ztsa hook: there is no {path}; nothing to remove", file=sys.stderr)
        return 0
    new_text = dump(new)
    sys.stdout.writelines(line + "\n" for line in difflib.unified_diff(
        (old_text or "").splitlines(), new_text.splitlines(),
        path if old_text is not None else "/dev/null", path, lineterm=""))
    if "--dry-run" in flags:
        print(f"ztsa hook: --dry-run: {path} is left as it is", file=sys.stderr)
        return 0
    try:
        write_settings(path, new_text)
    except OSError as exc:
        print(f"ztsa hook: refused: cannot write {path}: {exc.strerror}", file=sys.stderr)
        return BLOCK
    print(f"ztsa hook: {'wrote the entry to' if '--install' in flags else 'removed it from'}"
          f" {path}", file=sys.stderr)
    return 0
