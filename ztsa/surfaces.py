"""What a tool reads from a workspace that makes something run later, widens an agent's
reach or feeds it instructions: the surfaces `ztsa exec` keeps from the tree, as data.

Each entry names the path (workspace-relative; a directory covers all it holds), the
tool that reads it, when it acts, and what it does. Two kinds:
- at the top of the workspace (ROOT): protected read-only while the tree runs, and
  refused when absent (ztsa.sandbox.protect);
- wherever it sits (ANYWHERE, a file name): a tool obeys it in any directory it works
  in (an agent in a subdirectory loads that directory's CLAUDE.md; direnv runs the
  `.envrc` of the directory a shell enters). The walk of every run finds them
  (native/gitwalk.c, 'I' records): those that exist are protected like the top-level
  ones, and one the run made, changed or removed is moved aside after it, its old text
  put back (ztsa.sandbox.gitguard).
Files that a surface names by path (a devcontainer's Compose files and the script its
`initializeCommand` runs) are protected too (named_by)."""

from __future__ import annotations

import contextlib
import os

from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class Surface(NamedTuple):
    path: str
    tool: str
    acts: str  # when the tool reads it
    effect: str  # what it makes happen: instructions, runs code, widens reach, policy


ROOT = (
    Surface("CLAUDE.md", "Claude Code", "session start", "instructions"),
    Surface("CLAUDE.local.md", "Claude Code", "session start", "instructions"),
    Surface(".claude", "Claude Code", "session start", "runs code, widens reach, instructions"),
    Surface(".mcp.json", "Claude Code", "session start", "runs code"),
    Surface("AGENTS.md", "Codex, OpenCode, Amp, Cursor, Copilot", "session start",
            "instructions"),
    Surface("AGENTS.override.md", "Codex", "session start", "instructions"),
    Surface("AGENT.md", "Amp", "session start", "instructions"),
    Surface(".codex", "Codex", "session start", "runs code, widens reach, instructions"),
    Surface("GEMINI.md", "Gemini CLI", "session start", "instructions"),
    Surface(".gemini", "Gemini CLI", "session start", "runs code, widens reach, instructions"),
    Surface("QWEN.md", "Qwen Code", "session start", "instructions"),
    Surface(".qwen", "Qwen Code", "session start", "runs code, widens reach, instructions"),
    Surface(".cursorrules", "Cursor", "session start", "instructions"),
    Surface(".cursor", "Cursor", "on open", "runs code, widens reach, instructions"),
    Surface(".windsurfrules", "Windsurf", "session start", "instructions"),
    Surface(".windsurf", "Windsurf", "session start", "instructions, runs code"),
    Surface(".clinerules", "Cline", "session start", "instructions"),
    Surface(".cline", "Cline", "session start", "instructions, runs code"),
    Surface(".roo", "Roo Code", "session start", "instructions, runs code"),
    Surface(".roomodes", "Roo Code", "session start", "instructions, widens reach"),
    Surface(".kilocode", "Kilo Code", "session start", "instructions, runs code"),
    Surface(".kilocodemodes", "Kilo Code", "session start", "instructions, widens reach"),
    Surface(".kiro", "Kiro", "session start", "instructions, runs code"),
    Surface(".continue", "Continue", "session start", "instructions, runs code"),
    Surface(".continuerc.json", "Continue", "session start", "runs code"),
    Surface(".amazonq", "Amazon Q", "session start", "instructions, runs code"),
    Surface(".openhands", "OpenHands", "session start", "instructions, runs code (setup.sh)"),
    Surface("opencode.json", "OpenCode", "session start", "runs code, widens reach"),
    Surface("opencode.jsonc", "OpenCode", "session start", "runs code, widens reach"),
    Surface(".opencode", "OpenCode", "session start", "runs code (plugins), instructions"),
    Surface(".crush.json", "crush", "session start", "runs code, widens reach"),
    Surface("crush.json", "crush", "session start", "runs code, widens reach"),
    Surface(".crush", "crush", "session start", "runs code, instructions"),
    Surface(".aider.conf.yml", "aider", "session start", "runs code (lint/test commands)"),
    Surface(".aider.model.settings.yml", "aider", "session start", "widens reach"),
    Surface(".aider.model.metadata.json", "aider", "session start", "widens reach"),
    Surface(".agents", "several agents (skills)", "session start", "instructions, runs code"),
    Surface(".github/copilot-instructions.md", "Copilot", "session start", "instructions"),
    Surface(".github/instructions", "Copilot", "session start", "instructions"),
    Surface(".github/agents", "Copilot", "session start", "instructions"),
    Surface(".github/prompts", "Copilot", "session start", "instructions"),
    Surface(".github/chatmodes", "Copilot", "session start", "instructions"),
    Surface(".vscode", "VS Code", "on open", "runs code (tasks, interpreter settings)"),
    Surface(".zed", "Zed", "on open", "runs code (tasks, language servers)"),
    Surface(".idea", "JetBrains IDEs", "on open", "runs code (run configurations)"),
    Surface(".run", "JetBrains IDEs", "on open", "runs code (run configurations)"),
    Surface(".devcontainer", "Dev Containers", "on reopen in container",
            "runs code on the host (initializeCommand), mounts, privileges"),
    Surface(".devcontainer.json", "Dev Containers", "on reopen in container",
            "runs code on the host (initializeCommand), mounts, privileges"),
    Surface(".envrc", "direnv", "on entering the directory", "runs code"),
    Surface("mise.toml", "mise", "on entering the directory", "runs code ([hooks], [env])"),
    Surface(".mise.toml", "mise", "on entering the directory", "runs code"),
    Surface("mise.local.toml", "mise", "on entering the directory", "runs code"),
    Surface(".mise.local.toml", "mise", "on entering the directory", "runs code"),
    Surface(".mise", "mise", "on entering the directory", "runs code"),
    Surface("mise/config.toml", "mise", "on entering the directory", "runs code"),
    Surface(".config/mise.toml", "mise", "on entering the directory", "runs code"),
    Surface(".config/mise", "mise", "on entering the directory", "runs code"),
    Surface(".husky", "husky", "on commit", "runs code"),
    Surface(".ztsa.toml", "ztsa", "next run", "policy"),
    Surface(".ztsa", "ztsa", "next run", "policy"),
    Surface(".ztsa-quarantine", "ztsa", "next run", "what ztsa moved aside"),
)

