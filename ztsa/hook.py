"""`ztsa hook AGENT`: an agent's shell commands under `ztsa exec`.

Claude Code (`claude`): `--install` writes a program of ztsa's (the *shell wrapper*, in
ztsa's configuration directory) and names it in the settings' `env` as
`CLAUDE_CODE_SHELL_PREFIX`. Claude Code then runs each Bash call's command string (and
each shell-form hook and stdio MCP server) as `WRAPPER 'STRING'`, after its permission
rules and prompts have judged the command the model wrote: the wrapper runs the string
under `ztsa exec` with the options given at install, the current directory as the
workspace. Nothing rewrites the call, so an allow, ask or deny rule, and an approval
saved at a prompt, keep their meaning. A PreToolUse entry in exec form (Claude Code does
not put the prefix before it) runs `ztsa hook claude --prefix WRAPPER --digest SHA256`,
the *guard*: it denies a Bash call when `CLAUDE_CODE_SHELL_PREFIX` is not that wrapper
(another settings file overrides it), the wrapper's bytes changed, or the project's
settings `env` sets a variable that runs code before the wrapper (the shell Claude Code
starts, what that shell loads or runs by name) or changes what ztsa reads or shows, and
otherwise says nothing. It never answers `allow`.

Gemini CLI (`gemini`, BeforeTool): the hook reads the event (JSON) on standard input and
answers with the shell call (run_shell_command) rewritten to `NAME exec --workspace
PROJECT [EXEC OPTIONS] -- bash -c COMMAND` (`hookSpecificOutput.tool_input`), NAME a
program of this command's own that runs ztsa (in ztsa's cache: Gemini CLI approves a
command by its first word, so an approval covers this command alone). It makes no
permission decision. Any other tool passes unchanged. An event it cannot read blocks the
call (exit 2, a "blocking error"), never lets it run unconfined.

Each entry names ztsa by its absolute path, bounded by `timeout`, in shell text that
turns every way of not answering (ztsa missing, broken, crashed or hung) into exit 2
(see docs/agents.md).
"""

from __future__ import annotations

import contextlib
import json
import os
import shlex
import sys
from dataclasses import dataclass

from ztsa.sandbox.toolchains import ROOTS

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Mapping
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
    # the rewritten call's answer; None: the agent's commands go through a shell prefix
    # and its hook is the guard (Claude Code)
    answer: Callable[[dict[str, Any], str, list[str]], dict[str, Any]] | None
    # the matcher of the entry's group: the shell tool's (Gemini CLI), or every tool
    # (Claude Code: the guard also denies every call under a project's bypassPermissions)
    matcher: str
    # the `ztsa hook NAME` entries its settings may hold, which --install replaces: in
    # Gemini CLI's, also a Claude Code entry copied by `gemini hooks migrate`, which keeps
    # its timeout's number (45, seconds to Claude Code; milliseconds to Gemini CLI, which
    # then cancels the hook before it answers, and the call runs unconfined)
    entries: tuple[str, ...]


CLAUDE = Agent("claude", "PreToolUse", "Bash", "CLAUDE_PROJECT_DIR",
               ("user", "project", "local", "managed"), 1, "", None, "*", ("claude",))
GEMINI = Agent("gemini", "BeforeTool", "run_shell_command", "GEMINI_PROJECT_DIR",
               ("user", "project"), 1000, "{}\n", _gemini_answer, "run_shell_command",
               ("gemini", "claude"))
AGENTS = {agent.name: agent for agent in (CLAUDE, GEMINI)}


def _shell_call(event: dict[str, Any], agent: Agent) -> dict[str, Any] | None:
    """The shell call's input, None for another tool; ValueError for an event that is
    not the agent's, or a shell call without a command string."""
    if event.get("hook_event_name", agent.event) != agent.event:
        raise ValueError(f"not a {agent.event} event: {event.get('hook_event_name')!r}")
    if event.get("tool_name") != agent.tool:
        return None
    tool_input = event.get("tool_input")
    if not isinstance(tool_input, dict) or not isinstance(tool_input.get("command"), str):
        raise ValueError(f"a {agent.tool} call without a command string")
    return tool_input


def rewrite(event: dict[str, Any], options: list[str], ztsa: list[str],
            agent: Agent = GEMINI) -> dict[str, Any] | None:
    """The rewriting hook's answer to one event (Gemini CLI); None when the call passes
    unchanged. ValueError for an event that is not the agent's."""
    assert agent.answer is not None
    tool_input = _shell_call(event, agent)
    if tool_input is None:
        return None
    project = os.environ.get(agent.project_env) or event.get("cwd")
    if not isinstance(project, str) or not os.path.isabs(project):
        raise ValueError("the event names no project directory (cwd)")
    command = confined(tool_input["command"], project, options, ztsa)
    if agent is GEMINI:
        # ztsa by a name of this command's own (below): what Gemini CLI approves
        folder = gemini_shim_dir()
        shim = os.path.join(folder, digest(command.encode("utf-8", "surrogatepass")))
        named = confined(tool_input["command"], project, options, [shim])
        conflict = gemini_policy_conflict(tool_input["command"], named, project,
                                          shlex.quote(shim), command)
        if conflict:
            raise ValueError(conflict)
        write_gemini_shim(folder, os.path.basename(shim), ztsa)
        command = named
    return agent.answer(tool_input, command, options)


