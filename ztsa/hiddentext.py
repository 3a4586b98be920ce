"""Hidden text in the files an agent reads as instructions, normalised before any phrase
check: every default-ignorable code point is stripped and, unless its context makes it
ordinary writing, counted by kind; text smuggled in tag characters or variation
selectors is decoded; markdown that is read but not shown (HTML comments, link
reference definitions, collapsed `<details>`, zero-size or hidden elements) is handed
back as regions, so that it gets the phrase checks the shown text gets.

## The set: Default_Ignorable_Code_Point

Unicode derives the property (DerivedCoreProperties.txt) as
    Other_Default_Ignorable_Code_Point + Cf + Variation_Selector
    - White_Space - FFF9..FFFB - 13430..1343F - Prepended_Concatenation_Mark
`unicodedata` gives Cf (the general category); the other four are short lists of
PropList.txt, written below (OTHER_DI, VARIATION_SELECTORS, PREPENDED, WHITE_SPACE).
`derive()` computes the set that way from the running interpreter's `unicodedata`. A
walk of all 1.1 million code points costs about 0.3 s, too much before every agent
command, so the checks use RANGES, the same set written out; tests/test_hiddentext.py
checks that RANGES equals `derive()` and equals Perl's `\\p{Default_Ignorable_Code_Point}`
(the published property of the same Unicode version) on every code point.

## What is ordinary writing (stripped, not counted)
- U+200D (zero-width joiner) inside an emoji ZWJ sequence (👩‍💻), and U+200C/U+200D
  between letters of scripts that use them (Arabic, Persian, the Indic scripts: any
  letter or mark from U+0590 up);
- one variation selector after a base that takes it: VS15/VS16 (U+FE0E/FE0F) after a
  symbol or emoji (❤️, a keycap 1️⃣); U+FE00–FE0D after a non-ASCII symbol or letter
  (standardized variation sequences), or after 0 (the slashed zero); an ideographic
  one (U+E0100–E01EF) after a Han ideograph; a Mongolian free variation selector after
  a Mongolian letter. A second selector in a row is never ordinary: that is how bytes
  are smuggled after one emoji;
- tag characters in an emoji tag sequence: a black flag, tag letters or digits, a
  cancel tag (the flags of England, Scotland, Wales);
- a soft hyphen (U+00AD) between two letters (Donau­dampf­schiff);
- U+200E/200F/061C (directional marks) on a line that holds right-to-left letters;
- a byte-order mark at the very start (the reader drops it before this module).
Everything else is hidden text: reported by kind, line and column, never printed.
"""

from __future__ import annotations

import bisect
import re
import unicodedata

from ztsa.lazy import LazyRe
from ztsa.records import NamedTuple

# -- the set ---------------------------------------------------------------------------
# PropList.txt (Unicode 14.0; unchanged in 15.0 and 15.1)
OTHER_DI = ((0x034F, 0x034F), (0x115F, 0x1160), (0x17B4, 0x17B5), (0x2065, 0x2065),
            (0x3164, 0x3164), (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0xE0000, 0xE0000),
            (0xE0002, 0xE001F), (0xE0080, 0xE00FF), (0xE01F0, 0xE0FFF))
VARIATION_SELECTORS = ((0x180B, 0x180D), (0x180F, 0x180F), (0xFE00, 0xFE0F),
                       (0xE0100, 0xE01EF))
PREPENDED = ((0x0600, 0x0605), (0x06DD, 0x06DD), (0x070F, 0x070F), (0x0890, 0x0891),
             (0x08E2, 0x08E2), (0x110BD, 0x110BD), (0x110CD, 0x110CD))
WHITE_SPACE = ((0x0009, 0x000D), (0x0020, 0x0020), (0x0085, 0x0085), (0x00A0, 0x00A0),
               (0x1680, 0x1680), (0x2000, 0x200A), (0x2028, 0x2029), (0x202F, 0x202F),
               (0x205F, 0x205F), (0x3000, 0x3000))
EXCLUDED = ((0xFFF9, 0xFFFB), (0x13430, 0x1343F))  # interlinear annotation, Egyptian

