"""`ztsa exec`: spawn CMD confined, trace the tree, return CMD's exit status."""

from __future__ import annotations

import contextlib
import errno
import gc
import os
import sys

from ztsa import gitlayout
from ztsa.printable import printable
from ztsa.sandbox import (
    agentguard,
    agents,
    bytecode,
    cgroup,
    controls,
    gitguard,
    gitindex,
    landlock,
    plan,
    protect,
    resources,
    terminal,
    toolchains,
)
from ztsa.sandbox import native as nat
from ztsa.sandbox.auditlog import AuditLog
from ztsa.sandbox.paths import find_program, private_dir, reap_stale, remove_tree
from ztsa.sandbox.policy import Policy
from ztsa.sandbox.tracer import OPTIONS, Tracer, TracerError

TYPE_CHECKING = False
if TYPE_CHECKING:
    import signal as _signal
    from typing import IO

    from ztsa.sandbox.offer import HostOffer
    from ztsa.sandbox.request import ExecRequest
    from ztsa.sandbox.syscalls import Decoder
else:  # its constants and signal(), without signal.py's enum conversions
    import _signal

EXIT_CANNOT_EXEC = 126
EXIT_NOT_FOUND = 127
EXIT_INTERNAL = 125
EXIT_GATE = 3
EXIT_USAGE = 2
# CMD succeeded, but the clean-up after it could not take away everything the tree left
# that would run later (named on stderr and in the log): never 0 then
EXIT_UNCLEAN = 122
GROWTH_SHOWN = 64 << 20  # the workspace's growth said on the summary line from this on
# what the child was doing when it failed (native/ztsa_native.h, enum ztsa_step)
SETUP_STEPS = {1: "the namespaces, read-only agent files",
               2: "changing to the working directory", 3: "dropping capabilities",
               4: "NoNewPrivs", 5: "Landlock", 6: "the file helper", 7: "the seccomp filter",
               8: "the tree's /proc, /dev/shm and session keyring",
               9: "the tree's network namespace and ztsa's DNS service in it",
               10: "making the tree the OOM killer's first choice (oom_score_adj)",
               11: "starting ztsa-ns", 12: "ztsa-ns reading the plan"}

CAPS = {
    "CHOWN": 0, "DAC_OVERRIDE": 1, "DAC_READ_SEARCH": 2, "FOWNER": 3, "FSETID": 4,
    "KILL": 5, "SETGID": 6, "SETUID": 7, "SETPCAP": 8, "LINUX_IMMUTABLE": 9,
    "NET_BIND_SERVICE": 10, "NET_BROADCAST": 11, "NET_ADMIN": 12, "NET_RAW": 13,
    "IPC_LOCK": 14, "IPC_OWNER": 15, "SYS_MODULE": 16, "SYS_RAWIO": 17, "SYS_CHROOT": 18,
    "SYS_PTRACE": 19, "SYS_PACCT": 20, "SYS_ADMIN": 21, "SYS_BOOT": 22, "SYS_NICE": 23,
    "SYS_RESOURCE": 24, "SYS_TIME": 25, "SYS_TTY_CONFIG": 26, "MKNOD": 27, "LEASE": 28,
    "AUDIT_WRITE": 29, "AUDIT_CONTROL": 30, "SETFCAP": 31, "MAC_OVERRIDE": 32,
    "MAC_ADMIN": 33, "SYSLOG": 34, "WAKE_ALARM": 35, "BLOCK_SUSPEND": 36, "AUDIT_READ": 37,
    "PERFMON": 38, "BPF": 39, "CHECKPOINT_RESTORE": 40,
}


def cap_mask(names: list[str]) -> int:
    mask = 0
    for name in names:
        key = name.upper().removeprefix("CAP_")
        if key not in CAPS:
            raise ValueError(f"unknown capability {name!r}")
        mask |= 1 << CAPS[key]
    return mask


BASE_ENV = ("PATH", "LANG", "TERM", "TZ", "USER")


def child_environment(environ: dict[str, str], env_specs: list[str], home: str,
                      tmpdir: str) -> dict[str, str]:
    """PATH, LANG, LC_*, TERM, TZ, USER, the private HOME and TMPDIR, and nothing else
    but --env NAME (passed through) and --env NAME=VALUE (injected for this run)."""
    env = {k: v for k, v in environ.items() if k in BASE_ENV or k.startswith("LC_")}
    for spec in env_specs:
        name, sep, value = spec.partition("=")
        if not name or "\0" in spec:
            raise ValueError(f"--env {spec!r}: expected NAME or NAME=VALUE")
        if sep:
            env[name] = value
        elif name in environ:
            env[name] = environ[name]
    env["HOME"] = home
    env["TMPDIR"] = tmpdir
    return env


