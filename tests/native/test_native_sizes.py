"""The limits native/ keeps (issue 43): no C file over 700 lines, no function over 120.

How a function is counted: native/*.c with comments, string and character literals
blanked (so that braces and parentheses in them count for nothing); a definition is a
line at column 0 that is not a preprocessor line and whose parenthesised declarator is
followed by `{` rather than `;` (a prototype) at brace depth 0; its size is the lines
from its opening `{` to its matching `}`, both included. Initialisers of tables at file
level (`= {`) are not functions. The first test checks the counter itself on a made-up
source, so that a counter that found nothing could not pass."""

from __future__ import annotations

import re
from pathlib import Path

NATIVE = Path(__file__).resolve().parents[2] / "native"
MAX_FILE_LINES = 700
MAX_FUNCTION_LINES = 120
_NAME = re.compile(r"([A-Za-z_]\w*)\s*\($")


def blank(text: str) -> str:
    """text with comments and string and character literals replaced by spaces
    (newlines kept, so line numbers stay)."""
    out: list[str] = []
    i, n = 0, len(text)
    while i < n:
        two = text[i:i + 2]
        if two == "/*":
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            out.append(re.sub(r"[^\n]", " ", text[i:end]))
            i = end
        elif two == "//":
            end = text.find("\n", i)
            end = n if end < 0 else end
            out.append(" " * (end - i))
            i = end
        elif text[i] in "\"'":
            quote, j = text[i], i + 1
            while j < n and text[j] != quote:
                j += 2 if text[j] == "\\" else 1
            out.append(" " * (min(j + 1, n) - i))
            i = j + 1
        else:
            out.append(text[i])
            i += 1
    return "".join(out)


def functions(text: str) -> list[tuple[str, int, int]]:
    """(name, first line of the body, its length in lines) of each function defined."""
    code = blank(text)
    found: list[tuple[str, int, int]] = []
    depth = 0
    line = 1
    head = ""  # the text since the last top-level `;`, `}` or preprocessor line
    start = 0
    name = ""
    for i, c in enumerate(code):
        if c == "\n":
            line += 1
            head = "" if depth == 0 and code[i + 1:i + 2] == "#" else head + " "
            continue
        if depth == 0:
            if c == "{":
                stripped = head.rstrip()
                paren = stripped.endswith(")") and not stripped.endswith("=")
                m = None
                if paren:  # the name before the declarator's first parenthesis
                    level, k = 0, len(stripped) - 1
                    while k >= 0:
                        level += {")": 1, "(": -1}.get(stripped[k], 0)
                        if level == 0 and stripped[k] == "(":
                            break
                        k -= 1
                    m = _NAME.search(stripped[:k + 1]) if k >= 0 else None
                name = m.group(1) if m and "=" not in stripped else ""
                start = line
            elif c in ";}":
                head = ""
                continue
            else:
                head += c
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                if name:
                    found.append((name, start, line - start + 1))
                name, head = "", ""
    return found


def test_the_counter_counts() -> None:
    source = (
        '#include <stdio.h>\n'
        'static const int TABLE[] = {\n  1, 2,\n};\n'
        'int proto(int a);\n'
        '/* a comment with { braces ( */\n'
        'static int\nsmall(int a,\n      int b) {\n    return a + b; /* } */\n}\n'
        'void big(void) {\n' + '    puts("}{");\n' * 130 + '    if (1) {\n    }\n}\n')
    assert functions(source) == [("small", 9, 3), ("big", 12, 134)]


def test_no_c_file_over_700_lines() -> None:
    sizes = {p.name: len(p.read_text().splitlines()) for p in sorted(NATIVE.glob("*.c"))}
    assert len(sizes) > 10
    assert {name: n for name, n in sizes.items() if n > MAX_FILE_LINES} == {}


def test_no_function_over_120_lines() -> None:
    seen = 0
    over: dict[str, int] = {}
    for path in sorted(NATIVE.glob("*.c")):
        for name, _start, n in functions(path.read_text()):
            seen += 1
            if n > MAX_FUNCTION_LINES:
                over[f"{path.name}:{name}"] = n
    assert seen > 300  # the counter found the functions, not nothing
    assert over == {}
