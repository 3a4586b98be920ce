"""`ztsa hook claude --install`: what it writes into Claude Code's settings (the shell
prefix in `env`, the guard's PreToolUse entry) and the wrapper beside ztsa's own
configuration, and the guard's entry run as Claude Code runs an exec-form hook: its
command with its args, the event on stdin, Claude Code's environment (here a PATH
without ztsa's virtual environment, the settings' CLAUDE_CODE_SHELL_PREFIX)."""

from __future__ import annotations

import hashlib
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
        self.env = {k: v for k, v in os.environ.items()
                    if k not in ("CLAUDE_CONFIG_DIR", "XDG_CONFIG_HOME")}
        self.env["HOME"] = str(self.home)

    def wrapper(self, scope: str = "user") -> Path:
        """Where the install writes the scope's wrapper (tests of the path itself below)."""
        if scope == "user":
            return self.home / ".config" / "ztsa" / "claude-shell-user"
        found = list((self.home / ".config" / "ztsa").glob(f"claude-shell-{scope}-*"))
        assert len(found) == 1, found
        return found[0]

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

    def run_hook(self, handler: dict[str, object], stdin: bytes,
                 prefix: str | None = None) -> subprocess.CompletedProcess[bytes]:
        """The entry as Claude Code runs an exec-form hook (no shell, no prefix before
        it), the settings' prefix (by default the installed one) in its environment."""
        command, args = handler["command"], handler["args"]
        assert isinstance(command, str) and isinstance(args, list)
        return subprocess.run([command, *args], input=stdin, capture_output=True,
                              timeout=60, cwd=self.project,
                              env={"PATH": CLAUDE_PATH, "HOME": str(self.home),
                                   "CLAUDE_PROJECT_DIR": str(self.project),
                                   "CLAUDE_CODE_SHELL_PREFIX": prefix or str(self.wrapper())})


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
def guard_text(launcher: str, wrapper: Path, budget: int = 30) -> str:
    text = wrapper.read_bytes()
    return (f"{shutil.which('timeout')} -k 5 {budget} {launcher} hook claude --prefix {wrapper} "
            f"--digest {hashlib.sha256(text).hexdigest()} || {{ echo 'ztsa hook: ztsa failed "
            "or could not run (exit '$?'); the call is blocked' >&2; exit 2; }")


def test_the_entry_names_the_launcher_it_was_run_by_resolved(claude: Claude, tmp_path: Path):
    real = checkout_launcher(tmp_path / "venv" / "bin")
    (tmp_path / "local-bin").mkdir()
    (tmp_path / "local-bin" / "ztsa").symlink_to(real)
    done = claude.ztsa("--install", "--profile", "dependency", "--allow-net",
                       "registry.npmjs.org:443", argv0=[str(tmp_path / "local-bin" / "ztsa")])
    assert done.returncode == 0, done.stderr
    wrapper = claude.wrapper()
    settings = json.loads(claude.settings().read_text())
    assert settings == {
        "env": {"CLAUDE_CODE_SHELL_PREFIX": str(wrapper)},
        "hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{
            "type": "command", "command": "/bin/sh",
            "args": ["-c", guard_text(str(real), wrapper)], "timeout": 45}]}]}}
    # the wrapper: the same launcher, the options, bash by its path; executable
    assert stat.S_IMODE(wrapper.stat().st_mode) == 0o755
    last = wrapper.read_text().splitlines()[-1]
    assert last == (f"exec {real} exec --env CLAUDE_PROJECT_DIR --profile dependency "
                    f"--allow-net registry.npmjs.org:443 -- {shutil.which('bash')} -c \"$c\"")
    # Claude Code splits a prefix at its last " -": none here, so it is one program
    assert " -" not in str(wrapper)
    # Claude Code's own timeout never cancels the hook before `timeout` ends it
    assert ztsa_hook.BUDGET + ztsa_hook.KILL_GRACE < 45
    assert claude.settings().read_text().endswith("}\n")
    assert done.stdout.startswith(f"--- /dev/null\n+++ {wrapper}\n")
    assert f"--- /dev/null\n+++ {claude.settings()}\n" in done.stdout
    assert '+        "matcher": "Bash",\n' in done.stdout