def _passwd_home() -> str | None:
    import pwd

    try:
        return pwd.getpwuid(os.getuid()).pw_dir
    except KeyError:
        return None


def policy(request: ExecRequest, offer: HostOffer) -> tuple[Policy, list[str]]:
    """The run's allowlist, and lines for stderr. In the tree's own network namespace
    names are followed when the tree resolves them; without one (no user namespaces)
    they are resolved once, now, and what a policy denies is dropped from their
    addresses. ValueError."""
    from ztsa.sandbox.policy import PolicyError, parse_net, resolvers

    rules, notes = list(request.net), []
    if not offer.netns:
        programs = {r.spec: r.binaries for r in request.net if r.binaries}
        try:
            rules = [parse_net(r.spec) if r.name else r for r in request.net
                     if r.spec not in request.agent_hosts]
        except PolicyError as exc:
            raise ValueError(f"--allow-net: {exc}") from None
        for spec in request.agent_hosts:  # the agent's, not the person's: said, not refused
            try:
                rules.append(parse_net(spec))
            except PolicyError as exc:
                notes.append(f"ztsa: --agent: {exc}; the agent cannot reach it")
        rules = [r._replace(binaries=programs[r.spec]) if r.spec in programs else r
                 for r in rules]
        if programs:
            notes.append("ztsa: net.allow rules for listed programs need the tree's network "
                         "namespace; here they allow nothing")
        if request.deny:  # names resolved now: drop what a policy denies
            rules = [r._replace(networks=tuple(n for n in r.networks if not any(
                d.networks and any(n.version == x.version and n.overlaps(x)
                                   for x in d.networks) for d, _ in request.deny)))
                     if r.name else r for r in rules]
    try:  # --audit-only asks upstream for every name
        dns = resolvers(list(request.dns)) if (
            request.dns or request.names_a_host or request.audit_only) else []
    except ValueError as exc:
        raise ValueError(f"--dns: {exc}") from None
    return Policy(rules, list(request.allow_unix), request.workspace, dns,
                  request.allow_listen, list(request.deny)), notes


