"""Root project hooks run living-off-the-land tools.

## What it checks
The `preinstall`, `install`, `postinstall` and `prepare` scripts of every
`package.json` in the workspace (outside `node_modules`), and the scripts of the same
`package.json` they run by name (`npm run X`, `pnpm run X`, `yarn X`, `bun run X`, with
X's `preX` and `postX`, however deep), and the `install` npm implies for a package
with a `binding.gyp` (`node-gyp rebuild`, which runs the file's `<!(...)` command
expansions; not the include-path idiom of every Node-API and NAN addon, `node -p
"require('node-addon-api').include_dir"`, `node -e "require('nan')"`), for `bash -c`,
`sh -c`,
`node -e`/`--eval`, `python -c`, `curl`, `wget` and `nc` (a package runner fetching an
unpinned package is SUP017's).
When a hook runs a file of the repository (`node scripts/install.js`, `sh ./setup.sh`,
`python tools/x.py`), that file is read, and what it runs in turn, up to 3 files deep
(`ztsa.follow`): a download piped into an interpreter or saved and then run, a fetched
string run as code, a Node file that downloads and starts a process through
`child_process`, a write to a shell start-up file, a read of a credential path; each
named by file and line. A followed file that cannot be judged (unreadable, binary,
over 1 MiB, deeper than the bound) makes the rule unknown. A hook that runs a file which
formats, builds (`node-gyp rebuild`) or prints is judged by that, and passes.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
These hooks run on every `npm install` of the repository itself. Inline code and
download tools there are how a pull request turns "install the dependencies" into
"run my payload", with nothing to review but a one-liner.

## How to fix
Move the logic into a script file in the repository that reviewers can read, drop
network downloads from install hooks, and run them only from explicit commands.
"""

from __future__ import annotations

import posixpath

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.follow import describe, follow
from ztsa.lazy import LazyRe
from ztsa.manifests.scope import in_play
from ztsa.manifests.scripts import install_hooks
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

TOOLS = LazyRe(
    r"(?:^|[\s;&|(`$])(?P<tool>(?:ba|z|da)?sh\s+-c|node\s+(?:-e|--eval|-p|--print)|"
    r"python[0-9.]*\s+-c|curl|wget|nc|ncat|netcat)(?=\s|$|['\"])")


# the include-path idiom of every Node-API and NAN addon's binding.gyp: node prints a
# path the installed package exports, nothing else (`<!(node -p
# "require('node-addon-api').include_dir")`, `<!(node -e "require('nan')")`); any other
# program, package or property is judged as any inline code
GYP_INCLUDE = LazyRe(r"""node\s+(?:-p|--print|-e|--eval)\s+(\\?["'])require\((\\?["'])"""
                     r"""(?:node-addon-api|nan)\2\)(?:\.(?:include_dir|include|gyp|targets))?\1""")


@rule(id="SUP004", slug="root-hooks-lotl", severity=Severity.MEDIUM,
      title="Root project hooks run living-off-the-land tools",
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    for rel, hook, cmd, line in install_hooks(ctx, f):
        if rel.endswith("binding.gyp") and GYP_INCLUDE.fullmatch(cmd.strip()):
            continue  # every Node-API or NAN addon's include path, from node_modules
        m = TOOLS.search(cmd)
        if m:
            tool = " ".join(m.group("tool").split())
            f.fail(f"{hook} runs {tool}: {cmd[:100]!r}", path=rel, line=line)
        _followed(ctx, f, rel, hook, cmd)
    return f.outcome("no root install hook runs an inline interpreter or a download tool",
                     f"{len(f.found)} install hook(s) run living-off-the-land tools",
                     scope=lambda rel: in_play(ctx, rel))


def _followed(ctx: Context, f: Findings, rel: str, hook: str, cmd: str) -> None:
    """What the repository files the hook runs do (the Shai-Hulud shape: `"postinstall":
    "node scripts/install.js"`, whose file pipes a download into `sh`)."""
    if rel.endswith(".gyp"):
        return  # gyp's expansions are judged above; they name no file of their own
    done = follow(ctx, cmd, posixpath.dirname(rel))
    for h in done.hazards:
        if h.path:  # the hook's own inline program is judged above and by SUP005
            f.fail(describe(h, hook), path=h.path, line=h.line)
    for exc in done.errors:
        f.error(exc)
