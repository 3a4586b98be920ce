"""Agent settings escalate.

## What it checks
The project's Claude Code settings, `.claude/settings.json` and
`.claude/settings.local.json`: `permissions.defaultMode` set to `bypassPermissions`;
`sandbox.enabled` false; `sandbox.allowUnsandboxedCommands` true;
`sandbox.excludedCommands` holding a shell, an interpreter or docker; a daemon socket in
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
...); `env` values that choose Claude Code's own shell or what it runs by name or
loads before any shell prefix (`SHELL`, `CLAUDE_CODE_SHELL`, `PATH`, `BASH_ENV`,
exported `BASH_FUNC_*` functions, `LD_*`), where ztsa finds its policy (`HOME`,
`XDG_CONFIG_HOME`, `ZTSA_*`) or what of the home it shows (`CLAUDE_PROJECT_DIR`); `env`
setting `CLAUDE_CODE_SHELL_PREFIX` (the program
every Bash command, hook and MCP server runs through: one that replaces `ztsa hook
claude`'s, or empty, which runs them unconfined; but the wrapper that `ztsa hook claude
--install --scope project` or `local` wrote for that file on this machine) and
`disableAllHooks` true (which removes every hook but the managed ones, `ztsa hook
claude`'s guard among them); and plugin marketplaces or plugins from outside the
repository that it adds for whoever opens it (`extraKnownMarketplaces`,
`enabledPlugins`; a marketplace that is a directory of the repository is its own
content, which AGT002 and AGT006 read). A file
that does not parse makes the rule unknown.

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

import os

from ztsa.agentfiles import CLAUDE_SETTINGS, OUTSIDE_ENV, get, out_of_reach, settings
from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.follow import judge
from ztsa.lazy import LazyRe
from ztsa.model import Nature, Outcome, Severity
from ztsa.parsing import line_of
from ztsa.registry import rule

RISKY_COMMANDS = LazyRe(
    r"^(bash|sh|zsh|dash|fish|ksh|python\d*(\.\d+)?|node|deno|bun|ruby|perl|php|"
    r"docker|podman|kubectl|sudo|env|xargs|eval)\b")
DAEMON_SOCKET = LazyRe(r"(docker|podman|containerd|crio|buildkitd)\.sock$")
# a pre-approved command that runs code the repository (a Makefile, package.json's
# scripts, build.rs, conftest.py, a script the pull request rewrites) or its own
# arguments choose: approving it approves anything
RUNS_ANYTHING = LazyRe(
    r"^(?:[A-Za-z_][A-Za-z0-9_]*=\S*\s+)*("
    r"(bash|sh|zsh|dash|fish|ksh|python\d*(\.\d+)?|node|deno|bun|bunx|ruby|perl|php|"
    r"docker|podman|kubectl|sudo|env|xargs|eval|exec|find|make|gmake|just|task|rake|"
    r"ninja|bazel|gradle|mvn|npx|pnpx|pnpm|yarn|uvx|tox|nox|pytest|py\.test|"
    r"\./\S+|\.\./\S+|scripts/\S+)(\s|$)"
    r"|cargo\s+(run|test|build|check|bench|clippy|insta|nextest|doc|install|xtask)\b"
    r"|npm\s+(run|run-script|test|start|exec|x|install|i|ci|rebuild)\b"
    r"|uv\s+(run|tool\s+run|sync|pip\s+install)\b"
    r"|(poetry|pdm|hatch|rye)\s+run\b|go\s+(run|test|generate)\b"
    r"|dotnet\s+(run|test)\b|pip\d*\s+install\b"
    r"|python\d*(\.\d+)?\s+-m\s+\S+)")


# linters, formatters and test runners, by name or as `python -m NAME`: with any
# arguments they read the repository and run its tests, as every test run does; none
# takes a command to run (`Bash(python -m pytest tests/*)`)
CHECKERS = LazyRe(r"^(?:python\d*(?:\.\d+)?\s+-m\s+)?(?:pytest|ruff|mypy|black|isort|flake8|"
                  r"pylint|pyright|ty)(?:\s+(?:check|format))?(?:\s+[\w./-]+)*/?\s*$")


# a wildcard over one of these runs anything: their subcommands run the repository's
# scripts (npm run, uv run, cargo run, go run, pip install of a path, git aliases, gh)
WHOLE_TOOLS = frozenset(("npm", "uv", "cargo", "go", "pip", "pip3", "git", "gh", "poetry",
                         "pdm", "hatch", "rye", "dotnet", "deno", "mise", "asdf"))
# environment names that send the agent's traffic elsewhere or load code into what it runs
REDIRECTS = LazyRe(
    r"^([A-Z0-9_]*_BASE_URL|[A-Za-z_]*_PROXY|NODE_OPTIONS|NODE_EXTRA_CA_CERTS|LD_PRELOAD|"
    r"LD_LIBRARY_PATH|LD_AUDIT|PYTHONPATH|PYTHONSTARTUP|PYTHONHOME|BASH_ENV|ENV|"
    r"PERL5OPT|RUBYOPT|JAVA_TOOL_OPTIONS|SSL_CERT_FILE|SSL_CERT_DIR|REQUESTS_CA_BUNDLE|"
    r"CURL_CA_BUNDLE|GIT_SSH_COMMAND|GIT_SSH|GIT_EXEC_PATH|GIT_CONFIG_GLOBAL|"
    r"ANTHROPIC_BEDROCK_BASE_URL|CLAUDE_CODE_USE_BEDROCK|CLAUDE_CODE_USE_VERTEX)$")
UNSCOPED_EDITS = frozenset(("Edit", "Edit(*)", "Edit(**)", "Edit(/**)", "Edit(./**)",
                            "Write", "Write(*)", "Write(**)", "Write(/**)", "Write(./**)",
                            "MultiEdit", "MultiEdit(*)", "MultiEdit(**)", "NotebookEdit"))


def _own_wrapper(ctx: Context, rel: str, value: str) -> bool:
    """The prefix names the wrapper that `ztsa hook claude --install` writes for this
    settings file on this machine (in the person's ztsa configuration directory, which
    no repository and no confined run can write): the install's own entry."""
    import hashlib

    env = ctx.host.environ
    home = env.get("HOME")
    base = env.get("XDG_CONFIG_HOME") or (os.path.join(home, ".config") if home else None)
    if not base:
        return False
    scope = "local" if rel.endswith(".local.json") else "project"
    # as ztsa.hook.wrapper_path names it: the user policy's directory, a hash of the path
    tag = hashlib.sha256(os.fsencode(os.path.join(ctx.workspace, rel))).hexdigest()[:12]
    return value == os.path.join(base, "ztsa", f"claude-shell-{scope}-{tag}")


