"""What a tool reads from a workspace that makes something run later, widens an agent's
reach or feeds it instructions: the surfaces `ztsa exec` keeps from the tree, as data.

Each entry names the path (workspace-relative; a directory covers all it holds), the
tool that reads it, when it acts, and what it does. Two kinds:
- at the top of the workspace (ROOT): protected read-only while the tree runs, and
  refused when absent (ztsa.sandbox.protect);
- wherever it sits (later_specs: ANYWHERE's names, and every `**/` file spec of a
  setting below that acts outside the confinement later, a path suffix such as
  `.vscode/tasks.json`, `.config/mise/config.toml` or `*.code-workspace`): a tool obeys
  it in any directory it works in (an agent in a subdirectory loads that directory's
  CLAUDE.md; direnv runs the `.envrc` of the directory a shell enters; VS Code runs the
  folder-open tasks of whatever folder it opens). The walk of every run finds them
  (native/gitwalk.c, 'I' records, narrowed by `later`, the same reading of a spec as
  the gate's, spec_matches), and a link standing for one of their directories (a
  nested `.vscode` that is a link): those that exist are protected like the top-level
  ones, and one the run made, changed or removed is moved aside after it, its old text
  (or a link's old target) put back (ztsa.sandbox.gitguard).
Files that a surface names by path (a devcontainer's Compose files and the script its
`initializeCommand` runs) are protected too (named_by).

SETTINGS is the other half: one record per place in those files (a key of a JSON, TOML
or YAML file, a front matter field, a whole file) that makes something run code, run it
outside any sandbox, widen an agent's permissions or reach, redirect its endpoints or
credentials, or load instructions; with when it acts, who acts on it (inside `ztsa
exec`'s confinement or outside it later) and what a safe value looks like, as data (a
predicate of ztsa.surfacecheck.SAFE). The gate's rules AGT010-AGT012 read it; every
record has a malicious and a benign fixture (tests/fixtures/surfaces/ID/)."""

from __future__ import annotations

import contextlib
import os

from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Iterable
    from typing import Any

    from ztsa.manifests.parsecache import ParseCache


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
    Surface(".tool-versions", "asdf, mise", "on entering the directory",
            "runs code (a `path:` version)"),
    Surface("flake.nix", "Nix, direnv's `use flake`", "on `nix develop`, or entering the "
            "directory", "runs code (shellHook, nixConfig)"),
    Surface("shell.nix", "Nix, direnv's `use nix`", "on `nix-shell`, or entering the "
            "directory", "runs code (shellHook)"),
    Surface("default.nix", "Nix, direnv's `use nix`", "on `nix-shell`, or entering the "
            "directory", "runs code (shellHook)"),
    Surface("devenv.nix", "devenv", "on `devenv shell`, or entering the directory",
            "runs code (enterShell)"),
    Surface(".github/hooks", "Copilot, Cursor", "session start", "runs code"),
    Surface(".claude-plugin", "Claude Code", "on installing or updating a plugin of the "
            "repository's marketplace", "runs code (its plugins' hooks and servers)"),
    Surface(".husky", "husky", "on commit", "runs code"),
    Surface(".ztsa.toml", "ztsa", "next run", "policy"),
    Surface(".ztsa", "ztsa", "next run", "policy"),
    Surface(".ztsa-quarantine", "ztsa", "next run", "what ztsa moved aside"),
)

# The catalogue's top-level files of settings acting outside the confinement that exec
# leaves to the gate (tests/sandbox/test_later_surfaces.py keeps this list whole): files
# a person's own command reads as it reads a Makefile, and files an ordinary run writes.
LEFT_TO_THE_GATE = {
    "compose.yaml": "read by the person's own `docker compose`, as make reads a Makefile",
    "compose.yml": "read by the person's own `docker compose`, as make reads a Makefile",
    "docker-compose.yaml": "read by the person's own `docker compose`",
    "docker-compose.yml": "read by the person's own `docker compose`",
    ".env": "an application's settings, which setup scripts write (`cp .env.example "
            ".env`); Gemini CLI's redirect keys in it are AGT011's",
}

# files a tool obeys in whichever directory it works in (the agents' instructions; the
# gate's scope reads these names); later_specs adds the settings' `**/` files
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


def spec_matches(rel: str, spec: str) -> bool:
    """Does the workspace-relative path rel match a file spec of SETTINGS: `**/REST` at
    the top or below any directory (REST's `*` within a name for the last part, as the
    gate's listing and the walk read it: `.mise/conf.d/*.toml` is no file of a folder
    below conf.d; across `/` in a part before it, as fnmatch does), else a glob from the
    top. The one reading of a spec, for the gate (ztsa.surfacecheck) and for `ztsa exec`
    (later)."""
    import fnmatch

    if spec.startswith("**/"):
        rest = spec[3:]
        if not any(c in rest for c in "*?["):  # a literal suffix (what fnmatch would say)
            return rel == rest or rel.endswith("/" + rest)
        d, _, name = rest.rpartition("/")
        rd, _, rname = rel.rpartition("/")
        if not fnmatch.fnmatchcase(rname, name):
            return False
        if any(c in d for c in "*?["):
            return fnmatch.fnmatchcase(rd, d) or fnmatch.fnmatchcase(rd, "*/" + d)
        return not d or rd == d or rd.endswith("/" + d)
    return fnmatch.fnmatchcase(rel, spec)


def acts_outside(s: Setting) -> bool:
    """Does a setting act outside `ztsa exec`'s confinement, later (an agent, an editor,
    a shell environment manager, a devcontainer's host side, a container engine)?"""
    return s.runs.startswith("outside")


_LATER: list[tuple[str, ...]] = []


def later_specs() -> tuple[str, ...]:
    """What `ztsa exec` keeps at any depth, as path suffixes (`*` only in the last
    part): ANYWHERE's names, and the REST of every `**/REST` file spec of a setting that
    acts outside the confinement later (VS Code's `.vscode/tasks.json`, mise's
    `.config/mise/config.toml`, `*.code-workspace`, direnv's `.envrc`). Those acting
    inside it (a nested `.npmrc`, SUP008's) are judged by the gate."""
    if not _LATER:
        specs = [s.path for s in ANYWHERE]
        specs += [f[3:] for s in SETTINGS if acts_outside(s)
                  for f in s.files if f.startswith("**/")]
        _LATER.append(tuple(dict.fromkeys(specs)))
    return _LATER[0]


def _later_rows() -> dict[str, tuple[str, str, str]]:
    """later_specs with the tool, when and what of the entry or settings naming each."""
    rows = {s.path: (s.tool, s.acts, s.effect) for s in ANYWHERE}
    fixed = set(rows)
    for s in SETTINGS:
        for f in s.files:
            spec = f[3:]
            if (f.startswith("**/") and acts_outside(s) and spec not in fixed
                    and (spec not in rows or s.effect == RUNS != rows[spec][2])):
                rows[spec] = (s.tool, s.acts, s.effect)  # what runs code first
    return rows


def under_root(rel: str) -> bool:
    """Is rel a path of ROOT, beneath one, or a directory on the way to one (kept by the
    read-only layer at the top, or judged with the top's files after the run)?"""
    if not _ROOT_INDEX:
        paths = set(root_paths())
        ways = {"/".join(r.split("/")[:k]) for r in paths for k in range(1, r.count("/") + 1)}
        _ROOT_INDEX.append((paths, ways))
    paths, ways = _ROOT_INDEX[0]
    parts = rel.split("/")
    return rel in ways or any("/".join(parts[:k]) in paths for k in range(1, len(parts) + 1))


_ROOT_INDEX: list[tuple[set[str], set[str]]] = []


def later(rel: str, link: bool = False) -> bool:
    """Is the workspace-relative rel a file a tool obeys later where it sits (one of
    later_specs at the top or at any depth), outside an installed package? link: rel is
    a symbolic link; then also when it stands for a directory of such a path (a nested
    `.vscode` or `.config/mise` that is a link leads the tool to the files of the link's
    choosing)."""
    if installed(rel):
        return False
    by_name, patterns, dirs = _later_index()
    name = rel.rpartition("/")[2]
    wanted = [*by_name.get(name, ()), *(p for p in patterns
                                        if _name_matches(name, p.rpartition("/")[2]))]
    if link:
        wanted += dirs.get(name, ())
    return any(spec_matches(rel, "**/" + spec) for spec in wanted)


_LATER_INDEX: list[tuple[dict[str, list[str]], list[str], dict[str, list[str]]]] = []


def _later_index() -> tuple[dict[str, list[str]], list[str], dict[str, list[str]]]:
    """later_specs by their last part (a name), those whose last part is a pattern, and
    each directory part of one with the parts before it, by its name: the specs a path
    of that name can match at all (`later` then reads each with spec_matches)."""
    if not _LATER_INDEX:
        by_name: dict[str, list[str]] = {}
        patterns: list[str] = []
        dirs: dict[str, list[str]] = {}
        for spec in later_specs():
            parts = spec.split("/")
            if any(c in parts[-1] for c in "*?["):
                patterns.append(spec)
            else:
                by_name.setdefault(parts[-1], []).append(spec)
            for k in range(1, len(parts)):
                dirs.setdefault(parts[k - 1], []).append("/".join(parts[:k]))
        _LATER_INDEX.append((by_name, patterns, dirs))
    return _LATER_INDEX[0]


# the devcontainer configurations: a file of the workspace's top, one in .devcontainer/,
# and one per folder of .devcontainer/ (the editor offers each)
DEVCONTAINERS = (".devcontainer.json", ".devcontainer/devcontainer.json")


