"""Python: requirements/constraints files, pyproject.toml and the lockfiles
(uv.lock, poetry.lock, Pipfile.lock, pdm.lock, pylock.toml)."""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from ztsa.lazy import LazyRe
from ztsa.manifests.lock import LockEntry
from ztsa.parsing import ParseError, line_of, load_json, load_toml, structural
from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

INDEX_OPTIONS = {"-i": "--index-url", "--index-url": "--index-url",
                 "--extra-index-url": "--extra-index-url", "--trusted-host": "--trusted-host",
                 "-f": "--find-links", "--find-links": "--find-links"}
INCLUDE_OPTIONS = {"-r": "-r", "--requirement": "-r", "-c": "-c", "--constraint": "-c"}
FLAG_OPTIONS = {"--no-index", "--pre", "--prefer-binary", "--require-hashes",
                "--only-binary", "--no-binary", "--use-feature", "--config-settings"}
# PEP 508 name (no extras, no marker) pinned with == to a PEP 440-shaped version
_SIMPLE_PIN = LazyRe(r"^([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)\s*==\s*"
                         r"([0-9][0-9A-Za-z.!+_-]*)$")
_VERSION: re.Pattern[str] | None = None


def _valid_version(v: str) -> bool:
    """PEP 440, with packaging's own version grammar."""
    global _VERSION
    if _VERSION is None:
        from packaging.version import VERSION_PATTERN

        _VERSION = re.compile(r"^\s*" + VERSION_PATTERN + r"\s*$", re.VERBOSE | re.IGNORECASE)
    return _VERSION.match(v) is not None


COMMIT = LazyRe(r"@([0-9a-f]{40})(?:[#&]|$)")


class Requirement(NamedTuple):
    line: int
    text: str  # the requirement without options and comments
    name: str | None
    specifier: str  # packaging's specifier string, "" if none
    url: str | None
    hashes: list[str]
    editable: bool = False

    @property
    def pinned(self) -> bool:
        spec = self.specifier
        return (spec.startswith(("==", "===")) and "," not in spec and "*" not in spec)

    @property
    def kind(self) -> str:
        """named, vcs, url, path"""
        if self.url is None:
            return "named"
        u = self.url
        if u.startswith(("git+", "hg+", "svn+", "bzr+")):
            return "vcs"
        if u.startswith(("http:", "https:")):
            return "url"
        return "path"

    @property
    def vcs_pinned(self) -> bool:
        return bool(self.url and COMMIT.search(self.url))


class RequirementsFile:
    __slots__ = ("includes", "options", "path", "requirements")

    def __init__(self, path: str) -> None:
        self.path = path
        self.requirements: list[Requirement] = []
        self.options: list[tuple[str, str, int]] = []  # (option, value, line)
        self.includes: list[tuple[str, str, int]] = []  # (-r|-c, target, line)

    @property
    def fully_hashed(self) -> bool:
        return bool(self.requirements) and all(r.hashes for r in self.requirements)


def _logical_lines(text: str) -> list[tuple[int, str]]:
    out: list[tuple[int, str]] = []
    buf, start = "", 0
    for i, raw in enumerate(text.splitlines(), start=1):
        line = re.sub(r"(^|\s)#.*$", "", raw)  # comments need whitespace before #
        if not buf:
            start = i
        if line.endswith("\\"):
            buf += line[:-1] + " "
            continue
        buf += line
        if buf.strip():
            out.append((start, buf.strip()))
        buf = ""
    if buf.strip():
        out.append((start, buf.strip()))
    return out


@structural
def parse_requirements(text: str, path: str) -> RequirementsFile:
    rf = RequirementsFile(path)
    for lineno, line in _logical_lines(text):
        if line.startswith("-") and not line.startswith(("-e ", "-e\t", "--editable")):
            import shlex  # only for option lines

            try:
                words = shlex.split(line, posix=True)
            except ValueError as exc:
                raise ParseError(path, f"line {lineno}: {exc}") from exc
            first = words[0]
            opt, _, inline = first.partition("=") if first.startswith("--") else (first, "", "")
            if len(opt) > 2 and opt[1] != "-":  # -rfile, -ihttps://...
                opt, inline = opt[:2], opt[2:]
            value = inline or (words[1] if len(words) > 1 else "")
            if opt in INCLUDE_OPTIONS or opt in INDEX_OPTIONS:
                if not value:
                    raise ParseError(path, f"line {lineno}: {opt} needs a value")
                if opt in INCLUDE_OPTIONS:
                    rf.includes.append((INCLUDE_OPTIONS[opt], value, lineno))
                else:
                    rf.options.append((INDEX_OPTIONS[opt], value, lineno))
            elif opt in FLAG_OPTIONS:
                rf.options.append((opt, value, lineno))
            else:
                raise ParseError(path, f"line {lineno}: unknown option {opt}")
            continue
        editable = line.startswith(("-e", "--editable"))
        if editable:
            line = re.sub(r"^(-e|--editable)(=|\s+)?", "", line).strip()
            if not line:
                raise ParseError(path, f"line {lineno}: -e needs a value")
        # per-requirement options (--hash, --config-settings, ...) follow the requirement
        req_text, *opts = re.split(r"\s+(?=--[a-z])", line)
        hashes = []
        for opt in opts:
            m = re.match(r"^--hash(?:=|\s+)(\S+)$", opt.strip())
            if m:
                hashes.append(m.group(1))
        req_text = req_text.strip()
        if not req_text:
            raise ParseError(path, f"line {lineno}: no requirement")
        looks_like_url = re.match(r"^[a-z][a-z0-9+.-]*://|^(\.{1,2}/|/|file:)", req_text)
        if editable or looks_like_url:
            egg = re.search(r"[#&]egg=([A-Za-z0-9_.-]+)", req_text)
            rf.requirements.append(Requirement(lineno, req_text, egg.group(1) if egg else None,
                                               "", req_text.split(";")[0].strip(), hashes,
                                               editable))
            continue
        simple = _SIMPLE_PIN.match(req_text)
        if simple and _valid_version(simple.group(2)):
            # name==version: the common case, without packaging's slower parser
            rf.requirements.append(Requirement(lineno, req_text, simple.group(1),
                                               "==" + simple.group(2), None, hashes, editable))
            continue
        from packaging.requirements import InvalidRequirement
        from packaging.requirements import Requirement as PReq

        try:
            parsed = PReq(req_text)
        except InvalidRequirement as exc:
            raise ParseError(path, f"line {lineno}: {exc}") from exc
        rf.requirements.append(Requirement(lineno, req_text, parsed.name, str(parsed.specifier),
                                           parsed.url, hashes, editable))
    return rf


