"""pnpm: pnpm-lock.yaml (lockfile versions 6 to 9) and pnpm-workspace.yaml."""

from __future__ import annotations

from ztsa.manifests.common import load_yaml
from ztsa.manifests.lock import LockEntry
from ztsa.parsing import ParseError, structural

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

KNOWN = ("6", "7", "8", "9")


class PnpmLock:
    __slots__ = ("entries", "path", "settings", "version")

    def __init__(self, path: str, version: str, settings: dict[str, Any]) -> None:
        self.path = path
        self.version = version
        self.settings = settings
        self.entries: list[LockEntry] = []

    @property
    def records_build(self) -> bool:
        """Lockfiles before 9.0 record requiresBuild; 9.0 removed it."""
        return self.version.split(".")[0] in ("6", "7", "8")


def _split_key(key: str) -> tuple[str, str]:
    """'/@scope/name@1.2.3(peer@1)' or '/name/1.2.3' -> (name, version); a git or
    tarball source ('name@git+https://git@host:o/r.git#sha', 'name@https://...') keeps
    its source as the version."""
    k = key.lstrip("/").split("(", 1)[0]
    source = k.find("@", 1)
    if source > 0 and k[source + 1:].lower().startswith(
            ("git+", "git:", "http:", "https:", "file:")):
        return k[:source], k[source + 1:]
    at = k.rfind("@")
    if at > 0:
        return k[:at], k[at + 1 :]
    parts = k.rsplit("/", 1)  # lockfile v5 style name/version
    return (parts[0], parts[1]) if len(parts) == 2 else (k, "")


@structural
def parse_pnpm_lock(text: str, path: str) -> PnpmLock:
    doc = load_yaml(text, path)
    if not isinstance(doc, dict):
        raise ParseError(path, "top level is not a mapping")
    version = str(doc.get("lockfileVersion", ""))
    if version.split(".")[0] not in KNOWN:
        raise ParseError(path, f"unknown lockfileVersion {version!r} (known: 6 to 9)")
    lock = PnpmLock(path, version, settings=doc.get("settings") or {})
    lines: dict[str, int] = {}
    in_packages = False
    for i, raw in enumerate(text.splitlines(), start=1):
        if raw and not raw[0].isspace():
            in_packages = raw.startswith("packages:")
        elif in_packages and raw.startswith("  ") and not raw.startswith("   "):
            key = raw.strip().rstrip(":").strip("'\"")
            lines.setdefault(key, i)
    packages = doc.get("packages") or {}
    if not isinstance(packages, dict):
        raise ParseError(path, "packages is not a mapping")
    for key, entry in packages.items():
        if not isinstance(entry, dict):
            raise ParseError(path, f"package {key!r} is not a mapping")
        name, ver = _split_key(str(key))
        resolution = entry.get("resolution") or {}
        if not isinstance(resolution, dict):
            raise ParseError(path, f"package {key!r}: resolution is not a mapping")
        if resolution.get("type") == "variations":  # a runtime: one archive per platform
            lock.entries.extend(_variants(path, key, name, ver, entry, lines.get(str(key))))
            continue
        tarball = resolution.get("tarball")
        kind = "registry"
        if resolution.get("type") == "git" or "repo" in resolution:
            kind = "git"
        elif (resolution.get("type") == "directory" or resolution.get("directory")
              or (tarball and not str(tarball).lower().startswith(("http:", "https:")))):
            kind = "path"
        elif tarball:
            kind = "url"
        requires = entry.get("requiresBuild")
        platform = tuple(tuple(str(v) for v in entry.get(k) or [] if isinstance(v, str))
                         if isinstance(entry.get(k), list) else ()
                         for k in ("os", "cpu", "libc"))
        lock.entries.append(LockEntry(
            ecosystem="npm", name=str(entry.get("name") or name),
            version=str(entry.get("version") or ver), source=path, line=lines.get(str(key)),
            resolved=str(tarball or (f"{resolution['repo']}#{resolution['commit']}"
                                     if resolution.get("repo") and resolution.get("commit")
                                     else resolution.get("repo")) or "") or None,
            integrity=resolution.get("integrity"),
            install_script=(bool(requires) if lock.records_build else None), kind=kind,
            platform=platform))  # type: ignore[arg-type]
    return lock


def _variants(path: str, key: Any, name: str, ver: str, entry: dict[str, Any],
              line: int | None) -> list[LockEntry]:
    """`node@runtime:24.6.0`: pnpm fetches the one archive whose targets match this
    machine, each with its own integrity: an entry per variant, with its platform."""
    out = []
    for variant in entry["resolution"].get("variants") or []:
        res = variant.get("resolution") if isinstance(variant, dict) else None
        if not isinstance(res, dict):
            raise ParseError(path, f"package {key!r}: a variant without a resolution")
        targets = [t for t in variant.get("targets") or [] if isinstance(t, dict)]
        platform = tuple(tuple(dict.fromkeys(str(t[k]) for t in targets if t.get(k)))
                         for k in ("os", "cpu", "libc"))
        out.append(LockEntry(
            ecosystem="npm", name=str(entry.get("name") or name),
            version=str(entry.get("version") or ver), source=path, line=line,
            resolved=str(res.get("url") or res.get("tarball") or "") or None,
            integrity=res.get("integrity"), install_script=None, kind="url",
            platform=platform))  # type: ignore[arg-type]
    return out


def only_built(doc: Any) -> list[str] | None:
    """onlyBuiltDependencies from a pnpm-workspace.yaml or package.json "pnpm" object."""
    if not isinstance(doc, dict):
        return None
    value = doc.get("onlyBuiltDependencies")
    if isinstance(value, list):
        return [str(x) for x in value]
    return None