def execute(request: ExecRequest, offer: HostOffer, policy: Policy,
            log_stream: IO[str] | None, secrets: dict[str, str] | None = None,
            syscalls: Decoder | None = None) -> int:
    """Run the request confined; return ztsa's exit status (CMD's, or 125/126/127, or
    3 when the untrusted profile lacks a control, or 2 when the host cannot run what was
    asked). Prepares what the plan names (the private home and TMPDIR, CMD's
    environment, the agents' state, the tool configuration's copies, the tree's cgroup,
    the first ruleset), then plans (plan.make) and runs it. log_stream: the audit log,
    closed here; secrets: --secret's values, set for CMD and never logged; syscalls:
    --trace-syscalls' decoder."""
    each = request.max_memory or plan.MAX_MEMORY
    total = request.max_memory or cgroup.default_total()
    log = AuditLog(log_stream, secrets, ocsf=request.ocsf)
    private, lock = private_dir(reapable=not request.keep_tmp)  # 0700, removed at the end
    group: cgroup.Group | None = None
    home = request.home
    try:
        own_home = os.path.join(private, "home")
        tmpdir = os.path.join(private, "tmp")
        os.mkdir(own_home, 0o700)
        os.mkdir(tmpdir, 0o700)
        env = child_environment(dict(os.environ), list(request.env_specs), home or own_home,
                                tmpdir)
        real_home = _passwd_home() or os.environ.get("HOME")
        # $HOME first: the one the caller's own git and toolchains use
        homes = [h for h in dict.fromkeys([os.environ.get("HOME"), real_home]) if h]
        for name, value in toolchains.variables(dict(os.environ), homes).items():
            env.setdefault(name, value)
        env.update(secrets or {})
        for name in request.deny_env:  # never passed, the default few included
            if name not in ("HOME", "TMPDIR"):
                env.pop(name, None)
        # after the secrets: the agent's private configuration approves the key it gets
        setup = agents.prepare(list(request.agents), homes[0], own_home,
                               mounts=offer.mounts, workspace=policy.workspace,
                               env=env) if (request.agents and homes and not home) else None
        if setup is not None:
            for name, value in setup.env:
                if name not in request.deny_env:
                    env.setdefault(name, value)
        identity = toolchains.git_identity(homes, dict(os.environ)) if (
            request.git_identity and not home) else None
        if identity is not None:
            fd = os.open(os.path.join(own_home, ".gitconfig"),
                         os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(identity)
        shown: tuple[str, ...] = ()
        if request.tool_config and homes and not home:
            from ztsa.sandbox import toolconf

            conf = toolconf.prepare(homes, own_home, dict(os.environ), env,
                                    request.parse_cache)
            for line in conf.notes:
                print(line, file=sys.stderr)
            shown = conf.files
        # the tree's totals: its own cgroup beneath ztsa's, where ztsa may make one
        group, why = cgroup.make(log.run, request.max_procs + 1, total)  # + 1: the keeper
        mode = plan.decide(request, offer)
        # the tree's share of its user's inotify, locks and disk (ztsa.sandbox.resources;
        # root keeping capabilities chose to go without inotify limits of the tree's)
        lacking = resources.missing(offer, keep_caps=bool(request.keep_cap_mask))
        log.event("env", names=sorted(env), home=env["HOME"], tmpdir=tmpdir,
                  max_procs=request.max_procs, max_memory=each, max_disk=mode.max_disk,
                  **({"inotify": list(mode.inotify)} if mode.inotify != (0, 0) else {}),
                  **({"resources_missing": lacking} if lacking else {}),
                  limits=group.kind if group else "rlimits",
                  **({"max_memory_total": total} if group else {"limits_why": why}),
                  **({"secrets": sorted(secrets)} if secrets else {}),
                  **({"agents": list(request.agents)} if request.agents else {}))
        writable = [policy.workspace, private, *(p for p in [home] if p),
                    *request.allow_write, *(setup.writable if setup else ())]
        # real_home: the user's home by the password database, $HOME being the caller's
        # to set (and a tree of an earlier run may have written the script that set it)
        also = [h for h in [os.environ.get("HOME")] if h]
        deny_read = list(request.deny_read)
        fs = landlock.plan(offer.landlock_abi, writable, real_home, also=also,
                           hidden=deny_read)
        try:  # what decides later runs: the policy files and ztsa's own installation
            read_only = (*request.policy_files,
                         *_own_state([policy.workspace, *request.allow_write,
                                      *([home] if home else [])]),
                         *protect.own_installation(writable))
        except ValueError as exc:
            print(f"ztsa: {exc}", file=sys.stderr)
            log.close()
            return EXIT_USAGE
        site = plan.Site(
            program="", env=tuple(env.items()), fs=fs, writable=tuple(writable),
            audit_fs=landlock.audit_plan(fs.abi, deny_read)
            if request.audit_only and mode.pid_ns else None,
            unreadable=tuple(landlock.unreadable([real_home, *also], deny_read)),
            real_home=real_home,
            # hidden like a home: $HOME, and where the private directories of all runs
            # are, but for this one's
            also_homes=(*also, os.path.dirname(private)),
            read_only=read_only,
            # an agent's state; the tool configuration's copies read-only, bound onto
            # themselves
            binds=(*(setup.binds if setup else ()),
                   *((p, p, False) for p in shown if mode.namespaces != plan.Namespaces.NONE)),
            log_fd=log.stream.fileno() if log.stream is not None else -1,
            log_path=getattr(log_stream, "name", None),
            net=policy.net_plan() if mode.netns else plan.NetPlan(),
            secrets=tuple((secrets or {}).items()), run_id=log.run,
            own_session=not terminal.among_stdio(), private_dir=private,
            kept=setup.own_writer if setup else ())
        try:
            missing = plan.missing(request, offer, fs)
        except plan.Refusal as no:
            print(no.message, file=sys.stderr)
            log.close()
            return no.code
        if missing:
            for control in missing:
                print(f"ztsa: this kernel lacks {control}", file=sys.stderr)
            hint = controls.apparmor_hint(offer)
            if hint:
                print(f"ztsa: {hint}", file=sys.stderr)
            log.event("confinement", missing=missing, landlock_abi=fs.abi,
                      refused=request.strict)
            if request.strict:
                print("ztsa: the untrusted profile needs every control; CMD was not started",
                      file=sys.stderr)
                log.close()
                return EXIT_GATE
        return _execute(request, offer, policy, log, site, setup, syscalls, group)
    finally:
        if group is not None:
            cgroup.remove(group)
        if request.keep_tmp:
            print(f"ztsa: kept the private home and TMPDIR in {private}", file=sys.stderr)
        else:
            remove_tree(private)
        os.close(lock)
        # what runs killed before their own cleanup left (after CMD, off its start-up)
        reap_stale()
        cgroup.reap_stale()


def _own_state(writable: list[str]) -> list[str]:
    """ztsa's own state that a writable place of the tree's holds (the workspace too:
    an agent run in the home): the parse cache (a planted entry would be a later gate's
    parse; its `gemini/` holds the names `ztsa hook gemini` gives commands, a changed
    one would run unconfined) and the user policy's directory (a planted policy.toml, a
    later run's allow entries; Claude Code's shell wrapper). Made now if missing (0700),
    so that the tree sees it read-only; nothing when no writable place holds them."""
    roots = [os.path.realpath(p) for p in writable]
    if not roots:
        return []
    from ztsa import tiers

    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"),
                                                              ".cache")
    wanted = [os.environ.get("ZTSA_CACHE_DIR") or os.path.join(base, "ztsa"),
              os.path.dirname(tiers.user_path())]
    out = []
    for d in wanted:
        real = os.path.realpath(d)
        if not os.path.isabs(d) or not any(real == r or real.startswith(r.rstrip("/") + "/")
                                           for r in roots):
            continue
        try:
            os.makedirs(d, mode=0o700, exist_ok=True)
        except OSError as exc:
            raise ValueError(f"cannot keep ztsa's own {d} from the tree: {exc.strerror}"
                             ) from None
        out.append(d)
    return out