# files a tool obeys in whichever directory it works in
ANYWHERE = (
    Surface("CLAUDE.md", "Claude Code", "working in that directory", "instructions"),
    Surface("CLAUDE.local.md", "Claude Code", "working in that directory", "instructions"),
    Surface("AGENTS.md", "Codex, OpenCode, Cursor, Copilot", "working in that directory",
            "instructions"),
    Surface("AGENTS.override.md", "Codex", "working in that directory", "instructions"),
    Surface("AGENT.md", "Amp", "working in that directory", "instructions"),
    Surface("GEMINI.md", "Gemini CLI", "working in that directory", "instructions"),
    Surface("QWEN.md", "Qwen Code", "working in that directory", "instructions"),
    Surface(".envrc", "direnv", "on entering the directory", "runs code"),
    Surface("mise.toml", "mise", "on entering the directory", "runs code"),
    Surface(".mise.toml", "mise", "on entering the directory", "runs code"),
    Surface("mise.local.toml", "mise", "on entering the directory", "runs code"),
    Surface(".mise.local.toml", "mise", "on entering the directory", "runs code"),
)
# Instruction files: text an agent loads and follows, wherever in the workspace it sits
# (an agent working in a subdirectory loads its files too). AGT006 reads this list and
# judges each file's text, hidden and unrendered text included (ztsa.hiddentext). A
# path matches at the top of the workspace or below any directory; one ending in "/"
# covers every file below it (a skill's scripts too); "*" in the last part stays
# within a name.
INSTRUCTIONS = (
    Surface("CLAUDE.md", "Claude Code", "session start", "instructions"),
    Surface("CLAUDE.local.md", "Claude Code", "session start", "instructions"),
    Surface(".claude/rules/", "Claude Code", "session start", "instructions"),
    Surface(".claude/commands/", "Claude Code", "on a slash command", "instructions"),
    Surface(".claude/agents/", "Claude Code", "on a subagent", "instructions"),
    Surface(".claude/skills/", "Claude Code", "on a skill", "instructions, runs code"),
    Surface("AGENTS.md", "Codex, OpenCode, Amp, Cursor, Copilot", "session start",
            "instructions"),
    Surface("AGENTS.override.md", "Codex", "session start", "instructions"),
    Surface("AGENT.md", "Amp", "session start", "instructions"),
    Surface(".agents/", "several agents (skills)", "on a skill", "instructions, runs code"),
    Surface(".codex/skills/", "Codex", "on a skill", "instructions, runs code"),
    Surface(".codex/prompts/", "Codex", "on a prompt", "instructions"),
    Surface("GEMINI.md", "Gemini CLI", "session start", "instructions"),
    Surface(".gemini/skills/", "Gemini CLI", "on a skill", "instructions, runs code"),
    Surface(".gemini/commands/", "Gemini CLI", "on a command", "instructions"),
    Surface("QWEN.md", "Qwen Code", "session start", "instructions"),
    Surface(".cursorrules", "Cursor", "session start", "instructions"),
    Surface(".cursor/rules/*.mdc", "Cursor", "session start", "instructions"),
    Surface(".cursor/rules/*.md", "Cursor", "session start", "instructions"),
    Surface(".cursor/commands/", "Cursor", "on a command", "instructions"),
    Surface(".github/copilot-instructions.md", "Copilot", "session start", "instructions"),
    Surface(".github/instructions/", "Copilot", "session start", "instructions"),
    Surface(".github/agents/", "Copilot", "on an agent", "instructions"),
    Surface(".github/prompts/", "Copilot", "on a prompt", "instructions"),
    Surface(".github/chatmodes/", "Copilot", "on a chat mode", "instructions"),
    Surface(".windsurfrules", "Windsurf", "session start", "instructions"),
    Surface(".windsurf/rules/", "Windsurf", "session start", "instructions"),
    Surface(".windsurf/workflows/", "Windsurf", "on a workflow", "instructions"),
    Surface(".clinerules", "Cline", "session start", "instructions (a file or a folder)"),
    Surface(".clinerules/", "Cline", "session start", "instructions"),
    Surface(".cline/", "Cline", "session start", "instructions, runs code"),
    Surface(".continue/rules/", "Continue", "session start", "instructions"),
    Surface(".continue/prompts/", "Continue", "on a prompt", "instructions"),
    Surface(".roo/rules/", "Roo Code", "session start", "instructions"),
    Surface(".roorules", "Roo Code", "session start", "instructions"),
    Surface(".kilocode/rules/", "Kilo Code", "session start", "instructions"),
    Surface(".kiro/steering/", "Kiro", "session start", "instructions"),
    Surface(".amazonq/rules/", "Amazon Q", "session start", "instructions"),
    Surface(".openhands/microagents/", "OpenHands", "session start", "instructions"),
    Surface(".opencode/agent/", "OpenCode", "on an agent", "instructions"),
    Surface(".opencode/command/", "OpenCode", "on a command", "instructions"),
    Surface(".junie/guidelines.md", "Junie", "session start", "instructions"),
)


