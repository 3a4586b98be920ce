"""Piped shell installer.

## What it checks
`package.json` scripts, `Makefile`s, `justfile`s, `*.sh` files, `Dockerfile`s,
`.devcontainer/` files and `.github/workflows/*.yml` for a download piped into an
interpreter: `curl … | sh` (or bash, zsh, python, node, sudo sh), `wget -O- … | bash`,
`bash <(curl …)`, `sh -c "$(curl …)"`. Each finding names file and line. Comments
(a `#` line, or an unquoted `#` after a space) are not commands, and a download piped
into a data tool (`| jq`, `| python -m json.tool`) or an inline program that parses it
(`| node -e '…'`, `| python -c '…'`) is data, unless that program runs what it reads
(`exec(`, `eval(`); nor is an install hint `echo` or `printf` prints (`echo "run: curl
… | sh"`; an `echo "$(curl … | sh)"` runs it). A finding only in CI workflows or in
`Dockerfile`s is advisory: those run on a CI runner or in an image build, not where
the agent installs, builds and tests. A shell script, or a devcontainer's file, gates
only when something on the host runs it: a `package.json`, `Makefile` or `justfile` of
the repository, the root's README and other entry documents, or an agent, editor or
shell-environment surface of the catalogue (`AGENTS.md`, `.claude/`, `.vscode/`,
`.envrc`, `mise.toml`, ...) names it, or a script so named does (3 deep), or a
devcontainer's `initializeCommand` does; a script nothing names (a docs host's build, a
release script for another OS, a sub-project's own setup) and a devcontainer's
`postCreateCommand` script (it runs inside the container: AGT011 judges what that
container may reach) are advisory.
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
import re

from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.host import ProbeError
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


def _flow_files(ctx: Context) -> list[str]:
    """The files that say what runs where the agent works, on the host: the root's and
    every in-play project's package.json, Makefiles and justfiles, the root's entry
    documents (README, CONTRIBUTING, ...), and the agent, editor and shell-environment
    surfaces of the catalogue (ztsa.surfaces: `AGENTS.md`, `.claude/`, `.vscode/`,
    `.envrc`, `mise.toml`, `.husky/`, ...) but the devcontainer's, which run inside it."""
    from ztsa.manifests.scope import ENTRY_FILES, ENTRY_PREFIXES
    from ztsa.surfaces import ROOT, anywhere_names

    roots = tuple(s.path for s in ROOT if not s.path.startswith((".devcontainer", ".ztsa")))
    names = set(anywhere_names())

    def flow(rel: str) -> bool:
        base = posixpath.basename(rel)
        if "/" not in rel and (rel in ENTRY_FILES or rel.upper().startswith(ENTRY_PREFIXES)):
            return True
        if rel.startswith(tuple(r + "/" for r in roots)) or rel in roots or base in names:
            return True
        return base in FLOW_NAMES or base.endswith(".mk")

    return [rel for rel in matching(ctx, flow) if in_play(ctx, rel)]


FLOW_NAMES = frozenset({"package.json", "Makefile", "makefile", "GNUmakefile", "justfile",
                        "Justfile", ".justfile", "Taskfile.yml", "Taskfile.yaml",
                        ".pre-commit-config.yaml", "lefthook.yml", "lefthook.yaml"})
MAX_FLOW_FILES = 400


SCRIPT_NAME = LazyRe(r"(?:[\w.-]+/)*[\w.-]+\.(?:sh|bash)(?![\w-])")


def _names(text: str, here: str) -> set[str]:
    """The shell scripts text (of a file in directory here) names: each path as written,
    from the root and from here (`./build-docs.sh`, `$(dirname "$0")/x.sh`)."""
    out = set()
    for m in SCRIPT_NAME.finditer(text):
        name = m.group(0)
        out.add(posixpath.normpath(name))
        out.add(posixpath.normpath(posixpath.join(here, name)))
    return out