def _execute(request: ExecRequest, offer: HostOffer, policy: Policy, log: AuditLog,
             site: plan.Site, setup: agents.Setup | None, syscalls: Decoder | None,
             group: cgroup.Group | None) -> int:
    argv = list(request.argv)
    env = dict(site.env)
    program = find_program(argv[0], env.get("PATH"))
    if program is None:
        print(f"ztsa: {argv[0]}: command not found", file=sys.stderr)
        log.event("summary", status=EXIT_NOT_FOUND, denied=0, execs=0)
        log.close()
        return EXIT_NOT_FOUND
    # git's control files as they are: read-only for the tree, and the measure of what
    # it changed (judged when it has ended)
    try:  # without a mount namespace the top's surfaces are judged after the run
        git_before = gitguard.before(policy.workspace, roots=plan.decide(
            request, offer).namespaces == plan.Namespaces.NONE,
            parse_cache=request.parse_cache)
    except OSError as exc:  # what cannot be judged after the run does not run
        print(f"ztsa: {exc}; CMD was not started", file=sys.stderr)
        log.event("summary", status=EXIT_GATE, denied=0, execs=0)
        log.close()
        return EXIT_GATE
    pyproject_before = gitguard.policy_before(policy.workspace)
    # the bytecode caches and the venvs' start-up files the same walk found, as they are
    code_before = bytecode.before(git_before.layout)
    # each index's bits that hide a file from git status, as they are (read only)
    index_before = gitindex.before(policy.workspace, git_before.layout)
    # what an earlier (killed) run left in an agent's kept state, then its instruction
    # files as they are: the measure of what this run changes
    agent_before: dict[str, agentguard.Snapshot] = {}
    for state, keep, globs in setup.kept if setup else ():
        _report_agent_state(log, agentguard.audit(state, keep, (), {}, log.run))
        agent_before[state] = agentguard.snapshot(state, keep, globs)
    layout = git_before.layout
    empty = ""
    if request.deny_read if request.audit_only else [p for p in site.unreadable
                                                      if p != "/dev"]:
        # what a hidden file shows instead (private: removed with the run)
        empty = os.path.join(os.path.dirname(env["TMPDIR"]), "denied")
        os.close(os.open(empty, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o400))
    run = plan.make(request, offer, site._replace(
        program=program, git=layout, empty_file=empty,
        allow_read=(*request.allow_read, *gitguard.outside_gitdirs(policy.workspace, layout))))
    # each refused destination said when first refused, unless --quiet (the helper says
    # its own; the tracer's through the log)
    log.tell = run.tell
    used_before = resources.fs_used(policy.workspace)
    pid, sync_fd, err_fd = nat.spawn(run, policy.table)
    try:
        if group is not None:  # before the child runs anything: all of the tree is in it
            cgroup.enter(group, pid)
    except OSError as e:
        os.kill(pid, _signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(sync_fd)
        os.close(err_fd)
        print(f"ztsa: cannot put the tree in its cgroup: {e.strerror}; CMD was not started",
              file=sys.stderr)
        log.close()
        return EXIT_INTERNAL
    tracer = Tracer(policy, log, pid, helper=run.helper, init=run.pid_ns,
                    connects_in_loop=run.connects == plan.Connects.LOOP, syscalls=syscalls,
                    setup_exec=run.setup == plan.Setup.EXEC)
    try:
        nat.ptrace(nat.PTRACE_SEIZE, pid, 0, OPTIONS)
    except OSError:
        os.kill(pid, _signal.SIGKILL)
        os.waitpid(pid, 0)
        os.close(sync_fd)
        os.close(err_fd)
        raise
    # Nothing in the tree may read or write our memory. Only now: the child inherits
    # the flag at fork, and an unprivileged tracer cannot seize a non-dumpable child.
    # The child runs nothing of CMD's until it is released below.
    nat.set_dumpable(False)
    held = terminal.hold()  # before CMD runs: the terminal's foreground and modes now
    flags = terminal.flags_of([0, 1, 2, *request.pass_fds])
    os.write(sync_fd, b"g")
    os.close(sync_fd)
    # a signal to ztsa is only recorded: the interpreter writes its number to the wake
    # pipe, and the tracer's loop forwards it to the tree
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_r, False)
    os.set_blocking(wake_w, False)
    handlers = {s: _signal.signal(s, _recorded)
                for s in (_signal.SIGINT, _signal.SIGTERM, _signal.SIGHUP)}
    wakeup = _signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    # the launcher starts ztsa without cycle collection; the loop may run for hours: on
    # again, with what start-up made kept out of every collection
    gc.freeze()
    gc.enable()
    status: int | None = None
    try:
        status = tracer.run(wake_r)
    except TracerError:
        pass  # no CMD ever ran: the set-up's failure, on the error pipe, says why
    except BaseException:
        tracer.kill_all("ztsa failed")
        raise
    finally:
        terminal.give_back(held)
        terminal.give_back_flags(flags)
        _signal.set_wakeup_fd(wakeup)
        for s, h in handlers.items():
            _signal.signal(s, h)
        os.close(wake_r)
        os.close(wake_w)
    failure = os.read(err_fd, 4)
    os.close(err_fd)
    if len(failure) == 4:
        value = int.from_bytes(failure, sys.byteorder)
        step, err = value >> 16, value & 0xFFFF
        if step == 0:
            _say(f"ztsa: cannot execute {program}: {os.strerror(err)}")
            code = EXIT_NOT_FOUND if err == errno.ENOENT else EXIT_CANNOT_EXEC
        else:
            what = SETUP_STEPS.get(step, f"step {step}")
            _say(f"ztsa: cannot set up the confinement ({what}): {os.strerror(err)}; "
                 "CMD was not started")
            code = EXIT_INTERNAL
    elif tracer.helper_lost:
        _say("ztsa: the file helper died; the tree was killed")
        code = EXIT_INTERNAL
    elif status is None:
        raise TracerError("CMD vanished without an exit status")
    else:
        code = os.waitstatus_to_exitcode(status)
        code = code if code >= 0 else 128 - code
    used_after = resources.fs_used(policy.workspace)
    after = gitguard.layout_after(policy.workspace, git_before)  # one walk for both
    moved = gitguard.audit(policy.workspace, git_before, log.run, after)
    moved += gitguard.audit_policy(policy.workspace, pyproject_before, log.run)
    started = bytecode.audit(policy.workspace, code_before, after, log.run, request.keep_pth)
    cleared = gitindex.audit(policy.workspace, index_before, after)
    swept = [f for state, keep, globs in (setup.kept if setup else ())
             for f in agentguard.audit(state, keep, globs, agent_before.get(state, {}),
                                       log.run, written=True)]
    _report_agent_state(log, swept)
    for m in moved:
        log.event("quarantine", path=m.path, reason=m.reason, moved_to=m.moved_to,
                  replaced=m.replaced, **({"error": m.error} if m.error else {}))
        if m.error:
            _say(f"ztsa: could not move aside {printable(m.path)} ({m.reason}): "
                 f"{printable(m.error)}; do not run git there before you have looked at it")
    done = [m for m in moved if not m.error]
    if done:
        names = (", ".join(printable(m.path) for m in done[:5])
                 + (", ..." if len(done) > 5 else ""))
        _say(f"ztsa: moved aside {len(done)} file(s) that would make git, ztsa itself or "
             f"another tool run code, allow more or instruct an agent outside the "
             f"sandbox: {names} (see "
             f"{gitguard.QUARANTINE}/{log.run}/manifest.json)")
    _report_bytecode(log, started)
    _report_index(log, cleared)
    unclean = ([m.path for m in [*moved, *started.moved] if m.error]
               + [f.path for f in swept if f.error] + [c.path for c in cleared if c.error])
    if unclean and code == 0:
        _say(f"ztsa: the run is unclean: {len(unclean)} thing(s) it left could not be "
             f"taken away (named above); exit {EXIT_UNCLEAN}")
        code = EXIT_UNCLEAN
    if run.pid_ns and run.max_procs and nat.procs_unlimited():
        what = "the PID namespace's own pid_max (--max-procs binds root no more)"
        _say(f"ztsa: this kernel lacks {what}")
        log.event("confinement", missing=[what], landlock_abi=run.landlock.abi,
                  refused=False)
    if run.inotify != (0, 0) and nat.inotify_unbounded():
        _say(f"ztsa: this kernel lacks {resources.INOTIFY_MISSING}")
        log.event("confinement", missing=[resources.INOTIFY_MISSING],
                  landlock_abi=run.landlock.abi, refused=False)
    grown = (used_after - used_before if used_after is not None and used_before is not None
             else None)
    limited = cgroup.refused(group) if group is not None else cgroup.Refused(0, 0)
    if group is not None and limited.memory:
        _say(f"ztsa: the tree reached --max-memory: the kernel killed {limited.memory} "
             f"process(es) at {cgroup.size(group.max_memory)} for the whole tree")
    denied = log.counts["denied"] + nat.helper_denials()  # the helper logs its own
    log.counts["connect"] += nat.helper_connects()
    would = nat.helper_would_deny() if run.audit else 0
    log.event("summary", status=code, denied=denied, execs=log.counts["exec"],
              connects=log.counts["connect"], sends=log.counts["send"],
              killed=log.counts["kill"],
              quarantined=len(moved) + len(started.moved) + log.counts.get("quarantined", 0),
              **({"reported": len(started.reported)} if started.reported else {}),
              **({"bytecode_removed": len(started.removed)} if started.removed else {}),
              **({"index_cleared": sum(1 for c in cleared if not c.error)}
                 if cleared else {}),
              **({"enforced": False, "would_deny": would} if run.audit else {}),
              **({"memory_killed": limited.memory, "procs_refused": limited.procs}
                 if group is not None else {}),
              **({"syscalls": log.counts["syscall"]} if syscalls is not None else {}),
              # the workspace's growth: its file system's used bytes (other writers too)
              **({"workspace_fs_used_before": used_before,
                  "workspace_fs_used_after": used_after} if grown is not None else {}))
    where = f"; audit log: {site.log_path}" if site.log_path is not None else ""
    first = list({d[1]: d for d in [*log.first_denials, *nat.helper_first_denials()]
                  }.values())[:3] if denied else []
    private = os.path.dirname(env.get("TMPDIR", "")) + os.sep
    shown = "; first denied: " + printable(", ".join(_denial_hint(*d, private=private)
                                                     for d in first)) if first else ""
    if run.tell:
        audit = (f"audit only, nothing outside the workspace was enforced: {would} would "
                 f"have been denied (`ztsa policy suggest` turns the log into a policy); "
                 ) if run.audit else ""
        grew = (f", the workspace's file system +{cgroup.size(grown)}"
                if grown is not None and grown >= GROWTH_SHOWN else "")
        _say(log.redact(f"ztsa: {audit}{denied} denied, {log.counts['exec']} exec(s), "
                        f"{log.counts['kill']} killed at exit{grew}{where}{shown}"))
    log.close()
    return code


