"""Nothing the tree leaves in the workspace makes git run a program later, outside any
sandbox (docs/git-control.md).

Two layers:
- before the run, every git control file of every repository that exists in the
  workspace (ztsa.gitlayout.control_paths) is protected like an agent file: read-only,
  and refused by the file helper when absent. This holds while the tree runs, so an
  agent's own `git status` beside a running tree is safe too;
- after the run, when every process of the tree has ended (and so nothing can race
  it), `audit` compares the control files of every repository then in the workspace
  with the snapshot taken before: a repository the tree made, or a file the read-only
  layer did not hold (without namespaces there is none), is judged by what git would
  do with it. A hook, a redirect (`.git` file, commondir) that leaves the workspace's
  repositories, or a config with a key that is not among the ones git writes in
  ordinary work is moved aside into `.ztsa-quarantine/<run>/`, and a config that had
  other keys is replaced by its old text, or by its safe keys when it is new.

The audit acts through descriptors opened without following symlinks from the
workspace down, so a symlink planted in the path (by another run) cannot turn ztsa's
moves into writes elsewhere."""

from __future__ import annotations

import contextlib
import os
import stat
import time

from ztsa import gitlayout
from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

QUARANTINE = ".ztsa-quarantine"


class State(NamedTuple):
    kind: str  # "file", "dir", "link", "other"
    ino: int
    ctime_ns: int
    size: int
    data: bytes | None  # a small regular file's bytes
    mode: int = 0o644  # a file's permission bits (restored with its text)


class Moved(NamedTuple):
    path: str  # workspace-relative
    reason: str
    moved_to: str | None  # workspace-relative; None: removed (no quarantine possible),
    # or left where it is when error says why
    replaced: str  # "", "restored" (its text from before the run), "safe keys" (those
    # of its keys git writes in ordinary work)
    error: str = ""  # why it could not be moved aside
    runs: str = ""  # what it would run (ztsa.sandbox.bytecode's)


Snapshot = dict[str, State]


# A file whose (kind, inode, ctime, size) is what the snapshot before the run saw, with
# a ctime this much older than the run's start, is the same file with the same bytes:
# any change after the start sets its ctime to the clock then (the tree can set an mtime
# back, never a ctime), at most a clock tick (coarse timestamps) or two seconds (FAT)
# behind. Such a file is not read again after the run; a newer one always is.
SETTLED_NS = 5_000_000_000


def _state(path: str, read: bool = True, was: State | None = None, settled: int = 0,
           after: bool = False) -> State | None:
    """PATH as it is (None: absent). A regular file's bytes only when READ, or when its
    ctime is not older than SETTLED and its bytes may be compared: before the run
    always, AFTER it only with a WAS of the same identity (else it differs anyway);
    WAS itself when PATH is still that file and its ctime older than SETTLED."""
    try:
        st = os.lstat(path)
    except OSError:
        return None
    if stat.S_ISLNK(st.st_mode):
        kind = "link"
    elif stat.S_ISDIR(st.st_mode):
        return State("dir", st.st_ino, 0, 0, None)  # its entries are listed apart
    elif stat.S_ISREG(st.st_mode):
        kind = "file"
    else:
        kind = "other"
    same = (was is not None and was.kind == kind and was.ino == st.st_ino
            and was.ctime_ns == st.st_ctime_ns and was.size == st.st_size)
    if same and st.st_ctime_ns < settled:
        return was
    data = gitlayout.read_small(path) if kind == "file" and (
        read or (st.st_ctime_ns >= settled and (same or not after))) else None
    return State(kind, st.st_ino, st.st_ctime_ns, st.st_size, data, st.st_mode & 0o777)


def snapshot(layout: gitlayout.Layout, retry: Callable[[str], bool] | None = None,
             was: Snapshot | None = None, since_ns: int = 0) -> Snapshot:
    """The control files of layout as they are now, hook directories entry by entry.
    A hook's bytes are not kept (it is judged by what it is), but for one changed
    within SETTLED_NS of SINCE_NS (the run's start); a file still as WAS saw it
    (_state) is not read again."""
    out: Snapshot = {}
    hook_dirs = set(layout.hook_dirs)
    settled = since_ns - SETTLED_NS if since_ns else 0
    old = was or {}
    after = was is not None
    for path in gitlayout.audited_paths(layout):
        st = _state(path, True, old.get(path), settled)
        if st is None:
            continue
        out[path] = st
        if st.kind == "dir" and path in hook_dirs:
            try:
                names = os.listdir(path)
            except PermissionError:
                if retry is None or not retry(path):
                    out[path] = st._replace(kind="unreadable")
                    continue
                names = os.listdir(path)
            except OSError:
                continue
            for name in names:
                entry = os.path.join(path, name)
                est = _state(entry, False, old.get(entry), settled, after)
                if est is not None:
                    out[entry] = est
    return out


