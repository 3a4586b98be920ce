"""Poisoned instruction files.

## What it checks
Agent instruction files: `CLAUDE.md`, `CLAUDE.local.md`, `AGENTS.md` (and Codex's
`AGENTS.override.md`), `GEMINI.md`,
`.cursorrules`, `.cursor/rules/*.mdc` and `*.md`, `.windsurfrules`, `.clinerules` (a
file or a folder), `.github/copilot-instructions.md`, `.github/instructions/*` and
everything under `.claude/commands`, `.claude/agents`, `.claude/skills`, `.agents/`
(skills shared by several agents), `.gemini/skills`, `.gemini/commands`,
`.github/agents`, `.github/prompts`, `.github/chatmodes`, `.windsurf/rules`,
`.windsurf/workflows`, `.codex/skills`, `.codex/prompts`, `.cline/`, `.continue/rules`,
`.continue/prompts`, `.roo/rules` and `.kiro/steering` (a skill's scripts included), and
`AGENT.md`, anywhere in the workspace. It looks for invisible characters (bidi controls
U+202A–U+202E and U+2066–U+2069, zero-width U+200B–U+200D, U+2060, U+FEFF other than a
leading byte-order mark, tag characters U+E0000–U+E007F), reported by code point, line
and column, never printed (a U+200D joining two emoji, as in 👩‍💻, is how that emoji is
written, and tag letters between a black flag and a cancel tag are a subdivision flag
such as England's: neither is hidden text); and for injection phrases: a download run as
code (`curl … | sh`, `bash <(curl …)`, `sh -c "$(wget …)"`, `curl … | python`, as SUP005
reads them), `--dangerously-skip-permissions`, `bypassPermissions`, "ignore previous
instructions" (not when it is quoted on its line: named as an example of an attack, not
said). A download piped into a shell that is inline code in prose, outside a code block,
under a heading or after words that forbid running it ("NEVER run the real installer",
"do not paste") is named as what not to do: it is still reported, as advisory, and gates
only beside another finding. An agent directory whose contents cannot be read is
unknown: a symlink out of the workspace (`.claude` -> elsewhere), or a git submodule
that is not checked out.

## Why it matters
Agents follow these files as instructions. Hidden characters let a reviewer see one
text while the model reads another; the phrases are the usual payloads.

## How to fix
Remove the hidden characters (`ztsa explain AGT006` lists them; most editors can
show them) and the injected lines, then review who changed the file.
"""

from __future__ import annotations

import re

from ztsa.agentfiles import out_of_reach
from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe
from ztsa.model import Outcome, Severity
from ztsa.registry import rule
from ztsa.walk import all_files

EXACT = {"CLAUDE.md", "CLAUDE.local.md", "AGENTS.md", "AGENTS.override.md", "AGENT.md",
         "GEMINI.md", ".cursorrules", ".windsurfrules", ".clinerules",
         ".github/copilot-instructions.md"}
PREFIXES = (".github/instructions/", ".claude/commands/", ".claude/agents/",
            ".claude/skills/", ".cursor/rules/", ".clinerules/", ".agents/",
            ".gemini/skills/", ".gemini/commands/", ".github/agents/", ".github/prompts/",
            ".github/chatmodes/", ".windsurf/rules/", ".windsurf/workflows/",
            ".codex/skills/", ".codex/prompts/", ".cline/", ".continue/rules/",
            ".continue/prompts/", ".roo/rules/", ".kiro/steering/")
HIDDEN = LazyRe("[\u202a-\u202e\u2066-\u2069\u200b-\u200d\u2060\ufeff\U000e0000-\U000e007f]")
PHRASES = (
    (LazyRe(r"\b(curl|wget)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b", re.I),
     "pipes a download into a shell"),
    (LazyRe(r"--dangerously-skip-permissions"), "asks for --dangerously-skip-permissions"),
    (LazyRe(r"bypassPermissions"), "mentions bypassPermissions"),
    (LazyRe(r"ignore\s+(all\s+)?(the\s+)?(previous|prior|above)\s+instructions", re.I),
     "says to ignore previous instructions"),
)
MAX_REPORTS = 20
ZWJ = "\u200d"
# words that forbid running something: a negation with its verb ("never skip" is none)
FORBIDS = LazyRe(r"\b(never|do\s+not|don't|must\s+not|should\s+not)\s+(run|execute|use|"
                 r"install|paste|pipe|call|invoke|type)\b|\bavoid\s+(running|piping|using)\b",
                 re.I)
INLINE = LazyRe("`[^`\n]+`")
# a line that tells the reader to do something (a heading's "never" does not cover it)
IMPERATIVE = LazyRe(r"^\s*(?:[-*+]\s+|\d+[.)]\s+)?(?:\*\*)?(run|execute|paste|type|use|"
                    r"install|call|invoke|pipe|do|try|then|now|first|next|always|please|instead)\b",
                    re.I)
ACTS = LazyRe(r"\b(run|execute|paste|type|use|install|call|invoke|pipe|try)\b", re.I)
GOVERNED = LazyRe(r"^[ \t]*(?:the\s+|this\s+|a\s+)?$", re.I)


def _download_run(line: str) -> re.Match[str] | None:
    """A download run as code: `curl … | sh`, and SUP005's other forms (`wget -O- … |
    python`, `bash <(curl …)`, `sh -c "$(curl …)"`), in a text or a skill's script."""
    from ztsa.rules.sup.sup005_piped_shell_installer import PATTERNS as PIPED

    for rx in (PHRASES[0][0], *PIPED):
        if m := rx.search(line):
            return m
    return None