def _report_agent_state(log: AuditLog, found: list[agentguard.Finding]) -> None:
    for f in found:
        log.event("quarantine", path=f.path, reason=f.reason, moved_to=f.moved_to,
                  replaced="restored" if f.restored else "",
                  **({"error": f.error} if f.error else {}))
        if f.error:
            _say(f"ztsa: {printable(f.path)}: {printable(f.reason)}: {printable(f.error)}; "
                 "look at it before running the agent outside ztsa")
    done = [f for f in found if not f.error]
    if done:
        names = ", ".join(f"{printable(f.path)} ({printable(f.reason)})" for f in done[:3])
        _say(f"ztsa: {len(done)} thing(s) the tree left in the agent's state removed or "
             f"moved aside: {names}{', ...' if len(done) > 3 else ''}"
             + "".join(f"; `ztsa quarantine list --workspace {printable(d)}` shows them, "
                       "`restore` takes them back" for d in sorted({
                           f.moved_to.partition("/.ztsa-quarantine/")[0] for f in done
                           if f.moved_to})))
    log.counts["quarantined"] = log.counts.get("quarantined", 0) + len(found)


def tell_refused(call: str, what: str, rule: str) -> None:
    """A refused destination when it is first refused (the helper's tell_refused, for
    the runs whose tracer decides)."""
    shown = "the name" if call == "dns" else call
    _say(f"ztsa: refused {shown} {printable(_denial_hint(call, what, rule))[len(call) + 1:]}")