class Before(NamedTuple):
    layout: gitlayout.Layout
    files: Snapshot
    since_ns: int  # when it was taken: what changed later is the tree's
    policies: dict[str, bytes | str]  # _policy_text of each, but the root pyproject's
    instructions: dict[str, bytes | str]  # the same of each file a tool obeys wherever
    # it sits (ztsa.surfaces.ANYWHERE), but in installed packages
    # the same of the files at the workspace's top a tool reads (ztsa.surfaces.ROOT,
    # and what a devcontainer names), for a run without a read-only layer; else None
    roots: dict[str, bytes | str] | None = None
    # the same of each package.json whose hook keys an installed hook runs
    manifests: dict[str, bytes | str] | None = None
    # the permission bits of those of roots that a person runs by path (an execute bit
    # set): what is put back gets them back (a hook's `./tools/real.sh` still runs)
    modes: dict[str, int] | None = None
    parse_cache: bool = True  # a setting's TOML may come from the parse cache


def before(workspace: str, roots: bool = False, parse_cache: bool = True) -> Before:
    """roots: the run has no mount namespace, so nothing keeps the files at the top read-
    only while it runs: they are judged after it instead. parse_cache: as
    ztsa.surfaces.named_by's cache."""
    since = time.time_ns()
    layout = gitlayout.find(workspace)
    top = {p: _policy_text(p) for p in _root_files(workspace, layout, parse_cache)
           } if roots else None
    return Before(layout, snapshot(layout, since_ns=since), since, {
        p: _policy_text(p) for p in _policy_files(workspace, layout)}, {
        p: _policy_text(p) for p in _instruction_files(workspace, layout)},
        top, manifests={p: _policy_text(p) for p in layout.manifests},
        modes=_run_modes(top) if top is not None else None, parse_cache=parse_cache)


def _run_modes(texts: dict[str, bytes | str]) -> dict[str, int]:
    """The permission bits of each regular file of texts with an execute bit."""
    out: dict[str, int] = {}
    for path, text in texts.items():
        if not isinstance(text, bytes):
            continue
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode) and st.st_mode & 0o111:
            out[path] = stat.S_IMODE(st.st_mode) & 0o777
    return out


MAX_ROOT_FILES = 10_000  # beneath the top's surfaces (.vscode/, .claude/, ...), at most


def _root_files(workspace: str, layout: gitlayout.Layout, parse_cache: bool = True,
                flooded: list[str] | None = None) -> list[str]:
    """The files at the workspace's top that a tool reads (ztsa.surfaces.ROOT, every file
    beneath one that is a directory, links not followed) and the files a devcontainer
    names or a setting's command runs, at the top or in a folder below (ztsa.surfaces.
    named_by, given the nested settings LAYOUT's walk found), absolute. More than
    MAX_ROOT_FILES cannot be judged: OSError; or, given FLOODED (after the run), each
    top-level directory whose files would take the count past it is left out and named
    there, to be moved aside whole."""
    from ztsa import surfaces

    out: list[str] = []
    rels = [r for r in surfaces.root_paths() if r != QUARANTINE]
    for rel in [*rels, *surfaces.named_by(workspace, layout.instructions, parse_cache)]:
        top = os.path.join(workspace, rel)
        if not os.path.isdir(top) or os.path.islink(top):
            out.append(top)
            continue
        found: list[str] = []
        for d, dirs, files in os.walk(top):
            dirs[:] = [x for x in dirs if not os.path.islink(os.path.join(d, x))]
            found += [os.path.join(d, f) for f in files]
            found += [os.path.join(d, x) for x in dirs if os.path.islink(os.path.join(d, x))]
            if len(out) + len(found) > MAX_ROOT_FILES:
                if flooded is None:
                    raise OSError(f"more than {MAX_ROOT_FILES} files beneath the "
                                  "workspace's top-level surfaces: too many to judge "
                                  "after the run")
                flooded.append(rel)
                found = []
                break
        out += found
    return list(dict.fromkeys(out))


def _move_flooded(workspace: str, was: dict[str, bytes | str], flooded: list[str],
                  tree: _Tree, run_id: str, modes: dict[str, int] | None) -> list[Moved]:
    """Each top-level surface directory the run filled past what can be judged: moved
    aside whole, and the person's files beneath it put back as they were."""
    moved: list[Moved] = []
    for rel in dict.fromkeys(flooded):
        reason = (f"{rel}: a directory a tool reads at the workspace's top, filled by the "
                  f"run past the {MAX_ROOT_FILES} files ztsa judges: moved aside whole")
        try:
            done = _move(tree, rel, (reason, None, ""), run_id)
        except OSError as e:
            moved.append(Moved(rel, reason, None, "", e.strerror or str(e)))
            continue
        if done.error:
            moved.append(done)
            continue
        base = os.path.join(workspace, rel) + os.sep
        back = 0
        for path, data in sorted(was.items()):
            if path.startswith(base) and (isinstance(data, bytes)
                                          or _link_target(data) is not None):
                try:
                    _put_back(tree, os.path.relpath(path, workspace), data,
                              (modes or {}).get(path))
                    back += 1
                except OSError as e:
                    moved.append(Moved(os.path.relpath(path, workspace), reason, None, "",
                                       e.strerror or str(e)))
        moved.append(done._replace(replaced="restored") if back else done)
    return moved


def _instruction_files(workspace: str, layout: gitlayout.Layout) -> list[str]:
    from ztsa import surfaces

    return [p for p in layout.instructions if p.startswith(workspace + "/")
            and not surfaces.installed(os.path.relpath(p, workspace))]