def _instruction_index() -> tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]:
    """(file names and paths, directory prefixes, name patterns) of INSTRUCTIONS."""
    exact = frozenset(s.path for s in INSTRUCTIONS if not s.path.endswith("/")
                      and "*" not in s.path)
    dirs = tuple(s.path for s in INSTRUCTIONS if s.path.endswith("/"))
    globs = tuple(s.path for s in INSTRUCTIONS if "*" in s.path)
    return exact, dirs, globs


_INDEX: list[tuple[frozenset[str], tuple[str, ...], tuple[str, ...]]] = []


def instruction_file(rel: str) -> bool:
    """Is a workspace-relative path one of INSTRUCTIONS, at the top or below any
    directory?"""
    if not _INDEX:
        _INDEX.append(_instruction_index())
    exact, dirs, globs = _INDEX[0]
    parts = rel.split("/")
    if parts[-1] in exact or "/".join(parts[-2:]) in exact:
        return True
    if rel[:1] != "." and "/." not in rel:
        return False  # every directory and pattern of the list starts with a dot directory
    for g in globs:
        d, _, name = g.rpartition("/")
        if (rel.startswith(d + "/") or f"/{d}/" in rel) and _name_matches(parts[-1], name):
            return True
    return any(rel.startswith(d) or f"/{d}" in rel for d in dirs)


def _name_matches(name: str, pattern: str) -> bool:
    import fnmatch

    return fnmatch.fnmatchcase(name, pattern)


# below these, a file of ANYWHERE belongs to a package a tool installed (an npm package
# may ship an AGENTS.md), not to the project an agent works in: left to the gate
INSTALLED = ("node_modules", "site-packages", "dist-packages")


