"""Secret-like environment variables.

## What it checks
Environment variables whose names look like secrets (`*TOKEN*`, `*SECRET*`,
`*PASSWORD*`, `*API_KEY*`, `*PRIVATE_KEY*`, `*ACCESS_KEY*`, `*CREDENTIAL*`, such as
`AWS_SECRET_ACCESS_KEY`, `GITHUB_TOKEN`, `NPM_TOKEN`, `ANTHROPIC_API_KEY`) or whose
values are shaped like known tokens (`ghp_`, `github_pat_`, `glpat-`, `AKIA`/`ASIA`,
`xox[bpe]-`, `npm_`, `sk-ant-`, `sk-proj-`, `hf_`, `AIza`, `pypi-`). Empty variables
are ignored. Only names are reported; values are always redacted.

## Why it matters
Every process the agent starts inherits the environment: one `env | curl` in a build
script sends all of it away.

## How to fix
Start the agent from a minimal environment (`env -i`, or `ztsa exec`, which passes
only named variables), and give each secret only to the step that needs it.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule
from ztsa.secrets import NOT_SECRET_NAMES, SECRET_NAME, token_kind


@rule(id="FS006", slug="secret-environment", title="Secret-like environment variables",
      severity=Severity.HIGH,
      nature=Nature.ENV_SECRETS, actions="-/B/B")
def check(ctx: Context) -> Outcome:
    found: list[Evidence] = []
    for name, value in sorted(ctx.host.environ.items()):
        if not value or name in NOT_SECRET_NAMES:
            continue
        kind = token_kind(value)
        if kind:
            found.append(Evidence(f"{name} holds a value shaped like a {kind} (redacted)"))
        elif SECRET_NAME.search(name):
            found.append(Evidence(f"{name} has a secret-like name (value redacted)"))
    if found:
        names = ", ".join(e.detail.split()[0] for e in found)
        return Outcome.failed(f"{len(found)} secret-like variable(s): {names}", found)
    return Outcome.passed("no secret-like environment variable")
