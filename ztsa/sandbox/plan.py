"""The run plan: every decision about one `ztsa exec` run, made here, once, in Python.

`make(request, offer, site)` is a pure function: what was asked (the command line and
the policy tiers, ztsa.sandbox.request.ExecRequest), what the host offers (probed once,
ztsa.sandbox.offer.HostOffer) and what the run prepared (`Site`: its private home,
CMD's environment, the first ruleset) become a frozen `RunPlan`. It probes nothing and
reads only the paths these name; tests/sandbox/test_plan_golden.py holds its answers
for the main cases. The native module receives the plan whole as one `struct
ztsa_plan` (ztsa.sandbox.native.spawn), and the tracer reads the same record. Nothing
about a run's mode is decided anywhere else. A new confinement control becomes a field
here, applied by the native file of the process that applies it (native/child.c for
the child's set-up)."""

from __future__ import annotations

import os
from enum import IntEnum

from ztsa import gitlayout
from ztsa.records import NamedTuple
from ztsa.sandbox import landlock, protect, resources
from ztsa.sandbox.filter import build

TYPE_CHECKING = False
if TYPE_CHECKING:
    from ztsa.sandbox.handled import Confinement
    from ztsa.sandbox.offer import HostOffer
    from ztsa.sandbox.policy import NetRule
    from ztsa.sandbox.request import ExecRequest


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


class Setup(IntEnum):
    """Which process runs the child's set-up (native/child.c)."""

    FORK = 0  # the fork of ztsa itself (ztsa-ns not installed: a source tree)
    EXEC = 1  # ztsa-ns, which the fork execs (native/nsmain.c), the plan on a memfd


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

    # (..., a policy's deny?, what the port carries: ZTSA_CARRIES_*)
    names: tuple[tuple[str, bool, int, int, bool, int], ...] = ()
    resolvers: tuple[tuple[int, bytes], ...] = ()
    rule_specs: tuple[str, ...] = ()
    listen: tuple[int, ...] = ()
    deny_nets: tuple[tuple[int, bytes, bytes], ...] = ()  # (version, network, mask)
    onlink: tuple[tuple[int, bytes, bytes], ...] = ()  # the host's (ztsa.sandbox.routes)


class Filter(NamedTuple):
    """The seccomp filter's options (ztsa.sandbox.filter.build), as decided."""

    trace_all_sends: bool = False
    trace_fs: bool = False
    notify_connect: bool = False
    notify_net: bool = False
    notify_reads: bool = False
    check_pids: bool = False


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
    filter_options: Filter = Filter()  # what `filter` was built with
    missing: tuple[str, ...] = ()  # the controls this run lacks (EXEC001)
    # per-user resources (ztsa.sandbox.resources): the private HOME and TMPDIR's
    # directory as a tmpfs of max_disk bytes (0: on the host's disk, unbounded); the
    # tree's user namespace's own inotify limits, (instances, watches) ((0, 0): none)
    private_dir: str = ""
    max_disk: int = 0
    inotify: tuple[int, int] = (0, 0)
    # who runs the set-up: ztsa-ns (exec'd from ns, the offer's) wherever it is
    # installed, so that one path runs on every machine; else the fork itself
    setup: Setup = Setup.FORK
    ns: str = ""
    # --agent with the file helper: CMD's kept-state layer (landlock.kept_plan), the
    # agent's own writes there performed by the helper for CMD's thread group alone
    kept: landlock.Kept | None = None

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


class Refusal(Exception):
    """CMD is not started: the exit status and the line that says why."""

    def __init__(self, code: int, message: str) -> None:
        super().__init__(message)
        self.code = code
        self.message = message


EXIT_GATE, EXIT_USAGE = 3, 2


class Mode(NamedTuple):
    """What the request and the host's offer decide before any path is looked at."""

    namespaces: Namespaces
    netns: bool  # the tree's own network namespace (wherever there is the helper)
    pid_ns: bool  # ... and its own PID and IPC namespaces
    connects: Connects
    resolve_now: bool  # --allow-net names resolved once at start (no network namespace)
    # the tree's share of its user's resources (ztsa.sandbox.resources): bytes of the
    # private HOME and TMPDIR's tmpfs (0: none, they lie on the host's disk); its user
    # namespace's own inotify limits ((0, 0): none)
    max_disk: int = 0
    inotify: tuple[int, int] = (0, 0)


