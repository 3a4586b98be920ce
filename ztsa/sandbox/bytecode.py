"""What the tree leaves in the workspace that an interpreter runs later, outside any
sandbox, in place of the source a person reads (docs/git-control.md, "Bytecode caches
and virtual environments").

- Bytecode caches. Python loads `__pycache__/NAME.TAG.pyc` instead of compiling
  NAME.py when the header's mtime and size match the source's; the tree can write both
  (or an unchecked hash-based one, never compared at all), so a cache entry the tree
  wrote runs the tree's code while NAME.py reads as before. Ruby's bootsnap caches
  (compiled code and YAML, judged by mtime and size too, and its load-path cache,
  which decides what `require` loads) are the same. After the run every entry of such
  a cache that is new or whose (inode, size, mtime, ctime) changed is removed: the
  runtime writes it again from the source. The tree can set an mtime back, never a
  ctime.
- A workspace virtual environment's start-up. Every use of its interpreter runs the
  `import` lines of the `.pth` files in its site-packages, `sitecustomize` and
  `usercustomize`, and the modules those `import` lines name (dotted: each part);
  `bin/python*` is what runs, `pyvenv.cfg` decides which interpreter and standard
  library, `bin/activate*` is run by the person's shell, and the rest of `bin/` comes
  first on PATH once it is activated. What the run made or changed of these is named
  on stderr and in the log (a `reported` event each, with what it runs); a
  code-running `.pth` and a `sitecustomize` or `usercustomize` are moved aside too,
  as is a `.pth` whose imported module the run changed, and a program in `bin/` that
  no RECORD the run wrote lists (pip's console scripts stay).
- A directory a kept `.envrc` or mise configuration puts first on PATH (path_dirs:
  `PATH_add bin`, `_.path`), as a venv's bin/ for a shell that enters it. What the run
  made or changed there that takes the name of a program on ztsa's PATH (`git`) is
  moved aside; any other (a build's `bin/tool`) is named.
- Python code beside the source (gitlayout.Layout.loose): an import takes an
  extension module before `app.py`, a sourceless `json.pyc` in a script's directory
  before the standard library, and site.py a `sitecustomize` on any PYTHONPATH. What
  the run made or changed: sitecustomize/usercustomize and `.pyc` moved aside; an
  extension module moved aside where it takes the place of a module (a source or
  package beside it, the standard library's, an installed one), else named (a build's:
  moving it would break the person's package). `--keep-pth` keeps a
  code-running `.pth` that a RECORD the run wrote lists (what pip writes for a
  package it installs): ztsa cannot tell pip from the tree, which writes RECORD files
  too, so the person decides.

Nothing here walks the workspace: the git walk (native/gitwalk.c, before and after
every run) names each cache entry, each pyvenv.cfg and bin/activate(.*), and each
`.envrc` and mise configuration on its way; the venvs of the walk before the run are
audited too, whatever the run did to their pyvenv.cfg. Removals and moves
are gitguard's, through descriptors, unblockable (gitguard.remove_all, _move)."""

from __future__ import annotations

import os
import stat

from ztsa import gitlayout
from ztsa.records import NamedTuple
from ztsa.sandbox import gitguard

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

# (file type, inode, size, mtime_ns, ctime_ns) of an entry, its symlink not followed
Ident = tuple[int, int, int, int, int]
CUSTOMIZE = ("sitecustomize", "usercustomize")
MAX_PTH = 1 << 20  # site.py reads any size; a larger .pth is judged as running code
CACHE_REASON = ("a bytecode cache entry the run wrote or changed (an interpreter loads it "
                "instead of the source beside it); rebuilt from the source when next used")


class Marker(NamedTuple):
    kind: str  # interpreter, activate, config, program, pth, customize, module, record
    venv: str  # the virtual environment's directory
    site: str = ""  # its site-packages, for pth, customize, module, record
    pth: str = ""  # for a module: the code-running .pth that imports it


