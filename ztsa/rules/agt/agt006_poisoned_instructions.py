"""Poisoned instruction files.

## What it checks
The files agents load as instructions, anywhere in the workspace, as the surface
catalogue lists them (`ztsa.surfaces.INSTRUCTIONS`, the third table of
docs/surfaces.md): `CLAUDE.md`, `AGENTS.md`, `GEMINI.md`, `.claude/rules/`, the
commands, agents and skills folders of Claude Code, Codex, Gemini CLI, Cursor, Copilot,
Windsurf, Cline, Continue, Roo, Kilo, Kiro, Amazon Q, OpenHands and OpenCode (a
skill's scripts included), `.cursor/rules/*.mdc`, `.github/copilot-instructions.md`, ...

Hidden text first (`ztsa.hiddentext`): every default-ignorable code point (Unicode's
Default_Ignorable_Code_Point: tag characters U+E0000–E007F, variation selectors, the
soft hyphen, invisible operators and separators U+2061–2064, zero-width characters,
bidi controls, Hangul fillers, ...) is stripped before the phrase checks, and counted
unless its context makes it ordinary writing (a joiner or a variation selector inside
an emoji sequence, the tags of a subdivision flag, one ideographic variation selector
after a Han character, a soft hyphen inside a word, a directional mark in
right-to-left text). What is counted is reported by kind, line and column, never
printed; text carried by tag characters or by a run of variation selectors (one byte
each) is decoded and checked too. The parts of a markdown file a person viewing it does
not see (HTML comments, link reference definitions, `<details>` bodies, zero-size or
hidden elements) get the checks shown text gets, across their lines, as does a phrase
split over the lines of a paragraph.

The phrases: a download run as code (`curl … | sh`, `bash <(curl …)`, `sh -c "$(wget
…)"`, `curl … | python`, as SUP005 reads them), `--dangerously-skip-permissions`,
`bypassPermissions`, "ignore previous instructions" (not when it is named as an example
of an attack rather than said: quoted on its line, in a markdown table row, or in a code
block labelled as another format, ```html or ```markdown). A download run as code that
is a quoted string in a code block of data or another language (```json `"preinstall":
"curl … | bash"`) is a value shown, not a command: advisory. One or two lone zero-width
characters, carrying no text, are advisory (what they split is judged with them
removed); a run of them, more, or any other kind gates. A download piped into a shell that is
inline code in prose, outside a code block, under a heading or after words that forbid
running it ("NEVER run the real installer", "do not paste") is named as what not to do:
it is still reported, as advisory, and gates only beside another finding. An agent
directory whose contents cannot be read is unknown: a symlink out of the workspace
(`.claude` -> elsewhere), or a git submodule that is not checked out.
A file an agent loads wherever it sits (`CLAUDE.md`, `AGENTS.md`, `GEMINI.md`, ...:
ztsa.surfaces.ANYWHERE) acts under `tests/` too; one that acts only at a project's
top (`.cursor/rules/`, `.github/copilot-instructions.md`, a skill) inside test data or
a project nothing of the root names is reported as advisory (ztsa.manifests.scope).

## Why it matters
Agents follow these files as instructions. Hidden characters let a reviewer see one
text while the model reads another; the phrases are the usual payloads.

## How to fix
Remove the hidden characters (`ztsa explain AGT006` lists them; most editors can
show them) and the injected lines, then review who changed the file.
"""

from __future__ import annotations

import re

from ztsa import hiddentext
from ztsa.agentfiles import out_of_reach
from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.lazy import LazyRe
from ztsa.manifests.scope import in_play
from ztsa.model import Nature, Outcome, Severity
from ztsa.registry import rule
from ztsa.surfaces import INSTRUCTIONS, instruction_file
from ztsa.walk import all_files

PHRASES = (
    (LazyRe(r"\b(curl|wget)\b[^\n|]*\|\s*(sudo\s+)?(ba|z|da)?sh\b", re.I),
     "pipes a download into a shell"),
    (LazyRe(r"--dangerously-skip-permissions"), "asks for --dangerously-skip-permissions"),
    (LazyRe(r"bypassPermissions"), "mentions bypassPermissions"),
    (LazyRe(r"ignore\s+(all\s+)?(the\s+)?(previous|prior|above)\s+instructions", re.I),
     "says to ignore previous instructions"),
)
MAX_REPORTS = 20
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


