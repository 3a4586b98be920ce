"""Codex or Gemini project config weakens the sandbox.

## What it checks
The surface catalogue's settings of this rule (`docs/surfaces.md`, rule AGT004), each
value judged by its safe predicate: `.codex/config.toml`: `sandbox_mode =
"danger-full-access"`, `approval_policy = "never"`, `network_access = true` under
`[sandbox_workspace_write]`, and `writable_roots` that leave the repository (`~`, `/`,
`../x`: the sandbox then lets the agent write there), at the top or in a profile.
`.gemini/settings.json`: `sandbox` (or `tools.sandbox`) set to false. Both at any depth
(Codex reads each `.codex/` from the project's top down to the directory it is started
in, Gemini CLI the `.gemini/` of that directory); a relative writable root is read from
the folder holding the `.codex/`. A file that does not parse makes the rule unknown.

## Why it matters
Project configuration applies to whoever runs the agent in the repository: these
settings switch off the agent's own sandbox, approvals or network isolation before
the user has read a line of the project.

## How to fix
Remove these keys from the repository's agent configuration; set such choices per
user (`~/.codex/config.toml`) and only for trusted work.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.surfacecheck import Hit
    from ztsa.surfaces import Setting


def word(s: Setting, hit: Hit, why: str) -> str:
    from ztsa.surfacecheck import dotted, shown

    if s.id == "gemini-sandbox-off":
        return "Gemini sandbox is disabled"
    if s.safe == ("in-repo-path",):
        return f"{dotted(hit)} is {shown(hit.value)}: {why}"
    return f"{dotted(hit)} is {shown(hit.value)}"


@rule(id="AGT004", slug="codex-gemini-sandbox-weakened", severity=Severity.HIGH,
      title="Codex or Gemini project config weakens the sandbox",
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    from ztsa.surfacecheck import older

    f = Findings()
    older(ctx, f, "AGT004", word)
    return f.outcome("Codex and Gemini project config keep their sandboxes",
                     f"{len(f.found)} sandbox-weakening setting(s)")
