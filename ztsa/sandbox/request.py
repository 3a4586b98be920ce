"""What the person asks of one `ztsa exec` run: the command line and the policy tiers
merged into one frozen record, checked before anything starts.

`from_args` reads the policy files (ztsa.tiers) and nothing else of the host: no probe,
no name resolved. What a higher tier forbids, a malformed spec, a flag that needs
another: `RequestError` (exit 2). The host's offer (ztsa.sandbox.offer) and the request
then decide the run (ztsa.sandbox.plan)."""

from __future__ import annotations

import os

from ztsa.records import NamedTuple

TYPE_CHECKING = False
if TYPE_CHECKING:
    import argparse

    from ztsa.sandbox.policy import NetRule
    from ztsa.sandbox.syscalls import Decoder


class RequestError(ValueError):
    """A request that cannot be run as asked (a usage or configuration error)."""


class ExecRequest(NamedTuple):
    argv: tuple[str, ...]
    cwd: str
    workspace: str  # absolute, as given (resolved where the plan needs it)
    profile: str
    # --allow-net (an --agent preset's hosts first), each parsed without resolving a
    # name; a policy's rule for listed programs carries them (binaries)
    net: tuple[NetRule, ...] = ()
    agent_hosts: tuple[str, ...] = ()  # the presets' specs among them
    deny: tuple[tuple[NetRule, str], ...] = ()  # a policy's net.deny, with its origin
    dns: tuple[str, ...] = ()  # --dns
    allow_unix: tuple[str, ...] = ()
    allow_listen: tuple[int, ...] = ()
    allow_write: tuple[str, ...] = ()  # absolute
    allow_read: tuple[str, ...] = ()  # absolute
    home: str | None = None  # --home, absolute
    protect: tuple[str, ...] = ()
    keep_caps: tuple[str, ...] = ()
    keep_cap_mask: int = 0
    pass_fds: tuple[int, ...] = ()
    env_specs: tuple[str, ...] = ()
    secret_specs: tuple[str, ...] = ()
    agents: tuple[str, ...] = ()
    audit_only: bool = False
    audit_log: str | None = None
    ocsf: bool = False
    trace_syscalls: bool = False
    keep_pth: bool = False
    tool_config: bool = True
    parse_cache: bool = True
    git_identity: bool = True
    keep_tmp: bool = False
    quiet: bool = False
    deny_env: tuple[str, ...] = ()  # a policy's env.deny
    deny_read: tuple[str, ...] = ()  # a policy's fs.deny_read
    policy_files: tuple[str, ...] = ()  # read-only for the tree, wherever they lie
    max_procs: int = 4096  # plan.MAX_PROCS
    max_memory: int | None = None  # None: plan.MAX_MEMORY a process, a default total
    max_disk: int = 8 << 30  # --max-disk: the private HOME and TMPDIR (resources.MAX_DISK)
    notes: tuple[str, ...] = ()  # lines for stderr: ignored policy entries, versions

    @property
    def strict(self) -> bool:
        """The untrusted profile: a missing control stops the run."""
        return self.profile == "untrusted"

    @property
    def secret_names(self) -> tuple[str, ...]:
        return tuple(spec.partition("=")[0] for spec in self.secret_specs)

    @property
    def names_a_host(self) -> bool:
        """An --allow-net rule names a host (the run then needs the resolvers)."""
        return any(rule.name or rule.suffix for rule in self.net)