def decide(request: ExecRequest, offer: HostOffer) -> Mode:
    """The run's mode, from the request and the offer alone."""
    ns = (Namespaces.MOUNT if offer.root and offer.root_mountns
          else Namespaces.USER if offer.userns else Namespaces.NONE)
    # with the helper (any namespace), the tree gets a network namespace of its own:
    # the helper then decides, performs and logs what leaves it, and answers its DNS
    netns = ns != Namespaces.NONE
    if netns:
        connects = Connects.HELPER
    elif request.audit_log is not None or any(r.suffix for r in request.net):
        connects = Connects.TRACER  # each connect is logged, or may teach a wildcard
    else:
        connects = Connects.LOOP
    # a tmpfs needs the mount namespace; --keep-tmp keeps them on the host's disk
    disk = 0 if request.keep_tmp or ns == Namespaces.NONE else request.max_disk
    # the tree's own user namespace: an ordinary user's, or one CMD makes when started by
    # root, unless root keeps capabilities (in the host's user namespace, then)
    own_userns = ns == Namespaces.USER or (ns == Namespaces.MOUNT
                                           and not request.keep_cap_mask)
    inotify = resources.inotify_share(offer.inotify_limits) if own_userns else (0, 0)
    return Mode(ns, netns, netns and offer.pidns, connects,
                resolve_now=not netns and request.names_a_host, max_disk=disk,
                inotify=inotify)


def missing(request: ExecRequest, offer: HostOffer, fs: landlock.Plan) -> list[str]:
    """The controls this run lacks (EXEC001; under untrusted CMD is not started): the
    first ruleset's (fs: what Landlock cannot hold here) and the namespaces'. Refusal
    when the request cannot run here at all."""
    from ztsa.sandbox.controls import namespace_controls

    mode = decide(request, offer)
    if (request.deny_read and mode.namespaces == Namespaces.NONE
            and not fs.handled & landlock.READ):
        raise Refusal(EXIT_USAGE, f"ztsa: a policy's fs.deny_read "
                      f"({', '.join(request.deny_read)}) cannot be enforced here: no mount "
                      "namespace, and Landlock's read rules cannot hold it; CMD was not "
                      "started")
    if request.audit_only and not mode.pid_ns:
        raise Refusal(EXIT_USAGE, "ztsa: --audit-only needs user and PID namespaces, which "
                      "this system refuses (see `ztsa doctor`); CMD was not started")
    lacking = [*fs.missing, *namespace_controls(offer)]
    from ztsa.sandbox.agents import AGENTS

    if any(AGENTS[n].writer_is_cmd for n in request.agents) and (
            mode.namespaces == Namespaces.NONE or not fs.handled & landlock.WRITE_FILE):
        lacking.append(KEPT_MISSING)
    return lacking


KEPT_MISSING = ("a writer check on the agent's kept state (--agent: any process of the "
                "tree, not the agent's own process alone, can write its transcripts; what "
                "the run wrote there is moved aside after it)")


