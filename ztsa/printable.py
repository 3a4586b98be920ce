"""Text from the repository or the tree, made safe to show: a path or a name may hold a
newline (a forged report line, a TOML comment that ends and becomes an entry), an escape
sequence (a terminal that hides, recolours or retitles) or a bidirectional override
(text shown in another order than it is read). Each such character is shown as its
escape, so what the person reads is what is there."""

from __future__ import annotations

import re

# C0 but tab, DEL, C1; bidi marks, embeddings, overrides and isolates; line and
# paragraph separators
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069"
                     "\u2028\u2029]")


def _escape(m: re.Match[str]) -> str:
    c = m.group()
    return {"\n": "\\n", "\r": "\\r"}.get(c) or (
        f"\\x{ord(c):02x}" if ord(c) < 0x100 else f"\\u{ord(c):04x}")


def printable(text: str) -> str:
    return _UNSAFE.sub(_escape, text)