def said(text: str) -> list[tuple[int, re.Match[str]]]:
    """(phrase index, match) for each phrase a normalised text says."""
    out = []
    for i, (rx, _) in enumerate(PHRASES):
        m = rx.search(text) if i else _download_run(text)
        if m:
            out.append((i, m))
    return out


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


QUOTED = LazyRe("(?<![\\w])'[^'\n]*'(?![\\w])|\"[^\"\n]*\"|`[^`\n]*`|\u201c[^\u201d\n]*\u201d"
                 "|\u2018[^\u2019\n]*\u2019")


def _quoted(line: str, start: int, end: int) -> bool:
    """Is line[start:end] inside quotes ('...', "...", `...`, curly ones) on its line: the
    phrase named as an example (`e.g. 'Ignore previous instructions'`), not said? An
    apostrophe inside a word (don't) opens no quote."""
    return any(q.start() < start and end <= q.end() for q in QUOTED.finditer(line))


# code blocks whose lines are data or another language's code, not commands to run
DATA_FENCES = frozenset({"json", "jsonc", "json5", "yaml", "yml", "toml", "js", "javascript",
                         "ts", "typescript", "html", "xml", "markdown", "md", "diff",
                         "python", "py"})
MAX_LONE = 2


def _named_example(line: str, fence: str | None) -> bool:
    """Is every "ignore previous instructions" on the line named, not said: quoted, shown
    in a code block labelled as another format (```html, ```markdown: how an injection
    looks there), or in a markdown table row (a scanner's catalogue of patterns: `|
    Ignore previous instructions | "…" | Critical |`)? A bare code block is read as any
    other text."""
    if fence in DATA_FENCES or re.match(r"^\s*\|.*\|\s*$", line):
        return True
    rx = PHRASES[-1][0]
    return all(_quoted(line, m.start(), m.end()) for m in rx.finditer(line))


def is_instruction_file(rel: str) -> bool:
    """One of the catalogue's instruction files (ztsa.surfaces.INSTRUCTIONS)."""
    return instruction_file(rel)


AGENT_DIRS = tuple(dict.fromkeys([
    *(s.path.split("/*")[0].rstrip("/") for s in INSTRUCTIONS
      if "/" in s.path.rstrip("/") or s.path.endswith("/")),
    ".claude", ".codex", ".gemini", ".cursor", ".windsurf", ".continue", ".roo", ".kiro"]))


def _out_of_reach(ctx: Context, f: Findings) -> None:
    out_of_reach(ctx, f, AGENT_DIRS)


