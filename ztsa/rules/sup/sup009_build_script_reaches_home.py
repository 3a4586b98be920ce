"""Build script reaches home or traverses the filesystem.

## What it checks
Every `build.rs` and the sources of every `proc-macro = true` crate for
`env::home_dir`, `home::home_dir`, `dirs::home_dir` and the other `dirs`/`directories`
helpers; `env::var("HOME" | "USERPROFILE" | "SSH_AUTH_SOCK" | "AWS_*" |
"CARGO_REGISTRY_TOKEN")`; string literals holding `~/`, `.ssh`, `.aws`, `.kube`,
`.gnupg` or `.npmrc`; `../../` that leaves the workspace from the crate's directory;
`read_dir("/")` and `WalkDir::new("/")`. A `build.rs` inside a package (a test
module) is not a build script. Sources are read as text, never compiled or run.
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
Build scripts and procedural macros run on `cargo build`, `cargo check` and in the
IDE's analyzer, with your permissions. A build has no business reading your keys or
walking your disk.

## How to fix
Remove the dependency or crate, or report it upstream. Build untrusted crates in a
sandbox with a private home (`ztsa exec`).
"""

from __future__ import annotations

import posixpath

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe, line_hits
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.rust import crates
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule

PATTERNS = (
    (LazyRe(r"\b(?:env|home|dirs|dirs_next|dirs_sys)::(?:home_dir|config_dir|data_dir|"
            r"data_local_dir|cache_dir|document_dir|download_dir)\b"), "finds the home directory"),
    (LazyRe(r"\b(?:directories|directories_next)::(?:BaseDirs|UserDirs|ProjectDirs)\b|"
            r"\b(?:BaseDirs|UserDirs)::new\b"), "finds user directories"),
    (LazyRe(r"\bvar(?:_os)?\s*\(\s*\"(HOME|USERPROFILE|SSH_AUTH_SOCK|AWS_[A-Z0-9_]*|"
            r"CARGO_REGISTRY_TOKEN)\""), "reads a home or credential variable"),
    (LazyRe(r"\"[^\"\n]*~/"), "uses a ~/ path"),
    (LazyRe(r"\"[^\"\n]*\.(?:ssh|aws|kube|gnupg|npmrc)(?:/|\"|\b)"),
     "names a credential directory"),
    (LazyRe(r"\"[^\"\n]*\.\./\.\./"), "climbs out of the crate with ../../"),
    (LazyRe(r"\b(?:read_dir|WalkDir::new|walkdir::WalkDir::new)\s*\(\s*\"/\"\s*\)"),
     "walks the filesystem root"),
)


CLIMBS = 5  # the ../../ pattern
LITERAL = LazyRe(r"\"([^\"\n]*)\"")


def _stays_inside(crate_dir: str, line: str) -> bool:
    """Every ../ literal on the line, from the crate's directory (a build script's
    working directory), stays inside the workspace (biome's ../../packages/...)."""
    climbing = [lit for lit in LITERAL.compiled.findall(line) if "../" in lit]
    return bool(climbing) and all(
        not lit.startswith("/") and
        not posixpath.normpath(posixpath.join(crate_dir or ".", lit)).startswith("..")
        for lit in climbing)


@rule(id="SUP009", slug="build-script-reaches-home", severity=Severity.CRITICAL,
      title="Build script reaches home or traverses the filesystem",
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    scanned = 0
    for crate in crates(ctx, f):
        for rel in crate.sources:
            text = f.attempt(ctx.ws_text, rel, MAX_MANIFEST_BYTES)
            if text is None:
                continue
            scanned += 1
            kind = "build script" if rel == crate.build_script else "proc macro"
            lines = text.splitlines()
            for lineno, i, m in line_hits(text, [rx for rx, _ in PATTERNS]):
                if i == CLIMBS and _stays_inside(crate.dir, lines[lineno - 1]):
                    continue
                f.fail(f"{kind} of {crate.name} {PATTERNS[i][1]}: {m.group(0)[:60]!r}",
                       path=rel, line=lineno)
    return f.outcome(f"{scanned} build script / proc-macro source(s) stay out of home",
                     f"{len(f.found)} home or filesystem access(es) in build code",
                     scope=lambda rel: in_play(ctx, rel))
