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
