"""Workspace auto-exec before any sandbox.

## What it checks
Files that make tools run workspace code as soon as the folder is opened or a git
command runs: a devcontainer (`.devcontainer/devcontainer.json` and `.devcontainer.json`
at any depth, as VS Code offers the one of whatever folder it opens, and
`.devcontainer/*/devcontainer.json`) with an `initializeCommand` (it runs on the host)
or whose container can take the host (`privileged`, `--privileged`, `--pid=host`, an
unconfined `--security-opt` or a `--cap-add` of a host capability in `runArgs`:
SYS_ADMIN, ALL, SYS_MODULE, DAC_READ_SEARCH, SYS_RAWIO, in any case; those capabilities
in `capAdd`, an unconfined `securityOpt`, a daemon socket among `mounts` or `runArgs`,
and the same in the services of the `dockerComposeFile` it names; `seccomp=unconfined`
alone, which the Go, C++ and Rust templates set for a debugger, is advice): the catalogue's
`devcontainer-*` settings of this rule; `.envrc` (direnv) at any depth (direnv runs the
one of whatever directory a shell enters: the catalogue's `direnv-envrc`, test data
included); a `.husky/` directory that something installs (an install hook or dependency
that runs husky, or a `core.hooksPath` naming it: a `.husky/` nothing installs runs
nothing); an install hook of the root `package.json` that installs git hooks
(`simple-git-hooks`, `lefthook install`, `husky`, `pre-commit install`, `git config
core.hooksPath`), or a `lefthook` or `simple-git-hooks` dependency with its
configuration (`lefthook.yml`, a `simple-git-hooks` table), which installs the hooks
from its own install script (each command the configuration runs is named, by hook);
and, in every git repository in the workspace (the top level, nested ones, submodules'
`.git/modules/*`, linked worktrees, bare ones): config keys that run a program or send
git elsewhere (`core.fsmonitor`, `core.hooksPath`, `core.pager`, `include.path`,
`filter.*` other than the git-lfs filter exactly as `git lfs install` writes it,
`credential.helper`, and the rest of `ztsa.gitlayout.RUNS_CODE`), executable hooks other
than `*.sample` and git-lfs's own (in `hooks/` and in the directory `core.hooksPath`
names; for an installed pre-commit hook, also each local hook of
`.pre-commit-config.yaml`, the command it runs on every commit), a `commondir` that is
not the repository's own, a `.git` file that leads outside the workspace or into its
files rather than a git directory. Files `ztsa exec` moved aside after a run
(`.ztsa-quarantine/`) are named, as advice: they are inert there.

## Why it matters
These run before any sandbox exists: an IDE opening the folder, direnv entering it,
or the agent's first `git status` executes whatever the repository chose.

## How to fix
Remove them, or inspect each one before opening the repository with tools that honour
it; delete `.ztsa-quarantine/` once you have looked at what it holds. Clone untrusted
repositories with `git clone --config core.hooksPath=/dev/null` and do not allow
direnv or devcontainers for them.
"""

from __future__ import annotations

import json
import os
import posixpath
import re
import stat

from ztsa import gitlayout
from ztsa.context import Context
from ztsa.findings import Findings
from ztsa.follow import judge
from ztsa.lazy import LazyRe
from ztsa.model import Nature, Outcome, Severity
from ztsa.parsing import ParseError, line_of, parse_git_config
from ztsa.registry import rule

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.surfacecheck import Hit
    from ztsa.surfaces import Setting


@rule(id="AGT009", slug="workspace-auto-exec", title="Workspace auto-exec before any sandbox",
      severity=Severity.HIGH,
      nature=Nature.ATTACK, actions="W/W/B")
def check(ctx: Context) -> Outcome:
    f = Findings()
    from ztsa.surfacecheck import files_of, older, settings_of

    # devcontainers, and the Compose files they name; .envrc below
    older(ctx, f, "AGT009", word, skip=("direnv-envrc",))
    nix: list[str] = []
    for s in settings_of("AGT009"):
        if s.id == "direnv-envrc":  # at any depth: direnv runs the one of each directory
            nix += [rel for rel, _advisory in files_of(ctx, s, f) if _envrc(ctx, f, rel)]
    if nix:  # the dev shells `use flake` / `use nix` enter, judged once
        _shell_hooks(ctx, f, nix[0])
    hooks_path = _repositories(ctx, f)
    installers = _hook_installers(ctx, f)
    # .husky/ runs only once something points git at it: an install hook or dependency
    # that runs husky, or a core.hooksPath (husky's own repository, and one whose
    # husky is gone, hold a .husky/ that nothing installs)
    if os.path.isdir(ctx.ws_path(".husky")) and not os.path.islink(ctx.ws_path(".husky")) \
            and ("husky" in installers or any(".husky" in p for p in hooks_path)):
        _husky(ctx, f)
    _quarantine(ctx, f)
    return f.outcome("nothing in the workspace runs automatically",
                     f"{len(f.found)} auto-exec item(s)")


