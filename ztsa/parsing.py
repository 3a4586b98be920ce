"""Small, strict parsers shared by rules: JSON with comments, git config, line lookup.

Every parser raises :class:`ParseError` with a message that names what is wrong;
rules turn it into ``unknown``, never into a pass.
"""

from __future__ import annotations

import functools
import re
import sys
from collections.abc import Callable

from ztsa.host import ProbeError
from ztsa.lazy import LazyRe

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, ParamSpec, TypeVar
    P = ParamSpec("P")
    R = TypeVar("R")


class ParseError(ProbeError):
    pass


def strip_jsonc(text: str) -> str:
    """Remove // and /* */ comments and trailing commas outside strings."""
    out: list[str] = []
    i, n = 0, len(text)
    in_str = False
    while i < n:
        c = text[i]
        if in_str:
            out.append(c)
            if c == "\\" and i + 1 < n:
                out.append(text[i + 1])
                i += 2
                continue
            if c == '"':
                in_str = False
            i += 1
        elif c == '"':
            in_str = True
            out.append(c)
            i += 1
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                raise ValueError("unterminated /* comment")
            out.append(re.sub(r"[^\n]", " ", text[i : j + 2]))  # keep line numbers
            i = j + 2
        elif c == ",":
            out.append(" " if _closes_next(text, i + 1) else c)
            i += 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def _closes_next(text: str, k: int) -> bool:
    """Is the next token after position k (skipping blanks and comments) } or ]?"""
    n = len(text)
    while k < n:
        if text[k] in " \t\r\n":
            k += 1
        elif text.startswith("//", k):
            j = text.find("\n", k)
            k = n if j < 0 else j
        elif text.startswith("/*", k):
            j = text.find("*/", k + 2)
            k = n if j < 0 else j + 2
        else:
            return text[k] in "}]"
    return False


def load_jsonc(text: str, name: str) -> Any:
    """Parse JSON that may hold comments and trailing commas (VS Code, bun.lock)."""
    import json  # here: most gates read no JSON, and json's import is start-up cost

    try:
        return json.loads(strip_jsonc(text))
    except (ValueError, RecursionError) as exc:
        raise ParseError(name, f"not valid JSON: {exc}") from exc


def load_json(text: str, name: str) -> Any:
    import json

    try:
        return json.loads(text)
    except (ValueError, RecursionError) as exc:
        raise ParseError(name, f"not valid JSON: {exc}") from exc


def load_toml(text: str, name: str) -> dict[str, Any]:
    """TOML 1.0 by the standard library; a document it refuses is read again as TOML 1.1
    (tomli 2.4: newlines and trailing commas in inline tables, which Cargo accepts)."""
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except (tomllib.TOMLDecodeError, RecursionError) as exc:
        try:
            import tomli
        except ImportError:
            raise ParseError(name, f"not valid TOML: {exc}") from exc
        try:
            doc: dict[str, Any] = tomli.loads(text)
        except (tomli.TOMLDecodeError, RecursionError):
            raise ParseError(name, f"not valid TOML: {exc}") from exc
        return doc


def line_of(text: str, needle: str, start: int = 1) -> int | None:
    """1-based line of the first line at or after ``start`` containing ``needle``."""
    for i, line in enumerate(text.splitlines()[start - 1 :], start=start):
        if needle in line:
            return i
    return None


def json_key_line(text: str, key: str) -> int | None:
    return line_of(text, f'"{key}"')


_SECTION = LazyRe(r'^\s*\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$')
_KEY = LazyRe(r"^\s*([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$")