def _policy_files(workspace: str, layout: gitlayout.Layout) -> list[str]:
    """The policy files of ztsa's that a later run started in their directory would
    obey (ztsa.tiers.workspace_path), but the workspace's own pyproject.toml, which
    audit_policy judges."""
    return [p for p in layout.policies if p != os.path.join(workspace, "pyproject.toml")]


_LINK = "a link to "


def _policy_text(path: str) -> bytes | str:
    """A policy file's bytes, or what it is instead ("absent", "a link to TARGET", "not a
    file"): a link the run pointed elsewhere is a change."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except FileNotFoundError:
        return "absent"
    except OSError as exc:
        try:
            return f"{_LINK}{os.readlink(path)!r}"
        except OSError:
            return f"unreadable: {exc.strerror}"
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return "not a file"
        with os.fdopen(os.dup(fd), "rb") as f:
            return f.read(8 << 20)
    finally:
        os.close(fd)


def _policy_of(path: str, text: bytes | str) -> object:
    """What of TEXT a later run obeys: a .ztsa.toml whole, a pyproject.toml's
    [tool.ztsa] table; None for none (an absent file, a pyproject.toml without it)."""
    if text == "absent":
        return None
    if isinstance(text, str) or os.path.basename(path) == ".ztsa.toml":
        return text
    return _pyproject_policy(text)[1]


def outside_gitdirs(workspace: str, layout: gitlayout.Layout) -> list[str]:
    """The git directory (and its common one) that the workspace's own `.git` file names
    outside it: a linked worktree's, a submodule's checkout. Shown read-only to the
    tree, so that git can read its own repository under a hidden home."""
    top = os.path.join(workspace, ".git")
    if top not in layout.gitfiles:
        return []
    target = gitlayout.gitfile_target(top)
    if target is None or target.startswith(workspace + "/") or not _links_back(workspace,
                                                                                target):
        return []
    out = [target]
    common = gitlayout.read_small(os.path.join(target, "commondir"))
    shared = gitlayout.redirect_target(common, target) if common else None
    if shared:
        out.append(shared)
    return [p for p in out if os.path.isdir(p)]


def _links_back(workspace: str, target: str) -> bool:
    """Is target really this workspace's git directory, and not any directory a planted
    `.git` file names (which ztsa would then show the tree): a linked worktree's, whose
    `gitdir` file names the workspace's `.git` back, or a submodule's, under
    `.git/modules/` of a superproject that holds the workspace."""
    back = gitlayout.read_small(os.path.join(target, "gitdir"))
    if back:
        named = os.path.realpath(back.decode("utf-8", "replace").strip())
        return named == os.path.realpath(os.path.join(workspace, ".git"))
    real, ws = os.path.realpath(target), os.path.realpath(workspace)
    head, sep, _ = real.partition("/.git/modules/")
    return bool(sep) and (ws + "/").startswith(head + "/")


def config_entries(data: bytes) -> list[tuple[str, str]] | None:
    """(key, value) of a config text as git itself reads it (includes not followed:
    `git config --file` follows them unless told not to), or None when git cannot
    read it or is not installed."""
    if data in _ENTRIES:
        return _ENTRIES[data]
    got = _config_entries(data)
    if len(_ENTRIES) >= 4096:
        _ENTRIES.clear()
    _ENTRIES[data] = got
    return got


# config_entries by text: the repositories a run makes (a `git init`, a clone, 2,000 of
# them) mostly have the same config, which one git process then reads once
_ENTRIES: dict[bytes, list[tuple[str, str]] | None] = {}


def safe_git_env(home: str) -> dict[str, str]:
    """The environment ztsa runs git in on the tree's repositories: no system or global
    config (an empty HOME), no repository found above the one named, the C locale."""
    return {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "HOME": home,
            "GIT_CONFIG_NOSYSTEM": "1", "GIT_CONFIG_GLOBAL": os.devnull,
            "GIT_CEILING_DIRECTORIES": "/", "LC_ALL": "C"}


def _config_entries(data: bytes) -> list[tuple[str, str]] | None:
    import shutil
    import subprocess  # only when a config changed: off every run's start-up
    import tempfile

    git = shutil.which("git")
    if git is None:
        return None
    with tempfile.TemporaryDirectory(prefix="ztsa-git-") as empty:
        env = safe_git_env(empty)
        try:
            proc = subprocess.run([git, "config", "--no-includes", "--file", "-", "--list",
                                   "--null"], input=data, capture_output=True, cwd=empty,
                                  env=env, timeout=30, check=False)
        except (OSError, subprocess.TimeoutExpired):
            return None
    if proc.returncode != 0:
        return None
    out: list[tuple[str, str]] = []
    for item in proc.stdout.split(b"\0")[:-1]:
        key, sep, value = item.decode("utf-8", "surrogateescape").partition("\n")
        out.append((key, value if sep else "true"))  # a bare key is a true boolean
    return out


def _quote(value: str) -> str:
    """A value as git writes it: quoted only when it must be."""
    escaped = (value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")
               .replace("\t", "\\t"))
    if escaped == value and value == value.strip() and not any(c in value for c in "#;"):
        return value
    return f'"{escaped}"'


def render_config(entries: list[tuple[str, str]]) -> bytes:
    """A config text holding exactly entries (as git lists them: section[.sub].key)."""
    lines: list[str] = []
    current = None
    for key, value in entries:
        section, _, rest = key.partition(".")
        sub, _, name = rest.rpartition(".")
        head = (section, sub)
        if head != current:
            current = head
            sub_text = "" if not sub else ' "' + sub.replace("\\", "\\\\").replace(
                '"', '\\"') + '"'
            lines.append(f"[{section}{sub_text}]")
        lines.append(f"\t{name} = {_quote(value)}")
    return ("\n".join(lines) + "\n").encode("utf-8", "surrogateescape") if lines else b""


# (why it is moved aside, the text put in its place or None, what that text is)
Verdict = tuple[str, bytes | None, str]


def _judge_config(gitdir: str, workspace: str, was: State | None, now: State
                  ) -> Verdict | None:
    def inside(value: str) -> bool:
        try:
            path = os.path.realpath(os.path.join(gitdir, value))
        except ValueError:
            return False
        return path == workspace or path.startswith(workspace + "/")

    old = was.data if was is not None and was.kind == "file" else None
    back = "restored" if old is not None else ""
    if now.kind != "file" or now.data is None:
        return f"a config git reads that is a {now.kind} or too large to judge", old, back
    after = config_entries(now.data)
    if after is None:
        return "a config that git cannot read, or no git to read it", old, back
    from collections import Counter

    prior = config_entries(old) if old is not None else []
    if prior is None:
        return "a config whose old text git cannot read", old, back
    new = Counter(after) - Counter(prior)
    if old is not None:  # a repository that was there: only what git writes in place
        bad = sorted({k for k, v in new.elements()
                      if not gitlayout.safe_change(k, v, prior, inside)})
    else:
        bad = sorted({k for k, v in new.elements() if not gitlayout.safe(k, v, inside)})
    if not bad:
        return None
    why = "config keys git does not write in ordinary work: " + ", ".join(bad[:8])
    if old is not None:
        return why, old, back
    kept = [(k, v) for k, v in after if gitlayout.safe(k, v, inside)]
    return why, render_config(kept), "safe keys"


class _Index:
    """The layout's lists as sets, for one membership test of each path judged (the
    lists' length grows with the repositories: 2,000 of them make 6,000 hook
    directories)."""

    def __init__(self, layout: gitlayout.Layout) -> None:
        self.named = set(layout.named)
        self.included = set(layout.included)
        self.gitdirs = set(layout.gitdirs)
        self.gitfiles = set(layout.gitfiles)
        self.hook_dirs = set(layout.hook_dirs)

    def gitdir_of(self, path: str, names: tuple[str, ...]) -> str | None:
        """The git directory G of which PATH is G/NAME, for one of NAMES."""
        for t in names:
            if path.endswith("/" + t) and path[:-len(t) - 1] in self.gitdirs:
                return path[:-len(t) - 1]
        return None


def _judge(path: str, was: State | None, now: State, layout: gitlayout.Layout,
           workspace: str, index: _Index | None = None) -> Verdict | None:
    name = os.path.basename(path)
    parent = os.path.dirname(path)
    at = index or _Index(layout)
    if now.kind == "unreadable":
        return "a hooks directory that could not be read to be judged", None, ""
    if path in at.named:
        if now.kind == "file" and now.data is not None and path in at.included:
            return _judge_config(parent, workspace, was, now)
        # the person's text put back (with its mode): their next commit runs their own
        # hooks (pre-commit's refuses to run at all when its configuration is gone)
        old = was.data if was is not None and was.kind == "file" else None
        back = "restored" if old is not None else ""
        if any(path.endswith("/" + f) for _m, files in gitlayout.MANAGED for f in files):
            return "a configuration an installed git hook runs the commands of", old, back
        return "a file a repository's config or an installed hook runs", old, back
    if at.gitdir_of(path, gitlayout.IGNORES) is not None:
        # what git status would no longer show; a pattern removed only shows more
        old = was.data if was is not None and was.kind == "file" else None
        if (now.kind == "file" and now.data is not None
                and gitlayout.patterns(now.data) <= gitlayout.patterns(old)):
            return None
        return ("a list of files git status does not show (info/exclude), made or "
                "changed by the run"), old, "restored" if old is not None else ""
    if at.gitdir_of(path, gitlayout.TODO_LISTS) is not None:
        text = (now.data or b"").decode("utf-8", "replace")
        if now.kind == "file" and now.data is not None and not any(
                line.split()[0] in ("exec", "x") for line in text.splitlines()
                if line.split() and not line.lstrip().startswith("#")):
            return None
        return "a to-do list with a command git would run (`exec`)", None, ""
    if at.gitdir_of(path, gitlayout.STRATEGY_FILES) is not None:
        if now.kind == "file" and now.data is not None:
            if name == "opts":  # the sequencer's options, in git's config format
                entries = config_entries(now.data)
                named = None if entries is None else [
                    v for k, v in entries if k.lower() == "options.strategy"]
            else:  # as git reads it: one line, its newline (and a CR before it) dropped
                text = now.data.decode("utf-8", "replace")
                text = text[:-1] if text.endswith("\n") else text
                named = [text[:-1] if text.endswith("\r") else text]
            if named is not None and all(n in gitlayout.OWN_STRATEGIES for n in named):
                return None
        return "a merge strategy git would run as a program (`git-merge-NAME`)", None, ""
    if parent in at.hook_dirs:
        if name.endswith(".sample") and now.kind == "file":
            return None
        return "a hook git would run", None, ""
    if path in at.hook_dirs:
        return (None if now.kind == "dir" else
                (f"a hooks directory that is a {now.kind}", None, ""))
    if path in at.gitfiles:
        target = gitlayout.gitfile_target(path) if now.kind == "file" else None
        if target is not None and target in at.gitdirs:
            return None
        return "a .git entry that leads out of the workspace's repositories", None, ""
    if parent in at.gitdirs and name in gitlayout.CONFIGS:
        return _judge_config(parent, workspace, was, now)
    if parent in at.gitdirs and name == "commondir":
        target = gitlayout.redirect_target(now.data, parent) if now.data else None
        if now.kind == "file" and target in at.gitdirs:
            return None
        return "a commondir that leads out of the workspace's repositories", None, ""
    return None  # looks elsewhere for objects or attributes only: kept


class _Tree:
    """The workspace through descriptors, never through a symlink."""

    def __init__(self, workspace: str) -> None:
        self.root = os.open(workspace, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)

    def close(self) -> None:
        os.close(self.root)

    def parent(self, rel: str, make: bool = False, mode: int = 0o700) -> tuple[int, str]:
        """(a descriptor of rel's directory, rel's last name); OSError if a component
        is a symlink or not a directory. make: the directories missing made (MODE)."""
        parts = rel.split("/")
        fd = os.dup(self.root)
        try:
            for part in parts[:-1]:
                if make:
                    with contextlib.suppress(FileExistsError):
                        os.mkdir(part, mode, dir_fd=fd)
                nxt = os.open(part, os.O_PATH | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC,
                              dir_fd=fd)
                os.close(fd)
                fd = nxt
        except BaseException:
            os.close(fd)
            raise
        return fd, parts[-1]


def _flat(rel: str) -> str:
    return rel.replace("%", "%25").replace("/", "%2F")


def _readable(workspace: str, since_ns: int) -> Callable[[str], bool]:
    """A directory of the workspace the tree made unreadable after since_ns (git needs
    only search permission), made readable to its owner again so it can be judged."""
    def retry(d: str) -> bool:
        try:
            st = os.lstat(d)
            if (not d.startswith(workspace + "/") or st.st_uid != os.geteuid()
                    or st.st_ctime_ns < since_ns or not stat.S_ISDIR(st.st_mode)
                    or st.st_mode & 0o500 == 0o500):
                return False
            os.chmod(d, st.st_mode | 0o500, follow_symlinks=False)
            return True
        except (OSError, NotImplementedError):
            return False
    return retry


def layout_after(workspace: str, was: Before) -> gitlayout.Layout | None:
    """The workspace's walk after the run (directories the tree made unreadable made
    readable again), for audit and the bytecode audit both; None if it failed."""
    try:
        return gitlayout.find(workspace, _readable(workspace, was.since_ns))
    except Exception:
        return None


def audit(workspace: str, was: Before, run_id: str,
          layout: gitlayout.Layout | None = None) -> list[Moved]:
    """Judge every control file that is new or changed since `was`; move aside what
    could run code. Call only when every process of the tree has ended (layout: the
    workspace's walk since then, layout_after). It never raises: if judging fails,
    every config that existed before gets its old text back (fail closed), and the
    failure is one of the results."""
    try:
        return _audit(workspace, was, run_id, layout)
    except Exception as exc:
        return _restore_all(workspace, was, run_id, f"{type(exc).__name__}: {exc}")


def _restore_all(workspace: str, was: Before, run_id: str, why: str) -> list[Moved]:
    out: list[Moved] = []
    tree = _Tree(workspace)
    try:
        for path, state in sorted(was.files.items()):
            if (os.path.basename(path) not in gitlayout.CONFIGS or state.data is None
                    or not path.startswith(workspace + "/")):
                continue
            rel = os.path.relpath(path, workspace)
            now = _state(path)
            if now == state:
                continue
            try:
                out.append(_move(tree, rel, ("the audit could not judge the workspace ("
                                             f"{why}): the config gets its old text back",
                                             state.data, "restored"), run_id))
            except OSError as e:
                out.append(Moved(rel, why, None, "", e.strerror or str(e)))
    finally:
        tree.close()
    out.append(Moved(".", f"the audit failed: {why}", None, "",
                     "look at the workspace's repositories before running git there"))
    return out


def _audit(workspace: str, was: Before, run_id: str,
           layout: gitlayout.Layout | None) -> list[Moved]:
    retry = _readable(workspace, was.since_ns)
    layout = layout or gitlayout.find(workspace, retry)
    now = snapshot(layout, retry, was.files, was.since_ns)
    index = _Index(layout)
    moved: list[Moved] = [
        Moved(os.path.relpath(d, workspace), "a directory that could not be read to be "
              "judged", None, "", "unreadable") for d in layout.unreadable
        if d.startswith(workspace + "/")]
    tree = _Tree(workspace)
    try:
        for path in sorted(now):
            state = now[path]
            old = was.files.get(path)
            if old == state or not path.startswith(workspace + "/"):
                continue
            verdict = _judge(path, old, state, layout, workspace, index)
            if verdict is None:
                continue
            rel = os.path.relpath(path, workspace)
            try:
                moved.append(_move(tree, rel, verdict, run_id,
                                   old.mode if old is not None else None))
            except OSError as e:
                moved += _through_a_link(tree, workspace, rel, verdict, run_id,
                                         old.mode if old is not None else None, e)
        moved += _audit_policies(workspace, was, layout, tree, run_id)
    finally:
        tree.close()
    if moved:
        _manifest(workspace, run_id, moved)
    return moved


def _through_a_link(tree: _Tree, workspace: str, rel: str, verdict: Verdict, run_id: str,
                    perms: int | None, exc: OSError) -> list[Moved]:
    """rel could not be reached without following a link: a directory on its way that
    the run swapped for a symlink (or a file), through which the person's tools would
    now read the tree's file. That component is moved aside, and rel's old text (the
    verdict's replacement) put back beneath a real directory; else rel is named with
    the error (the run is unclean)."""
    parts = rel.split("/")
    for k in range(1, len(parts)):
        component = "/".join(parts[:k])
        try:
            st = os.lstat(os.path.join(workspace, component))
        except OSError:
            break
        if stat.S_ISDIR(st.st_mode):
            continue
        reason = (f"{component}: a directory on the way to {rel} that the run replaced "
                  "with a link or a file")
        try:
            done = [_move(tree, component, (reason, None, ""), run_id)]
            if verdict[1] is not None:
                _put_back(tree, rel, verdict[1], perms)
                done.append(Moved(rel, verdict[0], None, "restored"))
            return done
        except OSError as e:
            return [Moved(component, reason, None, "", e.strerror or str(e))]
    return [Moved(rel, verdict[0], None, "", exc.strerror or str(exc))]


def _move(tree: _Tree, rel: str, verdict: Verdict, run_id: str,
          perms: int | None = None) -> Moved:
    """rel moved aside into the quarantine (removed where there is none), with its
    replacement put in its place (with the permission bits PERMS, when given). A
    directory the tree made read-only is opened up for it (and closed again). What
    still cannot be moved or removed is emptied in place: the Moved then says so in its
    error, and the run is unclean."""
    reason, replacement, replaced = verdict
    dest = f"{QUARANTINE}/{run_id}/{_flat(rel)}"
    src_dir, name = tree.parent(rel)
    mode = _open_up(src_dir)
    try:
        moved_to: str | None = None
        try:
            dst_dir, dst_name = tree.parent(dest, make=True)
        except OSError:
            pass  # no quarantine of ours there (a symlink in the way): removed instead
        else:
            try:
                os.rename(name, dst_name, src_dir_fd=src_dir, dst_dir_fd=dst_dir)
                moved_to = dest
                _inert(dst_dir, dst_name)
            except OSError:
                pass
            finally:
                os.close(dst_dir)
        if moved_to is None:
            try:
                _remove(src_dir, name)
            except OSError as exc:
                return _neutralise(src_dir, name, rel, reason, replacement, exc)
        if replacement is not None:
            fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW
                         | os.O_CLOEXEC, 0o644, dir_fd=src_dir)
            with os.fdopen(fd, "wb") as f:
                if perms is not None:
                    os.fchmod(f.fileno(), perms)
                f.write(replacement)
        return Moved(rel, reason, moved_to, replaced if replacement is not None else "")
    finally:
        _close_again(src_dir, mode)
        os.close(src_dir)


def remove_all(tree: _Tree, rel_dir: str, names: list[str], reason: str) -> list[Moved]:
    """The entries NAMES of the workspace directory rel_dir ("" for the workspace)
    removed, as _move removes: through a descriptor of the directory (opened up for it
    if the tree made it read-only), and a file that cannot be removed emptied in place.
    What could not be removed, each a Moved with its error (the run is unclean)."""
    try:
        d = os.dup(tree.root) if not rel_dir else tree.parent(rel_dir + "/.")[0]
    except FileNotFoundError:
        return []  # gone with its directory (an audit before this one moved it aside)
    except OSError as exc:
        return [Moved(os.path.join(rel_dir, n), reason, None, "", exc.strerror or str(exc))
                for n in names]
    failed: list[Moved] = []
    mode = _open_up(d)
    try:
        for name in names:
            try:
                os.unlink(name, dir_fd=d)
            except FileNotFoundError:
                continue
            except OSError as exc:
                failed.append(_neutralise(d, name, os.path.join(rel_dir, name), reason, None,
                                          exc))
    finally:
        _close_again(d, mode)
        os.close(d)
    return failed


def _open_up(dir_fd: int) -> int | None:
    """Write and search permission for ztsa's user on the directory dir_fd (an O_PATH
    descriptor), which the tree may have taken away to keep what it planted there:
    given back through the descriptor (never a path the tree could swap). Its mode
    before, to close it again; None when nothing was changed."""
    try:
        st = os.fstat(dir_fd)
        if st.st_uid != os.geteuid() or st.st_mode & 0o300 == 0o300:
            return None
        os.chmod(f"/proc/self/fd/{dir_fd}", stat.S_IMODE(st.st_mode) | 0o300)
        return stat.S_IMODE(st.st_mode)
    except OSError:
        return None


def _close_again(dir_fd: int, mode: int | None) -> None:
    if mode is not None:
        with contextlib.suppress(OSError):
            os.chmod(f"/proc/self/fd/{dir_fd}", mode)


def _neutralise(dir_fd: int, name: str, rel: str, reason: str, replacement: bytes | None,
                exc: OSError) -> Moved:
    """A regular file that can be neither moved nor removed: emptied in place, or given
    its replacement (a config's old text), and its execute bits cleared where ztsa may.
    The Moved's error says what could not be done and what was done instead."""
    why = exc.strerror or str(exc)
    try:
        fd = os.open(name, os.O_WRONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except OSError as exc2:
        return Moved(rel, reason, None, "", f"{why}; nor could it be emptied: "
                     f"{exc2.strerror or exc2}")
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            return Moved(rel, reason, None, "", f"{why}; not a regular file to empty")
        os.ftruncate(fd, 0)
        if replacement is not None:
            os.write(fd, replacement)
        with contextlib.suppress(OSError):
            os.fchmod(fd, os.fstat(fd).st_mode & 0o666)
    except OSError as exc2:
        return Moved(rel, reason, None, "", f"{why}; nor could it be emptied: "
                     f"{exc2.strerror or exc2}")
    finally:
        os.close(fd)
    done = "gave it its old text in place" if replacement is not None else \
        "emptied it in place"
    return Moved(rel, reason, None, "restored" if replacement is not None else "",
                 f"{why}; {done}")


def _put_back(tree: _Tree, rel: str, data: bytes | str, perms: int | None = None) -> None:
    """A file the tree removed (or moved away with its directory: the directories made
    again), with its text from before the run (and the permission bits PERMS, when
    given); a link (data "a link to TARGET") with its target."""
    d, name = tree.parent(rel, make=True, mode=0o755)
    mode = _open_up(d)
    try:
        if isinstance(data, str):
            os.symlink(_link_target(data) or "", name, dir_fd=d)
            return
        fd = os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC,
                     0o644, dir_fd=d)
        with os.fdopen(fd, "wb") as f:
            if perms is not None:
                os.fchmod(f.fileno(), perms)
            f.write(data)
    finally:
        _close_again(d, mode)
        os.close(d)


def _audit_policies(workspace: str, was: Before, layout: gitlayout.Layout, tree: _Tree,
                    run_id: str) -> list[Moved]:
    """Every policy file of ztsa's in the workspace (but its own pyproject.toml, judged
    by audit_policy) that the run made, changed or removed, as far as a later run
    started beside it would obey it; and every file a tool obeys wherever it sits (an
    agent's nested CLAUDE.md, an .envrc) that the run made, changed or removed: moved
    aside, with its text from before put back. A workspace tier counts for the
    repository's word, which the tree is not."""
    moved = _audit_texts(workspace, was.policies, _policy_files(workspace, layout), tree,
                         run_id, _policy_of, "ztsa's own policy for a workspace there")
    moved += _audit_texts(
        workspace, was.instructions, _instruction_files(workspace, layout), tree, run_id,
        lambda _path, text: None if text == "absent" else text,
        "a file a tool obeys in that directory (ztsa.surfaces)")
    moved += _audit_texts(
        workspace, was.manifests or {}, list(layout.manifests), tree, run_id,
        lambda _path, text: gitlayout.package_hook_keys(text) if isinstance(
            text, bytes) else {} if text == "absent" else text,
        "its keys an installed git hook runs the commands of (husky, lint-staged, "
        "gitHooks, pre-commit)")
    if was.roots is not None:  # nothing kept them read-only during the run
        flooded: list[str] = []
        now = _root_files(workspace, layout, was.parse_cache, flooded)
        moved += _move_flooded(workspace, was.roots, flooded, tree, run_id, was.modes)
        gone = tuple(os.path.join(workspace, rel) + os.sep for rel in flooded)
        moved += _audit_texts(
            workspace, {p: t for p, t in was.roots.items() if not p.startswith(gone)}
            if gone else was.roots, now, tree, run_id,
            lambda _path, text: None if text == "absent" else text,
            "a file a tool reads at the workspace's top (ztsa.surfaces), which no "
            "read-only layer kept from the tree in this run", was.modes)
    return moved


def _audit_texts(workspace: str, was: dict[str, bytes | str], now: list[str], tree: _Tree,
                 run_id: str, meaning: Callable[[str, bytes | str], object],
                 what: str, modes: dict[str, int] | None = None) -> list[Moved]:
    """The files of was and now whose meaning changed: moved aside, old text put back
    (with its permission bits of modes, where it has some there)."""
    moved: list[Moved] = []
    for path in sorted({*was, *now}):
        old = was.get(path, "absent")
        new = _policy_text(path)
        if not path.startswith(workspace + "/") or meaning(path, old) == meaning(path, new):
            continue
        rel = os.path.relpath(path, workspace)
        reason = f"{os.path.basename(path)}: {what}, made, changed or removed by the run"
        link = isinstance(old, str) and _link_target(old) is not None
        try:
            if new == "absent":
                if not isinstance(old, bytes) and not link:
                    continue  # something else gone: nothing to put back
                _put_back(tree, rel, old, (modes or {}).get(path))
                moved.append(Moved(rel, reason, None, "restored"))
            else:
                back = old if isinstance(old, bytes) else None
                done = _move(tree, rel, (reason, back, "restored"), run_id,
                             (modes or {}).get(path))
                if link and not done.error:  # the person's link, as it led before
                    _put_back(tree, rel, old)
                    done = done._replace(replaced="restored")
                moved.append(done)
        except OSError as e:
            moved.append(Moved(rel, reason, None, "", e.strerror or str(e)))
    return moved


def _link_target(text: str) -> str | None:
    """The target of a link as _policy_text said it ("a link to 'TARGET'"), or None."""
    import ast

    if not text.startswith(_LINK):
        return None
    target = ast.literal_eval(text[len(_LINK):])
    return target if isinstance(target, str) else None


def _inert(dir_fd: int, name: str) -> None:
    """No execute, setuid or setgid bit on a regular file moved aside."""
    try:
        if not stat.S_ISREG(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode):
            return
        fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC,
                     dir_fd=dir_fd)
    except OSError:
        return
    try:
        if stat.S_ISREG(os.fstat(fd).st_mode):
            os.fchmod(fd, os.fstat(fd).st_mode & 0o666)
    except OSError:
        pass  # not ztsa's user's file: it still runs from nowhere git looks
    finally:
        os.close(fd)


def _remove(dir_fd: int, name: str) -> None:
    try:
        os.unlink(name, dir_fd=dir_fd)
    except IsADirectoryError:
        os.rmdir(name, dir_fd=dir_fd)


def _manifest(workspace: str, run_id: str, moved: list[Moved]) -> None:
    """moved added to the run's manifest.json (each audit of the run adds its own)."""
    import json

    tree = _Tree(workspace)
    try:
        d, name = tree.parent(f"{QUARANTINE}/{run_id}/manifest.json", make=True)
        try:
            fd = os.open(name, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_CLOEXEC, 0o600,
                         dir_fd=d)
            with os.fdopen(fd, "r+") as f:
                try:
                    old = json.load(f)
                except ValueError:
                    old = []
                f.seek(0)
                f.truncate()
                json.dump([*(old if isinstance(old, list) else []),
                           *(m._asdict() for m in moved)], f, indent=1)
                f.write("\n")
        finally:
            os.close(d)
    except OSError:
        pass
    finally:
        tree.close()


# -- ztsa's own policy in pyproject.toml ---------------------------------------------------
PyprojectState = tuple[bytes | None, object]


def policy_before(workspace: str) -> PyprojectState:
    """The workspace's pyproject.toml and its [tool.ztsa] table (a workspace policy tier,
    ztsa.tiers), before the run. .ztsa.toml is an agent file, read-only for the tree;
    pyproject.toml is a source file the tree may write, but not ztsa's part of it."""
    data = None
    path = os.path.join(workspace, "pyproject.toml")
    if os.path.islink(path):  # what it names is the tree's choice: a change in itself
        try:
            return None, f"a link to {os.readlink(path)}"
        except OSError as exc:
            return None, f"a link: {exc}"
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            if stat.S_ISREG(os.fstat(fd).st_mode):
                with os.fdopen(os.dup(fd), "rb") as f:
                    data = f.read(8 << 20)
        finally:
            os.close(fd)
    except OSError:
        pass
    return _pyproject_policy(data)


def _pyproject_policy(data: bytes | None) -> PyprojectState:
    """(DATA, its [tool.ztsa] table or why it cannot be read, None for none)."""
    if data is None or b"ztsa" not in data:
        return data, None
    from ztsa.parsing import ParseError, load_toml

    try:
        tool = load_toml(data.decode("utf-8", "replace"), "pyproject.toml").get("tool", {})
    except ParseError as exc:
        return data, f"unreadable: {exc}"
    return data, tool.get("ztsa") if isinstance(tool, dict) else f"tool is {tool!r}"


def audit_policy(workspace: str, was: PyprojectState, run_id: str) -> list[Moved]:
    """After the run: a [tool.ztsa] the tree made or changed is moved aside with the file
    it is in, and the file as it was before the run put back. Never raises."""
    try:
        now = policy_before(workspace)
        if now[1] == was[1]:  # a link unchanged is refused by ztsa.tiers, not followed
            return []
        reason = ("pyproject.toml's [tool.ztsa], ztsa's own policy for this workspace, "
                  "made or changed by the run")
        tree = _Tree(workspace)
        try:
            if now[0] is None:  # removed: its old text back
                _put_back(tree, "pyproject.toml", was[0] or b"")
                moved = [Moved("pyproject.toml", reason, None, "restored")]
            else:
                moved = [_move(tree, "pyproject.toml", (reason, was[0], "restored"), run_id)]
        finally:
            tree.close()
        _manifest(workspace, run_id, moved)
        return moved
    except Exception as exc:
        return [Moved("pyproject.toml", "its [tool.ztsa] changed", None, "",
                      f"{type(exc).__name__}: {exc}; look at it before the next run")]
