"""`ztsa hook claude --install`: the entry written into Claude Code's settings, and that
entry's command run as Claude Code runs a hook: `sh -c COMMAND`, the event on stdin,
Claude Code's environment (here a PATH without ztsa's virtual environment)."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import stat
import subprocess
import sys
import time
from pathlib import Path

import pytest

import ztsa
from ztsa import hook as ztsa_hook

CHECKOUT = os.path.dirname(os.path.dirname(os.path.abspath(ztsa.__file__)))
BLOCKED = "ztsa hook: ztsa failed or could not run (exit {}); the call is blocked"
# Claude Code's environment for the hook: ztsa's virtual environment is not on PATH
CLAUDE_PATH = "/usr/bin:/bin"


def ztsa_bin() -> str:
    """The installed launcher, found as integration/conftest.py's fixture finds it."""
    beside = os.path.join(os.path.dirname(sys.executable), "ztsa")
    path = beside if os.access(beside, os.X_OK) else shutil.which("ztsa")
    if path is None:
        pytest.fail("the `ztsa` command is not installed: run `pip install .` first")
    return path


def checkout_launcher(folder: Path) -> Path:
    """A launcher named `ztsa` (as the installed one is) that runs this checkout's code,
    for the installs that find their launcher themselves."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "ztsa"
    code = (f"import sys; sys.path.insert(0, {CHECKOUT!r}); sys.argv[0:2] = sys.argv[1:2]; "
            "from ztsa.cli import entry; entry()")
    path.write_text(f"#!/bin/sh\nexec {shlex.join([sys.executable, '-I', '-c', code])} "
                    '"$0" "$@"\n')
    path.chmod(0o755)
    return path


def script(folder: Path, body: str) -> Path:
    """A stand-in launcher named `ztsa`."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "ztsa"
    path.write_text(f"#!/bin/sh\n{body}\n")
    path.chmod(0o755)
    return path


class Claude:
    """A HOME and a project directory, and ztsa run in that project."""

    def __init__(self, base: Path) -> None:
        self.home = base / "home"
        self.project = base / "project"
        self.home.mkdir()
        self.project.mkdir()
        self.env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CONFIG_DIR"}
        self.env["HOME"] = str(self.home)

    def settings(self, scope: str = "user") -> Path:
        return {"user": self.home / ".claude" / "settings.json",
                "project": self.project / ".claude" / "settings.json",
                "local": self.project / ".claude" / "settings.local.json"}[scope]

    def ztsa(self, *args: str, argv0: list[str] | None = None,
             env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        """`ztsa hook claude ARGS`, by default this checkout's (`python -m ztsa`)."""
        return subprocess.run([*(argv0 or [sys.executable, "-m", "ztsa"]), "hook", "claude",
                               *args], capture_output=True, text=True, timeout=60,
                              cwd=self.project, env={**self.env, **(env or {})})

    def install(self, *args: str, scope: str = "user") -> dict[str, object]:
        """Install and return the one ztsa handler the settings then hold."""
        done = self.ztsa("--install", "--scope", scope, *args)
        assert done.returncode == 0, done.stderr
        return only_ztsa_handler(json.loads(self.settings(scope).read_text()))

    def event(self, **fields: object) -> bytes:
        return json.dumps({
            "session_id": "5d1b7c2e-0f3a-4c55-9a51-2b1f0c8e9d10",
            "transcript_path": str(self.home / "transcript.jsonl"),
            "cwd": str(self.project), "permission_mode": "default",
            "hook_event_name": "PreToolUse", "tool_name": "Bash",
            "tool_input": {"command": "echo hi", "description": "say hi"},
            "tool_use_id": "toolu_01ABC", **fields}).encode()

    def run_hook(self, command: str, stdin: bytes) -> subprocess.CompletedProcess[bytes]:
        """The entry's command as Claude Code runs it."""
        return subprocess.run(["sh", "-c", command], input=stdin, capture_output=True,
                              timeout=60, cwd=self.project,
                              env={"PATH": CLAUDE_PATH, "HOME": str(self.home),
                                   "CLAUDE_PROJECT_DIR": str(self.project)})


def ztsa_handlers(settings: dict[str, object]) -> list[dict[str, object]]:
    hooks = settings.get("hooks", {})
    assert isinstance(hooks, dict)
    return [h for group in hooks.get("PreToolUse", []) for h in group.get("hooks", [])
            if ztsa_hook.is_ztsa_hook(h)]


def only_ztsa_handler(settings: dict[str, object]) -> dict[str, object]:
    found = ztsa_handlers(settings)
    assert len(found) == 1, found
    return found[0]


@pytest.fixture
def claude(tmp_path: Path) -> Claude:
    return Claude(tmp_path)


# -- the settings file ----------------------------------------------------------------------
def test_the_entry_names_the_launcher_it_was_run_by_resolved(claude: Claude, tmp_path: Path):
    real = checkout_launcher(tmp_path / "venv" / "bin")
    (tmp_path / "local-bin").mkdir()
    (tmp_path / "local-bin" / "ztsa").symlink_to(real)
    done = claude.ztsa("--install", "--profile", "dependency", "--allow-net",
                       "registry.npmjs.org:443", argv0=[str(tmp_path / "local-bin" / "ztsa")])
    assert done.returncode == 0, done.stderr
    settings = json.loads(claude.settings().read_text())
    assert settings == {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
        "type": "command",
        "command": f"{shutil.which('timeout')} -k 5 30 {real} hook claude --profile "
                   "dependency --allow-net registry.npmjs.org:443 || { echo 'ztsa hook: ztsa "
                   "failed or could not run (exit '$?'); the call is blocked' >&2; exit 2; }",
        "timeout": 45}]}]}}
    # Claude Code's own timeout never cancels the hook before `timeout` ends it
    assert ztsa_hook.BUDGET + ztsa_hook.KILL_GRACE < 45
    assert claude.settings().read_text().endswith("}\n")
    assert done.stdout.startswith("--- /dev/null\n+++ ") and '+        "matcher": "Bash",\n' \
        in done.stdout


