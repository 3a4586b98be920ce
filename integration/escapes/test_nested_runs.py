"""The scripts that a later action outside the confinement runs by path, beyond the
top-level settings' commands (test_surfaces.py): those the commands of NESTED settings
run (a `packages/app/.vscode/tasks.json` task's `./run.sh`, from the folder VS Code
opens; a nested `.vscode/mcp.json` server's script, a `.vscode/settings.json`
interpreter path, a nested mise configuration's hook and `_.source` file, what a nested
`.envrc` sources), and those a kept shell script runs in turn (a hook's
`bash scripts/fmt.sh` that runs `./tools/real.sh` and sources `. ./env.sh`).

The tree rewrites or creates each as an attacker would. Judged by effects: after ztsa
exits, the later action is run outside, as the tool would run it (the command with
`sh -c` from the folder, the hook's command from the project), and must not run the
tree's code: each script of the tree's appends `tree` to $LATER_MARK, the person's
append `person`."""

from __future__ import annotations

import json
import os
import stat
import subprocess
from pathlib import Path

# a file of the person's that the tree's user could otherwise write (0666 in 0777
# directories)
from test_agent_files import plant

RUN_MODES = ("root", "user", "nouserns")

TREE = 'echo tree >> "$LATER_MARK"\n'
PERSON = 'echo person >> "$LATER_MARK"\n'


def script(ws: Path, rel: str, text: str = PERSON) -> Path:
    """A script of the person's, runnable (0777: the tree's user could write it)."""
    path = plant(ws, rel, text)
    os.chmod(path, 0o777)
    return path


def _writes(rels: list[str]) -> str:
    """A Python program that writes TREE to each path (its directories made, the file
    made runnable where it may), printing `wrote REL` or `refused REL ERRNO`, then exits
    0."""
    lines = ["import os", "out = []"]
    for rel in rels:
        lines += [
            "try:",
            f"    os.makedirs(os.path.dirname({rel!r}) or '.', exist_ok=True)",
            f"    open({rel!r}, 'w').write({TREE!r})",
            f"    out.append('wrote ' + {rel!r})",
            "except OSError as e:",
            f"    out.append('refused ' + {rel!r} + ' ' + str(e.errno))",
        ]
        # runnable by path (a new file is the tree's own; an existing one kept its mode)
        lines += ["try:", f"    os.chmod({rel!r}, 0o755)", "except OSError:", "    pass"]
    lines.append("print('\\n'.join(out))")
    return "\n".join(lines)


def later(ws: Path, tmp: Path, folder: str, command: str, shell: str = "/bin/sh",
          env: dict[str, str] | None = None) -> str:
    """Run COMMAND as the tool would after the run (SHELL -c, from FOLDER of the
    workspace): what the scripts it ran appended to the mark."""
    mark = tmp / f"mark-{os.urandom(4).hex()}"
    subprocess.run([shell, "-c", command], cwd=ws / folder, capture_output=True,
                   timeout=30, env={"PATH": "/usr/bin:/bin", "LATER_MARK": str(mark),
                                    **(env or {})})
    return mark.read_text() if mark.exists() else ""


def test_the_scripts_nested_settings_run_are_not_the_trees(run, tmp_path):
    """A nested folder's VS Code task runs `./run.sh` and `bash tools/new.sh` (absent,
    in an absent directory), its MCP server `sh srv/serve.sh`, its Python interpreter
    setting `./bin/py.sh`; a nested mise configuration's enter hook `./hooks/enter.sh`
    and its `_.source` file `./env.sh`; a nested `.envrc` sources `./dev.sh`. The tree
    rewrites the existing scripts and makes the absent one: opening or entering the
    folder after the run must run none of its code."""
    ws = run.workspace
    plant(ws, "packages/app/.vscode/tasks.json", json.dumps({"version": "2.0.0", "tasks": [
        {"label": "run", "type": "shell", "command": "./run.sh",
         "runOptions": {"runOn": "folderOpen"}},
        {"label": "new", "type": "shell", "command": "bash", "args": ["tools/new.sh"]}]}))
    plant(ws, "packages/app/.vscode/mcp.json", json.dumps({"servers": {"s": {
        "command": "sh", "args": ["srv/serve.sh"]}}}))
    plant(ws, "packages/app/.vscode/settings.json", json.dumps({
        "python.defaultInterpreterPath": "${workspaceFolder}/bin/py.sh"}))
    script(ws, "packages/app/run.sh")
    script(ws, "packages/app/srv/serve.sh")
    script(ws, "packages/app/bin/py.sh")
    plant(ws, "packages/tool/mise.toml",
          '[hooks]\nenter = "./hooks/enter.sh"\n\n[env]\n_.source = "./env.sh"\n')
    script(ws, "packages/tool/hooks/enter.sh")
    script(ws, "packages/tool/env.sh")
    plant(ws, "packages/lib/.envrc", ". ./dev.sh\n")
    script(ws, "packages/lib/dev.sh")
    targets = ["packages/app/run.sh", "packages/app/tools/new.sh",
               "packages/app/srv/serve.sh", "packages/app/bin/py.sh",
               "packages/tool/hooks/enter.sh", "packages/tool/env.sh", "packages/lib/dev.sh"]
    proc, _ = run(run.python, "-c", _writes(targets))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    app, tool = "packages/app", "packages/tool"
    # VS Code runs a shell task's command with `sh -c` in the folder it opened
    assert later(ws, tmp_path, app, "./run.sh") == "person\n", proc.stdout + proc.stderr
    assert later(ws, tmp_path, app, "bash tools/new.sh") == "", proc.stdout + proc.stderr
    assert later(ws, tmp_path, app, "sh srv/serve.sh") == "person\n", proc.stdout
    assert later(ws, tmp_path, app, f"{ws / app}/bin/py.sh") == "person\n", proc.stdout
    # mise runs the hook from the configuration's directory and sources `_.source`
    assert later(ws, tmp_path, tool, "./hooks/enter.sh") == "person\n", proc.stdout
    assert later(ws, tmp_path, tool, ". ./env.sh", "/bin/bash") == "person\n", proc.stdout
    # direnv sources the .envrc with bash in its directory
    assert later(ws, tmp_path, "packages/lib", ". ./.envrc", "/bin/bash") == "person\n", \
        proc.stdout


