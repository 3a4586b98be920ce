"""Agent settings escalate.

## What it checks
The surface catalogue's settings of this rule (`docs/surfaces.md`, rule AGT001), each
value judged by its safe predicate, in the project's Claude Code settings,
`.claude/settings.json` and `.claude/settings.local.json` at any depth (Claude Code reads
those of the directory it is started in: `cd pkg && claude`): `permissions.defaultMode` set
to `bypassPermissions`; `sandbox.enabled` false; `sandbox.allowUnsandboxedCommands`
true; `sandbox.excludedCommands` holding a shell, an interpreter, docker or another
runner (by base name: `/bin/bash` too); a daemon socket in
`sandbox.network.allowUnixSockets`; `enableAllProjectMcpServers` true; and the allow
rules `Bash` or `Bash(*)` in `permissions.allow`, and `Bash(...)` rules whose command
runs whatever the repository or its arguments say: a shell or an interpreter, `find`
(`-exec`), `xargs`, `env`, build and task runners (`make`, `just`, `cargo
run`/`test`/`build`, `npm run`, `npx`, `pnpm`, `yarn`, `uv run`, `pytest`, `tox`, ...)
and a script path inside the repository, and a wildcard over a whole package or
version-control tool (`Bash(npm:*)`, `Bash(uv *)`, `Bash(git:*)`: `npm run`, `git -c
alias.x=!sh`). A rule without a wildcard pre-approves one fixed command line
(`Bash(python -m pytest tests/)`): it is judged by what it runs, as a hook is
(`ztsa.follow.judge`: a download, a fetched string run, a script that does either fails;
a lint or a test run is advice); so is a wildcard over only the arguments of a linter,
formatter or test runner (`Bash(python -m pytest tests/*)`). Also:
`permissions.defaultMode` `acceptEdits` and unscoped `Edit`/`Write` allow rules (a
pre-approved edit of a Makefile, a hook or a test is a pre-approved command); `env`
values that redirect the agent's traffic or load code into what it runs (`*_BASE_URL`,
proxies, `NODE_OPTIONS`, `LD_PRELOAD`, `PYTHONPATH`, CA bundles, `GIT_SSH_COMMAND`,
`GIT_CONFIG_PARAMETERS`, `GIT_PAGER`, ...); `env` values that choose Claude Code's own
shell or what it runs by name or loads before any shell prefix (`SHELL`,
`CLAUDE_CODE_SHELL`, `PATH`, `BASH_ENV`, exported `BASH_FUNC_*` functions, `LD_*`,
`SHELLOPTS`, `PS4`, ...), where ztsa finds its policy (`HOME`, `XDG_*`, `ZTSA_*`) or
what of the home it shows (`CLAUDE_PROJECT_DIR`); `env` setting
`CLAUDE_CODE_SHELL_PREFIX` (the program every Bash command, hook and MCP server runs
through: one that replaces `ztsa hook claude`'s, or empty, which runs them unconfined;
but the wrapper that `ztsa hook claude --install --scope project` or `local` wrote for
that file on this machine) and `disableAllHooks` true (which removes every hook but the
managed ones, `ztsa hook claude`'s guard among them); and plugin marketplaces or plugins
from outside the repository that it adds for whoever opens it (`extraKnownMarketplaces`,
`enabledPlugins`; a marketplace that is a directory of the repository is its own
content, which AGT002 and AGT006 read). A file that does not parse makes the rule
unknown.

When `.claude` is a git submodule not checked out, or a symlink out of the workspace,
the rule is unknown: what it will hold cannot be judged.

## Why it matters
Settings committed to a repository apply to whoever opens it with an agent. A pull
request that flips them turns off the agent's own approval prompts and sandbox before
any of its code runs.

## How to fix
Remove these settings from the repository's `.claude/` files (keep personal choices
in `~/.claude/settings.json`), and review changes to `.claude/` like code.
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
    from ztsa.surfacecheck import Command, dotted, shown

    if s.id == "claude-permissions-allow":
        if isinstance(why, Command):
            return f"permissions.allow holds {hit.value!r}, which pre-approves one fixed " \
                   "command line"
        return f"permissions.allow holds {hit.value!r}: {why}"
    if s.id == "claude-sandbox-excluded-commands":
        return f"sandbox.excludedCommands holds {hit.value!r}"
    if s.id == "claude-sandbox-unix-sockets":
        return f"sandbox.network.allowUnixSockets holds the daemon socket {hit.value}"
    if s.id == "claude-env-base-url" and hit.key == "CLAUDE_CODE_SHELL_PREFIX":
        return f"env sets CLAUDE_CODE_SHELL_PREFIX={str(hit.value)[:60]!r}: every Bash " \
               "command, shell-form hook and MCP server runs through it, in place of the " \
               "one the user's settings name (`ztsa hook claude`'s)"
    if s.id == "claude-disable-all-hooks":
        return "disableAllHooks is true: every hook of the user's and the project's " \
               "settings is off, a guard such as `ztsa hook claude`'s among them"
    if s.id == "claude-env-base-url":
        return f"env sets {hit.key}={str(hit.value)[:60]!r}: {why}"
    if s.id == "claude-extra-marketplaces":
        return f"extraKnownMarketplaces adds {hit.key!r} from outside the repository: the " \
               "plugins it serves run their hooks, commands and MCP servers in every session"
    if s.id == "claude-enabled-plugins":
        return f"enabledPlugins turns on {hit.key!r} for whoever opens the repository, from " \
               "outside it"
    if hit.value == "acceptEdits":
        return "permissions.defaultMode is acceptEdits: every edit (a Makefile, a hook, a " \
               "test) is made without a prompt"
    return f"{dotted(hit)} is {shown(hit.value)}"


@rule(id="AGT001", slug="agent-settings-escalate", title="Agent settings escalate",
      severity=Severity.CRITICAL,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    from ztsa.agentfiles import out_of_reach
    from ztsa.surfacecheck import older

    f = Findings()
    older(ctx, f, "AGT001", word)
    # a submodule not checked out, or a symlink out: what it will hold is unknown
    out_of_reach(ctx, f, (".claude",))
    return f.outcome("project agent settings do not escalate",
                     f"{len(f.found)} escalating agent setting(s)")