def word(s: Setting, hit: Hit, why: str) -> str:
    """A devcontainer setting's finding: what runs on the host, or how its container (or
    a service of its Compose file) can take the host."""
    if s.id == "devcontainer-initialize-command":
        return "initializeCommand runs on the host"
    what = {"devcontainer-privileged": "privileged is true",
            "devcontainer-daemon-socket": "the Docker socket is mounted into it"}.get(s.id)
    if what is None:
        what = why if s.id == "devcontainer-run-args" else f"{hit.key} holds {hit.value}"
    from ztsa.surfacecheck import Advice

    if isinstance(why, Advice):  # seccomp=unconfined: weaker, not the host
        where = f"service {hit.path.split('/')[1]!r}" if hit.path.startswith("services/") \
            else "its container"
        return f"{where} is less confined: {why}"
    if hit.path.startswith("services/"):
        return f"service {hit.path.split('/')[1]!r} can take the host: {what}"
    return f"its container can take the host: {what}"


HOOK_INSTALLERS = LazyRe(r"\b(simple-git-hooks|lefthook\s+install|husky(?:\s+install)?|"
                         r"pre-commit\s+install|git\s+config\s+(?:--\S+\s+)*core\.hookspath)\b",
                         re.IGNORECASE)


def _hook_installers(ctx: Context, f: Findings) -> set[str]:
    """vue and vite (`"postinstall": "simple-git-hooks"`), typescript-sdk (`"prepare":
    "npx --no-install lefthook install"`): the install writes git hooks that run on the
    person's next commit, as .husky/ does. Returns the installers found (a husky
    dependency is one: husky 4 installs its hooks from its own install script); an
    unreadable package.json counts as husky, which is never a pass."""
    if not ctx.ws_exists("package.json"):
        return set()
    from ztsa.manifests import MAX_MANIFEST_BYTES
    from ztsa.manifests.npm import parse_package_json
    from ztsa.manifests.project import load

    pj = f.attempt(load, ctx, "package.json", parse_package_json, MAX_MANIFEST_BYTES)
    flagged: set[str] = set() if pj is not None else {"husky"}
    for hook in ("preinstall", "install", "postinstall", "prepare") if pj else ():
        cmd = pj.scripts.get(hook) if pj else None
        m = HOOK_INSTALLERS.search(cmd) if cmd else None
        if m and pj:
            flagged.add(m.group(1).split()[0].lower())
            what = f"{hook} runs {m.group(1)}: it installs git hooks on install"
            if m.group(1).lower().startswith("git"):
                f.fail(what, "package.json", pj.line(f'"{hook}"'))  # hooks of any file
            else:  # the hooks a manager installs are judged by what they run, below
                f.advise(what + ", judged by what they run", "package.json",
                         pj.line(f'"{hook}"'))
    # lefthook and simple-git-hooks install the hooks from their own postinstall when
    # the project configures them
    names = {name for _, name, _ in pj.deps()} if pj else set()
    configured = {"lefthook": any(ctx.ws_exists(n) for n in (
        "lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml", "lefthook.json")),
        "simple-git-hooks": bool(pj and (pj.data.get("simple-git-hooks") or any(
            ctx.ws_exists(n) for n in (".simple-git-hooks.json", "simple-git-hooks.json",
                                       ".simple-git-hooks.js", "simple-git-hooks.js"))))}
    for tool, on in configured.items():
        if on and tool in names and tool not in flagged and pj:
            f.advise(f"the {tool} dependency installs its configured git hooks on install, "
                     "judged by what they run", "package.json", pj.line(f'"{tool}"'))
            flagged.add(tool)
    # what the installed hooks run: the configuration's commands, where the code is
    if "simple-git-hooks" in flagged and pj:
        table = pj.data.get("simple-git-hooks")
        for hook, cmd in table.items() if isinstance(table, dict) else ():
            if isinstance(cmd, str):
                judge_hook(ctx, f, f"simple-git-hooks runs on {hook}", cmd, "",
                           "package.json", pj.line(cmd[:40]))
    if "lefthook" in flagged:
        _lefthook_runs(ctx, f)
    return flagged | ({"husky"} & names)


