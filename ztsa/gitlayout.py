"""The git repositories in a tree, and the files in each that make git run a program or
look elsewhere (docs/git-control.md says what git does with each and why it is here).

Git finds a repository by walking up from the current directory: a `.git` directory, a
`.git` file (`gitdir: PATH`), or a bare repository (HEAD, objects/, refs/). So every
such place in the workspace counts, however deep: a person, an editor or an agent may
run git in any directory of it. Within each git directory G:
- G/config and G/config.worktree: keys that run programs (core.fsmonitor, core.pager,
  filter.*, credential.helper, ...), include other files, or move the hooks;
- G/hooks, the directory that core.hooksPath names, and husky's `.husky`: executables
  git runs; and when an installed hook is pre-commit's, lefthook's or overcommit's, the
  configuration in the working tree it runs the commands of (`.pre-commit-config.yaml`,
  `lefthook.yml`, ...): a hook in all but name;
- G/commondir (a linked worktree's or a redirect's shared repository) and the `.git`
  file: where git takes the rest (config and hooks included) from;
- G/objects/info/alternates and G/info/attributes: where git reads objects, which
  drivers (defined in a config) apply to which files: no program of their own, but a
  repository's look elsewhere, kept as they are.
- G/modules/* and G/worktrees/* are git directories themselves (submodules, linked
  worktrees) and are found by the same walk.
"""

from __future__ import annotations

import os
import stat

from ztsa.lazy import LazyRe
from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable, Sequence

CONFIGS = ("config", "config.worktree")
REDIRECTS = ("commondir",)
# kept as they were when they exist; their absence is no risk
LOOK_ELSEWHERE = ("objects/info/alternates", "info/attributes", "gitdir")
# which untracked files `git status`, `git add -A` and editors never show: git writes it
# only at `git init` (comments); judged after a run, not kept read-only during it (a
# bind mount per repository doubled a run's cost beside 2,000 nested ones)
IGNORES = ("info/exclude",)
# git writes these in ordinary work (a rebase, a cherry-pick), so they stay writable;
# an `exec` line in them runs at the next `git rebase --continue`: judged after a run
TODO_LISTS = ("rebase-merge/git-rebase-todo", "sequencer/todo")
# and the merge strategy of a stopped rebase, cherry-pick or revert, which git runs as
# `git-merge-NAME` at `--continue` (on PATH, and with a slash in NAME as a path from the
# working tree's top) unless it is one of git's own: judged after a run too
STRATEGY_FILES = ("rebase-merge/strategy", "sequencer/opts")
OWN_STRATEGIES = ("ort", "recursive", "resolve", "octopus", "ours", "subtree")
# the hooks of git-hook managers, in a working tree's top: husky's run from there
HOOK_MANAGERS = (".husky", ".husky/_")
# hook managers whose installed hook runs what a file of the working tree's top lists:
# (a marker in the hook's text, that file's names); pre-commit's hook names its own
_LEFTHOOK = tuple(f"{d}{b}.{e}" for d in ("", ".", ".config/") for b in ("lefthook",
                  "lefthook-local") for e in ("yml", "yaml", "toml", "json", "jsonc"))
# lint-staged's (cosmiconfig's) names: a hook's `npx lint-staged` runs what they list
_LINT_STAGED = ("package.yaml", ".lintstagedrc", *(f".lintstagedrc.{e}" for e in (
    "json", "yaml", "yml", "js", "mjs", "cjs", "ts", "mts", "cts")), *(
    f"lint-staged.config.{e}" for e in ("js", "mjs", "cjs", "ts", "mts", "cts")))
# husky 4's (cosmiconfig's) names, where package.json has no `husky` key
_HUSKYRC = (".huskyrc", *(f".huskyrc.{e}" for e in ("json", "yaml", "yml", "js", "cjs")),
            "husky.config.js", "husky.config.cjs")
MANAGED = ((b"pre-commit", (".pre-commit-config.yaml",)), (b"lefthook", _LEFTHOOK),
           (b"overcommit", (".overcommit.yml",)), (b"lint-staged", _LINT_STAGED),
           (b"husky", _HUSKYRC))
# hooks that run commands listed in the working tree's package.json (a marker in the
# hook's text), and the keys they read there: husky 4's `husky.hooks`, lint-staged's,
# yorkie's `gitHooks`, the `pre-commit` package's, simple-git-hooks'
PACKAGE_HOOKS = (b"husky", b"lint-staged", b"yorkie", b"pre-commit", b"simple-git-hooks",
                 b"ghooks")
