"""npm: package.json, package-lock.json and npm-shrinkwrap.json (lockfileVersion 1-3)."""

from __future__ import annotations

from ztsa.manifests.common import key_lines
from ztsa.manifests.lock import LockEntry
from ztsa.parsing import ParseError, line_of, load_json, structural
from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

DEP_FIELDS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")
LIFECYCLE = ("preinstall", "install", "postinstall")


class PackageJson(NamedTuple):
    path: str
    text: str
    data: dict[str, Any]

    @property
    def scripts(self) -> dict[str, str]:
        s = self.data.get("scripts")
        return {k: v for k, v in s.items() if isinstance(v, str)} if isinstance(s, dict) else {}

    def deps(self) -> list[tuple[str, str, str]]:
        """(field, name, spec) for every declared dependency."""
        out = []
        for f in DEP_FIELDS:
            d = self.data.get(f)
            if isinstance(d, dict):
                out += [(f, k, v) for k, v in d.items() if isinstance(v, str)]
        return out

    def line(self, needle: str) -> int | None:
        return line_of(self.text, needle)

    @property
    def workspaces(self) -> list[str]:
        w = self.data.get("workspaces")
        if isinstance(w, dict):
            w = w.get("packages")
        return [x for x in w if isinstance(x, str)] if isinstance(w, list) else []


@structural
def parse_package_json(text: str, path: str) -> PackageJson:
    data = load_json(text, path)
    if not isinstance(data, dict):
        raise ParseError(path, "top level is not an object")
    return PackageJson(path, text, data)


class NpmLock:
    __slots__ = ("entries", "path", "version")

    def __init__(self, path: str, version: int) -> None:
        self.path = path
        self.version = version
        self.entries: list[LockEntry] = []


def _kind(resolved: str | None, entry: dict[str, Any]) -> str:
    if entry.get("link"):
        return "link"
    if entry.get("inBundle") or entry.get("bundled"):
        return "bundled"
    if not resolved:
        return "registry"
    if resolved.startswith(("git+", "git:", "github:")) or ("#" in resolved and \
            ".git" in resolved):
        return "git"
    if resolved.startswith("file:") or not resolved.startswith(("http:", "https:")):
        return "path"
    return "registry" if resolved.endswith(".tgz") else "url"


def _names(value: object) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


# this machine as Node names it (process.arch); os is always linux here
NODE_ARCH = {"x86_64": "x64", "amd64": "x64", "aarch64": "arm64", "arm64": "arm64",
             "armv7l": "arm", "armv6l": "arm", "i686": "ia32", "i386": "ia32",
             "ppc64le": "ppc64", "s390x": "s390x", "riscv64": "riscv64"}


def _matches(wanted: tuple[str, ...], have: str) -> bool:
    """npm's own test (npm-install-checks): names, or !names that exclude."""
    if not wanted or "any" in wanted:
        return True
    negated = [w[1:] for w in wanted if w.startswith("!")]
    if negated and have in negated:
        return False
    plain = [w for w in wanted if not w.startswith("!")]
    return not plain or have in plain


def skipped_here(platform: tuple[tuple[str, ...], tuple[str, ...], tuple[str, ...]]
                 ) -> str | None:
    """Why npm never installs a package of these os/cpu/libc fields on this machine (it
    skips an optional one, and refuses any other), or None when it may."""
    import platform as pf

    os_, cpu, libc = platform
    arch = NODE_ARCH.get(pf.machine().lower(), pf.machine().lower())
    if not _matches(os_, "linux"):
        return f"os {', '.join(os_)}"
    if not _matches(cpu, arch):
        return f"cpu {', '.join(cpu)}"
    if libc:
        name = _libc()
        if name and not _matches(libc, name):
            return f"libc {', '.join(libc)}"
    return None


def _libc() -> str:
    """glibc or musl, as npm names this machine's C library; "" when it cannot tell
    (then nothing is skipped for its libc)."""
    import glob
    import platform as pf

    name = pf.libc_ver()[0]
    if name == "glibc":
        return name
    return "musl" if glob.glob("/lib/ld-musl-*.so.1") else ""


@structural
def parse_package_lock(text: str, path: str) -> NpmLock:
    data = load_json(text, path)
    if not isinstance(data, dict):
        raise ParseError(path, "top level is not an object")
    version = data.get("lockfileVersion")
    if version not in (1, 2, 3):
        raise ParseError(path, f"unknown lockfileVersion {version!r} (known: 1, 2, 3)")
    lock = NpmLock(path, version)
    packages = data.get("packages")
    if isinstance(packages, dict) and version >= 2:
        for key, entry in packages.items():
            if "node_modules/" not in key or not isinstance(entry, dict):
                continue
            name = entry.get("name") or key.rsplit("node_modules/", 1)[-1]
            resolved = entry.get("resolved")
            resolved = resolved if isinstance(resolved, str) else None
            integrity = entry.get("integrity")
            lock.entries.append(LockEntry(
                ecosystem="npm", name=str(name), version=str(entry.get("version", "")),
                source=path, line=None, resolved=resolved,
                integrity=integrity if isinstance(integrity, str) else None,
                install_script=bool(entry.get("hasInstallScript")),
                kind=_kind(resolved, entry), key=key,
                platform=(_names(entry.get("os")), _names(entry.get("cpu")),
                          _names(entry.get("libc"))),
            ))
        return lock
    if version >= 2 and "packages" not in data:
        raise ParseError(path, f"lockfileVersion {version} without a packages section")
    # lockfileVersion 1: nested "dependencies"; install scripts are not recorded
    lines = key_lines(text, r'^\s*"((?:[^"\\]|\\.)+)": \{')
    stack = [data.get("dependencies") or {}]
    while stack:
        deps = stack.pop()
        if not isinstance(deps, dict):
            raise ParseError(path, "dependencies is not an object")
        for name, entry in deps.items():
            if not isinstance(entry, dict):
                raise ParseError(path, f"dependency {name!r} is not an object")
            resolved = entry.get("resolved") if isinstance(entry.get("resolved"), str) else None
            version_field = str(entry.get("version", ""))
            if resolved is None and version_field.startswith(("git", "github:", "http")):
                resolved = version_field
            integrity = entry.get("integrity")
            lock.entries.append(LockEntry(
                ecosystem="npm", name=name, version=version_field, source=path,
                line=lines.get(name), resolved=resolved,
                integrity=integrity if isinstance(integrity, str) else None,
                install_script=None, kind=_kind(resolved, entry),
            ))
            if "dependencies" in entry:
                stack.append(entry["dependencies"])
    return lock