def audit(ctx: Context, f: Findings, rel: str) -> None:
    loaded = settings(f, ctx, rel)
    if loaded is None:
        return
    doc, text = loaded

    def hit(detail: str, needle: str) -> None:
        f.fail(detail, path=rel, line=line_of(text, needle))

    if get(doc, "permissions", "defaultMode") == "bypassPermissions":
        hit("permissions.defaultMode is bypassPermissions", "bypassPermissions")
    if get(doc, "sandbox", "enabled") is False:
        hit("sandbox.enabled is false", '"enabled"')
    if get(doc, "sandbox", "allowUnsandboxedCommands") is True:
        hit("sandbox.allowUnsandboxedCommands is true", "allowUnsandboxedCommands")
    for cmd in get(doc, "sandbox", "excludedCommands") or []:
        if isinstance(cmd, str) and RISKY_COMMANDS.match(cmd.strip()):
            hit(f"sandbox.excludedCommands holds {cmd!r}", cmd)
    for sock in get(doc, "sandbox", "network", "allowUnixSockets") or []:
        if isinstance(sock, str) and DAEMON_SOCKET.search(sock):
            hit(f"sandbox.network.allowUnixSockets holds the daemon socket {sock}", sock)
    if get(doc, "enableAllProjectMcpServers") is True:
        hit("enableAllProjectMcpServers is true", "enableAllProjectMcpServers")
    if get(doc, "permissions", "defaultMode") == "acceptEdits":
        hit("permissions.defaultMode is acceptEdits: every edit (a Makefile, a hook, a test) "
            "is made without a prompt", "acceptEdits")
    if get(doc, "disableAllHooks") is True:
        hit("disableAllHooks is true: every hook of the user's and the project's settings "
            "is off, a guard such as `ztsa hook claude`'s among them", "disableAllHooks")
    env = doc.get("env")
    for name, value in env.items() if isinstance(env, dict) else ():
        if name == "CLAUDE_CODE_SHELL_PREFIX" and isinstance(value, str) and \
                _own_wrapper(ctx, rel, value):
            continue  # this machine's `ztsa hook claude --install --scope project|local`
        if name == "CLAUDE_CODE_SHELL_PREFIX":
            hit(f"env sets CLAUDE_CODE_SHELL_PREFIX={str(value)[:60]!r}: every Bash command, "
                "shell-form hook and MCP server runs through it, in place of the one the "
                "user's settings name (`ztsa hook claude`'s)", f'"{name}"')
        elif isinstance(name, str) and REDIRECTS.match(name):
            hit(f"env sets {name}={str(value)[:60]!r}: it redirects the agent's traffic or "
                "loads code into what it runs", f'"{name}"')
        elif isinstance(name, str) and OUTSIDE_ENV.match(name):
            hit(f"env sets {name}={str(value)[:60]!r}: Claude Code's own shell, which "
                "starts each Bash call before any shell prefix (`ztsa hook claude`'s), "
                "runs or loads what it names, unconfined, or ztsa reads another policy",
                f'"{name}"')
    markets = doc.get("extraKnownMarketplaces")
    local = set()  # marketplaces that are a directory of the repository: reviewed here
    for name, market in markets.items() if isinstance(markets, dict) else ():
        source = get(market, "source")
        path = get(source, "path")
        if get(source, "source") == "directory" and isinstance(path, str) and \
                not path.startswith(("/", "~")) and ".." not in path.split("/"):
            local.add(name)
        else:
            hit(f"extraKnownMarketplaces adds {name!r} from outside the repository: the "
                "plugins it serves run their hooks, commands and MCP servers in every "
                "session", f'"{name}"')
    plugins = doc.get("enabledPlugins")
    for plugin, on in plugins.items() if isinstance(plugins, dict) else ():
        if on and isinstance(plugin, str) and plugin.rpartition("@")[2] not in local:
            hit(f"enabledPlugins turns on {plugin!r} for whoever opens the repository, from "
                "outside it", f'"{plugin}"')
    for entry in get(doc, "permissions", "allow") or []:
        if not isinstance(entry, str):
            continue
        if entry.replace(" ", "") in ("Bash", "Bash(*)", "Bash(:*)"):
            hit(f"permissions.allow holds {entry!r}: every shell command is pre-approved",
                f'"{entry}"')
            continue
        if entry.replace(" ", "") in UNSCOPED_EDITS:
            hit(f"permissions.allow holds {entry!r}: any file may be changed without a "
                "prompt, a hook or a Makefile included", f'"{entry}"')
            continue
        command = entry.strip()
        if command.startswith("Bash(") and command.endswith(")"):
            command = command[5:-1].strip()
            wild = command.endswith("*")
            command = command.removesuffix(":*").removesuffix("*").strip()
            if wild and command in WHOLE_TOOLS:
                hit(f"permissions.allow holds {entry!r}: every {command} subcommand is "
                    "pre-approved, and some run whatever the repository says", f'"{entry}"')
                continue
            m = RUNS_ANYTHING.match(command)
            if m and not wild:
                # one fixed command line: the agent's ordinary work (a lint, a test run),
                # judged by what it runs, as a hook is
                fixed = Findings()
                judge(ctx, fixed, f"permissions.allow holds {entry!r}, which pre-approves "
                      "one fixed command line", command, "", rel, line_of(text, f'"{entry}"'))
                f.found += fixed.found
                f.advised += fixed.advised
                f.errors += fixed.errors
                continue
            if m and CHECKERS.match(command):
                f.advise(f"permissions.allow holds {entry!r}: a checker or test runner over "
                         "arguments of the agent's choosing", rel, line_of(text, f'"{entry}"'))
                continue
            if m:
                hit(f"permissions.allow holds {entry!r}: {m.group(1).split()[0]} runs "
                    "whatever the repository or its arguments say, without a prompt",
                    f'"{entry}"')


@rule(id="AGT001", slug="agent-settings-escalate", title="Agent settings escalate",
      severity=Severity.CRITICAL,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    for rel in CLAUDE_SETTINGS:
        audit(ctx, f, rel)
    # a submodule not checked out, or a symlink out: what it will hold is unknown
    out_of_reach(ctx, f, (".claude",))
    return f.outcome("project agent settings do not escalate",
                     f"{len(f.found)} escalating agent setting(s)")