PACKAGE_HOOK_KEYS = ("husky", "lint-staged", "gitHooks", "pre-commit", "precommit",
                     "simple-git-hooks", "ghooks")
# lefthook's script directories (source_dir, source_dir_local): its hook runs from there
LEFTHOOK_SOURCES = (".lefthook", ".lefthook-local")
MAX_SOURCE_FILES = 1000  # beneath them, at most (more are not named: the gate's to judge)
# a hook's scripts, the scripts those run, and theirs: how deep names are followed
SCRIPT_DEPTH = 3
SMALL = 1 << 20  # control files larger than this are judged without their text


class Layout(NamedTuple):
    """Absolute paths, found without following a symlink."""

    gitdirs: list[str]  # .git directories, bare repositories, modules/*, worktrees/*
    gitfiles: list[str]  # `.git` entries that are not directories (files, symlinks)
    hook_dirs: list[str]  # G/hooks, every core.hooksPath a config names, .husky
    named: list[str]  # files a config includes, programs its code-running keys name
    unreadable: list[str]  # directories the walk could not list
    included: list[str]  # those of named that a config includes (read as config)
    policies: list[str]  # every .ztsa.toml and pyproject.toml: ztsa's own policy
    # for a workspace there (ztsa.tiers), which a later run may be started in
    instructions: list[str]  # every file a tool obeys wherever it sits (an agent's
    # CLAUDE.md, AGENTS.md, .envrc, .vscode/tasks.json, .config/mise/config.toml:
    # ztsa.surfaces.later), at any depth, but in installed packages, and each link that
    # stands for a directory of such a path (a nested `.vscode` that is a link)
    # found by the same walk for the bytecode audit (ztsa.sandbox.bytecode): every entry
    # of a bytecode cache (a `__pycache__` directory's, bootsnap's) and every pyvenv.cfg
    caches: tuple[str, ...] = ()
    venvs: tuple[str, ...] = ()  # the directories holding a pyvenv.cfg or bin/activate(.*)
    # the working trees' package.json files whose hook keys (PACKAGE_HOOK_KEYS) an
    # installed hook runs the commands of (husky 4's, lint-staged's, yorkie's)
    manifests: tuple[str, ...] = ()
    # Python code outside a cache that runs in place of source: every *.pyc and *.so
    # but in installed packages (site-packages, dist-packages), every sitecustomize and
    # usercustomize (and what a directory so named holds)
    loose: tuple[str, ...] = ()


def find(root: str, retry: Callable[[str], bool] | None = None) -> Layout:
    """Every repository below root (root included), however deep: inside git
    directories too (a repository planted in .git/objects is one git finds through a
    redirect). retry(d): make a directory the walk cannot list listable (True: try
    again). The walk itself is native/gitwalk.c: it visits every directory."""
    from ztsa.surfaces import later

    gitdirs: list[str] = []
    gitfiles: list[str] = []
    policies: list[str] = []
    instructions: list[str] = []
    unreadable: list[str] = []
    caches: list[str] = []
    staged: list[str] = []  # lint-staged's configurations, wherever they sit
    venvs: list[str] = []
    loose: list[str] = []
    todo = [root]
    while todo:
        for kind, path in _walk(todo.pop()):
            if kind == "D":
                gitdirs.append(path)
            elif kind == "F":
                gitfiles.append(path)
            elif kind == "T":
                policies.append(path)
            elif kind == "I":
                if later(os.path.relpath(path, root), link=True):
                    instructions.append(path)
                elif os.path.basename(path) in _LINT_STAGED:
                    staged.append(path)
            elif kind == "Y":
                caches.append(path)
            elif kind == "V":  # pyvenv.cfg, or bin/activate(.*): the venv above bin/
                d = os.path.dirname(path)
                venvs.append(d if os.path.basename(path) == "pyvenv.cfg"
                             else os.path.dirname(d))
            elif kind == "X":
                loose.append(path)
            elif retry is not None and retry(path):
                todo.append(path)
            elif os.access(path, os.X_OK):  # git can still go in and open names there
                unreadable.append(path)
    caches = _layout_kept(caches, venvs)
    gitdirs = list(dict.fromkeys(gitdirs))
    hooks = [os.path.join(g, "hooks") for g in gitdirs]
    included: list[str] = []
    programs: list[str] = []
    manifests: list[str] = []
    for g in gitdirs:
        paths, includes, runs = _named_by_configs(g)
        hooks += paths
        included += includes
        husky = ([os.path.join(os.path.dirname(g), h) for h in HOOK_MANAGERS]
                 if os.path.basename(g) == ".git" else [])
        hooked, manifest = _hook_runs(g, [os.path.join(g, "hooks"), *paths, *husky], runs,
                                      staged)
        programs += runs + hooked
        manifests += manifest
        hooks += husky
    return Layout(sorted(gitdirs), sorted(gitfiles), list(dict.fromkeys(hooks)),
                  sorted(set(included + programs)), sorted(unreadable), sorted(set(included)),
                  sorted(set(policies)), sorted(set(instructions)), tuple(caches),
                  tuple(sorted(set(venvs))), tuple(sorted(set(manifests))), tuple(loose))