class Site(NamedTuple):
    """What the run prepared on this host for the plan (ztsa.sandbox.run), after the gate:
    every path the plan names that the request does not."""

    program: str  # CMD's executable, found on the child's PATH
    env: tuple[tuple[str, str], ...]  # CMD's environment (the private HOME and TMPDIR)
    fs: landlock.Plan  # the first ruleset over the writable places (landlock.plan)
    writable: tuple[str, ...] = ()  # the writable places themselves
    audit_fs: landlock.Plan | None = None  # --audit-only's (landlock.audit_plan)
    unreadable: tuple[str, ...] = ()  # what no run may read (landlock.unreadable)
    real_home: str | None = None  # by the password database
    also_homes: tuple[str, ...] = ()  # $HOME, the runs' private base: hidden too
    allow_read: tuple[str, ...] = ()  # the request's and what else CMD reads (gitdirs)
    read_only: tuple[str, ...] = ()  # the policy files, ztsa's installation and state
    binds: tuple[tuple[str, str, bool], ...] = ()  # agents' state, tool-config copies
    git: gitlayout.Layout | None = None  # the workspace's repositories
    log_fd: int = -1  # the audit log's descriptor (-1: none)
    log_path: str | None = None
    empty_file: str = ""  # what a hidden file shows (fs.deny_read)
    net: NetPlan = NetPlan()  # the policy's (Policy.net_plan)
    secrets: tuple[tuple[str, str], ...] = ()
    run_id: str = ""
    own_session: bool = False  # ztsa's controlling terminal is none of its stdio
    private_dir: str = ""  # the run's private directory, HOME and TMPDIR's (mode.max_disk)
    kept: tuple[str, ...] = ()  # kept agent state written by CMD alone (agents.Setup)


def make(request: ExecRequest, offer: HostOffer, site: Site) -> RunPlan:
    """Every decision about the run, from what was asked, what the host offers and what
    the run prepared: nothing probed, nothing read but the paths these name (a path's
    kind, its real path, a workspace's protected files). Refusal."""
    mode = decide(request, offer)
    lacking = missing(request, offer, site.fs)
    if lacking and request.strict:
        raise Refusal(EXIT_GATE, "ztsa: the untrusted profile needs every control; CMD was "
                      "not started")
    ns = mode.namespaces
    workspace = os.path.realpath(request.workspace)
    fs = site.fs
    audit: tuple[landlock.Plan, list[str]] | None = None
    if request.audit_only and site.audit_fs is not None:
        audit, fs = (site.fs, list(site.unreadable)), site.audit_fs
    log = site.log_fd >= 0
    env = dict(site.env)
    program = site.program
    allow_read = list(site.allow_read)
    guard = None
    if ns != Namespaces.NONE:
        extra = list(request.protect)
        real_log = os.path.realpath(site.log_path) if site.log_path else None
        inside = real_log is not None and real_log.startswith(workspace + os.sep)
        if inside and real_log is not None:
            extra.append(os.path.relpath(real_log, workspace))
        # what decides later runs (the policy files, ztsa's own installation) is never
        # the tree's to change, wherever it lies: in the workspace protected by name (a
        # venv there: no name of it can be made, replaced or moved), elsewhere mounted
        # read-only where it exists
        outside: list[str] = []
        for path in site.read_only:
            full = protect.resolved_dir(path)
            if full.startswith(workspace + os.sep):
                extra.append(os.path.relpath(full, workspace))
            else:
                outside.append(path)
        guard = protect.plan(workspace, extra, site.git, request.parse_cache)
        if real_log is not None and not inside and os.path.isfile(real_log):
            guard = guard._replace(ro_paths=[*guard.ro_paths, real_log])
        keep = [r for r in dict.fromkeys(os.path.realpath(p) for p in outside)
                if os.path.exists(r) and r != workspace and r not in guard.ro_paths]
        if keep:
            guard = guard._replace(ro_paths=[*guard.ro_paths, *keep])
    creation = protect.Creation(None, [], [])
    if guard is not None and fs.handled & landlock.MAKE_REG:
        writable = [path for path, rights in fs.rules if rights & landlock.MAKE_REG]
        creation = protect.creation(workspace, guard.entries, writable)
    options = Filter(trace_all_sends=any(r.suffix for r in request.net) and not mode.netns,
                     trace_fs=guard is not None,
                     notify_connect=mode.connects == Connects.HELPER,
                     notify_net=mode.netns, notify_reads=audit is not None,
                     check_pids=not mode.pid_ns)
    enforced = audit[0] if audit is not None else fs
    # the writable places, whether or not Landlock handles writes here: without it its
    # rules grant nothing, and a hidden home must still show them (a workspace there)
    writable = list(dict.fromkeys([
        *(path for path, rights in enforced.rules if rights & landlock.WRITE_FILE),
        *(os.path.realpath(p) for p in site.writable)]))
    home = None if ns == Namespaces.NONE else home_view(
        site.real_home, workspace, writable, env, program, allow_read,
        list(site.also_homes), list(site.binds))
    view: tuple[tuple[str, int], ...] = ()
    if audit is not None:  # the system and the homes as they are; agents' state bound
        view = audit_view(audit[0], home, audit[1])
        home = HomeView((), (), home.binds) if home is not None and home.binds else None
    # hidden by mounts too, which hold whatever Landlock's read rules can: what no run
    # may read (under --audit-only, a policy's denials)
    hidden = list(request.deny_read) if request.audit_only else [
        p for p in site.unreadable if p != "/dev"]
    deny_paths = [r for r in dict.fromkeys(os.path.realpath(p) for p in hidden)
                  if os.path.lexists(r)] if ns != Namespaces.NONE else []
    # the agent's kept entries: written by its own process alone, through the helper
    kept = landlock.kept_plan(fs, list(site.kept)) if (
        guard is not None and audit is None) else None
    return RunPlan(
        program=program, argv=request.argv, env=site.env, cwd=request.cwd,
        filter=build(**options._asdict()), drop_caps=offer.root,
        keep_caps=request.keep_cap_mask, keep_fds=request.pass_fds, landlock=fs,
        namespaces=ns, protection=guard, creation=creation,
        # with a log, every creation stays the helper's, so every refusal is a deny line
        cont=not log, connects=mode.connects, log=log,
        log_fd=site.log_fd if guard is not None else -1,
        workspace=workspace, pid_ns=mode.pid_ns, run_id=site.run_id, home=home,
        max_procs=request.max_procs, max_memory=request.max_memory or MAX_MEMORY,
        own_session=site.own_session, git_configs=tuple(_git_configs(site.git, guard)),
        netns=mode.netns, tell=not request.quiet,
        net=site.net if mode.netns else NetPlan(), secrets=site.secrets,
        audit=audit is not None, audit_view=view, deny_paths=tuple(deny_paths),
        empty_file=site.empty_file if deny_paths else "",
        shm_show=shm_view(env, program, allow_read, writable) if mode.pid_ns else (),
        filter_options=options, missing=tuple(lacking),
        private_dir=site.private_dir if mode.max_disk else "",
        max_disk=mode.max_disk if site.private_dir else 0, inotify=mode.inotify,
        setup=Setup.EXEC if offer.ns else Setup.FORK, ns=offer.ns,
        kept=kept)


