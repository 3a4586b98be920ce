"""The run plan: every decision about one `ztsa exec` run, made here, once, in Python.

`make` turns what the command line and the kernel allow into a frozen `RunPlan`; the
native module receives it whole as one `struct ztsa_plan` (ztsa.sandbox.native.spawn),
and the tracer reads the same record. Nothing about a run's mode is decided anywhere
else. A new confinement control becomes a field here, applied by the native file of the
process that applies it (native/child.c for the child's set-up)."""

from __future__ import annotations

import os
from enum import IntEnum

from ztsa import gitlayout
from ztsa.records import NamedTuple
from ztsa.sandbox import landlock, protect
from ztsa.sandbox.filter import build

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.sandbox.policy import Policy


class Namespaces(IntEnum):
    """The child's namespaces (ztsa_native.h: enum ztsa_ns)."""

    NONE = 0  # no namespace: existing agent files cannot be mounted read-only
    MOUNT = 1  # a mount namespace (started by root)
    USER = 2  # a user and a mount namespace (an ordinary user)


class Connects(IntEnum):
    """Which process decides and performs the tree's connects (enum ztsa_connects)."""

    TRACER = 0  # no helper: the Python tracer, at ptrace stops, with a log or wildcards
    LOOP = 1  # no helper: the C wait loop performs the allowed ones
    HELPER = 2  # the file helper, as seccomp notifications, in the tree's network namespace


class HomeView(NamedTuple):
    """The real homes (the user's, and $HOME when it differs) and the runs' private base
    under empty read-only tmpfs mounts, with `show` bound back: (path, writable) for the
    writable places in them, and read-only for the directories CMD's PATH and
    environment name, CMD's own installation and --allow-read."""

    homes: tuple[str, ...]
    show: tuple[tuple[str, bool], ...]
    # (real path, where in the private home, writable): an agent's state (--agent)
    binds: tuple[tuple[str, str, bool], ...] = ()

    @property
    def home(self) -> str | None:
        return self.homes[0] if self.homes else None



class NetPlan(NamedTuple):
    """The tree's network, in its own namespace (native/net.c): the names the rules name
    (name, suffix?, port or 0, index of rule_specs), the upstream resolvers (version,
    packed address), the words of every rule for the log, --allow-listen's ports."""

    names: tuple[tuple[str, bool, int, int, bool], ...] = ()  # (..., a policy's deny?)
    resolvers: tuple[tuple[int, bytes], ...] = ()
    rule_specs: tuple[str, ...] = ()
    listen: tuple[int, ...] = ()
    deny_nets: tuple[tuple[int, bytes, bytes], ...] = ()  # (version, network, mask)
    onlink: tuple[tuple[int, bytes, bytes], ...] = ()  # the host's (ztsa.sandbox.routes)


class RunPlan(NamedTuple):
    program: str  # CMD's executable, found on the child's PATH
    argv: tuple[str, ...]
    env: tuple[tuple[str, str], ...]
    cwd: str
    filter: bytes  # the seccomp program (ztsa.sandbox.filter)
    drop_caps: bool  # started by root: drop every capability but keep_caps
    keep_caps: int
    keep_fds: tuple[int, ...]
    landlock: landlock.Plan  # the first ruleset: what the tree may write and read
    namespaces: Namespaces
    protection: protect.Protection | None  # None: no file helper, no read-only mounts
    creation: protect.Creation  # CMD's second ruleset (make None: none)
    cont: bool  # the helper may let O_CREAT opens run in the caller (no log)
    connects: Connects
    log: bool  # an audit log is written
    log_fd: int  # the helper's deny lines (-1: none)
    workspace: str  # resolved
    pid_ns: bool  # the tree's own PID and IPC namespaces, /proc and /dev/shm (an init)
    run_id: str  # in every line of the audit log
    home: HomeView | None = None  # the real home hidden, but for what it shows
    max_procs: int = 0  # processes and threads of the tree (0: no limit)
    max_memory: int = 0  # bytes of data a process (0: no limit)
    own_session: bool = False  # CMD in a new session: ztsa's terminal is none of its stdio
    git_configs: tuple[str, ...] = ()  # protected git configs git itself may rewrite
    netns: bool = False  # the tree's own network namespace; the helper's is the host's
    tell: bool = False  # say each refused destination on stderr when first refused
    net: NetPlan = NetPlan()
    secrets: tuple[tuple[str, str], ...] = ()  # (name, value): redacted in the helper's lines
    # --audit-only: nothing refused but what a policy denies and the agent files; the
    # enforced run's view, (path, kind), for the helper to judge each call against
    audit: bool = False
    audit_view: tuple[tuple[str, int], ...] = ()
    # a policy's fs.deny_read: an empty read-only tmpfs over each directory, an empty
    # read-only file (empty_file) over each other file, after every other mount
    deny_paths: tuple[str, ...] = ()
    empty_file: str = ""
    # read-only in the tree's private /dev/shm (shm_view)
    shm_show: tuple[str, ...] = ()
    # per-user resources (ztsa.sandbox.resources): the private HOME and TMPDIR's
    # directory as a tmpfs of max_disk bytes (0: on the host's disk, unbounded); the
    # tree's user namespace's own inotify limits, (instances, watches) ((0, 0): none)
    private_dir: str = ""
    max_disk: int = 0
    inotify: tuple[int, int] = (0, 0)

    @property
    def helper(self) -> bool:
        return self.protection is not None


