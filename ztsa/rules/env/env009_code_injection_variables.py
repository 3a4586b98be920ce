"""Code-injection variables set.

## What it checks
Environment variables that make a loader, shell, interpreter or tool run extra code:
`LD_*`, `BASH_ENV`, `ENV`, `PS4`, `SHELLOPTS`, `PROMPT_COMMAND`, exported bash
functions (`BASH_FUNC_*`), `PYTHONSTARTUP`, `PYTHONPATH`, `PYTHONHOME`,
`PYTHONINSPECT`, `PERL5OPT`, `PERL5LIB`, `RUBYOPT`, `JAVA_TOOL_OPTIONS`,
`_JAVA_OPTIONS`, `JDK_JAVA_OPTIONS`, `GIT_SSH_COMMAND`, `GIT_ASKPASS`,
`GIT_CONFIG_*`, `GIT_EXEC_PATH`, `npm_config_script_shell`,
`npm_config_node_options`, `RUSTC_WRAPPER`, `CARGO_TARGET_*_RUNNER`/`_LINKER`, and
`NODE_OPTIONS` when it holds `--require`, `-r`, `--import` or `--loader`. Also a
non-empty `/etc/ld.so.preload`. Only names are reported, never values.

## Why it matters
Whoever set these variables runs code inside every process the agent starts, before
any of its own code, and outside anything the audit can see.

## How to fix
Unset the variables named in the report (`env -u NAME ...`), or start the agent from
a clean environment (`env -i PATH=/usr/bin:/bin HOME=$HOME ...`). Empty
`/etc/ld.so.preload`.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.lazy import LazyRe
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule

EXACT = frozenset({
    "BASH_ENV", "ENV", "PS4", "SHELLOPTS", "PROMPT_COMMAND", "PYTHONSTARTUP", "PYTHONPATH",
    "PYTHONHOME", "PYTHONINSPECT", "PERL5OPT", "PERL5LIB", "RUBYOPT", "JAVA_TOOL_OPTIONS",
    "_JAVA_OPTIONS", "JDK_JAVA_OPTIONS", "GIT_SSH_COMMAND", "GIT_ASKPASS", "GIT_EXEC_PATH",
    "npm_config_script_shell", "npm_config_node_options", "RUSTC_WRAPPER",
})
PATTERN = LazyRe(
    r"^(LD_\w*|BASH_FUNC_.*|GIT_CONFIG_\w*|CARGO_TARGET_\w+_(RUNNER|LINKER))$")
NODE_FLAGS = ("--require", "-r", "--import", "--loader", "--experimental-loader")


def node_options_injects(value: str) -> bool:
    import shlex

    try:
        words = shlex.split(value)
    except ValueError:
        words = value.split()
    return any(w in NODE_FLAGS or w.startswith(tuple(f + "=" for f in NODE_FLAGS))
               or (w.startswith("-r") and len(w) > 2 and not w.startswith("--"))
               for w in words)


@rule(id="ENV009", slug="code-injection-variables", title="Code-injection variables set",
      severity=Severity.HIGH,
      nature=Nature.ENV_ESCAPE, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    names = [name for name in sorted(ctx.host.environ) if name in EXACT or PATTERN.match(name)]
    node = ctx.host.environ.get("NODE_OPTIONS")
    found = [Evidence(f"environment variable {name} is set") for name in names]
    if node is not None and node_options_injects(node):
        names.append("NODE_OPTIONS")
        found.append(Evidence("environment variable NODE_OPTIONS preloads a module "
                              "(--require/--import/--loader)"))
    preload = ctx.host.read_text("/etc/ld.so.preload")
    if preload and any(ln.strip() and not ln.lstrip().startswith("#")
                       for ln in preload.splitlines()):
        names.append("/etc/ld.so.preload")
        found.append(Evidence("/etc/ld.so.preload is not empty", path="/etc/ld.so.preload"))
    if found:
        return Outcome.failed("code-injection settings: " + ", ".join(names), found)
    return Outcome.passed("no code-injection variable set")
