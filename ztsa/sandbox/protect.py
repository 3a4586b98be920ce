"""Agent files stay read-only inside the workspace, for every process of the tree.

Two mechanisms, both enforced without a check that the tree could race:
- every protected path that exists is bind-mounted read-only onto itself in a private
  mount namespace (a user namespace too when ztsa is not root): writing, truncating and
  chmod fail with EROFS, unlinking it or renaming over it with EBUSY, and a hard link to
  it with EXDEV; a symlink planted in the workspace reaches the same read-only mount;
- the syscalls that create or move names (open/openat/creat with O_CREAT, mkdir,
  mknod, symlink, link, rename) go to a file helper as seccomp user notifications: the
  helper is CMD's parent and runs with the tree's credentials, namespaces and Landlock
  domain; it copies the paths once, resolves the parent directory to a descriptor,
  refuses a protected name (or moving a directory on the way to one, such as `.git`),
  and performs the operation itself, handing an opened file to the caller with
  SECCOMP_ADDFD_FLAG_SEND (native/helper.c).

Paths are relative to the workspace root: the top-level surfaces of ztsa/surfaces.py,
the nested files a tool obeys wherever they sit that exist when the run starts, and
the files a devcontainer configuration names (a nested one the run makes is moved
aside after it, ztsa.sandbox.gitguard)."""

from __future__ import annotations

import os
import sys

from ztsa import gitlayout, surfaces
from ztsa.records import NamedTuple

# what a tool reads at the top of the workspace that runs code later, widens an agent's
# reach or feeds it instructions (ztsa/surfaces.py), and ztsa's own policy files
AGENT_FILES = surfaces.root_paths()
# git's own control files are added per repository that exists (git_entries)

# what ztsa imports from site-packages: itself, pyproject's dependencies, and
# python-ptrace for --trace-syscalls
OWN_IMPORTS = ("ztsa", "cffi", "_cffi_backend", "yaml", "_yaml", "packaging", "tomli",
               "ptrace")


class Protection(NamedTuple):
    entries: list[str]  # workspace-relative paths, normalised
    ro_paths: list[str]  # absolute paths to bind-mount read-only


class Creation(NamedTuple):
    """CMD's second Landlock ruleset (native/child.c applies it, native/creation.c is the
    helper's view of it): names can be made only beneath `make`, so never in a `chain`
    directory."""

    make: list[str] | None  # absolute directories; None: no second ruleset
    chain: list[str]  # workspace-relative directories holding or leading to protected
    # paths ("" is the root)
    closed: list[str]  # absolute directories outside the workspace where no name can
    # be made either: those on the way to it from a writable root that contains it


def normalise(workspace: str, path: str) -> str:
    """A --protect PATH as a workspace-relative path without '.' or '..'."""
    full = os.path.normpath(os.path.join(workspace, path))
    rel = os.path.relpath(full, workspace)
    if rel == "." or rel.startswith(".."):
        raise ValueError(f"--protect {path!r}: not a path inside the workspace")
    return rel


def resolved_dir(path: str) -> str:
    """path with its directory resolved and its own name kept (a link stays the link)."""
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def link_the_tree_may_change(path: str, writable: list[str]) -> str | None:
    """The first symbolic link on the way to PATH (resolved as the kernel resolves it)
    that lies in one of the WRITABLE places (the workspace, --allow-write): a grant
    through it leads wherever the tree last pointed it, at every run. None when
    there is none."""
    roots = [os.path.realpath(w).rstrip("/") for w in writable]
    todo = os.path.abspath(path).split("/")
    here, hops = "/", 0
    while todo:
        name = todo.pop(0)
        if name in ("", "."):
            continue
        if name == "..":
            here = os.path.dirname(here)
            continue
        nxt = os.path.join(here, name)
        if not os.path.islink(nxt):
            here = nxt
            continue
        if any(nxt == r or nxt.startswith(r + "/") for r in roots):
            return nxt
        hops += 1
        if hops > 40:  # a loop: the kernel's ELOOP, nothing to grant
            return None
        target = os.readlink(nxt)
        todo = target.split("/") + todo
        if target.startswith("/"):
            here = "/"
    return None


