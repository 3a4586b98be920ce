"""What `ztsa exec` keeps at any depth comes from the catalogue (ztsa.surfaces.later_specs):
the native walk names exactly what the one Python reading of a file spec names, and the
list loses nothing the older list of names held."""

from __future__ import annotations

import os
from pathlib import Path

from ztsa import gitlayout, surfaces
from ztsa.sandbox import protect

# the names `ztsa exec` kept at any depth before the catalogue (ANYWHERE)
OLD = ("CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md", "AGENT.md",
       "GEMINI.md", "QWEN.md", ".envrc", "mise.toml", ".mise.toml", "mise.local.toml",
       ".mise.local.toml")


def test_the_list_is_the_catalogues_outside_settings_at_depth():
    specs = set(surfaces.later_specs())
    assert set(OLD) <= specs
    at_depth = {f[3:] for s in surfaces.SETTINGS for f in s.files if f.startswith("**/")
                and surfaces.acts_outside(s)}
    assert at_depth <= specs
    assert {".vscode/tasks.json", ".vscode/settings.json", ".vscode/mcp.json",
            "*.code-workspace", ".config/mise/config.toml", ".config/mise.toml",
            "mise/config.toml"} <= specs
    # what runs inside the confinement (SUP008's package-manager files) is the gate's
    assert not {".npmrc", ".yarnrc.yml", ".cargo/config.toml"} & specs
    # `*` only in a spec's last part: the walk compares the parts before it literally
    assert all(not any(c in p for c in "*?[") for s in specs for p in s.split("/")[:-1])


def test_one_reading_of_a_spec():
    m = surfaces.spec_matches
    assert m(".vscode/tasks.json", "**/.vscode/tasks.json")
    assert m("a/b/.vscode/tasks.json", "**/.vscode/tasks.json")
    assert not m("a/vscode/tasks.json", "**/.vscode/tasks.json")
    assert not m("a/x.vscode/tasks.json", "**/.vscode/tasks.json")
    assert m("a/b/x.code-workspace", "**/*.code-workspace")
    assert m(".claude/settings.json", ".claude/settings.json")
    assert not m("a/.claude/settings.json", ".claude/settings.json")
    later = surfaces.later
    assert later("packages/app/.config/mise/config.toml")
    assert not later("packages/app/.config/mise/other.toml")
    assert not later("node_modules/x/.vscode/tasks.json")
    assert not later("packages/app/.vscode")  # a directory of one: only as a link
    assert later("packages/app/.vscode", link=True)
    assert later("packages/app/.config/mise", link=True)
    assert later("packages/app/mise", link=True)
    assert not later("packages/app/.git", link=True)
    assert later("pkg/.claude/settings.local.json") and later("pkg/.mcp.json")
    assert later("pkg/.mise/conf.d/00.toml") and not later("pkg/.mise/conf.d/a/00.toml")
    assert later("mise.development.toml") and later("pkg/.mise.ci.local.toml")
    assert later("packages/app/.devcontainer/devcontainer.json")
    assert later("packages/app/.tool-versions")
    assert later("packages/app/.claude", link=True)


def test_under_root_is_a_path_of_root_beneath_one_or_on_the_way():
    def plain(rel: str) -> bool:
        return any(rel == r or rel.startswith(r + "/") or r.startswith(rel + "/")
                   for r in surfaces.root_paths())

    for rel in (".vscode", ".vscode/tasks.json", ".github", ".github/x",
                ".github/instructions/a", ".config", ".config/mise/config.toml",
                ".config/other", "mise", "mise/config.toml", "mise/x", "a/.vscode/tasks.json",
                "CLAUDE.md", "a/CLAUDE.md", "x.code-workspace", ".claude/settings.json", "a"):
        assert surfaces.under_root(rel) == plain(rel), rel


def _tree(ws: Path) -> None:
    files = [".code-workspace", "top.code-workspace", ".vscode/tasks.json", "CLAUDE.md",
             "a/.vscode/tasks.json", "a/.vscode/settings.json", "a/.vscode/mcp.json",
             "a/.vscode/launch.json", "a/vscode/tasks.json", "a/x.vscode/tasks.json",
             "a/tasks.json", "a/b/c/d/e/.config/mise/config.toml", "a/.config/mise/x.toml",
             "a/.config/mise.toml", "a/mise/config.toml", "a/b/mise.toml", "a/b/.mise.toml",
             "a/b/mise.local.toml", "a/b/.mise.local.toml", "a/b/.envrc", "a/b/AGENTS.md",
             "a/b/x.code-workspace", "a/b/x.code-workspace.bak", "a/GEMINI.md",
             "node_modules/p/.vscode/tasks.json", "node_modules/p/AGENTS.md",
             "l/target/tasks.json", "l/target/mise/config.toml", "site/x/.envrc",
             "a/__pycache__/AGENTS.md",
             # an agent's settings of the directory it is started in; mise's other names;
             # the folder files of a subfolder opened on its own
             "p/.claude/settings.json", "p/.claude/settings.local.json", "p/.claude/x.json",
             "p/.mcp.json", "p/.codex/config.toml", "p/.codex/hooks.json",
             "p/.gemini/settings.json", "p/.qwen/settings.json", "p/opencode.jsonc",
             "p/.opencode/plugins/x.ts", "p/.cursor/hooks.json", "p/.mise/config.toml",
             "p/.mise/conf.d/00.toml", "p/.mise/conf.d/sub/01.toml",
             "p/.config/mise/conf.d/00.toml", "p/mise.development.toml",
             "p/.mise.production.local.toml", "p/mise.toml.bak", "mise.ci.toml",
             "p/.devcontainer/devcontainer.json", "p/.devcontainer.json",
             "p/.devcontainer/x/devcontainer.json", "p/.devcontainer/Dockerfile",
             "p/.tool-versions"]
    for rel in files:
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_text("x\n")
    (ws / "a" / "b" / ".vscode").mkdir()  # an empty one: nothing
    (ws / "plain").mkdir()
    (ws / "plain" / ".vscode").write_text("a file, no directory: no tool reads it\n")
    for link, target in (("l/p1/.vscode", "../target"), ("l/p2/.config", "../target"),
                         ("l/p3/mise", "../target/mise"), ("l/p4/.envrc", "../target/x"),
                         ("l/p5/.config/mise", "../../target/mise"),
                         ("l/p6/.cursor", "../target"), ("l/p7/y.code-workspace", "/"),
                         ("l/p8/.vscode/tasks.json", "/etc/passwd")):
        (ws / link).parent.mkdir(parents=True, exist_ok=True)
        (ws / link).symlink_to(target)


