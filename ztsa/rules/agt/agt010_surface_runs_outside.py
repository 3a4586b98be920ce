"""A catalogued surface runs code outside the sandbox.

## What it checks
Every setting of the surface catalogue (`ztsa/surfaces.py`, `docs/surfaces.md`) that makes
a tool outside `ztsa exec`'s confinement run a program later: the agent itself (a Claude
Code plugin's `hooks/hooks.json`, `.lsp.json` and `.mcp.json`, or the same declared in its
manifest or the in-repo marketplace; OpenCode plugins, Amazon Q agent hooks, OpenHands'
setup script), the editor (VS Code settings that name an executable, rust-analyzer's
override commands, the terminal's environment, a `.code-workspace` task that runs when the
folder opens, in a `.vscode/` or `.code-workspace` at any depth: VS Code obeys the files
of whatever folder it opens; Continue's `config.ts`, JetBrains shared startup tasks), a
shell environment manager (mise `[hooks]`, `_.source` and `_.path` at any depth and
under each of mise's names, its profiles `mise.ENV.toml` and `conf.d/*.toml` fragments
too, as mise acts on the configuration of whatever directory a shell enters, test data
included; asdf `path:` versions in a `.tool-versions` at any depth, a flake's
`nixConfig` build hooks, a Nix shell hook that runs a download). Each value is judged by
the catalogue's
safe predicate for that setting (a formatter by name, a program on PATH, echo, a file that
is not the repository's, ...), not by its presence alone. A file that does not parse, or a
symlink out of the workspace, makes the rule unknown. A plugin of the in-repo marketplace
that no project setting enables (`enabledPlugins`) acts only once a person installs it:
its findings are advice. Settings an older rule reports are left to it (the catalogue's
`rule` column: AGT001-AGT005, AGT009, SUP008).

## Why it matters
These programs run with the person's own rights, outside any sandbox, when the agent
starts, a plugin is enabled, the editor opens the folder or a shell enters it: a
repository that plants one runs its code on the person's machine before anyone reads it.

## How to fix
Remove the setting from the repository, or make it run what the catalogue calls safe
for it (`docs/surfaces.md`); keep personal tooling in user-level configuration.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule


@rule(id="AGT010", slug="surface-runs-outside", title="A catalogued surface runs code "
      "outside the sandbox", severity=Severity.HIGH,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    from ztsa.surfacecheck import check as judge

    return judge(ctx, "AGT010", "no catalogued surface runs code outside the sandbox",
                 "{n} catalogued setting(s) run code outside the sandbox")