# -- Gemini CLI: its policy sees the rewritten command ----------------------------------------
# Gemini CLI runs the BeforeTool hook before its policy engine, so the person's rules on
# run_shell_command match the rewritten command, not the model's. "Allow for this
# session" and "Allow for all future sessions" at a prompt approve the command's roots
# (0.61.0: ShellToolInvocation.getPolicyUpdateOptions), its first word here, as a
# commandPrefix rule: in memory, or saved in auto-saved.toml. Gemini CLI matches such a
# rule on the JSON-encoded command, the prefix then a space or a quote (buildArgsPatterns).
# Were the first word ztsa's launcher, one approval would approve every later command.
# So ztsa is named by a program of the command's own, SHIM_DIR/<SHA-256 of the command
# as it reads with ztsa's launcher>, which runs that launcher: an approval of that name
# approves the same command (project, options, launcher and the model's text) again,
# and no other. The hook refuses every call while a policy file holds an allow rule that
# would approve a rewritten command of any other name (ztsa's launcher, the directory of
# the names), and applies the person's deny and ask rules on run_shell_command to the
# model's command itself (it cannot ask: a matching ask rule blocks the call).
SHIM_MAX = 2048  # names kept; past this the oldest go, none used in the last hour
SHIM_KEEP = 1536  # what a pruning leaves


def gemini_shim_dir() -> str:
    """The directory of the commands' names: `gemini` in ztsa's cache directory (the
    parse cache's: $ZTSA_CACHE_DIR, else $XDG_CACHE_HOME/ztsa or ~/.cache/ztsa; 0700,
    the user's own, and read-only to a confined tree where a writable place holds it).
    ValueError when there is none."""
    from ztsa.manifests.parsecache import cache_dir

    base = cache_dir()
    if base is None:
        raise ValueError("ztsa has no cache directory of this user's own (ZTSA_CACHE_DIR, "
                         "else XDG_CACHE_HOME/ztsa or ~/.cache/ztsa, mode 0700) to name "
                         "the command in")
    return os.path.join(base, "gemini")


def gemini_shim_text(ztsa: list[str]) -> bytes:
    """A name's program: ztsa by its absolute path, nothing looked up. When that is
    gone, `exec` fails (127) and nothing runs."""
    return ("#!/bin/sh\n"
            "# written by `ztsa hook gemini`: Gemini CLI approves a shell command by its\n"
            "# first word, so each confined command names ztsa by a program of its own\n"
            f'exec {shlex.join(ztsa)} "$@"\n').encode("utf-8", "surrogateescape")


def write_gemini_shim(folder: str, name: str, ztsa: list[str]) -> None:
    """Make FOLDER/NAME the program of gemini_shim_text, checked before the hook names
    it: a file of this user's alone holding exactly that text, else written anew (in
    place of whatever was there, a link included). ValueError when the directory is not
    this user's alone or cannot be written."""
    import stat

    want = gemini_shim_text(ztsa)
    try:
        with contextlib.suppress(FileExistsError):
            os.mkdir(folder, 0o700)
        fd = os.open(folder, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError as exc:
        raise ValueError(f"cannot use {folder} for the names of confined commands: "
                         f"{exc.strerror}") from None
    try:
        st = os.fstat(fd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o022:
            raise ValueError(f"{folder} is not this user's alone (owner uid {st.st_uid}, "
                             f"mode {st.st_mode & 0o7777:o}); the names of confined "
                             "commands go there")
        try:
            sfd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                          dir_fd=fd)
        except OSError:  # missing, a link, ...: written anew
            sfd = -1
        if sfd >= 0:
            try:
                sst = os.fstat(sfd)
                if stat.S_ISREG(sst.st_mode) and sst.st_uid == os.geteuid() \
                        and sst.st_mode & 0o7777 == 0o700 \
                        and os.read(sfd, len(want) + 1) == want:
                    os.utime(sfd)  # in use: kept by the pruning
                    return
            finally:
                os.close(sfd)
        temp = f".{name}.{os.getpid()}.tmp"
        try:
            with contextlib.suppress(FileNotFoundError):
                os.unlink(temp, dir_fd=fd)
            tfd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, 0o700,
                          dir_fd=fd)
            try:
                os.write(tfd, want)
                os.fchmod(tfd, 0o700)
            finally:
                os.close(tfd)
            os.rename(temp, name, src_dir_fd=fd, dst_dir_fd=fd)
        except OSError as exc:
            with contextlib.suppress(OSError):
                os.unlink(temp, dir_fd=fd)
            raise ValueError(f"cannot write {os.path.join(folder, name)}: {exc.strerror}"
                             ) from None
        _prune_shims(fd)
    finally:
        os.close(fd)