LEFTHOOK_CONFIGS = ("lefthook.yml", "lefthook.yaml", ".lefthook.yml", ".lefthook.yaml")


def _lefthook_runs(ctx: Context, f: Findings) -> None:
    """Each command, script and job of lefthook's configuration, by the hook it runs on."""
    from ztsa.manifests.common import load_yaml

    for rel in LEFTHOOK_CONFIGS:
        if not ctx.ws_exists(rel):
            continue
        text = f.attempt(ctx.ws_text, rel, 1 << 20)
        doc = f.attempt(load_yaml, text, rel) if text is not None else None
        for hook, spec in doc.items() if isinstance(doc, dict) else ():
            if not isinstance(spec, dict):
                continue
            runs: list[tuple[str, str]] = []
            for group in ("commands", "scripts"):
                table = spec.get(group)
                for name, item in table.items() if isinstance(table, dict) else ():
                    what = item.get("run") or item.get("runner") if isinstance(
                        item, dict) else None
                    # a script is .lefthook/HOOK/NAME, run by its runner
                    script = f".lefthook/{hook}/{name}"
                    runs.append((str(name), (f"{what} {script}" if what else f"./{script}")
                                 if group == "scripts" else str(what or "")))
            for job in spec.get("jobs") or [] if isinstance(spec.get("jobs"), list) else []:
                if isinstance(job, dict) and isinstance(job.get("run"), str):
                    runs.append((str(job.get("name", "job")), job["run"]))
            for name, cmd in runs:
                if cmd:
                    judge_hook(ctx, f, f"lefthook runs {name[:40]!r} on {hook}", cmd, "",
                               rel, line_of(text or "", f"{name}:")
                               or line_of(text or "", cmd[:40]))


def _repositories(ctx: Context, f: Findings) -> list[str]:
    """Judge every git repository of the workspace; return the core.hooksPath values
    its configs set."""
    hooks_paths: list[str] = []
    ws = os.path.realpath(ctx.ws_path(""))
    layout = gitlayout.find(ws)
    for d in layout.unreadable:
        f.error(f"{os.path.relpath(d, ws)}: cannot be read")

    def rel(path: str) -> str:
        return os.path.relpath(path, ws)

    def inside(path: str) -> bool:
        return path == ws or path.startswith(ws + os.sep)

    for g in layout.gitdirs:
        for name in gitlayout.CONFIGS:
            path = os.path.join(g, name)
            config = f.attempt(ctx.ws_text, rel(path), 1 << 20)
            if config is None:
                continue
            try:
                entries = parse_git_config(config, rel(path))
            except ParseError as e:
                f.error(str(e))
                continue
            for section, key, value, line in entries:
                full = f"{section}.{key}"
                if full.lower() == "core.hookspath":
                    hooks_paths.append(value)
                if gitlayout.lfs_default(full, value):
                    continue  # git-lfs's own filter, as `git lfs install` writes it
                if gitlayout.runs_code(full, value):
                    f.fail(f"{full} is set to {value[:60]!r}", rel(path), line)
                elif (section, key) == ("core", "worktree") and not inside(
                        os.path.realpath(os.path.join(g, value))):
                    f.fail(f"core.worktree leads outside the workspace: {value[:60]!r}",
                           rel(path), line)
        common = gitlayout.read_small(os.path.join(g, "commondir"))
        if common is not None:
            target = gitlayout.redirect_target(common, g)
            if target != os.path.dirname(os.path.dirname(g)):
                f.fail(f"commondir leads to {target!r}, not the repository holding it",
                       rel(os.path.join(g, "commondir")))
    for path in layout.gitfiles:
        dest = gitlayout.gitfile_target(path)
        if dest is None:
            f.fail("a .git entry that is not a `gitdir:` file", rel(path))
        elif not inside(dest):
            f.fail(f".git file leads outside the workspace, to {dest!r}", rel(path))
        elif dest not in layout.gitdirs or "/.git/" not in dest + "/":
            f.fail(f".git file leads into the workspace's files ({rel(dest)!r}), "
                   "not a git directory", rel(path))
    husky = os.path.join(ws, ".husky")
    for d in layout.hook_dirs:
        if d == husky or d.startswith(husky + os.sep) or not os.path.isdir(d) \
                or os.path.islink(d):
            continue
        try:
            names = sorted(os.listdir(d))
        except OSError as e:
            f.error(f"{rel(d)}: {e.strerror}")
            continue
        for name in names:
            try:
                st = os.lstat(os.path.join(d, name))
            except OSError:
                continue
            if (not name.endswith(".sample") and stat.S_ISREG(st.st_mode)
                    and st.st_mode & 0o111 and not gitlayout.lfs_hook(
                        name, gitlayout.read_small(os.path.join(d, name)) or b"")):
                where = rel(os.path.join(d, name))
                f.fail(f"git hook {name} is executable" if inside(d) else
                       f"git hook {where} (outside the workspace) is executable",
                       where if inside(d) else None)
                if inside(d):
                    _pre_commit_runs(ctx, f, os.path.join(d, name), ws)

    return hooks_paths