MAX_PROCS = 4096  # a build never has so many; a fork bomb always reaches it
MAX_MEMORY = 2 << 30  # bytes of data a process: a compiler's peak, not a balloon's
MIN_PROCS = 300  # the least pid_max a PID namespace takes


def parse_size(text: str) -> int:
    """Bytes from 4096, 512K, 64M, 2G or 1T (powers of 1024). ValueError."""
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30, "T": 1 << 40}
    t = text.strip().upper().removesuffix("B")
    factor = units.get(t[-1:], 1) if t else 1
    number = t[:-1] if t[-1:] in units else t
    if not number.isdigit() or int(number) * factor < 1 << 20:
        raise ValueError(f"{text!r}: expected a size of at least 1M, like 512M or 4G")
    return int(number) * factor


def _inside(path: str, top: str) -> bool:
    return path.startswith(top + os.sep)


def home_view(real_home: str | None, workspace: str, writable: list[str],
              env: dict[str, str], program: str, allow_read: list[str],
              also: list[str] | None = None,
              binds: list[tuple[str, str, bool]] | None = None) -> HomeView | None:
    """What of the real homes (real_home, and `also`: $HOME when it differs, the runs'
    private base) the tree sees. A home stays visible where it holds the workspace, or
    a writable place or --allow-read names it whole; None when no home is left to hide
    and nothing to bind."""
    writable = [os.path.realpath(d) for d in writable]
    readable = [os.path.realpath(p) for p in allow_read]
    homes: list[str] = []
    for given in [*([real_home] if real_home else []), *(also or [])]:
        home = os.path.realpath(given)
        if (home == "/" or workspace == home or _inside(home, workspace)
                or home in writable or home in readable
                or any(home == h or _inside(home, h) or _inside(h, home) for h in homes)):
            continue
        homes.append(home)
    if not homes:
        return HomeView((), (), tuple(binds)) if binds else None

    def in_a_home(path: str) -> bool:
        return any(_inside(path, h) for h in homes)

    show = {d: True for d in writable if in_a_home(d)}
    for real in needed(env, program, allow_read):
        # what a place already shown holds is shown with it (writable in a writable one)
        if in_a_home(real) and not any(real == w or _inside(real, w) for w in show):
            show.setdefault(real, False)
    return HomeView(tuple(homes),
                    tuple(sorted(show.items(), key=lambda i: (len(i[0]), i[0]))),
                    tuple(binds or ()))


def needed(env: dict[str, str], program: str, allow_read: list[str]) -> list[str]:
    """What a hidden place must still show CMD, read-only, resolved and existing: the
    directories its PATH and environment name, its own directory and beside it the lib
    of an installation (an interpreter's stdlib; never the whole prefix: ~/.local holds
    histories and keyrings), a virtual environment whose interpreter CMD is or whose
    bin is on PATH (its python is a link out of it), and --allow-read."""
    exe = os.path.realpath(program)
    prefix = os.path.dirname(os.path.dirname(exe))
    path_dirs = [p for p in env.get("PATH", "").split(":") if p]
    venvs = [os.path.dirname(d) for d in [os.path.dirname(program), *path_dirs]
             if os.path.isabs(d) and os.path.isfile(os.path.join(os.path.dirname(d),
                                                                "pyvenv.cfg"))]
    named = [*path_dirs,
             *(v for v in env.values() if v.startswith("/") and ":" not in v),
             os.path.dirname(exe), os.path.join(prefix, "lib"), os.path.join(prefix, "lib64"),
             *venvs, *allow_read]
    out = []
    for p in named:
        real = os.path.realpath(p) if p else ""
        if real and os.path.exists(real) and real not in out:
            out.append(real)
    return out


