"""Which files of the workspace the root's install, build, tests and tools use: the one
judgement of test data, for every rule (`in_play`, through `Findings.outcome(scope=...)`).

By where a file is: a surface a tool obeys wherever it sits (ztsa.surfaces.ANYWHERE: an
instruction file an agent loads in a subdirectory, `.envrc`, `mise.toml`) is always in
play, under tests/ too. Any other file under a test directory (`tests`, `__tests__`,
`e2e`, `spec`, any name made of a test word: `integration-tests`, `syntax-tests`) or an
examples, fixtures, docs, templates or benchmarks directory is test data, a sample for
readers or a template copied into someone else's project; but a requirements file at the
top of a test directory is the tests' own dependencies.

By what references it: such a file is in play after all when a root workspace of its
ecosystem lists its directory (npm/Yarn/Bun `workspaces`, `pnpm-workspace.yaml`, Cargo's
`[workspace] members`, uv's `[tool.uv.workspace] members`), when the root depends on it
by path (Cargo's `path`, npm's `file:` and `link:`), or when the root's entry points or
top-level documents name its directory (a Makefile's `pip install ./tests/x`; polars'
`make requirements` installs `docs/source/requirements.txt`).

A JS or Cargo project beside a root workspace of its ecosystem that does not list it is
elsewhere too (a separate project, judged when it is itself the workspace: `ztsa check
DIR`). So is a Python project in a subdirectory of a JS repository whose root holds no
Python project and whose install hooks install no Python package, unless the root's
entry points or top-level documents name its directory (continue's sample folder and
generated client, gemini-cli's services, playwright's doc-lint helper; a full-stack
repository's `server/`, named by its README or Compose file, stays in play). So is a
manifest in an agent's own directory (`.claude/hooks/setup.py`) that no workspace lists:
what the agent runs there, the AGT rules judge. Rules still report what they find
elsewhere, as advisory."""

from __future__ import annotations

import posixpath

from ztsa.context import Context
from ztsa.host import ProbeError
from ztsa.lazy import LazyRe
from ztsa.manifests import MAX_MANIFEST_BYTES
from ztsa.manifests.project import load

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

ELSEWHERE = frozenset({
    "examples", "example", "fixtures", "fixture", "__fixtures__", "testdata", "test-data",
    "test_data", "__mocks__", "__snapshots__", "snapshots",
    "docs", "doc", "docs-site", "website", "templates", "template", "benchmarks",
    "benchmark", "samples", "sample", "demos", "demo", "playground"})
# test directories: what is in them is the tests' data (a scanner's inputs, a fixture
# project, a deliberately invalid lockfile), unless the root names it; but a Python
# requirements file at the top of one is the repository's own test dependencies
TESTS = frozenset({"test", "tests", "__tests__", "e2e", "spec", "specs"})
# and any name made of a test word: integration-tests, syntax-tests, unit_test, test-utils
TEST_NAME = LazyRe(r"(?:[\w.]+[-_])?tests?(?:[-_][\w.]+)?|e2e[-_][\w.]+|[\w.]+[-_]e2e")


def is_test_dir(name: str) -> bool:
    """Is a directory of this name a test directory (TESTS, TEST_NAME)?"""
    low = name.lower()
    return low in TESTS or TEST_NAME.fullmatch(low) is not None


def acts_anywhere(rel: str) -> bool:
    """Is rel a surface a tool obeys wherever it sits (ztsa.surfaces.ANYWHERE: an
    instruction file an agent loads in a subdirectory, `.envrc`, `mise.toml`), outside
    an installed package? Under tests/ it still acts: it is never test data."""
    from ztsa.surfaces import anywhere_names, installed

    return not installed(rel) and any(rel == n or rel.endswith("/" + n)
                                      for n in anywhere_names())


def ecosystem(rel: str) -> str:
    """js, cargo, python, or "" (any) for a file, by its name: a workspace of one
    ecosystem installs only that ecosystem's projects."""
    name = posixpath.basename(rel)
    if name in ("package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
                "pnpm-lock.yaml", "bun.lock", "bun.lockb", ".npmrc", ".yarnrc.yml"):
        return "js"
    if name in ("Cargo.toml", "Cargo.lock", "build.rs") or rel.startswith(".cargo/"):
        return "cargo"
    if (name in ("pyproject.toml", "setup.py", "setup.cfg", "uv.lock", "poetry.lock",
                 "Pipfile", "Pipfile.lock", "pdm.lock")
            or (name.startswith("requirements") and name.endswith((".txt", ".in")))):
        return "python"
    return ""


