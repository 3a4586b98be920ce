"""Install hooks run a package fetched at no fixed version.

## What it checks
The `preinstall`, `install`, `postinstall` and `prepare` scripts of every
`package.json` in the workspace (outside `node_modules`), and the scripts they run by
name (`npm run X` and its cousins, as SUP004 follows them), for a package runner (`npx`,
`pnpx`, `bunx`, `bun x`, `pnpm dlx`, `yarn dlx`, `npm exec`, `npm x`) fetching a package
at no fixed version: none (`npx only-allow pnpm`), a dist-tag (`@latest`, `@next`) or a
range (`@^1`, `@1`, `@1.x`), unless told not to install (`--no-install`, `--no`,
`--offline`). A local file (`npx ./tool.js`) is not fetched; with `--package=SPEC`,
SPEC is what is fetched, and judged the same way. What is found only in test data
or in a project nothing of the root installs, builds or names
(ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
A `preinstall` hook runs before anything is installed: `npx only-allow pnpm` fetches
and runs whatever the registry serves as `only-allow` that day, with no lockfile and no
integrity hash. It is unreviewed remote code on every install, the risk of SUP003 and
SUP005 in one line.

## How to fix
Pin the package (`npx only-allow@1.2.1 pnpm`), or make it a devDependency and run it
with `--no-install` so that the lockfile decides what runs.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

RUNNER = LazyRe(
    r"(?:^|[\s;&|(`$])(?P<runner>npx|pnpx|bunx|bun\s+x|pnpm\s+dlx|yarn\s+dlx|npm\s+exec|"
    r"npm\s+x)(?P<opts>(?:\s+-[^\s]*)*)\s+(?P<pkg>[^\s;&|'\"`)]+)")
# a version that is no fixed version: a dist-tag or a range
FLOATING = LazyRe(r"^(latest|next|canary|beta|alpha|rc|nightly|insiders|\*|x)$|[\^~><*|]|"
                  r"^\d+(\.\d+)?$|\.x\b")
LOCAL_ONLY = ("--no-install", "--no", "-n", "--offline", "--prefer-offline")


def unpinned_runner(cmd: str) -> str | None:
    """The first `npx PKG` (and its cousins) that fetches PKG at no fixed version."""
    for m in RUNNER.finditer(cmd):
        opts = m.group("opts").split()
        pkg = m.group("pkg")
        if pkg.startswith(("./", "../", "/")) or any(o in LOCAL_ONLY for o in opts):
            continue  # a local file, or nothing fetched
        # `--package=SPEC` names what is fetched (PKG is then a command it provides)
        named = [o.split("=", 1)[1] for o in opts if o.startswith("--package=")]
        for spec in named or [pkg]:
            version = spec[1:].partition("@")[2] if spec.startswith("@") else \
                spec.partition("@")[2]
            if not version or FLOATING.search(version):
                runner = " ".join(m.group("runner").split())
                return f"{runner} --package={spec}" if named else f"{runner} {pkg}"
    return None


@rule(id="SUP017", slug="install-hook-unpinned-runner", severity=Severity.HIGH,
      title="Install hooks run a package fetched at no fixed version",
      nature=Nature.SUPPLY_ATTACK, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    from ztsa.manifests.scripts import install_hooks

    f = Findings()
    for rel, hook, cmd, line in install_hooks(ctx, f):
        if run := unpinned_runner(cmd):
            f.fail(f"{hook} runs {run}, a package fetched at no fixed version: "
                   f"{cmd[:100]!r}", path=rel, line=line)
    return f.outcome("no install hook runs a package fetched at no fixed version",
                     f"{len(f.found)} install hook(s) run an unpinned package",
                     scope=lambda rel: in_play(ctx, rel))