def confinement(request: ExecRequest, offer: HostOffer,
                net: tuple[NetRule, ...]) -> Confinement:
    """What the run will have, for the gate (ztsa.sandbox.handled): what the confinement
    removes does not block, unless the offer lacks its control. net: the rules as the
    run will hold them (names resolved now where there is no network namespace)."""
    from ztsa.sandbox.controls import missing_controls
    from ztsa.sandbox.handled import Confinement

    workspace = os.path.realpath(request.workspace)
    return Confinement(
        missing=missing_controls(offer), keep_caps=list(request.keep_caps),
        env_names=[spec.partition("=")[0] for spec in request.env_specs],
        allow_unix=list(request.allow_unix),
        net_addresses=[str(n) for rule in net if rule.port is None for n in rule.networks],
        net_ports=tuple((str(n), rule.port) for rule in net if rule.port is not None
                        for n in rule.networks),
        # in the tree's own network namespace an answer never opens loopback
        wildcards=not offer.netns and any(rule.suffix for rule in net),
        writable=tuple(r for r in (os.path.realpath(p) for p in [
            *request.allow_write, *([request.home] if request.home else [])])
            if not (r == workspace or r.startswith(workspace.rstrip("/") + "/"))),
        secrets=request.secret_names, shown=tuple(_agent_credentials(request)))


def _agent_credentials(request: ExecRequest) -> list[str]:
    """The login files --agent will show its agents (in the caller's $HOME)."""
    home = os.environ.get("HOME")
    if not request.agents or not home:
        return []
    from ztsa.sandbox.agents import AGENTS

    return [os.path.realpath(os.path.join(home, AGENTS[n].state, cred))
            for n in request.agents for cred in AGENTS[n].credentials]