def scripts_run(ctx: Context) -> set[str] | None:
    """The shell scripts some flow of the host names (_flow_files), or that a script so
    named names in turn (3 deep): what the install, build, tests, the repository's
    documents or the agent's files run. A devcontainer's initializeCommand runs on the
    host too. None when a flow cannot be read: then every script counts as run."""
    named: set[str] = set()
    try:
        for rel in _flow_files(ctx)[:MAX_FLOW_FILES]:
            named |= _names(ctx.ws_text(rel, MAX_MANIFEST_BYTES) or "", posixpath.dirname(rel))
        for dc in matching(ctx, lambda p: p.startswith(".devcontainer") and
                           p.endswith(".json")):
            text = ctx.ws_text(dc, MAX_MANIFEST_BYTES) or ""
            for m in re.finditer(r"\"initializeCommand\"\s*:\s*(?:\"[^\"]*\"|\[[^\]]*\]|"
                                 r"\{[^}]*\})", text):
                named |= _names(m.group(0), "")
        scripts = set(matching(ctx, lambda p: p.endswith((".sh", ".bash"))))
        run: set[str] = set()
        for _ in range(3):
            more = (named & scripts) - run
            if not more:
                break
            run |= more
            for rel in more:
                named |= _names(ctx.ws_text(rel, MAX_MANIFEST_BYTES) or "",
                                posixpath.dirname(rel))
    except ProbeError:
        return None
    return run


@rule(id="SUP005", slug="piped-shell-installer", title="Piped shell installer",
      severity=Severity.HIGH,
      nature=Nature.SUPPLY_ATTACK, actions="W/B/B")
def check(ctx: Context) -> Outcome:
    from ztsa.follow import printed_text_removed

    f = Findings()
    here = 0  # findings in what runs where the agent works
    hits: list[tuple[str, int, str]] = []
    for rel in matching(ctx, in_scope):
        text = f.attempt(ctx.ws_text, rel, MAX_MANIFEST_BYTES)
        if not text:
            continue
        json = rel.endswith(".json")
        quote = ""
        for lineno, line in continued_lines(text):
            if not json:  # a comment (shell, make, Dockerfile, YAML) is not a command
                line, quote = uncommented(line, quote)
            # an install hint printed (`echo "… curl … | sh"`) is text, not a command
            if any(p.search(printed_text_removed(line)) for p in PATTERNS):
                hits.append((rel, lineno, line))
    run = scripts_run(ctx) if any(_loose(rel) for rel, _, _ in hits) else set()
    for rel, lineno, line in hits:
        why = ""
        if runs_elsewhere(rel):
            why = " (runs in CI or an image build: advisory)"
        elif _in_devcontainer(rel) and not (rel.endswith(".json") and "initializeCommand" in line) \
                and (run is not None and rel not in run):
            why = " (runs inside the devcontainer, not on the host: advisory)"
        elif _loose(rel) and run is not None and rel not in run:
            why = (" (a script that nothing of the install, build, tests, the repository's "
                   "documents or the agent's files runs: advisory)")
        here += not why and in_play(ctx, rel)
        f.fail(f"pipes a download into an interpreter: {line.strip()[:100]!r}" + why,
               path=rel, line=lineno)
    out = f.outcome("no download is piped into an interpreter",
                    f"{len(f.found)} piped shell installer(s)",
                    scope=lambda rel: in_play(ctx, rel))
    if out.status is Status.FAIL and not here:
        return Outcome.failed(out.message + ", none where the agent installs, builds and "
                              "tests", out.evidence, advisory=True)
    return out


def _in_devcontainer(rel: str) -> bool:
    return rel.startswith(".devcontainer/") or "/.devcontainer/" in rel or \
        rel.endswith(".devcontainer.json")


def _loose(rel: str) -> bool:
    """A shell script or a devcontainer file: it runs only when something runs it."""
    return rel.endswith(".sh") or _in_devcontainer(rel)
