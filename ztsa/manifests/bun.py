"""Bun: bun.lock (text: JSON with trailing commas); bun.lockb is binary and unreadable."""

from __future__ import annotations

from ztsa.manifests.lock import LockEntry
from ztsa.parsing import ParseError, load_jsonc, structural


@structural
def parse_bun_lock(text: str, path: str) -> list[LockEntry]:
    doc = load_jsonc(text, path)
    if not isinstance(doc, dict) or "lockfileVersion" not in doc:
        raise ParseError(path, "not a bun.lock (no lockfileVersion)")
    packages = doc.get("packages") or {}
    if not isinstance(packages, dict):
        raise ParseError(path, "packages is not an object")
    lines: dict[str, int] = {}
    for i, raw in enumerate(text.splitlines(), start=1):
        s = raw.strip()
        if s.startswith('"') and '": [' in s:
            lines.setdefault(s[1 : s.index('": [')], i)
    entries = []
    for key, value in packages.items():
        if not isinstance(value, list) or not value or not isinstance(value[0], str):
            raise ParseError(path, f"package {key!r} is not [\"name@version\", ...]")
        ident = value[0]
        at = ident.find("@", 1)  # after a scope's; a git source holds `git@` too
        name, ver = (ident[:at], ident[at + 1 :]) if at > 0 else (ident, "")
        integrity = next((v for v in value[1:] if isinstance(v, str) and
                          v.startswith(("sha512-", "sha256-", "sha1-"))), None)
        kind = "registry"
        if ver.lower().startswith(("github:", "git+", "git@", "git:")) or "#" in ver:
            kind = "git"
        elif ver.lower().startswith(("file:", "link:", "workspace:")):
            kind = "path"
        resolved = value[1] if len(value) > 1 and isinstance(value[1], str) else None
        entries.append(LockEntry(ecosystem="npm", name=name, version=ver, source=path,
                                 line=lines.get(key), resolved=resolved or None,
                                 integrity=integrity, install_script=None, kind=kind))
    return entries