LAYOUT_DIRS = ("/.direnv/", "/.devenv/")


# what of a virtual environment in a layout directory is no cache entry: the standard
# library links and site-packages (lib/pythonX.Y/...), which the venv audit judges like
# any venv's, and the interpreters, which it names
_VENV_KEPT = ("lib/python", "lib64/python", "lib/pypy", "lib64/pypy", "bin/python",
              "bin/pypy")


def _layout_kept(caches: list[str], venvs: list[str]) -> list[str]:
    """The walk's cache entries without what a virtual environment in a layout directory
    of direnv's or devenv's holds in _VENV_KEPT (what `pip install` put in its
    site-packages stays). Its bin/, which direnv puts first on PATH, is a cache entry
    like the rest, and so is all else there: a pyvenv.cfg the tree adds to
    `.direnv/perl5` keeps nothing of `lib/perl5`, which PERL5LIB puts first."""
    inner = tuple(v + "/" for v in venvs if any(d in v + "/" for d in LAYOUT_DIRS))
    if not inner:
        return caches
    out: list[str] = []
    for p in caches:
        if p.startswith(inner):
            rest = p[max(len(v) for v in inner if p.startswith(v)):]
            if rest.startswith(_VENV_KEPT) and (
                    rest.startswith("lib") or "/" not in rest[4:]):
                continue
        out.append(p)
    return out


def _hook_runs(gitdir: str, hook_dirs: list[str], programs: list[str],
               staged: Sequence[str] = ()) -> tuple[list[str], list[str]]:
    """(the working-tree files that the installed hooks run (absolute), existing or not:
    a hook manager's configuration (pre-commit's `--config=FILE`, the default when it
    names none; lefthook's, overcommit's and lint-staged's names) and lefthook's script
    directories; and the scripts that a hook, such a configuration's commands, or a
    program a config runs (PROGRAMS) name by path (`sh scripts/check.sh`, a pre-commit
    local hook's entry), and theirs, SCRIPT_DEPTH deep: a hook in all but name;
    the package.json whose hook keys a hook runs, when one does)."""
    import re

    top = worktree_of(gitdir)
    out: list[str] = []
    manifests: list[str] = []
    commands: list[str] = []
    scripts = list(programs)
    for d in hook_dirs:
        try:
            names = sorted(os.listdir(d))
        except OSError:
            continue
        for name in names:
            text = b"" if name.endswith(".sample") else read_small(os.path.join(d, name))
            if not text:
                continue
            commands.append(text.decode("utf-8", "replace"))
            if any(m in text for m in PACKAGE_HOOKS):
                manifests = [os.path.join(top, "package.json")]
            for marker, files in MANAGED:
                if marker not in text:
                    continue
                named = [m.decode("utf-8", "replace") for m in
                         re.findall(rb"--config[= ]['\"]?([^\s'\")]+)", text)]
                configs = [os.path.join(top, f) for f in
                           (named if marker == b"pre-commit" and named else files)]
                if marker == b"lint-staged":  # the nearest to each staged file, any depth
                    configs += [p for p in staged if p.startswith(top + os.sep)]
                if marker == b"lefthook":
                    configs, dirs = _lefthook_more(top, configs)
                    out += _files_beneath(top, (*LEFTHOOK_SOURCES, *dirs))
                out += configs
                for config in configs:
                    commands += _config_commands(config, marker)
    for manifest in manifests:
        commands += _package_commands(read_small(manifest) or b"")
    return out + _scripts_run(top, commands, scripts), manifests


def package_hook_keys(data: bytes) -> object:
    """What of a package.json an installed hook obeys: PACKAGE_HOOK_KEYS' values (a file
    that is not a JSON object: its whole text)."""
    from ztsa.parsing import ParseError, load_json

    try:
        doc = load_json(data.decode("utf-8", "replace"), "package.json")
    except ParseError:
        return data
    if not isinstance(doc, dict):
        return data
    keys = {k: doc[k] for k in PACKAGE_HOOK_KEYS if k in doc}
    config = doc.get("config")  # ghooks reads `config.ghooks`
    if isinstance(config, dict) and "ghooks" in config:
        keys["config.ghooks"] = config["ghooks"]
    return keys