def _report_bytecode(log: AuditLog, found: bytecode.Result) -> None:
    """The bytecode audit's results: a `bytecode` event for the cache entries removed,
    a `quarantine` event for each file moved aside (or that could not be), a `reported`
    event for each left in place; and their lines on stderr."""
    if found.removed:
        log.event("bytecode", removed=len(found.removed), paths=found.removed[:100])
        layout = [p for p in found.removed
                  if any(d in f"/{p}/" for d in gitlayout.LAYOUT_DIRS)]
        if layout:  # what the person may miss: direnv's and devenv's, not bytecode
            names = ", ".join(printable(p) for p in layout[:3])
            _say(f"ztsa: removed {len(layout)} file(s) the run made or changed in direnv's "
                 f"or devenv's layout directory (a cached shell, a program on PATH): "
                 f"{names}{', ...' if len(layout) > 3 else ''}; the tools rebuild them")
    for m in found.moved:
        log.event("quarantine", path=m.path, reason=m.reason, moved_to=m.moved_to,
                  replaced=m.replaced, **({"runs": m.runs} if m.runs else {}),
                  **({"error": m.error} if m.error else {}))
        if m.error:
            _say(f"ztsa: could not take away {printable(m.path)} ({printable(m.reason)}): "
                 f"{printable(m.error)}; look at it before running Python there")
    done = [m for m in found.moved if not m.error]
    if done:
        names = ", ".join(f"{printable(m.path)} ({printable(m.runs)})" for m in done[:3])
        _say(f"ztsa: moved aside {len(done)} file(s) that Python, a workspace virtual "
             f"environment or a directory on PATH would run later in place of what you "
             f"read or expect: "
             f"{names}{', ...' if len(done) > 3 else ''} (see "
             f"{gitguard.QUARANTINE}/{log.run}/manifest.json)")
    for r in found.reported:
        log.event("reported", path=r.path, reason=r.reason, runs=r.runs)
    built = [r for r in found.reported if r.kind == "extension"]
    if built:
        names = ", ".join(printable(r.path) for r in built[:3])
        _say(f"ztsa: the run made or changed {len(built)} extension module(s), kept (a "
             f"build's, or native code an `import` of its name runs): {names}"
             f"{', ...' if len(built) > 3 else ''}; see the log's `reported` events")
    put = [r for r in found.reported if r.kind == "path"]
    if put:
        names = ", ".join(printable(r.path) for r in put[:3])
        _say(f"ztsa: the run made or changed {len(put)} program(s), kept, in a directory an "
             f".envrc or mise configuration puts first on PATH (a build's, or what a `cd` "
             f"there puts first): {names}{', ...' if len(put) > 3 else ''}; see the log's "
             "`reported` events")
    if len(built) + len(put) < len(found.reported):
        by_venv: dict[str, list[bytecode.Report]] = {}
        for r in found.reported:
            if r.kind not in ("extension", "path"):
                by_venv.setdefault(r.venv, []).append(r)
        order = ("config", "interpreter", "pth", "activate", "program")
        for venv, reports in by_venv.items():
            reports.sort(key=lambda r: (order.index(r.kind) if r.kind in order else 9, r.path))
            made = any(r.kind == "config" and r.new for r in reports)
            shown = reports[:2] if made else reports[:4]
            names = ", ".join(f"{printable(r.path.removeprefix(venv + '/'))} "
                              f"({printable(r.runs)})" for r in shown)
            more = (f"; {len(reports) - len(shown)} more file(s) that run when it is used"
                    if len(reports) > len(shown) else "")
            what = ("made the virtual environment" if made else
                    "made or changed what runs when the virtual environment")
            _say(f"ztsa: the run {what} {printable(venv)}{'' if made else ' is used'}: "
                 f"{names}{more}; see the log's `reported` events, and look before using it")