def _prune_shims(fd: int) -> None:
    """Past SHIM_MAX names, the oldest go down to SHIM_KEEP, but none used within the
    last hour (a call may be about to run it). A name removed is written again the next
    time its command comes; an approval of it still holds."""
    import time

    names = os.listdir(fd)
    if len(names) <= SHIM_MAX:
        return
    found = []
    for name in names:
        with contextlib.suppress(OSError):
            found.append((os.stat(name, dir_fd=fd, follow_symlinks=False).st_mtime, name))
    recent = time.time() - 3600
    for mtime, name in sorted(found)[:max(0, len(found) - SHIM_KEEP)]:
        if mtime < recent:
            with contextlib.suppress(OSError):
                os.unlink(name, dir_fd=fd)


def gemini_policy_dirs(project: str) -> list[str]:
    """The directories whose *.toml Gemini CLI reads as policies: the user's, the
    project's (workspace tier) and the system's (admin tier, Linux)."""
    home = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
    return [os.path.join(home, ".gemini", "policies"),
            os.path.join(project, ".gemini", "policies"),
            "/etc/gemini-cli/policies"]


def _strings(value: Any) -> list[str] | None:
    """A rule field that is a string or a list of strings; None for anything else."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str) for v in value):
        return value
    return None


def _prefix_matches(command: str, prefix: str) -> bool:
    """Whether any simple command of `command` starts with `prefix` as whole words (the
    split is rough and errs towards a match: a match only ever blocks)."""
    import re

    for part in re.split(r"[;&|\n()`]|\$\(", command):
        part = part.strip()
        if part == prefix or (part.startswith(prefix)
                              and (prefix.endswith(" ") or part[len(prefix)].isspace())):
            return True
    return False


def gemini_policy_conflict(model: str, rewritten: str, project: str, shim: str,
                           unnamed: str) -> str | None:
    """Why the call is refused, or None: a policy rule that would approve the rewritten
    command other than by its own name `shim` (its first word, as written), or the
    command as it reads with ztsa's launcher (`unnamed`): it would approve every
    confined command; or a deny or ask rule on run_shell_command that matches the
    model's command. A policy file that cannot be read or parsed refuses too."""
    try:
        import tomllib
    except ImportError:  # Python 3.10: a policy file found is refused below
        tomllib = None  # type: ignore[assignment]
    for folder in gemini_policy_dirs(project):
        try:
            names = sorted(n for n in os.listdir(folder) if n.endswith(".toml"))
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            return f"cannot read Gemini CLI's policies in {folder}: {exc.strerror}"
        for name in names:
            path = os.path.join(folder, name)
            if tomllib is None:
                return f"cannot read Gemini CLI's policy file {path}: Python has no tomllib"
            try:
                with open(path, "rb") as f:
                    data = tomllib.load(f)
            except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
                return f"cannot read Gemini CLI's policy file {path}: {exc}"
            rules = data.get("rule", [])
            for rule in rules if isinstance(rules, list) else [rules]:
                why = _rule_conflict(rule, model, rewritten, shim, unnamed)
                if why:
                    return (f"{path}: {why}. Gemini CLI's policy sees the command ztsa "
                            "rewrites, not the model's (docs/agents.md, ztsa hook gemini)")
    return None


def _rule_conflict(rule: Any, model: str, rewritten: str, shim: str, unnamed: str
                   ) -> str | None:
    import re

    if not isinstance(rule, dict):
        return "a rule that is not a table"
    tools = _strings(rule.get("toolName", "*"))
    if tools is None:
        return "a rule whose toolName is not a string or a list of strings"
    if not any(t in ("run_shell_command", "*") for t in tools):
        return None
    decision = rule.get("decision")
    prefixes = _strings(rule.get("commandPrefix", []))
    regex, pattern = rule.get("commandRegex"), rule.get("argsPattern")
    if prefixes is None or not isinstance(regex, (str, type(None))) \
            or not isinstance(pattern, (str, type(None))):
        return "a rule on run_shell_command whose command fields cannot be read"
    if not prefixes and regex is None and pattern is None:
        return None  # the whole tool: it means the same on either command
    shown = f"{decision} rule (commandPrefix {prefixes}, commandRegex {regex!r})"
    try:
        regexes = [re.compile(r) for r in (regex, pattern) if r is not None]
    except re.error:
        return f"an {shown} whose pattern ztsa cannot read"
    if decision == "allow":
        # a prefix read as a plain start (Gemini CLI also wants a space or a quote after
        # it: this errs towards a refusal); one that holds the whole of this command's
        # name approves this command alone, what a prompt saves
        def wide(prefix: str) -> bool:
            prefix = prefix.rstrip()
            return unnamed.startswith(prefix) or (rewritten.startswith(prefix)
                                                  and len(prefix) < len(shim))

        commands = [c for c in (rewritten, unnamed) if c]
        if any(wide(p) for p in prefixes) \
                or (regex is not None and any(regexes[0].search(c) for c in commands)) \
                or (pattern is not None and any(
                    regexes[-1].search(json.dumps({"command": c})) for c in commands)):
            return (f"the {shown} approves every command ztsa runs, whatever the model "
                    "wrote; remove it (it names ztsa, or the directory of the names ztsa "
                    "gives each command, not one command's name)")
        return None
    args = json.dumps({"command": model})
    if any(_prefix_matches(model, p) for p in prefixes) \
            or (regex is not None and regexes[0].search(model)) \
            or (pattern is not None and regexes[-1].search(args)):
        return f"the {shown} matches the model's command"
    return None


