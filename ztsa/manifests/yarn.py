"""Yarn: classic yarn.lock (v1, its own format, parsed by hand) and Berry yarn.lock (YAML)."""

from __future__ import annotations

import re

from ztsa.lazy import LazyRe
from ztsa.manifests.common import load_yaml
from ztsa.manifests.lock import LockEntry
from ztsa.parsing import ParseError, structural

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

_V1_VALUE = LazyRe(r'^("(?:[^"\\]|\\.)*"|[^\s"]+)\s+(.*)$')


def _unquote(s: str) -> str:
    s = s.strip()
    if len(s) >= 2 and s[0] == s[-1] == '"':
        return s[1:-1].replace('\\"', '"').replace("\\\\", "\\")
    return s


def _name_of(spec: str) -> str:
    spec = _unquote(spec)
    at = spec.find("@", 1)  # scoped names start with @
    return spec[:at] if at > 0 else spec


@structural
def parse_v1(text: str, path: str) -> list[LockEntry]:
    """Classic format: unindented `specs:` headers, 2-space `key value` fields,
    4-space nested maps (dependencies). Comments start with #."""
    entries: list[LockEntry] = []
    current: dict[str, str] | None = None
    header_line = 0
    specs = ""

    def flush() -> None:
        if current is None:
            return
        resolved = current.get("resolved")
        kind = "registry"
        scheme = (resolved or "").lower()  # a URL's scheme in any case
        if resolved and (scheme.startswith(("git+", "git:", "github:")) or
                         "codeload.github.com" in scheme):
            kind = "git"
        elif resolved and scheme.startswith("file:"):
            kind = "path"
        entries.append(LockEntry(
            ecosystem="npm", name=_name_of(specs.split(",")[0]),
            version=current.get("version", ""), source=path, line=header_line,
            resolved=resolved, integrity=current.get("integrity"), install_script=None,
            kind=kind))

    for lineno, raw in enumerate(text.splitlines(), start=1):
        if not raw.strip() or raw.lstrip().startswith("#"):
            continue
        indent = len(raw) - len(raw.lstrip(" "))
        line = raw.strip()
        if indent == 0:
            if not line.endswith(":"):
                raise ParseError(path, f"line {lineno}: expected `specs:` header")
            flush()
            current, header_line, specs = {}, lineno, line[:-1]
        elif current is None:
            raise ParseError(path, f"line {lineno}: field before any entry")
        elif indent == 2:
            if line.endswith(":"):
                continue  # start of a nested map (dependencies, optionalDependencies)
            m = _V1_VALUE.match(line)
            if not m:
                raise ParseError(path, f"line {lineno}: cannot parse {line[:60]!r}")
            current[_unquote(m.group(1))] = _unquote(m.group(2))
        elif indent >= 4:
            continue  # nested dependency specs
        else:
            raise ParseError(path, f"line {lineno}: unexpected indentation")
    flush()
    return entries


@structural
def _conditions(value: object) -> tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """Berry's `conditions: os=darwin & cpu=arm64` as npm's (os, cpu, libc) fields."""
    fields: dict[str, list[str]] = {"os": [], "cpu": [], "libc": []}
    for part in str(value or "").split("&"):
        key, _, val = part.strip().partition("=")
        if key.strip() in fields and val.strip():
            fields[key.strip()].append(val.strip())
    return tuple(fields["os"]), tuple(fields["cpu"]), tuple(fields["libc"])


def parse_berry(text: str, path: str) -> list[LockEntry]:
    doc: Any = load_yaml(text, path)
    if not isinstance(doc, dict) or "__metadata" not in doc:
        raise ParseError(path, "not a Yarn Berry lockfile (no __metadata)")
    lines: dict[str, int] = {}
    for i, raw in enumerate(text.splitlines(), start=1):
        if raw and not raw[0].isspace() and raw.rstrip().endswith(":"):
            lines.setdefault(_unquote(raw.rstrip()[:-1]), i)
    entries = []
    for key, entry in doc.items():
        if key == "__metadata" or not isinstance(entry, dict):
            continue
        resolution = str(entry.get("resolution", ""))
        kind = "registry"
        if "@workspace:" in resolution or "@link:" in resolution or "@portal:" in resolution:
            kind = "link"
        elif "@patch:" in resolution:
            kind = "patch"
        elif "@file:" in resolution:
            kind = "path"
        elif re.search(r"@(git\+|https?://[^#]*\.git#|github:)", resolution, re.I) or \
                "#commit=" in resolution:
            kind = "git"
        elif re.search(r"@https?://", resolution, re.I):
            kind = "url"
        checksum = entry.get("checksum")
        entries.append(LockEntry(
            ecosystem="npm", name=_name_of(str(key).split(",")[0]),
            version=str(entry.get("version", "")), source=path,
            line=lines.get(str(key)), resolved=resolution,
            integrity=str(checksum) if checksum else None, install_script=None, kind=kind,
            platform=_conditions(entry.get("conditions"))))
    return entries


@structural
def parse_yarn_lock(text: str, path: str) -> tuple[str, list[LockEntry]]:
    """("v1" | "berry", entries)."""
    if "__metadata:" in text:
        return "berry", parse_berry(text, path)
    return "v1", parse_v1(text, path)
