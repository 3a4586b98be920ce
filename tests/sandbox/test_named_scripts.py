"""What `ztsa exec` keeps because a later action outside runs it by path
(ztsa.surfaces.named_by): the scripts of nested settings the walk found, read in the
catalogue's formats from the folder the tool opens or enters, and what kept shell
scripts run in turn, within the stated bounds. The escape tests
(integration/escapes/test_nested_runs.py) judge the effects; these the reading."""

from __future__ import annotations

import json
import os
from pathlib import Path

from ztsa import gitlayout, surfaces


def _write(root: Path, rel: str, text: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text)


def kept(root: Path) -> set[str]:
    layout = gitlayout.find(str(root))
    return set(surfaces.named_by(str(root), layout.instructions))


def test_nested_settings_run_from_their_folder(tmp_path):
    _write(tmp_path, "a/.vscode/tasks.json", json.dumps({"tasks": [
        {"command": "./run.sh"}, {"command": "bash", "args": ["x/new.sh"]},
        {"command": "npm test"}]}))
    _write(tmp_path, "a/.vscode/mcp.json", json.dumps({"servers": {"s": {
        "command": "node", "args": ["srv/index.js"]}}}))
    _write(tmp_path, "b/.config/mise/config.toml",
           '[hooks]\nenter = ["./h.sh", {script = "sh ./t.sh"}]\n'
           '[env]\n_.source = ["env.sh"]\n')
    _write(tmp_path, "c/ws.code-workspace", json.dumps({"tasks": {"tasks": [
        {"command": "./w.sh"}]}}))
    _write(tmp_path, "d/.envrc", "source_env_if_exists ./local.sh\nuse nix\n")
    _write(tmp_path, "node_modules/p/.vscode/tasks.json",
           json.dumps({"tasks": [{"command": "./pkg.sh"}]}))
    got = kept(tmp_path)
    assert {"a/run.sh", "a/x/new.sh", "a/srv/index.js", "b/h.sh", "b/t.sh", "b/env.sh",
            "c/w.sh", "d/local.sh"} <= got
    assert not any(r.startswith("node_modules/") for r in got), got  # a package's own
    assert "run.sh" not in got and "a/.vscode/run.sh" not in got  # from the folder


def test_what_kept_shell_scripts_run_in_turn(tmp_path):
    _write(tmp_path, ".claude/settings.json", json.dumps({"hooks": {"Stop": [{"hooks": [
        {"type": "command", "command": "bash scripts/fmt.sh"}]}]}}))
    _write(tmp_path, "scripts/fmt.sh", "./t/one.sh\n. ./env.sh\n# ./t/commented.sh\n"
                                       "node tools/x.js\n./node_modules/.bin/prettier .\n")
    _write(tmp_path, "t/one.sh", '#!/bin/sh\n"$(dirname "$0")"/two.sh\n')
    _write(tmp_path, "t/two.sh", "#!/bin/bash\nexec ./t/three.sh\n")
    _write(tmp_path, "t/three.sh", "#!/bin/sh\n./t/four.sh\n")
    _write(tmp_path, "t/four.sh", "#!/bin/sh\n./t/five.sh\n")
    _write(tmp_path, "tools/x.js", "require('./lib')\n")
    got = kept(tmp_path)
    assert {"scripts/fmt.sh", "t/one.sh", "env.sh", "tools/x.js", "t/two.sh",
            "t/three.sh", "t/four.sh"} <= got
    # bounds: SCRIPT_DEPTH files beyond the first read; no comment; no package's file;
    # a Node file's require not followed
    assert surfaces.SCRIPT_DEPTH == 3
    assert "t/five.sh" not in got
    assert not {"t/commented.sh", "tools/lib.js", "tools/lib"} & got, got
    assert not any(r.startswith("node_modules/") for r in got), got


def test_what_is_not_read(tmp_path):
    """A binary, a file over SCRIPT_BYTES, a link out of the workspace, a file in
    another language: kept (named) but not read for what it runs."""
    _write(tmp_path, ".vscode/tasks.json", json.dumps({"tasks": [
        {"command": "./bin/tool"}, {"command": "./big.sh"}, {"command": "./out.sh"},
        {"command": "python", "args": ["gen.py"]}]}))
    _write(tmp_path, "bin/tool", b"\x7fELF\0\0./inner.sh\n")
    _write(tmp_path, "big.sh", "./from-big.sh\n" + "#" * surfaces.SCRIPT_BYTES)
    outside = tmp_path.parent / f"{tmp_path.name}-outside.sh"
    outside.write_text("./from-outside.sh\n")
    os.symlink(outside, tmp_path / "out.sh")
    _write(tmp_path, "gen.py", "import os\nos.system('./from-py.sh')\n")
    got = kept(tmp_path)
    assert {"bin/tool", "big.sh", "out.sh", "gen.py"} <= got
    assert not {"inner.sh", "from-big.sh", "from-outside.sh", "from-py.sh"} & got, got


def test_nothing_to_read_costs_nothing(tmp_path):
    assert kept(tmp_path) == set()
    _write(tmp_path, "a/CLAUDE.md", "notes\n")
    _write(tmp_path, "a/.vscode/tasks.json", "{ not json")
    assert kept(tmp_path) == set()  # a file that cannot be read: the gate reports it


def test_a_key_spelt_with_escapes_is_still_read(tmp_path):
    """The text check that spares a `[tools]`-only mise.toml its parse (tomllib's import)
    is no way around the reading: a key spelt with escapes is parsed and read."""
    _write(tmp_path, "a/mise.toml", '[tools]\nnode = "20"\n')
    _write(tmp_path, "b/mise.toml", '["\\u0068ooks"]\nenter = "./esc.sh"\n')
    _write(tmp_path, "c/.vscode/tasks.json",
           '{"tasks": [{"\\u0063ommand": "./esc.sh"}]}')
    got = kept(tmp_path)
    assert {"b/esc.sh", "c/esc.sh"} <= got, got
    assert not any(r.startswith("a/") for r in got), got
