"""A lockfile entry in one shape for every ecosystem."""

from __future__ import annotations

from ztsa.records import NamedTuple


class LockEntry(NamedTuple):
    ecosystem: str  # npm, cargo, python
    name: str
    version: str
    source: str  # the lockfile, workspace-relative
    line: int | None
    resolved: str | None = None  # URL or source string
    integrity: str | None = None  # hash / checksum, None if absent
    install_script: bool | None = None  # None: the lockfile does not say
    kind: str = "registry"  # registry, git, path, url, link, bundled
    key: str | None = None  # the entry's key in the lockfile, to find its line on demand
    # npm's os, cpu and libc fields as the lockfile records them (empty: any)
    platform: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]] = ((), (), ())


def entry_line(text: str | None, entry: LockEntry) -> int | None:
    """The entry's line, found only when it is reported (a 3,000-entry lockfile is not
    indexed up front)."""
    if entry.line is not None or text is None or entry.key is None:
        return entry.line
    pos = text.find(f'"{entry.key}"')
    return text.count("\n", 0, pos) + 1 if pos >= 0 else None
