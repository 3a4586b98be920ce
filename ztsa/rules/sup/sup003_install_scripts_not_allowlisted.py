"""Dependency lifecycle scripts not allowlisted.

## What it checks
Dependencies that run code at install time: `hasInstallScript` in
`package-lock.json` (lockfile v2/v3), `requiresBuild` in `pnpm-lock.yaml` (v6 to v8),
and, where the lockfile does not record it (npm lockfile v1, Yarn, pnpm 9 without an
allowlist, unless the nearest `packageManager` (or `devEngines.packageManager`) names
pnpm 10 or later, which builds only allowlisted packages; a pnpm 9 lockfile looks the
same for pnpm 9 and 10), `preinstall`/`install`/`postinstall` scripts or a
`binding.gyp` (without `"gypfile": false`) in the installed `node_modules`. Bun runs
only `trustedDependencies` and its own built-in default list: decided by the manager.
Each must be allowlisted by the ecosystem's own setting (`lavamoat.allowScripts`, pnpm
`onlyBuiltDependencies`, Yarn `dependenciesMeta.*.built`, Bun `trustedDependencies`)
or the ztsa policy; the report
says which source allowed what. `ignore-scripts=true` in `.npmrc` and
`enableScripts: false` in `.yarnrc.yml` turn scripts off. When neither the lockfile nor
an installed tree can tell, the rule is unknown, and says how to resolve it; with the
opt-in `--lookup` it asks the npm registry's metadata of each locked version instead
(the registry `.npmrc` or `.yarnrc.yml` names, else registry.npmjs.org; without the
flag the gate sends nothing), and an unreachable registry is unknown.
A package-lock or pnpm-lock entry whose `os`, `cpu` or `libc` excludes this machine
(`fsevents`, `os: [darwin]`) is one the manager never installs here, and runs no script;
an empty lockfile beside a package.json that declares nothing installs nothing. An
installed tree is read in npm's layout and in pnpm's (`node_modules/.pnpm`); pnpm 10's
`dangerouslyAllowAllBuilds: true` builds every dependency again.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
Install scripts are the most common way malicious npm packages run code: they execute
on `npm install`, with your permissions, before any of your code or tests.

## How to fix
Review each package's script, then allowlist the ones you need (the message gives the
exact setting), or install with `--ignore-scripts` and build only what you trust.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.manifests.scope import in_play
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule


@rule(id="SUP003", slug="install-scripts-not-allowlisted", severity=Severity.HIGH,
      title="Dependency lifecycle scripts not allowlisted",
      nature=Nature.HYGIENE, actions="W/W/W")
def check(ctx: Context) -> Outcome:
    from ztsa.manifests.scripts import how_to_allow, scripted  # lazily: start-up cost

    f = Findings()
    allowed: list[Evidence] = []
    for s in scripted(ctx, f):
        where = f"{s.source}:{s.line}" if s.line else s.source
        if s.allowed_by:
            allowed.append(Evidence(f"{s.where} allowed by {s.allowed_by}", path=s.source,
                                    line=s.line))
        else:
            f.fail(f"{s.where} ({where}) has an install script and is not allowlisted; "
                   f"allow it with {how_to_allow(s)}", path=s.source, line=s.line)
    out = f.outcome("no dependency runs an unallowlisted install script",
                    f"{len(f.found)} dependenc(ies) with unallowlisted install scripts",
                    scope=lambda rel: in_play(ctx, rel))
    if allowed:
        return Outcome(out.status, out.message, out.evidence + tuple(allowed), out.advisory)
    return out