# the derived set, written out (Unicode 14.0 to 15.1); a test keeps it equal to derive()
RANGES = ((0x00AD, 0x00AD), (0x034F, 0x034F), (0x061C, 0x061C), (0x115F, 0x1160),
          (0x17B4, 0x17B5), (0x180B, 0x180F), (0x200B, 0x200F), (0x202A, 0x202E),
          (0x2060, 0x206F), (0x3164, 0x3164), (0xFE00, 0xFE0F), (0xFEFF, 0xFEFF),
          (0xFFA0, 0xFFA0), (0xFFF0, 0xFFF8), (0x1BCA0, 0x1BCA3), (0x1D173, 0x1D17A),
          (0xE0000, 0xE0FFF))


def _within(cp: int, ranges: tuple[tuple[int, int], ...]) -> bool:
    return any(lo <= cp <= hi for lo, hi in ranges)


def derive() -> frozenset[int]:
    """Default_Ignorable_Code_Point by its definition, from this interpreter's
    unicodedata (slow: every code point)."""
    out = set()
    for cp in range(0x110000):
        if (unicodedata.category(chr(cp)) == "Cf" or _within(cp, OTHER_DI)
                or _within(cp, VARIATION_SELECTORS)) and not (
                _within(cp, WHITE_SPACE) or _within(cp, EXCLUDED) or _within(cp, PREPENDED)):
            out.add(cp)
    return frozenset(out)


def _cls(ranges: tuple[tuple[int, int], ...]) -> str:
    return "".join(re.escape(chr(lo)) + (f"-{re.escape(chr(hi))}" if hi > lo else "")
                   for lo, hi in ranges)


IGNORABLE = LazyRe(f"[{_cls(RANGES)}]")
_STARTS = [lo for lo, _ in RANGES]


def ignorable(cp: int) -> bool:
    i = bisect.bisect_right(_STARTS, cp) - 1
    return i >= 0 and cp <= RANGES[i][1]


# -- kinds -----------------------------------------------------------------------------
KINDS = (
    ((0xE0000, 0xE007F), "tag character"),
    ((0xFE00, 0xFE0F), "variation selector"),
    ((0xE0100, 0xE01EF), "variation selector"),
    ((0x180B, 0x180D), "variation selector"),
    ((0x180F, 0x180F), "variation selector"),
    ((0x00AD, 0x00AD), "soft hyphen"),
    ((0x2061, 0x2064), "invisible operator or separator"),
    ((0x061C, 0x061C), "bidi control"),
    ((0x200E, 0x200F), "bidi control"),
    ((0x202A, 0x202E), "bidi control"),
    ((0x2066, 0x2069), "bidi control"),
    ((0x200B, 0x200D), "zero-width character"),
    ((0x2060, 0x2060), "zero-width character"),
    ((0xFEFF, 0xFEFF), "zero-width character"),
    ((0x180E, 0x180E), "zero-width character"),
    ((0x034F, 0x034F), "zero-width character"),
    ((0x115F, 0x1160), "Hangul filler"),
    ((0x3164, 0x3164), "Hangul filler"),
    ((0xFFA0, 0xFFA0), "Hangul filler"),
    ((0x206A, 0x206F), "deprecated format control"),
)


def kind(cp: int) -> str:
    for (lo, hi), name in KINDS:
        if lo <= cp <= hi:
            return name
    return "default-ignorable character"


# -- context: what is ordinary writing -------------------------------------------------
def _emoji(ch: str) -> bool:
    """Pictographic enough to take part in an emoji sequence (emoji, symbols, dingbats)."""
    cp = ord(ch)
    return (0x1F000 <= cp <= 0x1FAFF or 0x2600 <= cp <= 0x27BF or 0x2B00 <= cp <= 0x2BFF
            or 0x2190 <= cp <= 0x21FF or cp in (0x00A9, 0x00AE, 0x203C, 0x2049, 0x2122))


def _symbol(ch: str) -> bool:
    """A base that takes a text or emoji presentation selector: an emoji, a symbol or
    punctuation past ASCII (↔ ™ ‼ 〰), ℹ."""
    return _emoji(ch) or ch == "\u2139" or (
        ord(ch) > 0x7F and unicodedata.category(ch)[0] in "SP")


def _han(ch: str) -> bool:
    cp = ord(ch)
    return (0x3400 <= cp <= 0x4DBF or 0x4E00 <= cp <= 0x9FFF or 0xF900 <= cp <= 0xFAFF
            or 0x20000 <= cp <= 0x3FFFF)


def _letter(ch: str) -> bool:
    return unicodedata.category(ch)[0] in "LM"