def _package_commands(data: bytes) -> list[str]:
    """The commands of a package.json's hook keys."""
    from ztsa.parsing import every_string

    keys = package_hook_keys(data)
    return every_string(keys) if isinstance(keys, dict) else []


def _lefthook_more(top: str, configs: list[str]) -> tuple[list[str], list[str]]:
    """(lefthook's configurations and the files their `extends` lists, from the top, as
    deep as MAX_INCLUDE_DEPTH; the directories their `source_dir` and `source_dir_local`
    name, relative): lefthook merges the first and runs scripts from the second."""
    out, dirs = list(configs), []
    todo = [(c, 0) for c in configs]
    while todo:
        path, depth = todo.pop()
        doc = _config_doc(path)
        if not isinstance(doc, dict):
            continue
        extends = doc.get("extends")
        for rel in [extends] if isinstance(extends, str) else \
                extends if isinstance(extends, list) else []:
            full = os.path.normpath(os.path.join(top, str(rel)))
            if full.startswith(top + os.sep) and full not in out and \
                    depth < MAX_INCLUDE_DEPTH:
                out.append(full)
                todo.append((full, depth + 1))
        for key in ("source_dir", "source_dir_local"):
            value = doc.get(key)
            if isinstance(value, str) and os.path.normpath(
                    os.path.join(top, value)).startswith(top + os.sep):
                dirs.append(os.path.normpath(value))
    return out, dirs


def _files_beneath(top: str, dirs: tuple[str, ...]) -> list[str]:
    """The directories dirs of top and the files beneath them (links not followed), at
    most MAX_SOURCE_FILES."""
    out: list[str] = []
    for rel in dirs:
        out.append(os.path.join(top, rel))
        for d, subdirs, files in os.walk(os.path.join(top, rel)):
            subdirs[:] = [x for x in subdirs if not os.path.islink(os.path.join(d, x))]
            out += [os.path.join(d, f) for f in [*files, *subdirs]]
            if len(out) > MAX_SOURCE_FILES:
                return out[:MAX_SOURCE_FILES]
    return out


def _config_doc(path: str) -> object:
    """A hook manager's configuration parsed by its suffix (YAML, TOML, JSON; `.huskyrc`
    and `.lintstagedrc` are YAML, which JSON is too); None: absent, unreadable, or a
    JavaScript configuration (kept, not read)."""
    data = read_small(path)
    if not data:
        return None
    text = data.decode("utf-8", "replace")
    try:
        if path.endswith((".yaml", ".yml")) or os.path.basename(path) in (
                ".lintstagedrc", ".huskyrc"):
            from ztsa.manifests.common import load_yaml

            return load_yaml(text, path)
        if path.endswith(".toml"):
            from ztsa.parsing import load_toml

            return load_toml(text, path)
        if path.endswith((".json", ".jsonc")):
            from ztsa.parsing import load_jsonc

            return load_jsonc(text, path)
    except Exception:
        return None
    return None


def _config_commands(path: str, marker: bytes) -> list[str]:
    """The commands a hook manager's configuration runs: pre-commit's local hooks'
    entries (a `script` hook's entry is a path from the working tree's top), every
    `run` of lefthook's, every string of lint-staged's. Unreadable: none (the file
    itself is kept; the gate reports it)."""
    doc = _config_doc(path)
    if doc is None:
        return []
    if marker == b"pre-commit":
        out = []
        repos = doc.get("repos") if isinstance(doc, dict) else None
        for repo in repos if isinstance(repos, list) else []:
            hooks = repo.get("hooks") if isinstance(repo, dict) and repo.get(
                "repo") == "local" else None
            for hook in hooks if isinstance(hooks, list) else []:
                entry = hook.get("entry") if isinstance(hook, dict) else None
                if not isinstance(entry, str):
                    continue
                if str(hook.get("language")) in ("script", "unsupported_script") and \
                        not entry.startswith(("/", "./")):
                    entry = "./" + entry
                out.append(entry)
        return out
    from ztsa.parsing import every_string

    if marker != b"lefthook":
        return every_string(doc)
    runs: list[str] = []  # lefthook's: each `run`, in commands, jobs and their groups
    todo, depth = [doc], 0
    while todo and depth < 32:
        nxt: list[object] = []
        for value in todo:
            items = value.items() if isinstance(value, dict) else enumerate(
                value) if isinstance(value, list) else ()
            for k, v in items:
                if k == "run":
                    runs += every_string(v)
                else:
                    nxt.append(v)
        todo, depth = nxt, depth + 1
    return runs


