"""MCP servers start local commands.

## What it checks
The surface catalogue's settings of this rule (`docs/surfaces.md`, rule AGT003): MCP
server definitions that start a local program: `.mcp.json`, `.cursor/mcp.json`,
`.gemini/settings.json`, `.roo/mcp.json`, `.kiro/settings/mcp.json` and
`.amazonq/mcp.json` (`mcpServers.*.command`), `.vscode/mcp.json` (`servers.*.command`)
and VS Code's `mcp` setting in `.vscode/settings.json` (`mcp.servers.*.command`), and
`.codex/config.toml` (`[mcp_servers.*] command`), all at any depth (VS Code obeys the
`.vscode/` of whatever folder it opens, Claude Code the `.mcp.json` of the directory it
is started in and of each parent, Codex each `.codex/` from the top down to it). The
worst launches fail (the
catalogue's `no-fetching-launch`): `npx -y` of a package without a version, `uvx`,
`bunx`, `pnpx`, a shell or an interpreter given an inline program (`sh -c`, `python3
-c`), and a container that mounts the daemon socket, the home or a system directory
(`-v /var/run:/var/run`). Any other command is judged by what it runs
(`ztsa.follow.judge`), as agent hooks are: a download run, a download tool, a package
at no fixed version, or a repository file that does either, fails; a tool by name (`hk
mcp --root .`) or a repository server whose file downloads nothing is advice. A server of
a `.vscode/` below the top runs in the folder that holds it (the one VS Code opened):
`npx NAME` of a package that folder's package.json (or the top's) depends on runs the
installed copy, and so does `npx NAME` of a command such a dependency provides by the
`bin` of its package.json in the repository when NAME is also a package of the
repository (`npx playwright` beside `@playwright/test` in Playwright's own repository:
before an install npx fetches the project's own package): advice. A server of a file
below the top of another of these runs in the folder that holds it the same way; `uvx
NAME` of NAME the `[project] name` of a pyproject.toml of the repository (a server
package's skill that starts its own release, in awslabs/mcp) is advice. A
server whose `env`
sets a loader variable (`LD_*`) or another that runs code or chooses ztsa's policy in
the program that starts it (`ztsa hook claude`'s wrapper, which Claude Code starts with
that `env`: `BASH_ENV`, `HOME`, `XDG_CONFIG_HOME`, `ZTSA_*`, ...), or names what of the
hidden home the sandbox shows the server (`PATH`, `CLAUDE_PROJECT_DIR`), fails (the
catalogue's `not-prefix-escaping-variable`).

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

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.surfacecheck import Hit
    from ztsa.surfaces import Setting


def _name(hit: Hit) -> str:
    parts = hit.path.split("/")
    return parts[-2] if len(parts) >= 2 else hit.path


def word(s: Setting, hit: Hit, why: str) -> str:
    from ztsa.surfacecheck import command_line

    if s.id.endswith("mcp-server-env"):
        return f"MCP server {_name(hit)!r} {why} in its env: the program that starts it " \
               "(a shell prefix, ztsa's wrapper) loads or reads it before any sandbox, or " \
               "it names what of the home the sandbox shows"
    return f"MCP server {_name(hit)!r} starts {command_line(hit)[:100]!r}; {why}"


def what(s: Setting, hit: Hit) -> str:
    return f"MCP server {_name(hit)!r}"


@rule(id="AGT003", slug="mcp-local-commands", title="MCP servers start local commands",
      severity=Severity.MEDIUM,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    from ztsa.agentfiles import out_of_reach
    from ztsa.surfacecheck import older

    f = Findings()
    older(ctx, f, "AGT003", word, what)
    # a submodule not checked out, or a symlink out: what it will hold is unknown
    out_of_reach(ctx, f, (".cursor", ".vscode", ".gemini", ".codex", ".roo", ".kiro",
                          ".amazonq"))
    return f.outcome("no project MCP server starts a local command",
                     f"{len(f.found)} MCP server(s) start local commands that fetch or run "
                     "fetched code", advised="MCP servers start local commands, judged by "
                     "what they run: nothing downloaded and run")