# -- Claude Code: the shell prefix and its guard -------------------------------------------
PREFIX_VAR = "CLAUDE_CODE_SHELL_PREFIX"
# Claude Code ends a Bash call's string with this and its cwd file: `pwd -P >| FILE`
CWD_TAIL = " && pwd -P >| "
_GUARD_VALUED = ("--prefix", "--digest")


def _deny(reason: str) -> dict[str, Any]:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                   "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


def digest(text: bytes) -> str:
    import hashlib

    return hashlib.sha256(text).hexdigest()


def guard(event: dict[str, Any], prefix: str, expected: str,
          environ: dict[str, str] | os._Environ[str]) -> dict[str, Any] | None:
    """The guard's answer to one PreToolUse event: a deny when Claude Code would not run
    a Bash call through ztsa's wrapper (its CLAUDE_CODE_SHELL_PREFIX, which it passes to
    its hooks, is another; the wrapper's bytes are not those installed), else None:
    the person's rules and prompts decide. Any tool's call is denied while the project's
    settings turn Claude Code's prompts off (bypassPermissions): its file tools, which
    run outside the sandbox, could then rewrite the guard's settings, the wrapper or a
    shell start-up file unasked. ValueError for an event that is not one."""
    bash = _shell_call(event, CLAUDE) is not None
    project = environ.get(CLAUDE.project_env) or event.get("cwd")
    if not isinstance(project, str) or not os.path.isabs(project):
        return _deny("ztsa: the event names no project directory (CLAUDE_PROJECT_DIR or "
                     "cwd), whose settings could run this call outside the sandbox")
    loaded = project_settings(project)
    if isinstance(loaded, str):
        return _deny(f"ztsa: {loaded}")
    for path, doc in loaded:
        permissions = doc.get("permissions") if isinstance(doc, dict) else None
        if isinstance(permissions, dict) and \
                permissions.get("defaultMode") == "bypassPermissions":
            from ztsa.printable import printable

            return _deny(f"ztsa: {printable(path)} sets permissions.defaultMode to "
                         "bypassPermissions: Claude Code would run every tool unasked, and "
                         "its file tools run outside the sandbox (they could remove this "
                         "guard or write a shell start-up file). Remove it from the "
                         "project's settings, then start Claude Code again.")
    if not bash:
        return None
    actual = environ.get(PREFIX_VAR)
    if actual != prefix:
        from ztsa.printable import printable

        now = "unset" if not actual else f"set to {printable(actual)!r}"
        return _deny(f"ztsa: {PREFIX_VAR} is {now}, not ztsa's wrapper {printable(prefix)}:"
                     " a settings file (the project's .claude/settings.json or "
                     "settings.local.json, or --settings) overrides it, so this command "
                     "would not run confined. Remove that setting, or run `ztsa hook "
                     "claude --install` again.")
    try:
        fd = os.open(prefix, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
        with os.fdopen(fd, "rb") as f:
            found = digest(f.read(1 << 20))
    except OSError as exc:
        return _deny(f"ztsa: cannot read the wrapper {prefix} ({exc.strerror}); run "
                     "`ztsa hook claude --install` again")
    if found != expected:
        return _deny(f"ztsa: the wrapper {prefix} is not the one `ztsa hook claude "
                     "--install` wrote (its bytes changed); run the install again")
    why = project_env(loaded)
    return None if why is None else _deny(f"ztsa: {why}")


SETTINGS_MAX = 1 << 20  # a project settings file larger than this is not read: denied


def project_env(loaded: list[tuple[str, Any]]) -> str | None:
    """Why a Bash call must not run, from the project's Claude Code settings: their
    `env` names a variable that runs code outside the wrapper (surfacecheck.PREFIX_ESCAPING:
    the shell Claude Code starts, what it loads or runs while it makes its snapshot,
    where the wrapper's ztsa finds its policy, what ztsa shows); None when none does.
    Claude Code applies that `env` to its own process, and its first Bash call runs
    those before the command reaches the wrapper."""
    from ztsa.printable import printable
    from ztsa.surfacecheck import PREFIX_ESCAPING

    for path, doc in loaded:
        env = doc.get("env") if isinstance(doc, dict) else None
        names = sorted(n for n in (env if isinstance(env, dict) else ())
                       if PREFIX_ESCAPING.match(n))
        if names:
            shown = ", ".join(printable(n) for n in names)
            return (f"{printable(path)} sets {shown} in `env`: Claude Code would start its "
                    "shell, or run what that names, outside ztsa's wrapper (unconfined), "
                    "or the wrapper's ztsa would read another policy. Remove it from the "
                    "project's settings, then start Claude Code again.")
    return None


def project_settings(project: str) -> list[tuple[str, Any]] | str:
    """The project's Claude Code settings files that exist, (path, document) each, or
    why one cannot be read as settings (a reason to deny: not a regular file, too
    large, not JSON)."""
    import stat

    from ztsa.parsing import ParseError, load_jsonc
    from ztsa.printable import printable
    from ztsa.surfaces import CLAUDE_SETTINGS

    found: list[tuple[str, Any]] = []
    for rel in CLAUDE_SETTINGS:
        path = os.path.join(project, rel)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        except (FileNotFoundError, NotADirectoryError):
            continue
        except OSError as exc:
            return f"cannot read {printable(path)} ({exc.strerror}); the call is blocked"
        try:
            if not stat.S_ISREG(os.fstat(fd).st_mode):
                return f"{printable(path)} is not a regular file; the call is blocked"
            raw = os.read(fd, SETTINGS_MAX + 1)
        except OSError as exc:
            return f"cannot read {printable(path)} ({exc.strerror}); the call is blocked"
        finally:
            os.close(fd)
        try:
            if len(raw) > SETTINGS_MAX:
                raise ValueError("larger than 1 MiB")
            doc = load_jsonc(raw.decode("utf-8"), path)
        except (ParseError, ValueError) as exc:  # UnicodeDecodeError is a ValueError
            return (f"{printable(path)} cannot be read as settings ({printable(str(exc))}); "
                    "the call is blocked")
        found.append((path, doc))
    return found


def _guard_options(options: list[str]) -> tuple[str, str]:
    """--prefix PATH --digest HEX, the guard's words; ValueError otherwise (an entry of
    an older ztsa, which rewrote the call: it blocks until installed again)."""
    found: dict[str, str] = {}
    i = 0
    while i < len(options):
        name, eq, value = options[i].partition("=")
        if name not in _GUARD_VALUED or name in found:
            break
        if not eq:
            if i + 1 >= len(options):
                break
            i += 1
            value = options[i]
        found[name] = value
        i += 1
    if i != len(options) or len(found) != 2 or not os.path.isabs(found["--prefix"]):
        raise ValueError("this entry is not the guard of `ztsa hook claude --install` "
                         "(an older ztsa's hook, which rewrote the call?): run `ztsa hook "
                         "claude --install` again; the call is blocked")
    return found["--prefix"], found["--digest"]


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
        if agent.answer is None:
            _shell_call(event, agent)  # an event that is not one, named first
            answer = guard(event, *_guard_options(options), os.environ)
        else:
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
    written by --install (in exec form: `/bin/sh` with `args`), by hand or by a
    migration."""
    if not isinstance(handler, dict) or handler.get("type") != "command":
        return False
    command = handler.get("command")
    if not isinstance(command, str):
        return False
    args = handler.get("args")
    texts = [command, *(a for a in args if isinstance(a, str))] if isinstance(
        args, list) else [command]
    for text in texts:
        try:
            words = shlex.split(text)
        except ValueError:
            words = text.split()
        if any(os.path.basename(word) == "ztsa" and words[i + 1:i + 2] == ["hook"]
               and i + 2 < len(words) and words[i + 2] in agent.entries
               for i, word in enumerate(words)):
            return True
    return False


MANAGED_DIR = "/etc/claude-code"  # Claude Code's managed settings on Linux


def settings_path(scope: str, agent: Agent = CLAUDE) -> str:
    """The settings file of a scope. Claude Code: the user's (in $CLAUDE_CONFIG_DIR or
    ~/.claude), the project's shared or local one, in the current directory's .claude/,
    or the machine's managed settings. Gemini CLI: ~/.gemini/settings.json
    ($GEMINI_CLI_HOME in place of the home), or .gemini/settings.json in the current
    directory."""
    if agent is GEMINI:
        if scope == "user":
            home = os.environ.get("GEMINI_CLI_HOME") or os.path.expanduser("~")
            return os.path.join(os.path.abspath(home), ".gemini", "settings.json")
        return os.path.join(os.getcwd(), ".gemini", "settings.json")
    if scope == "managed":
        return os.path.join(MANAGED_DIR, "managed-settings.json")
    if scope == "user":
        home = os.environ.get("CLAUDE_CONFIG_DIR") or os.path.join(
            os.path.expanduser("~"), ".claude")
        return os.path.join(os.path.abspath(home), "settings.json")
    name = "settings.json" if scope == "project" else "settings.local.json"
    return os.path.join(os.getcwd(), ".claude", name)


def wrapper_path(scope: str, settings: str,
                 environ: Mapping[str, str] | None = None) -> str:
    """Where the shell wrapper of a scope's settings file lives: beside the managed
    settings (root's), else in ztsa's user configuration directory, the user policy's
    (~/.config/ztsa: hidden from every ztsa run, and read-only where a writable place
    holds it), one per settings file; of this process's environment, or of `environ`
    (the audited machine's: AGT001 accepts the prefix of this machine's install)."""
    if scope == "managed":
        return os.path.join(MANAGED_DIR, "ztsa-claude-shell")
    from ztsa.tiers import user_path

    tag = scope if scope == "user" else f"{scope}-{digest(os.fsencode(settings))[:12]}"
    return os.path.join(os.path.dirname(user_path(environ)), f"claude-shell-{tag}")


def is_ztsa_prefix(value: object) -> bool:
    """A CLAUDE_CODE_SHELL_PREFIX naming one of ztsa's wrappers."""
    return isinstance(value, str) and os.path.basename(value).startswith(
        ("claude-shell-", "ztsa-claude-shell"))


# what ztsa's own process reads to find its policy files and its state (the user policy
# in $XDG_CONFIG_HOME, else ~/.config; an added enterprise file; the parse cache), and
# the toolchain roots it shows the tree even in the hidden home (PYENV_ROOT, NVM_DIR,
# ...: ztsa.sandbox.toolchains). Claude Code puts a project's settings `env` (and an MCP
# server's `env`) into the wrapper's environment: the wrapper sets them as at install
PINNED_ENV = ("HOME", "XDG_CONFIG_HOME", "XDG_CACHE_HOME", "ZTSA_CACHE_DIR",
              "ZTSA_SYSTEM_POLICY", *(name for _, name, _ in ROOTS))


def pinned_env(scope: str, environ: dict[str, str] | os._Environ[str]) -> dict[str, str]:
    """PINNED_ENV's values for the wrapper: those of the install (HOME always, as ztsa
    finds it), none for a managed install (shared by every user: HOME then comes from
    the password database)."""
    if scope == "managed":
        return {}
    found = {name: environ[name] for name in PINNED_ENV if environ.get(name)}
    found["HOME"] = os.path.expanduser("~")
    return found


def wrapper_text(ztsa: str, options: list[str], bash: str, settings: str,
                 pinned: dict[str, str] | None = None) -> str:
    """The wrapper: `ztsa exec [EXEC OPTIONS] -- bash -c STRING` in the current directory
    (the workspace), for the one STRING Claude Code passes. Claude Code ends a Bash
    call's string with `pwd -P >| CWD-FILE` (its next call's directory): that file, in
    its temporary directory, is read-only to the tree, and the write would fail every
    command; the wrapper leaves it out, so a `cd` does not carry to the next call and
    every call starts in the project. CLAUDE_PROJECT_DIR (a hook's, an MCP server's)
    is passed on when it names the current directory (a project's settings `env`, or
    an MCP server's, may set it to any directory, which ztsa would show the tree).
    PINNED_ENV is set to `pinned` (unset where it has no value), whatever the caller's
    environment says."""
    run = shlex.join([ztsa, "exec", "--env", "CLAUDE_PROJECT_DIR", *options, "--", bash,
                      "-c"])
    tail = shlex.quote(CWD_TAIL)
    pinned = pinned or {}
    unset = [name for name in PINNED_ENV if name not in pinned]
    pins = "".join(f"{name}={shlex.quote(value)}; export {name}\n"
                   for name, value in pinned.items() if name in PINNED_ENV)
    return (
        "#!/bin/sh\n"
        f"# CLAUDE_CODE_SHELL_PREFIX of {json.dumps(settings)}, written by `ztsa hook\n"
        "# claude --install` (its guard blocks Bash calls if this file changes). Claude\n"
        "# Code runs each Bash call, shell-form hook and stdio MCP server as\n"
        "# `THIS-FILE STRING`: STRING runs under ztsa exec, the current directory its\n"
        "# workspace. Its Bash calls end with `&& pwd -P >| CWD-FILE`, a file the\n"
        "# confined tree cannot write: left out (a cd does not carry to the next call).\n"
        '[ "$#" -eq 1 ] || { echo "ztsa: $0 runs one command string, not $#" >&2; '
        "exit 2; }\n"
        "# where ztsa finds its policy and state, as at install: a project's settings\n"
        "# `env` reaches this program's environment\n"
        f"{pins}"
        + (f"unset {' '.join(unset)}\n" if unset else "") +
        "# CLAUDE_PROJECT_DIR is passed on only as the workspace itself: ztsa shows the\n"
        "# directory it names, read-only, even in the hidden home\n"
        'if [ -n "${CLAUDE_PROJECT_DIR+set}" ]; then\n'
        '  [ "$(cd "$CLAUDE_PROJECT_DIR" 2>/dev/null && pwd -P)" = "$(pwd -P)" ] || '
        "unset CLAUDE_PROJECT_DIR\n"
        "fi\n"
        'c=$1\n'
        f'f=${{c##*{tail}}}\n'
        'case $c in\n'
        f'*{tail}*/claude-*-cwd)\n'
        '  case $f in\n'
        "  */claude-*-cwd) case $f in *[!A-Za-z0-9/._-]*) ;; "
        f'*) c=${{c%{tail}*}} ;; esac ;;\n'
        '  esac ;;\n'
        'esac\n'
        f'exec {run} "$c"\n')


def guard_entry(ztsa: str, prefix: str, wrapper_digest: str, budget: int, timeout: str
                ) -> dict[str, Any]:
    """The guard's PreToolUse handler, in exec form (`args`): Claude Code puts its shell
    prefix before shell-form hooks only. `/bin/sh -c` runs the same fail-closed text as
    the other entries."""
    text = entry_command(ztsa, ["--prefix", prefix, "--digest", wrapper_digest], budget,
                         timeout)
    return {"type": "command", "command": "/bin/sh", "args": ["-c", text],
            "timeout": (budget + KILL_GRACE + MARGIN) * CLAUDE.timeout_unit}


def with_prefix(settings: dict[str, Any], prefix: str) -> dict[str, Any]:
    """The settings with `env.CLAUDE_CODE_SHELL_PREFIX` naming the wrapper; Refused when
    it names another program (a prefix of the person's own, which ztsa would replace)."""
    env = settings.get("env", {})
    old = env.get(PREFIX_VAR)
    if old not in (None, "", prefix) and not is_ztsa_prefix(old):
        raise Refused(f"`env` already sets {PREFIX_VAR} to {old!r}, a program that is not "
                      "ztsa's; ztsa would replace it: remove it first (or run it from "
                      "inside the confined command)")
    return {**settings, "env": {**env, PREFIX_VAR: prefix}}


def without_prefix(settings: dict[str, Any]) -> dict[str, Any]:
    """The settings without a CLAUDE_CODE_SHELL_PREFIX naming ztsa's wrapper (and without
    an `env` only it made non-empty)."""
    env = settings.get("env")
    if not isinstance(env, dict) or not is_ztsa_prefix(env.get(PREFIX_VAR)):
        return settings
    rest = {k: v for k, v in env.items() if k != PREFIX_VAR}
    new = {k: v for k, v in settings.items() if k != "env"}
    if rest:
        new["env"] = rest
    return new


def _managed_launcher(path: str) -> None:
    """A managed install's programs must be root's: a launcher (or the interpreter record
    beside it) the user may change would let them change what confines them."""
    import stat

    for p in (path, os.path.join(os.path.dirname(path), "ztsa-interpreter")):
        p = os.path.realpath(p)
        below = False  # a directory above the file: sticky (/tmp, /var/tmp) is enough
        while True:
            try:
                st = os.stat(p)
            except FileNotFoundError:
                break
            others = st.st_mode & 0o022 and not (below and st.st_mode & stat.S_ISVTX)
            if st.st_uid != 0 or others:
                raise Refused(f"--scope managed: {p} is not root's alone (owner uid "
                              f"{st.st_uid}, mode {st.st_mode & 0o7777:o}); install ztsa "
                              "where only root writes (e.g. a root-owned virtual "
                              "environment under /opt) and name it with --launcher")
            if p == "/":
                break
            p, below = os.path.dirname(p), True


def _no_constant(name: str) -> Any:
    raise ValueError(f"{name} is not JSON")


def load_settings(path: str, agent: Agent = CLAUDE) -> tuple[str | None, dict[str, Any]]:
    """The file's text (None when there is none) and its settings; Refused when it is not
    a JSON object whose `hooks`, `hooks.EVENT` (and Claude Code's `env`) have the
    agent's shapes (Gemini CLI
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
    if agent is CLAUDE and not isinstance(settings.get("env", {}), dict):
        raise Refused(f"{path}: `env` is not an object; it is left as it is")
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
            {"matcher": agent.matcher, "hooks": [handler]})
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
            elif keep_first is not None and group.get("matcher") == agent.matcher:
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


def write_settings(path: str, text: str, mode: int | None = None) -> None:
    """Replace the file (the target of a symbolic link, which stays) by a new one in the
    same directory, renamed over it: with `mode`, else the old file's mode, or the
    umask's for a new one."""
    import contextlib
    import tempfile

    real = os.path.realpath(path)
    folder = os.path.dirname(real)
    os.makedirs(folder, exist_ok=True)
    try:
        old_mode = os.stat(real).st_mode & 0o7777
    except FileNotFoundError:
        umask = os.umask(0o022)
        os.umask(umask)
        old_mode = 0o666 & ~umask
    mode = old_mode if mode is None else mode
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


def _bash_command() -> str:
    """bash by its absolute path, for the wrapper (which looks nothing up on PATH)."""
    import shutil

    found = shutil.which("bash")
    if found is None:
        raise Refused("no `bash` on PATH; the wrapper runs Claude Code's command strings "
                      "with it")
    return os.path.abspath(found)


class _Change:
    """One file --install or --uninstall changes: its old text (None: absent) and new
    text (None: removed)."""

    def __init__(self, path: str, old: str | None, new: str | None, mode: int | None = None
                 ) -> None:
        self.path, self.old, self.new, self.mode = path, old, new, mode

    def diff(self) -> list[str]:
        import difflib

        return [line + "\n" for line in difflib.unified_diff(
            (self.old or "").splitlines(), (self.new or "").splitlines(),
            self.path if self.old is not None else "/dev/null",
            self.path if self.new is not None else "/dev/null", lineterm="")]

    def apply(self) -> None:
        if self.new is not None:
            write_settings(self.path, self.new, self.mode)
        elif self.old is not None:
            os.unlink(self.path)


def _read_text(path: str) -> str | None:
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise Refused(f"cannot read {path}: {exc.strerror}") from None


def _claude_changes(flags: dict[str, str], options: list[str], scope: str, path: str,
                    old_text: str | None, settings: dict[str, Any]) -> list[_Change]:
    """Claude Code's files: the wrapper first (so the settings never name a wrapper not
    yet written; one missing runs nothing), then the settings; reversed to uninstall."""
    prefix = wrapper_path(scope, path)
    if " -" in prefix:
        # Claude Code splits the prefix at its last " -" into a program and its options
        raise Refused(f"the wrapper's path {prefix} holds ' -', which Claude Code would "
                      "split into a program and options; set XDG_CONFIG_HOME to a path "
                      "without it")
    old_wrapper = _read_text(prefix)
    if "--install" in flags:
        ztsa = _launcher_for_entry(flags.get("--launcher"))
        if scope == "managed":
            _managed_launcher(ztsa)
        text = wrapper_text(ztsa, options, _bash_command(), path,
                            pinned_env(scope, os.environ))
        handler = guard_entry(ztsa, prefix, digest(text.encode()),
                              _budget(flags.get("--budget")), _timeout_command())
        _check_exec_options(options)
        new = with_entry(with_prefix(settings, prefix), handler, CLAUDE)
        return [_Change(prefix, old_wrapper, text, 0o755),
                _Change(path, old_text, dump(new) if new != settings else old_text)]
    new = without_prefix(without_entry(settings, agent=CLAUDE))
    return [_Change(path, old_text, dump(new) if new != settings else old_text),
            _Change(prefix, old_wrapper, None)]


def setup(flags: dict[str, str], options: list[str], agent: Agent = CLAUDE) -> int:
    """--install or --uninstall: the unified diff on stdout, then the files written
    (unless --dry-run)."""
    scope = flags.get("--scope", "user")
    installing = "--install" in flags
    try:
        if scope not in agent.scopes:
            raise Refused(f"--scope {scope}: one of {', '.join(agent.scopes)}")
        path = settings_path(scope, agent)
        old_text, settings = load_settings(path, agent)
        if agent.answer is None:
            changes = _claude_changes(flags, options, scope, path, old_text, settings)
        elif installing:
            handler = entry(_launcher_for_entry(flags.get("--launcher")), options,
                            _budget(flags.get("--budget")), _timeout_command(), agent)
            _check_exec_options(options)
            new = with_entry(settings, handler, agent)
            changes = [_Change(path, old_text, dump(new) if new != settings else old_text)]
        else:
            new = without_entry(settings, agent=agent)
            changes = [_Change(path, old_text, dump(new) if new != settings else old_text)]
    except Refused as exc:
        print(f"ztsa hook: refused: {exc}", file=sys.stderr)
        return BLOCK
    changes = [c for c in changes if c.new != c.old]
    if not changes:
        if old_text is None and not installing:
            print(f"ztsa hook: there is no {path}; nothing to remove", file=sys.stderr)
        else:
            print(f"ztsa hook: {path} " + ("already holds this entry" if installing
                                           else "holds no ztsa hook") + "; left as it is",
                  file=sys.stderr)
        return 0
    for change in changes:
        sys.stdout.writelines(change.diff())
    if "--dry-run" in flags:
        print(f"ztsa hook: --dry-run: {', '.join(c.path for c in changes)} left as they "
              "are", file=sys.stderr)
        return 0
    for change in changes:
        try:
            change.apply()
        except OSError as exc:
            print(f"ztsa hook: refused: cannot write {change.path}: {exc.strerror}",
                  file=sys.stderr)
            return BLOCK
        what = ("wrote" if change.old is None else "rewrote") if change.new is not None \
            else "removed"
        print(f"ztsa hook: {what} {change.path}", file=sys.stderr)
    return 0