def own_installation(writable: list[str]) -> list[str]:
    """Absolute paths, existing or not, in the `writable` directories (resolved), that
    decide what a later ztsa run executes before its gate: the launcher (and the file a
    link to it leads to), the record beside that of the interpreter it starts, ztsa-ns
    beside it (the set-up every run execs), that
    interpreter (each link on the way), pyvenv.cfg where Python and the launcher look
    for it, and in each directory ztsa's imports are looked for, every
    name under which one of OWN_IMPORTS could be found (a package, a module, bytecode,
    an extension). Elsewhere the first ruleset already keeps them."""
    import importlib.machinery
    import importlib.util

    from ztsa import _boot
    from ztsa.sandbox import offer

    roots = [os.path.realpath(w).rstrip("/") + "/" for w in writable]

    def place(path: str) -> str | None:
        """resolved_dir(path), where that lies in a writable root."""
        full = resolved_dir(path)
        return full if any(full.startswith(r) for r in roots) else None

    paths: list[str] = []
    exe = os.path.abspath(sys.executable)
    for name in (exe, os.path.join(os.path.dirname(exe), "python3")):
        for _ in range(8):  # the links of a venv's interpreter
            paths.append(name)
            if not os.path.islink(name):
                break
            name = os.path.normpath(os.path.join(os.path.dirname(name), os.readlink(name)))
    paths += [os.path.join(os.path.dirname(exe), "pyvenv.cfg"),
              os.path.join(os.path.dirname(os.path.dirname(exe)), "pyvenv.cfg")]
    launcher = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    if launcher and not launcher.endswith(".py"):
        # the name it was started by, the file it leads to and, beside that, the record
        # of the interpreter it starts and ztsa-ns (a name planted there would be a later
        # run's set-up)
        real = os.path.realpath(launcher)
        paths += [launcher, real, os.path.join(os.path.dirname(real), _boot.INTERPRETER_FILE),
                  os.path.join(os.path.dirname(real), offer.NS)]
    else:  # `python -m ztsa`: the set-up's executable its distribution's RECORD names
        paths.append(offer.recorded_ns())
    found = [p for p in map(place, filter(None, paths)) if p]
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    dirs = [*_boot.site_dirs(), os.path.dirname(package),
            *(p for p in sys.path if os.path.basename(p) in ("site-packages", "dist-packages"))]
    ends = ["", ".py", ".pyc", *importlib.machinery.EXTENSION_SUFFIXES]
    for d in dict.fromkeys(os.path.abspath(d) for d in dirs):
        inside = place(os.path.join(d, "x"))
        if inside is None:
            continue
        d = os.path.dirname(inside)
        for top in OWN_IMPORTS:
            found += [os.path.join(d, top + end) for end in ends]
            found.append(importlib.util.cache_from_source(os.path.join(d, top + ".py")))
    return list(dict.fromkeys(found))


def _extra_links(workspace: str, inodes: set[tuple[int, int]]) -> list[str]:
    """Other names of hard-linked protected files inside the workspace."""
    found: list[str] = []
    stack = [workspace]
    while stack and inodes:
        d = stack.pop()
        try:
            entries = list(os.scandir(d))
        except OSError:
            continue
        for e in entries:
            try:
                st = e.stat(follow_symlinks=False)
            except OSError:
                continue
            if e.is_dir(follow_symlinks=False):
                stack.append(e.path)
            elif (st.st_dev, st.st_ino) in inodes:
                found.append(e.path)
    return found


def git_entries(workspace: str, layout: gitlayout.Layout | None = None) -> list[str]:
    """The control files of every repository in the workspace, workspace-relative."""
    layout = layout or gitlayout.find(workspace)
    return [os.path.relpath(p, workspace) for p in gitlayout.control_paths(layout)
            if p.startswith(workspace + os.sep)]


def later_entries(workspace: str, layout: gitlayout.Layout, parse_cache: bool = True
                  ) -> list[str]:
    """The files a tool obeys wherever they sit that exist now where the top's read-only
    layer does not reach (an agent's nested instruction files, `.envrc`, a nested
    `.vscode/tasks.json` or `.config/mise/config.toml`, a `*.code-workspace`, or a link
    standing for such a directory: ztsa.surfaces.later), but inside installed packages,
    and the files a devcontainer configuration names or the commands of the settings at
    the top and of those nested ones run by path, with what those scripts run in turn
    (ztsa.surfaces.named_by), workspace-relative."""
    nested = [os.path.relpath(p, workspace) for p in layout.instructions
              if p.startswith(workspace + os.sep) and _ours(workspace, p)]
    return [*(r for r in nested if not surfaces.under_root(r) and not surfaces.installed(r)),
            *surfaces.named_by(workspace, layout.instructions, parse_cache)]