def test_without_an_installed_launcher_it_refuses(claude: Claude):
    done = claude.ztsa("--install", "--profile", "repo")  # python -m ztsa: no launcher
    assert done.returncode == 2 and done.stdout == ""
    assert "not started by an installed `ztsa` command" in done.stderr
    assert "--launcher PATH" in done.stderr
    assert not claude.settings().exists()


def test_a_second_install_changes_nothing_and_other_settings_stay(claude: Claude):
    settings = claude.settings("project")
    settings.parent.mkdir()
    logger = {"type": "command", "command": "logger -t claude-bash", "timeout": 5}
    before = {
        "model": "claude-opus-4-6", "permissions": {"allow": ["Bash(npm run:*)"], "deny": []},
        "env": {"GREETING": "grüß dich ✓"},
        "hooks": {
            "PostToolUse": [{"matcher": "Bash", "hooks": [logger]}],
            "PreToolUse": [
                {"matcher": "Edit|Write", "hooks": [{"type": "command", "command": "lint"}]},
                # the entry docs/agents.md used to give, written by hand: replaced in place
                {"matcher": "Bash", "hooks": [
                    logger, {"type": "command", "command": "ztsa hook claude --profile repo"}]},
            ],
        },
        "statusLine": {"type": "command", "command": "echo 1.0", "padding": 0},
    }
    settings.write_text(json.dumps(before, indent=4, ensure_ascii=False))
    settings.chmod(0o640)
    handler = claude.install("--launcher", ztsa_bin(), "--profile", "dependency",
                             scope="project")
    after = json.loads(settings.read_text())
    assert list(after) == list(before)
    assert {k: v for k, v in after.items() if k != "hooks"} == \
        {k: v for k, v in before.items() if k != "hooks"}
    assert after["hooks"]["PostToolUse"] == before["hooks"]["PostToolUse"]
    assert after["hooks"]["PreToolUse"] == [
        before["hooks"]["PreToolUse"][0], {"matcher": "Bash", "hooks": [logger, handler]}]
    assert stat.S_IMODE(settings.stat().st_mode) == 0o640
    text = settings.read_bytes()

    again = claude.ztsa("--install", "--scope", "project", "--launcher", ztsa_bin(),
                        "--profile", "dependency")
    assert again.returncode == 0 and again.stdout == ""
    assert "already holds this entry" in again.stderr
    assert settings.read_bytes() == text
    assert sorted(os.listdir(settings.parent)) == ["settings.json"]  # no temporary left

    # other options: the one entry is updated in place
    other = claude.install("--launcher", ztsa_bin(), "--profile", "untrusted",
                           scope="project")
    assert "--profile untrusted" in str(other["command"])
    assert json.loads(settings.read_text())["hooks"]["PreToolUse"][1]["hooks"] == [logger, other]

    gone = claude.ztsa("--uninstall", "--scope", "project")
    assert gone.returncode == 0, gone.stderr
    assert f"-            \"command\": {json.dumps(other['command'])}" in gone.stdout
    expected = json.loads(json.dumps(before))
    expected["hooks"]["PreToolUse"][1]["hooks"] = [logger]
    assert json.loads(settings.read_text()) == expected
    again = claude.ztsa("--uninstall", "--scope", "project")
    assert again.returncode == 0 and "holds no ztsa hook" in again.stderr