PRE_COMMIT_SHIM = b"File generated by pre-commit"


def _pre_commit_runs(ctx: Context, f: Findings, hook: str, ws: str) -> None:
    """An installed pre-commit hook runs what the repository's own
    .pre-commit-config.yaml says on every commit: name its local hooks (`repo: local`,
    whose `entry` is any command the file chooses), where the real code is."""
    data = gitlayout.read_small(hook)
    if data is None or PRE_COMMIT_SHIM not in data:
        return
    top = os.path.relpath(gitlayout.worktree_of(os.path.dirname(os.path.dirname(hook))), ws)
    for name in (".pre-commit-config.yaml", ".pre-commit-config.yml"):
        rel = os.path.normpath(os.path.join(top, name))
        if rel.startswith("..") or not ctx.ws_exists(rel):
            continue
        text = f.attempt(ctx.ws_text, rel, 1 << 20)
        from ztsa.manifests.common import load_yaml

        doc = f.attempt(load_yaml, text, rel) if text is not None else None
        repos = doc.get("repos") if isinstance(doc, dict) else None
        for repo in repos if isinstance(repos, list) else []:
            if not isinstance(repo, dict) or repo.get("repo") != "local":
                continue
            for h in repo.get("hooks") or []:
                if isinstance(h, dict) and isinstance(h.get("entry"), str):
                    entry = h["entry"]
                    if h.get("language") == "script" and not entry.startswith(("./", "/")):
                        entry = "./" + entry  # a file of the repository, run by its #!
                    judge_hook(ctx, f, f"pre-commit runs local hook "
                               f"{str(h.get('id'))[:40]!r} on every commit", entry,
                               posixpath.dirname(rel), rel,
                               line_of(text or "", f"id: {h.get('id')}"))


def judge_hook(ctx: Context, f: Findings, what: str, cmd: str, cwd: str, rel: str,
               line: int | None) -> None:
    """A command a git hook runs, judged by what it runs (ztsa.follow.judge)."""
    judge(ctx, f, what, cmd, cwd, rel, line)


def _husky(ctx: Context, f: Findings) -> None:
    """husky installs .husky/ as core.hooksPath: each hook file there is a shell script
    git runs; judged by what it runs."""
    try:
        names = sorted(os.listdir(ctx.ws_path(".husky")))
    except OSError as e:
        f.error(f".husky: {e.strerror}", ".husky")
        return
    hooks = [n for n in names if not n.startswith(("_", ".")) and os.path.isfile(
        ctx.ws_path(f".husky/{n}"))]
    if not hooks:
        f.advise(".husky/ holds no hook", ".husky")
    for name in hooks:
        judge_hook(ctx, f, f"husky runs .husky/{name}", f"sh .husky/{name}", "",
                   f".husky/{name}", None)


# direnv's standard library: what each of these does is direnv's own code, judged by
# its arguments below (`use flake` by the dev shell's shellHook)
PATH_ADD = LazyRe(r"^\s*(?:PATH_add|path_add\s+PATH)\s+(.+)$|"
                  r"^\s*(?:export\s+)?PATH=[\"']?(?:\$PWD|\$\{PWD\}|\$\(pwd\)|\.)/?([^:\"']*)")
