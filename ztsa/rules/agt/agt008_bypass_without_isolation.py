"""Bypass mode without isolation.

## What it checks
The command line of every ancestor process (parent, grandparent, … up to pid 1, read
from `/proc/<pid>/cmdline`) for agent bypass flags: `--dangerously-skip-permissions`,
`--permission-mode bypassPermissions`, `--dangerously-bypass-approvals-and-sandbox`,
`--yolo` and `danger-full-access`. A bypass flag blocks unless ENV003 confirmed
isolation (a container, VM or sandbox).

## Why it matters
Bypass modes remove every approval prompt: the agent runs whatever it decides, or
whatever a poisoned file tells it to. That is only acceptable inside a disposable
sandbox.

## How to fix
Run bypass mode only inside a container, VM or sandbox that ztsa can confirm
(ENV003), or drop the flag.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.isolation import detect
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule

FLAGS = ("--dangerously-skip-permissions", "--dangerously-bypass-approvals-and-sandbox",
         "--yolo", "danger-full-access")


def bypass_flag(argv: list[str]) -> str | None:
    for i, arg in enumerate(argv):
        for flag in FLAGS:
            if arg == flag or arg.startswith(flag + "=") or (flag == "danger-full-access"
                                                             and flag in arg):
                return flag
        if arg == "--permission-mode" and i + 1 < len(argv) and \
                argv[i + 1] == "bypassPermissions":
            return "--permission-mode bypassPermissions"
        if arg == "--permission-mode=bypassPermissions":
            return "--permission-mode bypassPermissions"
    return None


@rule(id="AGT008", slug="bypass-without-isolation", title="Bypass mode without isolation",
      severity=Severity.CRITICAL,
      nature=Nature.ENV_UNGUARDED, actions="B/B/B")
def check(ctx: Context) -> Outcome:
    chain = ctx.host.ancestors()
    hits = [(pid, argv, flag) for pid, argv in chain if (flag := bypass_flag(argv))]
    if not hits:
        return Outcome.passed(f"no bypass flag among {len(chain)} ancestor process(es)")
    evidence = [Evidence(f"ancestor pid {pid} ({(argv or ['?'])[0].rsplit('/', 1)[-1]}) "
                         f"runs with {flag}", path=f"/proc/{pid}/cmdline")
                for pid, argv, flag in hits]
    iso = detect(ctx)
    if iso.isolated:
        return Outcome.passed("bypass mode inside confirmed isolation: " + ", ".join(iso.kinds),
                              evidence)
    if iso.errors:
        return Outcome.unknown("bypass mode, and isolation could not be confirmed", evidence)
    return Outcome.failed("bypass mode without isolation", evidence)
