"""A lockfile entry in one shape for every ecosystem."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LockEntry:
    ecosystem: str  # npm, cargo, python
    name: str
    version: str
    source: str  # the lockfile, workspace-relative
    line: int | None
    resolved: str | None = None  # URL or source string
    integrity: str | None = None  # hash / checksum, None if absent
    install_script: bool | None = None  # None: the lockfile does not say
    kind: str = "registry"  # registry, git, path, url, link, bundled
