"""npm: package.json, package-lock.json and npm-shrinkwrap.json (lockfileVersion 1-3)."""

from __future__ import annotations

from ztsa.lazy import LazyRe
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


# npm-package-arg reads a URL scheme case-insensitively (url.parse lower-cases it)
SCHEME = LazyRe(r"^([A-Za-z][A-Za-z0-9+.-]*):")
HOSTED = ("github", "gitlab", "bitbucket", "gist")  # hosted-git-info's shortcuts
GIT_HOSTS = ("github.com", "gitlab.com", "bitbucket.org", "gist.github.com")
SCP = LazyRe(r"^[^@/:#\s]+@[^@/:#\s]+:")  # user@host:path, git over ssh
SHORTHAND = LazyRe(r"^[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+(?:#.*)?$")  # owner/repo on GitHub
# package managers' protocols that name the registry, the tree or a workspace
PROTOCOLS = frozenset({"npm", "jsr", "catalog", "workspace", "file", "link", "portal",
                       "patch", "exec", "runtime"})
COMMIT = LazyRe(r"(?:commit=)?[0-9a-f]{40}")
HEX40 = LazyRe(r"[0-9a-f]{40}")


def spec_kind(spec: str) -> str:
    """What npm fetches for a dependency spec, or a lockfile's resolved value: git, url
    (http(s)), path, protocol (one of PROTOCOLS), other (a scheme no package manager
    fetches from) or registry (a version, range or tag)."""
    s = spec.strip()
    m = SCHEME.match(s)
    if m and len(m.group(1)) > 1:  # not a Windows drive letter
        scheme = m.group(1).lower()
        if scheme == "git" or scheme.startswith("git+") or scheme in HOSTED:
            return "git"
        if scheme in ("http", "https"):
            return "git" if _hosted_git(s) else "url"
        return "path" if scheme == "file" else "protocol" if scheme in PROTOCOLS else "other"
    if SCP.match(s):
        return "git"
    if s.startswith((".", "/", "~")) or m:
        return "path"
    if SHORTHAND.match(s):
        return "git"  # hosted-git-info takes owner/repo before a path
    return "path" if "/" in s or s.lower().endswith((".tgz", ".tar.gz", ".tar")) else "registry"


def _hosted_git(url: str) -> bool:
    """`https://github.com/o/r.git#ref`: hosted-git-info's, which npm clones. Any other
    http(s) URL npm fetches as a tarball, whatever its fragment."""
    base, sep, _ = url.partition("#")
    host = base.partition("//")[2].partition("/")[0].rpartition("@")[2].lower()
    return bool(sep) and base.lower().endswith(".git") and host in GIT_HOSTS


def commit_pinned(ref: str) -> bool:
    """Does a git spec or a git lock entry name a full 40-hex commit? In the fragment
    (npm's `#<sha>`, Yarn's `#commit=<sha>`, pnpm's `repo#commit`), or as the last path
    segment of an http(s) archive (codeload's `tar.gz/<sha>`). A ref that only contains
    one (`#release-<sha>`) is a branch or tag, and so is upper-case hex."""
    base, sep, fragment = ref.strip().partition("#")
    if sep:
        return any(COMMIT.fullmatch(p) for p in fragment.replace("::", "&").split("&"))
    if spec_kind(base) in ("git", "url") and base[:4].lower() == "http":
        return HEX40.fullmatch(base.rstrip("/").rsplit("/", 1)[-1]) is not None
    return False


def _source(entry: dict[str, Any]) -> str | None:
    """Where npm fetches a package-lock entry from: its `resolved`, or else a `version`
    that is a spec rather than a version (`github:o/r#main`; npm fetches that too)."""
    resolved = entry.get("resolved")
    if isinstance(resolved, str):
        return resolved
    version = entry.get("version")
    if isinstance(version, str) and spec_kind(version) not in ("registry", "protocol"):
        return version
    return None


def _kind(resolved: str | None, entry: dict[str, Any]) -> str:
    if entry.get("link"):
        return "link"
    if entry.get("inBundle") or entry.get("bundled"):
        return "bundled"
    if not resolved:
        return "registry"
    kind = spec_kind(resolved)
    if kind in ("git", "path"):
        return kind
    if kind == "url":
        return "registry" if resolved.lower().endswith(".tgz") else "url"
    return "url"  # another scheme, or a bare name: SUP002 judges it, never skips it


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
            resolved = _source(entry)
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
            resolved = _source(entry)
            version_field = str(entry.get("version", ""))
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
