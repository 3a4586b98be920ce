"""Cargo: Cargo.toml, Cargo.lock (v1 to v4), .cargo/config.toml, cargo-deny's deny.toml."""

from __future__ import annotations

from ztsa.manifests.lock import LockEntry
from ztsa.parsing import ParseError, line_of, load_toml, structural
from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEP_TABLES = ("dependencies", "dev-dependencies", "build-dependencies")
CRATES_IO = ("registry+https://github.com/rust-lang/crates.io-index",
             "sparse+https://index.crates.io/")


class CargoToml(NamedTuple):
    path: str
    text: str
    data: dict[str, Any]

    @property
    def is_workspace(self) -> bool:
        return isinstance(self.data.get("workspace"), dict)

    @property
    def package(self) -> dict[str, Any]:
        p = self.data.get("package")
        return p if isinstance(p, dict) else {}

    @property
    def name(self) -> str:
        return str(self.package.get("name", ""))

    @property
    def proc_macro(self) -> bool:
        lib = self.data.get("lib")
        return isinstance(lib, dict) and lib.get("proc-macro") is True

    def deps(self) -> list[tuple[str, str, Any]]:
        """(table, name, spec) from [dependencies] and friends, incl. [target.*.x]."""
        tables: list[tuple[str, Any]] = [(t, self.data.get(t)) for t in DEP_TABLES]
        ws = self.data.get("workspace")
        if isinstance(ws, dict):
            tables.append(("workspace.dependencies", ws.get("dependencies")))
        targets = self.data.get("target")
        if isinstance(targets, dict):
            for tname, tdata in targets.items():
                if isinstance(tdata, dict):
                    tables += [(f"target.{tname}.{t}", tdata.get(t)) for t in DEP_TABLES]
        out = []
        for table, deps in tables:
            if isinstance(deps, dict):
                out += [(table, name, spec) for name, spec in deps.items()]
        return out

    def line(self, needle: str) -> int | None:
        return line_of(self.text, needle)


@structural
def parse_cargo_toml(text: str, path: str) -> CargoToml:
    return CargoToml(path, text, load_toml(text, path))


@structural
def parse_cargo_lock(text: str, path: str) -> tuple[int, list[LockEntry]]:
    """(lock version, entries). v1 keeps checksums in [metadata]."""
    data = load_toml(text, path)
    version = data.get("version", 1)
    if version not in (1, 2, 3, 4):
        raise ParseError(path, f"unknown Cargo.lock version {version!r} (known: 1 to 4)")
    packages = data.get("package") or []
    if not isinstance(packages, list):
        raise ParseError(path, "package is not an array of tables")
    headers = [i for i, ln in enumerate(text.splitlines(), start=1)
               if ln.strip() == "[[package]]"]
    metadata = data.get("metadata") or {}
    entries = []
    for idx, pkg in enumerate(packages):
        if not isinstance(pkg, dict) or "name" not in pkg:
            raise ParseError(path, f"package #{idx + 1} has no name")
        name, ver = str(pkg["name"]), str(pkg.get("version", ""))
        source = pkg.get("source")
        checksum = pkg.get("checksum")
        if checksum is None and source and isinstance(metadata, dict):
            checksum = metadata.get(f"checksum {name} {ver} ({source})")
        kind = "path"
        if isinstance(source, str):
            if source.startswith("git+"):
                kind = "git"
            elif source.startswith(("registry+", "sparse+")):
                kind = "registry"
            else:
                kind = "url"
        entries.append(LockEntry(
            ecosystem="cargo", name=name, version=ver, source=path,
            line=headers[idx] if idx < len(headers) else None,
            resolved=source if isinstance(source, str) else None,
            integrity=str(checksum) if checksum and checksum != "<none>" else None,
            kind=kind))
    return int(version), entries


def deny_allowed_build_scripts(data: dict[str, Any]) -> set[str]:
    """cargo-deny: [bans.build] allow-build-scripts = [{ name = "x" }, "y"]."""
    build = ((data.get("bans") or {}).get("build") or {}) if isinstance(data, dict) else {}
    allowed = build.get("allow-build-scripts") if isinstance(build, dict) else None
    out: set[str] = set()
    for item in allowed or []:
        if isinstance(item, str):
            out.add(item.split("@")[0])
        elif isinstance(item, dict) and "name" in item:
            out.add(str(item["name"]))
        elif isinstance(item, dict) and "crate" in item:
            out.add(str(item["crate"]).split("@")[0])
    return out