def from_args(args: argparse.Namespace, environ: dict[str, str]) -> ExecRequest:
    """The request of `ztsa exec`'s parsed command line, joined by the policy tiers.
    RequestError."""
    from ztsa import tiers
    from ztsa.sandbox.policy import PolicyError, parse_net

    if not args.command:
        raise RequestError("exec needs a command after --: ztsa exec [OPTIONS] -- CMD [ARG...]")
    workspace = os.path.abspath(args.workspace)
    home = os.path.abspath(args.home) if args.home else None
    flags = {f: list(getattr(args, f)) for f in tiers.FLAGS}
    preset_hosts: list[str] = []
    try:  # the policy files' entries join the flags; what a tier forbids is refused
        policy_tiers = tiers.load(workspace, args.profile)
        tiers.check_profile(policy_tiers, args.profile)
        restricted = tiers.programs(policy_tiers, list(args.allow_net))
        merged = tiers.merge_exec(policy_tiers, flags, workspace, args.home)
        for flag, values in merged.items():
            flags[flag] = ([int(v) for v in values] if flag == "allow_listen"
                           else list(dict.fromkeys(values)))
        if flags["agents"]:
            from ztsa.sandbox import agents

            if args.home:
                raise RequestError("--agent shows the agent's state in the private home; "
                                   "it does not go with --home")
            preset_hosts = agents.hosts(flags["agents"], environ.get("HOME") or "")
            tiers.check_net(policy_tiers, preset_hosts,
                            f"--agent {','.join(flags['agents'])}")
            real_home = environ.get("HOME") or ""
            tiers.check_paths(policy_tiers, [
                (os.path.join(real_home, p), f"--agent {name}")
                for name in flags["agents"]
                for p in (agents.AGENTS[name].state, *agents.AGENTS[name].copies)])
    except tiers.PolicyFileError as exc:
        raise RequestError(str(exc)) from None
    notes = [f"ztsa: ignored {where} ({what}): {why}" for where, what, why in dict.fromkeys(
        (e.where, e.preset or repr(e.value), e.ignored) for e in policy_tiers.ignored())]
    if flags["agents"]:  # read from its package files: the agent runs only in the sandbox
        from ztsa.sandbox import agents

        notes += agents.version_warning(list(flags["agents"]), args.command[0],
                                        environ.get("PATH"))
        notes += agents.hook_warning(list(flags["agents"]), workspace)
        notes += agents.writer_warning(list(flags["agents"]), args.command[0])
    from ztsa.sandbox.secret import NAME

    for spec in flags["secrets"]:
        if not NAME.match(spec.partition("=")[0]):
            raise RequestError(f"--secret {spec.partition('=')[0]!r}: a variable name is "
                               "letters, digits and _")
    specs = [*preset_hosts, *flags["allow_net"]]
    try:  # names are kept as names: the host's offer decides when they are resolved
        net = [parse_net(s, resolve_names=False) for s in specs]
        deny = [(parse_net(str(e.value), resolve_names=False), e.where)
                for e in policy_tiers.entries.get(("net", "deny"), []) if not e.ignored]
    except PolicyError as exc:
        raise RequestError(f"--allow-net: {exc}") from None
    # a policy's rules for listed programs (the helper reads /proc/PID/exe)
    net = [r._replace(binaries=restricted[r.spec]) if r.spec in restricted else r
           for r in net]
    if args.audit_format != "ztsa" and not args.audit_log:
        raise RequestError("--audit-format needs --audit-log FILE")
    if args.trace_syscalls and not args.audit_log:
        raise RequestError("--trace-syscalls needs --audit-log FILE")
    if args.audit_only and args.profile == "untrusted":
        raise RequestError("--audit-only enforces nothing outside the workspace, which the "
                           "untrusted profile forbids; learn on a run you would trust "
                           "unconfined, with --profile repo or dependency")
    from ztsa.sandbox.run import cap_mask, child_environment

    try:
        mask = cap_mask(list(args.keep_caps))
        child_environment({}, flags["env_specs"], "", "")  # each spec's shape
        _check_paths(workspace, list(args.protect), flags["allow_write"],
                     flags["allow_read"], home)
    except ValueError as exc:
        raise RequestError(str(exc)) from None
    from ztsa.sandbox.plan import MAX_PROCS
    from ztsa.sandbox.resources import MAX_DISK

    return ExecRequest(
        argv=tuple(args.command), cwd=os.getcwd(), workspace=workspace,
        profile=args.profile, net=tuple(net), agent_hosts=tuple(preset_hosts),
        deny=tuple(deny), dns=tuple(flags["dns"]), allow_unix=tuple(flags["allow_unix"]),
        allow_listen=tuple(flags["allow_listen"]),
        allow_write=tuple(os.path.abspath(p) for p in flags["allow_write"]),
        allow_read=tuple(os.path.abspath(p) for p in flags["allow_read"]),
        home=home, protect=tuple(args.protect), keep_caps=tuple(args.keep_caps),
        keep_cap_mask=mask, pass_fds=tuple(args.pass_fds),
        env_specs=tuple(flags["env_specs"]), secret_specs=tuple(flags["secrets"]),
        agents=tuple(flags["agents"]), audit_only=args.audit_only,
        audit_log=args.audit_log, ocsf=args.audit_format == "ocsf",
        trace_syscalls=args.trace_syscalls, keep_pth=args.keep_pth,
        tool_config=not args.no_tool_config, parse_cache=not args.no_cache,
        git_identity=not args.no_git_identity, keep_tmp=args.keep_tmp, quiet=args.quiet,
        deny_env=tuple(sorted(tiers.denied_env(policy_tiers))),
        deny_read=tuple(tiers.denied_read(policy_tiers)),
        policy_files=tuple(path for _, path in policy_tiers.files),
        max_procs=MAX_PROCS if args.max_procs is None else args.max_procs,
        max_memory=args.max_memory,
        max_disk=MAX_DISK if args.max_disk is None else args.max_disk, notes=tuple(notes))


def _check_paths(workspace: str, protect: list[str], allow_write: list[str],
                 allow_read: list[str], home: str | None) -> None:
    """--protect inside the workspace; no grant through a link the tree may have pointed
    anywhere (a flag, a policy file, a suggested policy from a log the tree made).
    ValueError."""
    from ztsa.sandbox.protect import link_the_tree_may_change, normalise

    for p in protect:
        normalise(os.path.realpath(workspace), p)
    # (/dev/shm: the host's own where the tree has no mount namespace)
    writable = [workspace, "/dev/shm", *allow_write, *([home] if home else [])]
    for flag, paths in (("--allow-write", allow_write), ("--allow-read", allow_read)):
        for p in paths:
            link = link_the_tree_may_change(p, writable)
            if link:
                from ztsa.printable import printable

                raise ValueError(f"{flag} {printable(p)}: the way there passes the "
                                 f"symbolic link {printable(link)}, in a place the tree "
                                 "may change; name where it leads instead")


def decoder(request: ExecRequest) -> Decoder | None:
    """--trace-syscalls' decoder (python-ptrace, imported only then). RequestError."""
    if not request.trace_syscalls:
        return None
    from ztsa.sandbox.syscalls import Decoder, MissingDecoder

    try:
        return Decoder()
    except MissingDecoder as exc:
        raise RequestError(str(exc)) from None