def _members(ctx: Context, eco: str = "") -> list[str]:
    """The workspace member globs the root manifests name (cached per run), of the
    ecosystem eco's own manifests ("" for all)."""
    key = f"scope.members.{eco}"
    cached = ctx.cache.get(key)
    if cached is not None:
        return list(cached)
    globs: list[str] = []

    def attempt(rel: str, parser: Any, pick: Any, of: str) -> None:
        if not ctx.ws_exists(rel) or (eco and of != eco):
            return
        try:
            doc = load(ctx, rel, parser, MAX_MANIFEST_BYTES)
        except ProbeError:
            return
        globs.extend(str(g).strip("/").removeprefix("./") for g in pick(doc) or [])

    from ztsa.manifests.cargo import parse_cargo_toml
    from ztsa.manifests.common import load_yaml
    from ztsa.manifests.npm import parse_package_json
    from ztsa.manifests.python import parse_pyproject

    attempt("package.json", parse_package_json, lambda pj: pj.workspaces, "js")
    # what the root depends on by path is built and installed with it
    attempt("package.json", parse_package_json, lambda pj: [
        spec.split(":", 1)[1] for _f, _n, spec in pj.deps()
        if spec.startswith(("file:", "link:"))], "js")
    attempt("Cargo.toml", parse_cargo_toml, _cargo_paths, "cargo")
    attempt("pnpm-workspace.yaml", load_yaml,
            lambda doc: doc.get("packages") if isinstance(doc, dict) else None, "js")
    attempt("Cargo.toml", parse_cargo_toml,
            lambda ct: (ct.data.get("workspace") or {}).get("members")
            if isinstance(ct.data.get("workspace"), dict) else None, "cargo")
    attempt("pyproject.toml", parse_pyproject,
            lambda pp: pp.table("tool", "uv", "workspace", "members"), "python")
    ctx.cache[key] = tuple(globs)
    return globs


def member_globs(ctx: Context) -> list[str]:
    """Every member glob and path dependency the root manifests name."""
    return _members(ctx)


def _cargo_paths(ct: Any) -> list[str]:
    """The `path` of every dependency of the root Cargo.toml, in any of its tables."""
    return [posixpath.normpath(spec["path"]) for _table, _name, spec in ct.deps()
            if isinstance(spec, dict) and isinstance(spec.get("path"), str)]


ROOT_PYTHON = ("pyproject.toml", "setup.py", "setup.cfg", "Pipfile", "uv.lock", "poetry.lock",
               "pdm.lock")


def _python_beside_js(ctx: Context) -> bool:
    """Is the root a JS project with no Python project of its own?"""
    cached = ctx.cache.get("scope.python_beside_js")
    if isinstance(cached, bool):
        return cached
    from ztsa.walk import all_files

    found = ctx.ws_exists("package.json") and not any(ctx.ws_exists(n) for n in ROOT_PYTHON)
    if found:
        found = not _root_install_runs_python(ctx)
    if found:
        try:
            found = not any("/" not in p and p.startswith("requirements") and
                            p.endswith((".txt", ".in")) for p in all_files(ctx))
        except ProbeError:
            found = False  # the walk failed: say nothing of scope
    ctx.cache["scope.python_beside_js"] = found
    return found


# what a newcomer (or an agent) reads or runs at the root to set the repository up: if
# none of these names a Python directory below a JS root, nothing installs it
ENTRY_FILES = frozenset({
    "package.json", "Makefile", "makefile", "GNUmakefile", "justfile", "Justfile",
    ".justfile", "Taskfile.yml", "Taskfile.yaml", "Dockerfile", "Procfile",
    "docker-compose.yml", "docker-compose.yaml", "compose.yml", "compose.yaml",
    "Tiltfile", "devbox.json", "mise.toml", ".mise.toml", ".tool-versions", "tox.ini",
    "noxfile.py"})
ENTRY_PREFIXES = ("README", "CONTRIBUTING", "DEVELOPMENT", "DEVELOPING", "HACKING",
                  "INSTALL", "SETUP", "BUILDING", "BUILD")
MAX_ENTRY_FILES = 64


def _entry_text(ctx: Context) -> str | None:
    """The root's entry points and top-level documents, and the files directly in
    scripts/ (cached per run); None when they cannot be read."""
    cached = ctx.cache.get("scope.entry_text")
    if isinstance(cached, str):
        return cached
    from ztsa.walk import all_files

    try:
        names = [p for p in all_files(ctx)
                 if ("/" not in p and (p in ENTRY_FILES or p.endswith(".sh")
                                       or p.upper().startswith(ENTRY_PREFIXES)))
                 or (p.startswith(("scripts/", ".devcontainer/")) and p.count("/") == 1)]
        texts = []
        for rel in names[:MAX_ENTRY_FILES]:
            text = ctx.ws_text(rel, limit=MAX_MANIFEST_BYTES)
            if text is not None:
                texts.append(text)
    except ProbeError:
        return None
    joined = "\n".join(texts)
    ctx.cache["scope.entry_text"] = joined
    return joined


def _named_at_root(ctx: Context, d: str) -> bool:
    """Do the root's entry points name the directory d as a path of its own (`server/`,
    `./server`, `cd server`)? Unreadable ones count as naming it."""
    import re

    text = _entry_text(ctx)
    if text is None:
        return True
    return re.search(r"(?<![\w.@-])(?:\./)?" + re.escape(d) + r"(?![\w.-])", text) is not None