class Before(NamedTuple):
    caches: dict[str, Ident]
    venv: dict[str, Ident]  # every marker of every workspace venv, as it was
    loose: dict[str, Ident]  # gitlayout.Layout.loose, as it was
    venvs: tuple[str, ...] = ()  # the workspace venvs, as they were: audited after the
    # run whatever it did to their pyvenv.cfg (bin/activate still puts bin/ first on PATH)
    path_dirs: tuple[str, ...] = ()  # path_dirs, as they were
    path: dict[str, Ident] = {}  # noqa: RUF012 (never mutated) every entry of those


class Report(NamedTuple):
    path: str  # workspace-relative
    reason: str
    runs: str  # what it runs
    venv: str  # its virtual environment, workspace-relative
    kind: str  # Marker.kind, or extension (an extension module outside a venv)
    new: bool  # made by the run (else changed)


class Result(NamedTuple):
    removed: list[str]  # cache entries removed, workspace-relative
    moved: list[gitguard.Moved]  # moved aside (or not: error), and what could not be removed
    reported: list[Report]  # left where they are, named


def _ident(path: str) -> Ident | None:
    try:
        st = os.lstat(path)
    except OSError:
        return None
    return (stat.S_IFMT(st.st_mode), st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns)


def _idents(paths: object) -> dict[str, Ident]:
    out: dict[str, Ident] = {}
    for p in paths:  # type: ignore[attr-defined]
        i = _ident(p)
        if i is not None:
            out[p] = i
    return out


def before(layout: gitlayout.Layout) -> Before:
    """The caches and venv markers of the workspace whose walk is layout, as they are."""
    markers: dict[str, Marker] = {}
    for v in layout.venvs:
        markers.update(_markers(v))
    dirs = tuple(path_dirs(layout))
    return Before(_idents(layout.caches), _idents(markers), _idents(layout.loose),
                  layout.venvs, dirs, _idents(_entries(dirs)))


def _entries(dirs: object) -> list[str]:
    return [os.path.join(d, n) for d in dirs for n in _listdir(d)]  # type: ignore[attr-defined]


def path_dirs(layout: gitlayout.Layout) -> list[str]:
    """The directories (absolute, existing or not) that a kept direnv `.envrc` or mise
    configuration of the walk puts first on PATH when a shell enters its directory:
    direnv's `PATH_add DIR...` and `path_add PATH DIR...`, an assignment `PATH=DIR:$PATH`
    (`export` or not), mise's `[env] _.path`; relative to the file's folder. Not those
    inside an installed package (`node_modules/.bin`: the package manager's), nor what
    only a variable names."""
    from ztsa import follow, surfaces
    from ztsa.parsing import every_string

    specs = next(st.files for st in surfaces.SETTINGS if st.id == "mise-env-path")
    out: list[str] = []
    for path in layout.instructions:
        name = os.path.basename(path)
        # the longest spec it matches (`.config/mise/config.toml`, not `mise/config.toml`)
        mise = max((f.removeprefix("**/") for f in specs
                    if surfaces.spec_matches(path.lstrip("/"), f)),
                   key=lambda f: f.count("/"), default=None)
        if os.path.islink(path) or (name != ".envrc" and mise is None):
            continue
        data = _read(path, 1 << 20)
        if data is None:
            continue
        text = data.decode("utf-8", "replace")
        named: list[str] = []
        if mise is None:  # the .envrc, a shell script: each simple command
            for words in follow.simple_commands(text):
                if words[:1] == ["export"]:
                    words = words[1:]
                if words[:1] == ["PATH_add"]:
                    named += words[1:]
                elif words[:2] == ["path_add", "PATH"]:
                    named += words[2:]
                elif words and words[0].startswith("PATH="):
                    named += words[0][5:].split(":")
            folder = os.path.dirname(path)
        else:
            try:
                from ztsa.manifests import parsecache

                doc = parsecache.load_toml(None, text, path)
            except Exception:
                continue  # the gate reports it (mise-env-path)
            env = doc.get("env") if isinstance(doc, dict) else None
            under = env.get("_") if isinstance(env, dict) else None
            value = under.get("path") if isinstance(under, dict) else None
            named = every_string(value)
            folder = surfaces.folder_of(path, mise)  # mise's config_root
        for word in named:
            for var in ("$PWD/", "${PWD}/", "$(pwd)/", "{{config_root}}/",
                        "{{ config_root }}/"):
                word = word.removeprefix(var)
            if not word or "$" in word or "`" in word or "{{" in word or word[0] == "~":
                continue  # $PATH itself, what only a variable names
            d = os.path.normpath(os.path.join(folder, word))
            if not any(p in surfaces.INSTALLED for p in d.split("/")):
                out.append(d)
    return list(dict.fromkeys(out))