def _scripts_run(top: str, commands: list[str], scripts: list[str]) -> list[str]:
    """The files of the working tree top that the commands name by path as programs
    (follow.refs: `sh scripts/x.sh`, `./run`, `python tools/x.py`), from top, where git
    runs hooks; and what the shell scripts among them and among SCRIPTS run in turn, as
    surfaces reads a kept script (`scripts_in_turn`: beside it behind `$(dirname "$0")/`,
    within its bounds). Existing or not: a file the tree makes there would run the
    same."""
    from ztsa import follow
    from ztsa.surfaces import scripts_in_turn

    real = os.path.realpath(top)
    first: list[tuple[str, str, str]] = []
    for text in commands:
        for ref in follow.refs(text, "")[0]:
            if any(c in ref.rel for c in "$`{}*?"):
                continue
            full = os.path.normpath(os.path.join(real, ref.base, ref.rel))
            if full.startswith(real + os.sep):
                first.append((full[len(real) + 1:], "", ref.lang))
    first += [(p[len(real) + 1:], "", "") for p in map(os.path.realpath, scripts)
              if p.startswith(real + os.sep)]
    rels = [r for r, _cwd, _lang in first] + scripts_in_turn(real, first)
    return [os.path.join(top, r) for r in dict.fromkeys(rels)]


def _walk(root: str) -> list[tuple[str, str]]:
    """(kind, path) records of native/gitwalk.c below root."""
    from ztsa._native import ffi, lib
    from ztsa.surfaces import later_specs

    out = ffi.new("char **")
    # and lint-staged's configurations at any depth (it takes the one nearest each
    # staged file): kept where a hook runs lint-staged (_hook_runs)
    names = b"".join(os.fsencode(n) + b"\0" for n in (*later_specs(), *_LINT_STAGED)) + b"\0"
    n = lib.ztsa_git_walk(os.fsencode(root), names, out)
    if n < 0:
        raise OSError(-n, os.strerror(-n), root)
    try:
        data = ffi.unpack(out[0], n) if n else b""
    finally:
        lib.ztsa_free(out[0])
    return [(chr(r[0]), os.fsdecode(r[1:])) for r in data.split(b"\0")[:-1]]


def read_small(path: str, limit: int = SMALL) -> bytes | None:
    """A control file's bytes, without following a symlink (None: absent, a symlink, not
    a regular file, larger than LIMIT, or unreadable)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_CLOEXEC | os.O_NONBLOCK)
    except OSError:
        return None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode) or st.st_size > limit:
            return None
        return os.read(fd, limit + 1)
    except OSError:
        return None
    finally:
        os.close(fd)


def _entries(gitdir: str, name: str) -> list[tuple[str, str, str, int]]:
    from ztsa.parsing import ParseError, parse_git_config

    data = read_small(os.path.join(gitdir, name))
    if data is None:
        return []
    key = (data, name)
    if key not in _PARSED:
        try:
            got = parse_git_config(data.decode("utf-8", "replace"), name)
        except ParseError:
            got = []
        if len(_PARSED) >= 4096:
            _PARSED.clear()
        _PARSED[key] = got
    return _PARSED[key]


# _entries by text: nested repositories mostly share one config text (git init's), and
# each walk (before the run and after it) reads every repository's
_PARSED: dict[tuple[bytes, str], list[tuple[str, str, str, int]]] = {}


def worktree_of(gitdir: str) -> str:
    """Where git runs hooks and takes a relative core.hooksPath from: the working tree's
    top. The parent of a `.git` directory; a submodule's core.worktree; a linked
    worktree's `gitdir` file's directory; else the git directory itself (bare)."""
    if os.path.basename(gitdir) == ".git":
        return os.path.dirname(gitdir)
    try:
        for name in CONFIGS:
            for section, key, value, _ in _entries(gitdir, name):
                if section == "core" and key == "worktree" and value:
                    return os.path.realpath(os.path.join(gitdir, value))
        back = read_small(os.path.join(gitdir, "gitdir"))
        if back:
            return os.path.dirname(os.path.realpath(os.path.join(
                gitdir, back.decode("utf-8", "replace").strip())))
    except ValueError:  # a NUL in a planted value: no working tree git could use
        pass
    return gitdir


def _named_by_configs(gitdir: str) -> tuple[list[str], list[str], list[str]]:
    """(the core.hooksPath directories, the included files, the programs) that the
    configs of gitdir name, and the files those include, as deep as git follows them:
    included files relative to the including file's directory; in a code-running value,
    every word that is a path and the module of a `-m NAME` (git runs it in the working
    tree's top, first on the interpreter's path), relative to the working tree."""
    hooks: list[str] = []
    includes: list[str] = []
    programs: list[str] = []
    top = worktree_of(gitdir)
    todo = [(os.path.join(gitdir, name), 0) for name in CONFIGS]
    seen: set[str] = set()
    while todo:
        path, depth = todo.pop(0)
        if path in seen or depth > MAX_INCLUDE_DEPTH:
            continue
        seen.add(path)
        for section, key, value, _ in _file_entries(path):
            full = f"{section}.{key}"
            generic, _ = pattern(full)
            if not value or "\0" in value:
                continue
            if generic == "core.hookspath":
                hooks.append(os.path.realpath(os.path.join(top, os.path.expanduser(value))))
            elif generic in ("include.path", "includeif.*.path"):
                included = os.path.realpath(os.path.join(os.path.dirname(path),
                                                         os.path.expanduser(value)))
                includes.append(included)
                todo.append((included, depth + 1))
            elif runs_code(full, value):
                programs += [os.path.realpath(os.path.join(top, os.path.expanduser(w)))
                             for w in _paths_in_command(value)]
    return hooks, includes, programs


MAX_INCLUDE_DEPTH = 10  # git's own limit on nested includes


def _file_entries(path: str) -> list[tuple[str, str, str, int]]:
    return _entries(os.path.dirname(path), os.path.basename(path))


def _paths_in_command(value: str) -> list[str]:
    """The words of a command (as the shell splits it) that name a file in the working
    tree: each with a slash, and for `-m NAME` the module's file and package."""
    import shlex
    from itertools import pairwise

    try:
        words = shlex.split(value.lstrip("!"))
    except ValueError:
        words = value.lstrip("!").split()
    out = [w for w in words if "/" in w]
    for flag, name in pairwise(words):
        if flag == "-m" and name and "/" not in name:
            parts = name.split(".")
            out += [os.path.join(*parts) + ".py", parts[0], parts[0] + ".py"]
    return list(dict.fromkeys(out))


