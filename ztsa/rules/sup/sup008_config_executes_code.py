"""Package-manager config executes repo code.

## What it checks
The surface catalogue's settings of this rule (`docs/surfaces.md`, rule SUP008), at any
depth, each value judged by its safe predicate: project configuration that makes the
package manager run a program of the repository's choosing: `.npmrc` `script-shell`,
`shell` and `git`, and `node-options` unless it holds only flags that load nothing
(`--no-warnings`, `--max-old-space-size=N`, `--enable-source-maps`, ...);
`.yarnrc.yml` `yarnPath` (unless its file is a released Yarn, byte for byte, by
SHA-256) and `plugins` (in YAML, or in the old syntax Yarn reads a file headed `# yarn
lockfile v1` with), and a classic `.yarnrc`'s `yarn-path`; a `.pnpmfile.cjs` or
`.pnpmfile.mjs`; `.cargo/config.toml` `rustc-wrapper`, `rustc-workspace-wrapper`,
`rustc`, a `[target.*]` `runner` or `linker` that is a program of the checkout (a
relative path) or a shell, an interpreter or a runner (a bare toolchain name,
`aarch64-linux-gnu-gcc`, is the system's), and `[env]` variables that choose a program
or load code (`LD_PRELOAD`, `RUSTC_WRAPPER`, `RUSTFLAGS`, `CC`, `PATH`, `*_RUNNER`, ...;
not plain values such as a feature flag). A file that does not parse makes the rule
unknown.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
These run with every install or build, before and around any dependency code:
`yarnPath` replaces Yarn itself with a file from the repository, a pnpmfile hooks
every resolution, a rustc wrapper sees and can rewrite every compilation.

## How to fix
Remove these keys from the repository's configuration, or review the programs they
name like any other code (`yarn set version` writes a released Yarn, which passes).
"""

from __future__ import annotations

import posixpath

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.surfacecheck import Hit
    from ztsa.surfaces import Setting


def word(s: Setting, hit: Hit, why: str) -> str:
    from ztsa.surfacecheck import shown

    value = shown(hit.value)
    if s.id == "pnpmfile":
        return f"{posixpath.basename(hit.rel)} hooks every pnpm install"
    if s.id == "yarn-plugins":
        return "plugins load code into Yarn"
    if s.id in ("yarn-path", "yarn-classic-path"):
        return f"{hit.key} runs {value}"
    if s.id == "cargo-env-code":
        return f"[env] sets {hit.key}"
    if s.format == "toml":  # [build] rustc-wrapper, [target.TRIPLE] runner
        table, _, key = hit.path.rpartition("/")
        return f"[{table.replace('/', '.')}] {key} = {value}"
    return f"{hit.key} = {value}"


@rule(id="SUP008", slug="config-executes-code", severity=Severity.HIGH,
      title="Package-manager config executes repo code",
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    from ztsa.manifests.scope import in_play
    from ztsa.surfacecheck import older

    f = Findings()
    older(ctx, f, "SUP008", word)
    return f.outcome("no package-manager config runs repository code",
                     f"{len(f.found)} config setting(s) run repository code",
                     scope=lambda rel: in_play(ctx, rel))