def _devcontainer_files(workspace: str, nested: Iterable[str] = ()
                        ) -> list[tuple[str, str]]:
    """(path, the folder VS Code opens for it) of each devcontainer configuration: the
    top's, and those of NESTED (relative: the walk's) in a folder opened on its own."""
    out = [(os.path.join(workspace, rel), workspace) for rel in DEVCONTAINERS]
    top = os.path.join(workspace, ".devcontainer")
    with contextlib.suppress(OSError):
        out += [(os.path.join(top, d, "devcontainer.json"), workspace)
                for d in sorted(os.listdir(top))]
    for rel in nested:
        for end in ("/.devcontainer/devcontainer.json", "/.devcontainer.json"):
            if ("/" + rel).endswith(end) and rel != end[1:]:
                out.append((os.path.join(workspace, rel),
                            os.path.join(workspace, rel[:-len(end)])))
    return [(p, f) for p, f in dict.fromkeys(out)
            if os.path.isfile(p) and not os.path.islink(p)]


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [v for v in value if isinstance(v, str)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


def named_by(workspace: str, found: Iterable[str] = (), cache: bool = True) -> list[str]:
    """The workspace files (relative) that a devcontainer configuration (the top's, or
    one of FOUND in a folder VS Code may open on its own) names by path and that its host
    side runs or reads later: its Compose files, its Dockerfile, and the files its
    `initializeCommand` names (every word with a `/` or a script's suffix); the
    plugin directories the repository's Claude Code marketplace lists; the files the
    commands of the settings acting outside the confinement run by path, at the top and,
    for FOUND (the files of later_specs the run's one walk found, absolute: gitlayout's
    `instructions`), at any depth; and what those files run in turn when they are shell
    scripts (scripts_in_turn). Existing or not: a name the tree makes later would be obeyed
    the same. cache: a TOML setting's parse may come from the parse cache (tomllib's
    import costs more than the rest; `--no-cache` says no)."""
    from ztsa.parsing import ParseError, load_jsonc

    given, workspace = workspace, os.path.realpath(workspace)
    # the walk's paths, relative (the walk may have gone from the path as given)
    nested = [p[len(w) + 1:] for p in found for w in dict.fromkeys((workspace, given))
              if p.startswith(w + os.sep)]
    out: list[str] = []
    scripts: list[tuple[str, str, str]] = []
    for path, folder in _devcontainer_files(workspace, nested):
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
        run: list[str] = []
        for command in _strings(doc.get("initializeCommand")):
            import shlex  # only for a configuration that runs something

            try:
                words = shlex.split(command)
            except ValueError:
                words = command.split()
            run += [w for w in words if "/" in w or w.endswith((".sh", ".py", ".js",
                                                                   ".ts", ".rb", ".pl"))]
        for name in [*files, *run]:
            for where in (base, folder):
                full = os.path.normpath(os.path.join(where, name))
                if full.startswith(workspace + os.sep):
                    out.append(os.path.relpath(full, workspace))
                    if name in run:  # run from the folder VS Code opened, on the host
                        scripts.append((out[-1], os.path.relpath(folder, workspace)
                                        if folder != workspace else "", ""))
    out += _marketplace_plugins(workspace)
    commands, more = _commands_run(workspace, nested, cache)
    out += commands
    out += scripts_in_turn(workspace, [*scripts, *more])
    return list(dict.fromkeys(out))


# the variables a tool sets to the project's directory before running a command
_PROJECT_VARS = ("${CLAUDE_PROJECT_DIR}/", "$CLAUDE_PROJECT_DIR/", "${workspaceFolder}/",
                 '"$CLAUDE_PROJECT_DIR"/', "${GEMINI_PROJECT_DIR}/", "$GEMINI_PROJECT_DIR/")
# command keys of VS Code's tasks beside the catalogue's own (which name runOn): a
# tasks.json's, a *.code-workspace's
_TASK_COMMANDS = ("tasks/*/command", "tasks/tasks/*/command", "tasks/*/linux/command",
                  "tasks/tasks/*/linux/command")
# the settings whose values name a file a shell sources rather than a command
# (mise's `[env] _.source`): read as `. VALUE`
_SOURCED = ("mise-env-source",)


_Runner = tuple[str, str, tuple[str, ...], frozenset[str]]
_RUNNERS: list[tuple[list[_Runner], dict[str, list[_Runner]], list[_Runner]]] = []


def _runners() -> tuple[list[_Runner], dict[str, list[_Runner]], list[_Runner]]:
    """(file spec, format, key paths, the keys of those whose values are sourced files)
    of the settings that run code outside the confinement later, one per spec (the keys
    of every setting naming it): the top's fixed JSON paths (a `**/` spec's REST at the
    top included); and the `**/` specs' RESTs (a tool obeys them in whatever folder it
    opens or enters), by their last part, and those whose last part is a pattern. A
    `text` setting is a script itself (direnv's `.envrc`)."""
    if _RUNNERS:
        return _RUNNERS[0]
    merged: dict[tuple[bool, str], tuple[str, list[str], set[str]]] = {}
    for st in SETTINGS:
        if not acts_outside(st) or st.effect != RUNS:
            continue
        for spec in st.files:
            rest = spec.removeprefix("**/")
            if rest.startswith(("{", "!")):
                continue
            tasks = rest.endswith(("tasks.json", ".code-workspace"))
            keys = [*st.keys, *(_TASK_COMMANDS if tasks else ())]
            where = [True] if spec.startswith("**/") else []
            if st.format == "json" and not any(c in rest for c in "*?["):
                where.append(False)
            for deep in where:
                fmt, have, sourced = merged.setdefault((deep, rest), (st.format, [], set()))
                have += [k for k in keys if k not in have]
                if st.id in _SOURCED:
                    sourced.update(st.keys)
    top: list[_Runner] = []
    by_name: dict[str, list[_Runner]] = {}
    patterns: list[_Runner] = []
    for (deep, rest), (fmt, keys, sourced) in merged.items():
        runner = (rest, fmt, tuple(keys), frozenset(sourced))
        last = rest.rpartition("/")[2]
        if not deep:
            top.append(runner)
        elif any(c in last for c in "*?["):
            patterns.append(runner)
        else:
            by_name.setdefault(last, []).append(runner)
    _RUNNERS.append((top, by_name, patterns))
    return _RUNNERS[0]


def _may_hold(text: str, keys: tuple[str, ...]) -> bool:
    """Can a key path of keys select anything in text: does the last literal level of
    one occur in it (a mise.toml of `[tools]` alone holds no hook), or an escape that
    could spell it (`"\\u0068ooks"`)? No: nothing to parse."""
    if "\\u" in text or "\\U" in text:
        return True
    for key in keys:
        literal = [p for p in key.split("/") if p and not any(c in p for c in "*?[")]
        if not literal or literal[-1] in text:
            return True
    return False


_STORES: dict[str, ParseCache] = {}


def _toml(text: str, path: str, cache: bool) -> Any:
    """A TOML setting's document, through the parse cache where there is one (a hit
    does not import tomllib)."""
    from ztsa.manifests import parsecache

    directory = parsecache.cache_dir() if cache else None
    store = _STORES.get(directory) if directory else None
    if directory and store is None:  # one per process: its stamp of the parsers' sources
        store = _STORES[directory] = parsecache.ParseCache(directory)
    return parsecache.load_toml(store, text, path)


def folder_of(rel: str, spec: str) -> str:
    """The folder a tool opens or enters to obey rel, which matches `**/SPEC`: the
    directory holding SPEC's path (`a/.vscode/tasks.json` -> `a`; `a/.config/mise/
    config.toml` -> `a`; `a/x.code-workspace` -> `a`)."""
    return "/".join(rel.split("/")[:-len(spec.split("/"))])


def _commands_run(workspace: str, found: list[str], cache: bool = True
                  ) -> tuple[list[str], list[tuple[str, str, str]]]:
    """(the workspace files, relative, that the commands of the settings acting outside
    the confinement run by path: the top's (a hook's `bash scripts/fmt.sh`, an MCP
    server's `node tools/server.js`, a task's `./run.sh`) and those of the settings of
    FOUND (relative paths) at any depth (a `packages/app/.vscode/tasks.json` task's
    `./run.sh`, from `packages/app`, the folder VS Code opens; a nested mise
    configuration's hook or `_.source` file); (path, the directory it runs in, its
    runner's language) of each, and of each setting that is a script itself (an
    `.envrc`), for scripts_in_turn). Changed by a run, the next session, editor or shell
    would run the tree's code. Read as follow.refs reads a command; the settings'
    formats and keys are the catalogue's."""
    top, by_name, patterns = _runners()
    read = [(*runner, "") for runner in top]
    seen = {r[0] for r in read}
    for rel in dict.fromkeys(found):
        if rel in seen or installed(rel):
            continue
        name = rel.rpartition("/")[2]
        for runner in [*by_name.get(name, ()), *patterns]:
            if spec_matches(rel, "**/" + runner[0]):
                read.append((rel, *runner[1:], folder_of(rel, runner[0])))
    out: list[str] = []
    scripts: list[tuple[str, str, str]] = []
    for rel, fmt, keys, sourced, folder in read:
        path = os.path.join(workspace, rel)
        if os.path.islink(path) or not os.path.isfile(path):
            continue
        if fmt == "text":  # the file is a script itself, run in its folder
            scripts.append((rel, folder, "sh"))
            continue
        from ztsa.parsing import ParseError, every_string
        from ztsa.surfacecheck import parse, select

        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read(1 << 20)
            if not _may_hold(text, keys):
                continue
            doc = _toml(text, path, cache) if fmt == "toml" else parse(fmt, text, path)
        except (OSError, ParseError, ValueError):
            continue  # the gate reports it; the file itself is kept
        commands: list[tuple[str, str]] = []  # (command, the folder it runs in)
        top_cwd = _task_cwd(doc, folder)  # a tasks.json's own `options.cwd`
        for key in keys:
            for hit in select(doc, key):
                if key in sourced:  # a file a shell sources: `. FILE`
                    commands += [(". " + v, folder) for v in every_string(hit.value)]
                    continue
                if not isinstance(hit.value, str):  # mise's hook lists and tables
                    commands += [(v, folder) for v in every_string(hit.value)
                                 ] if fmt == "toml" else []
                    continue
                holder = hit.parents[-1] if hit.parents else None
                args = holder.get("args") if isinstance(holder, dict) else None
                words = [a for a in args if isinstance(a, str)] if isinstance(args, list) else []
                # a task runs in its `options.cwd`, else the file's, else the folder
                own = _task_cwd(holder, folder)
                cwd = own if own is not None else top_cwd if top_cwd is not None else folder
                commands.append((" ".join([hit.value, *words]), cwd))
        if not commands:
            continue
        from ztsa import follow

        for command, cwd in commands:
            for var in _PROJECT_VARS:
                command = command.replace(var, "")
            refs, _inline = follow.refs(command, cwd)
            for ref in refs:
                # from the folder the tool runs commands in (existing or not: a file the
                # run makes there would run the same); from the settings file's own,
                # where one exists
                for base, must in ((ref.base, False), (os.path.dirname(rel), True)):
                    full = os.path.normpath(os.path.join(workspace, base, ref.rel))
                    if full.startswith(workspace + os.sep) and (
                            not must or os.path.lexists(full)):
                        out.append(full[len(workspace) + 1:])
                        scripts.append((out[-1], cwd, ref.lang))
    return out, scripts


def _task_cwd(holder: object, folder: str) -> str | None:
    """A VS Code task's (or a tasks file's) `options.cwd`, relative to the workspace:
    `${workspaceFolder}` and `${fileWorkspaceFolder}` are FOLDER; a relative one is from
    FOLDER. None: none, or one ztsa cannot place (another variable, outside the
    workspace): the folder itself is read then."""
    options = holder.get("options") if isinstance(holder, dict) else None
    cwd = options.get("cwd") if isinstance(options, dict) else None
    if not isinstance(cwd, str) or not cwd:
        return None
    for var in ("${workspaceFolder}", "${fileWorkspaceFolder}", "${workspaceRoot}"):
        if cwd.startswith(var):  # the folder itself
            cwd = "." + cwd[len(var):]
    if "$" in cwd or cwd.startswith(("/", "~")):
        return None
    rel = os.path.normpath(os.path.join(folder, cwd))
    return None if rel == ".." or rel.startswith("../") else ("" if rel == "." else rel)


# What a kept shell script runs by path in turn (a hook's fmt.sh that runs
# `./tools/real.sh` or sources `. ./env.sh`), kept with it: followed at most SCRIPT_DEPTH
# files beyond the first (fmt.sh -> real.sh -> deeper.sh -> a third), reading each
# shell script's first SCRIPT_BYTES (a larger one, a binary, a link out of the workspace
# is kept but not read) and at most SCRIPT_FILES scripts in all; past the bounds what runs
# is the gate's to judge (follow.py). Only shell scripts are read (follow.runs_in_turn:
# a `.sh` suffix, a shell `#!`, a shell runner): a Node server's `require('./lib')`, a
# Python file's imports are not followed.
SCRIPT_DEPTH = 3
SCRIPT_BYTES = 256 << 10
SCRIPT_FILES = 64


def scripts_in_turn(workspace: str, scripts: list[tuple[str, str, str]]) -> list[str]:
    """The workspace files (relative) that the kept files of SCRIPTS ((path, the
    directory it runs in, its runner's language)) run by path in turn, when they are
    shell scripts, transitively within the bounds above: a name from the directory the
    script runs in (existing or not), or beside the script where one exists (behind
    `"$(dirname "$0")"/`: beside it, existing or not; behind another variable: from
    both, existing or not); never one
    inside an installed package (a package manager's, which it rewrites)."""
    if not scripts:
        return []
    from ztsa import follow

    out: list[str] = []
    todo = [(rel, cwd, lang, 0) for rel, cwd, lang in reversed(scripts)]
    read: set[str] = set()
    while todo and len(read) < SCRIPT_FILES:
        rel, cwd, lang, depth = todo.pop()
        if rel in read or depth > SCRIPT_DEPTH:
            continue
        read.add(rel)
        text = _script_text(workspace, rel)
        refs = follow.runs_in_turn(rel, text, lang, cwd) if text is not None else None
        for ref in refs or ():
            name = follow.VAR_PREFIX.compiled.sub("", ref.rel)
            if name.startswith(("/", "~", "$")) or "$" in name or "`" in name:
                continue
            here = os.path.dirname(rel)
            # `"$(dirname "$0")"/x.sh`: beside the script; another variable: either
            bases = [(here, False)] if "dirname" in ref.rel[:-len(name)] else [
                (ref.base, False), (here, name == ref.rel)]
            for base, must in bases:
                full = os.path.normpath(os.path.join(workspace, base, name))
                there = full[len(workspace) + 1:]
                if (full.startswith(workspace + os.sep) and not installed(there)
                        and (not must or os.path.lexists(full))):
                    out.append(there)
                    if depth < SCRIPT_DEPTH:
                        todo.append((there, cwd, ref.lang, depth + 1))
    return out


def _script_text(workspace: str, rel: str) -> str | None:
    """A kept file's text to read for what it runs: None when absent, not a regular
    file, larger than SCRIPT_BYTES, binary, or a link out of the workspace."""
    from ztsa.gitlayout import read_small

    real = os.path.realpath(os.path.join(workspace, rel))
    if not real.startswith(workspace + os.sep):
        return None
    data = read_small(real, SCRIPT_BYTES)
    return None if data is None or b"\0" in data else data.decode("utf-8", "replace")


def _marketplace_plugins(workspace: str) -> list[str]:
    """The plugin directories the repository's Claude Code marketplace lists by a path
    (`.claude-plugin/marketplace.json`, `plugins[].source`, beneath `pluginRoot`): what
    a person's install or update of its plugins copies and runs (hooks, servers, their
    scripts); never the repository itself (a plugin at `./`: its manifest is ROOT's)."""
    import posixpath

    from ztsa.parsing import ParseError, load_jsonc

    path = os.path.join(workspace, ".claude-plugin", "marketplace.json")
    if os.path.islink(path) or not os.path.isfile(path):
        return []
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            doc = load_jsonc(f.read(1 << 20), path)
    except (OSError, ParseError):
        return []  # the gate reports it; .claude-plugin itself is protected
    if not isinstance(doc, dict):
        return []
    meta = doc.get("metadata")
    root = meta.get("pluginRoot", "") if isinstance(meta, dict) else ""
    plugins = doc.get("plugins")
    out = []
    for plugin in plugins if isinstance(plugins, list) else []:
        source = plugin.get("source") if isinstance(plugin, dict) else None
        if not isinstance(source, str) or source.startswith(("/", "~")) or "://" in source:
            continue
        if isinstance(root, str) and root and not source.startswith("./"):
            source = posixpath.join(root, source)
        rel = posixpath.normpath(source.removeprefix("./"))
        full = os.path.normpath(os.path.join(workspace, rel))
        if rel not in (".", "") and full.startswith(workspace + os.sep):
            out.append(os.path.relpath(full, workspace))
    return out


def render_surfaces() -> str:
    """The protected paths' part of docs/surfaces.md."""
    out = ["# Surfaces: what runs later, widens an agent's reach or instructs it", "",
           "Generated from `ztsa/surfaces.py` by `python -m ztsa.surfaces > docs/surfaces.md`;",
           "a test keeps them in step. Under `ztsa exec`, every path of \"At the top of the",
           "workspace\" is read-only for the tree and cannot be made when absent; every file",
           "of \"Wherever they sit\" is too where it exists when the run starts, and one",
           "the run makes, changes or",
           "removes anywhere (but inside " + ", ".join(f"`{d}/`" for d in INSTALLED) + ")",
           "is moved aside after it, its old text put back; so is a link standing for one",
           "of its directories (a nested `.vscode` that is a link). The files a devcontainer",
           "configuration names (its Compose files, its Dockerfile, the files its",
           "`initializeCommand` names) are read-only as well, and so are the files that the",
           "commands of the settings below acting outside the confinement run by path, at the",
           "top and at any depth, from the folder the tool opens or enters (a",
           "`packages/app/.vscode/tasks.json` task's `./run.sh` is `packages/app/run.sh`; a",
           "mise hook's script, a `_.source` file, what an `.envrc` sources), and what a kept",
           "shell script runs by path in turn (`./tools/real.sh`, `. ./env.sh`), "
           f"{SCRIPT_DEPTH} files",
           f"deep at most, each read up to {SCRIPT_BYTES >> 10} KiB, {SCRIPT_FILES} "
           "scripts per run (a binary,",
           "a larger file, a link out of the workspace: kept but not read; a file of an",
           "installed package: its package manager's). Only shell scripts are read: a Node",
           "server's `require('./lib')`, a Python file's imports and `subprocess` calls",
           "are left to the gate. What the run adds to a directory an `.envrc` or mise puts",
           "first on PATH (`PATH_add bin`, `_.path`) is the bytecode audit's",
           "(git-control.md, \"Bytecode caches and virtual environments\").", "",
           "## At the top of the workspace", "",
           "| path | tool | acts | effect |", "|---|---|---|---|"]
    out += [f"| `{s.path}` | {s.tool} | {s.acts} | {s.effect} |" for s in ROOT]
    out += ["", "## Wherever they sit", "",
            "A path suffix, at the top and at any depth: the agents' instruction files, and",
            "every `**/` file of a setting below that acts outside the confinement later.", "",
            "| path | tool | acts | effect |", "|---|---|---|---|"]
    out += [f"| `{spec}` | {tool} | {acts} | {effect} |"
            for spec, (tool, acts, effect) in _later_rows().items()]
    out += ["", "## Instruction files", "",
            "Anywhere in the workspace (a path ending in `/`: every file below it); AGT006",
            "judges their text, hidden and unrendered text included.", "",
            "| path | tool | acts | effect |", "|---|---|---|---|"]
    out += [f"| `{s.path}` | {s.tool} | {s.acts} | {s.effect} |" for s in INSTRUCTIONS]
    return "\n".join(out) + "\n"

# -- the settings: one record per key or file that acts, and what a safe value is -------
class Setting(NamedTuple):
    id: str  # kebab-case; its fixtures are tests/fixtures/surfaces/ID/{malicious,benign}
    tool: str
    # workspace-relative globs (fnmatch; `*` stays within a directory);
    # `{plugin}/` stands for each plugin directory an in-repo marketplace lists;
    # `{devcontainer-compose}` for the Compose files a devcontainer configuration names;
    # `**/` for any depth (a tool that obeys the file of whatever directory it enters);
    # `!PATTERN` leaves out the files whose name matches it (case-insensitively)
    files: tuple[str, ...]
    format: str  # json (with comments), toml, yaml, json|yaml (by the file's suffix),
    # frontmatter, dotenv, properties, ini (.npmrc), yarnrc (YAML, or Yarn's old syntax
    # when headed so), syml (Yarn's old syntax), words (`name value` lines), gomod,
    # starlark (calls and their keywords), text
    keys: tuple[str, ...]  # key paths, `/` between levels, `*` any key or element,
    # fnmatch within a level (`*_BASE_URL`); none: the whole document
    acts: str  # when the tool acts on it
    runs: str  # who acts on it, and whether inside ztsa exec's confinement
    effect: str
    safe: tuple[str, ...]  # a value is safe when one of these holds (surfacecheck.SAFE)
    doc: str  # the tool's documentation of the key
    rule: str = ""  # an older rule that reports it instead of AGT010-AGT012


# when
SESSION = "at session start"
PLUGIN = "when the plugin is enabled"
USE = "when the skill, rule or agent is used"
OPEN = "on open"
FOLDER_OPEN = "on folder open"
ENTER = "on entering the directory"
CONTAINER = "on opening in a container"
COMPOSE = "on `compose up`"
INSTALL = "on install"
BUILD = "on build"
COMMIT = "on commit"
# who: outside the confinement, later, or inside it
AGENT = "outside: the agent"
EDITOR = "outside: the editor"
SHELL = "outside: a shell environment manager"
HOST = "outside: the host side of a devcontainer"
ENGINE = "outside: the container engine"
NOBODY = "nobody: a credential anyone with the checkout reads"
INSIDE = "inside: the build, under ztsa exec"
# what
RUNS = "runs code"
REACH = "widens reach"
REDIRECT = "redirects endpoints or credentials"
CREDENTIALS = "holds credentials"
INSTRUCTS = "loads instructions"

_CC = "https://code.claude.com/docs/en/"
# the project's Claude Code settings (`ztsa hook claude`'s guard reads them too)
CLAUDE_SETTINGS = (".claude/settings.json", ".claude/settings.local.json")


def _any_depth(*files: str) -> tuple[str, ...]:
    return tuple("**/" + f for f in files)


# An agent reads its project settings from the directory it is started in, not only the
# repository's top: Claude Code the `.claude/settings*.json` of its literal working
# directory (anthropics/claude-code#74023, #86187) and `.mcp.json` there and in each
# parent (#42465); Codex each `.codex/` layer from the project root down to it
# (developers.openai.com/codex/config-basic, /hooks); Gemini CLI and Qwen Code the
# `.gemini/` and `.qwen/` of it; OpenCode every `opencode.json` and `.opencode/` from it up
# (opencode.ai/docs/config); Cursor and the editor extensions those of the folder opened,
# as VS Code does: `cd pkg && claude` obeys pkg's. Judged at any depth.
_CLAUDE_ANY = _any_depth(*CLAUDE_SETTINGS)
_PLUGIN_TEXTS = ("{plugin}/skills/*/SKILL.md", "{plugin}/commands/*.md", "{plugin}/agents/*.md")
# VS Code obeys the `.vscode/` of whatever folder it opens, and a `.code-workspace`
# wherever it sits: judged at any depth
_VSCODE_SETTINGS = ("**/.vscode/settings.json",)
# the files that declare MCP servers: the agents' own, and VS Code's
_MCP_FILES = _any_depth(".mcp.json", ".cursor/mcp.json", ".gemini/settings.json",
                        ".roo/mcp.json", ".kiro/settings/mcp.json", ".amazonq/mcp.json")
_VSCODE_MCP_FILES = ("**/.vscode/mcp.json", *_VSCODE_SETTINGS)
_CODE_WORKSPACES = ("**/*.code-workspace",)
# the agent auto-approve settings, by their current names and their older ones
_VSCODE_APPROVE = ("chat.tools.global.autoApprove", "chat.tools.autoApprove",
                   "chat.tools.terminal.autoApprove", "chat.tools.terminal.enableAutoApprove",
                   "chat.tools.edits.autoApprove", "chat.tools.urls.autoApprove",
                   "chat.agent.terminal.autoApprove", "chat.agent.terminal.allowList",
                   "github.copilot.chat.agent.terminal.allowList")
# mise and direnv act on the configuration of whatever directory a shell enters (and each
# parent): judged at any depth. mise's: every name its LOCAL_CONFIG_FILENAMES and
# env_config_patterns read (jdx/mise src/config/mod.rs; mise.jdx.dev/configuration.html,
# /configuration/environments.html), `*` a MISE_ENV profile (`mise.development.toml`),
# `local` or both; conf.d fragments; the legacy `.rtx` names; miserc, which picks profiles
_MISE = _any_depth("mise.toml", ".mise.toml", "mise.*.toml", ".mise.*.toml", "mise/config.toml",
                   "mise/config.*.toml", ".mise/config.toml", ".mise/config.*.toml",
                   ".mise/conf.d/*.toml", ".config/mise.toml", ".config/mise.*.toml",
                   ".config/mise/config.toml", ".config/mise/config.*.toml",
                   ".config/mise/mise.toml", ".config/mise/mise.local.toml",
                   ".config/mise/conf.d/*.toml", ".rtx.toml", ".rtx.local.toml",
                   ".miserc.toml", ".config/miserc.toml")
# VS Code offers the devcontainer of whatever folder it opens (`code packages/app`): at
# any depth, but the one per folder of .devcontainer/ (the walk compares the parts before
# a spec's last literally; the top's is ROOT's .devcontainer)
_DEVCONTAINER_FILES = ("**/.devcontainer/devcontainer.json", "**/.devcontainer.json",
                       ".devcontainer/*/devcontainer.json")
_CARGO_CONFIGS = ("**/.cargo/config.toml", "**/.cargo/config")
_SHELL_TOOLS = "Bash,WebFetch,Shell,run_shell_command,web_fetch,execute_bash,shell"

SETTINGS = (
    # Claude Code: settings
    Setting("claude-status-line", "Claude Code", _CLAUDE_ANY, "json",
            ("statusLine/command",), SESSION, AGENT, RUNS, ("runs-nothing-fetched",),
            _CC + "statusline", rule="AGT002"),
    # the repository chooses the program that hands over the agent's credentials: any
    Setting("claude-api-key-helper", "Claude Code", _CLAUDE_ANY, "json",
            ("apiKeyHelper", "awsAuthRefresh", "awsCredentialExport"), SESSION, AGENT,
            RUNS, ("absent",), _CC + "settings", rule="AGT002"),
    Setting("claude-otel-headers-helper", "Claude Code", _CLAUDE_ANY, "json",
            ("otelHeadersHelper",), SESSION, AGENT, RUNS, ("absent",),
            _CC + "monitoring-usage", rule="AGT002"),
    Setting("claude-env-otlp-endpoint", "Claude Code", _CLAUDE_ANY, "json",
            ("env/OTEL_EXPORTER_OTLP*ENDPOINT",), SESSION, AGENT, REDIRECT,
            ("loopback-url",), _CC + "monitoring-usage"),
    Setting("claude-env-otlp-headers", "Claude Code", _CLAUDE_ANY, "json",
            ("env/OTEL_EXPORTER_OTLP*HEADERS",), SESSION, AGENT, REDIRECT,
            ("no-env-expansion",), _CC + "monitoring-usage"),
    Setting("claude-additional-directories", "Claude Code", _CLAUDE_ANY, "json",
            ("permissions/additionalDirectories/*",), SESSION, AGENT, REACH,
            ("in-repo-path",), _CC + "settings#permission-settings"),
    # Claude Code: instructions
    Setting("claude-md-import", "Claude Code",
            ("CLAUDE.md", "CLAUDE.local.md", ".claude/CLAUDE.md", ".claude/rules/*.md",
             ".claude/rules/*/*.md"), "text", (), SESSION, AGENT, INSTRUCTS,
            ("no-outside-import",), _CC + "memory#claude-md-imports"),
    Setting("claude-rules", "Claude Code", (".claude/rules/*.md", ".claude/rules/*/*.md"),
            "text", (), SESSION, AGENT, INSTRUCTS, ("no-piped-download",),
            _CC + "memory#organize-rules-with-claude/rules/", rule="AGT006"),
    # `allowed-tools` pre-approves (no prompt while the skill or command is active); a
    # subagent's `tools` only restricts what it may ask for, so it is not here
    Setting("claude-skill-allowed-tools", "Claude Code",
            (".claude/skills/*/SKILL.md", ".claude/commands/*.md", *_PLUGIN_TEXTS),
            "frontmatter", ("allowed-tools",), USE, AGENT, REACH,
            ("no-grant:" + _SHELL_TOOLS,), _CC + "skills"),
    # Claude Code: plugins of an in-repo marketplace (.claude-plugin/marketplace.json)
    Setting("claude-plugin-hooks", "Claude Code", ("{plugin}/hooks/hooks.json",), "json",
            ("hooks/*/*/hooks/*/command",), PLUGIN, AGENT, RUNS, ("formatter",),
            _CC + "plugins-reference#hooks"),
    Setting("claude-plugin-lsp", "Claude Code", ("{plugin}/.lsp.json",), "json",
            ("*/command",), PLUGIN, AGENT, RUNS, ("program-on-path",),
            _CC + "plugins-reference#lsp-servers"),
    Setting("claude-plugin-mcp", "Claude Code", ("{plugin}/.mcp.json",), "json",
            ("mcpServers/*/command",), PLUGIN, AGENT, RUNS, ("program-on-path",),
            _CC + "plugins-reference#mcp-servers"),
    # the same, declared inline: in a plugin's manifest, or in the marketplace's entry
    Setting("claude-plugin-inline-servers", "Claude Code",
            ("{plugin}/.claude-plugin/plugin.json", ".claude-plugin/marketplace.json"), "json",
            ("mcpServers/*/command", "lspServers/*/command", "plugins/*/mcpServers/*/command",
             "plugins/*/lspServers/*/command"), PLUGIN, AGENT, RUNS, ("program-on-path",),
            _CC + "plugins-reference#plugin-manifest-schema"),
    Setting("claude-plugin-inline-hooks", "Claude Code",
            ("{plugin}/.claude-plugin/plugin.json", ".claude-plugin/marketplace.json"), "json",
            ("hooks/*/*/hooks/*/command", "hooks/hooks/*/*/hooks/*/command",
             "plugins/*/hooks/*/*/hooks/*/command", "plugins/*/hooks/hooks/*/*/hooks/*/command"),
            PLUGIN, AGENT, RUNS, ("formatter",),
            _CC + "plugins-reference#plugin-manifest-schema"),
    Setting("claude-plugin-instructions", "Claude Code", _PLUGIN_TEXTS, "text", (), USE,
            AGENT, INSTRUCTS, ("no-piped-download",), _CC + "plugins-reference"),
    # MCP servers reached over the network
    Setting("mcp-remote-url", "Claude Code, Cursor, Gemini CLI, Roo Code, Kiro, Amazon Q",
            _MCP_FILES, "json",
            ("mcpServers/*/url", "mcpServers/*/httpUrl", "mcpServers/*/serverUrl"),
            SESSION, AGENT, REDIRECT, ("https-url",), _CC + "mcp"),
    Setting("mcp-remote-headers", "Claude Code, Cursor, Gemini CLI, Roo Code, Kiro, Amazon Q",
            _MCP_FILES, "json",
            ("mcpServers/*/headers/*",), SESSION, AGENT, REDIRECT,
            ("no-env-expansion", "no-plain-http-server"), _CC + "mcp"),
    Setting("vscode-mcp-remote-url", "VS Code (Copilot)", ("**/.vscode/mcp.json",), "json",
            ("servers/*/url",), SESSION, EDITOR, REDIRECT, ("https-url",),
            "https://code.visualstudio.com/docs/copilot/customization/mcp-servers"),
    # Codex
    Setting("codex-rules-allow-shell", "Codex", (".codex/rules/*.rules",), "starlark",
            ("*",), SESSION, AGENT, REACH, ("prefix-rule-no-runner",),
            "https://developers.openai.com/codex/rules"),
    # Gemini CLI and Qwen Code
    Setting("gemini-tools-allowed", "Gemini CLI, Qwen Code",
            ("**/.gemini/settings.json", "**/.qwen/settings.json"), "json",
            ("tools/allowed/*", "allowedTools/*", "coreTools/*"), SESSION, AGENT, REACH,
            ("no-grant:" + _SHELL_TOOLS,), "https://github.com/google-gemini/gemini-cli/blob/main/docs/reference/configuration.md"),
    Setting("gemini-env-redirect", "Gemini CLI, Qwen Code", ("**/.gemini/.env", "**/.qwen/.env"),
            "dotenv", ("*_BASE_URL", "*_ENDPOINT", "*_PROXY", "*_proxy"), SESSION, AGENT,
            REDIRECT, ("loopback-url",), "https://github.com/google-gemini/gemini-cli/blob/main/docs/reference/configuration.md"),
    Setting("gemini-dotenv-redirect", "Gemini CLI", (".env",), "dotenv",
            ("GOOGLE_GEMINI_BASE_URL", "GOOGLE_VERTEX_BASE_URL", "CODE_ASSIST_ENDPOINT"),
            SESSION, AGENT, REDIRECT, ("loopback-url",), "https://github.com/google-gemini/gemini-cli/blob/main/docs/reference/configuration.md"),
    # Cursor
    Setting("cursor-cli-permissions", "Cursor CLI", ("**/.cursor/cli.json",), "json",
            ("permissions/allow/*",), SESSION, AGENT, REACH,
            ("no-grant:Shell,Write,WebFetch",),
            "https://cursor.com/docs/cli/reference/permissions"),
    Setting("cursor-terminal-allowlist", "Cursor", ("**/.cursor/permissions.json",), "json",
            ("terminalAllowlist/*", "mcpAllowlist/*"), SESSION, AGENT, REACH,
            ("no-grant:*",), "https://cursor.com/docs/reference/permissions"),
    # OpenCode
    Setting("opencode-plugin", "OpenCode",
            _any_depth(".opencode/plugins/*.ts", ".opencode/plugins/*.js", ".opencode/plugin/*.ts",
                       ".opencode/plugin/*.js"), "text", (), SESSION, AGENT, RUNS,
            ("no-script-hazard",), "https://opencode.ai/docs/plugins/"),
    Setting("opencode-permission", "OpenCode", _any_depth(
        "opencode.json", "opencode.jsonc", ".opencode/opencode.json"), "json",
            ("permission/bash", "permission/webfetch", "permission/external_directory"),
            SESSION, AGENT, REACH, ("no-wildcard-allow",),
            "https://opencode.ai/docs/permissions/"),
    # Copilot, Roo, Windsurf, Kiro, Continue, Amazon Q, OpenHands
    # a Copilot agent's, a Roo mode's or a Claude subagent's tool list says what it may ask
    # for, not what runs unasked: not a widening, so not here. Their texts instruct.
    Setting("roo-modes-instructions", "Roo Code, Kilo Code", (".roomodes", ".kilocodemodes"),
            "yaml", ("customModes/*/roleDefinition", "customModes/*/customInstructions"),
            USE, AGENT, INSTRUCTS, ("no-piped-download",),
            "https://docs.roocode.com/features/custom-modes"),
    Setting("windsurf-workflow-turbo", "Windsurf", (".windsurf/workflows/*.md",), "text", (),
            USE, AGENT, REACH, ("lacks:// turbo",),
            "https://docs.windsurf.com/windsurf/cascade/workflows"),
    Setting("mcp-auto-approve", "Kiro, Amazon Q, Roo Code, Kilo Code",
            _any_depth(".kiro/settings/mcp.json", ".amazonq/mcp.json", ".roo/mcp.json",
                       ".kilocode/mcp.json"), "json",
            ("mcpServers/*/autoApprove/*", "mcpServers/*/alwaysAllow/*"), SESSION, AGENT,
            REACH, ("not-in:*",), "https://kiro.dev/docs/mcp/configuration/"),
    Setting("continue-config-ts", "Continue", (".continue/config.ts", ".continue/config.js"),
            "text", (), SESSION, EDITOR, RUNS, ("absent",),
            "https://docs.continue.dev/customize/deep-dives/configuration"),
    Setting("continue-mcp-command", "Continue",
            (".continue/mcpServers/*.yaml", ".continue/mcpServers/*.yml",
             ".continue/config.yaml"), "yaml", ("mcpServers/*/command",), SESSION, EDITOR,
            RUNS, ("program-on-path",),
            "https://docs.continue.dev/customize/deep-dives/mcp"),
    Setting("amazonq-agent-hooks", "Amazon Q Developer CLI", (".amazonq/cli-agents/*.json",),
            "json", ("hooks/*/*/command", "hooks/*/command"), SESSION, AGENT, RUNS,
            ("quiet",), "https://github.com/aws/amazon-q-developer-cli/blob/main/docs/"
            "agent-format.md"),
    Setting("amazonq-agent-tools", "Amazon Q Developer CLI", (".amazonq/cli-agents/*.json",),
            "json", ("allowedTools/*",), SESSION, AGENT, REACH,
            ("no-grant:*,execute_bash,fs_write,use_aws",),
            "https://github.com/aws/amazon-q-developer-cli/blob/main/docs/agent-format.md"),
    Setting("openhands-setup", "OpenHands", (".openhands/setup.sh", ".openhands/pre-commit.sh"),
            "text", (), SESSION, AGENT, RUNS, ("no-piped-download",),
            "https://docs.all-hands.dev/usage/prompting/repository"),
    Setting("openhands-microagents", "OpenHands", (".openhands/microagents/*.md",), "text",
            (), SESSION, AGENT, INSTRUCTS, ("no-piped-download",),
            "https://docs.all-hands.dev/usage/prompting/microagents-repo", rule="AGT006"),
    # VS Code and editors that read its files
    Setting("vscode-executable-settings", "VS Code",
            _VSCODE_SETTINGS, "json",
            ("python.defaultInterpreterPath", "python.pythonPath", "eslint.runtime",
             "eslint.nodePath", "git.path", "go.goroot", "go.alternateTools/*",
             "terminal.integrated.shell.linux", "rust-analyzer.server.path"),
            OPEN, EDITOR, RUNS, ("not-committed-file",),
            "https://code.visualstudio.com/docs/python/settings-reference"),
    Setting("vscode-rust-analyzer-override", "VS Code (rust-analyzer)",
            _VSCODE_SETTINGS, "json",
            ("rust-analyzer.check.overrideCommand",
             "rust-analyzer.cargo.buildScripts.overrideCommand",
             "rust-analyzer.checkOnSave.overrideCommand"), OPEN, EDITOR, RUNS,
            ("program-in:cargo",),
            "https://rust-analyzer.github.io/book/configuration.html"),
    Setting("vscode-terminal-env", "VS Code", _VSCODE_SETTINGS, "json",
            ("terminal.integrated.env.linux/*", "terminal.integrated.env.osx/*"), OPEN,
            EDITOR, RUNS, ("not-code-loading-variable",),
            "https://code.visualstudio.com/docs/terminal/profiles"),
    Setting("vscode-folder-open-task", "VS Code", ("**/.vscode/tasks.json",), "json",
            ("tasks/*/runOptions/runOn",), FOLDER_OPEN, EDITOR, RUNS, ("not:folderOpen",),
            "https://code.visualstudio.com/docs/debugtest/tasks#_run-behavior",
            rule="AGT005"),
    Setting("code-workspace-folder-open-task", "VS Code", _CODE_WORKSPACES, "json",
            ("tasks/tasks/*/runOptions/runOn",), FOLDER_OPEN, EDITOR, RUNS,
            ("not:folderOpen",),
            "https://code.visualstudio.com/docs/editing/workspaces/multi-root-workspaces"),
    # shell environment managers
    Setting("direnv-envrc", "direnv", ("**/.envrc",), "text", (), ENTER, SHELL, RUNS,
            ("runs-nothing-fetched",), "https://direnv.net/man/direnv-stdlib.1.html",
            rule="AGT009"),
    Setting("mise-hooks", "mise",
            _MISE, "toml",
            ("hooks/*", "tools/*/postinstall"), ENTER, SHELL, RUNS, ("quiet",),
            "https://mise.jdx.dev/hooks.html"),
    Setting("mise-env-source", "mise",
            _MISE, "toml",
            ("env/_/source", "env/_/source/*", "env/_/source/*/path"), ENTER, SHELL, RUNS,
            ("absent",), "https://mise.jdx.dev/environments/#env-_-source"),
    Setting("mise-env-path", "mise",
            _MISE, "toml",
            ("env/_/path",), ENTER, SHELL, RUNS, ("outside-workspace",),
            "https://mise.jdx.dev/environments/#env-_-path"),
    Setting("asdf-tool-path", "asdf, mise", ("**/.tool-versions",), "words", ("*",), ENTER,
            SHELL, RUNS, ("lacks:path:",),
            "https://asdf-vm.com/manage/configuration.html#tool-versions"),
    Setting("nix-flake-config", "Nix", ("flake.nix",), "text", (), "on `nix develop`/`nix "
            "build` once its nixConfig is accepted", SHELL, RUNS,
            ("lacks:post-build-hook|build-hook|extra-sandbox-paths|sandbox = false|"
             "trusted-users",),
            "https://nix.dev/manual/nix/latest/command-ref/new-cli/nix3-flake#flake-format"),
    Setting("nix-shell-hook", "Nix", ("shell.nix", "flake.nix", "default.nix", "devenv.nix"),
            "text", (), "on `nix-shell`/`nix develop` (or direnv's `use nix`)", SHELL, RUNS,
            ("no-piped-download",),
            "https://nix.dev/manual/nix/latest/command-ref/nix-shell#description"),
    # JetBrains IDEs: shared startup tasks run their run configurations on project open
    Setting("jetbrains-startup-tasks", "JetBrains IDEs", (".idea/startup.xml",), "text", (),
            OPEN, EDITOR, RUNS, ("lacks:<configuration ",),
            "https://www.jetbrains.com/help/idea/settings-tools-startup-tasks.html"),
    # devcontainers and Compose
    Setting("devcontainer-initialize-command", "Dev Containers", _DEVCONTAINER_FILES, "json",
            ("initializeCommand",), CONTAINER, HOST, RUNS, ("absent",),
            "https://containers.dev/implementors/json_reference/", rule="AGT009"),
    # a container that can take the host: in the configuration, and in the services of
    # the Compose files it names (`{devcontainer-compose}`)
    Setting("devcontainer-privileged", "Dev Containers, Docker Compose",
            (*_DEVCONTAINER_FILES, "{devcontainer-compose}"), "json|yaml",
            ("privileged", "services/*/privileged"), CONTAINER, HOST, REACH, ("not:true",),
            "https://containers.dev/implementors/json_reference/", rule="AGT009"),
    Setting("devcontainer-run-args", "Dev Containers", _DEVCONTAINER_FILES, "json",
            ("runArgs/*",), CONTAINER, HOST, REACH, ("no-host-run-arg",),
            "https://containers.dev/implementors/json_reference/", rule="AGT009"),
    Setting("devcontainer-cap-add", "Dev Containers, Docker Compose",
            (*_DEVCONTAINER_FILES, "{devcontainer-compose}"), "json|yaml",
            ("capAdd/*", "services/*/cap_add/*"), CONTAINER, HOST, REACH,
            ("no-host-capability",),
            "https://containers.dev/implementors/json_reference/", rule="AGT009"),
    Setting("devcontainer-security-opt", "Dev Containers, Docker Compose",
            (*_DEVCONTAINER_FILES, "{devcontainer-compose}"), "json|yaml",
            ("securityOpt/*", "services/*/security_opt/*"), CONTAINER, HOST, REACH,
            ("no-host-security-opt",),
            "https://containers.dev/implementors/json_reference/", rule="AGT009"),
    Setting("devcontainer-daemon-socket", "Dev Containers, Docker Compose",
            (*_DEVCONTAINER_FILES, "{devcontainer-compose}"), "json|yaml",
            ("mounts/*", "runArgs/*", "services/*/volumes/*"), CONTAINER, HOST, REACH,
            ("no-daemon-socket",),
            "https://containers.dev/implementors/json_reference/", rule="AGT009"),
    Setting("devcontainer-home-mounts", "Dev Containers", _DEVCONTAINER_FILES, "json",
            ("mounts/*", "runArgs/*"),
            CONTAINER, HOST, REACH, ("no-host-secret-mount",),
            "https://containers.dev/implementors/json_reference/"),
    Setting("compose-host-mounts", "Docker Compose",
            ("compose.yaml", "compose.yml", "docker-compose.yaml", "docker-compose.yml"),
            "yaml", ("services/*/volumes/*",), COMPOSE,
            ENGINE, REACH, ("no-host-secret-mount",),
            "https://docs.docker.com/reference/compose-file/services/#volumes"),
    # package managers and toolchain bootstrappers (they run inside ztsa exec)
    Setting("gradle-wrapper-distribution", "Gradle wrapper",
            ("gradle/wrapper/gradle-wrapper.properties",), "properties",
            ("distributionUrl",), BUILD, INSIDE, RUNS,
            ("host:services.gradle.org", "with:distributionSha256Sum"),
            "https://docs.gradle.org/current/userguide/gradle_wrapper.html"
            "#sec:verification"),
    Setting("maven-wrapper-distribution", "Maven wrapper",
            (".mvn/wrapper/maven-wrapper.properties",), "properties",
            ("distributionUrl", "wrapperUrl"), BUILD, INSIDE, RUNS,
            ("host:repo.maven.apache.org", "with:distributionSha256Sum"),
            "https://maven.apache.org/tools/wrapper/"),
    Setting("corepack-package-manager", "corepack", ("package.json",), "json",
            ("packageManager",), INSTALL, INSIDE, RUNS, ("package-spec",),
            "https://github.com/nodejs/corepack#when-authoring-packages"),
    Setting("setuptools-cmdclass", "setuptools", ("pyproject.toml",), "toml",
            ("tool/setuptools/cmdclass/*",), INSTALL, INSIDE, RUNS, ("build-module-inert",),
            "https://setuptools.pypa.io/en/latest/userguide/pyproject_config.html"),
    Setting("poetry-build-script", "Poetry", ("pyproject.toml",), "toml",
            ("tool/poetry/build",), INSTALL, INSIDE, RUNS,
            ("build-module-inert",), "https://python-poetry.org/docs/pyproject/#build"),
    Setting("pnpm-workspace-pnpmfile", "pnpm", ("pnpm-workspace.yaml",), "yaml",
            ("pnpmfile", "pnpmfilePath", "globalPnpmfile"), INSTALL, INSIDE, RUNS,
            ("absent",), "https://pnpm.io/settings#pnpmfile"),
    Setting("cargo-rustflags-linker", "Cargo", (".cargo/config.toml", ".cargo/config"),
            "toml", ("build/rustflags", "build/rustflags/*", "target/*/rustflags",
                     "target/*/rustflags/*", "env/RUSTFLAGS", "env/CARGO_ENCODED_RUSTFLAGS"),
            BUILD, INSIDE, RUNS, ("lacks:linker=|codegen-backend=|-Zcodegen-backend",),
            "https://doc.rust-lang.org/cargo/reference/config.html#buildrustflags"),
    Setting("rustup-toolchain-path", "rustup", ("rust-toolchain.toml", "rust-toolchain"),
            "toml", ("toolchain/path",), BUILD, INSIDE, RUNS, ("absent",),
            "https://rust-lang.github.io/rustup/overrides.html#the-toolchain-file"),
    Setting("go-toolchain", "Go", ("go.mod", "go.work"), "gomod", ("toolchain",), BUILD,
            INSIDE, RUNS, ("go-release",), "https://go.dev/doc/toolchain"),
    # settings the older rules report, named here so the model is whole
    Setting("claude-default-mode", "Claude Code", _CLAUDE_ANY, "json",
            ("permissions/defaultMode",), SESSION, AGENT, REACH,
            ("not-in:bypassPermissions,acceptEdits",), _CC + "iam#permission-modes",
            rule="AGT001"),
    Setting("claude-sandbox-disabled", "Claude Code", _CLAUDE_ANY, "json",
            ("sandbox/enabled",), SESSION, AGENT, REACH, ("not:false",),
            _CC + "sandboxing", rule="AGT001"),
    Setting("claude-enable-all-mcp", "Claude Code", _CLAUDE_ANY, "json",
            ("enableAllProjectMcpServers",), SESSION, AGENT, RUNS, ("false",),
            _CC + "settings", rule="AGT001"),
    Setting("claude-disable-all-hooks", "Claude Code", _CLAUDE_ANY, "json",
            ("disableAllHooks",), SESSION, AGENT, RUNS, ("not:true",),
            _CC + "hooks#disable-or-remove-hooks", rule="AGT001"),
    # Claude Code puts `env` into its own environment: its shell, and the shell prefix
    # before every command, start with it; the prefix of this machine's own install of
    # `ztsa hook claude` for that file is the install's entry
    Setting("claude-env-base-url", "Claude Code", _CLAUDE_ANY, "json", ("env/*",),
            SESSION, AGENT, REDIRECT,
            ("not-prefix-escaping-variable+not-redirecting-variable", "own-shell-wrapper"),
            _CC + "settings#environment-variables", rule="AGT001"),
    Setting("claude-allow-unsandboxed", "Claude Code", _CLAUDE_ANY, "json",
            ("sandbox/allowUnsandboxedCommands",), SESSION, AGENT, REACH, ("not:true",),
            _CC + "sandboxing", rule="AGT001"),
    Setting("claude-sandbox-excluded-commands", "Claude Code", _CLAUDE_ANY, "json",
            ("sandbox/excludedCommands/*",), SESSION, AGENT, REACH, ("not-runner",),
            _CC + "sandboxing", rule="AGT001"),
    Setting("claude-sandbox-unix-sockets", "Claude Code", _CLAUDE_ANY, "json",
            ("sandbox/network/allowUnixSockets/*",), SESSION, AGENT, REACH,
            ("no-daemon-socket",), _CC + "sandboxing", rule="AGT001"),
    Setting("claude-permissions-allow", "Claude Code", _CLAUDE_ANY, "json",
            ("permissions/allow/*",), SESSION, AGENT, REACH, ("allow-rule",),
            _CC + "settings#permission-settings", rule="AGT001"),
    Setting("claude-extra-marketplaces", "Claude Code", _CLAUDE_ANY, "json",
            ("extraKnownMarketplaces/*",), SESSION, AGENT, RUNS, ("in-repo-marketplace",),
            _CC + "settings#plugin-settings", rule="AGT001"),
    Setting("claude-enabled-plugins", "Claude Code", _CLAUDE_ANY, "json",
            ("enabledPlugins/*",), SESSION, AGENT, RUNS, ("in-repo-plugin",),
            _CC + "settings#plugin-settings", rule="AGT001"),
    Setting("claude-hooks", "Claude Code, Codex, Gemini CLI",
            (*_CLAUDE_ANY, "**/.codex/hooks.json", "**/.gemini/settings.json"), "json",
            ("hooks/*/*/hooks/*/command",), SESSION, AGENT, RUNS, ("runs-nothing-fetched",),
            _CC + "hooks", rule="AGT002"),
    # a skill's, subagent's or command's own hooks, in its front matter (while active)
    Setting("claude-front-matter-hooks", "Claude Code",
            (".claude/skills/*/SKILL.md", ".claude/agents/*.md", ".claude/agents/*/*.md",
             ".claude/commands/*.md", ".claude/commands/*/*.md"), "frontmatter",
            ("hooks/*/*/hooks/*/command",), USE, AGENT, RUNS, ("runs-nothing-fetched",),
            _CC + "hooks#hooks-in-skills-and-agents", rule="AGT002"),
    Setting("gemini-tool-commands", "Gemini CLI, Qwen Code",
            ("**/.gemini/settings.json", "**/.qwen/settings.json"), "json",
            ("tools/discoveryCommand", "tools/callCommand", "toolDiscoveryCommand",
             "toolCallCommand"), SESSION, AGENT, RUNS, ("runs-nothing-fetched",),
            "https://github.com/google-gemini/gemini-cli/blob/main/docs/get-started/"
            "configuration.md", rule="AGT002"),
    Setting("codex-notify", "Codex", ("**/.codex/config.toml",), "toml", ("notify",), SESSION,
            AGENT, RUNS, ("runs-nothing-fetched",),
            "https://developers.openai.com/codex/config-advanced#notifications",
            rule="AGT002"),
    Setting("codex-environment-setup", "Codex app", (".codex/environments/*.toml",), "toml",
            ("setup/script",), "on worktree creation", AGENT, RUNS,
            ("runs-nothing-fetched",), "https://developers.openai.com/codex/app/local-"
            "environments", rule="AGT002"),
    Setting("cursor-hooks", "Cursor, Windsurf, Copilot",
            ("**/.cursor/hooks.json", "**/.windsurf/hooks.json", ".github/hooks/*.json"), "json",
            ("hooks/*/*/command", "hooks/*/*/bash", "hooks/*/*/powershell"), SESSION, AGENT,
            RUNS, ("runs-nothing-fetched",), "https://cursor.com/docs/agent/hooks",
            rule="AGT002"),
    Setting("cursor-environment", "Cursor background agents", (".cursor/environment.json",),
            "json", ("install", "start", "terminals/*/command"), SESSION, AGENT, RUNS,
            ("runs-nothing-fetched",), "https://cursor.com/docs/background-agent",
            rule="AGT002"),
    Setting("kiro-hooks", "Kiro", (".kiro/hooks/*.kiro.hook",), "json", ("then/command",),
            "on the hook's event", AGENT, RUNS, ("runs-nothing-fetched",),
            "https://kiro.dev/docs/hooks/", rule="AGT002"),
    # every file of Cline's hooks directory is a script it runs on its event (its notes
    # are not: `!` leaves a pattern out)
    Setting("cline-hook-scripts", "Cline", (".clinerules/hooks/*", "!*.md", "!*.txt"),
            "text", (), "on the hook's event", AGENT, RUNS, ("runs-nothing-fetched",),
            "https://docs.cline.bot/features/hooks", rule="AGT002"),
    Setting("mcp-local-command", "Claude Code, Cursor, VS Code, Gemini CLI, Roo, Kiro, Amazon Q",
            _MCP_FILES, "json",
            ("mcpServers/*/command",), SESSION, AGENT, RUNS,
            ("no-fetching-launch+runs-nothing-fetched",), _CC + "mcp", rule="AGT003"),
    Setting("vscode-mcp-local-command", "VS Code (Copilot)",
            _VSCODE_MCP_FILES, "json",
            ("servers/*/command", "mcp/servers/*/command"), OPEN, EDITOR, RUNS,
            ("no-fetching-launch+runs-nothing-fetched",),
            "https://code.visualstudio.com/docs/copilot/customization/mcp-servers",
            rule="AGT003"),
    Setting("codex-mcp-local-command", "Codex", ("**/.codex/config.toml",), "toml",
            ("mcp_servers/*/command",), SESSION, AGENT, RUNS,
            ("no-fetching-launch+runs-nothing-fetched",),
            "https://developers.openai.com/codex/mcp", rule="AGT003"),
    # a server's `env` is the environment of the program that starts it: Claude Code
    # runs a stdio server as `PREFIX 'COMMAND ARGS'` (the shell prefix, `ztsa hook
    # claude`'s wrapper, loads LD_PRELOAD before any sandbox; measured with 2.1.197), and
    # ztsa shows a confined server the directories PATH and CLAUDE_PROJECT_DIR name
    Setting("mcp-server-env", "Claude Code, Cursor, Gemini CLI, Roo, Kiro, Amazon Q",
            _MCP_FILES, "json",
            ("mcpServers/*/env",), SESSION, AGENT, RUNS,
            ("not-prefix-escaping-variable:keys",), _CC + "mcp", rule="AGT003"),
    Setting("vscode-mcp-server-env", "VS Code (Copilot)",
            _VSCODE_MCP_FILES, "json",
            ("servers/*/env", "mcp/servers/*/env"), OPEN, EDITOR, RUNS,
            ("not-prefix-escaping-variable:keys",),
            "https://code.visualstudio.com/docs/copilot/customization/mcp-servers",
            rule="AGT003"),
    Setting("codex-mcp-server-env", "Codex", ("**/.codex/config.toml",), "toml",
            ("mcp_servers/*/env",), SESSION, AGENT, RUNS,
            ("not-prefix-escaping-variable:keys",),
            "https://developers.openai.com/codex/mcp", rule="AGT003"),
    Setting("codex-sandbox-mode", "Codex", ("**/.codex/config.toml",), "toml",
            ("sandbox_mode", "profiles/*/sandbox_mode"), SESSION, AGENT, REACH,
            ("not:danger-full-access",), "https://developers.openai.com/codex/security",
            rule="AGT004"),
    Setting("codex-approval-never", "Codex", ("**/.codex/config.toml",), "toml",
            ("approval_policy", "profiles/*/approval_policy"), SESSION, AGENT, REACH,
            ("not:never",), "https://developers.openai.com/codex/security", rule="AGT004"),
    Setting("codex-network-access", "Codex", ("**/.codex/config.toml",), "toml",
            ("sandbox_workspace_write/network_access",
             "profiles/*/sandbox_workspace_write/network_access"), SESSION, AGENT, REACH,
            ("not:true",), "https://developers.openai.com/codex/security", rule="AGT004"),
    Setting("codex-writable-roots", "Codex", ("**/.codex/config.toml",), "toml",
            ("sandbox_workspace_write/writable_roots",
             "profiles/*/sandbox_workspace_write/writable_roots"), SESSION, AGENT, REACH,
            ("in-repo-path",), "https://developers.openai.com/codex/config-reference",
            rule="AGT004"),
    Setting("gemini-sandbox-off", "Gemini CLI", ("**/.gemini/settings.json",), "json",
            ("sandbox", "tools/sandbox"), SESSION, AGENT, REACH, ("not:false",),
            "https://google-gemini.github.io/gemini-cli/docs/cli/sandbox.html",
            rule="AGT004"),
    Setting("vscode-chat-auto-approve", "VS Code (Copilot)", _VSCODE_SETTINGS, "json",
            _VSCODE_APPROVE, OPEN, EDITOR, REACH, ("approves-nothing",),
            "https://code.visualstudio.com/docs/copilot/chat/chat-tools", rule="AGT005"),
    Setting("code-workspace-chat-auto-approve", "VS Code (Copilot)", _CODE_WORKSPACES,
            "json", tuple(f"settings/{k}" for k in _VSCODE_APPROVE), OPEN, EDITOR, REACH,
            ("approves-nothing",),
            "https://code.visualstudio.com/docs/editing/workspaces/multi-root-workspaces"
            "#_settings", rule="AGT005"),
    Setting("vscode-automatic-tasks", "VS Code", _VSCODE_SETTINGS, "json",
            ("task.allowAutomaticTasks",), OPEN, EDITOR, RUNS, ("not:on",),
            "https://code.visualstudio.com/docs/debugtest/tasks#_run-behavior",
            rule="AGT005"),
    Setting("code-workspace-automatic-tasks", "VS Code", _CODE_WORKSPACES, "json",
            ("settings/task.allowAutomaticTasks",), OPEN, EDITOR, RUNS, ("not:on",),
            "https://code.visualstudio.com/docs/debugtest/tasks#_run-behavior",
            rule="AGT005"),
    # SUP008: package-manager configuration that runs a program of the repository's
    # choosing; at any depth (what is only test data is SUP008's advice)
    Setting("yarn-path", "Yarn", ("**/.yarnrc.yml",), "yarnrc", ("yarnPath",), INSTALL,
            INSIDE, RUNS, ("released-yarn",),
            "https://yarnpkg.com/configuration/yarnrc#yarnPath", rule="SUP008"),
    Setting("yarn-plugins", "Yarn", ("**/.yarnrc.yml",), "yarnrc", ("plugins",), INSTALL,
            INSIDE, RUNS, ("empty",), "https://yarnpkg.com/configuration/yarnrc#plugins",
            rule="SUP008"),
    Setting("yarn-classic-path", "Yarn 1", ("**/.yarnrc",), "syml", ("yarn-path",),
            INSTALL, INSIDE, RUNS, ("absent",),
            "https://classic.yarnpkg.com/en/docs/yarnrc#toc-yarn-path", rule="SUP008"),
    Setting("npmrc-script-shell", "npm", ("**/.npmrc",), "ini",
            ("script-shell", "shell", "git"), INSTALL, INSIDE, RUNS, ("absent",),
            "https://docs.npmjs.com/cli/using-npm/config#script-shell", rule="SUP008"),
    Setting("npmrc-node-options", "npm", ("**/.npmrc",), "ini", ("node-options",),
            INSTALL, INSIDE, RUNS, ("inert-node-options",),
            "https://docs.npmjs.com/cli/using-npm/config#node-options", rule="SUP008"),
    Setting("pnpmfile", "pnpm", ("**/.pnpmfile.cjs", "**/.pnpmfile.mjs"), "text", (),
            INSTALL, INSIDE, RUNS, ("absent",), "https://pnpm.io/pnpmfile", rule="SUP008"),
    Setting("cargo-rustc-wrapper", "Cargo", _CARGO_CONFIGS, "toml",
            ("build/rustc-wrapper", "build/rustc-workspace-wrapper", "build/rustc"), BUILD,
            INSIDE, RUNS, ("empty",),
            "https://doc.rust-lang.org/cargo/reference/config.html#buildrustc-wrapper",
            rule="SUP008"),
    Setting("cargo-target-runner", "Cargo", _CARGO_CONFIGS, "toml",
            ("target/*/runner", "target/*/linker"), BUILD, INSIDE, RUNS, ("system-program",),
            "https://doc.rust-lang.org/cargo/reference/config.html#targettriplerunner",
            rule="SUP008"),
    Setting("cargo-env-code", "Cargo", _CARGO_CONFIGS, "toml", ("env/*",), BUILD, INSIDE,
            RUNS, ("not-code-loading-variable:build",),
            "https://doc.rust-lang.org/cargo/reference/config.html#env", rule="SUP008"),
    # credentials committed
    Setting("dotenv-credentials", "dotenv loaders (Node, Python, Docker Compose, direnv)",
            (".env", ".env.local", ".env.production"), "dotenv", ("*",), "when loaded",
            NOBODY, CREDENTIALS, ("no-secret-value",),
            "https://docs.docker.com/compose/how-tos/environment-variables/variable-"
            "interpolation/#env-file"),
    Setting("docker-config-credentials", "Docker", (".docker/config.json",), "json",
            ("auths/*/auth", "auths/*/identitytoken", "auths/*/password"), "when loaded",
            NOBODY, CREDENTIALS, ("absent",),
            "https://docs.docker.com/reference/cli/docker/login/#credential-stores"),
)


def rule_of(s: Setting) -> str:
    """The rule that reports a setting: its own (an older rule), else AGT012 for what runs
    inside ztsa exec, AGT010 for code run outside it, AGT011 for the rest."""
    if s.rule:
        return s.rule
    if s.runs == INSIDE:
        return "AGT012"
    return "AGT010" if s.effect == RUNS else "AGT011"


def render_settings() -> list[str]:
    """The settings table and the safe predicates' meanings."""
    from ztsa.surfacecheck import SAFE, safe_name

    def cell(items: tuple[str, ...]) -> str:
        # a `|` inside a cell ends it, code span or not
        return "<br>".join(f"`{i}`".replace("|", "\\|") for i in items) if items \
            else "the whole file"

    out = ["", "## Settings: what each key does and what a safe value is", "",
           "Read by the gate: AGT010 (code run outside `ztsa exec`'s confinement), AGT011",
           "(an agent's reach, endpoints, credentials and instructions) and AGT012 (code",
           "an install or build runs inside it), or the older rule named. Files are globs",
           "from the workspace's top (`**/`: at the top and at any depth, as the tool obeys",
           "the file of whatever directory it opens or enters, test data included, but not",
           "in an installed package; `{plugin}`: each plugin directory the in-repo",
           "marketplace `.claude-plugin/marketplace.json` lists); keys are paths with `/`",
           "between levels and `*` for any key or element. A value is safe when one of its",
           "predicates holds (`a+b`: both hold); each setting has a malicious and a benign",
           "fixture in",
           "`tests/fixtures/surfaces/ID/`.", "",
           "| id | tool | files | keys | acts | who | effect | safe | rule | doc |",
           "|---|---|---|---|---|---|---|---|---|---|"]
    for s in SETTINGS:
        keys = cell(s.keys) if s.format != "text" else "the whole text"
        out.append(f"| `{s.id}` | {s.tool} | {cell(s.files)} ({s.format}) | {keys} | "
                   f"{s.acts} | {s.runs} | {s.effect} | {cell(s.safe)} | {rule_of(s)} | "
                   f"[doc]({s.doc}) |")
    out += ["", "### Safe predicates", "", "| predicate | a value is safe when |",
            "|---|---|"]
    used = {safe_name(part)[0] for s in SETTINGS for spec in s.safe
            for part in spec.split("+")}
    out += [f"| `{name}` | {what} |" for name, (what, _fn) in SAFE.items() if name in used]
    return out


def render() -> str:
    """docs/surfaces.md: the catalogue as a person reads it (`python -m ztsa.surfaces`):
    the settings first, then the paths `ztsa exec` protects."""
    text = render_surfaces()
    at = text.index("## At the top of the workspace")
    return text[:at] + "\n".join(render_settings()[1:]) + "\n\n" + text[at:]


if __name__ == "__main__":
    import sys

    sys.stdout.write(render())