# an agent's own configuration: a manifest there belongs to a hook or a skill (a hook
# script named setup.py, a skill's package.json), which the agent runs, not the root's
# install (the AGT rules judge what runs there)
AGENT_CONFIG = frozenset({".claude", ".codex", ".gemini", ".cursor", ".windsurf", ".continue",
                          ".roo", ".kiro", ".clinerules", ".cline", ".agents"})


PY_INSTALLER = (r"\bpip3?\b[^\n]{0,40}\binstall\b|\buv\b[^\n]{0,20}\b(?:sync|pip)\b|"
                r"\b(?:poetry|pdm)\b[^\n]{0,20}\b(?:install|sync)\b|\bpipenv\b|"
                r"\bconda\b[^\n]{0,20}\binstall\b|\bsetup\.py\b[^\n]{0,20}\b(?:install|develop)\b")
LOCAL_FILE = r"(?<![\w/.-])(?:\./)?([\w.-]+(?:/[\w.-]+)*\.(?:[cm]?js|ts|sh|py))\b"


def _root_install_runs_python(ctx: Context) -> bool:
    """Does the root package.json's install (its install hooks, the scripts they run by
    name, and the repository files those run) install Python packages? Then every Python
    project below may be what it installs. Unreadable: yes."""
    import re

    from ztsa.findings import Findings
    from ztsa.manifests.scripts import install_hooks

    f = Findings()
    texts = [cmd for rel, _hook, cmd, _line in install_hooks(ctx, f) if rel == "package.json"]
    if f.errors:
        return True
    for cmd in list(texts):
        for path in re.findall(LOCAL_FILE, cmd):
            if ctx.ws_exists(path):
                try:
                    texts.append(ctx.ws_text(path, MAX_MANIFEST_BYTES) or "")
                except ProbeError:
                    return True
    return any(re.search(PY_INSTALLER, t) for t in texts)


def in_play(ctx: Context, rel: str) -> bool:
    """Is the file rel part of what the root installs, builds, tests or opens? The one
    judgement of test data and other files elsewhere, for every rule (through
    `Findings.outcome(scope=...)`): by where it is (under a test, fixture, example, docs
    or template directory: ELSEWHERE, is_test_dir) and by what references it (a root
    workspace of its own ecosystem, a root path dependency, or the root's entry points
    and top-level documents naming its directory). A surface that acts wherever it sits
    is always in play. Only a workspace of its own ecosystem can list a file (pnpm's
    `examples/*` installs no requirements.txt there), and a Python file only in a
    member's own directory (a requirements.txt deeper in a uv member is not what `uv
    sync` installs)."""
    if acts_anywhere(rel):
        return True
    d = posixpath.dirname(rel)
    eco = ecosystem(rel)
    parts = [part for part in d.split("/") if part]
    if parts and parts[0] in AGENT_CONFIG and eco:  # a manifest of a hook or a skill
        return _listed(ctx, d, eco, exact=eco == "python")
    # a JS or Cargo project of its own beside a root workspace of the same ecosystem
    # that does not list it: not what the root's install builds (cline's evals/),
    # judged when it is itself the workspace. A root without a workspace list (continue's
    # tooling package.json beside core/ and gui/) says nothing of the others.
    separate = eco in ("js", "cargo") and d != "" and not d.startswith((
        ".cargo", "node_modules")) and bool(_members(ctx, eco)) and posixpath.basename(rel) in (
        "package.json", "package-lock.json", "npm-shrinkwrap.json", "yarn.lock",
        "pnpm-lock.yaml", "bun.lock", "bun.lockb", "Cargo.toml", "Cargo.lock")
    # a requirements file at the top of a test directory: the tests' own dependencies
    test_deps = (eco == "python" and len(parts) == 1 and is_test_dir(parts[0])
                 and posixpath.basename(rel).startswith("requirements"))
    if (eco == "python" and d != "" and not test_deps and not is_test_dir(parts[0])
            and _python_beside_js(ctx) and not _named_at_root(ctx, d)):
        return False
    elsewhere = not test_deps and any(part.lower() in ELSEWHERE or is_test_dir(part)
                                      for part in parts)
    if not separate and not elsewhere:
        return True
    # a glob's * crosses no / for a Python file (the member's directory only) or a
    # separate project (a project nested in a member is its own); what the root's entry
    # points name by its directory is what they install or run (polars' `make
    # requirements` installs docs/source/requirements.txt)
    return _listed(ctx, d, eco, exact=eco == "python" or separate) or (
        elsewhere and not separate and _named_at_root(ctx, d))


def _listed(ctx: Context, d: str, eco: str, exact: bool) -> bool:
    """Does a root workspace of ecosystem eco (or a root path dependency) list d?"""
    import fnmatch  # only for a path in such a directory

    return any((fnmatch.fnmatchcase(d, g) and (not exact or d.count("/") == g.count("/")))
               or d == g or (not exact and d.startswith(g + "/"))
               for g in _members(ctx, eco) if g and not g.startswith("!"))