def gitfile_target(path: str) -> str | None:
    """The directory a `.git` file names, read as git reads it (`gitdir: ` exactly, then
    the path), or None when git would not take it."""
    data = read_small(path)
    if data is None or not data.startswith(b"gitdir: "):
        return None
    return redirect_target(data[len(b"gitdir: "):], os.path.dirname(path))


def redirect_target(data: bytes, base: str) -> str | None:
    """Where a redirect's text (a `.git` file's path, a commondir) leads, as git takes
    it: its trailing CRs and LFs dropped and nothing else (spaces are part of the
    name), relative to BASE, and then resolved in order, each symlink before the `..`
    after it, as the kernel resolves it (never normalised first). None for a NUL in it,
    which git's reading and ztsa's would part at."""
    while data[-1:] in (b"\n", b"\r"):
        data = data[:-1]
    if b"\0" in data:
        return None
    return os.path.realpath(os.path.join(base, os.fsdecode(data)))


def control_paths(layout: Layout) -> list[str]:
    """What must not change for git to run nothing new: per git directory its configs,
    hooks and redirects (present or not), what it reads elsewhere when present, the
    hooks directories, the `.git` files, and what the configs include or run."""
    out: list[str] = []
    for g in layout.gitdirs:
        out += [os.path.join(g, n) for n in (*CONFIGS, *REDIRECTS, "hooks")]
        out += [p for p in (os.path.join(g, n) for n in LOOK_ELSEWHERE)
                if os.path.lexists(p)]
    out += layout.hook_dirs + layout.gitfiles + layout.named
    return list(dict.fromkeys(out))


def patterns(data: bytes | None) -> set[bytes]:
    """The patterns of an ignore file (info/exclude) as git reads them: every line but
    blank ones and comments, a CR before its LF dropped."""
    out: set[bytes] = set()
    for line in (data or b"").split(b"\n"):
        line = line.removesuffix(b"\r")
        if line.strip() and not line.startswith(b"#"):
            out.add(line)
    return out


def audited_paths(layout: Layout) -> list[str]:
    """control_paths, and the to-do lists and strategies git writes in ordinary work."""
    return [*control_paths(layout),
            *(os.path.join(g, t) for g in layout.gitdirs
              for t in (*TODO_LISTS, *STRATEGY_FILES, *IGNORES))]


# ---- configuration keys ----

