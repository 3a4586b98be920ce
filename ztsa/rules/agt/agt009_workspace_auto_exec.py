"""Workspace auto-exec before any sandbox.

## What it checks
Files that make tools run workspace code as soon as the folder is opened or a git
command runs: `.devcontainer/devcontainer.json` `initializeCommand` (it runs on the
host); `.envrc` (direnv); `.git/config` `core.fsmonitor`, `core.hooksPath`,
`core.sshCommand`, `core.pager` and `include.path`/`includeIf.*.path`; executable
files in `.git/hooks` other than `*.sample`; and a `.husky/` directory.

## Why it matters
These run before any sandbox exists: an IDE opening the folder, direnv entering it,
or the agent's first `git status` executes whatever the repository chose.

## How to fix
Remove them, or inspect each one before opening the repository with tools that honour
it. Clone untrusted repositories with `git clone --config core.hooksPath=/dev/null`
and do not allow direnv or devcontainers for them.
"""

from __future__ import annotations

import os
import stat

from ztsa.agentfiles import get, json_file
from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.model import Outcome, Severity
from ztsa.parsing import line_of, parse_git_config
from ztsa.registry import rule

GIT_KEYS = {("core", "fsmonitor"), ("core", "hookspath"), ("core", "sshcommand"),
            ("core", "pager"), ("include", "path")}


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
    config = f.attempt(ctx.ws_text, ".git/config", 1 << 20)
    if config is not None:
        entries = f.attempt(parse_git_config, config, ".git/config") or []
        for section, key, value, line in entries:
            sect = section.split(".", 1)[0]
            if (sect, key) in GIT_KEYS or (sect == "includeif" and key == "path"):
                if sect == "core" and key == "fsmonitor" and value.lower() == "false":
                    continue
                f.fail(f"{section}.{key} is set to {value[:60]!r}", ".git/config", line)
    hooks_dir = ctx.ws_path(".git/hooks")
    if os.path.isdir(hooks_dir) and not os.path.islink(hooks_dir):
        for name in sorted(os.listdir(hooks_dir)):
            st = os.lstat(os.path.join(hooks_dir, name))
            if (not name.endswith(".sample") and stat.S_ISREG(st.st_mode)
                    and st.st_mode & 0o111):
                f.fail(f"git hook {name} is executable", f".git/hooks/{name}")
    if os.path.isdir(ctx.ws_path(".husky")):
        f.fail(".husky/ installs git hooks on install", ".husky")
    return f.outcome("nothing in the workspace runs automatically",
                     f"{len(f.found)} auto-exec item(s)")