def _forbidden(line: str, start: int, end: int, heading: str) -> bool:
    """Is line[start:end] inline code (not a code block's line) whose running is
    forbidden: by the words just before it ("do not paste `...`"), or by the section's
    heading ("## NEVER run the real installer") on a line that tells nobody to act (no
    verb of doing before it)?"""
    span = next((q for q in INLINE.finditer(line) if q.start() < start and end <= q.end()),
                None)
    if span is None:
        return False
    before = line[:span.start()]
    if any(GOVERNED.match(before[m.end():]) for m in FORBIDS.finditer(before)):
        return True
    return bool(FORBIDS.search(heading)) and not IMPERATIVE.match(line) and \
        not ACTS.search(before)


def _emoji(ch: str) -> bool:
    """Pictographic enough to take part in a ZWJ sequence (emoji, symbols, dingbats)."""
    cp = ord(ch)
    return (0x1F000 <= cp <= 0x1FAFF or 0x2600 <= cp <= 0x27BF or 0x2B00 <= cp <= 0x2BFF
            or 0x2190 <= cp <= 0x21FF or cp in (0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122))


def _joins_emoji(line: str, i: int) -> bool:
    """Is the U+200D at line[i] inside an emoji ZWJ sequence? The character before it
    (past variation selectors and skin-tone modifiers) and the one after are emoji."""
    j = i - 1
    while j >= 0 and (line[j] in "\ufe0e\ufe0f" or 0x1F3FB <= ord(line[j]) <= 0x1F3FF):
        j -= 1
    return j >= 0 and i + 1 < len(line) and _emoji(line[j]) and _emoji(line[i + 1])


QUOTED = LazyRe("(?<![\\w])'[^'\n]*'(?![\\w])|\"[^\"\n]*\"|`[^`\n]*`|\u201c[^\u201d\n]*\u201d"
                 "|\u2018[^\u2019\n]*\u2019")


def _quoted(line: str, start: int, end: int) -> bool:
    """Is line[start:end] inside quotes ('...', "...", `...`, curly ones) on its line: the
    phrase named as an example (`e.g. 'Ignore previous instructions'`), not said? An
    apostrophe inside a word (don't) opens no quote."""
    return any(q.start() < start and end <= q.end() for q in QUOTED.finditer(line))


def is_instruction_file(rel: str) -> bool:
    name = rel.rsplit("/", 1)[-1]
    if rel.startswith(".cursor/rules/") or "/.cursor/rules/" in rel:
        return name.endswith((".mdc", ".md"))
    if name in EXACT or rel in EXACT or "/".join(rel.split("/")[-2:]) in EXACT:
        return True
    # every prefix is a dot directory: most paths have none
    return (rel[:1] == "." or "/." in rel) and any(
        rel.startswith(p) or f"/{p}" in rel for p in PREFIXES)


# a subdivision flag (England, Scotland, Wales): a black flag, tag letters, a cancel tag
FLAG_TAGS = LazyRe("\U0001F3F4[\U000E0030-\U000E0039\U000E0061-\U000E007A]{1,32}\U000E007F")
AGENT_DIRS = tuple(dict.fromkeys([
    *(p.rstrip("/") for p in PREFIXES),
    ".claude", ".codex", ".gemini", ".cursor", ".windsurf", ".continue", ".roo", ".kiro"]))


def _out_of_reach(ctx: Context, f: Findings) -> None:
    out_of_reach(ctx, f, AGENT_DIRS)


@rule(id="AGT006", slug="poisoned-instructions", title="Poisoned instruction files",
      severity=Severity.HIGH, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    _out_of_reach(ctx, f)
    files = [p for p in f.attempt(all_files, ctx) or [] if is_instruction_file(p)]
    for rel in files:
        text = f.attempt(ctx.ws_text, rel, 8 << 20)
        if text is None:
            continue
        hidden = 0
        fenced, heading = False, ""
        for lineno, line in enumerate(text.splitlines(), start=1):
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
            elif not fenced and line.startswith("#"):
                heading = line
            flags = {i for fm in FLAG_TAGS.finditer(line) for i in range(fm.start(), fm.end())
                     } if "\U0001F3F4" in line else set()
            for m in HIDDEN.finditer(line):
                if (m.group() == ZWJ and _joins_emoji(line, m.start())) or m.start() in flags:
                    continue
                hidden += 1
                if hidden <= MAX_REPORTS:
                    f.fail(f"U+{ord(m.group()):04X} at line {lineno}, column {m.start() + 1}",
                           path=rel, line=lineno)
            for i, (rx, what) in enumerate(PHRASES):
                said = rx.search(line) if i else _download_run(line)
                if said and i == 0 and not fenced and _forbidden(
                        line, said.start(), said.end(), heading):
                    f.advise(f"line {lineno} {what}, named as what not to do (advisory)",
                             path=rel, line=lineno)
                elif said and not (i == len(PHRASES) - 1
                                   and _quoted(line, said.start(), said.end())):
                    f.fail(f"line {lineno} {what}", path=rel, line=lineno)
        if hidden > MAX_REPORTS:
            f.fail(f"{hidden - MAX_REPORTS} more hidden character(s) not listed", path=rel)
    return f.outcome(f"{len(files)} instruction file(s) clean",
                     f"{len(f.found) + len(f.advised)} suspicious item(s) in instruction files",
                     advised=f"{len(f.advised)} download(s) piped into a shell, each named as "
                     "what not to do")