# Keys that run a program or send git elsewhere (git-config(1)); the gate reports them.
# Names are lower-case; "*" stands for a subsection.
RUNS_CODE = frozenset({
    "core.fsmonitor", "core.hookspath", "core.sshcommand", "core.pager", "core.editor",
    "core.askpass", "core.gitproxy", "core.alternaterefscommand",
    "core.attributesfile", "include.path", "includeif.*.path", "credential.helper",
    "credential.*.helper", "filter.*.clean", "filter.*.smudge", "filter.*.process",
    "diff.external", "diff.*.textconv", "diff.*.command", "merge.*.driver",
    "sequence.editor", "gpg.program", "gpg.*.program", "gpg.ssh.defaultkeycommand",
    "remote.*.uploadpack", "remote.*.receivepack", "remote.*.proxy",
    "uploadpack.packobjectshook", "protocol.allow", "protocol.*.allow", "url.*.insteadof",
    "url.*.pushinsteadof", "http.proxy", "http.*.proxy", "submodule.*.update",
    "web.browser", "browser.*.cmd", "browser.*.path", "man.*.cmd", "man.*.path",
    "difftool.*.cmd", "difftool.*.path", "mergetool.*.cmd", "mergetool.*.path",
    "pager.*", "alias.*", "tar.*.command", "sendemail.smtpserver",
    "sendemail.tocmd", "sendemail.cccmd", "ssh.variant", "trace2.eventtarget",
    "trace2.normaltarget", "trace2.perftarget",
})

# Keys git itself (init, clone, submodule, worktree, branch, remote, fetch, lfs) and
# ordinary work write into a repository's config, with none of the effects above (a
# key naming a file git only reads as data, such as commit.template, is among them).
# After a run, a repository's new config keeps only these.
SAFE = frozenset({
    "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
    "core.ignorecase", "core.precomposeunicode", "core.symlinks", "core.autocrlf",
    "core.safecrlf", "core.eol", "core.sparsecheckout", "core.sparsecheckoutcone",
    "core.quotepath", "core.compression", "core.abbrev", "core.checkstat",
    "core.trustctime", "core.untrackedcache", "core.splitindex", "core.commitgraph",
    "core.multipackindex", "core.preloadindex", "core.longpaths", "core.whitespace",
    "core.bigfilethreshold", "core.packedrefstimeout", "core.filesreflocktimeout",
    "extensions.objectformat", "extensions.worktreeconfig", "extensions.partialclone",
    "extensions.refstorage", "extensions.noop",
    "remote.*.url", "remote.*.pushurl", "remote.*.fetch", "remote.*.push",
    "remote.*.tagopt", "remote.*.mirror", "remote.*.prune", "remote.*.prunetags",
    "remote.*.promisor", "remote.*.partialclonefilter", "remote.*.skipdefaultupdate",
    "branch.*.remote", "branch.*.merge", "branch.*.rebase", "branch.*.pushremote",
    "branch.*.description", "user.name", "user.email", "user.signingkey",
    "submodule.*.url", "submodule.*.active", "submodule.*.branch", "submodule.active",
    "init.defaultbranch", "gc.auto", "gc.autodetach", "gc.autopacklimit",
    "gc.reflogexpire", "gc.reflogexpireunreachable", "gc.pruneexpire",
    "pack.threads", "pack.windowmemory", "index.version", "index.threads",
    "fetch.prune", "fetch.recursesubmodules", "fetch.writecommitgraph", "pull.rebase",
    "pull.ff", "push.default", "push.autosetupremote", "rebase.autosquash",
    "rebase.autostash", "rebase.updaterefs", "merge.ff", "merge.conflictstyle",
    "commit.gpgsign", "tag.gpgsign", "advice.detachedhead", "color.ui",
    "maintenance.auto", "maintenance.strategy", "lfs.repositoryformatversion",
    "lfs.url", "lfs.fetchexclude", "lfs.fetchinclude", "status.showuntrackedfiles",
    "receive.denycurrentbranch", "receive.denynonfastforwards", "uploadpack.allowfilter",
    "uploadpack.allowanysha1inwant", "uploadpack.allowreachablesha1inwant",
    "diff.renames", "diff.algorithm", "log.date", "safe.directory",
    "core.sharedrepository", "core.excludesfile", "commit.template", "submodule.recurse",
    "diff.submodule", "status.submodulesummary", "feature.manyfiles",
    "feature.experimental", "fetch.parallel", "submodule.fetchjobs", "index.skiphash",
    "core.fsyncmethod", "gc.writecommitgraph", "fetch.showforcedupdates",
    "checkout.defaultremote", "clone.defaultremotename",
})


