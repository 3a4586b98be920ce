"""A catalogued build or install surface runs code from an unexpected place.

## What it checks
Every setting of the surface catalogue (`ztsa/surfaces.py`, `docs/surfaces.md`) that a
package manager or toolchain bootstrapper obeys on install or build, inside `ztsa exec`'s
confinement: a Gradle or Maven wrapper distribution from another host without a
checksum, a corepack `packageManager` that is a URL, `[tool.setuptools.cmdclass]` and
Poetry's build script in `pyproject.toml`, a `pnpmfile` named in `pnpm-workspace.yaml`,
`-C linker=` or a codegen backend in Cargo `rustflags`, a rustup toolchain `path`, and a
Go `toolchain` that is not a release. Each value is judged by the catalogue's safe
predicate for it. A file that does not parse, or a symlink out of the workspace, makes the
rule unknown.

## Why it matters
These run a download or a repository file as part of every install or build, where a
reviewer reads the dependency list, not the wrapper's properties or the linker flags.

## How to fix
Use the tool's released distribution with its checksum (`distributionSha256Sum`,
`name@version+sha512`), and move custom build code where it is reviewed, or remove it.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule


@rule(id="AGT012", slug="surface-build-code", title="A catalogued build or install "
      "surface runs code from an unexpected place", severity=Severity.HIGH,
      nature=Nature.SUPPLY_ATTACK, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    from ztsa.surfacecheck import check as judge

    return judge(ctx, "AGT012", "no catalogued build surface runs unexpected code",
                 "{n} catalogued build or install setting(s) run unexpected code")