def _report_index(log: AuditLog, found: list[gitindex.Cleared]) -> None:
    """The index audit's results: an `index` event for each bit cleared and each entry's
    stat data reset (or not), and a line on stderr for each kind."""
    for c in found:
        log.event("index", path=c.path, flag=c.flag, repository=c.repository,
                  **({"error": c.error} if c.error else {}))
        if c.error:
            _say(f"ztsa: {printable(c.path)}: {printable(c.error)}; run `git ls-files -v` "
                 "there: a lower-case or S tag hides a file from git status"
                 if c.flag != gitindex.STAT else
                 f"ztsa: {printable(c.path)}: {printable(c.error)}; compare `git "
                 "hash-object` of the file with its `git ls-files -s` before trusting git "
                 "status")
    done = [c for c in found if not c.error and c.flag != gitindex.STAT]
    if done:
        names = ", ".join(f"{printable(c.path)} ({c.flag})" for c in done[:5])
        _say(f"ztsa: cleared {len(done)} bit(s) of the index that the run set to hide a "
             f"file from git status and git diff: {names}{', ...' if len(done) > 5 else ''}")
    reset = [c for c in found if not c.error and c.flag == gitindex.STAT]
    if reset:
        names = ", ".join(printable(c.path) for c in reset[:5])
        _say(f"ztsa: reset the stat data of {len(reset)} index entr"
             f"{'y' if len(reset) == 1 else 'ies'} the run wrote, so that git status reads "
             f"the file(s) again: {names}{', ...' if len(reset) > 5 else ''}")


