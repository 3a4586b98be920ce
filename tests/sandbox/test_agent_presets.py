"""The agent presets' own parts that need no sandbox: the classes of a used state
directory's entries, Claude Code's private configuration, and the installed agent's
version read from its package files."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ztsa.sandbox import agents
from ztsa.sandbox.agents import AGENTS

KEY = "sk-ant-test-" + "k" * 30 + "LAST-TWENTY-CHARS-OK"


def _used_claude(home: Path) -> Path:
    c = home / ".claude"
    for d in ("projects", "session-env/old", "shell-snapshots", "sessions", "ide", "backups",
              "statsig", "debug", "hooks", "plugins"):
        (c / d).mkdir(parents=True)
    (c / "session-env" / "old" / "hook-0.sh").write_text("export OLD=1\n")
    (c / "shell-snapshots" / "snapshot-bash-1-a.sh").write_text("alias ls=ls\n")
    (c / "ide" / "4242.lock").write_text('{"authToken": "IDE"}\n')
    (c / "backups" / ".claude.json.backup.1").write_text('{"mcpServers": {}}\n')
    (c / "settings.json").write_text("{}\n")
    (c / "stats-cache.json").write_text('{"v": 1}\n')
    (c / ".last-cleanup").write_text("2026-01-01\n")
    (home / ".claude.json").write_text(json.dumps({
        "numStartups": 3, "mcpServers": {"mine": {"command": "/bin/true"}},
        "customApiKeyResponses": {"approved": ["other"], "rejected": [KEY[-20:]]},
        "projects": {"/elsewhere": {"hasTrustDialogAccepted": False, "allowedTools": ["x"]}}}))
    return c


def test_a_used_state_directory_is_shown_by_class(tmp_path: Path):
    real, own = tmp_path / "real", tmp_path / "own"
    real.mkdir()
    own.mkdir()
    _used_claude(real)
    setup = agents.prepare(["claude"], str(real), str(own), mounts=True,
                           workspace="/work/ws", env={"ANTHROPIC_API_KEY": KEY})
    bound = {os.path.basename(src): rw for src, _at, rw in setup.binds}
    assert bound["projects"] is True and bound["history.jsonl"] is True
    assert bound["settings.json"] is False and bound["hooks"] is False
    assert bound["plugins"] is False
    private = {"session-env", "shell-snapshots", "sessions", "ide", "backups", "statsig",
               "debug", "stats-cache.json", ".last-cleanup"}
    assert not private & set(bound), set(bound)
    c = own / ".claude"
    for d in ("session-env", "shell-snapshots", "sessions", "ide", "backups", "statsig"):
        assert (c / d).is_dir() and not os.listdir(c / d), d  # fresh and empty
    assert not (c / "stats-cache.json").exists()  # a cache: made anew
    assert (c / ".last-cleanup").read_text() == "2026-01-01\n"  # a private copy
    config = json.loads((own / ".claude.json").read_text())
    assert config["mcpServers"] == {"mine": {"command": "/bin/true"}}  # the person's own
    assert config["hasCompletedOnboarding"] is True
    assert "/work/ws" not in config["projects"]  # trust is the person's answer alone
    assert config["projects"]["/elsewhere"] == {"hasTrustDialogAccepted": False,
                                                "allowedTools": ["x"]}
    assert config["customApiKeyResponses"] == {"approved": ["other", KEY[-20:]],
                                               "rejected": []}
    assert json.loads((real / ".claude.json").read_text())["numStartups"] == 3


def test_the_private_configuration_without_a_file_of_the_persons(tmp_path: Path):
    real, own = tmp_path / "real", tmp_path / "own"
    real.mkdir()
    own.mkdir()
    agents.prepare(["claude"], str(real), str(own), mounts=False, workspace="/w", env={})
    config = json.loads((own / ".claude.json").read_text())
    assert config == {"hasCompletedOnboarding": True}
    assert not (real / ".claude.json").exists()


def test_a_configuration_reached_through_a_link_is_not_read(tmp_path: Path):
    """~/.claude.json as a link: what it names may be a place a tree wrote."""
    real, own = tmp_path / "real", tmp_path / "own"
    real.mkdir()
    own.mkdir()
    (tmp_path / "planted.json").write_text('{"mcpServers": {"evil": {"command": "x"}}}')
    (real / ".claude.json").symlink_to(tmp_path / "planted.json")
    agents.prepare(["claude"], str(real), str(own), mounts=True, workspace="/w", env={})
    assert "evil" not in (own / ".claude.json").read_text()


def test_a_configuration_that_is_not_json_is_left_as_it_is():
    assert agents._claude_answers(b"{not json", "/w", {}) == b"{not json"
    assert agents._claude_answers(b"[1]", "/w", {}) == b"[1]"


def test_codex_state_by_class(tmp_path: Path):
    real, own = tmp_path / "real", tmp_path / "own"
    cx = real / ".codex"
    for d in ("sessions", "shell_snapshots", "tmp/arg0", "skills", "memories",
              "app-server-daemon", "app-server-control", "tui-thread-reference-capabilities",
              "packages/app-server-daemon/releases/0.171.0/bin"):
        (cx / d).mkdir(parents=True)
    # the TUI's background server: its launch settings name what a later session starts
    (cx / "app-server-daemon" / "settings.json").write_text('{"codexBin": "/tmp/x"}')
    (cx / "app-server-control" / "app-server-control.sock").symlink_to("/tmp/codex-daemon-0/s")
    own.mkdir()
    for f, text in (("state_5.sqlite", "db"), ("logs_2.sqlite", "logs"),
                    ("state_5.sqlite-wal", "wal"), ("config.toml", 'model = "x"\n'),
                    ("auth.json", "{}"), ("AGENTS.md", "rules"), ("auth.json.lock", ""),
                    ("session_index.jsonl", "{}\n")):
        (cx / f).write_text(text)
    setup = agents.prepare(["codex"], str(real), str(own), mounts=True)
    bound = {os.path.basename(src): rw for src, _at, rw in setup.binds}
    assert bound == {"sessions": True, "archived_sessions": True, "log": True,
                     "history.jsonl": True, "session_index.jsonl": True, "skills": False,
                     "memories": False, "auth.json": False, "AGENTS.md": False,
                     "packages": False}
    c = own / ".codex"
    assert (c / "state_5.sqlite").read_text() == "db"
    # the person's settings, with the background server off
    assert (c / "config.toml").read_text() == ('model = "x"\n\n[features]\n'
                                               'daemon_auto_start = false\n')
    assert (cx / "config.toml").read_text() == 'model = "x"\n'
    assert not (c / "logs_2.sqlite").exists() and not (c / "state_5.sqlite-wal").exists()
    assert not (c / "auth.json.lock").exists()
    for d in ("shell_snapshots", "tmp", "app-server-daemon", "app-server-control",
              "tui-thread-reference-capabilities"):
        assert not os.listdir(c / d), d


def test_codex_settings_without_a_file_of_the_persons(tmp_path: Path):
    real, own = tmp_path / "real", tmp_path / "own"
    real.mkdir()
    own.mkdir()
    agents.prepare(["codex"], str(real), str(own), mounts=True)
    assert (own / ".codex" / "config.toml").read_text() == ("\n[features]\n"
                                                            "daemon_auto_start = false\n")
    assert not (real / ".codex" / "config.toml").exists()


def test_codex_settings_keep_the_persons_own():
    """The line goes where TOML lets it; a file it cannot go into is left as it is."""
    from ztsa.parsing import load_toml

    for text in ('[features]\nfoo = true\n[projects."/w"]\ntrust_level = "trusted"\n',
                 'features.foo = true\n[t]\na = 1\n',
                 '[features]\ndaemon_auto_start = true  # mine\n',
                 'x = """\n[features]\n"""\nmodel = "m"',
                 ""):
        out = load_toml(agents._codex_settings(text.encode()).decode(), "c")
        before = load_toml(text, "c")
        assert out == {**before, "features": {**before.get("features", {}),
                                              "daemon_auto_start": False}}, text
    for text in (b"features = 1\n", b"{not toml", b"\xff", b"features = {a = 1}\n"):
        assert agents._codex_settings(text) == text


def test_codex_hosts_are_the_configured_api_base(tmp_path: Path):
    (tmp_path / ".codex").mkdir()
    config = tmp_path / ".codex" / "config.toml"
    assert agents.hosts(["codex"], str(tmp_path)) == list(AGENTS["codex"].hosts)
    for text, want in (
            ('openai_base_url = "http://127.0.0.1:5555/v1"', "127.0.0.1:5555"),
            ('model_provider = "gw"\n[model_providers.gw]\nbase_url = "https://gw.test/v1"',
             "gw.test:443"),
            ('openai_base_url = "https://[::1]/v1"', "[::1]:443")):
        config.write_text(text)
        assert agents.hosts(["codex", "claude"], str(tmp_path)) == [
            want, *AGENTS["claude"].hosts], text
    for text in ('model_provider = "oss"', 'openai_base_url = "file:///x"',
                 'openai_base_url = "http://h:99999/"', "{not toml"):
        config.write_text(text)
        assert agents.hosts(["codex"], str(tmp_path)) == list(AGENTS["codex"].hosts), text


def _package(top: Path, name: str, version: str, exe: str) -> Path:
    pkg = top / "node_modules" / name
    (pkg / "bin").mkdir(parents=True)
    (pkg / "package.json").write_text(json.dumps({"name": name, "version": version}))
    target = pkg / "bin" / exe
    target.write_text("#!/bin/sh\n")
    target.chmod(0o755)
    (top / "node_modules" / ".bin").mkdir(exist_ok=True)
    link = top / "node_modules" / ".bin" / exe.split(".")[0]
    link.symlink_to(os.path.relpath(target, link.parent))
    return link


def test_the_installed_version_is_read_from_its_package(tmp_path: Path):
    claude = _package(tmp_path, "@anthropic-ai/claude-code", "2.1.197", "claude.exe")
    codex = _package(tmp_path, "@openai/codex", "0.171.0-linux-x64", "codex.js")
    path = str(claude.parent)
    assert agents.installed_version(AGENTS["claude"], "claude", path) == (str(claude), "2.1.197")
    assert agents.installed_version(AGENTS["codex"], str(codex), None) == (str(codex), "0.171.0")
    assert agents.version_warning(["claude", "codex"], "claude", path) == []
    # not the agent's executable (a script under --agent): nothing to say
    assert agents.installed_version(AGENTS["claude"], "sh", path) is None
    assert agents.installed_version(AGENTS["claude"], "claude", str(tmp_path / "none")) is None


def test_another_codex_version_is_said(tmp_path: Path):
    codex = _package(tmp_path, "@openai/codex", "0.172.0", "codex.js")
    line, = agents.version_warning(["codex"], str(codex), None)
    assert line == (f"ztsa: --agent codex was tested with Codex CLI "
                    f"{', '.join(AGENTS['codex'].tested)}; {codex} is 0.172.0: its state may "
                    "need entries the preset does not know (docs/agents.md)")
    # its standalone installer's layout (the same as its background server's package)
    release = tmp_path / "packages" / "standalone" / "releases" / "0.171.0-x86_64-linux-musl"
    (release / "bin").mkdir(parents=True)
    (release / "bin" / "codex").write_text("")
    (release / "bin" / "codex").chmod(0o755)
    (release / "codex-package.json").write_text(json.dumps(
        {"layoutVersion": 1, "version": "0.171.0", "variant": "codex"}))
    (tmp_path / "standalone").mkdir()
    (tmp_path / "standalone" / "codex").symlink_to(release / "bin" / "codex")
    assert agents.version_warning(["codex"], "codex", str(tmp_path / "standalone")) == []
    assert agents.installed_version(AGENTS["codex"], "codex", str(tmp_path / "standalone")) \
        == (str(tmp_path / "standalone" / "codex"), "0.171.0")


def test_another_version_is_said_in_one_line(tmp_path: Path):
    claude = _package(tmp_path, "@anthropic-ai/claude-code", "9.0.0", "claude.exe")
    lines = agents.version_warning(["claude"], str(claude), None)
    assert lines == [f"ztsa: --agent claude was tested with Claude Code "
                     f"{', '.join(AGENTS['claude'].tested)}; {claude} is 9.0.0: its state "
                     "may need entries the preset does not know (docs/agents.md)"]
    # the native installer's layout: ~/.local/share/claude/versions/X
    versions = tmp_path / "share" / "claude" / "versions"
    versions.mkdir(parents=True)
    (versions / "2.1.197").write_text("")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "claude").symlink_to(versions / "2.1.197")
    assert agents.version_warning(["claude"], "claude", str(tmp_path / "bin")) == []
    # none to be read: said so
    (tmp_path / "other").mkdir()
    (tmp_path / "other" / "claude").write_text("#!/bin/sh\n")
    (tmp_path / "other" / "claude").chmod(0o755)
    line, = agents.version_warning(["claude"], "claude", str(tmp_path / "other"))
    assert "has a version ztsa cannot read" in line


def test_the_command_line_offers_every_preset_and_no_other():
    """`--agent`'s choices are named in cli.py without importing the presets (start-up):
    a preset added to one list and not the other would be refused or crash."""
    from ztsa import cli
    from ztsa.sandbox import agents

    assert sorted(cli.AGENT_NAMES) == sorted(agents.AGENTS)