def test_without_an_installed_launcher_it_refuses(claude: Claude):
    done = claude.ztsa("--install", "--profile", "repo")  # python -m ztsa: no launcher
    assert done.returncode == 2 and done.stdout == ""
    assert "not started by an installed `ztsa` command" in done.stderr
    assert "--launcher PATH" in done.stderr
    assert not claude.settings().exists() and not claude.wrapper().exists()


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
    wrapper = claude.wrapper("project")
    after = json.loads(settings.read_text())
    assert list(after) == list(before)
    assert {k: v for k, v in after.items() if k not in ("hooks", "env")} == \
        {k: v for k, v in before.items() if k not in ("hooks", "env")}
    assert after["env"] == {"GREETING": "grüß dich ✓", "CLAUDE_CODE_SHELL_PREFIX": str(wrapper)}
    assert after["hooks"]["PostToolUse"] == before["hooks"]["PostToolUse"]
    assert after["hooks"]["PreToolUse"] == [
        before["hooks"]["PreToolUse"][0], {"matcher": "Bash", "hooks": [logger, handler]}]
    assert stat.S_IMODE(settings.stat().st_mode) == 0o640
    text, wrapper_text = settings.read_bytes(), wrapper.read_bytes()

    again = claude.ztsa("--install", "--scope", "project", "--launcher", ztsa_bin(),
                        "--profile", "dependency")
    assert again.returncode == 0 and again.stdout == ""
    assert "already holds this entry" in again.stderr
    assert settings.read_bytes() == text and wrapper.read_bytes() == wrapper_text
    assert sorted(os.listdir(settings.parent)) == ["settings.json"]  # no temporary left
    assert sorted(os.listdir(wrapper.parent)) == [wrapper.name]

    # other options: the wrapper rewritten, the one entry updated in place (its digest)
    other = claude.install("--launcher", ztsa_bin(), "--profile", "untrusted",
                           scope="project")
    assert "--profile untrusted" in wrapper.read_text()
    assert other != handler and other["args"][1] == guard_text(ztsa_bin(), wrapper)
    assert json.loads(settings.read_text())["hooks"]["PreToolUse"][1]["hooks"] == [logger, other]

    gone = claude.ztsa("--uninstall", "--scope", "project")
    assert gone.returncode == 0, gone.stderr
    assert '-  "command": "/bin/sh",' in gone.stdout.replace("          ", "")
    assert f"--- {wrapper}\n+++ /dev/null\n" in gone.stdout
    expected = json.loads(json.dumps(before))
    expected["hooks"]["PreToolUse"][1]["hooks"] = [logger]
    assert json.loads(settings.read_text()) == expected
    assert not wrapper.exists()
    again = claude.ztsa("--uninstall", "--scope", "project")
    assert again.returncode == 0 and "holds no ztsa hook" in again.stderr


def test_uninstall_takes_away_what_install_added(claude: Claude):
    claude.install("--launcher", ztsa_bin(), scope="local")
    wrapper = claude.wrapper("local")
    assert claude.ztsa("--uninstall", "--scope", "local").returncode == 0
    assert claude.settings("local").read_text() == "{}\n"
    assert not claude.settings("project").exists() and not wrapper.exists()


def test_each_settings_file_has_its_own_wrapper(claude: Claude, tmp_path: Path):
    """Two projects' local installs with other options: neither rewrites the other's."""
    claude.install("--launcher", ztsa_bin(), "--profile", "repo", scope="local")
    first = claude.wrapper("local")
    claude.project = tmp_path / "project-2"
    claude.project.mkdir()
    claude.install("--launcher", ztsa_bin(), "--profile", "untrusted", scope="local")
    wrappers = sorted((claude.home / ".config" / "ztsa").glob("claude-shell-local-*"))
    assert len(wrappers) == 2 and first in wrappers
    assert "--profile repo" in first.read_text()


def test_dry_run_prints_the_diff_and_writes_nothing(claude: Claude):
    claude.settings().parent.mkdir()
    claude.settings().write_text('{"model": "x"}\n')
    done = claude.ztsa("--install", "--dry-run", "--launcher", ztsa_bin())
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"--- /dev/null\n+++ {claude.wrapper()}\n")
    assert f"--- {claude.settings()}\n+++ {claude.settings()}\n" in done.stdout
    assert '-{"model": "x"}\n' in done.stdout and '+  "model": "x",\n' in done.stdout
    assert claude.settings().read_text() == '{"model": "x"}\n'
    assert not claude.wrapper().exists()


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
    '{"hooks": {"PreToolUse": {}}}', '{"a": NaN}', "\ufeff{}", '{"env": []}',
    # a prefix of the person's own: ztsa would replace it
    '{"env": {"CLAUDE_CODE_SHELL_PREFIX": "/usr/local/bin/audit-log"}}',
])
def test_a_settings_file_it_cannot_read_is_left_untouched(claude: Claude, text: str):
    settings = claude.settings("project")
    settings.parent.mkdir()
    settings.write_text(text)
    before = settings.stat()
    for action in ("--install", "--uninstall"):
        extra = ["--launcher", ztsa_bin()] if action == "--install" else []
        done = claude.ztsa(action, "--scope", "project", *extra)
        if action == "--uninstall" and "audit-log" in text:
            assert done.returncode == 0 and "holds no ztsa hook" in done.stderr
            continue
        assert done.returncode == 2 and done.stdout == ""
        assert done.stderr.startswith("ztsa hook: refused: ")
        assert "left as it is" in done.stderr or "remove it first" in done.stderr
    assert settings.read_text() == text
    assert settings.stat().st_mtime_ns == before.st_mtime_ns
    assert os.listdir(settings.parent) == ["settings.json"]
    assert not (claude.home / ".config" / "ztsa").exists()


