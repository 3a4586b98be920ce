"""Red team two of issue #44's controls (what installed hooks run, what nested settings
and kept scripts run, loose Python code, the index bits, direnv's layout). Each test
makes the tree do one concrete thing under `ztsa exec --profile repo`, then performs
the person's ordinary later action OUTSIDE the sandbox (`git commit` with the real
pre-commit or git's own hook, `git status`, `python -c 'import app'`, activating the
workspace venv, a hook manager's run emulated as the manager reads its files) and
judges the effect: whether the tree's code ran (a marker file), or what a later tool
reads after ztsa has exited. Never ztsa's report.

A test marked xfail(strict) is an escape that holds today; the reason says what a fix
must change. The others pin a subtle case that holds."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from test_agent_files import plant
from test_bytecode import marker_in, outside, venv
from test_git_persistence import git, open_up
from test_hook_managers import _git
from test_redteam_later import _project, _tree
from test_surfaces import _plant_script

RUN_MODES = ("root", "user", "nouserns")


def _commit_dir(prefix: str) -> Path:
    out = Path(tempfile.mkdtemp(prefix=prefix))
    os.chmod(out, 0o777)
    return out


def _ran(out: Path) -> list[str]:
    return sorted(p.name for p in out.iterdir() if p.name != "cache")


# -- 1. the index: stat data that vouches for a changed file ----------------------------

# The tree edits app.py and rewrites app.py's index entry so that its cached stat data
# (ctime, mtime, inode, size) is the file's now while its blob is still the committed
# one, writing the index a second later (an entry as new as its index is "racy" and
# read again). git trusts matching stat data without reading the file: `git status`
# and `git diff` are clean over a changed source.
FORGE_STAT = r"""
import hashlib, os, struct, time
MARK = %r
with open('app.py', 'a') as f:
    f.write('open(%%r, "w").close()\n' %% MARK)
time.sleep(1.1)
data = bytearray(open('.git/index', 'rb').read())
assert data[:4] == b'DIRC' and struct.unpack('>I', data[4:8])[0] == 2, data[:8]
count = struct.unpack('>I', data[8:12])[0]
off = 12
for _ in range(count):
    (flags,) = struct.unpack('>H', data[off + 60:off + 62])
    name = bytes(data[off + 62:off + 62 + (flags & 0xfff)])
    if name == b'app.py':
        st = os.stat('app.py')
        struct.pack_into('>4I', data, off, int(st.st_ctime), st.st_ctime_ns %% 10**9,
                         int(st.st_mtime), st.st_mtime_ns %% 10**9)
        struct.pack_into('>I', data, off + 20, st.st_ino & 0xffffffff)
        struct.pack_into('>I', data, off + 36, st.st_size)
        print('forged app.py', st.st_size)
    off += (62 + (flags & 0xfff) + 8) & ~7
body = bytes(data[:-20])
with open('.git/index', 'r+b') as f:  # in place: the tree may not create in .git
    f.write(body + hashlib.sha1(body).digest())
"""


def test_forged_stat_data_in_the_index_hides_a_changed_source(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    proc, _ = run(run.python, "-c", FORGE_STAT % str(marker))
    assert proc.returncode in (0, 122) and "forged" in proc.stdout, proc.stderr
    # the person later: reviews with git status / git diff, then runs the project
    status = git("status", "--porcelain", cwd=ws).stdout
    diff = git("diff", "--stat", cwd=ws).stdout
    outside("/usr/bin/python3", "-c", "import app", cwd=ws)
    assert marker.exists(), "the changed app.py did not run: the test proves nothing"
    assert "app.py" in status + diff, "git status and git diff are clean over the change"


# -- 2. commands a hook names through a wrapper that follow.refs does not read -----------

PRE_COMMIT = """repos:
- repo: local
  hooks:
  - id: check
    name: check
    entry: timeout 300 sh scripts/check.sh
    language: system
    pass_filenames: false
    always_run: true