def safe_change(key: str, value: str, old: list[tuple[str, str]],
                inside: Callable[[str], bool] | None = None) -> bool:
    """Whether an entry added to a config that existed before the run is one of the few
    git itself writes there (`git submodule update --init`, a new branch's upstream):
    stricter than `safe`, which judges a repository the tree made. A remote's URL, a
    push URL, a mirror or push refspec, a repository format: never (they send git
    elsewhere, or break the repository). native/gitconfig.c holds the same list."""
    generic, _ = pattern(key)
    v = value.replace('"', "").split("#")[0].split(";")[0].strip()
    if "\\" in value:
        return False
    if generic == "submodule.*.url":
        return bool(v) and not v.startswith("-") and "::" not in v
    if generic == "submodule.*.active" or generic == "branch.*.rebase":
        return v in ("true", "false")
    if generic == "submodule.*.update":
        return v in ("checkout", "rebase", "merge", "none")
    if generic in ("submodule.*.branch", "user.name", "user.email"):
        return True
    if generic == "branch.*.merge":
        return v.startswith("refs/")
    if generic == "branch.*.remote":
        return v == "." or any(pattern(k)[0] == "remote.*.url" and k.lower().startswith(
            "remote.") and k[len("remote."):-len(".url")] == v for k, _ in old)
    if generic == "core.worktree":
        return inside is not None and inside(v)
    return False


def pattern(key: str) -> tuple[str, str]:
    """(the key with its subsection as "*", the key as it is), lower-cased."""
    parts = key.split(".")
    if len(parts) >= 3:
        return ".".join([parts[0].lower(), "*", parts[-1].lower()]), key
    return key.lower(), key


def runs_code(key: str, value: str) -> bool:
    """Whether git-config(1) documents this key as running a program or sending git
    elsewhere ("core.fsmonitor = false" does not)."""
    generic, _ = pattern(key)
    section = generic.split(".", 1)[0]
    if generic == "core.fsmonitor" and value.strip().lower() in ("false", "no", "off", "0",
                                                                 ""):
        return False
    if generic == "submodule.*.update" and not value.strip().startswith("!"):
        return False
    return generic in RUNS_CODE or f"{section}.*" in RUNS_CODE


# what `git lfs install` writes into a repository's config, exactly: git-lfs, found on
# the PATH of whoever runs git, with its own arguments (a filter of any other name, or
# any other value, runs what the repository chose)
LFS_CONFIG = {
    "filter.lfs.clean": "git-lfs clean -- %f",
    "filter.lfs.smudge": "git-lfs smudge -- %f",
    "filter.lfs.process": "git-lfs filter-process",
}
LFS_HOOKS = frozenset({"pre-push", "post-checkout", "post-commit", "post-merge"})
# the hooks `git lfs install` writes: a check that git-lfs exists, then git-lfs itself
_LFS_GUARD = LazyRe(
    r'command -v git-lfs >/dev/null 2>&1 \|\| \{ (?:printf >&2 "\\n%s\\n\\n" |echo >&2 )'
    r'"[^"`$\\]*(?:\\n[^"`$\\]*)*"; exit 2; \}')


def lfs_default(key: str, value: str) -> bool:
    """Is this config key and value exactly what `git lfs install` writes?"""
    return LFS_CONFIG.get(key.lower()) == value.strip()


def lfs_hook(name: str, data: bytes) -> bool:
    """Is this hook, byte for byte in its commands, the one `git lfs install` writes for
    its name (a shebang, the git-lfs check, `git lfs NAME "$@"`, nothing else)?"""
    if name not in LFS_HOOKS:
        return False
    try:
        text = data.decode()
    except UnicodeDecodeError:
        return False
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    return (len(lines) == 3 and lines[0] in ("#!/bin/sh", "#!/usr/bin/env sh")
            and _LFS_GUARD.fullmatch(lines[1]) is not None
            and lines[2] == f'git lfs {name} "$@"')


def safe(key: str, value: str, inside: Callable[[str], bool] | None = None) -> bool:
    """Whether a key is one git writes in ordinary work, with a value that runs nothing
    (a remote's URL through `ext::` runs a command). core.worktree, which git writes
    for a submodule, is safe when inside(value) says that the working tree it names is
    in the workspace."""
    generic, _ = pattern(key)
    if generic == "core.worktree":
        return inside is not None and inside(value)
    if generic not in SAFE:
        return generic == "core.fsmonitor" and not runs_code(key, value)
    if generic in ("remote.*.url", "remote.*.pushurl", "submodule.*.url"):
        return not value.lstrip().lower().startswith("ext::")
    return True