@pytest.mark.parametrize("args, message", [
    (["--install", "--profle", "repo"], "not those of `ztsa exec`"),
    (["--install", "--scope", "global"], "--scope global: one of user, project, local, managed"),
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
    assert not claude.settings().exists() and not claude.wrapper().exists()


def test_a_wrapper_path_claude_code_would_split_is_refused(claude: Claude, tmp_path: Path):
    """Claude Code reads `PATH -x` as the program PATH with the option -x: a wrapper
    under a directory named with " -" would not be found, and every call would fail."""
    config = tmp_path / "a -b"
    done = claude.ztsa("--install", "--launcher", ztsa_bin(),
                       env={"XDG_CONFIG_HOME": str(config)})
    assert done.returncode == 2 and "would split" in done.stderr
    assert not config.exists() and not claude.settings().exists()


def test_a_managed_install_wants_a_launcher_only_root_may_change(claude: Claude,
                                                                 tmp_path: Path):
    """--scope managed (/etc/claude-code, which no project or user setting overrides):
    a launcher in a directory others may write would let them change what confines
    them. Refused before anything is read or written under /etc."""
    launcher = checkout_launcher(tmp_path / "shared" / "bin")
    os.chmod(tmp_path / "shared", 0o777)
    done = claude.ztsa("--install", "--scope", "managed", "--launcher", str(launcher))
    assert done.returncode == 2, done.stderr
    assert "--scope managed: " in done.stderr and "is not root's alone" in done.stderr


# -- the guard's entry, run as Claude Code runs it --------------------------------------------
def test_the_entry_answers_without_ztsa_on_path(claude: Claude):
    launcher = ztsa_bin()
    assert os.path.dirname(launcher) not in CLAUDE_PATH.split(":")
    handler = claude.install("--launcher", launcher, "--profile", "repo")
    done = claude.run_hook(handler, claude.event())
    assert done.returncode == 0 and done.stdout == b"", done.stderr  # nothing to say
    other = claude.run_hook(handler, claude.event(), prefix="/tmp/not-ztsa")
    assert other.returncode == 0, other.stderr
    answer = json.loads(other.stdout)["hookSpecificOutput"]
    assert answer["permissionDecision"] == "deny" and "updatedInput" not in answer


def test_a_launcher_moved_away_blocks_the_call(claude: Claude, tmp_path: Path):
    copy = tmp_path / "bin" / "ztsa"
    copy.parent.mkdir()
    shutil.copy2(ztsa_bin(), copy)
    handler = claude.install("--launcher", str(copy), "--profile", "repo")
    # (a copy of the launcher itself refuses to run, exit 125: it is tied to its own
    # installation; the entry blocks that too, test_a_launcher_that_fails_blocks_the_call)
    copy.unlink()
    done = claude.run_hook(handler, claude.event())
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
    done = claude.run_hook(handler, claude.event())
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
    handler = claude.install("--launcher", str(script(tmp_path / "bin", body)))
    done = claude.run_hook(handler, claude.event())
    assert done.returncode == 2
    assert done.stderr.decode().endswith(BLOCKED.format(code) + "\n")


def test_a_malformed_event_blocks_the_call(claude: Claude):
    handler = claude.install("--launcher", ztsa_bin())
    done = claude.run_hook(handler, b'{"tool_name": "Bash", "tool_input": {"command": 7}}')
    assert done.returncode == 2 and done.stdout == b""
    lines = done.stderr.decode().splitlines()
    assert lines[0].startswith("ztsa hook: refused: ") and lines[-1] == BLOCKED.format(2)


def test_without_timeout_the_call_is_blocked(claude: Claude):
    handler = claude.install("--launcher", ztsa_bin())
    text = str(handler["args"][1])  # type: ignore[index]
    timeout = str(shutil.which("timeout"))
    assert text.startswith(timeout + " ")
    handler["args"] = ["-c", "/nonexistent/timeout" + text[len(timeout):]]
    done = claude.run_hook(handler, claude.event())
    assert done.returncode == 2
    assert done.stderr.decode().endswith(BLOCKED.format(127) + "\n")