def test_uninstall_takes_away_what_install_added(claude: Claude):
    claude.install("--launcher", ztsa_bin(), scope="local")
    assert claude.ztsa("--uninstall", "--scope", "local").returncode == 0
    assert claude.settings("local").read_text() == "{}\n"
    assert not claude.settings("project").exists()


def test_dry_run_prints_the_diff_and_writes_nothing(claude: Claude):
    claude.settings().parent.mkdir()
    claude.settings().write_text('{"model": "x"}\n')
    done = claude.ztsa("--install", "--dry-run", "--launcher", ztsa_bin())
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"--- {claude.settings()}\n+++ {claude.settings()}\n")
    assert '-{"model": "x"}\n' in done.stdout and '+  "model": "x",\n' in done.stdout
    assert claude.settings().read_text() == '{"model": "x"}\n'


def test_the_user_settings_follow_claude_config_dir(claude: Claude, tmp_path: Path):
    done = claude.ztsa("--install", "--launcher", ztsa_bin(),
                       env={"CLAUDE_CONFIG_DIR": str(tmp_path / "config")})
    assert done.returncode == 0, done.stderr
    assert only_ztsa_handler(json.loads((tmp_path / "config" / "settings.json").read_text()))
    assert not claude.settings().exists()


def test_a_linked_settings_file_stays_a_link(claude: Claude, tmp_path: Path):
    dotfile = tmp_path / "dotfiles" / "claude-settings.json"
    dotfile.parent.mkdir()
    dotfile.write_text("{}")
    claude.settings().parent.mkdir()
    claude.settings().symlink_to(dotfile)
    claude.install("--launcher", ztsa_bin())
    assert claude.settings().is_symlink()
    assert only_ztsa_handler(json.loads(dotfile.read_text()))


@pytest.mark.parametrize("text", [
    "", "not json", '{"model": "x",}', "[]", '{"hooks": []}',
    '{"hooks": {"PreToolUse": {}}}', '{"a": NaN}', "\ufeff{}",
])
def test_a_settings_file_it_cannot_read_is_left_untouched(claude: Claude, text: str):
    settings = claude.settings("project")
    settings.parent.mkdir()
    settings.write_text(text)
    before = settings.stat()
    for action in ("--install", "--uninstall"):
        extra = ["--launcher", ztsa_bin()] if action == "--install" else []
        done = claude.ztsa(action, "--scope", "project", *extra)
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith("ztsa hook: refused: ") and "left as it is" in done.stderr
    assert settings.read_text() == text
    assert settings.stat().st_mtime_ns == before.st_mtime_ns
    assert os.listdir(settings.parent) == ["settings.json"]


@pytest.mark.parametrize("args, message", [
    (["--install", "--profle", "repo"], "not those of `ztsa exec`"),
    (["--install", "--scope", "global"], "--scope global: one of user, project, local"),
    (["--install", "--budget", "0"], "--budget 0: a whole number"),
    (["--install", "--launcher", "/nonexistent/ztsa"], "not an executable file"),
    (["--dry-run"], "--dry-run goes with --install or --uninstall"),
    (["--install", "--uninstall"], "not both"),
    (["--uninstall", "--profile", "repo"], "--uninstall takes no EXEC OPTIONS"),
    (["--profile", "repo", "--install"], "--install goes right after `claude`"),
])
def test_what_it_refuses_to_install(claude: Claude, args: list[str], message: str):
    if args[0] == "--install" and "--launcher" not in args:
        args = ["--install", "--launcher", ztsa_bin(), *args[1:]]
    done = claude.ztsa(*args)
    assert done.returncode == 2 and done.stdout == "" and message in done.stderr
    assert not claude.settings().exists()