def _reference(ws: Path) -> list[str]:
    """A plain walk (links not followed), each entry judged by surfaces.later."""
    out = []
    for d, dirs, files in os.walk(ws):
        for name in [*files, *(x for x in dirs if os.path.islink(os.path.join(d, x)))]:
            path = os.path.join(d, name)
            rel = os.path.relpath(path, ws)
            if surfaces.later(rel, link=os.path.islink(path)):
                out.append(path)
    return sorted(out)


def test_the_native_walk_names_what_the_catalogue_names(tmp_path):
    ws = tmp_path / ".vscode"  # a workspace whose own name is part of a suffix
    ws.mkdir()
    _tree(ws)
    found = gitlayout.find(str(ws)).instructions
    assert sorted(found) == _reference(ws)
    rel = {os.path.relpath(p, ws) for p in found}
    assert {"a/b/c/d/e/.config/mise/config.toml", "a/.vscode/tasks.json", "a/b/.envrc",
            "a/b/x.code-workspace", "l/p1/.vscode", "l/p2/.config", "l/p3/mise",
            "l/p4/.envrc", "l/p5/.config/mise", "l/p7/y.code-workspace",
            "l/p8/.vscode/tasks.json", ".code-workspace", "l/p6/.cursor",
            "p/.claude/settings.json", "p/.claude/settings.local.json", "p/.mcp.json",
            "p/.codex/config.toml", "p/.codex/hooks.json", "p/.gemini/settings.json",
            "p/.qwen/settings.json", "p/opencode.jsonc", "p/.opencode/plugins/x.ts",
            "p/.cursor/hooks.json", "p/.mise/config.toml", "p/.mise/conf.d/00.toml",
            "p/.config/mise/conf.d/00.toml", "p/mise.development.toml",
            "p/.mise.production.local.toml", "mise.ci.toml",
            "p/.devcontainer/devcontainer.json", "p/.devcontainer.json",
            "p/.tool-versions"} <= rel
    assert not {"a/.vscode/launch.json", "a/vscode/tasks.json", "a/x.vscode/tasks.json",
                "a/tasks.json", "a/.config/mise/x.toml", "plain/.vscode",
                "a/b/x.code-workspace.bak", "node_modules/p/.vscode/tasks.json",
                "l/target/tasks.json", "p/.claude/x.json", "p/.mise/conf.d/sub/01.toml",
                "p/mise.toml.bak", "p/.devcontainer/Dockerfile",
                # one per folder of a nested .devcontainer/: the walk compares the parts
                # before a spec's last literally (the top's is ROOT's .devcontainer)
                "p/.devcontainer/x/devcontainer.json"} & rel


def test_exec_protects_the_existing_ones_the_top_layer_does_not_reach(tmp_path):
    ws = tmp_path / "ws"
    ws.mkdir()
    _tree(ws)
    entries = set(protect.later_entries(str(ws), gitlayout.find(str(ws))))
    assert {"a/.vscode/tasks.json", "a/b/c/d/e/.config/mise/config.toml",
            "top.code-workspace", ".code-workspace", "l/p1/.vscode"} <= entries
    # the top's are ROOT's (the whole `.vscode`, CLAUDE.md); a link out of the workspace
    # is not made read-only where it leads
    assert not {".vscode/tasks.json", "CLAUDE.md", "l/p7/y.code-workspace",
                "l/p8/.vscode/tasks.json"} & entries


def test_every_outside_setting_at_the_top_is_kept_or_left_to_the_gate_by_name():
    """The catalogue's files of settings that act outside the confinement later, at the
    top: each is ROOT's (read-only during the run, moved aside after), or named in
    LEFT_TO_THE_GATE with the reason; a new catalogue entry cannot slip past both.
    (Files a plugin or a devcontainer names by path are read from those files.)"""
    missing = []
    for s in surfaces.SETTINGS:
        if not surfaces.acts_outside(s):
            continue
        for f in s.files:
            if f.startswith(("**/", "{", "!")):
                continue
            top = f.split("*")[0].rstrip("/") or f
            if not surfaces.under_root(top) and f not in surfaces.LEFT_TO_THE_GATE:
                missing.append((s.id, f))
    assert missing == []