def _modifier(ch: str) -> bool:
    return 0x1F3FB <= ord(ch) <= 0x1F3FF


def _selector_ok(line: str, i: int) -> bool:
    """One variation selector after a base that takes it (the module's docstring)."""
    if i == 0:
        return False
    base = line[i - 1]
    if ignorable(ord(base)):
        return False  # a second selector in a row, or one after another hidden character
    cp = ord(line[i])
    if cp in (0xFE0E, 0xFE0F):
        keycap = base in "0123456789#*" and line[i + 1:i + 2] == "\u20e3"
        return _symbol(base) or keycap
    if 0xFE00 <= cp <= 0xFE0D:
        return base == "0" or (ord(base) > 0x7F and unicodedata.category(base) in (
            "Sm", "So", "Lo"))
    if 0xE0100 <= cp <= 0xE01EF:
        return _han(base)
    return 0x1800 <= ord(base) <= 0x18AF  # Mongolian free variation selectors


def _joiner_ok(line: str, i: int) -> bool:
    """U+200D in an emoji ZWJ sequence; U+200C/U+200D between letters of a script that
    uses them."""
    before = i - 1
    while before >= 0 and (line[before] in "\ufe0e\ufe0f" or _modifier(line[before])):
        before -= 1
    if before < 0 or i + 1 >= len(line):
        return False
    a, b = line[before], line[i + 1]
    if line[i] == "\u200d" and _emoji(a) and _emoji(b):
        return True
    return ord(a) >= 0x0590 and ord(b) >= 0x0590 and _letter(a) and _letter(b)


RTL = LazyRe("[\u0590-\u08ff\ufb1d-\ufdff\ufe70-\ufeff]")
# a subdivision flag: a black flag, tag letters or digits, a cancel tag
FLAG_TAGS = LazyRe("\U0001F3F4[\U000E0030-\U000E0039\U000E0061-\U000E007A]{1,32}\U000E007F")


def _ordinary(line: str, i: int, flags: set[int]) -> bool:
    cp = ord(line[i])
    if i in flags:
        return True
    if cp in (0x200C, 0x200D):
        return _joiner_ok(line, i)
    if _within(cp, VARIATION_SELECTORS):
        return _selector_ok(line, i)
    if cp == 0x00AD:
        return 0 < i < len(line) - 1 and _letter(line[i - 1]) and _letter(line[i + 1])
    if cp in (0x200E, 0x200F, 0x061C):
        return RTL.search(line) is not None
    return False


# -- a line, normalised ------------------------------------------------------------------
class Run(NamedTuple):
    """Consecutive hidden characters of one kind on one line."""
    column: int  # 1-based, of the first
    kind: str
    first: int  # its code point
    last: int  # the last one's
    size: int  # how many


class Line(NamedTuple):
    clean: str  # every default-ignorable character removed
    spaced: str  # each replaced by a space (U+2063 used as a word break)
    runs: tuple[Run, ...]  # the hidden ones, not ordinary writing
    stripped: int  # how many were removed, ordinary ones included
    smuggled: tuple[tuple[str, str], ...]  # (kind, decoded text) from tags or selectors


CLEAN = Line("", "", (), 0, ())


def normalise(line: str) -> Line:
    """One line: stripped, counted, decoded. Without a default-ignorable character
    (nearly every line) it is returned as it is."""
    if IGNORABLE.search(line) is None:
        return Line(line, line, (), 0, ())
    flags = {i for m in FLAG_TAGS.finditer(line) for i in range(m.start(), m.end())
             } if "\U0001F3F4" in line else set()
    runs: list[Run] = []
    clean: list[str] = []
    spaced: list[str] = []
    stripped = 0
    prev = -2
    for i, ch in enumerate(line):
        cp = ord(ch)
        if not ignorable(cp):
            clean.append(ch)
            spaced.append(ch)
            continue
        stripped += 1
        spaced.append(" ")
        if _ordinary(line, i, flags):
            continue
        k = kind(cp)
        if runs and prev == i - 1 and runs[-1].kind == k:
            runs[-1] = runs[-1]._replace(last=cp, size=runs[-1].size + 1)
        else:
            runs.append(Run(i + 1, k, cp, cp, 1))
        prev = i
    return Line("".join(clean), "".join(spaced), tuple(runs), stripped,
                tuple(_smuggled(line, flags)))