# -- the entry, run as Claude Code runs it ----------------------------------------------------
def test_the_entry_answers_without_ztsa_on_path(claude: Claude):
    launcher = ztsa_bin()
    assert os.path.dirname(launcher) not in CLAUDE_PATH.split(":")
    # the entry docs/agents.md used to give is not found here: 127, which Claude Code
    # takes as a non-blocking error, and the call would have run unconfined
    old = claude.run_hook("ztsa hook claude --profile repo", claude.event())
    assert old.returncode == 127
    command = str(claude.install("--launcher", launcher, "--profile", "repo")["command"])
    done = claude.run_hook(command, claude.event())
    assert done.returncode == 0, done.stderr
    answer = json.loads(done.stdout)["hookSpecificOutput"]
    assert "permissionDecision" not in answer
    assert answer["updatedInput"] == {
        "command": f"{os.path.realpath(launcher)} exec --workspace {claude.project} "
                   "--profile repo -- bash -c 'echo hi'",
        "description": "say hi"}


def test_a_launcher_moved_away_blocks_the_call(claude: Claude, tmp_path: Path):
    copy = tmp_path / "bin" / "ztsa"
    copy.parent.mkdir()
    shutil.copy2(ztsa_bin(), copy)
    command = str(claude.install("--launcher", str(copy), "--profile", "repo")["command"])
    # (a copy of the launcher itself refuses to run, exit 125: it is tied to its own
    # installation; the entry blocks that too, test_a_launcher_that_fails_blocks_the_call)
    copy.unlink()
    done = claude.run_hook(command, claude.event())
    assert done.returncode == 2 and done.stdout == b""
    assert done.stderr.decode().endswith(BLOCKED.format(127) + "\n")


@pytest.mark.parametrize("body", ["sleep 1000", "trap '' TERM; sleep 1000"],
                         ids=["hangs", "hangs-ignoring-TERM"])
def test_a_launcher_that_hangs_blocks_the_call_within_its_budget(
        claude: Claude, tmp_path: Path, body: str):
    handler = claude.install("--launcher", str(script(tmp_path / "bin", body)),
                             "--budget", "1")
    assert handler["timeout"] == 1 + ztsa_hook.KILL_GRACE + ztsa_hook.MARGIN
    start = time.monotonic()
    done = claude.run_hook(str(handler["command"]), claude.event())
    took = time.monotonic() - start
    assert done.returncode == 2 and done.stdout == b""
    assert took < 1 + ztsa_hook.KILL_GRACE + 3, took
    code = 124 if body == "sleep 1000" else 137  # TERM's end, or KILL's after the grace
    assert done.stderr.decode().endswith(BLOCKED.format(code) + "\n")


@pytest.mark.parametrize("body, code", [
    ("exit 1", 1),
    ("echo '{\"partial\":' ; exit 1", 1),
    ('exec /nonexistent/python3 -I -S "$@"', 127),  # a broken interpreter
    ("kill -SEGV $$", 128 + 11),  # a crash
])
def test_a_launcher_that_fails_blocks_the_call(claude: Claude, tmp_path: Path, body: str,
                                              code: int):
    command = str(claude.install("--launcher", str(script(tmp_path / "bin", body)))["command"])
    done = claude.run_hook(command, claude.event())
    assert done.returncode == 2
    assert done.stderr.decode().endswith(BLOCKED.format(code) + "\n")


def test_a_malformed_event_blocks_the_call(claude: Claude):
    command = str(claude.install("--launcher", ztsa_bin())["command"])
    done = claude.run_hook(command, b'{"tool_name": "Bash", "tool_input": {"command": 7}}')
    assert done.returncode == 2 and done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert lines[0].startswith("ztsa hook: refused: ") and lines[-1] == BLOCKED.format(2)


def test_without_timeout_the_call_is_blocked(claude: Claude):
    command = str(claude.install("--launcher", ztsa_bin())["command"])
    timeout = str(shutil.which("timeout"))
    assert command.startswith(timeout + " ")
    done = claude.run_hook("/nonexistent/timeout" + command[len(timeout):], claude.event())
    assert done.returncode == 2
    assert done.stderr.decode().endswith(BLOCKED.format(127) + "\n")