def _listdir(path: str) -> list[str]:
    try:
        return sorted(os.listdir(path))
    except OSError:
        return []


def _read(path: str, limit: int = MAX_PTH) -> bytes | None:
    """A regular file's first LIMIT + 1 bytes (symlinks followed, as Python does)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError:
        return None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return None
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read(limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def site_dirs(venv: str) -> list[str]:
    """The site-packages directories of the virtual environment venv (lib/pythonX.Y,
    lib64's the same one through venv's own link, PyPy's lib/pypyX.Y)."""
    out: dict[str, str] = {}
    for lib in ("lib", "lib64"):
        for name in _listdir(os.path.join(venv, lib)):
            if name.startswith(("python", "pypy")):
                site = os.path.join(venv, lib, name, "site-packages")
                if os.path.isdir(site):
                    out.setdefault(os.path.realpath(site), site)
    return list(out.values())


_HOOKS: dict[str, frozenset[str]] = {}


def base_hooks(venv: str) -> frozenset[str]:
    """The modules the base interpreter's own sitecustomize or usercustomize imports by
    name (Debian's imports `apport_python_hook`, absent unless apport is installed):
    site.py runs them at every start of the venv's interpreter, found first in the
    venv's site-packages. The base is pyvenv.cfg's `home` (its bin directory) and
    `version`; a base that cannot be read adds nothing."""
    import re

    cfg = _read(os.path.join(venv, "pyvenv.cfg"), 1 << 16) or b""
    home = re.search(rb"(?m)^\s*home\s*=\s*(.+?)\s*$", cfg)
    version = re.search(rb"(?m)^\s*version(?:_info)?\s*=\s*(\d+)\.(\d+)", cfg)
    if not home or not version:
        return frozenset()
    prefix = os.path.dirname(os.fsdecode(home.group(1)).rstrip("/"))
    lib = os.path.join(prefix, "lib", f"python{int(version.group(1))}.{int(version.group(2))}")
    names: set[str] = set()
    for name in CUSTOMIZE:
        path = os.path.join(lib, f"{name}.py")
        if path not in _HOOKS:
            data = _read(path, MAX_PTH) or b""
            _HOOKS[path] = frozenset(m.split(".")[0] for m in re.findall(
                rb"(?m)^\s*(?:import|from)\s+([A-Za-z_][\w.]*)", data[:MAX_PTH]
            ) for m in [m.decode()])
        names |= _HOOKS[path]
    return frozenset(names - {"sys", "os", "site"})


def pth_lines(data: bytes) -> tuple[list[str], list[str]]:
    """(the lines site.py executes, the directories it adds) of a .pth file's text, as
    site.addpackage reads them."""
    code: list[str] = []
    paths: list[str] = []
    for raw in data.decode("utf-8", "replace").splitlines():
        if raw.startswith("#"):
            continue
        if raw.startswith(("import ", "import\t")):
            code.append(raw)
            continue
        line = raw.rstrip()
        if line:
            paths.append(line)
    return code, paths


def imported(code: list[str]) -> list[str]:
    """The modules, dotted, the executed lines of a .pth may import (every name after
    `import` or `from`, and each `__import__`/`import_module` of a literal): an
    over-approximation, which only adds files to watch."""
    import re

    names: list[str] = []
    for line in code:
        for m in re.finditer(r"\b(?:import|from)\s+([A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*)",
                             line):
            names += [n.strip().strip(".") for n in m.group(1).split(",")]
        names += [m.group(1).strip(".") for m in re.finditer(
            r"(?:__import__|import_module)\(\s*['\"]([\w.]+)['\"]", line)]
    return list(dict.fromkeys(n for n in names if n and n != "import"))


def _markers(venv: str) -> dict[str, Marker]:
    """Every file of the virtual environment venv that runs when it is used."""
    out = {os.path.join(venv, "pyvenv.cfg"): Marker("config", venv)}
    for name in _listdir(os.path.join(venv, "bin")):
        if name.startswith(("python", "pypy")):
            out[os.path.join(venv, "bin", name)] = Marker("interpreter", venv)
        elif name.lower().startswith("activate"):
            out[os.path.join(venv, "bin", name)] = Marker("activate", venv)
        else:  # first on PATH once the venv is activated (`git`, `ls`)
            out[os.path.join(venv, "bin", name)] = Marker("program", venv)
    for site in site_dirs(venv):
        names = _listdir(site)
        dirs = {site: names}
        # a module a code-running .pth imports, its top-level name -> (its dotted
        # names' further parts, the .pth)
        modules: dict[str, tuple[list[list[str]], str]] = {}
        for name in names:
            path = os.path.join(site, name)
            if name.endswith(".pth"):
                out[path] = Marker("pth", venv, site)
                code, paths = pth_lines(_read(path) or b"")
                for m in imported(code):
                    top, *rest = m.split(".")
                    modules.setdefault(top, ([], path))[0].append(rest)
                for p in paths:
                    d = os.path.join(site, p)
                    if d not in dirs and os.path.isdir(d):
                        dirs[d] = _listdir(d)
            elif name.endswith(".dist-info"):
                out[os.path.join(path, "RECORD")] = Marker("record", venv, site)
        # in site-packages and each directory a .pth adds: what site.py imports by name
        hooks = base_hooks(venv)
        for d, entries in dirs.items():
            for name in entries:
                stem = name.split(".", 1)[0]
                if stem in CUSTOMIZE or stem in hooks:
                    marker = Marker("customize", venv, site)
                elif stem in modules:
                    marker = Marker("module", venv, site, modules[stem][1])
                else:
                    continue
                path = os.path.join(d, name)
                out[path] = marker
                if os.path.isdir(path):  # a package: its __init__, the submodules named
                    _package(path, modules[stem][0] if marker.kind == "module" else [],
                             marker, out)
    return out


def _package(path: str, tails: list[list[str]], marker: Marker,
             out: dict[str, Marker]) -> None:
    """The package directory path's __init__, and, down each of tails (`start` of
    `import pkg.start`), the submodules and packages named (their files, their
    __init__): what an `import pkg.start` runs."""
    entries = _listdir(path)
    for inner in entries:
        if inner.startswith("__init__."):
            out[os.path.join(path, inner)] = marker
    heads: dict[str, list[list[str]]] = {}
    for tail in tails:
        if tail:
            heads.setdefault(tail[0], []).append(tail[1:])
    for inner in entries:
        stem = inner.split(".", 1)[0]
        if stem in heads:
            sub = os.path.join(path, inner)
            out[sub] = marker
            if os.path.isdir(sub):
                _package(sub, heads[stem], marker, out)


def audit(workspace: str, was: Before, layout: gitlayout.Layout | None, run_id: str,
          keep_pth: bool = False) -> Result:
    """Remove the cache entries the run wrote or changed; name, and move aside where
    it runs code at every start, what it made or changed of a workspace venv's
    start-up. Call only when every process of the tree has ended (layout: the
    workspace's walk since then). Never raises: a failure is a Moved with its error."""
    result = Result([], [], [])
    try:
        _audit(workspace, was, layout or gitlayout.find(workspace), run_id, keep_pth,
               result)
    except Exception as exc:
        result.moved.append(gitguard.Moved(".", "the audit of bytecode and virtual "
                                           "environments failed", None, "",
                                           f"{type(exc).__name__}: {exc}; look at the "
                                           "workspace's __pycache__ and .venv"))
    started = [m for m in result.moved if m.runs]  # a venv's start-up, not a cache
    if started:
        gitguard._manifest(workspace, run_id, started)
    return result


def _rel(workspace: str, path: str) -> str | None:
    return path[len(workspace) + 1:] if path.startswith(workspace + "/") else None


def _audit(workspace: str, was: Before, layout: gitlayout.Layout, run_id: str,
           keep_pth: bool, result: Result) -> None:
    tree = gitguard._Tree(workspace)
    try:
        # the caches: every entry new or changed, removed (a directory at a time)
        by_dir: dict[str, list[str]] = {}
        for path, ident in _idents(layout.caches).items():
            rel = _rel(workspace, path)
            if rel is not None and was.caches.get(path) != ident:
                d, _, name = rel.rpartition("/")
                by_dir.setdefault(d, []).append(name)
        for d, names in sorted(by_dir.items()):
            failed = gitguard.remove_all(tree, d, names, CACHE_REASON)
            result.moved.extend(failed)
            gone = {m.path for m in failed}
            result.removed.extend(p for p in (f"{d}/{n}" if d else n for n in names)
                                  if p not in gone)
        # the virtual environments
        venvs = [v for v in sorted({*was.venvs, *layout.venvs})
                 if _rel(workspace, v) is not None and not os.path.islink(v)
                 and os.path.isdir(v)]
        for venv in venvs:
            _venv(workspace, venv, was.venv, tree, run_id, keep_pth, result)
        # the directories a kept .envrc or mise configuration puts on PATH (then or now):
        # each program the run made or changed there, as a venv's bin/ but for RECORDs
        bins = {os.path.join(v, "bin") for v in venvs}
        for d in sorted({*was.path_dirs, *path_dirs(layout)} - bins):
            home = _rel(workspace, d)
            if (home is None or os.path.islink(d)
                    or any(x in d + "/" for x in gitlayout.LAYOUT_DIRS)):
                continue  # outside, or direnv's layout (its cache entries are removed)
            for path, ident in _idents(_entries([d])).items():
                if was.path.get(path) != ident:
                    _program(tree, "", home, path, f"{home}/{os.path.basename(path)}",
                             path not in was.path, None, run_id, result)
        # Python code outside the caches and the venvs' site-packages
        _loose(workspace, was.loose, layout, tree, run_id, result)
    finally:
        tree.close()


def _loose(workspace: str, was: dict[str, Ident], layout: gitlayout.Layout,
           tree: gitguard._Tree, run_id: str, result: Result) -> None:
    """What the run made or changed of layout.loose: a sitecustomize or usercustomize
    (a directory: made) and sourceless bytecode, moved aside; an extension module moved
    aside where it takes the place of a module (_shadowed), else named."""
    done = [m.path for m in result.moved]  # by the venvs' audit: gone, or theirs
    installed: list[set[str]] = []  # the names installed packages give, when first asked
    records: dict[str, dict[str, str]] = {}  # _record_owner's, by directory
    for path, ident in sorted(_idents(layout.loose).items()):
        rel = _rel(workspace, path)
        if (rel is None or was.get(path) == ident or rel.startswith(gitguard.QUARANTINE + "/")
                or any(rel == d or rel.startswith(d + "/") for d in done)):
            continue
        parent, name = os.path.split(path)
        new = path not in was
        installed_here = any(p in ("site-packages", "dist-packages")
                             for p in rel.split("/")[:-1])
        if name.split(".", 1)[0] in CUSTOMIZE or os.path.basename(parent).split(".", 1)[0] \
                in CUSTOMIZE:
            if stat.S_ISDIR(ident[0]) and not new:
                continue  # its entries are judged (a __pycache__ made changes it)
            if _in_package(rel):
                continue  # an installed package's own module: site.py never imports it
            what = "bytecode, " if name.endswith(".pyc") else ""
            why = (f"a sitecustomize or usercustomize ({what}made or changed by the run): "
                   "site.py imports it at every start of any interpreter whose path holds "
                   "its directory (a PYTHONPATH the person sets)")
        elif installed_here:
            continue  # an installed package's (the walk of a directory made listable
            # again names them all)
        elif name.endswith(".pyc"):
            why = ("bytecode outside __pycache__, made or changed by the run: imported as "
                   f"module {name[:-4]} where no source of that name comes first (from "
                   "a script's directory, before the standard library)")
        else:
            module, ok = _extension(name)
            if not ok:
                continue  # no name an import asks for
            if not installed:
                installed.append(_installed_names(layout))
            instead = _shadowed(parent, module, installed[0])
            owner = (_record_owner(workspace, path, records)
                     if instead.startswith("the installed ") else None)
            if not instead or owner:
                why = ("an extension module made or changed by the run, kept: " + (
                    f"the RECORD of {owner} lists it (pip install --target); from its "
                    f"directory an import of {module} loads it in place of {instead}"
                    if owner else "it takes the place of no source, standard or installed "
                    f"module (an import of {module} runs its native code)"))
                result.reported.append(Report(rel, why, _runs(path, Marker("extension", "")),
                                              "", "extension", new))
                continue
            why = (f"an extension module made or changed by the run, which `import {module}` "
                   f"loads in place of {instead}")
        _aside(tree, rel, why, _runs(path, Marker("loose", "")), run_id, result)
        done.append(rel)


def _in_package(rel: str) -> bool:
    """Is rel in a package beneath site-packages or dist-packages (not its top, which
    site.py or a .pth puts on the path)?"""
    parts = rel.split("/")
    return any(p in ("site-packages", "dist-packages") for p in parts[:-2])


def _extension(name: str) -> tuple[str, bool]:
    """(the module name, whether it is one an import loads) of NAME.so: MODULE.so or
    MODULE.TAG.so (importlib.machinery.EXTENSION_SUFFIXES' forms, any interpreter's)."""
    module, _, rest = name.partition(".")
    return module, module.isidentifier() and (rest == "so" or (
        rest.endswith(".so") and rest.count(".") == 1))


def _record_owner(workspace: str, path: str, records: dict[str, dict[str, str]]
                  ) -> str | None:
    """The distribution whose RECORD, in path's directory or one above it in the
    workspace, lists path (what `pip install --target DIR` writes beside what it
    installs). The tree can write one too: it only turns a move into a report."""
    d = os.path.dirname(path)
    while d == workspace or d.startswith(workspace + "/"):
        if d not in records:
            records[d] = {}
            for name in _listdir(d):
                if name.endswith(".dist-info"):
                    for entry in _record_entries(os.path.join(d, name, "RECORD"), d):
                        records[d].setdefault(entry, name.removesuffix(".dist-info"))
        if path in records[d]:
            return records[d][path]
        if d == workspace:
            break
        d = os.path.dirname(d)
    return None


def _shadowed(directory: str, module: str, installed: set[str]) -> str:
    """What `import MODULE` would load but for an extension module in directory: its
    source (or sourceless bytecode) or package beside it, else, where directory is no
    package of its own (a script's, a sys.path entry), the standard library's or an
    installed package's module. "" for none."""
    for suffix in (".py", ".pyc"):
        if os.path.lexists(os.path.join(directory, module + suffix)):
            return f"{module}{suffix} beside it"
    if os.path.isdir(os.path.join(directory, module)):
        return f"the package {module}/ beside it"
    if any(os.path.lexists(os.path.join(directory, f"__init__{s}")) for s in (".py", ".pyc")):
        return ""
    import sys

    if module in sys.stdlib_module_names:
        return f"the standard library's {module}"
    if module in installed:
        return f"the installed {module}"
    return ""


def _installed_names(layout: gitlayout.Layout) -> set[str]:
    """The top-level module names of the workspace venvs' site-packages and of ztsa's
    interpreter's (and its base's): what an extension module of the same name would
    take the place of from a script's directory."""
    import contextlib
    import site
    import sys

    dirs = [d for v in layout.venvs for d in site_dirs(v)]
    with contextlib.suppress(AttributeError, OSError):  # an interpreter without them
        dirs += site.getsitepackages() + site.getsitepackages([sys.base_prefix])
    names: set[str] = set()
    for d in dict.fromkeys(dirs):
        for name in _listdir(d):
            if not name.endswith((".dist-info", ".egg-info", ".pth")):
                names.add(name.split(".", 1)[0])
    return names


def _venv(workspace: str, venv: str, was: dict[str, Ident], tree: gitguard._Tree,
          run_id: str, keep_pth: bool, result: Result) -> None:
    markers = _markers(venv)
    now = _idents(markers)
    changed = {p for p, i in now.items() if was.get(p) != i}
    if not changed:
        return
    home = _rel(workspace, venv) or venv
    records: dict[str, dict[str, str]] = {}  # site -> path -> the distribution whose
    # RECORD, written by the run, lists it

    def listed(path: str, site: str) -> str | None:
        if site not in records:
            records[site] = {}
            for p in sorted(changed):
                if markers[p].kind == "record" and markers[p].site == site:
                    dist = os.path.basename(os.path.dirname(p)).removesuffix(".dist-info")
                    for entry in _record_entries(p, site):
                        records[site].setdefault(entry, dist)
        return records[site].get(path)

    # a module that a code-running .pth imports, changed: that .pth is changed in effect
    via: dict[str, list[str]] = {}
    for p in sorted(changed):
        if markers[p].kind == "module":
            via.setdefault(markers[p].pth, []).append(p)
    gone: list[str] = []  # directories moved aside (a customize package): their
    # entries went with them
    for path in sorted({*changed, *via}):
        marker = markers[path]
        rel = _rel(workspace, path)
        if (rel is None or marker.kind in ("record", "module")
                or any(path.startswith(d + "/") for d in gone)):
            continue
        runs = _runs(path, marker)
        if marker.kind == "pth":
            data = _read(path)
            code, _paths = pth_lines(data or b"")
            if not code and data is not None and len(data) <= MAX_PTH:
                result.reported.append(Report(rel, "a .pth file of a workspace virtual "
                                              "environment made or changed by the run "
                                              "(the directories it puts on the path)", runs,
                                              home, "pth", path not in was))
                continue
            owner = listed(path, marker.site)
            if path in via:
                names = ", ".join(os.path.relpath(m, marker.site) for m in via[path][:3])
                why = (f"a .pth file whose start-up code imports what the run made or "
                       f"changed ({names})")
            else:
                why = "a .pth file that runs code at every start, made or changed by the run"
            if keep_pth and owner is not None:
                result.reported.append(Report(rel, f"{why}; kept (--keep-pth): the run's "
                                              f"RECORD of {owner} lists it", runs, home,
                                              "pth", path not in was))
                continue
            why += (f" (the run's RECORD of {owner} lists it: --keep-pth keeps it)"
                    if owner else " (no RECORD the run wrote lists it)")
            _aside(tree, rel, why, runs, run_id, result)
        elif marker.kind == "customize":
            _aside(tree, rel, f"{os.path.basename(path).split('.')[0]}, which runs at every "
                   "start of a workspace virtual environment's interpreter, made or changed "
                   "by the run", runs, run_id, result)
            if not os.path.lexists(path):
                gone.append(path)
        elif marker.kind == "program":
            _program(tree, venv, home, path, rel, path not in was, listed, run_id, result)
        else:
            what = {"interpreter": "an interpreter of a workspace virtual environment",
                    "activate": "a workspace virtual environment's activation script (a "
                                "shell runs it when it is sourced)",
                    "config": "a workspace virtual environment's pyvenv.cfg (which "
                              "interpreter and standard library it uses)"}[marker.kind]
            result.reported.append(Report(rel, f"{what}, made or changed by the run", runs,
                                          home, marker.kind, path not in was))


def _program(tree: gitguard._Tree, venv: str, home: str, path: str, rel: str, new: bool,
             listed: Callable[[str, str], str | None] | None, run_id: str,
             result: Result) -> None:
    """A program of the venv's bin/ (not its interpreter or activation scripts) that the
    run made or changed: first on PATH once the environment is activated. Kept where a
    RECORD the run wrote lists it (pip's console scripts), and named when it takes the
    place of a program on ztsa's PATH; else moved aside. Without venv (and listed): one
    in the directory home that a kept .envrc or mise configuration puts first on PATH,
    where a build's output is ordinary (`go build -o bin/tool`): moved aside where it
    takes the place of a program on ztsa's PATH, else kept and named."""
    try:
        mode = os.lstat(path).st_mode
    except OSError:
        return
    if not stat.S_ISLNK(mode) and not (stat.S_ISREG(mode) and mode & 0o111):
        return  # nothing PATH runs (uv's deactivate.bat, a directory)
    shadowed = _on_path(os.path.basename(path), os.path.dirname(path))
    if listed is None:
        runs = _runs(path, Marker("program", ""))
        where = (f"a program in {home}/, which a kept .envrc or mise configuration puts "
                 "first on PATH, made or changed by the run")
        if shadowed:
            _aside(tree, rel, f"{where}: after `cd` there it runs in place of {shadowed}",
                   runs, run_id, result)
        else:
            result.reported.append(Report(rel, f"{where}, kept: it takes the place of no "
                                          "program on PATH", runs, home, "path", new))
        return
    owner = next((o for site in site_dirs(venv) if (o := listed(path, site))), None)
    instead = f"; once the environment is activated it runs in place of {shadowed}" \
        if shadowed else "; first on PATH once the environment is activated"
    runs = _runs(path, Marker("program", venv))
    if owner is None:
        _aside(tree, rel, "a program in a workspace virtual environment's bin/ made or "
               f"changed by the run, which no RECORD the run wrote lists{instead}", runs,
               run_id, result)
    elif shadowed:
        result.reported.append(Report(rel, f"a program in a workspace virtual environment's "
                                      f"bin/, kept: the run's RECORD of {owner} lists it"
                                      f"{instead}", runs, home, "program", new))


def _on_path(name: str, own: str) -> str | None:
    """The program name on ztsa's PATH (the person's, less the directory own)."""
    for d in os.environ.get("PATH", "").split(os.pathsep):
        if not os.path.isabs(d) or os.path.normpath(d) == os.path.normpath(own):
            continue
        p = os.path.join(d, name)
        if os.path.isfile(p) and os.access(p, os.X_OK):
            return p
    return None


def _aside(tree: gitguard._Tree, rel: str, why: str, runs: str, run_id: str,
           result: Result) -> None:
    try:
        moved = gitguard._move(tree, rel, (why, None, ""), run_id)
    except OSError as exc:
        moved = gitguard.Moved(rel, why, None, "", exc.strerror or str(exc))
    result.moved.append(moved._replace(runs=runs))


def _record_entries(record: str, site: str) -> list[str]:
    """The absolute paths a RECORD file lists (relative to site-packages)."""
    import csv

    data = _read(record, 8 << 20) or b""
    rows = csv.reader(data.decode("utf-8", "replace").splitlines())
    return [os.path.normpath(os.path.join(site, row[0])) for row in rows if row]


def _runs(path: str, marker: Marker) -> str:
    """What the file runs, in a line."""
    try:
        st = os.lstat(path)
    except OSError as exc:
        return f"unreadable: {exc.strerror}"
    if stat.S_ISLNK(st.st_mode):
        try:
            target = os.readlink(path)
        except OSError as exc:
            return f"a symbolic link: {exc.strerror}"
        real = os.path.realpath(path)
        return f"a link to {target}" + (f" ({real})" if real != target else "")
    if marker.kind in ("pth", "customize", "config") or stat.S_ISREG(st.st_mode):
        data = _read(path, 4096) or b""
        if marker.kind == "pth":
            code, paths = pth_lines(data)
            shown = code[:2] if code else [f"adds {p}" for p in paths[:3]]
            return _short("; ".join(shown) or "nothing")
        if marker.kind == "activate":
            return f"shell code of {st.st_size} bytes"
        if marker.kind == "config":
            keys = [line.strip() for line in data.decode("utf-8", "replace").splitlines()
                    if line.partition("=")[0].strip().lower() in ("home", "executable")]
            return _short(", ".join(keys) or "no home")
        if path.endswith(".pyc"):
            return f"Python bytecode ({st.st_size} bytes)"
        if data.startswith(b"\x7fELF"):
            what = "native code" if path.endswith(".so") else "a program"
            return f"{what} ({st.st_size} bytes)"
        first = data.decode("utf-8", "replace").splitlines()[:1]
        return _short(f"a file of {st.st_size} bytes" + (f", first line {first[0]!r}"
                                                           if first else ""))
    return "a directory" if stat.S_ISDIR(st.st_mode) else "not a regular file"


def _short(text: str, limit: int = 200) -> str:
    return text if len(text) <= limit else text[:limit - 3] + "..."