def root_paths() -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.path for s in ROOT))


def anywhere_names() -> tuple[str, ...]:
    return tuple(dict.fromkeys(s.path for s in ANYWHERE))


def installed(rel: str) -> bool:
    """Is a workspace-relative path inside an installed package (INSTALLED)?"""
    return any(part in INSTALLED for part in rel.split("/")[:-1])


# the devcontainer configurations: a file of the workspace's top, one in .devcontainer/,
# and one per folder of .devcontainer/ (the editor offers each)
DEVCONTAINERS = (".devcontainer.json", ".devcontainer/devcontainer.json")


def _devcontainer_files(workspace: str) -> list[str]:
    out = [os.path.join(workspace, rel) for rel in DEVCONTAINERS]
    top = os.path.join(workspace, ".devcontainer")
    with contextlib.suppress(OSError):
        out += [os.path.join(top, d, "devcontainer.json") for d in sorted(os.listdir(top))]
    return [p for p in out if os.path.isfile(p) and not os.path.islink(p)]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def named_by(workspace: str) -> list[str]:
    """The workspace files (relative) that a devcontainer configuration names by path and
    that its host side runs or reads later: its Compose files, its Dockerfile, and the
    files its `initializeCommand` names (every word with a `/` or a script's suffix).
    Existing or not: a name the tree makes later would be obeyed the same."""
    from ztsa.parsing import ParseError, load_jsonc

    workspace = os.path.realpath(workspace)
    out: list[str] = []
    for path in _devcontainer_files(workspace):
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                doc = load_jsonc(f.read(1 << 20), path)
        except (OSError, ParseError):
            continue  # the gate reports it (AGT009); the directory itself is protected
        if not isinstance(doc, dict):
            continue
        base = os.path.dirname(path)
        build = doc.get("build")
        build = build if isinstance(build, dict) else {}
        files = [*_strings(doc.get("dockerComposeFile")), *_strings(doc.get("dockerFile")),
                 *_strings(build.get("dockerfile"))]
        for command in _strings(doc.get("initializeCommand")):
            import shlex  # only for a configuration that runs something

            try:
                words = shlex.split(command)
            except ValueError:
                words = command.split()
            files += [w for w in words if "/" in w or w.endswith((".sh", ".py", ".js",
                                                                     ".ts", ".rb", ".pl"))]
        for name in files:
            for where in (base, workspace):
                full = os.path.normpath(os.path.join(where, name))
                if full.startswith(workspace + os.sep):
                    out.append(os.path.relpath(full, workspace))
    return list(dict.fromkeys(out))


def render() -> str:
    """docs/surfaces.md: the catalogue as a person reads it (`python -m ztsa.surfaces`)."""
    out = ["# Surfaces: what runs later, widens an agent's reach or instructs it", "",
           "Generated from `ztsa/surfaces.py` by `python -m ztsa.surfaces > docs/surfaces.md`;",
           "a test keeps them in step. Under `ztsa exec`, every path of the first table is",
           "read-only for the tree and cannot be made when absent; every file of the second",
           "is too where it exists when the run starts, and one the run makes, changes or",
           "removes anywhere (but inside " + ", ".join(f"`{d}/`" for d in INSTALLED) + ")",
           "is moved aside after it, its old text put back. The files a devcontainer",
           "configuration names (its Compose files, its Dockerfile, the files its",
           "`initializeCommand` names) are read-only as well.", "",
           "## At the top of the workspace", "",
           "| path | tool | acts | effect |", "|---|---|---|---|"]
    out += [f"| `{s.path}` | {s.tool} | {s.acts} | {s.effect} |" for s in ROOT]
    out += ["", "## Wherever they sit", "", "| name | tool | acts | effect |",
            "|---|---|---|---|"]
    out += [f"| `{s.path}` | {s.tool} | {s.acts} | {s.effect} |" for s in ANYWHERE]
    out += ["", "## Instruction files", "",
            "Anywhere in the workspace (a path ending in `/`: every file below it); AGT006",
            "judges their text, hidden and unrendered text included.", "",
            "| path | tool | acts | effect |", "|---|---|---|---|"]
    out += [f"| `{s.path}` | {s.tool} | {s.acts} | {s.effect} |" for s in INSTRUCTIONS]
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    import sys

    sys.stdout.write(render())
