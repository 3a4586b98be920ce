"""Regular expressions compiled on first use: most rules never reach most patterns,
and ztsa's start-up time is paid before every agent command."""

from __future__ import annotations

import re
from collections.abc import Iterator

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


class LazyRe:
    __slots__ = ("_compiled", "flags", "pattern")

    def __init__(self, pattern: str, flags: int = 0) -> None:
        self.pattern = pattern
        self.flags = flags
        self._compiled: re.Pattern[str] | None = None

    @property
    def compiled(self) -> re.Pattern[str]:
        if self._compiled is None:
            self._compiled = re.compile(self.pattern, self.flags)
        return self._compiled

    def search(self, s: str, *args: Any) -> re.Match[str] | None:
        return self.compiled.search(s, *args)

    def match(self, s: str, *args: Any) -> re.Match[str] | None:
        return self.compiled.match(s, *args)

    def fullmatch(self, s: str, *args: Any) -> re.Match[str] | None:
        return self.compiled.fullmatch(s, *args)

    def finditer(self, s: str, *args: Any) -> Iterator[re.Match[str]]:
        return self.compiled.finditer(s, *args)

    def sub(self, repl: str, s: str, count: int = 0) -> str:
        return self.compiled.sub(repl, s, count)


def line_hits(text: str, patterns: list[LazyRe] | tuple[LazyRe, ...]) \
        -> list[tuple[int, int, re.Match[str]]]:
    """(line number, pattern index, first match in that line) for every line a pattern
    matches, ordered by line and pattern. A pattern that matches nowhere in the whole text
    (the common case) costs one search instead of one per line."""
    hits: list[tuple[int, int, re.Match[str]]] = []
    lines: list[str] | None = None
    for i, rx in enumerate(patterns):
        if rx.search(text) is None:  # a match within a line is a match within the text
            continue
        if lines is None:
            lines = text.splitlines()
        for lineno, line in enumerate(lines, start=1):
            m = rx.search(line)
            if m:
                hits.append((lineno, i, m))
    hits.sort(key=lambda h: (h[0], h[1]))
    return hits
