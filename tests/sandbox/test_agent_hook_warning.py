"""`ztsa exec --agent claude` where Claude Code's settings hold ztsa's own Bash hook:
inside the sandbox that hook cannot run ztsa (its launcher is in the hidden home; a ztsa
run does not nest), so every Bash call is blocked and the agent is told only that ztsa
failed. Found by the newcomer's walkthrough (integration/test_walkthrough.py): ztsa says
so before the run, naming the file."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from ztsa.hook import guard_entry
from ztsa.sandbox.agents import hook_warning

WRAPPER = "/home/me/.config/ztsa/claude-shell-user"
INSTALLED = guard_entry("/home/me/.venvs/ztsa/bin/ztsa", WRAPPER, "00" * 32, 30,
                        "/usr/bin/timeout")


def _settings(path: Path, *handlers: dict[str, object]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"model": "x", "hooks": {"PreToolUse": [
        {"matcher": "Bash", "hooks": list(handlers)}]}}))


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    return tmp_path / "home"


def test_the_installed_hook_in_the_users_settings(home: Path, tmp_path: Path) -> None:
    _settings(home / ".claude" / "settings.json", INSTALLED)
    lines = hook_warning(["claude"], str(tmp_path))
    assert len(lines) == 1, lines
    assert str(home / ".claude" / "settings.json") in lines[0]
    assert "every Bash call is blocked" in lines[0]
    assert "ztsa hook claude --uninstall" in lines[0]
    # only for Claude Code's preset
    assert hook_warning(["codex"], str(tmp_path)) == []


def test_the_prefix_alone_in_the_users_settings(home: Path, tmp_path: Path) -> None:
    """The wrapper it names lies in the hidden home: every Bash call fails there."""
    path = home / ".claude" / "settings.json"
    path.parent.mkdir(parents=True)
    path.write_text(json.dumps({"env": {"CLAUDE_CODE_SHELL_PREFIX": WRAPPER}}))
    lines = hook_warning(["claude"], str(tmp_path))
    assert len(lines) == 1 and "every Bash call is blocked" in lines[0], lines


def test_a_hand_written_entry_in_the_projects_settings(home: Path, tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    _settings(ws / ".claude" / "settings.local.json",
              {"type": "command", "command": "ztsa hook claude --profile repo"})
    lines = hook_warning(["claude"], str(ws))
    assert len(lines) == 1 and "settings.local.json" in lines[0], lines


@pytest.mark.parametrize("text", [
    None,  # no settings
    json.dumps({"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "echo ztsa hook"}]}]}}),  # another hook
    json.dumps({"hooks": {"PostToolUse": [{"matcher": "Bash", "hooks": [
        {"type": "command", "command": "ztsa hook claude"}]}]}}),  # not before a call
    '{"hooks": ztsa hook claude',  # not JSON: Claude Code reads no hook from it either
    json.dumps(["ztsa", "hook"]), json.dumps({"hooks": ["ztsa hook claude"]}),
    json.dumps({"env": {"CLAUDE_CODE_SHELL_PREFIX": "/usr/local/bin/audit-log"}}),
    json.dumps({"env": ["ztsa"]}),
])
def test_nothing_said_without_the_hook(home: Path, tmp_path: Path, text: str | None) -> None:
    if text is not None:
        (home / ".claude").mkdir(parents=True)
        (home / ".claude" / "settings.json").write_text(text)
    assert hook_warning(["claude"], str(tmp_path)) == []
