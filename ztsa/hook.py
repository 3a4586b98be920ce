"""`ztsa hook claude [EXEC OPTIONS]`: a Claude Code PreToolUse hook that routes every Bash
command of the agent through `ztsa exec`.

Claude Code runs the hook before each tool call, with the event as JSON on standard
input. For the Bash tool the hook answers with `updatedInput`: the same call, its
command now `ztsa exec --workspace PROJECT [EXEC OPTIONS] -- bash -c COMMAND`. It makes
no permission decision: the person's own rules and prompts apply to the call as before.
Any other tool passes unchanged (no output). An event it cannot read blocks the call
(exit 2, Claude Code's "blocking error"), never lets it run unconfined.

`ztsa hook claude --install [...]` writes the hook's entry into Claude Code's settings:
ztsa by its absolute path, bounded by `timeout`, in shell text that turns every way of
not answering (ztsa missing, broken, crashed or hung) into exit 2 (see docs/agents.md).
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
    found = launcher()
    return [found] if found else [sys.executable, "-I", "-m", "ztsa"]


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
        flags, options = split_setup(options)
    except ValueError as exc:
        print(f"ztsa hook: error: {exc}", file=sys.stderr)
        return BLOCK
    if flags:
        return setup(flags, options)
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


# -- installing the hook into Claude Code's settings -----------------------------------------
# Claude Code blocks a tool call only on the hook's exit 2 (or a JSON deny). Any other
# failure (127 when the command is not found, 126, a crash's 1) is a "non-blocking error"
# and the call runs; so does a hook cancelled at its `timeout`. ztsa cannot act when ztsa
# does not run, so the entry fails closed by its own shell text: whatever is not ztsa's
# answer (exit 0) becomes exit 2.
BUDGET = 30  # seconds the hook may take (it starts in ~0.1 s: it only rewrites JSON)
KILL_GRACE = 5  # seconds from timeout's TERM to its KILL
MARGIN = 10  # Claude Code's own timeout for the entry is BUDGET + KILL_GRACE + MARGIN
BLOCKED_MESSAGE = "ztsa hook: ztsa failed or could not run (exit $?); the call is blocked"
SCOPES = ("user", "project", "local")
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


def entry_command(ztsa: str, options: list[str], budget: int, timeout: str) -> str:
    """The entry's shell text (Claude Code runs it with `sh -c`): ztsa under `timeout`,
    and exit 2 with a line on stderr whenever that did not exit 0."""
    words = [timeout, "-k", str(KILL_GRACE), str(budget), ztsa, "hook", "claude", *options]
    quoted = shlex.quote(BLOCKED_MESSAGE).replace("$?", "'$?'")
    return f"{shlex.join(words)} || {{ echo {quoted} >&2; exit 2; }}"


def entry(ztsa: str, options: list[str], budget: int, timeout: str) -> dict[str, Any]:
    return {"type": "command", "command": entry_command(ztsa, options, budget, timeout),
            "timeout": budget + KILL_GRACE + MARGIN}


def is_ztsa_hook(handler: object) -> bool:
    """A command hook that runs `ztsa hook claude`, as written by --install or by hand."""
    if not isinstance(handler, dict) or handler.get("type") != "command":
        return False
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    try:
        words = shlex.split(command)
    except ValueError:
        words = command.split()
    return any(os.path.basename(words[i]) == "ztsa" and words[i + 1:i + 3] == ["hook", "claude"]
               for i in range(len(words)))


def settings_path(scope: str) -> str:
    """The settings file of a scope: the user's (in $CLAUDE_CONFIG_DIR or ~/.claude), or
    the project's shared or local one, in the current directory's .claude/."""
    if scope == "user":
        home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(
            os.path.expanduser("~"), ".claude")
        return os.path.join(os.path.abspath(home), "settings.json")
    name = "settings.json" if scope == "project" else "settings.local.json"
    return os.path.join(os.getcwd(), ".claude", name)


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load_settings(path: str) -> tuple[str | None, dict[str, Any]]:
    """The file's text (None when there is none) and its settings; Refused when it is not
    a JSON object whose `hooks` and `hooks.PreToolUse` have Claude Code's shapes."""
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
    if not isinstance(hooks, dict) or not isinstance(hooks.get("PreToolUse", []), list):
        raise Refused(f"{path}: `hooks` is not an object of lists; it is left as it is")
    return text, settings


def _groups(settings: dict[str, Any]) -> list[Any]:
    groups: list[Any] = settings.get("hooks", {}).get("PreToolUse", [])
    return groups


def _has_hooks(group: object) -> bool:
    return isinstance(group, dict) and isinstance(group.get("hooks"), list)


def with_entry(settings: dict[str, Any], handler: dict[str, Any]) -> dict[str, Any]:
    """The settings with one ztsa hook, `handler`: in place of the first ztsa hook of a
    "Bash" matcher group, else in a new group at the end; every other ztsa hook goes."""
    new = without_entry(settings, keep_first_bash=handler)
    if not any(_has_hooks(g) and handler in g["hooks"] for g in _groups(new)):
        new.setdefault("hooks", {}).setdefault("PreToolUse", []).append(
            {"matcher": "Bash", "hooks": [handler]})
    return new


def without_entry(settings: dict[str, Any],
                  keep_first_bash: dict[str, Any] | None = None) -> dict[str, Any]:
    """The settings without ztsa's hooks (and without a group, a PreToolUse list or a
    `hooks` object that only they made non-empty). keep_first_bash: put in the place of
    the first one in a "Bash" group instead."""
    import copy

    new = copy.deepcopy(settings)
    groups = _groups(new)
    kept: list[Any] = []
    removed = False
    for group in groups:
        if not _has_hooks(group) or not any(is_ztsa_hook(h) for h in group["hooks"]):
            kept.append(group)
            continue
        removed = True
        handlers = []
        for handler in group["hooks"]:
            if not is_ztsa_hook(handler):
                handlers.append(handler)
            elif keep_first_bash is not None and group.get("matcher") == "Bash":
                handlers.append(keep_first_bash)
                keep_first_bash = None
        if handlers:
            kept.append({**group, "hooks": handlers})
    if removed:
        if kept:
            new["hooks"]["PreToolUse"] = kept
        else:
            del new["hooks"]["PreToolUse"]
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


def split_setup(options: list[str]) -> tuple[dict[str, str], list[str]]:
    """--install/--uninstall and their flags, the first words after `claude`, apart from
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
            raise ValueError(f"{word} goes right after `claude`, before the EXEC OPTIONS")
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
    """Options `ztsa exec` would refuse would fail every Bash call: refused now."""
    from ztsa.cli import build_parser

    try:
        args, unknown = build_parser().parse_known_args(["exec", *options])
        if unknown:
            args.parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    except SystemExit:
        raise Refused("the EXEC OPTIONS are not those of `ztsa exec` (above)") from None


def setup(flags: dict[str, str], options: list[str]) -> int:
    """--install or --uninstall: the unified diff on stdout, then the file written
    (unless --dry-run)."""
    import difflib

    scope = flags.get("--scope", "user")
    try:
        if scope not in SCOPES:
            raise Refused(f"--scope {scope}: one of {', '.join(SCOPES)}")
        path = settings_path(scope)
        old_text, settings = load_settings(path)
        if "--install" in flags:
            handler = entry(_launcher_for_entry(flags.get("--launcher")), options,
                            _budget(flags.get("--budget")), _timeout_command())
            _check_exec_options(options)
            new = with_entry(settings, handler)
        else:
            new = without_entry(settings)
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