def test_the_scripts_kept_scripts_run_are_not_the_trees(run, tmp_path):
    """A project hook runs `bash scripts/fmt.sh` (kept, test_surfaces.py); fmt.sh runs
    `./tools/real.sh`, sources `. ./env.sh`, runs `bash scripts/gen.sh` (absent) and
    real.sh runs the file beside it, `"$(dirname "$0")"/deeper.sh`; a nested task's
    `./run.sh` runs `./lib/helper.sh`. The tree rewrites the existing ones and makes the
    absent one: the next session's hook, and the task, must run none of its code."""
    ws = run.workspace
    plant(ws, ".claude/settings.json", json.dumps({"hooks": {"SessionStart": [
        {"hooks": [{"type": "command", "command": "bash scripts/fmt.sh"}]}]}}))
    script(ws, "scripts/fmt.sh", "#!/bin/sh\n./tools/real.sh\n. ./env.sh\n"
                                 "bash scripts/gen.sh\n")
    script(ws, "tools/real.sh", '#!/bin/sh\n"$(dirname "$0")"/deeper.sh\n')
    script(ws, "tools/deeper.sh")
    script(ws, "env.sh")
    plant(ws, "packages/app/.vscode/tasks.json", json.dumps({"version": "2.0.0", "tasks": [
        {"label": "run", "type": "shell", "command": "./run.sh"}]}))
    script(ws, "packages/app/run.sh", "#!/bin/bash\nset -e\n./lib/helper.sh\n")
    script(ws, "packages/app/lib/helper.sh")
    targets = ["tools/real.sh", "tools/deeper.sh", "env.sh", "scripts/gen.sh",
               "packages/app/lib/helper.sh"]
    proc, _ = run(run.python, "-c", _writes(targets))
    assert proc.returncode == 0, proc.stdout + proc.stderr
    hook = later(ws, tmp_path, ".", "bash scripts/fmt.sh",
                 env={"CLAUDE_PROJECT_DIR": str(ws)})
    assert "tree" not in hook, proc.stdout + proc.stderr
    assert hook == "person\n" * 2, proc.stdout + proc.stderr
    assert later(ws, tmp_path, "packages/app", "./run.sh") == "person\n", proc.stdout


def test_a_nested_tasks_script_left_alone_stays_as_it_was(run, tmp_path):
    """The benign case: a nested task's script (and what it runs) that the tree reads
    and runs but does not change stays exactly as it was (text, mode), the run succeeds,
    and no denial is logged for reading or running it."""
    ws = run.workspace
    plant(ws, "packages/app/.vscode/tasks.json", json.dumps({"version": "2.0.0", "tasks": [
        {"label": "run", "type": "shell", "command": "./run.sh"}]}))
    run_sh = script(ws, "packages/app/run.sh", "#!/bin/sh\n./lib/helper.sh\n")
    helper = script(ws, "packages/app/lib/helper.sh", "#!/bin/sh\necho helped\n")
    before = {p: (p.read_bytes(), stat.S_IMODE(p.stat().st_mode)) for p in (run_sh, helper)}
    proc, events = run("/bin/sh", "-c", "cd packages/app && cat run.sh lib/helper.sh "
                                        ">/dev/null && ./run.sh")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout == "helped\n", proc.stdout + proc.stderr
    after = {p: (p.read_bytes(), stat.S_IMODE(p.stat().st_mode)) for p in (run_sh, helper)}
    assert after == before
    assert later(ws, tmp_path, "packages/app", "./run.sh") == "", proc.stderr
    if run.log:
        denied = [e for e in events if e["event"] == "deny"
                  and ("run.sh" in str(e.get("path")) or "helper.sh" in str(e.get("path")))]
        assert denied == [], denied
    assert "moved aside" not in proc.stderr, proc.stderr
