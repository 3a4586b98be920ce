"""Piped shell installer.

## What it checks
`package.json` scripts, `Makefile`s, `justfile`s, `*.sh` files, `Dockerfile`s,
`.devcontainer/` files and `.github/workflows/*.yml` for a download piped into an
interpreter: `curl … | sh` (or bash, zsh, python, node, sudo sh), `wget -O- … | bash`,
`bash <(curl …)`, `sh -c "$(curl …)"`. Each finding names file and line. Comments
(a `#` line, or an unquoted `#` after a space) are not commands, and a download piped
into a data tool (`| jq`, `| python -m json.tool`) or an inline program that parses it
(`| node -e '…'`, `| python -c '…'`) is data, unless that program runs what it reads
(`exec(`, `eval(`). A finding only in CI workflows or in
`Dockerfile`s is advisory: those run on a CI runner or in an image build, not where
the agent installs, builds and tests (a `.devcontainer/` script still counts).
What is found only in test data or in a project nothing of the root installs, builds
or names (ztsa.manifests.scope.in_play) is reported as advisory.

## Why it matters
The script is fetched at run time and executed unseen: it can change between review
and run, and it runs with whatever privileges the build has.

## How to fix
Download to a file, verify a pinned checksum or signature, then run it; or install the
tool from a package manager with a lockfile.
"""

from __future__ import annotations

import posixpath

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.project import matching
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity, Status
from ztsa.parsing import continued_lines
from ztsa.registry import rule

INTERP = r"(?:sudo\s+(?:-\S+\s+)*)?(?:ba|z|da|k)?sh|python[0-9.]*|node|perl|ruby"
PATTERNS = (
    # not `| node -e '…'`, `| python -c '…'`: the inline program reads the download;
    # not `| python -m json.tool`: a formatter
    # any stage of the download's pipeline (`| tee x | sh`, `| jq -r .s | sh`), not `||`
    LazyRe(rf"\b(?:curl|wget)\b[^;&\n]*?(?<!\|)\|(?!\|)\s*(?:{INTERP})\b"
           r"(?!\s+-[ceE]\b|\s+--eval\b|\s+-m\s+json\.tool\b)"),
    # ... unless that inline program runs what it reads
    LazyRe(r"\b(?:curl|wget)\b[^;&\n]*?(?<!\|)\|(?!\|)\s*(?:python[0-9.]*|node|perl|ruby)"
           r"\s+(?:-[ceE]|--eval)\b[^\n]*\b(?:exec|eval)\s*\("),
    LazyRe(rf"(?:{INTERP})\s+<\(\s*(?:curl|wget)\b"),
    LazyRe(rf"(?:{INTERP})\s+-c\s+[\"']?\$\(\s*(?:curl|wget)\b"),
)


def uncommented(line: str, quote: str = "") -> tuple[str, str]:
    """line without its comment (from an unquoted `#` at its start or after a space: `$#`
    and a URL's `#fragment` are not comments), and the quote still open at its end.
    quote: the one open when the line starts (a string spans lines); `$'...'` is bash's
    quoting in which a backslash escapes, `\'` included."""
    i = 0
    while i < len(line):
        c = line[i]
        if c == "\\" and quote != "'":
            i += 2  # an escaped character: \# and \" are not what they seem
            continue
        if quote:
            if c == quote[-1]:
                quote = ""
        elif c == "$" and line[i + 1:i + 2] == "'":
            quote, i = "$'", i + 1
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1] in " \t"):
            return line[:i], quote
        i += 1
    return line, quote


def in_scope(rel: str) -> bool:
    base = posixpath.basename(rel)
    if base in ("package.json", "Makefile", "makefile", "GNUmakefile", "justfile",
                "Justfile", ".justfile") or base.endswith((".sh", ".mk")):
        return True
    if base == "Dockerfile" or base.startswith("Dockerfile.") or base.endswith(".Dockerfile"):
        return True
    if rel.startswith(".devcontainer/") or "/.devcontainer/" in rel:
        return True
    return (rel.startswith(".github/workflows/") and base.endswith((".yml", ".yaml")))


def runs_elsewhere(rel: str) -> bool:
    """A CI workflow, or a Dockerfile (its RUN lines run in the image build, a
    devcontainer's too)."""
    base = posixpath.basename(rel)
    dockerfile = base == "Dockerfile" or base.startswith("Dockerfile.") or \
        base.endswith(".Dockerfile")
    return rel.startswith(".github/workflows/") or dockerfile


@rule(id="SUP005", slug="piped-shell-installer", title="Piped shell installer",
      severity=Severity.HIGH,
      nature=Nature.SUPPLY_ATTACK, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    here = 0  # findings in what runs where the agent works
    for rel in matching(ctx, in_scope):
        text = f.attempt(ctx.ws_text, rel, MAX_MANIFEST_BYTES)
        if not text:
            continue
        json = rel.endswith(".json")
        quote = ""
        for lineno, line in continued_lines(text):
            if not json:  # a comment (shell, make, Dockerfile, YAML) is not a command
                line, quote = uncommented(line, quote)
            if any(p.search(line) for p in PATTERNS):
                elsewhere = runs_elsewhere(rel)
                here += not elsewhere and in_play(ctx, rel)
                f.fail(f"pipes a download into an interpreter: {line.strip()[:100]!r}"
                       + (" (runs in CI or an image build: advisory)" if elsewhere else ""),
                       path=rel, line=lineno)
    out = f.outcome("no download is piped into an interpreter",
                    f"{len(f.found)} piped shell installer(s)",
                    scope=lambda rel: in_play(ctx, rel))
    if out.status is Status.FAIL and not here:
        return Outcome.failed(out.message + ", all in CI workflows or image builds",
                              out.evidence, advisory=True)
    return out
