"""Codex or Gemini project config weakens the sandbox.

## What it checks
`.codex/config.toml`: `sandbox_mode = "danger-full-access"`, `approval_policy =
"never"`, and `network_access = true` (under `[sandbox_workspace_write]`, or in a
profile). `.gemini/settings.json`: `sandbox` (or `tools.sandbox`) set to false.

## Why it matters
Project configuration applies to whoever runs the agent in the repository: these
settings switch off the agent's own sandbox, approvals or network isolation before
the user has read a line of the project.

## How to fix
Remove these keys from the repository's agent configuration; set such choices per
user (`~/.codex/config.toml`) and only for trusted work.
"""

from __future__ import annotations

from ztsa.agentfiles import get, json_file, toml_file
from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.model import Nature, Outcome, Severity
from ztsa.parsing import line_of
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

CODEX = ".codex/config.toml"
GEMINI = ".gemini/settings.json"


def codex_tables(doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    tables = [("", doc)]
    for name, prof in (doc.get("profiles") or {}).items():
        if isinstance(prof, dict):
            tables.append((f"profiles.{name}.", prof))
    return tables


@rule(id="AGT004", slug="codex-gemini-sandbox-weakened", severity=Severity.HIGH,
      title="Codex or Gemini project config weakens the sandbox",
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    loaded = f.attempt(toml_file, ctx, CODEX)
    if loaded is not None:
        doc, text = loaded
        for prefix, table in codex_tables(doc):
            if table.get("sandbox_mode") == "danger-full-access":
                f.fail(f"{prefix}sandbox_mode is danger-full-access", CODEX,
                       line_of(text, "danger-full-access"))
            if table.get("approval_policy") == "never":
                f.fail(f"{prefix}approval_policy is never", CODEX,
                       line_of(text, "approval_policy"))
            if get(table, "sandbox_workspace_write", "network_access") is True:
                f.fail(f"{prefix}sandbox_workspace_write.network_access is true", CODEX,
                       line_of(text, "network_access"))
    loaded_json = f.attempt(json_file, ctx, GEMINI)
    if loaded_json is not None:
        gdoc, gtext = loaded_json
        if get(gdoc, "sandbox") is False or get(gdoc, "tools", "sandbox") is False:
            f.fail("Gemini sandbox is disabled", GEMINI, line_of(gtext, '"sandbox"'))
    return f.outcome("Codex and Gemini project config keep their sandboxes",
                     f"{len(f.found)} sandbox-weakening setting(s)")