def _say(text: str) -> None:
    """One of ztsa's end-of-run lines on its stderr. The tree shares that descriptor: it
    may have shut the caller's socket down or closed the pipe's reader. A line lost then
    must change neither CMD's status nor the end of the audit log."""
    with contextlib.suppress(OSError, ValueError):
        print(text, file=sys.stderr, flush=True)


def _denial_hint(call: str, what: str, rule: str, private: str = "") -> str:
    """One denial for the summary line, with the flag that would allow it, if any (none
    in the private home: there only an agent's read-only state is refused)."""
    if what.startswith("unix:") or "Unix socket" in rule:
        return f"{call} {what} ({rule}: --allow-unix {what.removeprefix('unix:')})"
    if call == "dns":
        from ztsa.sandbox.policy import is_host_name
        from ztsa.sandbox.presets import of_host

        # a host of a network preset: the preset, whose other hosts the run would need
        # next (a run refused pypi.org never gets to ask for files.pythonhosted.org)
        flag = next((f"@{p.name}" for p in of_host(what)), what)
        return f"dns {what} ({rule}: --allow-net {flag})" if is_host_name(what) else \
            f"dns {what} ({rule}; an address asked as a name)"
    if call in ("connect", "send", "sendto", "sendmsg", "sendmmsg"):
        return f"{call} {what} ({rule}: --allow-net {what})"
    if "kept state" in rule:  # the agent's own process alone writes it: no flag
        return f"{call} {what} ({rule})"
    if private != os.sep and what.startswith(private):
        return f"{call} {what} (an agent's read-only settings, hooks or login: --agent)"
    if "read-only" in rule or "Landlock" in rule:
        parent = os.path.dirname(what.rstrip("/")) or what
        from ztsa.suggest import why_not

        homes = {h for h in (os.environ.get("HOME"), private.rstrip(os.sep)) if h}
        why = ("a path in the workspace that ztsa keeps (--protect, an agent or git file)"
               if not os.path.isabs(parent) else why_not(parent, homes))
        if why:  # never a hint to open the home, a credential or a system directory
            return f"{call} {what} ({rule}; not to be opened: {why})"
        return f"{call} {what} ({rule}: --allow-write {parent})"
    return f"{call} {what} ({rule})"


def _recorded(sig: int, frame: object) -> None:
    """The Python handler of the signals ztsa forwards: the record is the byte the
    interpreter wrote to the wake pipe before calling it."""