def _ours(workspace: str, path: str) -> bool:
    """Is PATH no link, or a link into the workspace? A link that leads out of it (a
    nested `mise` or `.config` that names a directory of the system) is not made
    read-only where it leads (its target, `/` maybe, is not the workspace's to keep); one
    the run points elsewhere is moved aside after it (gitguard)."""
    if not os.path.islink(path):
        return True
    real = os.path.realpath(path)
    return real.startswith(workspace + os.sep)


def plan(workspace: str, extra: list[str], git: gitlayout.Layout | None = None,
         parse_cache: bool = True) -> Protection:
    """git: the workspace's repositories, when already found; parse_cache: a setting's
    TOML may be read through the parse cache (ztsa.surfaces.named_by)."""
    workspace = os.path.realpath(workspace)
    layout = git or gitlayout.find(workspace)
    entries = list(dict.fromkeys([*AGENT_FILES, *git_entries(workspace, layout),
                                  *later_entries(workspace, layout, parse_cache),
                                  *(normalise(workspace, p) for p in extra)]))
    ro: list[str] = []
    linked: set[tuple[int, int]] = set()
    for rel in entries:
        path = os.path.join(workspace, rel)
        if not os.path.lexists(path):
            continue
        real = os.path.realpath(path)
        if not os.path.exists(real):
            continue  # a dangling symlink: creating through it is refused by the helper
        ro.append(real)
        files = [real] if not os.path.isdir(real) else [
            os.path.join(d, f) for d, _, fs in os.walk(real) for f in fs]
        for f in files:
            try:
                st = os.lstat(f)
            except OSError:
                continue
            if st.st_nlink > 1 and not os.path.isdir(f):
                linked.add((st.st_dev, st.st_ino))
    if linked:
        ro += [p for p in _extra_links(workspace, linked) if not any(
            p == r or p.startswith(r + "/") for r in ro)]
    return Protection(entries, list(dict.fromkeys(ro)))


def creation(workspace: str, entries: list[str], writable: list[str],
             limit: int = 4096) -> Creation:
    """The directories the tree may make names beneath: every writable root of the first
    ruleset that lies outside the workspace (`writable`: the directories it grants the
    make rights), and, inside it, each directory that exists now below a chain
    directory (the root, and each directory on the way to a protected path), other than
    chain directories and protected paths. A name new in a chain directory (a new
    top-level directory included) can then be made only by the file helper, which
    refuses the protected ones, and a path that a racing thread rewrites after the
    helper read it reaches a kernel that refuses every name there.

    A writable root that contains the workspace (`--allow-write ~` for a project in
    the home, /dev/shm for one below it) would grant the make rights in the workspace
    too, since a rule covers a whole hierarchy. It is granted instead entry by entry
    along the way down: each directory that exists now in it, or in a directory on the
    way to the workspace, other than the next one on that way. The directories on the
    way (`closed`) are then like chain directories: a name new in one is the helper's.

    No second ruleset (make None) when one cannot say this exactly: a chain directory
    that is a symlink, or more than `limit` rules (every creation is then the
    helper's)."""
    ws = os.path.realpath(workspace)
    chain = [""]
    for rel in entries:
        parts = rel.split("/")
        for i in range(1, len(parts)):
            prefix = "/".join(parts[:i])
            if prefix in chain:
                continue
            path = os.path.join(ws, prefix)
            if os.path.islink(path):
                return Creation(None, [], [])
            if os.path.isdir(path):
                chain.append(prefix)
    make: list[str] = []
    closed: list[str] = []
    for d in writable:
        real = os.path.realpath(d)
        if real == ws or real.startswith(ws + "/"):
            continue  # inside: covered below
        if ws.startswith(real.rstrip("/") + "/"):
            way = ws
            while way != real:
                way = os.path.dirname(way)
                closed.append(way)
        else:
            make.append(real)
    closed = list(dict.fromkeys(closed))
    on_way = {ws, *closed}
    for d in closed:
        try:
            children = list(os.scandir(d))
        except OSError:
            continue
        make += [e.path for e in children
                 if e.path not in on_way and e.is_dir(follow_symlinks=False)]
    skip = set(chain) | set(entries)
    for c in chain:
        try:
            children = list(os.scandir(os.path.join(ws, c)))
        except OSError:
            continue
        for e in children:
            rel = f"{c}/{e.name}" if c else e.name
            if rel not in skip and e.is_dir(follow_symlinks=False):
                make.append(e.path)
    if len(make) > limit:
        return Creation(None, [], [])
    return Creation(make, chain, closed)
