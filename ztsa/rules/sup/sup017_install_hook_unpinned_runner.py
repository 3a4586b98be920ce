"""Install hooks run a package fetched at no fixed version.

## What it checks
The `preinstall`, `install`, `postinstall` and `prepare` scripts of every
`package.json` in the workspace (outside `node_modules`), and the scripts they run by
name (`npm run X` and its cousins, as SUP004 follows them), for a package runner (`npx`,
`pnpx`, `bunx`, `bun x`, `pnpm dlx`, `yarn dlx`, `npm exec`, `npm x`) fetching a package
at no fixed version: none (`npx only-allow pnpm`), a dist-tag (`@latest`, `@next`) or a
range (`@^1`, `@1`, `@1.x`), unless told not to install (`--no-install`, `--no`,
`--offline`). A local file (`npx ./tool.js`) is not fetched; with `--package=SPEC`,
SPEC is what is fetched, and judged the same way; or for a package manager installing
a named package at no fixed version (`npm install -g pnpm`, `npm i --no-save pnpm`,
`pnpm add x@latest`; a plain `npm install` installs what the lockfile pins). When a hook
runs a file of the repository (`node scripts/bootstrap.mjs`), the commands that file and
what it runs in turn start are judged the same way (`ztsa.follow`, 3 files deep): a
`spawnSync("npm", ["install", "--no-save", "pnpm"])` there is the same risk one file
deeper; a file that cannot be judged makes the rule unknown. What is found only in test data
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


# a package manager asked to install a named package (not the lockfile's): `npm install
# -g pnpm`, `npm i --no-save pnpm`, `pnpm add x`, `yarn global add x`
NAMED_INSTALL = LazyRe(r"(?:^|[\s;&|(`$])(?P<pm>npm|pnpm|yarn|bun)\s+(?:global\s+)?"
                       r"(?:install|i|add)\b(?P<args>[^;&|\n]*)")
INSTALL_VALUED = {"--prefix", "--registry", "--cache", "-C", "--dir", "--cwd", "--filter",
                  "--userconfig", "--tag"}


def unpinned_install(cmd: str) -> str | None:
    """The first `npm install NAME` (and its cousins) that installs a named package at no
    fixed version: a package fetched outside the lockfile."""
    for m in NAMED_INSTALL.finditer(cmd):
        words = m.group("args").split()
        i = 0
        while i < len(words):
            w = words[i].strip("\"'")
            if w in INSTALL_VALUED:
                i += 2
                continue
            i += 1
            if w.startswith("-") or not w or w.startswith((".", "/", "~", "$", "file:",
                                                           "link:", "workspace:")):
                continue
            version = w[1:].partition("@")[2] if w.startswith("@") else w.partition("@")[2]
            if not version or FLOATING.search(version):
                return f"{m.group('pm')} install {w}"
    return None


@rule(id="SUP017", slug="install-hook-unpinned-runner", severity=Severity.HIGH,
      title="Install hooks run a package fetched at no fixed version",
      nature=Nature.SUPPLY_ATTACK, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    import posixpath

    from ztsa.follow import follow
    from ztsa.manifests.scripts import install_hooks

    f = Findings()
    said: set[tuple[str, int]] = set()
    for rel, hook, cmd, line in install_hooks(ctx, f):
        if run := unpinned_runner(cmd) or unpinned_install(cmd):
            f.fail(f"{hook} runs {run}, a package fetched at no fixed version: "
                   f"{cmd[:100]!r}", path=rel, line=line)
            continue
        if rel.endswith(".gyp"):
            continue
        # Roo-Code: `"preinstall": "node scripts/bootstrap.mjs"`, which installs pnpm at
        # no fixed version when it is absent: the same, one file deeper
        done = follow(ctx, cmd, posixpath.dirname(rel))
        for h in done.spawned:
            if (h.path, h.line) in said:
                break  # `preinstall` and `install` both run it: said once
            if run := unpinned_runner(h.what) or unpinned_install(h.what):
                said.add((h.path, h.line))
                f.fail(f"{hook} runs {' -> '.join(h.chain)}, which runs {run}, a package "
                       f"fetched at no fixed version (line {h.line})", path=h.path,
                       line=h.line)
                break
        for exc in done.errors:
            f.error(exc)
    return f.outcome("no install hook runs a package fetched at no fixed version",
                     f"{len(f.found)} install hook(s) run an unpinned package",
                     scope=lambda rel: in_play(ctx, rel))
