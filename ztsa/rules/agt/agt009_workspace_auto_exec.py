"""Workspace auto-exec before any sandbox.

## What it checks
Files that make tools run workspace code as soon as the folder is opened or a git
command runs: `.devcontainer/devcontainer.json` `initializeCommand` (it runs on the
host); `.envrc` (direnv); a `.husky/` directory; an install hook of the root
`package.json` that installs git hooks (`simple-git-hooks`, `lefthook install`,
`husky`, `pre-commit install`, `git config core.hooksPath`); and, in every git repository in the
workspace (the top level, nested ones, submodules' `.git/modules/*`, linked worktrees,
bare ones): config keys that run a program or send git elsewhere (`core.fsmonitor`,
`core.hooksPath`, `core.pager`, `include.path`, `filter.*`, `credential.helper`, and
the rest of `ztsa.gitlayout.RUNS_CODE`), executable hooks other than `*.sample` (in
`hooks/` and in the directory `core.hooksPath` names), a `commondir` that is not the
repository's own, a `.git` file that leads outside the workspace or into its files
rather than a git directory, and files `ztsa exec` moved aside after a run
(`.ztsa-quarantine/`).

## Why it matters
These run before any sandbox exists: an IDE opening the folder, direnv entering it,
or the agent's first `git status` executes whatever the repository chose.

## How to fix
Remove them, or inspect each one before opening the repository with tools that honour
it; delete `.ztsa-quarantine/` once you have looked at what it holds. Clone untrusted
repositories with `git clone --config core.hooksPath=/dev/null` and do not allow
direnv or devcontainers for them.
"""

from __future__ import annotations

import json
import os
import re
import stat

from ztsa import gitlayout
from ztsa.agentfiles import get, json_file
from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe
from ztsa.model import Outcome, Severity
from ztsa.parsing import ParseError, line_of, parse_git_config
from ztsa.registry import rule


@rule(id="AGT009", slug="workspace-auto-exec", title="Workspace auto-exec before any sandbox",
      severity=Severity.HIGH, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    dc = ".devcontainer/devcontainer.json"
    loaded = f.attempt(json_file, ctx, dc)
    if loaded is not None:
        doc, text = loaded
        if get(doc, "initializeCommand"):
            f.fail("initializeCommand runs on the host", dc, line_of(text, "initializeCommand"))
    if ctx.ws_exists(".envrc"):
        f.fail(".envrc runs when direnv enters the folder", ".envrc")
    _repositories(ctx, f)
    if os.path.isdir(ctx.ws_path(".husky")):
        f.fail(".husky/ installs git hooks on install", ".husky")
    _hook_installers(ctx, f)
    _quarantine(ctx, f)
    return f.outcome("nothing in the workspace runs automatically",
                     f"{len(f.found)} auto-exec item(s)")


HOOK_INSTALLERS = LazyRe(r"\b(simple-git-hooks|lefthook\s+install|husky(?:\s+install)?|"
                         r"pre-commit\s+install|git\s+config\s+(?:--\S+\s+)*core\.hookspath)\b",
                         re.IGNORECASE)


def _hook_installers(ctx: Context, f: Findings) -> None:
    """vue and vite (`"postinstall": "simple-git-hooks"`), typescript-sdk (`"prepare":
    "npx --no-install lefthook install"`): the install writes git hooks that run on the
    person's next commit, as .husky/ does."""
    if not ctx.ws_exists("package.json"):
        return
    from ztsa.manifests import MAX_MANIFEST_BYTES
    from ztsa.manifests.npm import parse_package_json
    from ztsa.manifests.project import load

    pj = f.attempt(load, ctx, "package.json", parse_package_json, MAX_MANIFEST_BYTES)
    for hook in ("preinstall", "install", "postinstall", "prepare") if pj else ():
        cmd = pj.scripts.get(hook) if pj else None
        m = HOOK_INSTALLERS.search(cmd) if cmd else None
        if m and pj:
            f.fail(f"{hook} runs {m.group(1)}: it installs git hooks on install",
                   "package.json", pj.line(f'"{hook}"'))


def _repositories(ctx: Context, f: Findings) -> None:
    ws = os.path.realpath(ctx.ws_path(""))
    layout = gitlayout.find(ws)
    for d in layout.unreadable:
        f.error(f"{os.path.relpath(d, ws)}: cannot be read")

    def rel(path: str) -> str:
        return os.path.relpath(path, ws)

    def inside(path: str) -> bool:
        return path == ws or path.startswith(ws + os.sep)

    for g in layout.gitdirs:
        for name in gitlayout.CONFIGS:
            path = os.path.join(g, name)
            config = f.attempt(ctx.ws_text, rel(path), 1 << 20)
            if config is None:
                continue
            try:
                entries = parse_git_config(config, rel(path))
            except ParseError as e:
                f.error(str(e))
                continue
            for section, key, value, line in entries:
                full = f"{section}.{key}"
                if gitlayout.runs_code(full, value):
                    f.fail(f"{full} is set to {value[:60]!r}", rel(path), line)
                elif (section, key) == ("core", "worktree") and not inside(
                        os.path.realpath(os.path.join(g, value))):
                    f.fail(f"core.worktree leads outside the workspace: {value[:60]!r}",
                           rel(path), line)
        common = gitlayout.read_small(os.path.join(g, "commondir"))
        if common is not None:
            target = os.path.realpath(os.path.join(g, common.decode("utf-8", "replace")
                                                 .strip()))
            if target != os.path.dirname(os.path.dirname(g)):
                f.fail(f"commondir leads to {target!r}, not the repository holding it",
                       rel(os.path.join(g, "commondir")))
    for path in layout.gitfiles:
        dest = gitlayout.gitfile_target(path)
        if dest is None:
            f.fail("a .git entry that is not a `gitdir:` file", rel(path))
        elif not inside(dest):
            f.fail(f".git file leads outside the workspace, to {dest!r}", rel(path))
        elif dest not in layout.gitdirs or "/.git/" not in dest + "/":
            f.fail(f".git file leads into the workspace's files ({rel(dest)!r}), "
                   "not a git directory", rel(path))
    husky = os.path.join(ws, ".husky")
    for d in layout.hook_dirs:
        if d == husky or d.startswith(husky + os.sep) or not os.path.isdir(d) \
                or os.path.islink(d):
            continue
        try:
            names = sorted(os.listdir(d))
        except OSError as e:
            f.error(f"{rel(d)}: {e.strerror}")
            continue
        for name in names:
            try:
                st = os.lstat(os.path.join(d, name))
            except OSError:
                continue
            if (not name.endswith(".sample") and stat.S_ISREG(st.st_mode)
                    and st.st_mode & 0o111):
                where = rel(os.path.join(d, name))
                f.fail(f"git hook {name} is executable" if inside(d) else
                       f"git hook {where} (outside the workspace) is executable",
                       where if inside(d) else None)


def _quarantine(ctx: Context, f: Findings) -> None:
    top = ctx.ws_path(".ztsa-quarantine")
    if not os.path.isdir(top) or os.path.islink(top):
        return
    for run in sorted(os.listdir(top)):
        manifest = f".ztsa-quarantine/{run}/manifest.json"
        if not os.path.isfile(ctx.ws_path(manifest)):
            continue
        text = f.attempt(ctx.ws_text, manifest, 1 << 20)
        try:
            moved = json.loads(text) if text is not None else []
        except ValueError:
            moved = []
        f.fail(f"ztsa exec moved aside {len(moved)} file(s) that would have run code "
               f"(run {run}): review them", manifest)
