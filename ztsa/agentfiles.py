"""Reading agent and editor configuration files of the workspace."""

from __future__ import annotations

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.parsing import load_jsonc, load_toml

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

# the project MCP configurations: (file, the keys to its servers): Claude Code's,
# Cursor's, VS Code's (its own file, or the `mcp` setting), Gemini CLI's, Roo Code's,
# Kiro's and Amazon Q's
MCP_JSON = ((".mcp.json", ("mcpServers",)), (".cursor/mcp.json", ("mcpServers",)),
            (".vscode/mcp.json", ("servers",)), (".vscode/settings.json", ("mcp", "servers")),
            (".gemini/settings.json", ("mcpServers",)), (".roo/mcp.json", ("mcpServers",)),
            (".kiro/settings/mcp.json", ("mcpServers",)),
            (".amazonq/mcp.json", ("mcpServers",)))


def json_file(ctx: Context, rel: str) -> tuple[Any, str] | None:
    """(document, text) of a JSON-with-comments file; None if absent."""
    text = ctx.ws_text(rel, limit=4 << 20)
    if text is None:
        return None
    return load_jsonc(text, rel), text


def toml_file(ctx: Context, rel: str) -> tuple[dict[str, Any], str] | None:
    text = ctx.ws_text(rel, limit=4 << 20)
    if text is None:
        return None
    return load_toml(text, rel), text


def get(doc: Any, *keys: str) -> Any:
    """doc[k1][k2]... or None where any level is missing or not an object."""
    for k in keys:
        if not isinstance(doc, dict):
            return None
        doc = doc.get(k)
    return doc


def out_of_reach(ctx: Context, f: Findings, dirs: tuple[str, ...]) -> None:
    """Record as undecidable each of the agent directories dirs whose contents cannot
    be judged: a symlink out of the workspace, or a git submodule that is not checked
    out (an empty directory now; a checkout later fills it)."""
    import os

    ws = os.path.realpath(ctx.ws_path(""))
    for d in dirs:
        path = ctx.ws_path(d)
        if os.path.islink(path):
            real = os.path.realpath(path)
            if real != ws and not real.startswith(ws + os.sep):
                f.error(f"{d} is a symlink out of the workspace ({os.readlink(path)}): what "
                        "it holds cannot be judged")
    text = f.attempt(ctx.ws_text, ".gitmodules", 1 << 20)
    if not text:
        return
    from ztsa.parsing import ParseError, parse_git_config

    try:
        entries = parse_git_config(text, ".gitmodules")
    except ParseError as exc:
        f.error(exc)
        return
    for section, key, value, _line in entries:
        if key.lower() != "path" or not section.lower().startswith("submodule"):
            continue
        sub = value.strip().strip("/")
        if not any(sub == d or sub.startswith(d + "/") or d.startswith(sub + "/")
                   for d in dirs):
            continue
        path = ctx.ws_path(sub)
        if not os.path.isdir(path) or not os.listdir(path):
            f.error(f"{sub} is a git submodule that is not checked out: the agent files it "
                    "will hold cannot be judged")
