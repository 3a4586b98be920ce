"""Root project hooks run living-off-the-land tools.

## What it checks
The `preinstall`, `install`, `postinstall` and `prepare` scripts of every
`package.json` in the workspace (outside `node_modules`), and the scripts of the same
`package.json` they run by name (`npm run X`, `pnpm run X`, `yarn X`, `bun run X`, with
X's `preX` and `postX`, however deep), and the `install` npm implies for a package
with a `binding.gyp` (`node-gyp rebuild`, which runs the file's `<!(...)` command
expansions), for `bash -c`, `sh -c`,
`node -e`/`--eval`, `python -c`, `curl`, `wget` and `nc` (a package runner fetching an
unpinned package is SUP017's).
What is found only in a project under examples, fixtures, docs or templates that no
root workspace lists is reported as advisory (ztsa.manifests.scope).

## Why it matters
These hooks run on every `npm install` of the repository itself. Inline code and
download tools there are how a pull request turns "install the dependencies" into
"run my payload", with nothing to review but a one-liner.

## How to fix
Move the logic into a script file in the repository that reviewers can read, drop
network downloads from install hooks, and run them only from explicit commands.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe
from ztsa.manifests.scope import in_play
from ztsa.manifests.scripts import install_hooks
from ztsa.model import Outcome, Severity
from ztsa.registry import rule

TOOLS = LazyRe(
    r"(?:^|[\s;&|(`$])(?P<tool>(?:ba|z|da)?sh\s+-c|node\s+(?:-e|--eval|-p|--print)|"
    r"python[0-9.]*\s+-c|curl|wget|nc|ncat|netcat)(?=\s|$|['\"])")


@rule(id="SUP004", slug="root-hooks-lotl", severity=Severity.MEDIUM,
      title="Root project hooks run living-off-the-land tools", actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    for rel, hook, cmd, line in install_hooks(ctx, f):
        m = TOOLS.search(cmd)
        if m:
            tool = " ".join(m.group("tool").split())
            f.fail(f"{hook} runs {tool}: {cmd[:100]!r}", path=rel, line=line)
    return f.outcome("no root install hook runs an inline interpreter or a download tool",
                     f"{len(f.found)} install hook(s) run living-off-the-land tools",
                     scope=lambda rel: in_play(ctx, rel))