SHM = "/dev/shm"


def shm_view(env: dict[str, str], program: str, allow_read: list[str],
             writable: list[str]) -> tuple[str, ...]:
    """What the tree's private /dev/shm shows read-only besides its writable places
    there (which are bound back writable): what CMD needs and --allow-read names there,
    parents first, none inside a writable place."""
    rw = [r for r in (os.path.realpath(d) for d in writable) if _inside(r, SHM)]
    shown = [p for p in needed(env, program, allow_read) if _inside(p, SHM)
             and not any(p == w or _inside(p, w) for w in rw)]
    return tuple(sorted(shown, key=lambda p: (len(p), p)))


# what the enforced run could do beneath a path (enum ztsa_audit_kind)
READONLY, WRITABLE, HIDDEN, UNREADABLE = 0, 1, 2, 3


def audit_view(enforced: landlock.Plan, home: HomeView | None,
               unreadable: list[str]) -> tuple[tuple[str, int], ...]:
    """The enforced run's file-system view as path prefixes (the longest one decides):
    the system read-only, the hidden homes, the unreadable paths (when the enforced
    ruleset handles reads), what the homes show, and the writable places."""
    view: dict[str, int] = {"/": READONLY}
    for h in home.homes if home else ():
        view[h] = HIDDEN
    if enforced.handled & landlock.READ:
        for p in unreadable:
            view[os.path.realpath(p)] = UNREADABLE
        for d in landlock.READABLE_DEVICES:
            view[d] = READONLY
    for p, rw in home.show if home else ():
        view[p] = WRITABLE if rw else READONLY
    for p, rights in enforced.rules:
        if rights & landlock.WRITE_FILE:
            view[p] = WRITABLE
    return tuple(sorted(view.items()))


def _git_configs(git: gitlayout.Layout | None, guard: protect.Protection | None
                 ) -> list[str]:
    """The protected configs of the workspace's repositories: git's own rewrite of one
    (config.lock renamed onto it) is the helper's to judge (native/gitconfig.c)."""
    if git is None or guard is None:
        return []
    mounted = set(guard.ro_paths)
    return [p for g in git.gitdirs for p in (os.path.join(g, n) for n in gitlayout.CONFIGS)
            if os.path.realpath(p) in mounted and os.path.isfile(p)]


def namespaces(userns_available: bool) -> Namespaces:
    if os.geteuid() == 0:
        return Namespaces.MOUNT
    return Namespaces.USER if userns_available else Namespaces.NONE