TAG_TEXT = LazyRe("[\U000E0020-\U000E007E]{2,}")
SELECTOR_BYTES = LazyRe("[\ufe00-\ufe0f\U000E0100-\U000E01EF]{2,}")


def _smuggled(line: str, flags: set[int]) -> list[tuple[str, str]]:
    """Text carried by invisible characters: tag characters (each one an ASCII
    character, U+E0020–E007E) and runs of variation selectors (each one a byte:
    U+FE00–FE0F 0–15, U+E0100–E01EF 16–255, the emoji-smuggling encoding)."""
    out = []
    for m in TAG_TEXT.finditer(line):
        if m.start() not in flags:
            out.append(("tag characters", "".join(chr(ord(c) - 0xE0000) for c in m.group())))
    for m in SELECTOR_BYTES.finditer(line):
        data = bytes(ord(c) - 0xFE00 if ord(c) < 0x10000 else ord(c) - 0xE0100 + 16
                     for c in m.group())
        out.append(("variation selectors", data.decode("utf-8", "replace")))
    return out


def describe(runs: tuple[Run, ...] | list[Run]) -> str:
    """'3 tag characters, 1 soft hyphen': the count by kind."""
    counts: dict[str, int] = {}
    for r in runs:
        counts[r.kind] = counts.get(r.kind, 0) + r.size
    return ", ".join(f"{n} {_plural(k) if n > 1 else k}" for k, n in counts.items())


def _plural(k: str) -> str:
    return "invisible operators or separators" if k.startswith("invisible") else k + "s"


def run_detail(r: Run, lineno: int) -> str:
    """A run as evidence: code points, never the characters."""
    span = f"U+{r.first:04X}" if r.size == 1 else \
        f"{r.size} {_plural(r.kind)} U+{r.first:04X}…U+{r.last:04X}"
    return f"{span} at line {lineno}, column {r.column}" + (
        f" ({r.kind})" if r.size == 1 else "")


# -- markdown that is read but not shown -------------------------------------------------
class Region(NamedTuple):
    kind: str  # "an HTML comment", ...
    line: int  # where it starts, 1-based
    lines: int  # how many lines it spans
    text: str  # its text, lines joined by spaces


COMMENT = LazyRe(r"<!--(.*?)(?:-->|\Z)", re.S)
LINK_DEF = LazyRe(r"^ {0,3}\[[^\]\n]+\]:[ \t]*\S+(?:[ \t]+(\"[^\"\n]*\"|'[^'\n]*'|"
                  r"\([^)\n]*\)))?[ \t]*$", re.M)
DETAILS = LazyRe(r"<details\b[^>]*>(.*?)(?:</details\s*>|\Z)", re.S | re.I)
# an element shown with no size, no visibility, or not at all
ZERO_SIZE = LazyRe(r"<(\w+)\b[^>]*?(?:\bstyle\s*=\s*[\"'][^\"']*(?:font-size\s*:\s*0(?:\.0*)?"
                   r"(?:px|pt|em|rem|%)?\s*(?:;|[\"'])|display\s*:\s*none|visibility\s*:\s*"
                   r"hidden|opacity\s*:\s*0(?:\.0*)?\s*(?:;|[\"'])|(?:width|height)\s*:\s*0)|"
                   r"\bhidden\b(?![-\w]))[^>]*>(.*?)</\1\s*>", re.S | re.I)


def unrendered(text: str) -> list[Region]:
    """The parts of a markdown text that an agent reads and a person viewing it does not
    see (or sees only when expanded): HTML comments, link reference definitions (a
    `[//]: # (...)` comment among them), `<details>` bodies, zero-size or hidden
    elements."""
    if "<" not in text and "]:" not in text:
        return []
    out = []
    for rx, what, group in ((COMMENT, "an HTML comment", 1),
                            (LINK_DEF, "a link reference definition", 0),
                            (DETAILS, "a collapsed <details> block", 1),
                            (ZERO_SIZE, "a zero-size or hidden element", 2)):
        if rx is LINK_DEF and "]:" not in text:
            continue
        if rx is not LINK_DEF and "<" not in text:
            continue
        for m in rx.finditer(text):
            body = m.group(group) or ""
            out.append(Region(what, text.count("\n", 0, m.start(group)) + 1,
                              body.count("\n") + 1, " ".join(body.split())))
    return out
