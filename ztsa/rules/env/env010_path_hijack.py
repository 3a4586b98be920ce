"""PATH hijack.

## What it checks
Each entry of `PATH`: an empty entry, `.` or a relative directory; a directory that
is group- or world-writable; and a workspace directory that comes before the system
directories (`/usr/local/sbin`, `/usr/local/bin`, `/usr/sbin`, `/usr/bin`, `/sbin`,
`/bin`).

## Why it matters
Whoever can write a directory early in `PATH` decides what `git`, `npm` or `sh`
means for every later command. A repository that ships `./bin/git` wins if its
directory comes first.

## How to fix
Remove empty, relative and writable entries from `PATH`, and put workspace tool
directories after the system ones (for example `PATH=/usr/bin:/bin:$PWD/node_modules/.bin`).
"""

from __future__ import annotations

import os
import stat

from ztsa.context import Context
from ztsa.model import Evidence, Nature, Outcome, Severity
from ztsa.registry import rule

SYSTEM = ("/usr/local/sbin", "/usr/local/bin", "/usr/sbin", "/usr/bin", "/sbin", "/bin")


@rule(id="ENV010", slug="path-hijack", title="PATH hijack",
      severity=Severity.HIGH,
      nature=Nature.ENV_HARDENING, actions="-/W/B")
def check(ctx: Context) -> Outcome:
    path = ctx.host.environ.get("PATH")
    if path is None:
        return Outcome.passed("PATH is not set")
    found: list[Evidence] = []
    seen_system = False
    for i, entry in enumerate(path.split(":"), start=1):
        where = f"PATH entry {i}"
        if entry in ("", "."):
            found.append(Evidence(f"{where} is {'empty' if not entry else '.'}: "
                                  "the current directory is searched"))
            continue
        if not entry.startswith("/"):
            found.append(Evidence(f"{where} {entry!r} is relative"))
            continue
        norm = os.path.normpath(entry)
        if norm in SYSTEM:
            seen_system = True
        if not seen_system and ctx.in_workspace(norm):
            found.append(Evidence(f"{where} {entry} is inside the workspace and comes "
                                  "before the system directories", path=entry))
        st = ctx.host.stat(norm)
        if st is not None and stat.S_ISDIR(st.st_mode) and st.st_mode & 0o022:
            who = "world" if st.st_mode & 0o002 else "group"
            found.append(Evidence(f"{where} {entry} is {who}-writable "
                                  f"(mode {stat.S_IMODE(st.st_mode):o})", path=entry))
    if found:
        return Outcome.failed(f"{len(found)} hijackable PATH entr(ies)", found)
    return Outcome.passed("PATH entries are absolute, not writable by others, system first")