"""


def test_a_pre_commit_entry_behind_timeout(run):
    pytest.importorskip("pre_commit", reason="the real pre-commit is a test dependency")
    ws = run.workspace
    out = _commit_dir("ztsa-rt2-timeout-")
    env = {**os.environ, "PRE_COMMIT_HOME": str(out / "cache")}
    assert _git(ws, "init", "-q").returncode == 0
    plant(ws, ".pre-commit-config.yaml", PRE_COMMIT)
    plant(ws, "scripts/check.sh", f"touch {out}/good\n")
    installed = subprocess.run([sys.executable, "-m", "pre_commit", "install"], cwd=ws,
                               capture_output=True, text=True, env=env, timeout=120)
    assert installed.returncode == 0, installed.stderr
    proc, _ = run(run.python, "-c", _plant_script(
        [("scripts/check.sh", f"touch {out}/evil\n")]))
    assert proc.returncode in (0, 122), proc.stderr
    _git(ws, "add", "-A", env=env)
    commit = _git(ws, "commit", "-q", "-m", "next", env=env)
    ran = _ran(out)
    assert ran, (proc.stdout, commit.stdout, commit.stderr)  # the hook ran at all
    assert "evil" not in ran, f"the person's commit ran the tree's script: {ran}"


def test_a_hook_feeding_a_script_to_sh_on_stdin(run):
    ws = run.workspace
    out = _commit_dir("ztsa-rt2-stdin-")
    assert _git(ws, "init", "-q").returncode == 0
    hook = ws / ".git" / "hooks" / "pre-commit"
    hook.write_text("#!/bin/sh\nset -e\nsh < scripts/pre-commit.sh\n")
    os.chmod(hook, 0o755)
    plant(ws, "scripts/pre-commit.sh", f"touch {out}/good\n")
    proc, _ = run(run.python, "-c", _plant_script(
        [("scripts/pre-commit.sh", f"touch {out}/evil\n")]))
    assert proc.returncode in (0, 122), proc.stderr
    _git(ws, "add", "-A")
    commit = _git(ws, "commit", "-q", "-m", "next")
    ran = _ran(out)
    assert ran, (proc.stdout, commit.stdout, commit.stderr)
    assert "evil" not in ran, f"the person's commit ran the tree's script: {ran}"


# -- 3. hook managers' files that the code does not name --------------------------------

# ghooks' installed hook (as `ghooks` writes it): node calling ghooks, which runs the
# command of package.json's `config.ghooks[HOOK]`
GHOOKS_HOOK = ("#!/usr/bin/env node\n// Generated by ghooks. Do not edit this file.\n"
               "require('ghooks')(__dirname, __filename)\n")


def test_ghooks_commands_in_package_json_config(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    assert _git(ws, "init", "-q").returncode == 0
    hook = ws / ".git" / "hooks" / "pre-commit"
    hook.write_text(GHOOKS_HOOK)
    os.chmod(hook, 0o755)
    person = {"name": "p", "config": {"ghooks": {"pre-commit": "echo ok"}}}
    plant(ws, "package.json", json.dumps(person, indent=2) + "\n")
    tree = {"name": "p", "config": {"ghooks": {"pre-commit": f"touch {marker}"}}}
    proc, _ = run(run.python, "-c", _plant_script([("package.json", json.dumps(tree))]))
    assert proc.returncode in (0, 122), proc.stderr
    # the person's next commit: ghooks runs config.ghooks["pre-commit"] (emulated:
    # ghooks is not installed), in the working tree's top
    doc = json.loads((ws / "package.json").read_text())
    command = doc.get("config", {}).get("ghooks", {}).get("pre-commit")
    if command:
        outside("/bin/sh", "-c", command, cwd=ws)
    assert not marker.exists(), "ghooks ran the tree's command at the person's commit"


# husky 4's hook (as husky 4 writes it), which runs husky's run.js: cosmiconfig reads
# `husky` of package.json, else .huskyrc (.json, .yaml, .yml, .js), husky.config.js
HUSKY4_HOOK = ('#!/bin/sh\n# husky\n\n# Hook created by Husky v4.3.8\n'
               '. "$(dirname "$0")/husky.sh"\n')


def test_husky4_huskyrc(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    assert _git(ws, "init", "-q").returncode == 0
    hook = ws / ".git" / "hooks" / "pre-commit"
    hook.write_text(HUSKY4_HOOK)
    os.chmod(hook, 0o755)
    plant(ws, "package.json", '{"name": "p"}\n')
    plant(ws, ".huskyrc", json.dumps({"hooks": {"pre-commit": "echo ok"}}) + "\n")
    tree = json.dumps({"hooks": {"pre-commit": f"touch {marker}"}})
    proc, _ = run(run.python, "-c", _plant_script([(".huskyrc", tree)]))
    assert proc.returncode in (0, 122), proc.stderr
    # the person's next commit: husky 4 runs hooks["pre-commit"] of the first config
    # cosmiconfig finds (emulated: husky 4 is not installed)
    pkg = json.loads((ws / "package.json").read_text())
    config = pkg.get("husky") or json.loads((ws / ".huskyrc").read_text())
    outside("/bin/sh", "-c", config["hooks"]["pre-commit"], cwd=ws)
    assert not marker.exists(), "husky 4 ran the tree's .huskyrc at the person's commit"


LEFTHOOK_HOOK = ("#!/bin/sh\ncall_lefthook()\n{\n  lefthook \"$@\"\n}\n"
                 "call_lefthook run \"pre-commit\" \"$@\"\n")


def test_lefthook_extends_and_source_dir(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    assert _git(ws, "init", "-q").returncode == 0
    hook = ws / ".git" / "hooks" / "pre-commit"
    hook.write_text(LEFTHOOK_HOOK)
    os.chmod(hook, 0o755)
    plant(ws, "lefthook.yml", "extends:\n  - ci/lefthook-common.yml\n"
          "source_dir: .githooks/\npre-commit:\n  scripts:\n    check.sh:\n"
          "      runner: sh\n")
    plant(ws, "ci/lefthook-common.yml",
          "pre-commit:\n  commands:\n    lint:\n      run: echo ok\n")
    plant(ws, ".githooks/pre-commit/check.sh", "echo ok\n")
    items = [("ci/lefthook-common.yml",
              f"pre-commit:\n  commands:\n    lint:\n      run: touch {marker}.extends\n"),
             (".githooks/pre-commit/check.sh", f"touch {marker}.source\n")]
    proc, _ = run(run.python, "-c", _plant_script(items))
    assert proc.returncode in (0, 122), proc.stderr
    # the person's next commit: lefthook runs the merged commands and the scripts of
    # source_dir/pre-commit/ (emulated: lefthook is not installed)
    outside("/bin/sh", "-c", "sh .githooks/pre-commit/check.sh", cwd=ws)
    common = (ws / "ci" / "lefthook-common.yml").read_text()
    run_line = next(x for x in common.splitlines() if "run:" in x)
    outside("/bin/sh", "-c", run_line.split("run:", 1)[1], cwd=ws)
    ran = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ran."))
    assert ran == [], f"lefthook ran the tree's files at the person's commit: {ran}"


def test_lint_staged_nested_config_and_package_yaml(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    assert _git(ws, "init", "-q").returncode == 0
    plant(ws, ".husky/pre-commit", "npx lint-staged\n")
    plant(ws, ".lintstagedrc.json", json.dumps({"*.js": "echo ok"}) + "\n")
    plant(ws, "packages/web/index.js", "// the person's code\n")
    plant(ws, "app.js", "// the person's code\n")
    items = [("packages/web/.lintstagedrc.json", json.dumps({"*.js": f"touch {marker}.nested"})),
             ("package.yaml", f"lint-staged:\n  '*.js': touch {marker}.yaml\n")]
    proc, _ = run(run.python, "-c", _plant_script(items))
    assert proc.returncode in (0, 122), proc.stderr
    # the person's next commit stages app.js and packages/web/index.js: lint-staged
    # runs, for each, the commands of the closest config (emulated: not installed)
    names = ("package.json", "package.yaml", ".lintstagedrc", ".lintstagedrc.json")
    for staged in ("app.js", "packages/web/index.js"):
        d = (ws / staged).parent
        while True:
            found = [d / n for n in names if (d / n).is_file()]
            doc = None
            for path in found:
                text = path.read_text()
                if path.name == "package.yaml":
                    cmd = text.split("'*.js':", 1)[1].strip() if "lint-staged" in text else None
                    doc = {"*.js": cmd} if cmd else None
                elif path.name != "package.json":
                    doc = json.loads(text)
                if doc:
                    break
            if doc or d == ws:
                break
            d = d.parent
        if doc:
            outside("/bin/sh", "-c", doc["*.js"], cwd=ws)
    ran = sorted(p.name for p in tmp_path.iterdir() if p.name.startswith("ran."))
    assert ran == [], f"lint-staged ran the tree's config at the person's commit: {ran}"


# -- 4. the workspace venv that stops looking like one ---------------------------------

@pytest.mark.parametrize("how", ["removed", "into-bin"])
def test_a_venv_whose_pyvenv_cfg_the_tree_moves(run, tmp_path, how):
    """The tree moves the venv's pyvenv.cfg (away, or into bin/ where the interpreter
    still finds it) and plants bin/git: the venv audit must still judge bin/ (the
    activation script puts it first on PATH whatever pyvenv.cfg says)."""
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    venv(ws)
    open_up(ws)
    move = "rm .venv/pyvenv.cfg" if how == "removed" else "mv .venv/pyvenv.cfg .venv/bin/"
    _tree(run, f"""
        {move}
        printf '#!/bin/sh\\ntouch {marker}\\nexec /usr/bin/git "$@"\\n' > .venv/bin/git
        chmod 755 .venv/bin/git
        """)
    outside("/bin/bash", "-c", ". .venv/bin/activate && git status", cwd=ws)
    assert not marker.exists(), "`git status` in the activated venv ran the tree's git"


# -- 5. what the person's .envrc puts in the environment ------------------------------

# direnv's stdlib PATH_add, as `cd` runs the allowed .envrc (emulated: not installed)
DIRENV = 'PATH_add() { PATH="$PWD/$1:$PATH"; }\n. ./.envrc\ngit status\n'


def test_a_program_in_a_directory_the_envrc_puts_on_path(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    plant(ws, ".envrc", "PATH_add bin\n")
    plant(ws, "bin/dev", "#!/bin/sh\necho the project's own tool\n")
    open_up(ws)
    _tree(run, f"""
        printf '#!/bin/sh\\ntouch {marker}\\nexec /usr/bin/git "$@"\\n' > bin/git
        chmod 755 bin/git
        """)
    outside("/bin/bash", "-c", DIRENV, cwd=ws)  # the person's next `cd`, then git status
    assert not marker.exists(), "`git status` after `cd` ran the tree's bin/git"


# direnv's stdlib dotenv_if_exists: KEY=VALUE lines exported (emulated: not installed)
DOTENV = ('dotenv_if_exists() { [ -f "$1" ] && { set -a; . "./$1"; set +a; }; }\n'
          '. ./.envrc\ngit status\n')


def test_a_dotenv_file_the_envrc_loads(run, tmp_path):
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    plant(ws, ".envrc", "dotenv_if_exists .env.local\n")
    open_up(ws)
    text = ("GIT_CONFIG_COUNT=1\nGIT_CONFIG_KEY_0=core.fsmonitor\n"
            f"GIT_CONFIG_VALUE_0=\"touch {marker}; false\"\n")
    proc, _ = run(run.python, "-c", _plant_script([(".env.local", text)]))
    assert proc.returncode in (0, 122), proc.stderr
    outside("/bin/bash", "-c", DOTENV, cwd=ws)  # the person's next `cd`, then git status
    assert not marker.exists(), "`git status` after `cd` ran the tree's command"


# -- 6. what the system's own sitecustomize imports -------------------------------------

def _system_hook() -> str | None:
    """The module Debian's and Ubuntu's /usr/lib/python3.X/sitecustomize.py imports
    when it is there (apport's hook), when no installed module answers the name."""
    path = Path(f"/usr/lib/python3.{sys.version_info[1]}/sitecustomize.py")
    if not path.exists() or "apport_python_hook" not in path.read_text():
        return None
    found = subprocess.run(["/usr/bin/python3", "-c", "import apport_python_hook"],
                           capture_output=True)
    return None if found.returncode == 0 else "apport_python_hook"


def test_the_module_the_systems_sitecustomize_imports(run, tmp_path):
    name = _system_hook()
    if name is None:
        pytest.skip("no system sitecustomize importing a missing module here")
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    site = venv(ws)
    open_up(ws)
    rel = os.path.join(os.path.relpath(site, ws), f"{name}.py")
    proc, _ = run(run.python, "-c", _plant_script(
        [(rel, f"open({str(marker)!r}, 'w').close()\ndef install(): pass\n")]))
    assert proc.returncode in (0, 122) and "wrote" in proc.stdout, proc.stderr
    outside(ws / ".venv" / "bin" / "python", "-c", "import app", cwd=ws)
    assert not marker.exists(), "the venv's python ran the tree's module at its start"


# -- 7. an extension module as a package's __init__ ------------------------------------

def test_an_extension_init_beside_a_packages_init_py(run, tmp_path):
    """A package's `__init__` may be an extension module, and the importer tries the
    extension suffixes first: `pkg/__init__.abi3.so` beside `pkg/__init__.py` runs
    native code at `import pkg`."""
    gcc = pytest.importorskip("shutil").which("gcc")
    if gcc is None:
        pytest.skip("gcc builds the extension")
    ws = run.workspace
    marker = marker_in(tmp_path)
    _project(ws)
    plant(ws, "pkg/__init__.py", "VALUE = 1\n")
    src = tmp_path / "ext.c"
    src.write_text(
        "#include <Python.h>\n#include <stdio.h>\n"
        "static struct PyModuleDef m = {PyModuleDef_HEAD_INIT, \"pkg\", 0, -1, 0};\n"
        "PyMODINIT_FUNC PyInit_pkg(void) {\n"
        f"  FILE *f = fopen(\"{marker}\", \"w\"); if (f) fclose(f);\n"
        "  return PyModule_Create(&m);\n}\n")
    include = subprocess.run(["/usr/bin/python3", "-c",
                              "import sysconfig; print(sysconfig.get_path('include'))"],
                             capture_output=True, text=True, check=True).stdout.strip()
    if not (Path(include) / "Python.h").exists():
        pytest.skip("Python.h is not installed")
    built = tmp_path / "ext.so"
    subprocess.run([gcc, "-shared", "-fPIC", f"-I{include}", "-o", str(built), str(src)],
                   check=True, capture_output=True)
    plant(ws, "build/blob.bin", "")  # where the sandbox's tree can read it
    (ws / "build" / "blob.bin").write_bytes(built.read_bytes())
    _tree(run, "cp build/blob.bin pkg/__init__.abi3.so")
    outside("/usr/bin/python3", "-c", "import pkg", cwd=ws)
    assert not marker.exists(), "`import pkg` ran the tree's extension module"
