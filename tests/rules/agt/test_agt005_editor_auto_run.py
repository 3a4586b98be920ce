from ztsa.model import Status

SETTINGS = """{
  // team settings
  "editor.formatOnSave": true,
  /* chat */
  "chat.tools.autoApprove": true,
  "task.allowAutomaticTasks": "on",
}
"""
TASKS = """{
  "version": "2.0.0",
  "tasks": [
    {"label": "build", "type": "shell", "command": "make"},
    {
      "label": "setup",
      "type": "shell",
      "command": "./scripts/setup.sh",
      "runOptions": {"runOn": "folderOpen"},
    },
  ],
}
"""


def test_pass_jsonc(machine):
    machine.ws(".vscode/settings.json", '{\n  // ok\n  "editor.formatOnSave": true,\n}\n')
    machine.ws(".vscode/tasks.json", '{"tasks": [{"label": "b", "command": "make"}]}')
    assert machine.run("AGT005").status is Status.PASS


def test_fail(machine):
    machine.ws(".vscode/settings.json", SETTINGS)
    machine.ws(".vscode/tasks.json", TASKS)
    out = machine.run("AGT005")
    assert out.status is Status.FAIL
    assert [(e.path, e.line, e.detail) for e in out.evidence] == [
        (".vscode/settings.json", 5, "chat.tools.autoApprove is on"),
        (".vscode/settings.json", 6, "task.allowAutomaticTasks is on"),
        (".vscode/tasks.json", 9, "task 'setup' runs when the folder opens"),
    ]


def test_unknown_names_file_and_parse_error(machine):
    machine.ws(".vscode/tasks.json", '{"tasks": [ {"label": } ]}')
    out = machine.run("AGT005")
    assert out.status is Status.UNKNOWN
    assert ".vscode/tasks.json" in out.message and "not valid JSON" in out.message


def test_fail_current_and_old_setting_names_and_a_code_workspace(machine):
    """VS Code's current names (chat.tools.global/terminal/urls) and the older ones,
    in .vscode/settings.json and a *.code-workspace; a rule set approves only by an
    entry that is true (or {"approve": true})."""
    import json

    machine.ws(".vscode/settings.json", json.dumps({
        "chat.tools.global.autoApprove": True,
        "chat.tools.terminal.autoApprove": {"npm": True, "rm": False},
        "chat.tools.urls.autoApprove": {"https://x.example/*": {"approve": True}},
        "github.copilot.chat.agent.terminal.allowList": {"make": True},
    }, indent=2))
    machine.ws("team.code-workspace", json.dumps({
        "folders": [{"path": "."}], "settings": {"chat.agent.terminal.allowList": ["make"]}},
        indent=2))
    out = machine.run("AGT005")
    assert out.status is Status.FAIL
    assert sorted((e.path, e.detail.split()[0]) for e in out.evidence) == [
        (".vscode/settings.json", "chat.tools.global.autoApprove"),
        (".vscode/settings.json", "chat.tools.terminal.autoApprove"),
        (".vscode/settings.json", "chat.tools.urls.autoApprove"),
        (".vscode/settings.json", "github.copilot.chat.agent.terminal.allowList"),
        ("team.code-workspace", "chat.agent.terminal.allowList")]


def test_pass_rule_sets_that_only_deny(machine):
    import json

    machine.ws(".vscode/settings.json", json.dumps({
        "chat.tools.terminal.autoApprove": {"rm": False, "curl": {"approve": False}},
        "chat.tools.edits.autoApprove": {"**/.env": False},
        "chat.tools.global.autoApprove": False}))
    assert machine.run("AGT005").status is Status.PASS


def test_fail_nested_folder_settings_and_tasks(machine):
    """VS Code obeys the `.vscode/` of whatever folder it opens: a monorepo's
    packages/app/.vscode/tasks.json runs its folder-open task when a person opens
    packages/app, and its settings approve the agent's commands there. The old rule read
    only the top's `.vscode/` and passed; the catalogue's `**/` files judge every one."""
    machine.ws("packages/app/.vscode/tasks.json", TASKS)
    machine.ws("packages/app/.vscode/settings.json",
               '{"chat.tools.terminal.autoApprove": {"/.*/": true}}')
    machine.ws("packages/lib/tools.code-workspace",
               '{"settings": {"task.allowAutomaticTasks": "on"}}')
    out = machine.run("AGT005")
    assert out.status is Status.FAIL, out
    assert [(e.path, e.detail) for e in out.evidence] == [
        ("packages/app/.vscode/settings.json", "chat.tools.terminal.autoApprove is on"),
        ("packages/app/.vscode/tasks.json", "task 'setup' runs when the folder opens"),
        ("packages/lib/tools.code-workspace", "task.allowAutomaticTasks is on")]