# -- pyproject.toml -----------------------------------------------------------------------
class Pyproject(NamedTuple):
    path: str
    text: str
    data: dict[str, Any]

    def table(self, *keys: str) -> Any:
        node: Any = self.data
        for k in keys:
            if not isinstance(node, dict):
                return None
            node = node.get(k)
        return node

    def dependency_strings(self) -> list[str]:
        """PEP 508 strings from [project] dependencies and optional-dependencies."""
        out: list[str] = []
        deps = self.table("project", "dependencies")
        if isinstance(deps, list):
            out += [d for d in deps if isinstance(d, str)]
        opt = self.table("project", "optional-dependencies")
        if isinstance(opt, dict):
            for group in opt.values():
                if isinstance(group, list):
                    out += [d for d in group if isinstance(d, str)]
        groups = self.data.get("dependency-groups")
        if isinstance(groups, dict):
            for group in groups.values():
                if isinstance(group, list):
                    out += [d for d in group if isinstance(d, str)]
        return out

    def poetry_dependencies(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        poetry = self.table("tool", "poetry")
        if not isinstance(poetry, dict):
            return out
        for key in ("dependencies", "dev-dependencies"):
            d = poetry.get(key)
            if isinstance(d, dict):
                out.update(d)
        groups = poetry.get("group")
        if isinstance(groups, dict):
            for g in groups.values():
                d = g.get("dependencies") if isinstance(g, dict) else None
                if isinstance(d, dict):
                    out.update(d)
        return out

    @property
    def has_dependencies(self) -> bool:
        poetry = {k: v for k, v in self.poetry_dependencies().items() if k != "python"}
        return bool(self.dependency_strings() or poetry)

    def line(self, needle: str) -> int | None:
        return line_of(self.text, needle)


@structural
def parse_pyproject(text: str, path: str) -> Pyproject:
    return Pyproject(path, text, load_toml(text, path))


# -- lockfiles ----------------------------------------------------------------------------
def _headers(text: str, header: str) -> list[int]:
    return [i for i, ln in enumerate(text.splitlines(), start=1) if ln.strip() == header]


def _python_kind(source: Any) -> str:
    if not isinstance(source, dict):
        return "registry"
    if "git" in source or source.get("type") == "git":
        return "git"
    if any(k in source for k in ("path", "directory", "editable", "virtual")) or \
            source.get("type") in ("directory", "file"):
        return "path"
    if ("url" in source and "registry" not in source) or source.get("type") == "url":
        return "url"
    return "registry"


@structural
def parse_uv_lock(text: str, path: str) -> list[LockEntry]:
    data = load_toml(text, path)
    if data.get("version") not in (1,):
        raise ParseError(path, f"unknown uv.lock version {data.get('version')!r} (known: 1)")
    lines = _headers(text, "[[package]]")
    out = []
    for i, pkg in enumerate(data.get("package") or []):
        if not isinstance(pkg, dict):
            raise ParseError(path, "package is not a table")
        source = pkg.get("source") or {}
        kind = _python_kind(source)
        hashes = []
        sdist = pkg.get("sdist")
        if isinstance(sdist, dict) and sdist.get("hash"):
            hashes.append(sdist["hash"])
        for w in pkg.get("wheels") or []:
            if isinstance(w, dict) and w.get("hash"):
                hashes.append(w["hash"])
        files = ([sdist] if isinstance(sdist, dict) else []) + list(pkg.get("wheels") or [])
        complete = bool(files) and all(isinstance(f, dict) and f.get("hash") for f in files)
        resolved = source.get("registry") or source.get("git") or source.get("url") \
            if isinstance(source, dict) else None
        out.append(LockEntry("python", str(pkg.get("name")), str(pkg.get("version", "")), path,
                             lines[i] if i < len(lines) else None, resolved=resolved,
                             integrity=hashes[0] if complete else None, kind=kind))
    return out


def _complete(files: Any) -> bool:
    """Every file entry of a lock record carries a hash."""
    return bool(files) and all(isinstance(f, dict) and f.get("hash") for f in files)


def _toml_packages(text: str, path: str, meta_key: Callable[[str, str], str]
                   ) -> Iterator[tuple[int | None, dict[str, Any], str, str, bool]]:
    """[[package]] tables of poetry.lock and pdm.lock: (line, table, name, version, every
    file hashed), the files falling back to [metadata.files] under meta_key(name, ver)."""
    data = load_toml(text, path)
    lines = _headers(text, "[[package]]")
    meta_files = (data.get("metadata") or {}).get("files") or {}
    for i, pkg in enumerate(data.get("package") or []):
        if not isinstance(pkg, dict):
            raise ParseError(path, "package is not a table")
        name, ver = str(pkg.get("name")), str(pkg.get("version", ""))
        files = pkg.get("files")
        if files is None:
            files = meta_files.get(meta_key(name, ver), [])
        yield lines[i] if i < len(lines) else None, pkg, name, ver, _complete(files)


@structural
def parse_poetry_lock(text: str, path: str) -> list[LockEntry]:
    out = []
    for line, pkg, name, ver, complete in _toml_packages(text, path, lambda n, _v: n):
        source = pkg.get("source")
        kind = _python_kind(source)
        if isinstance(source, dict) and source.get("type") == "legacy":
            kind = "registry"
        out.append(LockEntry("python", name, ver, path, line,
                             resolved=(source or {}).get("url") if isinstance(source, dict)
                             else None,
                             integrity="files" if complete else None, kind=kind))
    return out


@structural
def parse_pipfile_lock(text: str, path: str) -> list[LockEntry]:
    data = load_json(text, path)
    if not isinstance(data, dict) or "_meta" not in data:
        raise ParseError(path, "not a Pipfile.lock (no _meta)")
    out = []
    lines: dict[str, int] = {}
    for i, ln in enumerate(text.splitlines(), start=1):
        m = re.match(r'^\s{8}"([^"]+)": \{', ln)
        if m:
            lines.setdefault(m.group(1), i)
    for section in ("default", "develop"):
        for name, pkg in (data.get(section) or {}).items():
            if not isinstance(pkg, dict):
                raise ParseError(path, f"{section}.{name} is not an object")
            kind = "git" if "git" in pkg else ("path" if "path" in pkg or "file" in pkg
                                               else "registry")
            hashes = pkg.get("hashes") or []
            out.append(LockEntry("python", name, str(pkg.get("version", "")), path,
                                 lines.get(name), resolved=pkg.get("git") or pkg.get("file"),
                                 integrity=hashes[0] if hashes else None, kind=kind))
    return out


@structural
def parse_pdm_lock(text: str, path: str) -> list[LockEntry]:
    out = []
    for line, pkg, name, ver, complete in _toml_packages(text, path,
                                                         lambda n, v: f"{n} {v}"):
        kind = "git" if pkg.get("git") else ("path" if pkg.get("path") else
                                             ("url" if pkg.get("url") else "registry"))
        out.append(LockEntry("python", name, ver, path, line,
                             resolved=pkg.get("git") or pkg.get("url"),
                             integrity="files" if complete else None, kind=kind))
    return out


@structural
def parse_pylock(text: str, path: str) -> list[LockEntry]:
    data = load_toml(text, path)
    if "lock-version" not in data:
        raise ParseError(path, "not a pylock.toml (no lock-version)")
    lines = _headers(text, "[[packages]]")
    out = []
    for i, pkg in enumerate(data.get("packages") or []):
        if not isinstance(pkg, dict):
            raise ParseError(path, "packages entry is not a table")
        artefacts = []
        if isinstance(pkg.get("sdist"), dict):
            artefacts.append(pkg["sdist"])
        artefacts += [w for w in pkg.get("wheels") or [] if isinstance(w, dict)]
        if isinstance(pkg.get("archive"), dict):
            artefacts.append(pkg["archive"])
        complete = bool(artefacts) and all(a.get("hashes") for a in artefacts)
        kind = "git" if "vcs" in pkg else ("path" if "directory" in pkg else "registry")
        if "vcs" in pkg:
            complete = bool((pkg["vcs"] or {}).get("commit-id"))
        out.append(LockEntry("python", str(pkg.get("name")), str(pkg.get("version", "")), path,
                             lines[i] if i < len(lines) else None,
                             resolved=str(pkg.get("index") or "") or None,
                             integrity="hashes" if complete else None, kind=kind))
    return out


PYTHON_LOCKS = {
    "uv.lock": parse_uv_lock, "poetry.lock": parse_poetry_lock,
    "Pipfile.lock": parse_pipfile_lock, "pdm.lock": parse_pdm_lock,
}