def make(program: str, argv: list[str], env: dict[str, str], cwd: str, policy: Policy,
         fs: landlock.Plan, ns: Namespaces, protect_extra: list[str], keep_caps: int,
         keep_fds: list[int], log_fd: int | None, log_path: str | None = None,
         pid_ns: bool = False, run_id: str = "", real_home: str | None = None,
         allow_read: list[str] | None = None, max_procs: int = 0,
         max_memory: int = 0, also_homes: list[str] | None = None,
         git: gitlayout.Layout | None = None,
         binds: list[tuple[str, str, bool]] | None = None,
         secrets: dict[str, str] | None = None,
         audit: tuple[landlock.Plan, list[str]] | None = None,
         deny_read: list[str] | None = None, empty_file: str = "",
         read_only: list[str] | None = None, own_session: bool = False,
         private_dir: str = "", max_disk: int = 0,
         inotify: tuple[int, int] = (0, 0)) -> RunPlan:
    """log_fd: the audit log's descriptor, None without a log; log_path: its file, which
    the tree can then neither change nor replace (read-only, and protected like an agent
    file when it lies in the workspace); git: the workspace's repositories, when
    already found. audit (--audit-only, fs being landlock.audit_plan's): the enforced
    run's first ruleset and what it never lets the tree read, to judge calls against;
    deny_read: a policy's fs.deny_read, hidden by mounts (empty_file over a file);
    read_only: absolute paths kept read-only for the tree (the policy files, ztsa).
    private_dir, max_disk: the private HOME and TMPDIR's directory, a tmpfs of max_disk
    bytes (with a mount namespace); inotify: the tree's own limits (with a user
    namespace of the tree's: not for root keeping capabilities)."""
    log = log_fd is not None
    guard = None
    if ns != Namespaces.NONE:
        extra = list(protect_extra)
        real_log = os.path.realpath(log_path) if log_path else None
        inside = real_log is not None and real_log.startswith(policy.workspace + os.sep)
        if inside and real_log is not None:
            extra.append(os.path.relpath(real_log, policy.workspace))
        # what decides later runs (the policy files, ztsa's own installation) is never
        # the tree's to change, wherever it lies: in the workspace protected by name (a
        # venv there: no name of it can be made, replaced or moved), elsewhere mounted
        # read-only where it exists
        outside: list[str] = []
        for path in read_only or ():
            full = protect.resolved_dir(path)
            if full.startswith(policy.workspace + os.sep):
                extra.append(os.path.relpath(full, policy.workspace))
            else:
                outside.append(path)
        guard = protect.plan(policy.workspace, extra, git)
        if real_log is not None and not inside and os.path.isfile(real_log):
            guard = guard._replace(ro_paths=[*guard.ro_paths, real_log])
        keep = [r for r in dict.fromkeys(os.path.realpath(p) for p in outside)
                if os.path.exists(r) and r != policy.workspace and r not in guard.ro_paths]
        if keep:
            guard = guard._replace(ro_paths=[*guard.ro_paths, *keep])
    # with the helper, the tree gets a network namespace of its own: the helper then
    # decides, performs and logs what leaves it, and answers its DNS
    netns = guard is not None
    if netns:
        connects = Connects.HELPER
    elif log or policy.wildcards:
        connects = Connects.TRACER  # each connect is logged, or may teach a wildcard
    else:
        connects = Connects.LOOP
    creation = protect.Creation(None, [], [])
    if guard is not None and fs.handled & landlock.MAKE_REG:
        writable = [path for path, rights in fs.rules if rights & landlock.MAKE_REG]
        creation = protect.creation(policy.workspace, guard.entries, writable)
    if audit is not None and not netns:
        raise ValueError("--audit-only needs the file helper and a network namespace")
    code = build(trace_all_sends=bool(policy.wildcards) and not netns,
                 trace_fs=guard is not None, notify_connect=connects == Connects.HELPER,
                 notify_net=netns, notify_reads=audit is not None,
                 check_pids=not (pid_ns and guard is not None))
    enforced = audit[0] if audit is not None else fs
    writable = [path for path, rights in enforced.rules if rights & landlock.WRITE_FILE]
    home = None if ns == Namespaces.NONE else home_view(
        real_home, policy.workspace, writable, env, program, allow_read or [], also_homes,
        binds)
    view: tuple[tuple[str, int], ...] = ()
    if audit is not None:  # the system and the homes as they are; agents' state bound
        view = audit_view(audit[0], home, audit[1])
        home = HomeView((), (), home.binds) if home is not None and home.binds else None
    # hidden by mounts too, which hold whatever Landlock's read rules can
    deny_paths = [r for r in dict.fromkeys(os.path.realpath(p) for p in deny_read or ())
                  if os.path.lexists(r)] if ns != Namespaces.NONE else []
    return RunPlan(
        program=program, argv=tuple(argv), env=tuple(env.items()), cwd=cwd, filter=code,
        drop_caps=os.geteuid() == 0, keep_caps=keep_caps, keep_fds=tuple(keep_fds),
        landlock=fs, namespaces=ns, protection=guard, creation=creation,
        # with a log, every creation stays the helper's, so every refusal is a deny line
        cont=not log, connects=connects, log=log,
        log_fd=log_fd if log_fd is not None and guard is not None else -1,
        workspace=policy.workspace, pid_ns=pid_ns and guard is not None, run_id=run_id,
        home=home,
        max_procs=max_procs, max_memory=max_memory, own_session=own_session,
        git_configs=tuple(_git_configs(git, guard)), netns=netns,
        net=policy.net_plan() if netns else NetPlan(),
        secrets=tuple((secrets or {}).items()), audit=audit is not None, audit_view=view,
        deny_paths=tuple(deny_paths), empty_file=empty_file if deny_paths else "",
        shm_show=shm_view(env, program, allow_read or [], writable)
        if pid_ns and guard is not None else (),
        private_dir=private_dir if ns != Namespaces.NONE and max_disk else "",
        max_disk=max_disk if ns != Namespaces.NONE and private_dir else 0,
        inotify=inotify if ns == Namespaces.USER or (
            ns == Namespaces.MOUNT and not keep_caps) else (0, 0))