class _File:
    """One instruction file's judgement: its lines normalised once, what was reported."""

    def __init__(self, f: Findings, rel: str, text: str) -> None:
        self.f, self.rel = f, rel
        self.raw = text.splitlines()
        self.lines = [hiddentext.normalise(line) for line in self.raw]
        self.reported: set[tuple[int, int]] = set()  # (phrase, line)

    def judge(self) -> None:
        self._hidden()
        self._lines()
        self._spans([(r.kind + " (not shown when rendered)", r.line, r.line + r.lines - 1)
                     for r in hiddentext.unrendered("\n".join(self.raw))])
        self._spans([("a paragraph", a, b) for a, b in self._paragraphs()])

    def _hidden(self) -> None:
        total: list[hiddentext.Run] = []
        runs = [run for norm in self.lines for run in norm.runs]
        # a zero-width character or two, alone, splitting a word (a scanner's reference
        # page showing "ig\u200bnore"): no text rides on them, and what they split is
        # judged with them removed; a run, more of them, or another kind gates
        lone = len(runs) <= MAX_LONE and all(
            r.kind == "zero-width character" and r.size == 1 for r in runs) and not any(
            norm.smuggled for norm in self.lines)
        report = self.f.advise if lone else self.f.fail
        for lineno, norm in enumerate(self.lines, start=1):
            for run in norm.runs:
                total.append(run)
                if len(total) <= MAX_REPORTS:
                    report(hiddentext.run_detail(run, lineno) + (
                        ": a lone zero-width character, carrying no text (advisory)"
                        if lone else ""), path=self.rel, line=lineno)
            for how, text in norm.smuggled:
                clean = hiddentext.normalise(text).clean
                for i, _ in said(clean):
                    self.f.fail(f"line {lineno}: text hidden in {how} "
                                f"{PHRASES[i][1]}", path=self.rel, line=lineno)
        if len(total) > MAX_REPORTS:
            self.f.fail(f"{len(total) - MAX_REPORTS} more run(s) of hidden characters "
                        "not listed", path=self.rel)
        if total and not lone:
            self.f.fail(f"{sum(r.size for r in total)} hidden character(s): "
                        f"{hiddentext.describe(total)}", path=self.rel)

    def _lines(self) -> None:
        fenced, heading, lang = False, "", ""
        for lineno, norm in enumerate(self.lines, start=1):
            line = norm.clean
            if line.lstrip().startswith(("```", "~~~")):
                fenced = not fenced
                lang = line.lstrip()[3:].strip().split(" ")[0].lower() if fenced else ""
            elif not fenced and line.startswith("#"):
                heading = line
            found = said(line)
            if not found and norm.stripped:
                found = said(norm.spaced)  # U+2063 standing for a space
                line = norm.spaced
            note = f" ({norm.stripped} default-ignorable character(s) removed)" \
                if norm.stripped else ""
            for i, m in found:
                what = PHRASES[i][1]
                self.reported.add((i, lineno))
                if i == 0 and not fenced and _forbidden(line, m.start(), m.end(), heading):
                    self.f.advise(f"line {lineno} {what}, named as what not to do (advisory)",
                                  path=self.rel, line=lineno)
                elif i == 0 and fenced and lang in DATA_FENCES and _quoted(
                        line, m.start(), m.end()):
                    # sentry's supply-chain reference: `"preinstall": "curl … | bash"` in
                    # a ```json example is a value shown, not a command to run
                    self.f.advise(f"line {lineno} {what}, as a string in a {lang} example "
                                  "(advisory)", path=self.rel, line=lineno)
                elif i == len(PHRASES) - 1 and _named_example(line, lang if fenced else None):
                    continue
                else:
                    self.f.fail(f"line {lineno} {what}{note}", path=self.rel, line=lineno)

    def _paragraphs(self) -> list[tuple[int, int]]:
        """(first, last) line of each run of non-blank lines outside code blocks: markdown
        shows them as one line."""
        out: list[tuple[int, int]] = []
        fenced, first = False, 0
        for lineno, norm in enumerate(self.lines, start=1):
            fence = norm.clean.lstrip().startswith(("```", "~~~"))
            fenced = fenced != fence
            if fence or fenced or not norm.clean.strip():
                if first and lineno - 1 > first:
                    out.append((first, lineno - 1))
                first = 0
            elif not first:
                first = lineno
        if first and len(self.lines) > first:
            out.append((first, len(self.lines)))
        return out

    def _spans(self, spans: list[tuple[str, int, int]]) -> None:
        """A phrase said across the lines first..last (an HTML comment, a paragraph) that
        no single line says: judged on the lines joined."""
        for where, first, last in spans:
            if last <= first:
                continue  # one line: the line checks judged it
            starts, parts, pos = [], [], 0
            for n in range(first, last + 1):
                starts.append(pos)
                parts.append(self.lines[n - 1].clean)
                pos += len(parts[-1]) + 1
            joined = " ".join(parts)
            for i, m in said(joined):
                at = first + sum(1 for s in starts if s <= m.start()) - 1
                end = first + sum(1 for s in starts if s < m.end()) - 1
                if at == end or (i, at) in self.reported:
                    continue
                if i == len(PHRASES) - 1 and _quoted(joined, m.start(), m.end()):
                    continue
                self.reported.add((i, at))
                self.f.fail(f"lines {at}-{end} {PHRASES[i][1]}, in {where}",
                            path=self.rel, line=at)


@rule(id="AGT006", slug="poisoned-instructions", title="Poisoned instruction files",
      severity=Severity.HIGH,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    _out_of_reach(ctx, f)
    files = [p for p in f.attempt(all_files, ctx) or [] if instruction_file(p)]
    for rel in files:
        text = f.attempt(ctx.ws_text, rel, 8 << 20)
        if text is not None:
            _File(f, rel, text).judge()
    return f.outcome(f"{len(files)} instruction file(s) clean",
                     f"{len(f.found) + len(f.advised)} suspicious item(s) in instruction files",
                     scope=lambda rel: in_play(ctx, rel),
                     advised=f"{len(f.advised)} item(s) named as examples or as what not to "
                     "do (advisory)")
