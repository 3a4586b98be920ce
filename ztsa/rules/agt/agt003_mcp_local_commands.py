"""MCP servers start local commands.

## What it checks
MCP server definitions that start a local program: `.mcp.json`, `.cursor/mcp.json`,
`.gemini/settings.json`, `.roo/mcp.json`, `.kiro/settings/mcp.json` and
`.amazonq/mcp.json` (`mcpServers.*.command`), `.vscode/mcp.json` (`servers.*.command`)
and VS Code's `mcp` setting in `.vscode/settings.json` (`mcp.servers.*.command`), and
`.codex/config.toml` (`[mcp_servers.*] command`). The worst forms fail: `npx -y` of a
package without a version, `uvx`, `sh -c`, and docker with the daemon socket. Any other
command is judged by what it runs (`ztsa.follow.judge`), as agent hooks are: a download
run, a download tool, a package at no fixed version, or a repository file that does
either, fails; a tool by name (`hk mcp --root .`) or a repository server whose file
downloads nothing is advice. A server whose `env` sets a loader variable (`LD_*`) or
another that runs code or chooses ztsa's policy in the program that starts it (`ztsa
hook claude`'s wrapper, which Claude Code starts with that `env`: `BASH_ENV`, `HOME`,
`XDG_CONFIG_HOME`, `ZTSA_*`, ...), or names what of the hidden home the sandbox shows
the server (`PATH`, `CLAUDE_PROJECT_DIR`), fails.

When one of those directories is a git submodule not checked out, or a symlink out of
the workspace, the rule is unknown: what it will hold cannot be judged.

## Why it matters
An MCP server named in a repository is a program the agent starts on the host when it
opens the project. `npx -y some-package` fetches and runs whatever version the
registry serves that day.

## How to fix
Remove project-level MCP servers, or pin them (`npx -y pkg@1.2.3`, a lockfile, a
digest-pinned image) and start them only after review. Prefer user-level MCP
configuration for tools you trust.
"""

from __future__ import annotations

import re

from ztsa.agentfiles import MCP_JSON, OUTSIDE_ENV, get, json_file, out_of_reach, toml_file
from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.model import Nature, Outcome, Severity
from ztsa.parsing import line_of
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any



def worse(command: str, args: list[str]) -> str:
    words = [command, *args]
    base = command.rsplit("/", 1)[-1]
    if base == "npx" and ("-y" in args or "--yes" in args):
        pkgs = [a for a in args if not a.startswith("-")]
        if pkgs and not re.search(r".@\d", pkgs[0]):
            return f"; npx -y of {pkgs[0]} without a pinned version"
    if base in ("uvx", "bunx", "pnpx"):
        return f"; {base} fetches and runs a package"
    if base in ("sh", "bash", "zsh") and "-c" in args:
        return "; runs a shell command line"
    if base in ("docker", "podman") and any("docker.sock" in w or "podman.sock" in w
                                            for w in words):
        return "; mounts the container daemon socket"
    return ""


def report(ctx: Context, f: Findings, rel: str, text: str, name: str, server: Any) -> None:
    """A server's command: its worst forms fail; the rest is judged by what it runs
    (ztsa.follow.judge), as a hook is: a tool by name, or a repository file that
    downloads nothing and runs nothing fetched, is advice."""
    if not isinstance(server, dict) or not server.get("command"):
        return
    import shlex

    from ztsa.follow import judge

    command = str(server["command"])
    args = [str(a) for a in server.get("args") or [] if isinstance(a, str | int)]
    line = line_of(text, f'"{name}"') or line_of(text, name)
    env = server.get("env")
    loads = sorted(k for k in (env if isinstance(env, dict) else ())
                   if isinstance(k, str) and OUTSIDE_ENV.match(k))
    if loads:
        # the server's env is the environment of the program that starts it: a shell
        # prefix such as `ztsa hook claude`'s wrapper loads LD_PRELOAD before any sandbox,
        # and ztsa shows a confined server the directories PATH names
        f.fail(f"MCP server {name!r} sets {', '.join(loads)[:100]} in its env: the program "
               "that starts it (a shell prefix, ztsa's wrapper) loads or reads it before "
               "any sandbox, or it names what of the home the sandbox shows",
               path=rel, line=line_of(text, f'"{loads[0]}"') or line)
    bad = worse(command, args)
    if bad:
        f.fail(f"MCP server {name!r} starts {' '.join([command, *args])[:100]!r}{bad}",
               path=rel, line=line)
        return
    judge(ctx, f, f"MCP server {name!r}", " ".join(shlex.quote(w) for w in [command, *args]),
          "", rel, line)


@rule(id="AGT003", slug="mcp-local-commands", title="MCP servers start local commands",
      severity=Severity.MEDIUM,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    for rel, key in MCP_JSON:
        loaded = f.attempt(json_file, ctx, rel)
        if loaded is None:
            continue
        doc, text = loaded
        servers = get(doc, *key)
        for name, server in (servers.items() if isinstance(servers, dict) else []):
            report(ctx, f, rel, text, name, server)
    loaded_toml = f.attempt(toml_file, ctx, ".codex/config.toml")
    if loaded_toml is not None:
        doc, text = loaded_toml
        servers = doc.get("mcp_servers")
        for name, server in (servers.items() if isinstance(servers, dict) else []):
            report(ctx, f, ".codex/config.toml", text, name, server)
    # a submodule not checked out, or a symlink out: what it will hold is unknown
    out_of_reach(ctx, f, (".cursor", ".vscode", ".gemini", ".codex", ".roo", ".kiro",
                          ".amazonq"))
    return f.outcome("no project MCP server starts a local command",
                     f"{len(f.found)} MCP server(s) start local commands that fetch or run "
                     "fetched code", advised="MCP servers start local commands, judged by "
                     "what they run: nothing downloaded and run")