USE_NIX = LazyRe(r"^\s*use\s+(flake|nix)\b([^|;&#\n]*)")


def _envrc(ctx: Context, f: Findings, rel: str) -> bool:
    """`.envrc` runs in the person's shell, outside any sandbox, whenever direnv enters
    its folder (once they have allowed it), at whatever depth: judged by what it runs, as
    a git hook is, its names relative to its own folder. Its lines, the repository files
    it sources or runs, and, for `use flake` / `use nix`, the dev shell's `shellHook`s
    (Nix files of the repository) fail on a download run, a fetched string run as code,
    a download tool, a write to a shell start-up file or a credential read; a flake from
    elsewhere (`use flake github:o/r`) runs that project's shellHook; `PATH_add DIR` puts
    a directory of the workspace first on the PATH, so what the agent writes there runs
    later as the person's commands. The rest (`use flake` of a dev shell that only sets
    variables, `dotenv`, `watch_file`) is advice. True when it enters a Nix dev shell."""
    text = f.attempt(ctx.ws_text, rel, 1 << 20)
    if text is None:
        return False
    cwd, name = posixpath.split(rel)
    judge(ctx, f, f"{rel} (run when direnv enters the folder)", f"sh {name}", cwd, rel,
          None)
    nix = False
    for lineno, raw in enumerate(text.splitlines(), start=1):
        line = "" if raw.lstrip().startswith("#") else raw
        m = PATH_ADD.match(line)
        if m:
            d = (m.group(1) or m.group(2) or "").strip().strip("\"'")
            if d and not d.startswith(("/", "~", "$HOME")):
                f.fail(f"{rel} puts the workspace's {d!r} first on PATH: what is written "
                       "there runs later as the person's own commands", rel, lineno)
        for use in USE_NIX.finditer(line):
            nix = True
            ref = use.group(2).strip().split()[0] if use.group(2).strip() else ""
            if ref and not ref.startswith((".", "/")) and ":" in ref:
                f.fail(f"{rel} uses the flake {ref!r} from outside the repository: its "
                       "dev shell's shellHook runs when direnv enters the folder",
                       rel, lineno)
    return nix


# a Nix `shellHook = '' … '';` (an indented string, `''` escaped as `'''`) or "…"
NIX_HOOK = LazyRe(r"\bshellHook\s*=\s*(?:''((?:[^']|'(?!')|''')*)''|\"((?:[^\"\\]|\\.)*)\")")
MAX_NIX_FILES = 64


def _shell_hooks(ctx: Context, f: Findings, envrc: str) -> None:
    """Each `shellHook` of the repository's Nix files, judged as the commands it is: the
    dev shell `use flake` or `use nix` enters runs it."""
    from ztsa.manifests.project import matching

    files = [rel for rel in matching(ctx, lambda p: p.endswith(".nix"))
             if not rel.startswith("node_modules/")]
    if len(files) > MAX_NIX_FILES:
        f.error(f"{len(files)} Nix files: more than {MAX_NIX_FILES} to read for the dev "
                "shell's shellHook", envrc)
        return
    for rel in files:
        text = f.attempt(ctx.ws_text, rel, 1 << 20)
        for m in NIX_HOOK.finditer(text or ""):
            body = m.group(1) if m.group(1) is not None else m.group(2)
            judge(ctx, f, f"the dev shell's shellHook ({rel})", body, "", rel,
                  (text or "").count("\n", 0, m.start()) + 1)


def _quarantine(ctx: Context, f: Findings) -> None:
    top = ctx.ws_path(".ztsa-quarantine")
    if not os.path.isdir(top) or os.path.islink(top):
        return
    for run in sorted(os.listdir(top)):
        manifest = f".ztsa-quarantine/{run}/manifest.json"
        if not os.path.isfile(ctx.ws_path(manifest)):
            continue
        text = f.attempt(ctx.ws_text, manifest, 1 << 20)
        try:
            moved = json.loads(text) if text is not None else []
        except ValueError:
            moved = []
        # inert where they are (flattened names, no execute bits): said, never blocking,
        # or an ordinary venv or test run made every later run fail
        f.advise(f"ztsa exec moved aside {len(moved)} file(s) that would have run code "
                 f"(run {run}): `ztsa quarantine list` shows them", manifest)
