"""Lock entries without integrity or from an untrusted source.

## What it checks
Every registry or URL entry of every lockfile carries an integrity hash:
`integrity` in `package-lock.json`/`npm-shrinkwrap.json` and classic `yarn.lock`,
`checksum` in Yarn Berry, `resolution.integrity` in `pnpm-lock.yaml`, the hash in
`bun.lock`, `checksum` for registry sources in `Cargo.lock`, hashes for every file in
`uv.lock`, `poetry.lock`, `pdm.lock`, `Pipfile.lock` and `pylock.toml`. It also fails
an entry resolved over plain `http://` (in any case: `HTTP://` too), a JS lock entry
over another scheme than https (`ftp:`), or one from a host that is not on the allowlist
(`registry.npmjs.org`, `registry.yarnpkg.com`, crates.io, `pypi.org`,
`files.pythonhosted.org`, plus `--allow-registry HOST`), except a git host's archive of
one commit with its integrity hash (`codeload.github.com/o/r/tar.gz/<40 hex>`): a git
source pinned to a commit and to its bytes. Git and path entries are
SUP006's concern, except a `git+file:` one: a repository on this machine, outside every
registry and the reviewed tree, fails here even at a commit. An entry this machine never
fetches (Yarn Berry's `conditions: os=darwin & cpu=arm64`, package-lock's
`os`/`cpu`/`libc`) is not judged: Yarn records no checksum for the platforms it did not
fetch; so is a variant of a pnpm `runtime:` entry (one archive with its own integrity
per platform) for another platform, and Node.js's own release host is allowed for
those. A lockfile that does not parse makes the rule unknown. An entry without a hash
is what a maintainer forgot (hygiene): it is reported as advisory, and gates only beside
an entry from an untrusted source, which is what an attacker plants.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
Without a hash, the lockfile pins a name and a version but not the bytes: a
compromised registry, mirror or proxy can serve different code. Plain HTTP lets
anyone on the path do the same; an unknown host is a dependency-confusion source.

## How to fix
Regenerate the lockfile against the official registry with a current tool (npm 7+,
`cargo generate-lockfile`, `uv lock`, `poetry lock`), or pass `--allow-registry HOST`
for a registry you run and trust.
"""

from __future__ import annotations

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe
from ztsa.manifests import MAX_LOCK_BYTES
from ztsa.manifests.locks import allowed_hosts, host_of, lock_entries
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.manifests.lock import LockEntry

MAX_REPORTS = 50


# the URL in an npm lock entry's source: `https://…`, `git+file:…`, Berry's `name@https://…`
NPM_URL = LazyRe(r"(?:^|@)([A-Za-z][A-Za-z0-9+.-]*):/")

# a git host's archive of one commit (pnpm's `gitHosted` tarball, npm's for a
# `github:o/r#<sha>` dependency): a git source pinned to a commit, SUP006's, not a registry
GIT_ARCHIVE = LazyRe(r"^https://(?:codeload\.github\.com/[\w.-]+/[\w.-]+/tar\.gz/|"
                     r"github\.com/[\w.-]+/[\w.-]+/archive/(?:refs/tags/)?|"
                     r"gitlab\.com/[\w./-]+/-/archive/|"
                     r"bitbucket\.org/[\w.-]+/[\w.-]+/get/)[0-9a-f]{40}\b")


# where pnpm fetches a `runtime:` dependency (Node.js's own release archives)
RUNTIME_HOSTS = frozenset({"nodejs.org"})


@rule(id="SUP002", slug="lock-integrity", severity=Severity.HIGH,
      title="Lock entries without integrity or from an untrusted source",
      nature=Nature.SUPPLY_ATTACK, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    hosts = allowed_hosts(ctx)
    problems = missing = 0
    texts: dict[str, str | None] = {}
    unreported: dict[str, int] = {}  # lockfile -> problems past MAX_REPORTS
    unhashed: dict[str, int] = {}  # lockfile -> entries without a hash past MAX_REPORTS
    for e in lock_entries(ctx, f):
        url, scheme = e.resolved or "", ""
        if e.ecosystem == "npm" and (m := NPM_URL.search(url)):
            url, scheme = url[m.start(1):], m.group(1).lower()  # Berry's is `name@<url>`
        # a "path" with a URL is a parser's case-sensitive miss (pnpm's `HTTP://` tarball)
        if not (e.kind in ("registry", "url") or scheme == "git+file"
                or (e.kind == "path" and scheme not in ("", "file"))):
            continue
        if any(e.platform):
            from ztsa.manifests.npm import skipped_here  # only for such an entry

            if skipped_here(e.platform) is not None:
                continue  # never fetched on this machine (Yarn's conditions, npm's os/cpu)
        why = None
        if scheme == "git+file":
            why = f"comes from a local git repository ({url[:80]}), outside every registry"
        elif url[:7].lower() == "http://":  # a scheme is case-insensitive
            why = f"is resolved over plain http ({url[:80]})"
        elif scheme not in ("", "https"):
            why = f"is resolved over {scheme}: ({url[:80]}), from no allowed registry"
        elif ((host := host_of(url)) is not None and host not in hosts
              and not (e.version.startswith("runtime:") and host in RUNTIME_HOSTS)
              and not (e.integrity and GIT_ARCHIVE.match(url))):
            why = f"comes from {host}, which is not an allowed registry"
        elif not e.integrity:
            # a hash a maintainer did not record: hygiene, never gating on its own
            missing += 1
            if missing <= MAX_REPORTS:
                f.advise(f"{e.name}@{e.version} ({e.source}) has no integrity hash",
                         path=e.source, line=_line(ctx, texts, e))
            else:
                unhashed[e.source] = unhashed.get(e.source, 0) + 1
        if why:
            problems += 1
            if problems <= MAX_REPORTS:
                f.fail(f"{e.name}@{e.version} ({e.source}) {why}", path=e.source,
                       line=_line(ctx, texts, e))
            else:
                unreported[e.source] = unreported.get(e.source, 0) + 1
    for source, n in unreported.items():  # each with its file: the scope judges it
        f.fail(f"{n} more lock entries from untrusted sources in {source}", path=source)
    for source, n in unhashed.items():
        f.advise(f"{n} more lock entries without an integrity hash in {source}", path=source)
    return f.outcome("every registry lock entry has an integrity hash from an allowed host",
                     f"{problems} lock entr(ies) from an untrusted source",
                     scope=lambda rel: in_play(ctx, rel),
                     advised=f"{missing} lock entr(ies) without an integrity hash (hygiene)")


def _line(ctx: Context, texts: dict[str, str | None], e: LockEntry) -> int | None:
    from ztsa.manifests.lock import entry_line

    if e.source not in texts:
        texts[e.source] = ctx.ws_text(e.source, MAX_LOCK_BYTES)
    return entry_line(texts[e.source], e)