def parse_git_config(text: str, name: str) -> list[tuple[str, str, str, int]]:
    """git-config(1) syntax: a list of (section[.subsection], key, value, line)."""
    out: list[tuple[str, str, str, int]] = []
    section: str | None = None
    lines: list[tuple[int, str]] = []
    for lineno, raw in enumerate(text.splitlines(), start=1):
        # a value continued on the next line: git drops the backslash and the newline
        if lines and lines[-1][1].endswith("\\") and \
                (len(lines[-1][1]) - len(lines[-1][1].rstrip("\\"))) % 2:
            lines[-1] = (lines[-1][0], lines[-1][1][:-1] + raw)
        else:
            lines.append((lineno, raw))
    for lineno, raw in lines:
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        m = _SECTION.match(line)
        if m:
            sect, sub, rest = m.group(1).lower(), m.group(2), m.group(3).strip()
            if "." in sect and sub is None:  # [section.subsection] legacy form
                sect, _, sub = sect.partition(".")
            section = f"{sect}.{sub}" if sub is not None else sect
            if not rest or rest[0] in "#;":
                continue
            line = rest
        if section is None:
            raise ParseError(name, f"line {lineno}: key outside any section")
        k = _KEY.match(line)
        if not k:
            raise ParseError(name, f"line {lineno}: cannot parse {raw.strip()[:60]!r}")
        value = (k.group(2) or "true").split(" #")[0].split(" ;")[0].strip().strip('"')
        out.append((section, k.group(1).lower(), value, lineno))
    return out


def continued_lines(text: str) -> list[tuple[int, str]]:
    """Lines with backslash-newline continuations joined, with their first line number."""
    out: list[tuple[int, str]] = []
    buf: list[str] = []
    start = 1
    for i, raw in enumerate(text.splitlines(), start=1):
        if not buf:
            start = i
        if raw.endswith("\\"):
            buf.append(raw[:-1])
            continue
        buf.append(raw)
        out.append((start, " ".join(buf)))
        buf = []
    if buf:
        out.append((start, " ".join(buf)))
    return out


def parse_ini_pairs(text: str) -> list[tuple[str, str, int]]:
    """`key = value` lines of an .npmrc-style file (no sections), with line numbers."""
    out: list[tuple[str, str, int]] = []
    for i, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#;[":
            continue
        key, sep, value = line.partition("=")
        if sep:
            out.append((key.strip(), value.strip().strip('"'), i))
    return out


def _ini_value(text: str) -> str:
    """A value as npm's ini reads it: quotes taken off, else cut at a comment."""
    if len(text) > 1 and text[0] == text[-1] and text[0] in "'\"":
        return text[1:-1]
    for i, c in enumerate(text):
        if c in ";#" and (i == 0 or text[i - 1] != "\\"):
            return text[:i].strip()
    return text


def npmrc_top_level(text: str) -> dict[str, tuple[str, int]]:
    """What npm reads of an .npmrc: the keys before the first `[section]` (a key under a
    section is that section's, not npm's), the last of each, a bare key as "true"."""
    out: dict[str, tuple[str, int]] = {}
    for i, raw in enumerate(text.splitlines(), start=1):
        line = raw.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("[") and line.endswith("]"):
            break
        key, sep, value = line.partition("=")
        out[_ini_value(key.strip())] = (_ini_value(value.strip()) if sep else "true", i)
    return out


def structural(fn: Callable[P, R]) -> Callable[P, R]:
    """A parser whose input has the wrong shape (a list where an object belongs, a number
    where a string does) raises ParseError naming the file, not a Python error."""

    @functools.wraps(fn)
    def wrapper(*args: P.args, **kwargs: P.kwargs) -> R:
        try:
            return fn(*args, **kwargs)
        except ParseError:
            raise
        except (AttributeError, TypeError, ValueError, KeyError, IndexError,
                RecursionError) as exc:
            name = str(args[1]) if len(args) > 1 else "input"
            raise ParseError(name, f"unexpected structure ({type(exc).__name__}: {exc})") \
                from exc

    return wrapper


def every_string(value: Any, depth: int = 0) -> list[str]:
    """The strings of a parsed value, in its lists and tables too (mise's `enter =
    ["a.sh", {script = "b.sh"}]`, a hook manager's commands), 8 levels at most."""
    if isinstance(value, str):
        return [value]
    if depth >= 8:
        return []
    items = value.values() if isinstance(value, dict) else value if isinstance(
        value, list) else ()
    return [s for v in items for s in every_string(v, depth + 1)]
